package kernels

import (
	"fmt"
	"math"

	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/race"
)

var (
	maxOf = dispatch.New(maxGeneric)
	sumOf = dispatch.New(sumGeneric)
	add   = dispatch.New(addGeneric)
)

// Max returns the largest element of x, or NaN if x holds a NaN.
//
//	m := float32(math.Inf(-1))
//	for _, v := range x { if v > m || v != v { m = v } }
//
// Max of an empty slice is −Inf, the identity of max, so that Max(append(a, b...)) is
// always max(Max(a), Max(b)). Any NaN makes the result NaN (as math.Max does), though
// which NaN bit pattern is unspecified. +0 and −0 compare equal and either may be
// returned when the largest element is a zero. The result is exact.
func Max(x []float32) float32 {
	if len(x) == 0 {
		return float32(math.Inf(-1))
	}
	race.Read(x)
	return maxOf.Call(x)
}

// Sum returns the sum of the elements of x, accumulated in float64 and rounded once to
// float32.
//
//	var s float64
//	for _, v := range x { s += float64(v) }
//	return float32(s)
//
// Every element converts to float64 exactly and the variants add them in their own
// order, so with n = len(x) and s the exact sum:
//
//	|Sum(x) − s| ≤ 2⁻²⁴·|s| + n·2⁻⁵³·Σ|xᵢ|
//
// (the first term is the final rounding, the second the float64 additions). An empty
// sum is +0. A NaN, or Infs of both signs, give NaN; an Inf gives that Inf; a finite
// sum beyond float32's range gives ±Inf, as the final rounding does.
func Sum(x []float32) float32 {
	race.Read(x)
	return float32(sumOf.Call(x))
}

// Add adds src to dst elementwise, in float32.
//
//	for i := range dst { dst[i] += src[i] }
//
// Each element is one IEEE addition, so every variant gives the same bits (NaN
// payloads aside). dst and src may be the same slice but must not otherwise overlap.
// It panics if len(dst) != len(src).
func Add(dst, src []float32) {
	if len(dst) != len(src) {
		panic(fmt.Sprintf("kernels.Add: len(dst) = %d, len(src) = %d, want equal lengths", len(dst), len(src)))
	}
	race.Read(src)
	race.Write(dst)
	add.Call(dst, src)
}
