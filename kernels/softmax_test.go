package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/internal/varianttest"
)

// guard is the value written around every output slice; a kernel that writes past its
// slice changes it.
const guard = float32(-12345.678)

// guarded returns a copy of src that starts off elements past a 64-byte boundary
// (so that a kernel's alignment handling sees the same addresses on every run) inside
// a larger buffer whose other elements are guard, and a function that fails the test
// if one changed.
func guarded(t *testing.T, src []float32, off int) ([]float32, func()) {
	t.Helper()
	buf := make([]float32, 16+off+len(src)+4)
	for i := range buf {
		buf[i] = guard
	}
	start := off + int(-uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%64/4)
	x := buf[start : start+len(src) : start+len(src)]
	copy(x, src)
	return x, func() {
		t.Helper()
		for i, v := range buf {
			if (i < start || i >= start+len(src)) && v != guard {
				t.Fatalf("guard at %d of a %d-element slice at offset %d overwritten: %v", i-start, len(src), off, v)
			}
		}
	}
}

// softmaxBound is Softmax's documented error bound for an output whose exact value
// is want.
func softmaxBound(want float64) float64 { return 0x1p-21*want + 0x1p-147 }

// checkSoftmax runs variant v on a guarded copy of x at offset off and checks it
// against the float64 reference and against the generic variant.
func checkSoftmax(t *testing.T, v string, x []float32, off int) {
	t.Helper()
	got, intact := guarded(t, x, off)
	softmax.For(v)(got)
	intact()
	gen := append([]float32(nil), x...)
	softmaxGeneric(gen)
	want, masks := oracle.Softmax(x)
	var sum float64
	finite := true
	for i, w := range want {
		g := float64(got[i])
		sum += g
		switch {
		case math.IsNaN(w):
			finite = false
			if !math.IsNaN(g) {
				t.Fatalf("%s n=%d: y[%d] = %v, want NaN (x[%d] = %v)", v, len(x), i, g, i, x[i])
			}
		case math.IsInf(float64(x[i]), -1) && masks:
			if g != 0 {
				t.Fatalf("%s n=%d: y[%d] = %v for x = −Inf, want exactly 0", v, len(x), i, g)
			}
		case !(math.Abs(g-w) <= softmaxBound(w)): // a NaN y fails too
			t.Fatalf("%s n=%d: y[%d] = %v, float64 gives %v: error %.3g > bound %.3g (x[%d] = %v)",
				v, len(x), i, g, w, math.Abs(g-w), softmaxBound(w), i, x[i])
		case !(math.Abs(g-float64(gen[i])) <= 2*softmaxBound(w)):
			t.Fatalf("%s n=%d: y[%d] = %v, generic gives %v", v, len(x), i, g, gen[i])
		}
	}
	if finite && len(x) > 0 && !(math.Abs(sum-1) <= 1e-6) {
		t.Fatalf("%s n=%d: outputs sum to 1%+.3g", v, len(x), sum-1)
	}
}

// softmaxRows are the input distributions every length is tried with.
var softmaxRows = []struct {
	name string
	gen  func(r *rand.Rand, i int) float32
}{
	{"normal", func(r *rand.Rand, _ int) float32 { return float32(r.NormFloat64()) }},
	{"logits", func(r *rand.Rand, _ int) float32 { return float32(4 * r.NormFloat64()) }},
	// Differences of 50..100 with mixed exponents: x − max is inexact in float32 and
	// outputs reach the subnormal range.
	{"wide", func(r *rand.Rand, _ int) float32 { return float32(30 * r.NormFloat64()) }},
	{"masked", func(r *rand.Rand, i int) float32 {
		if r.IntN(3) == 0 {
			return float32(math.Inf(-1))
		}
		return float32(r.NormFloat64())
	}},
	{"huge", func(r *rand.Rand, _ int) float32 { return float32((2*r.Float64() - 1) * 1e38) }},
	{"ties", func(r *rand.Rand, _ int) float32 { return float32(r.IntN(3)) }},
	{"subnormal", func(r *rand.Rand, _ int) float32 {
		return math.Float32frombits(uint32(r.IntN(1<<23)) | uint32(r.IntN(2))<<31)
	}},
	{"far", func(r *rand.Rand, _ int) float32 { return float32(-103.5 - 2*r.Float64()) }},
}

