package fuzz

import (
	"math"
	"testing"

	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/x448/float16"
)

// q8Block is ggml's quantize_row_q8_0_ref for one block, in float32 step by step as
// the C runs on x86 (package q8's doc): amax by MAX(amax, fabsf(x)), which takes the
// second operand when either is NaN; d = amax/127; id = d ? 1/d : 0; D by
// GGML_FP32_TO_FP16 (nearest even, every NaN 0x7e00); q = the low byte of
// CVTTSS2SI(roundf(x·id)), 0 for NaN, ±Inf and magnitudes of 2³¹ and more.
func q8Block(x []float32) q8.Block {
	var b q8.Block
	amax := float32(0)
	for _, v := range x[:32] {
		a := math.Float32frombits(math.Float32bits(v) & 0x7fffffff)
		if !(amax > a) {
			amax = a
		}
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	if d != d {
		b.D = 0x7e00
	} else {
		b.D = float16.Fromfloat32(d)
	}
	for j, v := range x[:32] {
		y := float64(v * id)
		r := math.Copysign(math.Floor(math.Abs(y)+0.5), y) // roundf: ties away from zero
		if r >= -(1<<31) && r < 1<<31 {                    // false for NaN and ±Inf
			b.Q[j] = int8(int32(r))
		}
	}
	return b
}

// FuzzQ8Quantize quantizes the whole blocks of float32 bit patterns in data (a
// trailing partial block is dropped), on every variant, against q8Block.
func FuzzQ8Quantize(f *testing.F) {
	f.Add(make([]byte, 128))
	f.Fuzz(func(t *testing.T, data []byte) {
		src := float32s(data)
		src = src[:len(src)/32*32]
		want := make([]q8.Block, len(src)/32)
		for i := range want {
			want[i] = q8Block(src[32*i:])
		}
		got := make([]q8.Block, len(want))
		varianttest.Each(t, func(v string) {
			clear(got)
			q8.Quantize(got, src)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s: block %d of %v: D %#04x Q %v, ggml's reference gives D %#04x Q %v",
						v, i, src[32*i:32*i+32], uint16(got[i].D), got[i].Q, uint16(want[i].D), want[i].Q)
				}
			}
		})
	})
}

// FuzzQ8Dequantize reads data as ggml-format q8_0 blocks (34 bytes each; a trailing
// partial block is dropped) and checks every variant's values bit for bit against
// float32(q)·D, the CPU's own product, which is exact whenever it is finite.
func FuzzQ8Dequantize(f *testing.F) {
	f.Add(make([]byte, 68))
	f.Fuzz(func(t *testing.T, data []byte) {
		raw := make([]byte, len(data)/34*34) // a fresh, 2-byte aligned copy
		copy(raw, data)
		src := q8.FromBytes(raw)
		dst := make([]float32, 32*len(src))
		varianttest.Each(t, func(v string) {
			clear(dst)
			q8.Dequantize(dst, src)
			for i, b := range src {
				d := b.D.Float32()
				for j, q := range b.Q {
					want := float32(q) * d
					if got := dst[32*i+j]; math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("%s: block %d value %d: D %#04x · %d = %#08x, want %#08x", v, i, j, uint16(b.D), q, math.Float32bits(got), math.Float32bits(want))
					}
				}
			}
		})
	})
}
