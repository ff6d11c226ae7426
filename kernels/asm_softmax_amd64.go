//go:build !purego && !noasm

package kernels

import (
	"math"

	"github.com/kvsimd/kvsimd/asm"
	"github.com/kvsimd/kvsimd/internal/align"
)

func init() {
	maxOf.Add("avx2", maxAVX2)
	maxOf.Add("avx512", maxAVX512)
	sumOf.Add("avx2", asm.SumAVX2)
	sumOf.Add("avx512", asm.SumAVX512)
	add.Add("avx2", addAVX2)
	add.Add("avx512", addAVX512)
	avx2 := softmaxPasses{maxMinAVX2, expSumAVX2, scaleAVX2, scaleAddAVX2, addAVX2}
	avx512 := softmaxPasses{maxMinAVX512, expSumAVX512, scaleAVX512, scaleAddAVX512, addAVX512}
	attendPasses.Add("avx2", avx2)
	attendPasses.Add("avx512", avx512)
	softmax.Add("avx2", avx2.softmax)
	softmax.Add("avx512", avx512.softmax)
	addSoftmax.Add("avx2", avx2.addSoftmax)
	addSoftmax.Add("avx512", avx512.addSoftmax)
	avgPool1D.Add("avx2", avgPoolFixed(false, asm.AvgPool1DValidAVX2))
	avgPool1D.Add("avx512", avgPoolFixed(true, asm.AvgPool1DValidAVX512))
	maxPool1D.Add("avx2", maxPoolFixed(false, asm.MaxAVX2, asm.MaxPool1DValidAVX2))
	maxPool1D.Add("avx512", maxPoolFixed(true, asm.MaxAVX512, asm.MaxPool1DValidAVX512))
}

func expSumAVX2(x []float32, m, lo float32) float64   { return expSumRow(false, x, m, lo) }
func expSumAVX512(x []float32, m, lo float32) float64 { return expSumRow(true, x, m, lo) }

func maxMinAVX2(x []float32) (float32, float32)   { return maxMinAligned(x, 8, asm.MaxMinAVX2) }
func maxMinAVX512(x []float32) (float32, float32) { return maxMinAligned(x, 16, asm.MaxMinAVX512) }

// The passes that store into a row of their own (Scale, and ScaleAdd into dst) run
// their vector bodies from the row's first vector boundary: an unaligned store of a
// whole vector splits across two cache lines on AVX-512 (and on AVX2 across 32-byte
// halves), and a row that starts between vectors (every row of a [W][L] block but the
// first, unless L is a multiple of 16) ran about 12% slower at n = 32768. The elements
// before the boundary take the path of the last partial vector. Both give every
// element the bits it would have anywhere, one rounded product (and add) each.
//
// ExpSum is the exception: it returns a sum, whose order follows its vectors, and a
// softmax must not depend on where its row lies (each row of a [W][L] block of window
// votes starts at another offset, and a chunked prefill scores into other buffers), so
// its vectors start at x[0] whatever x's alignment. Started at the first boundary, it
// moved outputs of Softmax and AddSoftmax by 1 ulp with the row's address. Zen 5 pays
// nothing for the split stores: Softmax over 4,096 / 32,768 logits 4 bytes past a
// boundary took 0.86 / 7.23 µs from x[0] against 0.93 / 7.30 µs from the boundary
// (medians of 4 alternating runs).

// expSumRow runs asm.ExpSum{AVX2,AVX512}, which take whole vectors, on x from its
// first element: the last len mod lanes elements go through a vector padded with −Inf,
// whose exponentials are below 2⁻¹²⁶ and vanish in the sum.
func expSumRow(avx512 bool, x []float32, m, lo float32) float64 {
	lanes := 8
	if avx512 {
		lanes = 16
	}
	n := len(x) &^ (lanes - 1)
	s := expSumVectors(avx512, x[:n], m, lo)
	s += expSumPadded(avx512, x[n:], m, lanes)
	return s
}

// expSumPadded is expSumVectors on the fewer than lanes elements of x, padded to a
// vector. The asm is called directly, not through a function value, so the padded
// vector stays on the stack.
func expSumPadded(avx512 bool, x []float32, m float32, lanes int) float64 {
	if len(x) == 0 {
		return 0
	}
	var pad [16]float32
	for i := range pad {
		pad[i] = float32(math.Inf(-1))
	}
	copy(pad[:], x)
	s := expSumVectors(avx512, pad[:lanes], m, float32(math.Inf(-1))) // the padding is below any lo
	copy(x, pad[:])
	return s
}

