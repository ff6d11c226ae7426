//go:build !purego && !noasm

package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/internal/varianttest"
)

// TestExpSumNaN holds the ExpSum passes to their contract on their own: Softmax's
// maxima (MaxMin) may return numbers for a row with a NaN, and then only ExpSum turns
// the NaN into a NaN sum. One NaN at every position, on the fast path (every element
// ≥ −max), unchecked (lo, the row's smallest number, shows that) or checked (lo = −Inf),
// and on the general one (a −Inf beside it), either sign and payload.
func TestExpSumNaN(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	nans := []uint32{0x7fc00000, 0xffc00000, 0x7f800001, 0xff812345, 0x7fffffff}
	varianttest.Each(t, func(v string) {
		var expSum func(x []float32, m, lo float32) float64
		switch v {
		case "avx2":
			expSum = expSumAVX2
		case "avx512":
			expSum = expSumAVX512
		default:
			return
		}
		for _, general := range []bool{false, true} {
			for _, n := range []int{1, 7, 16, 17, 33, 64, 70} {
				for pos := range n {
					x := make([]float32, n)
					for i := range x {
						x[i] = float32(r.NormFloat64())
					}
					if general {
						x[(pos+1)%n] = float32(math.Inf(-1))
					}
					x[pos] = math.Float32frombits(nans[pos%len(nans)])
					lo := float32(math.Inf(1))
					for _, e := range x {
						lo = min(lo, e) // min skips NaNs
					}
					for _, lo := range []float32{lo, float32(math.Inf(-1))} {
						if s := expSum(slices.Clone(x), 5, lo); !math.IsNaN(s) {
							t.Fatalf("%s n=%d general=%v lo=%v: a NaN at %d gives the sum %v, want NaN", v, n, general, lo, pos, s)
						}
					}
				}
			}
		}
	})
}

// TestMaxMin holds the max passes that Softmax runs (the asm from the first vector
// boundary, Go before it) to the largest and smallest element: a minimum too large
// would let ExpSum skip the range check of an element that needs it. Every length to
// 300, at every offset from a 64-byte boundary, with the extremes planted anywhere, ±0
// and ±Inf among them.
func TestMaxMin(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	varianttest.Each(t, func(v string) {
		var maxMin func([]float32) (float32, float32)
		switch v {
		case "avx2":
			maxMin = maxMinAVX2
		case "avx512":
			maxMin = maxMinAVX512
		default:
			return
		}
		if m, lo := maxMin(nil); !math.IsInf(float64(m), -1) || !math.IsInf(float64(lo), 1) {
			t.Fatalf("%s: empty x gives (%v, %v), want (-Inf, +Inf)", v, m, lo)
		}
		extremes := []float32{0, float32(math.Copysign(0, -1)), 1e30, -1e30, float32(math.Inf(1)), float32(math.Inf(-1))}
		buf := alignedFloats(300 + 16)
		for n := 1; n <= 300; n++ {
			off := n % 16
			x := buf[off : off+n]
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			x[r.IntN(n)] = extremes[r.IntN(len(extremes))]
			x[r.IntN(n)] = extremes[r.IntN(len(extremes))]
			want, wantLo := x[0], x[0]
			for _, e := range x {
				want, wantLo = max(want, e), min(wantLo, e)
			}
			m, lo := maxMin(x)
			if m != want || lo != wantLo {
				t.Fatalf("%s n=%d: (max, min) = (%v, %v), want (%v, %v)", v, n, m, lo, want, wantLo)
			}
		}
	})
}
