package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/oracle"
)

// guard is the value written around every output slice; a kernel that writes past its
// slice changes it.
const guard = float32(-12345.678)

// guarded returns a slice of n elements at offset off inside a larger buffer whose
// other elements are guard, and a function that fails the test if one changed.
func guarded(t *testing.T, src []float32, off int) ([]float32, func()) {
	t.Helper()
	buf := make([]float32, off+len(src)+4)
	for i := range buf {
		buf[i] = guard
	}
	x := buf[off : off+len(src) : off+len(src)]
	copy(x, src)
	return x, func() {
		t.Helper()
		for i, v := range buf {
			if (i < off || i >= off+len(src)) && v != guard {
				t.Fatalf("guard at %d of a %d-element slice at offset %d overwritten: %v", i-off, len(src), off, v)
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
		case math.Abs(g-w) > softmaxBound(w):
			t.Fatalf("%s n=%d: y[%d] = %v, float64 gives %v: error %.3g > bound %.3g (x[%d] = %v)",
				v, len(x), i, g, w, math.Abs(g-w), softmaxBound(w), i, x[i])
		case math.Abs(g-float64(gen[i])) > 2*softmaxBound(w):
			t.Fatalf("%s n=%d: y[%d] = %v, generic gives %v", v, len(x), i, g, gen[i])
		}
	}
	if finite && len(x) > 0 && math.Abs(sum-1) > 1e-6 {
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
	for _, v := range dispatch.Tested() {
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
	}
}

func TestSoftmaxLong(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, v := range dispatch.Tested() {
		for _, n := range []int{32768, 131072 + 5} {
			for _, row := range softmaxRows[:4] {
				x := make([]float32, n)
				for i := range x {
					x[i] = row.gen(r, i)
				}
				checkSoftmax(t, v, x, 2)
			}
		}
	}
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
	for _, v := range dispatch.Tested() {
		for name, x := range cases {
			t.Run(v+"/"+name, func(t *testing.T) {
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
	}
	// A row of only −Inf is uniform, exactly 1/n.
	for _, v := range dispatch.Tested() {
		x := []float32{-inf, -inf, -inf}
		softmax.For(v)(x)
		for _, y := range x {
			if y != float32(1.0/3) {
				t.Fatalf("%s: all −Inf gives %v, want 1/3", v, x)
			}
		}
		softmax.For(v)(nil)
	}
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
		for _, v := range dispatch.Tested() {
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
		}
	}
}

func TestSoftmaxAllocs(t *testing.T) {
	defer Use(Active())
	x := make([]float32, 4099)
	for _, v := range dispatch.Tested() {
		if err := Use(v); err != nil {
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(10, func() { Softmax(x) }); a != 0 {
			t.Fatalf("%s: Softmax allocates %v times", v, a)
		}
	}
}

// TestSoftmaxPaths aims at the amd64 exponential's two paths: groups of vectors (four
// on AVX2, pairs on AVX-512) whose elements all lie in [−m, m] with 0 ≤ m ≤ 2¹² take
// Fast2Sum; one element below −m, a −Inf, or a max outside [0, 2¹²] sends the group (or
// the whole row) to the general path.
// Lengths cover whole iterations of four vectors, single vectors and the padded tail.
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
	for _, v := range dispatch.Tested() {
		for _, row := range rows {
			for _, n := range []int{1, 15, 16, 17, 31, 48, 63, 64, 65, 127, 128, 200, 1024 + 13} {
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
				t.Run(fmt.Sprintf("%s/%s/n=%d", v, row.name, n), func(t *testing.T) { checkSoftmax(t, v, x, n%3) })
			}
		}
	}
}

// TestSoftmaxMillion holds the bound at n = 2²⁰, where a float32 running sum would be
// far outside it (2¹⁴ terms per lane); the amd64 variants sum in float32 only four
// vectors at a time.
func TestSoftmaxMillion(t *testing.T) {
	if testing.Short() {
		t.Skip("2²⁰-element rows in short mode")
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, v := range dispatch.Tested() {
		for _, row := range softmaxRows[:3] {
			x := make([]float32, 1<<20)
			for i := range x {
				x[i] = row.gen(r, i)
			}
			checkSoftmax(t, v, x, 1)
		}
	}
}
