package snapkv_test

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/snapkv"
)

// pyramidExact is PyramidBudgets' schedule in exact rational arithmetic: the real
// budget of each layer, and the integer result it implies (floors, the leftover rows
// one each to the lowest layers).
func pyramidExact(perLayer, layers int, beta float64) (real []*big.Rat, want []int) {
	p := new(big.Rat).SetInt64(int64(perLayer))
	last := new(big.Rat).Quo(p, new(big.Rat).SetFloat64(beta))
	first := new(big.Rat).Sub(new(big.Rat).Mul(big.NewRat(2, 1), p), last)
	left := perLayer * layers
	for l := range layers {
		b := new(big.Rat).Set(p)
		if layers > 1 {
			step := new(big.Rat).Quo(new(big.Rat).Sub(first, last), big.NewRat(int64(layers-1), 1))
			b.Sub(first, step.Mul(step, big.NewRat(int64(l), 1)))
		}
		real = append(real, b)
		fl := new(big.Int).Quo(b.Num(), b.Denom()) // b > 0: truncation is the floor
		want = append(want, int(fl.Int64()))
		left -= want[l]
	}
	for l := 0; l < left; l++ {
		want[l]++
	}
	return real, want
}

func TestPyramidBudgets(t *testing.T) {
	for _, tc := range []struct {
		perLayer, layers int
		beta             float64
	}{
		{1024, 32, 20}, {2048, 40, 20}, {128, 32, 20}, {100, 7, 3}, {64, 1, 20}, {5, 3, 1},
		{1000, 80, 1.5}, {7, 2, 7}, {4096, 126, 20}, {30, 4, 1.1},
	} {
		got, err := snapkv.PyramidBudgets(tc.perLayer, tc.layers, tc.beta)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		real, want := pyramidExact(tc.perLayer, tc.layers, tc.beta)
		sum := 0
		for l, b := range got {
			sum += b
			if b != want[l] {
				t.Fatalf("%+v: layer %d gets %d, want %d (real %s)", tc, l, b, want[l], real[l].FloatString(3))
			}
			// The formula's own promises, checked apart from the rounding rule.
			diff, _ := new(big.Rat).Sub(new(big.Rat).SetInt64(int64(b)), real[l]).Float64()
			if math.Abs(diff) >= 1 {
				t.Fatalf("%+v: layer %d gets %d, %v from the formula's %s", tc, l, b, diff, real[l].FloatString(3))
			}
			if l > 0 && b > got[l-1] {
				t.Fatalf("%+v: layer %d gets %d, more than layer %d's %d", tc, l, b, l-1, got[l-1])
			}
		}
		if sum != tc.perLayer*tc.layers {
			t.Fatalf("%+v: budgets sum to %d, want %d", tc, sum, tc.perLayer*tc.layers)
		}
		if tc.beta == 1 {
			for l, b := range got {
				if b != tc.perLayer {
					t.Fatalf("%+v: beta 1 gives layer %d %d rows", tc, l, b)
				}
			}
		}
	}
}

func TestPyramidBudgetsErrors(t *testing.T) {
	for _, tc := range []struct {
		perLayer, layers int
		beta             float64
		field            string
	}{
		{0, 32, 20, "perLayer 0"},
		{-5, 32, 20, "perLayer -5"},
		{1024, 0, 20, "layers 0"},
		{math.MaxInt / 2, 3, 20, "overflows"},
		{1024, 32, 0.5, "beta 0.5"},
		{1024, 32, math.NaN(), "beta NaN"},
		{1024, 32, math.Inf(1), "beta +Inf"},
		{10, 32, 20, "perLayer/beta = 0.5"},
	} {
		b, err := snapkv.PyramidBudgets(tc.perLayer, tc.layers, tc.beta)
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("PyramidBudgets(%d, %d, %v) = %v, %v; want an error naming %q", tc.perLayer, tc.layers, tc.beta, b, err, tc.field)
		}
	}
}
