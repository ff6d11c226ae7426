package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/gen/internal/expfree"
)

const u = 0x1p-24

// freeExp32 computes 2²⁴·e^(x−m) by freeExp's steps in float32: Fast2Sum and the clamp
// (general false: the caller guarantees −m ≤ x ≤ m ≤ 2¹²) or 2Sum, the error clamped
// too. The explicit conversions keep Go from fusing the separate roundings.
func freeExp32(t *testing.T, x, m float32, general bool) float32 {
	d := x - m
	var e float32
	if general {
		z := d - x
		e = d - z
		e = x - e
		z = z + m
		e = e - z
		if e != e { // VMAXPS returns its memory operand, −errBound, for a NaN
			e = -errBound
		}
		e = min(max(e, -errBound), errBound)
	} else {
		e = x - float32(d+m)
	}
	d = max(d, clampLo)
	magic := math.Float32frombits(0x4b400000 + 151)
	z := expfree.FMA32(d, log2e, magic)
	n := z - magic
	rhi := expfree.FMA32(-n, ln2hi, d)
	if float64(rhi) != float64(d)-float64(n)*float64(ln2hi) {
		t.Fatalf("x = %v, m = %v: d − n·ln2hi is inexact", x, m)
	}
	r := rhi + expfree.FMA32(-n, ln2lo, e)
	r2 := float32(r * r)
	b := expfree.FMA32(r, poly[3], poly[2])
	a := expfree.FMA32(r, poly[1], poly[0])
	b = expfree.FMA32(r2, poly[4], b)
	a = expfree.FMA32(r2, b, a)
	tt := expfree.FMA32(r2, a, r)
	s := math.Float32frombits(math.Float32bits(z) << 23)
	return expfree.FMA32(tt, s, s)
}

// TestFreeExp holds an emulation of freeExp to the 1.65u its comment takes from
// gen/arm64/softmax, over 2²⁰ pairs x ≤ m on the fast path (m from 2⁻²⁰ to 2¹²) and 2²⁰
// on the general path (m to 2²³), d down to −103.6 (normal results); and below, to
// d = −110, checks the result small enough for an output of exactly 0 (below 2⁻¹²⁶)
// wherever d ≤ −104, and within 2⁻¹⁵⁰ absolute of 2²⁴·e^d between −104 and −103.6.
func TestFreeExp(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	worst := [2]float64{}
	for i := 0; i < 1<<21; i++ {
		general := i&1 == 1
		top := 32
		if general {
			top = 43
		}
		m := float32(math.Ldexp(1+r.Float64(), r.IntN(top)-20))
		lo := m - 110
		if !general {
			lo = max(-m, lo)
		}
		x := lo + (m-lo)*r.Float32()
		if x < lo || x > m {
			continue
		}
		got := float64(freeExp32(t, x, m, general))
		d := float64(x) - float64(m)
		want := 0x1p24 * math.Exp(d)
		switch {
		case d <= -104:
			if got >= 0x1p-126 {
				t.Fatalf("x = %v, m = %v (general %v): d = %v gives %v, want below 2⁻¹²⁶", x, m, general, d, got)
			}
		case d < -103.6:
			if math.Abs(got-want) > 0x1p-150+1.65*u*want {
				t.Fatalf("x = %v, m = %v (general %v): 2²⁴·e^(x−m) = %v, computed %v", x, m, general, want, got)
			}
		default:
			err := math.Abs(got-want) / want
			if err > 1.65*u {
				t.Fatalf("x = %v, m = %v (general %v): 2²⁴·e^(x−m) = %v, computed %v: %.3fu", x, m, general, want, got, err/u)
			}
			worst[i&1] = max(worst[i&1], err)
		}
	}
	t.Logf("largest error: %.3fu (Fast2Sum), %.3fu (2Sum)", worst[0]/u, worst[1]/u)
	for _, general := range []bool{false, true} {
		if got := freeExp32(t, -1e4, 4096, general); got >= 0.98*0x1p-126 {
			t.Errorf("general %v: the clamped exponential is %v, want below 0.98·2⁻¹²⁶", general, got)
		}
	}
	if got := freeExp32(t, float32(math.Inf(-1)), 1, true); got >= 0.98*0x1p-126 {
		t.Errorf("−Inf gives %v, want below 0.98·2⁻¹²⁶", got)
	}
}
