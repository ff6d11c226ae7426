package main

import (
	"sync"
	"testing"
	"time"
)

// peakRead, where the build has one, reads x passes times with full-width loads at the
// widest vector width this CPU supports.
var peakRead func(x []float32, passes int)

// l2Floats is the buffer the read bandwidth is measured on: 512 KiB, which fits the
// 1 MiB L2 of the Zen cores the benchmarks run on (and most server cores' L2), not L1.
const l2Floats = 1 << 17

// l2ReadGBps measures the L2 read bandwidth once per process, so that every kernel's
// fraction of it is taken against the same machine state: the best of several runs
// of 16 passes, since a shared machine only ever makes a run slower. It is 0 without a
// read loop.
var l2ReadGBps = sync.OnceValue(func() float64 {
	if peakRead == nil {
		return 0
	}
	x := make([]float32, l2Floats)
	const passes = 16
	var best float64
	for range 20 {
		start := time.Now()
		peakRead(x, passes)
		best = max(best, float64(4*passes*len(x))/float64(time.Since(start).Nanoseconds()))
	}
	return best
})

// reportL2 adds %L2, the fraction of the same process's L2 read bandwidth, to a
// benchmark that has finished its b.Loop and read bytesPerOp bytes per op (its MB/s
// column). The reference is a best run and the kernel's time a mean, so on a loaded
// machine the fraction errs low; BenchmarkReadL2 gives the read loop's own mean.
func reportL2(b *testing.B, bytesPerOp float64) {
	if peak := l2ReadGBps(); peak > 0 {
		gbps := bytesPerOp * float64(b.N) / float64(b.Elapsed().Nanoseconds())
		b.ReportMetric(100*gbps/peak, "%L2")
	}
}