func TestSoftmaxLengths(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	varianttest.Each(t, func(v string) {
		for _, row := range softmaxRows {
			for n := 0; n <= 300; n++ {
				x := make([]float32, n)
				for i := range x {
					x[i] = row.gen(r, i)
				}
				if row.name == "far" && n > 0 {
					x[r.IntN(n)] = 0 // the max: others sit at the underflow threshold
				}
				checkSoftmax(t, v, x, 1+n%3)
			}
		}
	})
}

// TestSoftmaxAlignments starts rows at every float of a cache line: the avx2 and
// avx512 variants take the elements before the first vector boundary apart.
func TestSoftmaxAlignments(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	varianttest.Each(t, func(v string) {
		for off := range 17 {
			for _, n := range []int{1, 3, 15, 16, 17, 31, 32, 33, 64 + 5, 200} {
				for _, row := range softmaxRows {
					x := make([]float32, n)
					for i := range x {
						x[i] = row.gen(r, i)
					}
					checkSoftmax(t, v, x, off)
				}
			}
		}
	})
}

func TestSoftmaxLong(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	varianttest.Each(t, func(v string) {
		for _, n := range []int{32768, 131072 + 5} {
			for _, row := range softmaxRows[:4] {
				x := make([]float32, n)
				for i := range x {
					x[i] = row.gen(r, i)
				}
				checkSoftmax(t, v, x, 2)
			}
		}
	})
}

