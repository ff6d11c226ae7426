package main

import (
	"fmt"
	"testing"

	"github.com/kvsimd/kvsimd/kernels"
)

// The attention output of one query over a head's cache of 512, 4k and 32k value rows:
// V is 64 KiB to 8 MiB at dim 64 and twice that at dim 128, from L2 out to L3.
var (
	weightedDims  = []int{64, 128}
	weightedSizes = []int{512, 4096, 32768}
)

func init() {
	const n = 4096
	for _, dim := range weightedDims {
		sections = append(sections, section{fmt.Sprintf("WeightedSumRows dim=%d n=%d", dim, n), "elem", n * dim,
			func(b *testing.B) { benchWeightedSumRows(b, n, dim) }})
	}
}

// benchWeightedSumRows counts bytes of V, the operand that streams from memory; the
// weights are a softmax row, as in attention.
func benchWeightedSumRows(b *testing.B, n, dim int) {
	w, v := attentionLogits(n, 11), randomHalves(n*dim, 12)
	kernels.Softmax(w)
	dst := make([]float32, dim)
	b.SetBytes(int64(2 * n * dim))
	b.ReportAllocs()
	for b.Loop() {
		kernels.WeightedSumRows(dst, w, v)
	}
	reportFlops(b, float64(2*n*dim))
}
