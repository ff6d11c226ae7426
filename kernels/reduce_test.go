package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/internal/varianttest"
)

// reduceInputs yields rows of every length 0..300 and a long one, drawn from finite
// values and from rows seeded with special values.
func reduceInputs(r *rand.Rand, each func(x []float32)) {
	specials := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		-float32(math.NaN()), 0, float32(math.Copysign(0, -1)), math.MaxFloat32, -math.MaxFloat32, 1e-45}
	for _, n := range append(rangeInts(0, 300), 32768) {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(20)-10)))
		}
		each(x)
		if n > 0 {
			y := append([]float32(nil), x...)
			y[r.IntN(n)] = specials[r.IntN(len(specials))]
			each(y)
		}
	}
}

func rangeInts(lo, hi int) []int {
	s := make([]int, 0, hi-lo+1)
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}

func TestMax(t *testing.T) {
	if m := Max(nil); !math.IsInf(float64(m), -1) {
		t.Fatalf("Max(nil) = %v, want −Inf", m)
	}
	r := rand.New(rand.NewPCG(5, 6))
	varianttest.Each(t, func(v string) {
		reduceInputs(r, func(x []float32) {
			if len(x) == 0 {
				return
			}
			for off := 0; off < 3 && off < len(x); off++ {
				w := oracle.Max(x[off:])
				got := float64(maxOf.For(v)(x[off:]))
				if got != w && !(math.IsNaN(got) && math.IsNaN(w)) {
					t.Fatalf("%s: Max of %d elements = %v, want %v", v, len(x)-off, got, w)
				}
			}
		})
	})
}

func TestSum(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	varianttest.Each(t, func(v string) {
		reduceInputs(r, func(x []float32) {
			for off := 0; off < 3 && off <= len(x); off++ {
				y := x[off:]
				// The exact sum, to far below the bound: float64 with Kahan–Babuška
				// compensation.
				var s, c, abs float64
				nan := false
				for _, e := range y {
					f := float64(e)
					nan = nan || math.IsNaN(f)
					abs += math.Abs(f)
					next := s + f
					if math.Abs(s) >= math.Abs(f) {
						c += (s - next) + f
					} else {
						c += (f - next) + s
					}
					s = next
				}
				s += c
				got := float64(float32(sumOf.For(v)(y))) // what Sum does with variant v
				bound := 0x1p-24*math.Abs(s) + float64(len(y))*0x1p-53*abs
				switch {
				case nan || math.IsNaN(s) || math.IsInf(abs, 0):
					want := float64(float32(sumGeneric(y)))
					if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
						t.Fatalf("%s: Sum of %d elements with specials = %v, generic %v", v, len(y), got, want)
					}
				case math.IsInf(float64(float32(s)), 0):
					if got != float64(float32(s)) {
						t.Fatalf("%s: Sum %v beyond float32 gave %v", v, s, got)
					}
				case math.Abs(got-s) > bound:
					t.Fatalf("%s: Sum of %d elements = %v, exact %v: error %.3g > %.3g", v, len(y), got, s, math.Abs(got-s), bound)
				}
			}
		})
	})
}

func TestAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	varianttest.Each(t, func(v string) {
		reduceInputs(r, func(src []float32) {
			for off := 1; off <= 3; off++ {
				d := make([]float32, len(src))
				for i := range d {
					d[i] = float32(r.NormFloat64())
				}
				dst, intact := guarded(t, d, off)
				add.For(v)(dst, src)
				intact()
				for i := range d {
					want := d[i] + src[i]
					if dst[i] != want && !(dst[i] != dst[i] && want != want) {
						t.Fatalf("%s: Add at %d of %d: %v + %v = %v, want %v", v, i, len(d), d[i], src[i], dst[i], want)
					}
				}
			}
		})
	})
	defer func() {
		if recover() == nil {
			t.Fatal("Add with mismatched lengths did not panic")
		}
	}()
	Add(make([]float32, 3), make([]float32, 4))
}

func TestReduceAllocs(t *testing.T) {
	x, y := make([]float32, 1027), make([]float32, 1027)
	varianttest.Each(t, func(v string) {
		for name, f := range map[string]func(){
			"Max": func() { Max(x) }, "Sum": func() { Sum(x) }, "Add": func() { Add(x, y) },
		} {
			if a := testing.AllocsPerRun(10, f); a != 0 {
				t.Fatalf("%s: %s allocates %v times", v, name, a)
			}
		}
	})
}
