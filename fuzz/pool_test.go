package fuzz

import (
	"math"
	"testing"

	"github.com/kvsimd/kvsimd/internal/varianttest"

	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/kernels"
)

// FuzzPool1D checks both poolings of every variant against their documented reference
// loops: average bit for bit (every variant sums the window in the documented order of
// pairs and scales by the rounded reciprocal), max exactly with NaN propagating.
func FuzzPool1D(f *testing.F) {
	f.Add([]byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0xc0, 0x7f, 0x00, 0x00, 0x80, 0xff, 0x00, 0x00, 0x00, 0x80}, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, k uint8) {
		src := float32s(data)
		kernel := 2*int(k%16) + 1
		wantAvg, wantMax := oracle.AvgPool1D(src, kernel), oracle.MaxPool1D(src, kernel)
		avg, mx := make([]float32, len(src)), make([]float32, len(src))
		varianttest.Each(t, func(v string) {
			kernels.AvgPool1D(avg, src, kernel)
			kernels.MaxPool1D(mx, src, kernel)
			for i := range src {
				if s := wantAvg[i]; avg[i] != s && !(avg[i] != avg[i] && s != s) {
					t.Fatalf("%s k=%d: avg[%d] = %v, want %v; src = %v", v, kernel, i, avg[i], s, src)
				}
				if m := wantMax[i]; float64(mx[i]) != m && !(mx[i] != mx[i] && math.IsNaN(m)) {
					t.Fatalf("%s k=%d: max[%d] = %v, want %v; src = %v", v, kernel, i, mx[i], m, src)
				}
			}
		})
	})
}