func expSumVectors(avx512 bool, x []float32, m, lo float32) float64 {
	if avx512 {
		return asm.ExpSumAVX512(x, m, lo)
	}
	return asm.ExpSumAVX2(x, m, lo)
}

func scaleAVX2(x []float32, s float32)   { scaleAligned(x, s, 8, asm.ScaleAVX2) }
func scaleAVX512(x []float32, s float32) { scaleAligned(x, s, 16, asm.ScaleAVX512) }

// scaleAligned multiplies the elements of x before its first vector boundary by s (one
// IEEE multiply each, as the asm's), and the rest with scale.
func scaleAligned(x []float32, s float32, lanes int, scale func([]float32, float32)) {
	head := align.Head(x, lanes)
	for i := range x[:head] {
		x[i] *= s
	}
	scale(x[head:], s)
}

func scaleAddAVX2(dst, x []float32, s float32) { scaleAddAligned(dst, x, s, 8, asm.ScaleAddAVX2) }
func scaleAddAVX512(dst, x []float32, s float32) {
	scaleAddAligned(dst, x, s, 16, asm.ScaleAddAVX512)
}

// scaleAddAligned runs an asm ScaleAdd from dst's first vector boundary on, as Add
// does (its stores go to dst), and takes the elements before it in Go: the product
// rounded, then the add, as the asm's.
func scaleAddAligned(dst, x []float32, s float32, lanes int, asmScaleAdd func(dst, x []float32, s float32)) {
	if head := align.Head(dst, lanes); head > 0 {
		scaleAddGeneric(dst[:head], x[:head], s)
		dst, x = dst[head:], x[head:]
	}
	asmScaleAdd(dst, x, s)
}

// poolFixedSpan returns the outputs [lo, hi) of the valid pooling d of s that a
// fixed-size body (asm.{Avg,Max}Pool1DValid{3,5,7}{AVX2,AVX512}) takes: whole blocks
// of block outputs from the first one whose source vector is 64-byte aligned (so that
// the bodies' aligned loads stay within a cache line; the AVX-512 bodies realign their
// stores to dst's own boundaries), leaving the margin elements they read past the last
// window inside s. lo == hi where kernel has no body or d is too short.
func poolFixedSpan(d, s []float32, kernel, block, margin int) (lo, hi int) {
	if kernel != 3 && kernel != 5 && kernel != 7 {
		return 0, 0
	}
	lo = align.Head(s, 16) // the first 64-byte boundary
	blocks := (len(s) - margin - lo - (kernel - 1)) / block
	if lo > len(d) || blocks <= 0 {
		return 0, 0
	}
	return lo, lo + blocks*block
}

// fixedShape returns the block size and read margin of the fixed-size bodies.
func fixedShape(avx512 bool) (block, margin int) {
	if avx512 {
		return asm.PoolFixedBlockAVX512, asm.PoolFixedMarginAVX512
	}
	return asm.PoolFixedBlockAVX2, asm.PoolFixedMarginAVX2
}

func fixedAvg(avx512 bool, d, s []float32, kernel int, scale float32) {
	switch {
	case avx512 && kernel == 3:
		asm.AvgPool1DValid3AVX512(d, s, scale)
	case avx512 && kernel == 5:
		asm.AvgPool1DValid5AVX512(d, s, scale)
	case avx512:
		asm.AvgPool1DValid7AVX512(d, s, scale)
	case kernel == 3:
		asm.AvgPool1DValid3AVX2(d, s, scale)
	case kernel == 5:
		asm.AvgPool1DValid5AVX2(d, s, scale)
	default:
		asm.AvgPool1DValid7AVX2(d, s, scale)
	}
}

// avgPoolFixed average-pools the interior with a fixed-size body where kernel has one
// (poolFixedSpan) and with the general body valid around it.
func avgPoolFixed(avx512 bool, valid func(dst, src []float32, kernel int, scale float32)) func(dst, src []float32, kernel int) {
	block, margin := fixedShape(avx512)
	return func(dst, src []float32, kernel int) {
		poolWith(dst, src, kernel, avgPoolRange, func(d, s []float32) {
			scale := 1 / float32(kernel)
			lo, hi := poolFixedSpan(d, s, kernel, block, margin)
			if hi > lo {
				fixedAvg(avx512, d[lo:hi], s[lo:], kernel, scale)
			}
			valid(d[:lo], s, kernel, scale)
			valid(d[hi:], s[hi:], kernel, scale)
		})
	}
}

