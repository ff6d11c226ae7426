package main

import (
	"sync"
	"testing"
	"time"
)

// peakFMA, where the build has one, runs iterations of an FMA loop at the widest vector
// width this CPU supports and returns the flops it ran.
var peakFMA func(iterations int) (flops int)

// peakGFLOPS measures the FMA ceiling once per process, so every kernel's fraction of
// peak is taken against the same machine state: the best of several 10 ms runs, since
// a shared machine only ever makes a run slower. It is 0 without a peak loop.
var peakGFLOPS = sync.OnceValue(func() float64 {
	if peakFMA == nil {
		return 0
	}
	const iterations = 1 << 17
	var best float64
	for range 20 {
		start := time.Now()
		flops := peakFMA(iterations)
		best = max(best, float64(flops)/float64(time.Since(start).Nanoseconds()))
	}
	return best
})

// reportFlops adds GFLOP/s, and %peak where a peak loop exists, to a benchmark that
// has finished its b.Loop; each op performed flopsPerOp floating-point operations.
func reportFlops(b *testing.B, flopsPerOp float64) {
	gflops := flopsPerOp * float64(b.N) / float64(b.Elapsed().Nanoseconds())
	b.ReportMetric(gflops, "GFLOP/s")
	if peak := peakGFLOPS(); peak > 0 {
		b.ReportMetric(100*gflops/peak, "%peak")
	}
}
