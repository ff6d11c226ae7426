//go:build !purego && !noasm

package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/internal/varianttest"
)

// TestPoolFixedBodiesStores calls the fixed-size bodies directly, with dst at each of
// the 16 float offsets from a 64-byte boundary and src aligned, as AvgPool1D and
// MaxPool1D call them: the AVX-512 bodies store through 64-byte boundaries of dst, with
// masked stores at either end. Every output must hold its window's average (in
// AvgPool1D's order) or maximum, and nothing before or after dst may change, which
// the callers' own writes around the span would hide.
func TestPoolFixedBodiesStores(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	varianttest.Each(t, func(v string) {
		var avx512 bool
		switch v {
		case "avx2":
		case "avx512":
			avx512 = true
		default:
			return
		}
		block, margin := fixedShape(avx512)
		for _, k := range []int{3, 5, 7} {
			for _, blocks := range []int{0, 1, 2, 3} {
				n := blocks * block
				src := alignedFloats(n + margin)
				for i := range src {
					src[i] = float32(r.NormFloat64())
				}
				for off := range 16 {
					avg, intactAvg := guarded(t, make([]float32, n), off)
					mx, intactMax := guarded(t, make([]float32, n), off)
					fixedAvg(avx512, avg, src, k, 0.25)
					if fixedMax(avx512, mx, src, k) {
						t.Fatalf("%s k=%d: a NaN reported in a row without one", v, k)
					}
					intactAvg()
					intactMax()
					for i := range n {
						w := src[i : i+k]
						s, m := w[0], w[0]
						for j := 1; j < k; j += 2 {
							s += w[j] + w[j+1]
							m = max(m, w[j], w[j+1])
						}
						if avg[i] != s*0.25 || mx[i] != m {
							t.Fatalf("%s k=%d n=%d dst offset %d: [%d] = %v, %v, want %v, %v", v, k, n, off, i, avg[i], mx[i], s*0.25, m)
						}
					}
				}
			}
		}
	})
}
