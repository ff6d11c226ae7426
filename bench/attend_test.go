package main

import (
	"fmt"
	"testing"

	"github.com/kvsimd/kvsimd/kernels"
)

// BenchmarkDecodeAttention runs the sub-benchmarks format/layout/n=N/method on the
// active variant (KVSIMD_ISA or kernels.Use picks another), with a DotF16 over as many
// bytes as K and V beside each size: the read bandwidth of the same run.
func BenchmarkDecodeAttention(b *testing.B) {
	for _, n := range decodeSizes {
		b.Run(fmt.Sprintf("read/n=%d", n), func(b *testing.B) {
			l := decodeLayerOf("fp16", false, n)
			x, y := l.k.f16, l.v.f16
			b.SetBytes(l.bytes())
			for b.Loop() {
				dotSink += kernels.DotF16(x, y)
			}
		})
		for _, format := range cacheFormats {
			for _, layout := range []string{"head", "token"} {
				l := decodeLayerOf(format, layout == "token", n)
				for _, method := range []string{"fused", "loop"} {
					b.Run(fmt.Sprintf("%s/%s/n=%d/%s", format, layout, n, method), func(b *testing.B) {
						benchDecodeAttention(b, l, method)
					})
				}
			}
		}
	}
}
