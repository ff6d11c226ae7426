//go:build !purego && !noasm

package kernels

import "github.com/kvsimd/kvsimd/asm"

func init() {
	weightedSumRows.Add("avx2", asm.WeightedSumRowsAVX2)
	weightedSumRows.Add("avx512", asm.WeightedSumRowsAVX512)
}
