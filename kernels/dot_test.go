package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"
)

// Padding around every input and output slice: inputs are surrounded by NaN, so a
// kernel that reads past either end and uses the value gives NaN; outputs by a
// sentinel that must survive.
const dotPad = 9

var (
	dotPadF32  = float32(math.NaN())
	dotPadF16  = uint16(0x7e00) // quiet NaN
	dotSentry  = float32(-123.25)
	dotOffsets = []int{0, 1, 2, 3}
)

// padF32 returns a copy of x at offset off of a NaN-filled array.
func padF32(x []float32, off int) []float32 {
	p := make([]float32, len(x)+off+dotPad)
	for i := range p {
		p[i] = dotPadF32
	}
	copy(p[off:], x)
	return p[off : off+len(x)]
}

// padF16 returns a copy of x at offset off of a NaN-filled array.
func padF16(x []uint16, off int) []uint16 {
	p := make([]uint16, len(x)+off+dotPad)
	for i := range p {
		p[i] = dotPadF16
	}
	copy(p[off:], x)
	return p[off : off+len(x)]
}

// randomF32 returns normal values scaled by powers of two in [2⁻⁸, 2⁸], so sums
// cancel and magnitudes vary as they do in attention.
func randomF32(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(17)-8))
	}
	return x
}

// randomF16 returns fp16 bit patterns of values like randomF32's, in fp16's range.
func randomF16(r *rand.Rand, n int) []uint16 {
	h := make([]uint16, n)
	for i := range h {
		h[i] = uint16(float16.Fromfloat32(float32(math.Ldexp(r.NormFloat64(), r.IntN(9)-4))))
	}
	return h
}

// dotCase runs the three dot products of one variant on the same values: a as float32
// and fp16 bits, b likewise, so every function sees the same data. The results are
// settled as the exported functions settle them.
type dotCase struct {
	name string
	run  func(v string, a32 []float32, a16 []uint16, b32 []float32, b16 []uint16) (got float32, want oracle.DotExpectation)
}

var dotCases = []dotCase{
	{"DotF16", func(v string, _ []float32, a16 []uint16, _ []float32, b16 []uint16) (float32, oracle.DotExpectation) {
		return dotF16.For(v)(a16, b16), oracle.ExpectDot(len(a16), oracle.HalfAt(a16), oracle.HalfAt(b16), 1)
	}},
	{"DotF32F16", func(v string, a32 []float32, _ []uint16, _ []float32, b16 []uint16) (float32, oracle.DotExpectation) {
		return settleF32F16(dotF32F16.For(v)(a32, b16), a32, b16, 1), oracle.ExpectDot(len(a32), oracle.SingleAt(a32), oracle.HalfAt(b16), 1)
	}},
	{"DotF32", func(v string, a32 []float32, _ []uint16, b32 []float32, _ []uint16) (float32, oracle.DotExpectation) {
		return settleF32(dotF32.For(v)(a32, b32), a32, b32), oracle.ExpectDot(len(a32), oracle.SingleAt(a32), oracle.SingleAt(b32), 1)
	}},
}

// checkDots runs every dot product of every variant on the inputs, each at every
// offset into its NaN padding, against the reference and against generic.
func checkDots(t *testing.T, what string, a32 []float32, a16 []uint16, b32 []float32, b16 []uint16) {
	t.Helper()
	generic := make([]float32, len(dotCases))
	for i, c := range dotCases {
		generic[i], _ = c.run(dispatch.Generic, a32, a16, b32, b16)
	}
	varianttest.Each(t, func(v string) {
		t.Helper()
		for i, c := range dotCases {
			for _, off := range dotOffsets {
				got, want := c.run(v, padF32(a32, off), padF16(a16, off+1), padF32(b32, 3-off), padF16(b16, off))
				if err := want.CheckSettled(got); err != nil {
					t.Fatalf("%s %s %s n=%d offset %d: %v", c.name, v, what, len(a32), off, err)
				}
				// Both are within the bound of the exact value, so within twice it of
				// each other; NaNs and Infs must agree exactly.
				if d := math.Abs(float64(got) - float64(generic[i])); !(d <= 2*want.Bound) && !want.Overflowable &&
					!(math.IsNaN(float64(got)) && math.IsNaN(float64(generic[i]))) && got != generic[i] {
					t.Fatalf("%s %s %s n=%d: %v, generic %v", c.name, v, what, len(a32), got, generic[i])
				}
			}
		}
	})
}

