//go:build !purego && !noasm

package kernels

import "github.com/kvsimd/kvsimd/asm"

func init() {
	weightedSumRows.Add("avx2", func(dst, w []float32, v []uint16, stride int) {
		// TODO(strided asm): the bodies take the stride; until then other strides run generic.
		if stride != len(dst) {
			v = packRows(v, len(w), len(dst), stride)
		}
		asm.WeightedSumRowsAVX2(dst, w, v)
	})
	weightedSumRows.Add("avx512", func(dst, w []float32, v []uint16, stride int) {
		// TODO(strided asm): the bodies take the stride; until then other strides run generic.
		if stride != len(dst) {
			v = packRows(v, len(w), len(dst), stride)
		}
		asm.WeightedSumRowsAVX512(dst, w, v)
	})
}
