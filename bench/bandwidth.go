package main

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/cpuid/v2"

	"github.com/kvsimd/kvsimd/aligned"
)

// readLoop, where the build has one, reads p passes times with the widest loads this
// CPU runs and returns the bytes it read.
var readLoop func(p []byte, passes int) (bytes int)

// A cacheLevel is where a working set lives, and the read bandwidth measured there.
type cacheLevel struct {
	name string // "L1", "L2", "L3", "DRAM"
	// size is the level's capacity in bytes (0 for DRAM: unbounded); a working set of at
	// most size bytes is held to this level's bandwidth.
	size int
	// buffer is how many bytes the read loop sweeps to measure it: half of L1 or L2,
	// so the sweep stays resident; for L3 four times L2 (the working sets the
	// kernels bring there; all of a shared L3 is rarely ours); for DRAM four times L3.
	buffer int
}

// cacheLevels lists this CPU's data caches as cpuid reports them, then DRAM. An
// unknown L3 (some hypervisors hide it) is taken to be 32 MiB.
func cacheLevels() []cacheLevel {
	c := cpuid.CPU.Cache
	l1, l2, l3 := c.L1D, c.L2, c.L3
	if l1 <= 0 {
		l1 = 32 << 10
	}
	if l2 <= 0 {
		l2 = 1 << 20
	}
	if l3 <= 0 {
		l3 = 32 << 20
	}
	return []cacheLevel{
		{"L1", l1, l1 / 2},
		{"L2", l2, l2 / 2},
		{"L3", l3, min(4*l2, l3/2)},
		{"DRAM", 0, max(4*l3, 64<<20)},
	}
}

// levelFor returns the index in levels of the smallest level that holds bytes.
func levelFor(levels []cacheLevel, bytes int64) int {
	for i, l := range levels {
		if l.size == 0 || bytes <= int64(l.size) {
			return i
		}
	}
	return len(levels) - 1
}

// readGBps measures the read bandwidth of a buffer of the given size: each sample
// times enough passes to read at least minBytes, and returns GB/s per sample. It
// returns nil where the build has no read loop.
func readGBps(buffer, samples int, minBytes int) []float64 {
	if readLoop == nil {
		return nil
	}
	p := aligned.Make[byte](buffer) // every vector load of the read loop within one cache line
	for i := range p {
		p[i] = byte(i)
	}
	passes := max(1, minBytes/buffer)
	readLoop(p, 1) // fault the pages in and warm the level
	rates := make([]float64, samples)
	for i := range rates {
		start := time.Now()
		bytes := readLoop(p, passes)
		rates[i] = float64(bytes) / float64(time.Since(start).Nanoseconds())
	}
	return rates
}

// l2ReadGBps is the L2 read bandwidth measured once per process (the best of several
// samples: a shared machine only ever makes a sample slower), so that every pooling
// benchmark's fraction is taken against the same machine state. It is 0 without a
// read loop.
var l2ReadGBps = sync.OnceValue(func() float64 {
	l2 := cacheLevels()[1]
	return slices.Max(append(readGBps(l2.buffer, 20, 16*l2.buffer), 0))
})

// reportL2 adds %L2, the fraction of the process's L2 read bandwidth, to a benchmark
// that has finished its b.Loop and read bytesPerOp bytes per op. The reference is a
// best sample and the kernel's time a mean, so on a loaded machine the fraction errs low.
func reportL2(b *testing.B, bytesPerOp float64) {
	if peak := l2ReadGBps(); peak > 0 {
		gbps := bytesPerOp * float64(b.N) / float64(b.Elapsed().Nanoseconds())
		b.ReportMetric(100*gbps/peak, "%L2")
	}
}

// copyGBps is, per length n, the best of several samples of copy between two float32
// slices of n elements, in GB/s of the bytes read (4n), measured once per process: the
// speed of the cheapest op that reads n floats and writes n others, the ceiling of a
// row kernel such as pooling whose src and dst together outgrow a cache level.
var copyGBps = sync.OnceValue(func() func(n int) float64 {
	var mu sync.Mutex
	rates := map[int]float64{}
	return func(n int) float64 {
		mu.Lock()
		defer mu.Unlock()
		if r, ok := rates[n]; ok {
			return r
		}
		dst, src := make([]float32, n), make([]float32, n)
		for i := range src {
			src[i] = float32(i) // written, so not the shared zero page
		}
		copy(dst, src)
		reps := max(1, (16<<20)/(4*n))
		best := 0.0
		for range 20 {
			start := time.Now()
			for range reps {
				copy(dst, src)
			}
			best = max(best, float64(4*n*reps)/float64(time.Since(start).Nanoseconds()))
		}
		rates[n] = best
		return best
	}
})

// reportCopy adds %copy, the fraction of the process's copy speed for n floats
// (copyGBps), to a benchmark that has finished its b.Loop and read 4n bytes per op.
func reportCopy(b *testing.B, n int) {
	gbps := float64(4*n) * float64(b.N) / float64(b.Elapsed().Nanoseconds())
	b.ReportMetric(100*gbps/copyGBps()(n), "%copy")
}