// dotInputs returns n random values for each operand, the fp16 sides as bit patterns
// and the float32 sides holding the same values as the fp16 ones where the test
// wants them equal; here they are independent.
func dotInputs(r *rand.Rand, n int) ([]float32, []uint16, []float32, []uint16) {
	return randomF32(r, n), randomF16(r, n), randomF32(r, n), randomF16(r, n)
}

func TestDotLengths(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for n := 0; n <= 300; n++ {
		a32, a16, b32, b16 := dotInputs(r, n)
		checkDots(t, "random", a32, a16, b32, b16)
	}
	// Every length around 768, where DotF16's avx512 variant starts to run its own
	// body rather than the avx2 one (gen/amd64/dot: f16ZMMMin), past that body's loops.
	for n := 700; n <= 900; n++ {
		a32, a16, b32, b16 := dotInputs(r, n)
		checkDots(t, "random", a32, a16, b32, b16)
	}
	for _, n := range []int{1023, 1024, 4099, 65536 + 7} {
		a32, a16, b32, b16 := dotInputs(r, n)
		checkDots(t, "random", a32, a16, b32, b16)
	}
}

// TestDotSpecial puts one special value at every position of vectors whose lengths
// reach each loop of the kernels (the unrolled body, single vectors, the scalar tail).
func TestDotSpecial(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	inf32 := float32(math.Inf(1))
	halfOf := func(f float32) uint16 { return uint16(float16.Fromfloat32(f)) }
	specials := []struct {
		name   string
		a, b   float32 // as float32; the fp16 sides get them converted
		a2, b2 float32 // a second pair at another position, if nonzero
	}{
		{name: "NaN·x", a: float32(math.NaN()), b: 1.5},
		{name: "x·NaN", a: -2, b: float32(math.NaN())},
		{name: "Inf·x", a: inf32, b: 0.5},
		{name: "-Inf·x", a: -inf32, b: 3},
		{name: "Inf·-x", a: inf32, b: -0.25},
		{name: "Inf·0", a: inf32, b: 0},
		{name: "0·-Inf", a: 0, b: -inf32},
		{name: "Inf·x, -Inf·x", a: inf32, b: 1, a2: -inf32, b2: 1},
		{name: "Inf·x, Inf·x", a: inf32, b: 1, a2: inf32, b2: 2},
		{name: "subnormal", a: 0x1p-140, b: 0x1p-20, a2: 0x1p-24, b2: 0x1p-130},
		{name: "overflow", a: 3e38, b: 2},
		{name: "overflow negative", a: -1e38, b: 60000},
		{name: "overflow both signs", a: 3e38, b: 4, a2: -3e38, b2: 4},
		{name: "large no overflow", a: 1e38, b: 1.5, a2: -1e38, b2: 1.5},
	}
	// 849 = 768 + 64 + 16 + 1 reaches every loop of DotF16's own avx512 body (see
	// TestDotLengths); its positions are sampled.
	for _, n := range []int{1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 849} {
		step := max(1, n/100)
		for _, s := range specials {
			for pos := 0; pos < n; pos += step {
				a32, a16, b32, b16 := dotInputs(r, n)
				a32[pos], b32[pos] = s.a, s.b
				a16[pos], b16[pos] = halfOf(s.a), halfOf(s.b)
				if s.a2 != 0 || s.b2 != 0 {
					q := (pos + n/2 + 1) % n
					if q == pos {
						continue
					}
					a32[q], b32[q] = s.a2, s.b2
					a16[q], b16[q] = halfOf(s.a2), halfOf(s.b2)
				}
				checkDots(t, fmt.Sprintf("%s at %d", s.name, pos), a32, a16, b32, b16)
			}
		}
	}
}

// TestDotSubnormalHalves runs every fp16 subnormal and small normal against each
// other: the widening of each must be exact for DotF16 to meet its bound.
func TestDotSubnormalHalves(t *testing.T) {
	a16 := make([]uint16, 0x800)
	for i := range a16 {
		a16[i] = uint16(i) ^ uint16(i&1)<<15 // alternate the sign
	}
	b16 := make([]uint16, len(a16))
	for i := range b16 {
		b16[i] = 0x3c00 // 1.0: the sum is exactly Σ a
	}
	a32, b32 := make([]float32, len(a16)), make([]float32, len(a16))
	fp16.ToFloat32(a32, toHalves(a16))
	fp16.ToFloat32(b32, toHalves(b16))
	for n := 1; n <= len(a16); n = n*3 + 1 {
		checkDots(t, "subnormal halves", a32[:n], a16[:n], b32[:n], b16[:n])
	}
}

