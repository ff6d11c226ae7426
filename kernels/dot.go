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
// product is +0. A NaN input, or 0·Inf, gives NaN; otherwise an Inf input gives an Inf
// of the product's sign, and NaN when Infs of both signs meet. Finite products or
// partial sums beyond float32's range become ±Inf; since the order of summation is the
// variant's, a sum whose terms come within a factor of two of math.MaxFloat32 may
// overflow in one variant and not in another.
func DotF16(a, b []Float16) float32 {
	if len(a) != len(b) {
		panic(lengthError{"DotF16", len(a), len(b)})
	}
	if race.Enabled {
		race.Read(a)
		race.Read(b)
	}
	return dotF16.Call(fp16.Bits(a), fp16.Bits(b))
}

// DotF32F16 returns the dot product of a float32 vector and an fp16 vector (a query
// against a cached key), accumulated in float32.
//
//	for i := range a { s += a[i] * b[i].Float32() }
//
// It panics if len(a) != len(b). Error bound and NaN/Inf behaviour are DotF16's.
func DotF32F16(a []float32, b []Float16) float32 {
	if len(a) != len(b) {
		panic(lengthError{"DotF32F16", len(a), len(b)})
	}
	if race.Enabled {
		race.Read(a)
		race.Read(b)
	}
	return dotF32F16.Call(a, fp16.Bits(b))
}

// DotF32 returns the dot product of two float32 vectors, accumulated in float32.
//
//	for i := range a { s += a[i] * b[i] }
//
// It panics if len(a) != len(b). Error bound and NaN/Inf behaviour are DotF16's.
func DotF32(a, b []float32) float32 {
	if len(a) != len(b) {
		panic(lengthError{"DotF32", len(a), len(b)})
	}
	if race.Enabled {
		race.Read(a)
		race.Read(b)
	}
	return dotF32.Call(a, b)
}

// lengthError is the dot products' length-mismatch panic. Formatting it only when it
// is printed keeps them small enough to inline: a call saved is a nanosecond or two at
// n = 128.
type lengthError struct {
	kernel string
	a, b   int
}

func (e lengthError) Error() string {
	return fmt.Sprintf("kernels.%s: len(a) = %d, len(b) = %d", e.kernel, e.a, e.b)
}
