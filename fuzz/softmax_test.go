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
