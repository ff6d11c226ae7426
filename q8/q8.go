// Package q8 owns ggml's q8_0 element format: blocks of 32 int8 quants sharing one
// half-precision scale, and bulk conversion between float32 rows and such blocks.
//
// A [Block] is ggml's block_q8_0 byte for byte (ggml_half d; int8_t qs[32]: 34 bytes,
// no padding, the scale first), so an engine holding a ggml-format q8_0 buffer views
// it as a []Block with [FromBytes], without copying, and [Bytes] gives the bytes of
// blocks that [Quantize] wrote, to hand to ggml as they are. The scale's bytes are in
// the machine's order: ggml's little-endian layout on amd64, arm64 and every other
// little-endian GOARCH; on a big-endian one they are swapped relative to a ggml file.
//
// [Quantize] is bit for bit ggml's reference, quantize_row_q8_0_ref, as it computes on
// x86 (gcc or clang, IEEE float32 arithmetic, no fast math). Per block of 32 values x:
//
//	amax = 0; for each x: amax = amax > |x| ? amax : |x|   // ggml's MAX(amax, fabsf(x))
//	d    = amax / 127                                     // float32 division
//	id   = d != 0 ? 1/d : 0
//	D    = d rounded to half, nearest even                // GGML_FP32_TO_FP16
//	Q[j] = int8(roundf(x[j]·id))                          // float32 product, ties away from zero
//
// For finite input, Dequantize∘Quantize is within d/2 + 127·|d − D| of each value (d
// the float32 scale, D its half; the second term is the scale's own rounding), plus a
// few float32 ulps of the product x·id. d's rounding to half keeps subnormal halves (no
// flush to zero) and overflows to +Inf when amax/127 rounds past 65504, that is for
// amax ≥ about 8.321e6 (65520·127); the quants of such a block are still the finite,
// correctly scaled ones (id is computed from the float32 d, not from D), but D = +Inf,
// so [Dequantize] gives ±Inf, or NaN for zero quants. When amax/127 is so small that 1/d overflows float32
// (amax below about 3.7e-37, a float32 subnormal d), id = +Inf and every non-zero x
// gets quant 0 (±Inf has no int8 value, below), as does a zero x (0·Inf is NaN); D is
// then +0, as it is for an all-zero block, whose quants are all 0.
//
// Non-finite input follows what ggml's reference computes on x86, where C leaves the
// conversion of a non-finite or out-of-range float to int8 undefined:
//
//   - The conversion to int8 keeps the low 8 bits of the integer roundf gives (what
//     x86's CVTTSS2SI and a byte store do), and gives 0 for NaN and ±Inf (CVTTSS2SI's
//     "integer indefinite" 0x80000000, whose low byte is 0). Integers of magnitude
//     2³¹ or more are multiples of 256 as float32, so their low byte is 0 as well.
//   - MAX returns its second operand when either is NaN, so a NaN in a block makes
//     amax NaN, and the next element replaces it: amax is the largest |x| after the
//     block's last NaN, or NaN if the block ends in one. Elements before that NaN may
//     then exceed amax, and their quants wrap modulo 256 as above.
//   - When amax is NaN, d and id are NaN, every quant is 0, and D is 0x7e00, the
//     positive quiet NaN that GGML_FP32_TO_FP16's bit arithmetic gives for any NaN
//     (ggml on arm64, which converts with the hardware, would keep payload bits; this
//     package gives 0x7e00 on every architecture).
//   - A ±Inf makes amax = +Inf (if no NaN follows it), so d = +Inf, id = 0, D = +Inf
//     (0x7c00), finite elements get quant 0, and the infinite ones 0 too (Inf·0 is NaN).
//
// Every variant writes the same bytes for every input.
//
// [Dequantize] is ggml's dequantize_row_q8_0: each value is float32(Q[j]) times D
// widened to float32, a product that is exact (8 by 11 significant bits), so the result
// is the same on every variant and CPU whenever it is finite. Non-finite D gives IEEE's
// results, q·Inf = ±Inf, 0·Inf = the CPU's default NaN (0xffc00000 on amd64,
// 0x7fc00000 on arm64), and q·NaN the NaN of D, quieted, with its payload.
//
// The variant (generic Go, avx2, avx512, neon) follows kernels.Use and KVSIMD_ISA; see
// package kernels.
package q8

import (
	"fmt"
	"unsafe"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/race"
)

// BlockLen is the number of values in a block, ggml's QK8_0.
const BlockLen = 32

// BlockSize is the size of a Block in bytes, sizeof(block_q8_0).
const BlockSize = 34

// Block is one q8_0 block: the value of Q[j] is float32(Q[j])·D.Float32().
type Block struct {
	D fp16.Float16
	Q [BlockLen]int8
}

var (
	quantize   = dispatch.New(quantizeGeneric)
	dequantize = dispatch.New(dequantizeGeneric)
)

// Quantize writes len(dst) blocks of the values in src, as ggml's
// quantize_row_q8_0_ref does (see the package doc, also for NaN and ±Inf).
//
// It panics if len(src) != 32·len(dst).
func Quantize(dst []Block, src []float32) {
	if len(src) != BlockLen*len(dst) {
		panic(fmt.Sprintf("q8.Quantize: len(dst) = %d blocks, len(src) = %d, want len(src) = 32·len(dst) = %d", len(dst), len(src), BlockLen*len(dst)))
	}
	race.Read(src)
	race.Write(dst)
	quantize.Call(Bytes(dst), src)
}

// Dequantize writes the 32·len(src) values of the blocks in src into dst:
// dst[32·i+j] = float32(src[i].Q[j]) · src[i].D.Float32().
//
// It panics if len(dst) != 32·len(src).
func Dequantize(dst []float32, src []Block) {
	if len(dst) != BlockLen*len(src) {
		panic(fmt.Sprintf("q8.Dequantize: len(dst) = %d, len(src) = %d blocks, want len(dst) = 32·len(src) = %d", len(dst), len(src), BlockLen*len(src)))
	}
	race.Read(src)
	race.Write(dst)
	dequantize.Call(dst, Bytes(src))
}

// Bytes views blocks as their 34·len(blocks) bytes in ggml's layout, without copying;
// the assembly takes []byte. Block has alignment 2 and no padding, so the bytes of
// blocks[i] start at 34·i.
func Bytes(blocks []Block) []byte {
	if len(blocks) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&blocks[0])), BlockSize*len(blocks))
}

// FromBytes views b, a ggml-format q8_0 buffer of len(b)/34 blocks, as blocks, without
// copying. It panics if len(b) is not a multiple of 34 or b is not 2-byte aligned (a
// Go []byte from make is; one that starts at an odd offset into another is not).
func FromBytes(b []byte) []Block {
	if len(b)%BlockSize != 0 {
		panic(fmt.Sprintf("q8.FromBytes: len(b) = %d is not a multiple of %d", len(b), BlockSize))
	}
	if len(b) == 0 {
		return nil
	}
	if uintptr(unsafe.Pointer(&b[0]))%2 != 0 {
		panic("q8.FromBytes: b is not 2-byte aligned")
	}
	return unsafe.Slice((*Block)(unsafe.Pointer(&b[0])), len(b)/BlockSize)
}