// toHalves copies bit patterns into the element type of the exported functions.
func toHalves(h []uint16) []Float16 {
	f := make([]Float16, len(h))
	for i, u := range h {
		f[i] = float16.Frombits(u)
	}
	return f
}

// TestDotPanics checks every variant's panic on mismatched lengths, and that it names
// both lengths: the assembly entries get len(b) only as its difference from len(a)
// (asm.Select), which the continuation decodes for the message.
func TestDotPanics(t *testing.T) {
	varianttest.Each(t, func(v string) {
		for _, c := range []struct {
			name string
			call func()
		}{
			{"kernels.DotF16: len(a) = 3, len(b) = 4, want len(a) = len(b)", func() { DotF16(make([]Float16, 3), make([]Float16, 4)) }},
			{"kernels.DotF32F16: len(a) = 300, len(b) = 3, want len(a) = len(b)", func() { DotF32F16(make([]float32, 300), make([]Float16, 3)) }},
			{"kernels.DotF32: len(a) = 0, len(b) = 1, want len(a) = len(b)", func() { DotF32(make([]float32, 0), make([]float32, 1)) }},
		} {
			require.PanicsWithError(t, c.name, c.call, v)
		}
	})
}

func TestDotExported(t *testing.T) {
	// The exported functions dispatch to the active variant with the slices unchanged.
	t.Logf("variants: %v", Variants())
	r := rand.New(rand.NewPCG(3, 3))
	a32, a16, b32, b16 := dotInputs(r, 333)
	ah, bh := toHalves(a16), toHalves(b16)
	// The variants sum in different orders, so on these inputs each gives its own bits
	// and a kernel wired to the wrong variant's assembly cannot pass. (At n = 77 the
	// avx512 body, one 64-element iteration and a scalar tail, matched generic's bits.)
	seen := map[[3]float32]string{}
	varianttest.Each(t, func(v string) {
		bits := [3]float32{dotF16.For(v)(a16, b16), dotF32F16.For(v)(a32, b16), dotF32.For(v)(a32, b32)}
		if w, ok := seen[bits]; ok {
			t.Fatalf("%s and %s give the same dot products here: the inputs cannot tell them apart", v, w)
		}
		seen[bits] = v
		if got, want := DotF16(ah, bh), dotF16.For(v)(a16, b16); got != want {
			t.Errorf("%s: DotF16 = %v, its implementation gives %v", v, got, want)
		}
		if got, want := DotF32F16(a32, bh), dotF32F16.For(v)(a32, b16); got != want {
			t.Errorf("%s: DotF32F16 = %v, its implementation gives %v", v, got, want)
		}
		if got, want := DotF32(a32, b32), dotF32.For(v)(a32, b32); got != want {
			t.Errorf("%s: DotF32 = %v, its implementation gives %v", v, got, want)
		}
		if allocs := testing.AllocsPerRun(10, func() {
			DotF16(ah, bh)
			DotF32F16(a32, bh)
			DotF32(a32, b32)
		}); allocs != 0 {
			t.Errorf("%s: dot products allocate %v times", v, allocs)
		}
	})
}

