//go:build !purego && !noasm

package kernels

import "github.com/kvsimd/kvsimd/asm"

func init() {
	weightedSumRows.Add("neon", asm.WeightedSumRowsNEON)
	weightedSumRowsBF16.Add("neon", asm.WeightedSumRowsBF16NEON)
	weightedSumRowsQ8.Add("neon", asm.WeightedSumRowsQ8NEON)
	weightedSumRowsF32.Add("neon", asm.WeightedSumRowsF32NEON)
	// The NEON sums do not prefetch the next block's keys (ahead): with no arm64 core
	// here to time a prefetch on, they leave it to the hardware prefetchers.
	weightedSumRowsAdd.Add("neon", func(dst, w []float32, v, _ []uint16, rows, n, stride int) {
		asm.WeightedSumRowsAddNEON(dst, w, v, rows, n, stride)
	})
	weightedSumRowsAddBF16.Add("neon", func(dst, w []float32, v, _ []uint16, rows, n, stride int) {
		asm.WeightedSumRowsAddBF16NEON(dst, w, v, rows, n, stride)
	})
	weightedSumRowsAddQ8.Add("neon", func(dst, w []float32, v, _ []byte, rows, n, stride int) {
		asm.WeightedSumRowsAddQ8NEON(dst, w, v, rows, n, stride)
	})
	weightedSumRowsAddF32.Add("neon", func(dst, w, v, _ []float32, rows, n, stride int) {
		asm.WeightedSumRowsAddF32NEON(dst, w, v, rows, n, stride)
	})
}
