package fuzz

import (
	"math"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/internal/varianttest"
)

// bf16Narrow is the scalar reference of bf16.FromFloat32: PyTorch's round to nearest
// even on the bits, NaNs quieted with sign and top payload bits.
func bf16Narrow(f float32) bf16.BFloat16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return bf16.BFloat16(u>>16 | 0x0040)
	}
	return bf16.BFloat16((u + 0x7fff + (u>>16)&1) >> 16)
}

func FuzzBF16ToFloat32(f *testing.F) {
	f.Add([]byte{0x80, 0x3f, 0x81, 0x7f, 0xc0, 0xff, 0x80, 0x7f, 0x01, 0x00, 0x00, 0x80, 0x7f, 0x7f})
	f.Fuzz(func(t *testing.T, data []byte) {
		src := bf16.FromBits(uint16s(data))
		dst := make([]float32, len(src))
		varianttest.Each(t, func(v string) {
			bf16.ToFloat32(dst, src)
			for i, b := range src {
				if got, want := math.Float32bits(dst[i]), uint32(b)<<16; got != want {
					t.Fatalf("%s: ToFloat32(%#04x) = %#08x, want %#08x", v, uint16(b), got, want)
				}
			}
		})
	})
}

func FuzzBF16FromFloat32(f *testing.F) {
	f.Add([]byte{0x00, 0x80, 0x80, 0x3f, 0x00, 0x80, 0x01, 0x00, 0x01, 0x00, 0x80, 0x7f, 0x00, 0x80, 0x7f, 0x7f})
	f.Fuzz(func(t *testing.T, data []byte) {
		src := float32s(data)
		dst := make([]bf16.BFloat16, len(src))
		varianttest.Each(t, func(v string) {
			bf16.FromFloat32(dst, src)
			for i, x := range src {
				if got, want := dst[i], bf16Narrow(x); got != want {
					t.Fatalf("%s: FromFloat32(%#08x) = %#04x, want %#04x", v, math.Float32bits(x), uint16(got), uint16(want))
				}
			}
		})
	})
}
