package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/x448/float16"
)

// weightedDims reaches every pass shape of the SIMD variants: rows narrower than a
// vector, every remainder after whole vectors, one and several passes, and a last
// pass that is shrunk so as not to leave the next less than a vector (961 on neon,
// 1057 on avx2).
var weightedDims = func() []int {
	var dims []int
	for d := 1; d <= 80; d++ {
		dims = append(dims, d)
	}
	return append(dims, 95, 96, 97, 127, 128, 129, 192, 200, 256, 383, 384, 385, 961, 1000, 1057)
}()

// checkWeighted runs every variant on guarded, NaN-filled outputs and NaN-padded
// inputs at a few offsets, and holds each output to the float64 reference's bound and
// to generic; the SIMD variants, one fused multiply-add per term in the same order,
// must also agree with each other bit for bit.
func checkWeighted(t *testing.T, what string, w []float32, v []uint16, dim int) {
	t.Helper()
	n := len(w)
	want := oracle.WeightedSumRows(w, v, dim)
	generic := make([]float32, dim)
	weightedSumRowsGeneric(generic, w, v, dim)
	var fused []float32
	fusedBy := ""
	varianttest.Each(t, func(variant string) {
		t.Helper()
		for _, off := range dotOffsets {
			nans := make([]float32, dim)
			for i := range nans {
				nans[i] = float32(math.NaN()) // a kernel that reads dst first gives NaN
			}
			got, intact := guarded(t, nans, off)
			// At odd offsets the rows lie an odd stride apart with NaNs between them,
			// which no output may read.
			stride, vs := dim, v
			if off%2 != 0 {
				stride = dim + 3
				vs = spreadRows(v, n, dim, stride)
			}
			weightedSumRows.For(variant)(got, padF32(w, 3-off), padF16(vs, off+1), stride)
			intact()
			for d, g := range got {
				if n == 0 && math.Float32bits(g) != 0 {
					t.Fatalf("%s dim=%d with no rows: dst[%d] = %v, want +0", variant, dim, d, g)
				}
				if err := want[d].Check(g); err != nil {
					t.Fatalf("%s %s dim=%d n=%d offset %d: dst[%d]: %v", variant, what, dim, n, off, d, err)
				}
				if diff := math.Abs(float64(g) - float64(generic[d])); !(diff <= 2*want[d].Bound) &&
					!want[d].Overflowable && !sameFloat(g, generic[d]) {
					t.Fatalf("%s %s dim=%d n=%d: dst[%d] = %v, generic %v", variant, what, dim, n, d, g, generic[d])
				}
			}
			if variant == dispatch.Generic {
				continue
			}
			if fused == nil {
				fused, fusedBy = append([]float32(nil), got...), variant
			}
			for d := range got {
				if math.Float32bits(got[d]) != math.Float32bits(fused[d]) && !(got[d] != got[d] && fused[d] != fused[d]) {
					t.Fatalf("%s %s dim=%d n=%d offset %d: dst[%d] = %v, %s gives %v", variant, what, dim, n, off, d, got[d], fusedBy, fused[d])
				}
			}
		}
	})
}

// attentionWeights returns n non-negative weights summing to about 1, a few of them
// dominant, as softmax gives them.
func attentionWeights(r *rand.Rand, n int) []float32 {
	w := make([]float32, n)
	var s float64
	for j := range w {
		x := math.Exp(4 * r.NormFloat64())
		w[j] = float32(x)
		s += x
	}
	for j := range w {
		w[j] = float32(float64(w[j]) / s)
	}
	return w
}

func TestWeightedSumRowsShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, dim := range weightedDims {
		for n := 0; n <= 40; n++ {
			if testing.Short() && n > 9 && n%10 != 0 { // for the race run and emulators
				continue
			}
			checkWeighted(t, "random", randomF32(r, n), randomF16(r, n*dim), dim)
		}
		if testing.Short() && dim%8 != 1 { // still one and several passes, every ISA
			continue
		}
		// More rows than one block (64), and a partial last block.
		for _, n := range []int{97, 300} {
			checkWeighted(t, "attention", attentionWeights(r, n), randomF16(r, n*dim), dim)
		}
	}
	if testing.Short() {
		return
	}
	for _, dim := range []int{64, 128} {
		n := 4099
		checkWeighted(t, "attention", attentionWeights(r, n), randomF16(r, n*dim), dim)
	}
}

