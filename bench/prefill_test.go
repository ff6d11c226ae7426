package main

import (
	"fmt"
	"testing"
)

// BenchmarkPrefillAttention runs the sub-benchmarks format/n=N/method (m = n, a whole
// prompt) and chunk/m=512/n=4096/method on the active variant (KVSIMD_ISA or
// kernels.Use picks another), with the FMA peak of the same run as %peak.
func BenchmarkPrefillAttention(b *testing.B) {
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
}
