// Package fp16 owns the half-precision element type and bulk conversion between it and
// float32.
//
// The element type is x448/float16's Float16, so engines that already store their
// caches as x448 halves pass the slices in unchanged. Conversions are bit-identical to
// x448 for every input on every variant: IEEE round-to-nearest-even, overflow to ±Inf,
// subnormals kept (no flush to zero), and NaNs quieted with their payload kept (the top
// payload bits when narrowing), exactly as x448's Float32 and Fromfloat32 do.
//
// The variant (generic Go, F16C on avx2/avx512, FCVTL/FCVTN on neon) follows
// kernels.Use and KVSIMD_ISA; see package kernels.
package fp16

import (
	"fmt"
	"unsafe"

	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/race"
	"github.com/x448/float16"
)

// Float16 is an IEEE 754 binary16 value, x448/float16's type.
type Float16 = float16.Float16

var (
	toFloat32   = dispatch.New(toFloat32Generic)
	fromFloat32 = dispatch.New(fromFloat32Generic)
)

// ToFloat32 widens src into dst. Every half is exactly representable as a float32, so
// the conversion is exact; NaNs come out quiet with their payload.
//
//	for i, h := range src { dst[i] = h.Float32() }
//
// It panics if len(dst) != len(src).
func ToFloat32(dst []float32, src []Float16) {
	if len(dst) != len(src) {
		panic(fmt.Sprintf("fp16.ToFloat32: len(dst) = %d, len(src) = %d, want equal lengths", len(dst), len(src)))
	}
	race.Read(src)
	race.Write(dst)
	toFloat32.Call(dst, Bits(src))
}

// FromFloat32 narrows src into dst with round-to-nearest-even.
//
//	for i, f := range src { dst[i] = float16.Fromfloat32(f) }
//
// It panics if len(dst) != len(src).
func FromFloat32(dst []Float16, src []float32) {
	if len(dst) != len(src) {
		panic(fmt.Sprintf("fp16.FromFloat32: len(dst) = %d, len(src) = %d, want equal lengths", len(dst), len(src)))
	}
	race.Read(src)
	race.Write(dst)
	fromFloat32.Call(Bits(dst), src)
}

// Bits views s as its raw bit patterns, without copying; assembly takes []uint16.
// Float16's underlying type is uint16, so the two slice headers are the same; reading
// one as the other skips the overflow and nil checks of unsafe.Slice, which cost the
// dot products about 3 ns a call at n = 128.
func Bits(s []Float16) []uint16 {
	return *(*[]uint16)(unsafe.Pointer(&s))
}
