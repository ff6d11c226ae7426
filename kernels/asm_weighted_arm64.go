//go:build !purego && !noasm

package kernels

import "github.com/kvsimd/kvsimd/asm"

func init() {
	weightedSumRows.Add("neon", asm.WeightedSumRowsNEON)
	weightedSumRowsBF16.Add("neon", asm.WeightedSumRowsBF16NEON)
	weightedSumRowsQ8.Add("neon", asm.WeightedSumRowsQ8NEON)
	weightedSumRowsAdd.Add("neon", asm.WeightedSumRowsAddNEON)
	weightedSumRowsAddBF16.Add("neon", asm.WeightedSumRowsAddBF16NEON)
	weightedSumRowsAddQ8.Add("neon", asm.WeightedSumRowsAddQ8NEON)
}
