//go:build !purego && !noasm

package kernels

import "github.com/kvsimd/kvsimd/asm"

func init() {
	weightedSumRows.Add("avx2", asm.WeightedSumRowsAVX2)
	weightedSumRows.Add("avx512", asm.WeightedSumRowsAVX512)
	weightedSumRowsBF16.Add("avx2", asm.WeightedSumRowsBF16AVX2)
	weightedSumRowsBF16.Add("avx512", asm.WeightedSumRowsBF16AVX512)
	weightedSumRowsQ8.Add("avx2", asm.WeightedSumRowsQ8AVX2)
	weightedSumRowsQ8.Add("avx512", asm.WeightedSumRowsQ8AVX512)
	weightedSumRowsAdd.Add("avx2", asm.WeightedSumRowsAddAVX2)
	weightedSumRowsAdd.Add("avx512", asm.WeightedSumRowsAddAVX512)
	weightedSumRowsAddBF16.Add("avx2", asm.WeightedSumRowsAddBF16AVX2)
	weightedSumRowsAddBF16.Add("avx512", asm.WeightedSumRowsAddBF16AVX512)
	weightedSumRowsAddQ8.Add("avx2", asm.WeightedSumRowsAddQ8AVX2)
	weightedSumRowsAddQ8.Add("avx512", asm.WeightedSumRowsAddQ8AVX512)
	weightedSumRowsF32.Add("avx2", asm.WeightedSumRowsF32AVX2)
	weightedSumRowsF32.Add("avx512", asm.WeightedSumRowsF32AVX512)
	weightedSumRowsAddF32.Add("avx2", asm.WeightedSumRowsAddF32AVX2)
	weightedSumRowsAddF32.Add("avx512", asm.WeightedSumRowsAddF32AVX512)
	addTableFP16.Add("avx2", asm.WeightedSumRowsAddTableAVX2)
	addTableFP16.Add("avx512", asm.WeightedSumRowsAddTableAVX512)
	addTableBF16.Add("avx2", asm.WeightedSumRowsAddBF16TableAVX2)
	addTableBF16.Add("avx512", asm.WeightedSumRowsAddBF16TableAVX512)
	addTableQ8.Add("avx2", asm.WeightedSumRowsAddQ8TableAVX2)
	addTableQ8.Add("avx512", asm.WeightedSumRowsAddQ8TableAVX512)
	addTableF32.Add("avx2", asm.WeightedSumRowsAddF32TableAVX2)
	addTableF32.Add("avx512", asm.WeightedSumRowsAddF32TableAVX512)
}
