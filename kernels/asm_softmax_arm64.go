//go:build !purego && !noasm

package kernels

import "github.com/kvsimd/kvsimd/asm"

func init() {
	maxOf.Add("neon", asm.MaxNEON)
	sumOf.Add("neon", asm.SumNEON)
	add.Add("neon", asm.AddNEON)
	neon := softmaxPasses{maxMinNEON, expSumNEON, asm.ScaleNEON, asm.ScaleAddNEON, asm.AddNEON}
	attendPasses.Add("neon", neon)
	softmax.Add("neon", neon.softmax)
	addSoftmax.Add("neon", neon.addSoftmax)
	avgPool1D.Add("neon", func(dst, src []float32, kernel int) {
		poolWith(dst, src, kernel, avgPoolRange, func(d, s []float32) {
			scale := 1 / float32(kernel)
			n := poolFixedNEON(d, kernel)
			if n > 0 {
				avgFixedNEON(d[:n], s, kernel, scale)
			}
			asm.AvgPool1DValidNEON(d[n:], s[n:], kernel, scale)
		})
	})
	maxPool1D.Add("neon", func(dst, src []float32, kernel int) {
		poolWith(dst, src, kernel, maxPoolRange, func(d, s []float32) {
			n := poolFixedNEON(d, kernel)
			if n > 0 {
				maxFixedNEON(d[:n], s, kernel)
			}
			asm.MaxPool1DValidNEON(d[n:], s[n:], kernel)
		})
	})
}

// poolFixedNEON returns how many of the valid outputs d a fixed-size NEON body
// (asm.{Avg,Max}Pool1DValid{3,5,7}NEON) takes: whole blocks from the first, leaving
// inside the source the elements the bodies read past their last window. The general
// body takes the rest. 0 where kernel has no fixed-size body.
func poolFixedNEON(d []float32, kernel int) int {
	if kernel != 3 && kernel != 5 && kernel != 7 {
		return 0
	}
	// The source holds len(d)+kernel−1 elements.
	return max(len(d)-asm.PoolFixedMarginNEON, 0) / asm.PoolFixedBlockNEON * asm.PoolFixedBlockNEON
}

func avgFixedNEON(d, s []float32, kernel int, scale float32) {
	switch kernel {
	case 3:
		asm.AvgPool1DValid3NEON(d, s, scale)
	case 5:
		asm.AvgPool1DValid5NEON(d, s, scale)
	default:
		asm.AvgPool1DValid7NEON(d, s, scale)
	}
}

func maxFixedNEON(d, s []float32, kernel int) {
	switch kernel {
	case 3:
		asm.MaxPool1DValid3NEON(d, s)
	case 5:
		asm.MaxPool1DValid5NEON(d, s)
	default:
		asm.MaxPool1DValid7NEON(d, s)
	}
}

// maxMinNEON and expSumNEON fit the NEON passes to softmaxPasses: the minimum lets
// ExpSumNEON run a row without a check per group when no element is below its lim.
func maxMinNEON(x []float32) (float32, float32) { return asm.MaxMinNEON(x) }

func expSumNEON(x []float32, m, lo float32) float64 { return asm.ExpSumNEON(x, m, lo) }
