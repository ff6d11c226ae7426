package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/oracle"
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
// and fp16 bits, b likewise, so every function sees the same data.
type dotCase struct {
	name string
	run  func(v string, a32 []float32, a16 []uint16, b32 []float32, b16 []uint16) (got float32, want oracle.DotExpectation)
}

var dotCases = []dotCase{
	{"DotF16", func(v string, _ []float32, a16 []uint16, _ []float32, b16 []uint16) (float32, oracle.DotExpectation) {
		return dotF16.For(v)(a16, b16), oracle.ExpectDot(len(a16), oracle.HalfAt(a16), oracle.HalfAt(b16), 1)
	}},
	{"DotF32F16", func(v string, a32 []float32, _ []uint16, _ []float32, b16 []uint16) (float32, oracle.DotExpectation) {
		return dotF32F16.For(v)(a32, b16), oracle.ExpectDot(len(a32), oracle.SingleAt(a32), oracle.HalfAt(b16), 1)
	}},
	{"DotF32", func(v string, a32 []float32, _ []uint16, b32 []float32, _ []uint16) (float32, oracle.DotExpectation) {
		return dotF32.For(v)(a32, b32), oracle.ExpectDot(len(a32), oracle.SingleAt(a32), oracle.SingleAt(b32), 1)
	}},
}

// checkDots runs every dot product of every variant on the inputs, each at every
// offset into its NaN padding, against the reference and against generic.
func checkDots(t *testing.T, what string, a32 []float32, a16 []uint16, b32 []float32, b16 []uint16) {
	t.Helper()
	for _, c := range dotCases {
		generic, _ := c.run(dispatch.Generic, a32, a16, b32, b16)
		for _, v := range dispatch.Tested() {
			for _, off := range dotOffsets {
				got, want := c.run(v, padF32(a32, off), padF16(a16, off+1), padF32(b32, 3-off), padF16(b16, off))
				if err := want.Check(got); err != nil {
					t.Fatalf("%s %s %s n=%d offset %d: %v", c.name, v, what, len(a32), off, err)
				}
				// Both are within the bound of the exact value, so within twice it of
				// each other; NaNs and Infs must agree exactly.
				if d := math.Abs(float64(got) - float64(generic)); !(d <= 2*want.Bound) && !want.Overflowable &&
					!(math.IsNaN(float64(got)) && math.IsNaN(float64(generic))) && got != generic {
					t.Fatalf("%s %s %s n=%d: %v, generic %v", c.name, v, what, len(a32), got, generic)
				}
			}
		}
	}
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
	for _, n := range []int{1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100} {
		for _, s := range specials {
			for pos := range n {
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

func TestDotPanics(t *testing.T) {
	for name, call := range map[string]func(){
		"DotF16":    func() { DotF16(make([]Float16, 3), make([]Float16, 4)) },
		"DotF32F16": func() { DotF32F16(make([]float32, 4), make([]Float16, 3)) },
		"DotF32":    func() { DotF32(make([]float32, 0), make([]float32, 1)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s with mismatched lengths did not panic", name)
				}
			}()
			call()
		}()
	}
}

func TestDotExported(t *testing.T) {
	// The exported functions dispatch to the active variant with the slices unchanged.
	t.Logf("variants: %v", Variants())
	defer Use(Active())
	r := rand.New(rand.NewPCG(3, 3))
	a32, a16, b32, b16 := dotInputs(r, 77)
	ah, bh := toHalves(a16), toHalves(b16)
	for _, v := range dispatch.Tested() {
		if err := Use(v); err != nil {
			t.Fatal(err)
		}
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
	}
}
