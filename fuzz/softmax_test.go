package fuzz

import (
	"math"
	"testing"

	"github.com/kvsimd/kvsimd/kernels"
)

// softmaxFloat64 is the softmax of x in float64 with Softmax's documented special
// cases, and whether −Inf entries must come out exactly 0.
func softmaxFloat64(x []float32) (y []float64, masks bool) {
	y = make([]float64, len(x))
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(v)) // NaN-propagating
	}
	switch {
	case math.IsNaN(m) || math.IsInf(m, 1):
		for i := range y {
			y[i] = math.NaN()
		}
	case math.IsInf(m, -1):
		for i := range y {
			y[i] = 1 / float64(len(x))
		}
	default:
		var s float64
		for i, v := range x {
			y[i] = math.Exp(float64(v) - m)
			s += y[i]
		}
		for i := range y {
			y[i] /= s
		}
		masks = true
	}
	return y, masks
}

func FuzzSoftmax(f *testing.F) {
	f.Add([]byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x80, 0xff, 0x99, 0x76, 0x96, 0x7e, 0x00, 0x00, 0xc0, 0x7f})
	f.Fuzz(func(t *testing.T, data []byte) {
		x := float32s(data)
		want, masks := softmaxFloat64(x)
		eachVariant(t, func(v string) {
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
				case math.Abs(g-w) > 0x1p-21*w+0x1p-147:
					t.Fatalf("%s: y[%d] = %v, float64 gives %v; x = %v", v, i, g, w, x)
				}
			}
			if len(x) > 0 && !math.IsNaN(want[0]) && math.Abs(sum-1) > 1e-6 {
				t.Fatalf("%s: outputs sum to 1%+.3g; x = %v", v, sum-1, x)
			}
		})
	})
}
