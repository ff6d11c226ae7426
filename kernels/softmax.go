package kernels

import (
	"fmt"
	"math"

	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/race"
)

var (
	softmax    = dispatch.New(softmaxGeneric)
	addSoftmax = dispatch.New(addSoftmaxGeneric)
)

// Softmax replaces x by its softmax, in place, computed in float32 after subtracting
// the maximum:
//
//	m := Max(x)
//	for i := range x { x[i] = exp(x[i] − m); s += x[i] }
//	for i := range x { x[i] /= s }
//
// Error bound: for finite inputs every output y is within 4 ulp of the softmax
// computed in float64, ŷ (|y − ŷ| ≤ 2⁻²¹·ŷ, plus 2⁻¹⁴⁷ for outputs in float32's
// subnormal range), and the outputs sum to 1 within 1e-6. The SIMD variants use their
// own exponential (range reduction with the rounding error of x − m recovered exactly,
// then a polynomial) and a float64 sum; the generic variant uses math.Exp. The
// variants therefore differ from each other in the last bits, within the bound. On a
// variant the bits depend on x's values only, not on where x lies in memory.
//
// The bound, for the SIMD variants (u = 2⁻²⁴): on avx512 each exponential is within
// 1.3u of 2²⁴·e^(x−m) (a table of 2^(j/16) as two floats and a polynomial on
// |r| ≤ ln2/32, derived in gen/amd64/softmax); the sum adds eight of them in float32
// as a tree (each term rounded at most three times: 3u) before the float64 sum
// (n·2⁻⁵³); 1/sum and the final multiply round once each. An output carries its own
// exponential's error and, through the sum, at most the largest other one:
// 2·1.3u + 3u + 2u = 7.6u < 8u = 2⁻²¹, to first order, at every n (tested up to 2²⁰).
// The neon and avx2 variants reduce by ln2 without a table, evaluate a degree-6
// polynomial (each exponential within 1.65u, derived in gen/arm64/softmax; avx2 takes
// the same steps, gen/amd64/softmax) and sum four (2u): 2·1.65u + 2u + 2u = 7.3u. avx2
// scales by 2^k in its last FMA, with x − m clamped at −104. neon builds 2^k by an
// integer add to the exponent field: that is exact only for normal results, so it gives
// exactly 0 for x − m < −103, whose output is below e⁻¹⁰³ < 2⁻¹⁴⁸·⁵, inside the 2⁻¹⁴⁷
// allowed for subnormal outputs. Outputs of x − m ≤ −104 are exactly 0 on every variant.
//
// Special inputs:
//   - an empty x is left alone;
//   - −Inf entries give exactly 0 (a masked column), whatever else the row holds;
//   - a row of only −Inf entries gives the uniform distribution 1/len(x): it is the
//     limit of a row of equal values, keeps the row a distribution that sums to 1,
//     and keeps NaN for rows that really are undefined (PyTorch gives NaN here);
//   - any NaN, or any +Inf (whose max-subtracted exponent is Inf−Inf), makes every
//     output NaN;
//   - huge finite magnitudes (±math.MaxFloat32) neither overflow nor produce NaN:
//     x − m is evaluated so that far-below-max entries give 0.
//
// Softmax does not allocate.
func Softmax(x []float32) {
	race.Write(x)
	softmax.Call(x)
}