func TestSoftmaxSpecial(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	cases := map[string][]float32{
		"one":          {3},
		"one −Inf":     {-inf},
		"all −Inf":     {-inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf},
		"−Inf and one": {-inf, -inf, 2, -inf, -inf, -inf, -inf, -inf, -inf, -inf},
		"NaN first":    {nan, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
		"NaN last":     {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, nan},
		"NaN −Inf":     {-inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, nan},
		"+Inf":         {1, inf, 2, 3, 4, 5, 6, 7, 8},
		"+Inf −Inf":    {inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf},
		"±1e38":        {1e38, -1e38, 1e38, -1e38, 0, 1e38, -1e38, 1e38, -1e38, 5},
		"±MaxFloat32":  {math.MaxFloat32, -math.MaxFloat32, 0, -math.MaxFloat32, -math.MaxFloat32, 1, 2, 3, math.MaxFloat32},
		"−MaxFloat32 and −Inf": {-math.MaxFloat32, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf,
			-math.MaxFloat32},
		"equal": {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7},
	}
	varianttest.Run(t, func(t *testing.T, v string) {
		for name, x := range cases {
			t.Run(name, func(t *testing.T) {
				checkSoftmax(t, v, x, 3)
				y := append([]float32(nil), x...)
				softmax.For(v)(y)
				_, masks := oracle.Softmax(x)
				for i, xi := range x {
					if math.IsInf(float64(xi), -1) && masks && y[i] != 0 {
						t.Fatalf("y[%d] = %v for −Inf, want 0", i, y[i])
					}
				}
			})
		}
		// A row of only −Inf is uniform, exactly 1/n.
		x := []float32{-inf, -inf, -inf}
		softmax.For(v)(x)
		for _, y := range x {
			if y != float32(1.0/3) {
				t.Fatalf("%s: all −Inf gives %v, want 1/3", v, x)
			}
		}
		softmax.For(v)(nil)
	})
}

// TestSoftmaxNaNAnywhere puts one NaN (quiet or signalling, either sign) at every
// position of rows that take each path of the exponential (normal rows the fast one,
// masked and wide rows the general one), at several alignments: every output must be
// NaN, however the variant's maximum treats the NaN.
func TestSoftmaxNaNAnywhere(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	nans := []uint32{0x7fc00000, 0xffc00000, 0x7f800001, 0xff812345, 0x7fffffff}
	varianttest.Each(t, func(v string) {
		for _, row := range []int{0, 2, 3} { // normal, wide, masked
			for _, n := range []int{1, 2, 15, 16, 17, 40, 70} {
				for pos := range n {
					x := make([]float32, n)
					for i := range x {
						x[i] = softmaxRows[row].gen(r, i)
					}
					x[pos] = math.Float32frombits(nans[(pos+n)%len(nans)])
					checkSoftmax(t, v, x, (pos+row)%17)
				}
			}
		}
	})
}

// TestSoftmaxOracle recomputes the oracle's causal attention rows: scores from its
// queries and keys (in float64, rounded), masked columns set to −Inf, then Softmax. The
// oracle is PyTorch in float32; its scores differ from ours in the last bit, which
// moves probabilities by a few 1e-7.
func TestSoftmaxOracle(t *testing.T) {
	for _, file := range snapOracleFiles {
		c := readSnapOracle(t, file)
		p := c.Params
		q, k, attn := c.Inputs.QWindow.Data, c.Inputs.K.Data, c.AttnWindow.Data
		varianttest.Each(t, func(v string) {
			row := make([]float32, p.PromptLen)
			for bh := 0; bh < p.Batch*p.Heads; bh++ {
				for w := 0; w < p.Window; w++ {
					qr := q[(bh*p.Window+w)*p.HeadDim:][:p.HeadDim]
					last := p.PromptLen - p.Window + w
					for j := range row {
						if j > last {
							row[j] = float32(math.Inf(-1))
							continue
						}
						kr := k[(bh*p.PromptLen+j)*p.HeadDim:][:p.HeadDim]
						var s float64
						for d := range qr {
							s += float64(qr[d]) * float64(kr[d])
						}
						row[j] = float32(s * c.Scale)
					}
					softmax.For(v)(row)
					want := attn[(bh*p.Window+w)*p.PromptLen:][:p.PromptLen]
					for j := range row {
						if j > last && row[j] != 0 || math.Abs(float64(row[j]-want[j])) > 1e-6 {
							t.Fatalf("%s %s: head %d window row %d column %d: %v, PyTorch %v", v, file, bh, w, j, row[j], want[j])
						}
					}
				}
			}
		})
	}
}

func TestSoftmaxAllocs(t *testing.T) {
	x := make([]float32, 4099)
	varianttest.Each(t, func(v string) {
		if a := testing.AllocsPerRun(10, func() { Softmax(x) }); a != 0 {
			t.Fatalf("%s: Softmax allocates %v times", v, a)
		}
	})
}

// TestSoftmaxPaths aims at the SIMD exponentials' two paths: groups of vectors (four
// on AVX2, pairs on AVX-512) whose elements all lie in [−m, m] with 0 ≤ m ≤ 2¹² take
// Fast2Sum; one element below −m, a −Inf, or a max outside [0, 2¹²] sends the group (or
// the whole row) to the general path. On AVX a row whose minimum is at least −m skips
// the check of each group: "fast" rows run so, the rows with an odd element not. On
// neon a group is four vectors, sixteen elements, whose elements must lie in
// [max(−m, m − 103), m]; TestSoftmaxCutOff aims at its bounds.
// Lengths cover iterations of eight vectors, of four, single vectors and the padded
// tail.
func TestSoftmaxPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	rows := []struct {
		name string
		max  float32 // the row's maximum; others are drawn from [lo, max]
		lo   float32
		odd  float32 // planted at one random place when not 0
	}{
		{"fast", 7.5, -7.5, 0},
		{"one below −max", 7.5, -7.5, -7.5001},
		{"one −Inf", 3, -3, float32(math.Inf(-1))},
		{"max 0", 0, -0.5, 0},
		{"max 2¹²", 0x1p12, -0x1p12, 0},
		{"max 2¹² far below", 0x1p12, 0x1p12 - 200, -0x1p12},
		{"max above 2¹²", 0x1.000002p12, 0x1p12 - 50, 0},
		{"negative max", -3, -40, 0},
		{"tiny max", 1e-30, -1e-30, 0},
	}
	varianttest.Run(t, func(t *testing.T, v string) {
		for _, row := range rows {
			for _, n := range []int{1, 15, 16, 17, 31, 48, 63, 64, 65, 96, 127, 128, 192, 200, 255, 1024 + 13} {
				x := make([]float32, n)
				for i := range x {
					x[i] = row.lo + (row.max-row.lo)*r.Float32()
				}
				x[r.IntN(n)] = row.max
				if row.odd != 0 && n > 1 {
					x[r.IntN(n)] = row.odd
				}
				if m := Max(x); m != row.max {
					x[0] = row.max
				}
				t.Run(fmt.Sprintf("%s/n=%d", row.name, n), func(t *testing.T) { checkSoftmax(t, v, x, n%3) })
			}
		}
	})
}

