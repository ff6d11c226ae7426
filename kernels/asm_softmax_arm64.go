//go:build !purego && !noasm

package kernels

import "github.com/kvsimd/kvsimd/asm"

func init() {
	maxOf.Add("neon", asm.MaxNEON)
	sumOf.Add("neon", asm.SumNEON)
	add.Add("neon", asm.AddNEON)
	softmax.Add("neon", func(x []float32) {
		softmaxPasses(x, withoutMin(asm.MaxNEON), expSumNEON, asm.ScaleNEON)
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

// expSumNEON needs no lower bound: its exponential checks no range.
func expSumNEON(x []float32, m, _ float32) float64 { return asm.ExpSumNEON(x, m) }
