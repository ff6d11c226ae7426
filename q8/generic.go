package q8

import (
	"encoding/binary"
	"math"

	"github.com/x448/float16"
)

// quantizeGeneric quantizes len(src)/32 blocks into dst, 34 bytes each, following
// quantize_row_q8_0_ref step by step in float32.
func quantizeGeneric(dst []byte, src []float32) {
	for len(src) >= BlockLen {
		x := src[:BlockLen]
		b := dst[:BlockSize]
		amax := float32(0)
		for _, v := range x {
			a := abs32(v)
			if !(amax > a) { // MAX(amax, a): a when either is NaN
				amax = a
			}
		}
		d := amax / 127
		id := float32(0)
		if d != 0 { // NaN is not 0
			id = 1 / d
		}
		binary.NativeEndian.PutUint16(b, halfOf(d))
		for j, v := range x {
			b[2+j] = quant(v * id)
		}
		src, dst = src[BlockLen:], dst[BlockSize:]
	}
}

// abs32 is fabsf: it clears the sign bit, also of a NaN.
func abs32(v float32) float32 {
	return math.Float32frombits(math.Float32bits(v) &^ (1 << 31))
}

// halfOf is GGML_FP32_TO_FP16 on x86: round to nearest even, and every NaN to 0x7e00
// with its sign (d is never negative, so always 0x7e00 here).
func halfOf(d float32) uint16 {
	if d != d {
		return uint16(math.Float32bits(d)>>16)&0x8000 | 0x7e00
	}
	return uint16(float16.Fromfloat32(d))
}

// quant is int8_t(roundf(y)) as x86 computes it: the low byte of the integer, and 0
// for NaN and ±Inf. Every float32 of magnitude ≥ 2³¹ is a multiple of 256, so the
// integers that do not fit int32 have low byte 0 too.
func quant(y float32) byte {
	r := math.Round(float64(y)) // exact: float32 → float64 widens exactly; ties away from 0
	if !(math.Abs(r) < 1<<31) {
		return 0
	}
	return byte(int32(r))
}

// dequantizeGeneric writes the 32 values of each 34-byte block of src into dst.
func dequantizeGeneric(dst []float32, src []byte) {
	for len(src) >= BlockSize {
		d := float16.Frombits(binary.NativeEndian.Uint16(src)).Float32()
		y := dst[:BlockLen]
		for j := range y {
			y[j] = float32(int8(src[2+j])) * d
		}
		src, dst = src[BlockSize:], dst[BlockLen:]
	}
}
