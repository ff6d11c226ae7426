//go:build !purego && !noasm

package kernels

import "github.com/kvsimd/kvsimd/asm"

func init() {
	maxOf.Add("neon", asm.MaxNEON)
	sumOf.Add("neon", asm.SumNEON)
	add.Add("neon", asm.AddNEON)
	softmax.Add("neon", func(x []float32) {
		softmaxPasses(x, maxMinNEON, expSumNEON, asm.ScaleNEON)
	})
	avgPool1D.Add("neon", func(dst, src []float32, kernel int) {
		poolWith(dst, src, kernel, avgPoolRange, func(d, s []float32) {
			asm.AvgPool1DValidNEON(d, s, kernel, 1/float32(kernel))
		})
	})
	maxPool1D.Add("neon", func(dst, src []float32, kernel int) {
		poolWith(dst, src, kernel, maxPoolRange, func(d, s []float32) {
			asm.MaxPool1DValidNEON(d, s, kernel)
		})
	})
}

// maxMinNEON and expSumNEON fit the NEON passes to softmaxPasses: the minimum lets
// ExpSumNEON run a row without a check per group when no element is below its lim.
func maxMinNEON(x []float32) (float32, float32) { return asm.MaxMinNEON(x) }

func expSumNEON(x []float32, m, lo float32) float64 { return asm.ExpSumNEON(x, m, lo) }
