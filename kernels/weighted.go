package kernels

import (
	"fmt"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/race"
)

var weightedSumRows = dispatch.New(weightedSumRowsGeneric)

// WeightedSumRows sets dst to the sum of the fp16 rows of v weighted by w, accumulated
// in float32: the attention output Σⱼ pⱼ·Vⱼ of one query over n = len(w) cached value
// rows of dim = len(dst) elements each.
//
//	for d := range dst { dst[d] = 0 }
//	for j := range w {
//		for d := range dst { dst[d] += w[j] * v[j*len(dst)+d].Float32() }
//	}
//
// It panics unless len(dst) ≥ 1 and len(v) == len(w)·len(dst). dst must not overlap w
// or v; its previous contents are not read, and with no rows it is all +0.
//
// Every output is summed over j in order, as in the loop. The SIMD variants hold dst in
// registers and add each term with one fused multiply-add, so they give the same bits
// as each other; generic rounds each product first, unless the compiler fuses it. Either
// way, each output is a dot product of n terms and meets DotF16's bound against the
// exact s = Σⱼ w[j]·v[j·dim+d] (computed in float64 by the tests), for n ≤ 2²³:
//
//	|dst[d] − s| ≤ 2·n·2⁻²⁴·Σⱼ|w[j]·v[j·dim+d]| + n·2⁻¹⁴⁹
//
// (the last term for products and sums below float32's normal range). An output that
// comes out NaN or ±Inf is settled as DotF32F16's result is: summed again in float64 in
// the order of j and rounded, so every variant and GOARCH gives the same non-finite
// outputs — NaN exactly when the inputs force it (a NaN weight or value, 0·Inf, or
// Infs of both signs among the terms), otherwise the Inf of an Inf term's sign, and
// otherwise ±Inf only when the float64 sum is beyond float32's range (a column within
// the error bound of math.MaxFloat32 may still come back finite from a variant that
// did not overflow). Checking costs one SIMD Sum over dst; only non-finite outputs pay
// for the float64 pass. WeightedSumRows does not allocate.
func WeightedSumRows(dst, w []float32, v []Float16) {
	checkWeightedArgs("WeightedSumRows", len(dst), len(w), len(v), 1)
	weightedSumRowsStrided(dst, w, v, len(dst))
}

// checkWeightedArgs panics unless WeightedSumRows' conditions hold for value rows of dim
// values held perElem to an element of v (dim a multiple of it).
func checkWeightedArgs(kernel string, dim, n, vLen, perElem int) {
	if dim < 1 || dim%perElem != 0 {
		panic(fmt.Sprintf("kernels.%s: len(dst) = %d, want ≥ 1%s", kernel, dim, valuesMultiple(perElem, "a multiple of")))
	}
	if w := dim / perElem; vLen/w != n || vLen%w != 0 { // no product that could overflow
		want, ok := mulSize(n, w)
		if !ok {
			panic(fmt.Sprintf("kernels.%s: len(w)·len(dst)%s overflows int for len(w) = %d, len(dst) = %d", kernel, per(perElem), n, dim))
		}
		panic(fmt.Sprintf("kernels.%s: len(v) = %d%s, want len(w)·len(dst)%s = %d·%d%s = %d", kernel, vLen, blocks(perElem),
			per(perElem), n, dim, per(perElem), want))
	}
}

// WeightedSumRowsStrided is WeightedSumRows over value rows that lie stride ≥ len(dst)
// elements apart: row j is v[j*stride : j*stride+len(dst)], and the elements between
// rows are never read. It sums one KV head of a token-major cache ([len][heads][dim])
// where it lies, with v = cache[h*dim:] and stride = heads·dim.
//
//	for d := range dst { dst[d] = 0 }
//	for j := range w {
//		for d := range dst { dst[d] += w[j] * v[j*stride+d].Float32() }
//	}
//
// As in BLAS, the last row needs only its len(dst) elements: it panics unless
// len(dst) ≥ 1, stride ≥ len(dst) and len(v) ≥ (len(w)−1)·stride + len(dst) (for
// len(w) ≥ 1). Every output is computed with the same operations in the same order as
// WeightedSumRows computes it from the same values, so the bits, the bound and the
// settling of non-finite outputs are WeightedSumRows'.
func WeightedSumRowsStrided(dst, w []float32, v []Float16, stride int) {
	v = v[:checkWeightedStridedArgs("WeightedSumRowsStrided", len(dst), len(w), len(v), 1, stride)]
	weightedSumRowsStrided(dst, w, v, stride)
}

// checkWeightedStridedArgs panics unless WeightedSumRowsStrided's conditions hold for value
// rows of dim values held perElem to an element of v (32 for q8_0 blocks; dim and
// stride multiples of it), and returns the elements of v the rows span.
func checkWeightedStridedArgs(kernel string, dim, n, vLen, perElem, stride int) int {
	if dim < 1 || stride < dim || dim%perElem != 0 || stride%perElem != 0 {
		panic(fmt.Sprintf("kernels.%s: len(dst) = %d, stride = %d, want 1 ≤ len(dst) ≤ stride%s", kernel, dim, stride,
			valuesMultiple(perElem, "both multiples of")))
	}
	if n == 0 {
		return 0
	}
	span, ok := stridedSpan(n, dim/perElem, stride/perElem)
	if !ok {
		panic(fmt.Sprintf("kernels.%s: (len(w)−1)·stride + len(dst) overflows int for len(w) = %d, stride = %d, len(dst) = %d",
			kernel, n, stride, dim))
	}
	if vLen < span {
		panic(fmt.Sprintf("kernels.%s: len(v) = %d%s, want ≥ ((len(w)−1)·stride + len(dst))%s = (%d·%d + %d)%s = %d",
			kernel, vLen, blocks(perElem), per(perElem), n-1, stride, dim, per(perElem), span))
	}
	return span
}

// weightedSumRowsStrided runs the checked kernel: v holds exactly the span of the rows.
func weightedSumRowsStrided(dst, w []float32, v []Float16, stride int) {
	race.Read(w)
	race.Read(v)
	race.Write(dst)
	vb := fp16.Bits(v)
	weightedSumRows.Call(dst, w, vb, stride)
	settleWeightedSumRows(dst, w, rowsF16{vb, stride})
}

// Why the bound holds. Write u = 2⁻²⁴ and pⱼ = w[j]·v[j·dim+d]; widening a half is exact.
// Model each rounding of a result x as x(1+δ) + η with |δ| ≤ u, where η ≠ 0 (then δ = 0,
// |η| ≤ 2⁻¹⁵⁰) only for results below the normal range. Rounded separately (generic),
// ŝⱼ = (ŝⱼ₋₁ + pⱼ(1+εⱼ) + ηⱼ)(1+δⱼ), where the addition carries no η (sums of floats
// below the normal range are exact); fused (SIMD), ŝⱼ = (ŝⱼ₋₁ + pⱼ)(1+δⱼ) + ηⱼ.
// Unfused, the first addition is to an exact 0, so δ₁ = 0. Unrolled, either form is
// Σⱼ pⱼ with each term times at most n factors (1+δ) or (1+ε), plus each ηⱼ times at
// most n of them.
// Hence |ŝₙ − s| ≤ γₙ·Σ|pⱼ| + (1+u)ⁿ·n·2⁻¹⁵⁰ with γₙ = nu/(1−nu) (Higham, Accuracy and
// Stability of Numerical Algorithms, §3.1), and for nu ≤ ½ that is at most
// 2nu·Σ|pⱼ| + n·2⁻¹⁴⁹, as (1+u)ⁿ ≤ e^½ < 2.