// TestWeightedSumRowsSpecial puts special values at several positions of every row
// shape's paths: the first, middle and last rows, and columns in the first, overlapped
// and last vector of a row.
func TestWeightedSumRowsSpecial(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	inf32 := float32(math.Inf(1))
	half := func(f float32) uint16 { return uint16(float16.Fromfloat32(f)) }
	nan32, nan16 := float32(math.NaN()), uint16(0x7e01)
	specials := []struct {
		name   string
		w      float32
		v      uint16
		w2     float32 // a second term in the same column, another row, if v2 != 0
		v2     uint16
		scaleW bool // multiply every weight by w (huge weights), not one
	}{
		{name: "NaN weight", w: nan32, v: half(1.5)},
		{name: "NaN value", w: 0.25, v: nan16},
		{name: "Inf value", w: 0.5, v: half(inf32)},
		{name: "-Inf value", w: 3, v: half(-inf32)},
		{name: "Inf weight", w: inf32, v: half(-0.25)},
		{name: "0·Inf", w: 0, v: half(inf32)},
		{name: "Inf·0", w: inf32, v: 0x8000},
		{name: "Inf, -Inf", w: 1, v: half(inf32), w2: 2, v2: half(-inf32)},
		{name: "Inf, Inf", w: 1, v: half(inf32), w2: 2, v2: half(inf32)},
		{name: "subnormal value", w: 0x1p-130, v: 0x0001, w2: 0x1p-140, v2: 0x83ff},
		{name: "subnormal weight", w: 0x1p-149, v: half(0.75), w2: -0x1p-126, v2: half(0x1p-14)},
		{name: "overflow", w: 3e38, v: half(2)},
		{name: "overflow both signs", w: 3e38, v: half(4), w2: -3e38, v2: half(4)},
		{name: "huge weights", w: 0x1p110, v: half(1), scaleW: true},
	}
	for _, dim := range []int{1, 5, 8, 9, 16, 17, 24, 64, 100, 129} {
		for _, n := range []int{1, 2, 7} {
			cols := []int{0, dim / 2, dim - 1}
			for _, s := range specials {
				for _, j := range []int{0, n / 2, n - 1} {
					for _, d := range cols {
						w, v := randomF32(r, n), randomF16(r, n*dim)
						if s.scaleW {
							for i := range w {
								w[i] *= s.w
							}
						} else {
							w[j], v[j*dim+d] = s.w, s.v
						}
						if s.v2 != 0 && n > 1 {
							j2 := (j + 1) % n
							w[j2], v[j2*dim+d] = s.w2, s.v2
						}
						checkWeighted(t, fmt.Sprintf("%s at row %d column %d", s.name, j, d), w, v, dim)
					}
				}
			}
		}
	}
}

// TestWeightedSumRowsSubnormalHalves runs every fp16 subnormal and small normal through
// the widening of every lane position: the rows hold them all, under weights of 1 and
// of ±2⁻¹⁰⁰, where products underflow float32.
func TestWeightedSumRowsSubnormalHalves(t *testing.T) {
	for _, dim := range []int{7, 16, 33} {
		n := (0x800 + dim - 1) / dim
		v := make([]uint16, n*dim)
		for i := range v {
			v[i] = uint16(i%0x800) ^ uint16(i&1)<<15 // alternate the sign
		}
		w := make([]float32, n)
		for j := range w {
			w[j] = 1
		}
		checkWeighted(t, "subnormal halves", w, v, dim)
		for j := range w {
			w[j] = float32(math.Ldexp(float64(1-2*(j&1)), -100))
		}
		checkWeighted(t, "underflowing products", w, v, dim)
	}
}

