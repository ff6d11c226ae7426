package fuzz

import (
	"testing"

	"github.com/kvsimd/kvsimd/internal/varianttest"

	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/kernels"
)

// FuzzWeightedSumRows takes dim from its first argument (1 to 256, every pass shape of
// the SIMD variants) and from data as many rows as fit: n float32 weights, then n·dim
// halves. Every variant is held to the float64 reference's bound, and the SIMD
// variants, one fused multiply-add per term in the same order, to each other's bits;
// every variant's WeightedSumRowsStrided, on the same rows spread strideOf(dim, gap)
// apart, to its WeightedSumRows' bits.
func FuzzWeightedSumRows(f *testing.F) {
	f.Add(uint8(2), uint8(4), []byte{
		0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xbf, // w = 1, −0.5
		0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00, // v row 0: 1, −2, 2⁻²⁴
		0xff, 0x7b, 0x00, 0x7c, 0x00, 0x80}) // v row 1: 65504, +Inf, −0
	f.Fuzz(func(t *testing.T, dimByte, gap uint8, data []byte) {
		dim := 1 + int(dimByte)
		n := len(data) / (4 + 2*dim)
		w := float32s(data[:4*n])
		v := uint16s(data[4*n : (4+2*dim)*n])
		want := oracle.WeightedSumRows(w, v, dim)
		hv := halves(v)
		stride := strideOf(dim, gap)
		sv := spread(hv, n, dim, stride)
		var fused []float32
		varianttest.Each(t, func(variant string) {
			dst, strided := make([]float32, dim), make([]float32, dim)
			kernels.WeightedSumRows(dst, w, hv)
			for d, g := range dst {
				if err := want[d].Check(g); err != nil {
					t.Fatalf("%s: WeightedSumRows dim=%d n=%d: dst[%d]: %v", variant, dim, n, d, err)
				}
			}
			kernels.WeightedSumRowsStrided(strided, w, sv, stride)
			for d, g := range strided {
				if !sameBits(g, dst[d]) {
					t.Fatalf("%s: WeightedSumRowsStrided dim=%d n=%d stride=%d: dst[%d] = %v, WeightedSumRows gives %v", variant, dim, n, stride, d, g, dst[d])
				}
			}
			if variant == dispatch.Generic {
				return
			}
			if fused == nil {
				fused = dst
			}
			for d, g := range dst {
				if !sameBits(g, fused[d]) {
					t.Fatalf("%s: WeightedSumRows dim=%d n=%d: dst[%d] = %v, another SIMD variant gives %v", variant, dim, n, d, g, fused[d])
				}
			}
		})
	})
}
