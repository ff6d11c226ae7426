package main

import (
	"fmt"
	"testing"
)

// BenchmarkPrefillAttention runs the sub-benchmarks format/n=N/method (m = n, a whole
// prompt), chunk/m=512/n=4096/method and layer/layout/n=2048 (snapkv's PrefillAttend
// over Hq 32, Hkv 8) on the active variant (KVSIMD_ISA or
// kernels.Use picks another), with the FMA peak of the same run as %peak, and that
// peak's own loop (peak) as a row of its own for benchstat.
func BenchmarkPrefillAttention(b *testing.B) {
	b.Run("peak", benchPeak)
	for _, n := range prefillSizes {
		for _, format := range cacheFormats {
			b.Run(fmt.Sprintf("%s/n=%d/fused", format, n), func(b *testing.B) { benchPrefill(b, format, "fused", n, n) })
		}
		if n <= 4096 {
			b.Run(fmt.Sprintf("fp16/n=%d/composition", n), func(b *testing.B) { benchPrefill(b, "fp16", "composition", n, n) })
		}
	}
	for _, method := range []string{"fused", "composition"} {
		b.Run("chunk/m=512/n=4096/"+method, func(b *testing.B) { benchPrefill(b, "fp16", method, 512, 4096) })
	}
	for _, layout := range []string{"head-major", "token-major"} {
		b.Run(fmt.Sprintf("layer/%s/n=%d", layout, prefillLayerLen), func(b *testing.B) { benchPrefillLayer(b, layout == "token-major") })
	}
}

// benchPeak runs the report's FMA loop (the widest vectors this CPU has) as a
// benchmark: its GFLOP/s is the peak that %peak divides by, timed beside the kernels.
func benchPeak(b *testing.B) {
	if peakFMA == nil {
		b.Skip("no FMA peak loop in this build")
	}
	var flops float64
	for b.Loop() {
		flops += float64(peakFMA(1 << 14))
	}
	b.ReportMetric(flops/float64(b.Elapsed().Nanoseconds()), "GFLOP/s")
}
