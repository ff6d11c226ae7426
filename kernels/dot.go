package kernels

import (
	"fmt"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/race"
)

var (
	dotF16    = dispatch.New(dotF16Generic)
	dotF32F16 = dispatch.New(dotF32F16Generic)
	dotF32    = dispatch.New(dotF32Generic)
)

// DotF16 returns the dot product of two fp16 vectors, accumulated in float32.
//
//	for i := range a { s += a[i].Float32() * b[i].Float32() }
//
// It panics if len(a) != len(b).
//
// The variants keep several partial sums (a few vector registers of lanes, fused
// multiply-adds) and add them at the end, so their results differ from the loop above
// in the last bits, but every variant meets one bound against the exact value
// s = Σ aᵢbᵢ (computed in float64 by the tests), with n = len(a):
//
//	|got − s| ≤ 2·n·2⁻²⁴·Σ|aᵢbᵢ| + n·2⁻¹⁴⁹
//
// The second term covers products that underflow float32's normal range. An empty
// product is +0. The result does not depend on where a and b lie in memory, so the
// variants load them as they lie: on AVX-512, vectors that start off a 64-byte
// boundary split a cache line every 16 elements and run up to 1.8× slower.
//
// The result is NaN exactly when the inputs force it: a NaN input, a product 0·Inf, or
// Infs of both signs among the products. Otherwise an Inf input gives the Inf of its
// product's sign. Finite fp16 products are below 2³², so no sum of them leaves
// float32's range: these are the only non-finite results, the same on every variant.
func DotF16(a, b []Float16) float32 {
	if race.Enabled {
		race.Read(a)
		race.Read(b)
	}
	return dotF16Active(fp16.Bits(a), fp16.Bits(b))
}

// DotF32F16 returns the dot product of a float32 vector and an fp16 vector (a query
// against a cached key), accumulated in float32.
//
//	for i := range a { s += a[i] * b[i].Float32() }
//
// It panics if len(a) != len(b). The error bound of finite results is DotF16's.
//
// Products and partial sums of float32 values can leave float32's range, and whether
// one does depends on the variant's order of summation: [M, M, −M, −M]·[1, 1, 1, 1]
// (M = math.MaxFloat32) overflows to +Inf summed in order and to +Inf − Inf = NaN
// summed in pairs. So a NaN or ±Inf result is settled: the sum is computed again in
// float64 in index order, where every product of float32 values is exact and no sum
// of fewer than 2⁷⁶⁷ of them overflows, and rounded to float32. The outcome is the same
// on every variant and GOARCH:
//
//   - NaN exactly when the inputs force it, as in DotF16: a NaN input, a product 0·Inf,
//     or Infs of both signs among the products;
//   - otherwise, with an Inf input, the Inf of its product's sign (an overflowed
//     partial sum of the other sign does not turn it into NaN);
//   - otherwise ±Inf only when the float64 sum rounds beyond float32's range, and
//     then the same Inf on every variant. (A sum within the error bound of
//     math.MaxFloat32 may still come back finite from a variant that did not
//     overflow.)
//
// Settling costs about one more pass over a and b, in scalar float64, and only calls
// whose float32 result is not finite pay it.
func DotF32F16(a []float32, b []Float16) float32 {
	if race.Enabled {
		race.Read(a)
		race.Read(b)
	}
	return dotF32F16Active(a, fp16.Bits(b))
}

// DotF32 returns the dot product of two float32 vectors, accumulated in float32.
//
//	for i := range a { s += a[i] * b[i] }
//
// It panics if len(a) != len(b). The error bound of finite results is DotF16's;
// non-finite results are settled in float64 as DotF32F16's are, with the same outcome
// on every variant.
func DotF32(a, b []float32) float32 {
	if race.Enabled {
		race.Read(a)
		race.Read(b)
	}
	return dotF32Active(a, b)
}

// The exported dot products inline into their callers, and so do dotF16Active and its
// kin (one per build: dot_asm.go, dot_noasm.go) in the builds with assembly, which
// leaves one call between a caller and the assembly. The lengths are checked past it.

// checkDot panics if a dot product's operands differ in length.
func checkDot(kernel string, na, nb int) {
	if na != nb {
		panic(lengthError{kernel, na, nb})
	}
}

// settleF32F16 returns s, a variant's float32 value of scale·Σ a[i]·b[i], if it is
// finite, and else the float64 value rounded to float32 (see DotF32F16). The test
// inlines into the callers; the float64 loop runs only for NaN and ±Inf.
func settleF32F16(s float32, a []float32, b []uint16, scale float32) float32 {
	if s-s == 0 {
		return s
	}
	return sumF32F16(a, b, scale)
}

// sumF32F16 is float32(scale·Σ a[i]·b[i]), summed in float64 in index order.
func sumF32F16(a []float32, b []uint16, scale float32) float32 {
	b = b[:len(a)]
	var w float64
	for i, x := range a {
		w += float64(x) * float64(halfFloat32(b[i]))
	}
	return float32(float64(scale) * w)
}

// settleF32 is settleF32F16 for DotF32.
func settleF32(s float32, a, b []float32) float32 {
	if s-s == 0 {
		return s
	}
	return sumF32(a, b)
}

// sumF32 is float32(Σ a[i]·b[i]), summed in float64 in index order.
func sumF32(a, b []float32) float32 {
	b = b[:len(a)]
	var w float64
	for i, x := range a {
		w += float64(x) * float64(b[i])
	}
	return float32(w)
}

// lengthError is the dot products' length-mismatch panic, formatted only when it is
// printed, which keeps checkDot small enough to inline.
type lengthError struct {
	kernel string
	a, b   int
}

func (e lengthError) Error() string {
	return fmt.Sprintf("kernels.%s: len(a) = %d, len(b) = %d", e.kernel, e.a, e.b)
}
