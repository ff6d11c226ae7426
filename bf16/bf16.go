// Package bf16 owns the bfloat16 element type and bulk conversion between it and
// float32, for caches kept in the format most model weights and many engines' KV
// caches now use.
//
// A BFloat16 is the high 16 bits of a float32: the same sign and 8-bit exponent, and
// the top 7 of the 23 mantissa bits. Widening is therefore exact, the bits shifted left
// 16. Narrowing rounds to nearest, ties to even, on those bits: subnormals are kept
// (no flush to zero) and values past the largest finite bfloat16 round to ±Inf, bit
// for bit as PyTorch's c10::BFloat16 (round_to_nearest_even) for every value but NaN.
// A NaN becomes a quiet NaN with its sign and the top 7 payload bits, as x86's
// VCVTNEPS2BF16 makes it; PyTorch gives the canonical 0x7fc0 for all of them. Every
// variant gives these bits for every input; the tests compare all 2¹⁶ widenings and,
// on request, all 2³² narrowings.
//
// The variant (generic Go, AVX2, AVX-512, NEON) follows kernels.Use and KVSIMD_ISA;
// see package kernels. All of them round in integer arithmetic: AVX512_BF16's
// VCVTNEPS2BF16 treats subnormal inputs as zero (see gen/amd64/bf16), and Armv8.6's
// BFCVTN is optional (FEAT_BF16; ARMv8.0 cores such as the Cortex-A53 lack it), so
// neither is used. Package fp16 is the half-precision counterpart.
package bf16

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/race"
)

// BFloat16 is a bfloat16 value: the high 16 bits of the float32 it stands for.
type BFloat16 uint16

// Float32 widens b exactly: math.Float32frombits(uint32(b) << 16). NaNs keep their
// payload and signalling bit.
func (b BFloat16) Float32() float32 { return math.Float32frombits(uint32(b) << 16) }

var (
	toFloat32   = dispatch.New(toFloat32Generic)
	fromFloat32 = dispatch.New(fromFloat32Generic)
)

// ToFloat32 widens src into dst. Every bfloat16 is exactly a float32, so the
// conversion is exact on every variant, NaN payloads and signalling NaNs included:
//
//	for i, b := range src { dst[i] = b.Float32() } // math.Float32frombits(uint32(b) << 16)
//
// It panics if len(dst) != len(src).
func ToFloat32(dst []float32, src []BFloat16) {
	if len(dst) != len(src) {
		panic(fmt.Sprintf("bf16.ToFloat32: len(dst) = %d, len(src) = %d, want equal lengths", len(dst), len(src)))
	}
	race.Read(src)
	race.Write(dst)
	toFloat32.Call(dst, Bits(src))
}

// FromFloat32 narrows src into dst with round-to-nearest-even, bit for bit on every
// variant as this loop:
//
//	for i, f := range src {
//		u := math.Float32bits(f)
//		if u&0x7fffffff > 0x7f800000 { // NaN: quiet it, keep the sign and top 7 payload bits
//			dst[i] = BFloat16(u>>16 | 0x0040)
//		} else { // round the 16 dropped bits to nearest even; a carry bumps the exponent, up to ±Inf
//			dst[i] = BFloat16((u + 0x7fff + (u>>16)&1) >> 16)
//		}
//	}
//
// Subnormal floats round to subnormal bfloat16s or ±0 (no flush to zero), and finite
// values from 0x7f7f8000 (in magnitude, the midpoint between the largest finite
// bfloat16 and 2¹²⁸) up round to ±Inf.
//
// It panics if len(dst) != len(src).
func FromFloat32(dst []BFloat16, src []float32) {
	if len(dst) != len(src) {
		panic(fmt.Sprintf("bf16.FromFloat32: len(dst) = %d, len(src) = %d, want equal lengths", len(dst), len(src)))
	}
	race.Read(src)
	race.Write(dst)
	fromFloat32.Call(Bits(dst), src)
}

// Bits views s as its raw bit patterns, without copying; assembly takes []uint16.
// BFloat16's underlying type is uint16, so the two slice headers are the same.
func Bits(s []BFloat16) []uint16 {
	return *(*[]uint16)(unsafe.Pointer(&s))
}

// FromBits views raw bit patterns as bfloat16s, without copying: the inverse of Bits,
// for engines that keep their caches as []uint16.
func FromBits(s []uint16) []BFloat16 {
	return *(*[]BFloat16)(unsafe.Pointer(&s))
}