// AddSoftmax adds the softmax of x to dst, the window votes' step: Softmax(x) followed
// by Add(dst, x) in one pass fewer, the probabilities added into dst where Softmax
// would write them back into x:
//
//	m := Max(x)
//	for i := range x { x[i] = exp(x[i] − m); s += x[i] }
//	for i := range x { dst[i] += x[i] / s }
//
// It gives exactly the bits of Softmax(x) followed by Add(dst, x) on every variant:
// the same first two passes, then each exponential times 1/s rounded on its own (not
// fused into the add), as Softmax's last pass, and added as Add adds.
//
// Error bound: therefore Softmax's per term plus the one rounding of the add: for
// finite x and dst, each output is within 2⁻²¹·ŷ + 2⁻¹⁴⁷ + 2⁻²⁴·|d + ŷ| of d + ŷ, where
// d is the element's old value and ŷ the softmax computed in float64.
//
// Special inputs behave as Softmax's followed by Add:
//   - an empty x adds nothing;
//   - −Inf entries add exactly 0 (a masked column);
//   - a row of only −Inf entries adds 1/len(x) to every element;
//   - any NaN, or any +Inf, in x adds NaN to every element;
//   - a NaN or ±Inf already in dst stays, but for an Inf that meets an added NaN.
//
// x is left holding scratch (its exponentials, scaled by 2²⁴, or in the special cases
// its softmax), not its softmax. It panics if len(dst) != len(x). dst and x must not
// overlap. AddSoftmax does not allocate.
func AddSoftmax(dst, x []float32) {
	if len(dst) != len(x) {
		panic(fmt.Sprintf("kernels.AddSoftmax: len(dst) = %d, len(x) = %d, want equal lengths", len(dst), len(x)))
	}
	race.Write(x)
	race.Write(dst)
	addSoftmax.Call(dst, x)
}

// softmaxPasses are one variant's passes of Softmax and AddSoftmax. maxMin must return
// the largest element of x and a lower bound of its elements (its minimum, or −Inf) if
// x holds no NaN; with a NaN it may return anything, provided expSum then returns NaN.
// expSum must replace x[i] by 2²⁴·exp(x[i]−m) and return their sum, for a finite
// m ≥ every x[i] and lo, the bound (which spares the AVX bodies a range check per
// element). The last pass is scale, which multiplies x by s (Softmax), or scaleAdd,
// which adds x[i]·s, the product rounded, to dst[i] (AddSoftmax); add is the variant's
// Add, with which AddSoftmax adds the special cases' rows. The 2²⁴ (which cancels in
// the quotient) keeps the exponentials of outputs that end up subnormal normal until
// the last multiply, so they round once.
type softmaxPasses struct {
	maxMin   func([]float32) (float32, float32)
	expSum   func(x []float32, m, lo float32) float64
	scale    func(x []float32, s float32)
	scaleAdd func(dst, x []float32, s float32)
	add      func(dst, src []float32)
}

// softmax is Softmax from the variant's passes.
func (p softmaxPasses) softmax(x []float32) {
	if s, ok := p.exps(x); ok {
		p.scale(x, s)
	}
}

// addSoftmax is AddSoftmax from the variant's passes: the same steps as softmax, then
// the variant's add, but the last two fused into scaleAdd.
func (p softmaxPasses) addSoftmax(dst, x []float32) {
	if s, ok := p.exps(x); ok {
		p.scaleAdd(dst, x, s)
	} else {
		p.add(dst, x)
	}
}

// exps runs the first two passes on x. It returns the factor 1/sum that turns the
// exponentials x then holds into the softmax, and true; or, for an empty x and the
// special cases, false with x holding its softmax already.
func (p softmaxPasses) exps(x []float32) (float32, bool) {
	if len(x) == 0 {
		return 0, false
	}
	m, lo := p.maxMin(x)
	switch {
	case m != m || m > math.MaxFloat32:
		setAll(x, float32(math.NaN()))
	case m < -math.MaxFloat32:
		if hasNaN(x) {
			setAll(x, float32(math.NaN()))
		} else {
			setAll(x, float32(1/float64(len(x))))
		}
	default:
		s := p.expSum(x, m, lo)
		if s == s {
			return float32(1 / s), true
		}
		setAll(x, float32(math.NaN()))
	}
	return 0, false
}

func hasNaN(x []float32) bool {
	for _, v := range x {
		if v != v {
			return true
		}
	}
	return false
}

func setAll(x []float32, v float32) {
	for i := range x {
		x[i] = v
	}
}
