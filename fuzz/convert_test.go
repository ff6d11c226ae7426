package fuzz

import (
	"math"
	"testing"

	"github.com/kvsimd/kvsimd/internal/varianttest"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/x448/float16"
)

func FuzzToFloat32(f *testing.F) {
	f.Add([]byte{0x00, 0x3c, 0x01, 0x7c, 0x00, 0xfe, 0xff, 0x03, 0x00, 0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		src := make([]fp16.Float16, 0, len(data)/2)
		for _, u := range uint16s(data) {
			src = append(src, float16.Frombits(u))
		}
		dst := make([]float32, len(src))
		varianttest.Each(t, func(v string) {
			fp16.ToFloat32(dst, src)
			for i, h := range src {
				if got, want := math.Float32bits(dst[i]), math.Float32bits(h.Float32()); got != want {
					t.Fatalf("%s: ToFloat32(%#04x) = %#08x, x448 gives %#08x", v, uint16(h), got, want)
				}
			}
		})
	})
}

func FuzzFromFloat32(f *testing.F) {
	f.Add([]byte{0x00, 0x10, 0x80, 0x33, 0x00, 0xf0, 0x7f, 0x47, 0x01, 0x00, 0x80, 0x7f})
	f.Fuzz(func(t *testing.T, data []byte) {
		src := float32s(data)
		dst := make([]fp16.Float16, len(src))
		varianttest.Each(t, func(v string) {
			fp16.FromFloat32(dst, src)
			for i, x := range src {
				if got, want := dst[i], float16.Fromfloat32(x); got != want {
					t.Fatalf("%s: FromFloat32(%#08x) = %#04x, x448 gives %#04x", v, math.Float32bits(x), uint16(got), uint16(want))
				}
			}
		})
	})
}