// TestSoftmaxMillion holds the bound at n = 2²⁰, where a float32 running sum would be
// far outside it (2¹⁴ terms per lane); the SIMD variants sum in float32 only eight
// vectors at a time (neon four).
func TestSoftmaxMillion(t *testing.T) {
	if testing.Short() {
		t.Skip("2²⁰-element rows in short mode")
	}
	r := rand.New(rand.NewPCG(7, 8))
	varianttest.Each(t, func(v string) {
		for _, row := range softmaxRows[:3] {
			x := make([]float32, 1<<20)
			for i := range x {
				x[i] = row.gen(r, i)
			}
			checkSoftmax(t, v, x, 1)
			// With the largest magnitude as the max, no element is below −max: the AVX
			// exponentials run without per-group checks.
			var top float32
			for _, e := range x {
				top = max(top, abs32(e))
			}
			x[r.IntN(len(x))] = top
			checkSoftmax(t, v, x, 1)
		}
	})
}

// TestSoftmaxExponentRange holds every variant to the bound over 2²⁰ outputs (2¹⁶ in
// short mode, for emulators): rows of 4096 whose x − max sweep [−span, 0] evenly
// (every multiple of ln2 and every reduced argument between, so every exponent a
// variant builds from its range reduction), for maxima from 2⁻¹²⁶ to 2¹²⁷ and negative
// ones, x − max exact for some and rounded for most. The span cycles through the fast
// path's range, where every group of a row is on it (neon: max(−m, m − 103); AVX: −m),
// through the cut-off to −110, and through it with a −Inf and −math.MaxFloat32 in
// every 64 elements (the general path, group by group). Outputs below float32's normal
// range are held to the bound's 2⁻¹⁴⁷. checkSoftmaxRatios also holds each exponential
// to its own, tighter bound.
func TestSoftmaxExponentRange(t *testing.T) {
	rows, n := 256, 4096
	if testing.Short() {
		rows = 16
	}
	maxima := []float32{0, 1, 7.25, 51.5, 103, 1000.3, 0x1p12, 0x1p20 + 0.5, 0x1p23 + 1, 0x1p24,
		math.SmallestNonzeroFloat32, 0x1p-126, 1e-30, 3e38, -1, -50, -0x1p20}
	r := rand.New(rand.NewPCG(17, 18))
	varianttest.Each(t, func(v string) {
		x := make([]float32, n)
		for k := range rows {
			m := maxima[k%len(maxima)]
			if k >= len(maxima) { // then random maxima of every binade
				m = float32(math.Ldexp(1+r.Float64(), r.IntN(254)-126))
				if r.IntN(4) == 0 {
					m = -m
				}
			}
			span := 110.0
			if k%3 == 0 {
				span = math.Min(103, 2*math.Abs(float64(m)))
			}
			for i := range x {
				x[i] = float32(float64(m) - span*(float64(i)+r.Float64())/float64(n))
				if k%3 == 2 && i%64 == 5 {
					x[i] = float32(math.Inf(-1))
				}
				if k%3 == 2 && i%64 == 37 {
					x[i] = -math.MaxFloat32
				}
			}
			x[r.IntN(n)] = m
			checkSoftmax(t, v, x, k%3)
			checkSoftmaxRatios(t, v, x)
		}
	})
}

