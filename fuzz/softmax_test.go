package fuzz

import (
	"math"
	"testing"

	"github.com/kvsimd/kvsimd/internal/varianttest"

	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/kernels"
)

func FuzzSoftmax(f *testing.F) {
	f.Add([]byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x80, 0xff, 0x99, 0x76, 0x96, 0x7e, 0x00, 0x00, 0xc0, 0x7f})
	f.Fuzz(func(t *testing.T, data []byte) {
		x := float32s(data)
		want, masks := oracle.Softmax(x)
		varianttest.Each(t, func(v string) {
			y := append([]float32(nil), x...)
			kernels.Softmax(y)
			var sum float64
			for i, w := range want {
				g := float64(y[i])
				sum += g
				switch {
				case math.IsNaN(w):
					if !math.IsNaN(g) {
						t.Fatalf("%s: y[%d] = %v, want NaN; x = %v", v, i, g, x)
					}
				case masks && math.IsInf(float64(x[i]), -1):
					if g != 0 {
						t.Fatalf("%s: y[%d] = %v for −Inf, want 0; x = %v", v, i, g, x)
					}
				case !(math.Abs(g-w) <= 0x1p-21*w+0x1p-147): // a NaN y fails too
					t.Fatalf("%s: y[%d] = %v, float64 gives %v; x = %v", v, i, g, w, x)
				}
			}
			if len(x) > 0 && !math.IsNaN(want[0]) && !(math.Abs(sum-1) <= 1e-6) {
				t.Fatalf("%s: outputs sum to 1%+.3g; x = %v", v, sum-1, x)
			}
		})
	})
}

// FuzzAddSoftmax reads x and dst from the two halves of data (and their offsets within
// a vector from off) and holds every variant to AddSoftmax's contract: the bits of
// Softmax then Add on the same variant, at the same addresses modulo 64 bytes, and
// Softmax's float64 bound plus the add's rounding.
func FuzzAddSoftmax(f *testing.F) {
	f.Add([]byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x80, 0xff, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0xc0, 0x7f}, uint8(1))
	f.Add([]byte{0x00, 0x00, 0x80, 0xff, 0x00, 0x00, 0x80, 0xff, 0xff, 0xff, 0x7f, 0x7f, 0x01, 0x00, 0x00, 0x00}, uint8(0))
	f.Add([]byte{0x00, 0x00, 0x80, 0x7f, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x80, 0x80, 0x00, 0x00, 0x80, 0x7f}, uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, off uint8) {
		v := float32s(data)
		n := len(v) / 2
		x, d := v[:n], v[n:2*n]
		want, masks := oracle.Softmax(x)
		// Two copies each of x and dst, 64 bytes apart times a whole number: the copies
		// of each start at the same place within a vector (off's low four bits, x; its
		// high four, dst), where the variants split x for their sums and dst for their
		// Add (whose Go head and asm body may keep different NaN payloads).
		stride := (n + 31) &^ 15
		buf := make([]float32, 4*stride)
		xo, do := int(off%16), int(off/16)
		part := func(k, o int) []float32 { return buf[k*stride+o : k*stride+o+n] }
		x1, x2, got, ref := part(0, xo), part(1, xo), part(2, do), part(3, do)
		varianttest.Each(t, func(variant string) {
			copy(x1, x)
			copy(x2, x)
			copy(got, d)
			copy(ref, d)
			kernels.AddSoftmax(got, x1)
			kernels.Softmax(x2)
			kernels.Add(ref, x2)
			for i, w := range want {
				g, di := float64(got[i]), float64(d[i])
				exact := di + w
				switch {
				case math.Float32bits(got[i]) != math.Float32bits(ref[i]):
					t.Fatalf("%s: dst[%d] = %v, Softmax then Add give %v; x = %v, dst = %v", variant, i, got[i], ref[i], x, d)
				case math.IsNaN(exact):
					if !math.IsNaN(g) {
						t.Fatalf("%s: dst[%d] = %v, want NaN; x = %v, dst = %v", variant, i, g, x, d)
					}
				case math.IsInf(di, 0) || masks && math.IsInf(float64(x[i]), -1):
					if g != di {
						t.Fatalf("%s: dst[%d] = %v, want %v unchanged; x = %v", variant, i, g, di, x)
					}
				case !(math.Abs(g-exact) <= 0x1p-21*w+0x1p-147+0x1p-24*math.Abs(exact)+0x1p-150):
					t.Fatalf("%s: dst[%d] = %v, float64 gives %v; x = %v, dst = %v", variant, i, g, exact, x, d)
				}
			}
		})
	})
}