func TestWeightedSumRowsPanics(t *testing.T) {
	for name, call := range map[string]func(){
		"empty dst":          func() { WeightedSumRows(nil, nil, nil) },
		"empty dst, rows":    func() { WeightedSumRows(nil, make([]float32, 2), nil) },
		"short v":            func() { WeightedSumRows(make([]float32, 4), make([]float32, 3), make([]Float16, 11)) },
		"long v":             func() { WeightedSumRows(make([]float32, 4), make([]float32, 3), make([]Float16, 13)) },
		"v for another n":    func() { WeightedSumRows(make([]float32, 4), make([]float32, 3), make([]Float16, 16)) },
		"v, no weights":      func() { WeightedSumRows(make([]float32, 4), nil, make([]Float16, 4)) },
		"weights, no values": func() { WeightedSumRows(make([]float32, 1), make([]float32, 1), nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("WeightedSumRows with %s did not panic", name)
				}
			}()
			call()
		}()
	}
}

func TestWeightedSumRowsExported(t *testing.T) {
	// The exported function dispatches to the active variant with the slices unchanged.
	r := rand.New(rand.NewPCG(25, 26))
	const n, dim = 37, 72
	w, v16 := attentionWeights(r, n), randomF16(r, n*dim)
	v := toHalves(v16)
	got, want := make([]float32, dim), make([]float32, dim)
	varianttest.Each(t, func(variant string) {
		WeightedSumRows(got, w, v)
		weightedSumRows.For(variant)(want, w, v16, dim)
		for d := range got {
			if !sameFloat(got[d], want[d]) {
				t.Fatalf("%s: WeightedSumRows dst[%d] = %v, its implementation gives %v", variant, d, got[d], want[d])
			}
		}
		if allocs := testing.AllocsPerRun(10, func() { WeightedSumRows(got, w, v) }); allocs != 0 {
			t.Errorf("%s: WeightedSumRows allocates %v times", variant, allocs)
		}
	})
}

// TestWeightedSumRowsNonFiniteSettled is TestDotNonFiniteSettled for WeightedSumRows:
// in one column, weights ±MaxFloat32 against values of 1, whose in-order float32 sum
// overflows and whose float64 sum is 0; in another, 2·(+Inf) and MaxFloat32·(−3),
// where a product rounded on its own overflows to −Inf and meets the +Inf (NaN on an
// unfused variant) but the settled sum is +Inf. Every variant, through the exported
// function, must give exactly the float64 answers, whatever other columns hold.
func TestWeightedSumRowsNonFiniteSettled(t *testing.T) {
	const m = math.MaxFloat32
	inf := float32(math.Inf(1))
	r := rand.New(rand.NewPCG(27, 28))
	varianttest.Each(t, func(v string) {
		for _, dim := range []int{2, 5, 16, 17, 64, 129} {
			const n = 4
			cancelCol, infCol := 0, dim-1
			w := []float32{m, m, -m, -m}
			vals := randomF16(r, n*dim)
			for j := range n {
				vals[j*dim+cancelCol] = halvesOf([]float32{1})[0]
			}
			dst := make([]float32, dim)
			WeightedSumRows(dst, w, toHalves(vals))
			if dst[cancelCol] != 0 {
				t.Fatalf("%s dim=%d: ±MaxFloat32 weights on ones = %v, want 0 (the float64 sum)", v, dim, dst[cancelCol])
			}
			w2 := []float32{2, m, 0, 0}
			col := halvesOf([]float32{inf, -3, 1, 1})
			for j := range n {
				vals[j*dim+infCol] = col[j]
			}
			WeightedSumRows(dst, w2, toHalves(vals))
			if dst[infCol] != inf {
				t.Fatalf("%s dim=%d: 2·Inf + MaxFloat32·(−3) = %v, want +Inf", v, dim, dst[infCol])
			}
			for d, g := range dst {
				if want := oracle.WeightedSumRows(w2, vals, dim)[d]; want.CheckSettled(g) != nil {
					t.Fatalf("%s dim=%d: dst[%d] = %v: %v", v, dim, d, g, want.CheckSettled(g))
				}
			}
		}
	})
}
