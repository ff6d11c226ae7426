package main

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// peakFMA, where the build has one, runs iterations of an FMA loop at the widest vector
// width this CPU supports (peakWidth bits) and returns the flops it ran.
var (
	peakFMA   func(iterations int) (flops int)
	peakWidth int
)

// fmaGFLOPS times the FMA loop samples times, about 10 ms each at 200 GFLOP/s, and
// returns GFLOP/s per sample; nil without a peak loop.
func fmaGFLOPS(samples int) []float64 {
	if peakFMA == nil {
		return nil
	}
	const iterations = 1 << 17
	rates := make([]float64, samples)
	for i := range rates {
		start := time.Now()
		flops := peakFMA(iterations)
		rates[i] = float64(flops) / float64(time.Since(start).Nanoseconds())
	}
	return rates
}

// peakGFLOPS measures the FMA ceiling once per process, so every kernel's fraction of
// peak is taken against the same machine state: the best of several 10 ms runs, since
// a shared machine only ever makes a run slower. It is 0 without a peak loop.
var peakGFLOPS = sync.OnceValue(func() float64 {
	rates := fmaGFLOPS(20)
	if len(rates) == 0 {
		return 0
	}
	return slices.Max(rates)
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
