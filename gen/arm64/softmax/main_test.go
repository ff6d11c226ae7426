package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/gen/internal/expfree"
)

const u = 0x1p-24

// exp32 computes 2²⁴·e^(x−m) by ExpSumNEON's steps, in float32, with Fast2Sum (general
// false: the caller guarantees max(−m, m − 103) ≤ x ≤ m) or 2Sum. The explicit
// conversions keep Go from fusing the separate roundings.
func exp32(t *testing.T, x, m float32, general bool) float32 {
	d := x - m
	var e float32
	if general {
		z := d - x
		e = d - z
		e = x - e
		z = z + m
		e = e - z
	} else {
		e = x - (d + m)
	}
	z := expfree.FMA32(d, log2e, magic)
	n := z - magic
	rhi := expfree.FMA32(-n, ln2hi, d)
	if float64(rhi) != float64(d)-float64(n)*float64(ln2hi) {
		t.Fatalf("x = %v, m = %v: d − n·ln2hi is inexact", x, m)
	}
	r := rhi + expfree.FMA32(-n, ln2lo, e)
	r2 := float32(r * r)
	a := expfree.FMA32(r, poly[1], poly[0])
	b := expfree.FMA32(r, poly[3], poly[2])
	b = expfree.FMA32(r2, poly[4], b)
	a = expfree.FMA32(r2, b, a)
	p := expfree.FMA32(r2, a, r) + 1
	scale := (math.Float32bits(z) << 23) // (24 + N)·2²³ mod 2³²
	return math.Float32frombits(math.Float32bits(p) + scale)
}

// TestExponential holds an emulation of ExpSumNEON's exponential to the bound its
// comment derives, 1.65u, over 2²⁰ pairs x ≤ m on the fast path's range and 2²⁰ on the
// general path's (d down to the cut-off −103): maxima of every magnitude from 2⁻²⁰ to
// 2²³, x − m inexact for most.
func TestExponential(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	worst := [2]float64{}
	for i := 0; i < 1<<21; i++ {
		general := i&1 == 1
		m := float32(math.Ldexp(1+r.Float64(), r.IntN(44)-20))
		lo := max(-m, m+cutOff)
		if general {
			lo = m + cutOff
		}
		x := lo + (m-lo)*r.Float32()
		if x < lo || x > m {
			continue
		}
		got := float64(exp32(t, x, m, general))
		want := 0x1p24 * math.Exp(float64(x)-float64(m))
		err := math.Abs(got-want) / want
		if err > 1.65*u {
			t.Fatalf("x = %v, m = %v (general %v): 2²⁴·e^(x−m) = %v, computed %v: %.3fu", x, m, general, want, got, err/u)
		}
		worst[i&1] = max(worst[i&1], err)
	}
	t.Logf("largest error: %.3fu (Fast2Sum), %.3fu (2Sum)", worst[0]/u, worst[1]/u)
}
