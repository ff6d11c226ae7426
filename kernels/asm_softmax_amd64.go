//go:build !purego && !noasm

package kernels

import (
	"math"

	"github.com/kvsimd/kvsimd/asm"
)

func init() {
	maxAVX2, maxAVX512 := maxNaN(asm.MaxAVX2), maxNaN(asm.MaxAVX512)
	maxOf.Add("avx2", maxAVX2)
	maxOf.Add("avx512", maxAVX512)
	sumOf.Add("avx2", asm.SumAVX2)
	sumOf.Add("avx512", asm.SumAVX512)
	add.Add("avx2", asm.AddAVX2)
	add.Add("avx512", asm.AddAVX512)
	softmax.Add("avx2", func(x []float32) {
		softmaxPasses(x, maxAVX2, expSumAVX2, asm.ScaleAVX2)
	})
	softmax.Add("avx512", func(x []float32) {
		softmaxPasses(x, asm.MaxNoNaNAVX512, expSumAVX512, asm.ScaleAVX512)
	})
	avgPool1D.Add("avx2", func(dst, src []float32, kernel int) {
		poolWith(dst, src, kernel, avgPoolRange, func(d, s []float32) {
			asm.AvgPool1DValidAVX2(d, s, kernel, 1/float32(kernel))
		})
	})
	avgPool1D.Add("avx512", func(dst, src []float32, kernel int) {
		poolWith(dst, src, kernel, avgPoolRange, func(d, s []float32) {
			done := poolFixedAVX512(true, d, s, kernel)
			asm.AvgPool1DValidAVX512(d[done:], s[done:], kernel, 1/float32(kernel))
		})
	})
	maxPool1D.Add("avx2", maxPoolScreened(asm.MaxAVX2, asm.MaxPool1DValidAVX2))
	maxPool1D.Add("avx512", maxPoolScreened(asm.MaxAVX512, func(d, s []float32, kernel int) {
		done := poolFixedAVX512(false, d, s, kernel)
		asm.MaxPool1DValidAVX512(d[done:], s[done:], kernel)
	}))
}

func expSumAVX2(x []float32, m float32) float64   { return expSumWhole(false, x, m) }
func expSumAVX512(x []float32, m float32) float64 { return expSumWhole(true, x, m) }

// expSumWhole runs asm.ExpSum{AVX2,AVX512}, which take whole vectors, on x: the last
// len(x) mod lanes elements go through a vector padded with −Inf, whose exponentials
// are below 2⁻¹²⁶ and vanish in the sum. The asm is called directly, not through a
// function value, so the padded vector stays on the stack.
func expSumWhole(avx512 bool, x []float32, m float32) float64 {
	lanes := 8
	if avx512 {
		lanes = 16
	}
	n := len(x) &^ (lanes - 1)
	s := expSumVectors(avx512, x[:n], m)
	if n < len(x) {
		var pad [16]float32
		for i := range pad {
			pad[i] = float32(math.Inf(-1))
		}
		copy(pad[:], x[n:])
		s += expSumVectors(avx512, pad[:lanes], m)
		copy(x[n:], pad[:])
	}
	return s
}

func expSumVectors(avx512 bool, x []float32, m float32) float64 {
	if avx512 {
		return asm.ExpSumAVX512(x, m)
	}
	return asm.ExpSumAVX2(x, m)
}

// poolFixedAVX512 runs the valid pooling of a kernel size with a body of its own
// (asm.{Avg,Max}Pool1DValid{3,5,7}AVX512) on the whole 64-output blocks of d that leave
// the vector it reads past its last window inside s, and returns how many outputs it
// set: the caller's general kernel does the rest.
func poolFixedAVX512(avg bool, d, s []float32, kernel int) int {
	if len(d) < 80 {
		return 0
	}
	done := (len(d) - 16) &^ 63
	dd, scale := d[:done], 1/float32(kernel)
	switch {
	case avg && kernel == 3:
		asm.AvgPool1DValid3AVX512(dd, s, scale)
	case avg && kernel == 5:
		asm.AvgPool1DValid5AVX512(dd, s, scale)
	case avg && kernel == 7:
		asm.AvgPool1DValid7AVX512(dd, s, scale)
	case kernel == 3:
		asm.MaxPool1DValid3AVX512(dd, s)
	case kernel == 5:
		asm.MaxPool1DValid5AVX512(dd, s)
	case kernel == 7:
		asm.MaxPool1DValid7AVX512(dd, s)
	default:
		return 0
	}
	return done
}

// maxNaN turns an asm maximum that reports NaNs on the side (VMAXPS drops them) into
// Max's contract.
func maxNaN(asmMax func([]float32) (float32, bool)) func([]float32) float32 {
	return func(x []float32) float32 {
		m, nan := asmMax(x)
		if nan {
			return float32(math.NaN())
		}
		return m
	}
}

// maxPoolScreened pools with VMAXPS, which drops NaNs, after one cheap pass that looks
// for them; rows that hold a NaN take the generic path, which propagates it.
func maxPoolScreened(asmMax func([]float32) (float32, bool), valid func(dst, src []float32, kernel int)) func(dst, src []float32, kernel int) {
	return func(dst, src []float32, kernel int) {
		if _, nan := asmMax(src); nan {
			maxPool1DGeneric(dst, src, kernel)
			return
		}
		poolWith(dst, src, kernel, maxPoolRange, func(d, s []float32) { valid(d, s, kernel) })
	}
}
