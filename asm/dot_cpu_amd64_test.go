//go:build !purego && !noasm

package asm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/cpuid/v2"
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/x448/float16"
)

func TestF16ZMMMinOf(t *testing.T) {
	for family, want := range map[int]int{0: 768, 0x17: 768, 0x19: 768, 0x1a: 0, 0x1b: 0} {
		if got := f16ZMMMinOf(family); got != want {
			t.Errorf("f16ZMMMinOf(%#x) = %d, want %d", family, got, want)
		}
	}
	if got, want := f16ZMMMin, f16ZMMMinOf(dispatch.AMDFamily()); got != want {
		t.Errorf("f16ZMMMin = %d on this CPU (AMD family %#x), want %d", got, dispatch.AMDFamily(), want)
	}
}

// TestDotF16ZMMMin runs DotF16's AVX-512 entry with either threshold, whatever this
// CPU's family: every n up to past 768 within DotF16's bound of the float64 sum, and
// from 768 on the same bits with both (the same body).
func TestDotF16ZMMMin(t *testing.T) {
	if !cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL) {
		t.Skip("no AVX-512")
	}
	defer func(m int) { f16ZMMMin = m }(f16ZMMMin)
	r := rand.New(rand.NewPCG(25, 3))
	for n := 1; n <= 900; n++ {
		a, b := make([]uint16, n), make([]uint16, n)
		var exact, abs float64
		for i := range a {
			a[i] = uint16(float16.Fromfloat32(float32(r.NormFloat64())))
			b[i] = uint16(float16.Fromfloat32(float32(r.NormFloat64())))
			p := float64(float16.Frombits(a[i]).Float32()) * float64(float16.Frombits(b[i]).Float32())
			exact += p
			abs += math.Abs(p)
		}
		var got [2]float32
		for k, m := range []int{768, 0} {
			f16ZMMMin = m
			got[k] = DotF16(&a[0], &b[0], n, Select(ISAAVX512, n, n))
			if err := math.Abs(float64(got[k]) - exact); err > 2*float64(n)*0x1p-24*abs {
				t.Errorf("f16ZMMMin = %d, n = %d: %g, float64 sum %g", m, n, got[k], exact)
			}
		}
		if n >= 768 && math.Float32bits(got[0]) != math.Float32bits(got[1]) {
			t.Errorf("n = %d: %g with f16ZMMMin = 768, %g with 0", n, got[0], got[1])
		}
	}
}
