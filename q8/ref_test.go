package q8

import (
	"math"

	"github.com/x448/float16"
)

// The oracle: ggml's quantize_row_q8_0_ref for one block, step by step in float32 as
// the C does, with each step that C leaves to the machine done as x86 does it.

// ggmlMax is ggml's MAX(a, b): ((a) > (b) ? (a) : (b)).
func ggmlMax(a, b float32) float32 {
	if a > b {
		return a
	}
	return b
}

// fabsf clears the sign bit.
func fabsf(v float32) float32 { return math.Float32frombits(math.Float32bits(v) & 0x7fffffff) }

// roundf rounds half away from zero: floor(|y| + 0.5) in float64, where the sum is
// exact for every float32 below 2⁵², with the sign of y put back; NaN and ±Inf pass.
func roundf(y float32) float32 {
	if y != y || math.IsInf(float64(y), 0) {
		return y
	}
	r := math.Floor(math.Abs(float64(y)) + 0.5)
	return float32(math.Copysign(r, float64(y)))
}

// cvttss2si is x86's truncating conversion to int32: 0x80000000 (integer indefinite)
// for NaN and values outside int32.
func cvttss2si(r float32) int32 {
	if r != r || float64(r) >= 1<<31 || float64(r) < -(1<<31) {
		return math.MinInt32
	}
	return int32(r)
}

// ggmlFP32ToFP16 is GGML_FP32_TO_FP16 as ggml compiles it on x86, the bit arithmetic
// of the FP16 library: the magnitude is scaled by 2¹¹² then 2⁻¹¹⁰ (overflowing to Inf
// past the half range) and added to a power of two that moves the bits to round away
// into the float32's dropped mantissa bits, so the float32 addition itself rounds to
// nearest even; NaN becomes 0x7e00 with its sign.
func ggmlFP32ToFP16(f float32) uint16 {
	scaleToInf := math.Float32frombits(0x77800000)  // 2¹¹²
	scaleToZero := math.Float32frombits(0x08800000) // 2⁻¹¹⁰
	base := (fabsf(f) * scaleToInf) * scaleToZero
	w := math.Float32bits(f)
	shl1 := w + w
	sign := w & 0x80000000
	bias := shl1 & 0xff000000
	if bias < 0x71000000 {
		bias = 0x71000000
	}
	base = math.Float32frombits(bias>>1+0x07800000) + base
	bits := math.Float32bits(base)
	nonsign := (bits>>13)&0x7c00 + bits&0x0fff
	if shl1 > 0xff000000 {
		nonsign = 0x7e00
	}
	return uint16(sign>>16) | uint16(nonsign)
}

// refBlock quantizes one block of 32 values.
func refBlock(x []float32) Block {
	var b Block
	amax := float32(0)
	for j := 0; j < BlockLen; j++ {
		amax = ggmlMax(amax, fabsf(x[j]))
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1.0 / d
	}
	b.D = float16.Frombits(ggmlFP32ToFP16(d))
	for j := 0; j < BlockLen; j++ {
		x0 := x[j] * id
		b.Q[j] = int8(cvttss2si(roundf(x0))) // the byte store keeps the low 8 bits
	}
	return b
}

func refQuantize(src []float32) []Block {
	dst := make([]Block, len(src)/BlockLen)
	for i := range dst {
		dst[i] = refBlock(src[BlockLen*i:])
	}
	return dst
}