// checkSoftmaxRatios holds each exponential of variant v closer than Softmax's bound
// does, through the ratio of its output to the output of an element equal to the max
// (whose exponential is exact in every variant): y/y_max = e^(x−max) within the
// exponential's own error (1.3u on avx512, 1.65u on avx2 and neon, 1u for the generic
// float32 rounding of math.Exp; u = 2⁻²⁴) and the two roundings of the scaling, 2u: 3.65u.
// Outputs outside float32's normal range are skipped.
func checkSoftmaxRatios(t *testing.T, v string, x []float32) {
	t.Helper()
	m := Max(x)
	if m != m || math.IsInf(float64(m), 0) {
		return
	}
	y := append([]float32(nil), x...)
	softmax.For(v)(y)
	var top float64
	for i, xi := range x {
		if xi == m {
			top = float64(y[i])
			break
		}
	}
	if top < 0x1p-126 {
		return
	}
	for i, xi := range x {
		if float64(y[i]) < 0x1p-126 {
			continue
		}
		want := math.Exp(float64(xi) - float64(m))
		if got := float64(y[i]) / top; !(math.Abs(got-want) <= 3.65*0x1p-24*want) {
			t.Fatalf("%s n=%d: y[%d]/y_max = %v, e^(x−max) = %v: error %.3fu > 3.65u (x[%d] = %v, max %v)",
				v, len(x), i, got, want, math.Abs(got-want)/want/0x1p-24, i, xi, m)
		}
	}
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// TestSoftmaxCutOff aims at the neon exponential's construction of 2^k in the exponent
// field, which is exact only while 2²⁴·e^(x−m) is normal: its general path sets x − m
// below −103 to exactly 0, and its fast path takes a group of sixteen only if every
// element is at least lim = max(−m, m − 103) (lim = m for m ≥ 2²⁴). Rows put elements
// at, just above and just below those cut-offs, for maxima where x − m is exact and
// where it rounds, in whole groups (fast path) and with one element below the group's
// lim (general path). Every variant must meet the bound and give exactly 0 where
// x − m ≤ −104 (the output is below 2⁻¹⁵⁰·⁰⁴ and rounds to 0).
func TestSoftmaxCutOff(t *testing.T) {
	down := func(v float32) float32 { return math.Nextafter32(v, float32(math.Inf(-1))) }
	up := func(v float32) float32 { return math.Nextafter32(v, float32(math.Inf(1))) }
	check := func(t *testing.T, v string, x []float32) {
		t.Helper()
		checkSoftmax(t, v, x, len(x)%3)
		y := append([]float32(nil), x...)
		softmax.For(v)(y)
		m := float64(Max(x))
		for i, xi := range x {
			if float64(xi)-m <= -104 && y[i] != 0 {
				t.Fatalf("%s: x[%d] = %v is %v below the max %v: y = %v, want exactly 0", v, i, xi, m-float64(xi), m, y[i])
			}
		}
	}
	maxima := []float32{0, 1e-30, 1, 7.25, 51.5, 52, 80, 102.9, 103, 104, 1000.3, 0x1p12, 0x1p12 + 0.5,
		0x1p23 + 1, 0x1p24 - 1, 0x1p24, 0x1p30, 3e38, -1, -50, -0x1p20}
	r := rand.New(rand.NewPCG(9, 10)) // the sweep's, below
	varianttest.Run(t, func(t *testing.T, v string) {
		for _, m := range maxima {
			// Offsets from the max around the cut-offs, −103 (neon) and −104 (0 on every
			// variant), and the fast path's −m; x = m − off rounds when m is large.
			var near []float32
			// Unmasked, the exponent field would wrap from about −104.66 down.
			for _, d := range []float32{-103, -103.3, -103.97, -104, -104.03, -104.66, -104.7} {
				near = append(near, m+d, down(m+d), up(m+d))
			}
			near = append(near, -m, down(-m), up(-m), down(m), m-128, m-200, m-1e4)
			var xs []float32
			for _, x := range near {
				if x <= m && !math.IsInf(float64(x), 0) {
					xs = append(xs, x)
				}
			}
			// fast: each element alone in a group of sixteen copies of the max
			// (on the fast path where x ≥ lim); mixed: all of them in one row.
			for _, x := range xs {
				row := make([]float32, 32)
				for i := range row {
					row[i] = m
				}
				row[5], row[16+11] = x, x
				t.Run(fmt.Sprintf("max=%g/x=%g", m, x), func(t *testing.T) { check(t, v, row) })
			}
			row := append([]float32{m}, xs...)
			row = append(row, float32(math.Inf(-1)), -math.MaxFloat32)
			t.Run(fmt.Sprintf("max=%g/mixed", m), func(t *testing.T) { check(t, v, row) })
		}
		// A fixed-seed sweep of random maxima, elements drawn around the cut-offs.
		for range 200 {
			m := float32(math.Ldexp(r.Float64()+0.5, r.IntN(40)-10))
			if r.IntN(4) == 0 {
				m = -m
			}
			x := make([]float32, 1+r.IntN(70))
			for i := range x {
				switch r.IntN(4) {
				case 0:
					x[i] = m
				case 1:
					x[i] = m - float32(102+3*r.Float64())
				case 2:
					x[i] = m - float32(r.Float64()*2*math.Abs(float64(m)))
				default:
					x[i] = down(m - 103)
				}
			}
			x[r.IntN(len(x))] = m
			t.Run(fmt.Sprintf("sweep/max=%g/n=%d", m, len(x)), func(t *testing.T) { check(t, v, x) })
		}
	})
}
