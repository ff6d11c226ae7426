//go:build (amd64 || arm64) && !purego && !noasm

package kernels

import (
	"math"

	"github.com/kvsimd/kvsimd/asm"
	"github.com/kvsimd/kvsimd/internal/dispatch"
)

// The dot products call one assembly entry with the active variant's number, which
// runs that variant's body (see asm/dot.go). Small enough to inline into the exported
// functions, and so into their callers, they leave one call between a caller and the
// assembly. The entry finishes in Go, in the continuations below, for the generic
// variant, for float32 results that are not finite, and for operands whose lengths
// differ, which panic there.

func init() {
	asm.ContinueDotF16 = continueDotF16
	asm.ContinueDotF32F16 = continueDotF32F16
	asm.ContinueDotF32 = continueDotF32
}

func dotF16Active(a, b []uint16) float32 { return asm.DotF16(a, b, uint8(dotF16.Active)) }

func dotF32F16Active(a []float32, b []uint16) float32 {
	return asm.DotF32F16(a, b, uint8(dotF32F16.Active))
}

func dotF32Active(a, b []float32) float32 { return asm.DotF32(a, b, uint8(dotF32.Active)) }

// continueDotF16 runs the generic body: no SIMD result continues, as fp16 products
// cannot overflow.
func continueDotF16(a, b []uint16, _ uint8) float32 {
	checkDot("DotF16", len(a), len(b))
	return dotF16Generic(a, b)
}

// continueDotF32F16 settles the float32 result that was not finite, or that the generic
// body gives.
func continueDotF32F16(a []float32, b []uint16, isa uint8) float32 {
	checkDot("DotF32F16", len(a), len(b))
	s := float32(math.NaN()) // a SIMD body's result, not finite
	if isa == uint8(dispatch.GenericVariant) {
		s = dotF32F16Generic(a, b)
	}
	return settleF32F16(s, a, b, 1)
}

// continueDotF32 is continueDotF32F16 for DotF32.
func continueDotF32(a, b []float32, isa uint8) float32 {
	checkDot("DotF32", len(a), len(b))
	s := float32(math.NaN())
	if isa == uint8(dispatch.GenericVariant) {
		s = dotF32Generic(a, b)
	}
	return settleF32(s, a, b)
}
