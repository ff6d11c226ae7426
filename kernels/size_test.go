package kernels

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"testing"

	"github.com/kvsimd/kvsimd/internal/varianttest"
)

func TestMulSize(t *testing.T) {
	const half = 1 << (bits.UintSize / 2) // half² overflows
	sizes := []int{0, 1, 2, 3, 4, half - 1, half, half + 1, math.MaxInt32, math.MaxInt / 4, math.MaxInt/4 + 1,
		math.MaxInt / 2, math.MaxInt/2 + 1, math.MaxInt - 1, math.MaxInt}
	maxInt := big.NewInt(math.MaxInt)
	for _, a := range sizes {
		for _, b := range sizes {
			want := new(big.Int).Mul(big.NewInt(int64(a)), big.NewInt(int64(b)))
			got, ok := mulSize(a, b)
			if wantOK := want.Cmp(maxInt) <= 0; ok != wantOK || ok && int64(got) != want.Int64() {
				t.Errorf("mulSize(%d, %d) = %d, %t; want %v, %t", a, b, got, ok, want, wantOK)
			}
		}
	}
}

// TestScoresSizeOverflow passes sizes whose products wrap around to the lengths of the
// slices given: every variant must reject them in the wrapper, with the same message,
// before its code runs past dst.
func TestScoresSizeOverflow(t *testing.T) {
	const big = 1<<(bits.UintSize-2) + 1 // 4·big wraps to 4
	for _, c := range []struct{ dst, q, k, rows, n, dim int }{
		{4, 4, 16, big, 4, 4},
		{4, 16, 4, 4, big, 4},
		{16, 4, 4, 4, 4, big},
		{0, 0, 4, 0, big, 4}, // no rows, but n·dim still wraps
	} {
		want := fmt.Sprintf("kernels.Scores: rows·dim, n·dim or rows·n overflows int for rows = %d, n = %d, dim = %d", c.rows, c.n, c.dim)
		varianttest.Each(t, func(v string) {
			got := func() (msg any) {
				defer func() { msg = recover() }()
				Scores(make([]float32, c.dst), make([]float32, c.q), make([]Float16, c.k), c.rows, c.n, c.dim, 1)
				return nil
			}()
			if got != want {
				t.Errorf("%s: Scores(rows=%d, n=%d, dim=%d) panicked with %q, want %q", v, c.rows, c.n, c.dim, got, want)
			}
		})
	}
}

// TestPoolHugeKernel: the pooling wrappers multiply no sizes, and a window far wider
// than src (up to MaxInt) must not overflow the window arithmetic of any variant.
func TestPoolHugeKernel(t *testing.T) {
	src := []float32{1, -2, 5, 3, 0.5}
	var sum float32
	for _, v := range src {
		sum += v
	}
	for _, kernel := range []int{11, math.MaxInt32, math.MaxInt - 2, math.MaxInt} {
		varianttest.Each(t, func(v string) {
			avg, mx := make([]float32, len(src)), make([]float32, len(src))
			AvgPool1D(avg, src, kernel)
			MaxPool1D(mx, src, kernel)
			for i := range src {
				if want := sum * (1 / float32(kernel)); avg[i] != want || mx[i] != 5 {
					t.Fatalf("%s kernel=%d: avg[%d] = %v (want %v), max = %v (want 5)", v, kernel, i, avg[i], want, mx[i])
				}
			}
		})
	}
}