func fixedMax(avx512 bool, d, s []float32, kernel int) (nan bool) {
	switch {
	case avx512 && kernel == 3:
		return asm.MaxPool1DValid3AVX512(d, s)
	case avx512 && kernel == 5:
		return asm.MaxPool1DValid5AVX512(d, s)
	case avx512:
		return asm.MaxPool1DValid7AVX512(d, s)
	case kernel == 3:
		return asm.MaxPool1DValid3AVX2(d, s)
	case kernel == 5:
		return asm.MaxPool1DValid5AVX2(d, s)
	default:
		return asm.MaxPool1DValid7AVX2(d, s)
	}
}

// maxPoolFixed max-pools the interior with a fixed-size body where kernel has one
// (poolFixedSpan) and with the general body valid around it. VMAXPS drops NaNs: the
// fixed bodies screen their own source and report NaNs, the source elements around
// them are screened with asmMax, and a row with a NaN is pooled again by the generic
// code, which propagates it.
func maxPoolFixed(avx512 bool, asmMax func([]float32) (float32, bool), valid func(dst, src []float32, kernel int)) func(dst, src []float32, kernel int) {
	block, margin := fixedShape(avx512)
	return func(dst, src []float32, kernel int) {
		nan := false
		poolWith(dst, src, kernel, maxPoolRange, func(d, s []float32) {
			lo, hi := poolFixedSpan(d, s, kernel, block, margin)
			if lo == hi {
				_, nan = asmMax(s)
			} else {
				_, nanLo := asmMax(s[:lo+kernel-1])
				_, nanHi := asmMax(s[hi:])
				nan = nanLo || nanHi || fixedMax(avx512, d[lo:hi], s[lo:], kernel)
			}
			if !nan {
				valid(d[:lo], s, kernel)
				valid(d[hi:], s[hi:], kernel)
			}
		})
		if nan {
			maxPool1DGeneric(dst, src, kernel)
		}
	}
}

// Max, Add, Softmax's MaxMin and TopK's filter (asm_topk_amd64.go) also start their
// vector bodies on a vector boundary of the row (Add: of dst) and take the elements
// before it in Go: on a Sapphire Rapids Xeon, Max over 131072 floats 12 bytes past a
// boundary took 7.3 µs against 5.4 µs aligned, every zmm load splitting a cache line.
// An aligned row pays the check and one more call, about a nanosecond.

func maxAVX2(x []float32) float32   { return maxAligned(x, 8, asm.MaxAVX2) }
func maxAVX512(x []float32) float32 { return maxAligned(x, 16, asm.MaxAVX512) }

// maxAligned turns an asm maximum that reports NaNs on the side (VMAXPS drops them)
// into Max's contract.
func maxAligned(x []float32, lanes int, asmMax func([]float32) (float32, bool)) float32 {
	head := align.Head(x, lanes)
	m, nan := asmMax(x[head:])
	if nan {
		return float32(math.NaN())
	}
	if head > 0 {
		m = max(m, maxGeneric(x[:head])) // NaN if the head holds one
	}
	return m
}

func addAVX2(dst, src []float32)   { addAligned(dst, src, 8, asm.AddAVX2) }
func addAVX512(dst, src []float32) { addAligned(dst, src, 16, asm.AddAVX512) }

// addAligned runs an asm Add from dst's first vector boundary on and adds the elements
// before it in Go (one IEEE add each, the same bits): on the Xeon, AVX2 Add into a dst
// 12 bytes past a boundary took 13.8 µs against 10.5 µs aligned (131072 floats).
func addAligned(dst, src []float32, lanes int, asmAdd func(dst, src []float32)) {
	if head := align.Head(dst, lanes); head > 0 {
		addGeneric(dst[:head], src[:head])
		dst, src = dst[head:], src[head:]
	}
	asmAdd(dst, src)
}

// maxMinAligned is asm MaxMin from x's first vector boundary on; a NaN in the elements
// before it makes both results NaN.
func maxMinAligned(x []float32, lanes int, asmMaxMin func([]float32) (float32, float32)) (float32, float32) {
	head := align.Head(x, lanes)
	m, lo := asmMaxMin(x[head:])
	for _, v := range x[:head] {
		m, lo = max(m, v), min(lo, v)
	}
	return m, lo
}
