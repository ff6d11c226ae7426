package kernels

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/kvsimd/kvsimd/asm"
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/dotcont"
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
// boundary split a cache line every 16 elements and run up to 1.8× slower. Below
// n = 768 the avx512 variant runs the avx2 body, and gives its bits, except on AMD
// Zen 5 and later: with two conversions per multiply-add, 8-lane ones are faster there
// on a Sapphire Rapids Xeon (17 % at n = 128), 16-lane ones on a Zen 5 core (21 %).
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
	return asm.DotF16((*uint16)(unsafe.SliceData(a)), (*uint16)(unsafe.SliceData(b)), len(a),
		int64(dispatch.ActiveVariant)|int64(len(b)-len(a))<<8) // asm.Select, written out (see below)
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
	return asm.DotF32F16(unsafe.SliceData(a), (*uint16)(unsafe.SliceData(b)), len(a),
		int64(dispatch.ActiveVariant)|int64(len(b)-len(a))<<8) // asm.Select, written out
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
	return asm.DotF32(unsafe.SliceData(a), unsafe.SliceData(b), len(a),
		int64(dispatch.ActiveVariant)|int64(len(b)-len(a))<<8) // asm.Select, written out
}

// The exported dot products inline into their callers and call one assembly entry,
// with the operands' first elements, the length of a, and the active variant's number
// with the difference of the lengths (asm.Select), which runs that variant's body
// (asm/dot.go). They write Select out: called, it would take them past the compiler's
// inlining budget (TestDotsInline), and a Go call between caller and assembly would
// cost more than the frame it saves. The entry finishes in Go, in the continuations
// below, for the generic variant (every call, in builds without assembly), for float32
// results that are not finite, and for operands whose lengths differ, which panic there.
// asm cannot call this package, which imports it, so it calls them through
// internal/dotcont, set here before any kernel runs.

func init() {
	dotcont.F16 = continueDotF16
	dotcont.F32F16 = continueDotF32F16
	dotcont.F32 = continueDotF32
}

// continueDotF16 panics if the lengths differ, and else runs the generic body: no SIMD
// result continues, as fp16 products cannot overflow.
func continueDotF16(pa, pb *uint16, n int, sel int64) float32 {
	_, nb := asm.Unselect(n, sel)
	checkDot("DotF16", n, nb)
	return dotF16Generic(unsafe.Slice(pa, n), unsafe.Slice(pb, n))
}

// continueDotF32F16 panics if the lengths differ, and else settles the float32 result
// that was not finite, or that the generic body gives.
func continueDotF32F16(pa *float32, pb *uint16, n int, sel int64) float32 {
	isa, nb := asm.Unselect(n, sel)
	checkDot("DotF32F16", n, nb)
	a, b := unsafe.Slice(pa, n), unsafe.Slice(pb, n)
	s := float32(math.NaN()) // a SIMD body's result, not finite
	if isa == uint8(dispatch.GenericVariant) {
		s = dotF32F16Generic(a, b)
	}
	return settleF32F16(s, a, b, 1)
}

// continueDotF32 is continueDotF32F16 for DotF32.
func continueDotF32(pa, pb *float32, n int, sel int64) float32 {
	isa, nb := asm.Unselect(n, sel)
	checkDot("DotF32", n, nb)
	a, b := unsafe.Slice(pa, n), unsafe.Slice(pb, n)
	s := float32(math.NaN())
	if isa == uint8(dispatch.GenericVariant) {
		s = dotF32Generic(a, b)
	}
	return settleF32(s, a, b)
}

// checkDot panics if a dot product's operands differ in length.
func checkDot(kernel string, na, nb int) {
	if na != nb {
		panic(lengthError{kernel, na, nb, 1})
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
// printed, which keeps checkDot small enough to inline. b counts elements of perElem
// values each (1 but for q8_0).
type lengthError struct {
	kernel  string
	a, b    int
	perElem int
}

func (e lengthError) Error() string {
	if e.perElem > 1 {
		return fmt.Sprintf("kernels.%s: len(a) = %d, len(b) = %d blocks, want len(a) = %d·len(b) = %d",
			e.kernel, e.a, e.b, e.perElem, e.perElem*e.b)
	}
	return fmt.Sprintf("kernels.%s: len(a) = %d, len(b) = %d, want len(a) = len(b)", e.kernel, e.a, e.b)
}
