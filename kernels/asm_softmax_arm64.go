//go:build !purego && !noasm

package kernels

import "github.com/kvsimd/kvsimd/asm"

func init() {
	maxOf.Add("neon", asm.MaxNEON)
	sumOf.Add("neon", asm.SumNEON)
	add.Add("neon", asm.AddNEON)
	softmax.Add("neon", func(x []float32) {
		softmaxPasses(x, asm.MaxNEON, asm.ExpSumNEON, asm.ScaleNEON)
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