// TestDotNonFiniteSettled runs the inputs through the exported functions of
// every variant: terms of ±MaxFloat32 that cancel (NaN from pairwise sums on neon, +Inf
// from sums in order elsewhere), and an Inf product beside a finite product that
// overflows float32 (NaN from an unfused multiply-add, +Inf from a fused one). Placed at
// every stride in vectors long enough for each variant's accumulators, they must give
// what float64 gives on every variant: 0 and +Inf.
func TestDotNonFiniteSettled(t *testing.T) {
	const m = math.MaxFloat32
	cancel := []float32{m, m, -m, -m}
	infAndOverflow := []float32{2, m}
	infAndOverflowKey := []float32{float32(math.Inf(1)), -3}
	varianttest.Each(t, func(v string) {
		for _, n := range []int{4, 5, 8, 16, 17, 32, 64, 100, 128} {
			for stride := 1; 3*stride < n; stride++ {
				for first := 0; first+3*stride < n; first += 1 + stride/2 {
					a, ones := make([]float32, n), make([]float32, n)
					for i := range ones {
						ones[i] = 1
					}
					for j, x := range cancel {
						a[first+j*stride] = x
					}
					want := oracle.ExpectDot(n, oracle.SingleAt(a), oracle.SingleAt(ones), 1)
					if got := DotF32(a, ones); got != float32(want.Exact) {
						t.Fatalf("%s: DotF32 of ±MaxFloat32 at %d+%d·j, n=%d = %v, want %v", v, first, stride, n, got, float32(want.Exact))
					}
					b := make([]float32, n)
					for j := range a {
						a[j], b[j] = 0, 0
					}
					a[first], a[first+stride] = infAndOverflow[0], infAndOverflow[1]
					b[first], b[first+stride] = infAndOverflowKey[0], infAndOverflowKey[1]
					want = oracle.ExpectDot(n, oracle.SingleAt(a), oracle.SingleAt(b), 1)
					if got := DotF32F16(a, toHalves(halvesOf(b))); want.CheckSettled(got) != nil || got != float32(math.Inf(1)) {
						t.Fatalf("%s: DotF32F16 with 2·Inf and MaxFloat32·(−3) at %d, %d, n=%d = %v, want +Inf", v, first, first+stride, n, got)
					}
					if got := DotF32(a, b); want.CheckSettled(got) != nil || got != float32(math.Inf(1)) {
						t.Fatalf("%s: DotF32 with 2·Inf and MaxFloat32·(−3) at %d, %d, n=%d = %v, want +Inf", v, first, first+stride, n, got)
					}
				}
			}
		}
	})
}

// TestScoresNonFiniteSettled is TestDotNonFiniteSettled for Scores: one query row of
// canceling ±MaxFloat32 against keys of ones, and one of 2, MaxFloat32 against keys
// holding +Inf, −3, in blocks that reach every variant's row and panel kernels.
func TestScoresNonFiniteSettled(t *testing.T) {
	const m = math.MaxFloat32
	inf := float32(math.Inf(1))
	for _, c := range []struct{ rows, n, dim int }{{1, 1, 4}, {3, 7, 8}, {5, 130, 16}, {33, 131, 4}, {20, 200, 64}} {
		r := rand.New(rand.NewPCG(uint64(c.rows), uint64(c.n)))
		q, k := randomF32(r, c.rows*c.dim), make([]float32, c.n*c.dim)
		for i := range k {
			k[i] = 1
		}
		// Row 0 cancels against every key of ones; row rows−1 meets the Inf keys, every
		// third from key 1.
		for d := range c.dim {
			q[d] = 0
		}
		for j, x := range []float32{m, m, -m, -m} {
			q[j*(c.dim/4)] = x
		}
		last := (c.rows - 1) * c.dim
		if c.rows > 1 {
			q[last], q[last+1] = 2, m
			for j := 1; j < c.n; j += 3 {
				k[j*c.dim], k[j*c.dim+1] = inf, -3
			}
		}
		kh := toHalves(halvesOf(k))
		want := make([]oracle.DotExpectation, c.rows*c.n)
		for i := range c.rows {
			for j := range c.n {
				want[i*c.n+j] = oracle.ExpectDot(c.dim, oracle.SingleAt(q[i*c.dim:(i+1)*c.dim]), oracle.SingleAt(k[j*c.dim:(j+1)*c.dim]), 0.5)
			}
		}
		dst := make([]float32, c.rows*c.n)
		varianttest.Each(t, func(v string) {
			Scores(dst, q, kh, c.rows, c.n, c.dim, 0.5)
			for e, got := range dst {
				if err := want[e].CheckSettled(got); err != nil {
					t.Fatalf("%s rows=%d n=%d dim=%d: dst[%d*n+%d]: %v", v, c.rows, c.n, c.dim, e/c.n, e%c.n, err)
				}
				if e < c.n && e%3 != 1 && got != float32(want[e].Exact) {
					t.Fatalf("%s rows=%d n=%d dim=%d: canceling dst[0*n+%d] = %v, want %v", v, c.rows, c.n, c.dim, e, got, float32(want[e].Exact))
				}
			}
		})
	}
}

// halvesOf narrows float32 values that fp16 holds exactly to their bit patterns.
func halvesOf(x []float32) []uint16 {
	h := make([]uint16, len(x))
	for i, f := range x {
		h[i] = uint16(float16.Fromfloat32(f))
	}
	return h
}
