package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/internal/varianttest"
)

// checkAddSoftmax runs variant v's AddSoftmax on guarded copies of d and x, d at offset
// dOff and x at offset xOff past a 64-byte boundary, and checks it against its
// contract, Softmax followed by Add on the same variant and the same addresses mod 64
// bytes, bit for bit, and against the
// float64 softmax: each output within Softmax's bound plus the add's rounding.
func checkAddSoftmax(t *testing.T, v string, d, x []float32, dOff, xOff int) {
	t.Helper()
	got, dstIntact := guarded(t, d, dOff)
	scratch, xIntact := guarded(t, x, xOff)
	addSoftmax.For(v)(got, scratch)
	dstIntact()
	xIntact()

	// At x's offset, though Softmax's bits do not depend on it (TestSoftmaxAnywhere).
	y, _ := guarded(t, x, xOff)
	softmax.For(v)(y)
	want, _ := guarded(t, d, dOff)
	add.For(v)(want, y)
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s n=%d: dst[%d] = %v (%#08x), Softmax then Add give %v (%#08x) (dst was %v, x[%d] = %v)",
				v, len(x), i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]), d[i], i, x[i])
		}
	}

	p, masks := oracle.Softmax(x)
	for i, w := range p {
		g, di := float64(got[i]), float64(d[i])
		exact := di + w
		switch {
		case math.IsNaN(exact):
			if !math.IsNaN(g) {
				t.Fatalf("%s n=%d: dst[%d] = %v, want NaN (dst was %v, x[%d] = %v)", v, len(x), i, g, di, i, x[i])
			}
		case math.IsInf(di, 0) || masks && math.IsInf(float64(x[i]), -1):
			if g != di {
				t.Fatalf("%s n=%d: dst[%d] = %v, want it unchanged, %v (x[%d] = %v)", v, len(x), i, g, di, i, x[i])
			}
		case !(math.Abs(g-exact) <= softmaxBound(w)+0x1p-24*math.Abs(exact)+0x1p-150):
			t.Fatalf("%s n=%d: dst[%d] = %v, float64 gives %v: error %.3g (dst was %v, x[%d] = %v)",
				v, len(x), i, g, exact, math.Abs(g-exact), di, i, x[i])
		}
	}
}

// addSoftmaxDsts are the vote rows AddSoftmax adds into.
var addSoftmaxDsts = []struct {
	name string
	gen  func(r *rand.Rand) float32
}{
	{"zero", func(*rand.Rand) float32 { return 0 }},
	{"votes", func(r *rand.Rand) float32 { return float32(8 * r.Float64()) }},
	{"signed", func(r *rand.Rand) float32 { return float32(r.NormFloat64()) }},
	{"tiny", func(r *rand.Rand) float32 { return float32(r.NormFloat64() * 1e-30) }},
}

func randomRow(r *rand.Rand, n int, gen func(r *rand.Rand, i int) float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = gen(r, i)
	}
	return x
}

func randomDst(r *rand.Rand, n int, gen func(r *rand.Rand) float32) []float32 {
	d := make([]float32, n)
	for i := range d {
		d[i] = gen(r)
	}
	return d
}

// TestAddSoftmaxLengths tries every length up to 70 and a few long ones with every
// input distribution of the Softmax tests, dst and x each at offsets 0–3 from a
// 64-byte boundary (so the avx2 and avx512 variants' heads before dst's vector
// boundary and their tails are all taken).
func TestAddSoftmaxLengths(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	varianttest.Each(t, func(v string) {
		for _, row := range softmaxRows {
			for n := 0; n <= 70; n++ {
				x := randomRow(r, n, row.gen)
				if row.name == "far" && n > 0 {
					x[r.IntN(n)] = 0
				}
				dst := addSoftmaxDsts[n%len(addSoftmaxDsts)]
				checkAddSoftmax(t, v, randomDst(r, n, dst.gen), x, n%4, n/4%4)
			}
			for _, n := range []int{255, 1024 + 7, 4099, 1<<16 + 3} {
				x := randomRow(r, n, row.gen)
				if row.name == "far" {
					x[r.IntN(n)] = 0
				}
				checkAddSoftmax(t, v, randomDst(r, n, addSoftmaxDsts[1].gen), x, n%4, 3-n%4)
			}
		}
	})
}

// TestAddSoftmaxAlignments takes dst and x at every pair of offsets within a vector of
// AVX-512 (dst's decides the asm's start, x's how its loads fall).
func TestAddSoftmaxAlignments(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	varianttest.Each(t, func(v string) {
		for dOff := range 16 {
			for xOff := range 4 {
				for _, n := range []int{1, 7, 16, 17, 33, 64 + 5, 200} {
					for _, row := range softmaxRows[:4] {
						dst := addSoftmaxDsts[(dOff+n)%len(addSoftmaxDsts)]
						checkAddSoftmax(t, v, randomDst(r, n, dst.gen), randomRow(r, n, row.gen), dOff, xOff)
					}
				}
			}
		}
	})
}

// TestAddSoftmaxSpecial runs Softmax's special rows, and rows whose dst already holds
// NaNs, infinities, ±MaxFloat32, signed zeros and subnormals: every output must be
// Softmax then Add's.
func TestAddSoftmaxSpecial(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	sub := float32(math.SmallestNonzeroFloat32)
	negZero := float32(math.Copysign(0, -1)) // the constant -0.0 is +0 in Go
	rows := map[string][]float32{
		"one":          {3},
		"one −Inf":     {-inf},
		"all −Inf":     {-inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf},
		"−Inf and one": {-inf, -inf, 2, -inf, -inf, -inf, -inf, -inf, -inf, -inf},
		"−Inf masks":   {-inf, 1, -inf, 2, 3, -inf, 4, 5, -inf, 6, 7, -inf, 8, 9, -inf, 10, 11, -inf},
		"NaN first":    {nan, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
		"NaN last":     {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, nan},
		"NaN −Inf":     {-inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, nan},
		"+Inf":         {1, inf, 2, 3, 4, 5, 6, 7, 8},
		"+Inf −Inf":    {inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf},
		"±1e38":        {1e38, -1e38, 1e38, -1e38, 0, 1e38, -1e38, 1e38, -1e38, 5},
		"±MaxFloat32":  {math.MaxFloat32, -math.MaxFloat32, 0, -math.MaxFloat32, -math.MaxFloat32, 1, 2, 3, math.MaxFloat32},
		"−MaxFloat32 and −Inf": {-math.MaxFloat32, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf,
			-math.MaxFloat32},
		"subnormals": {sub, -sub, 0x1p-127, -0x1p-140, 0, sub, 3 * sub, -0x1p-126, sub, sub, -sub, 0x1p-149, 0x1.8p-130,
			sub, 0, negZero, sub},
		"equal": {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7},
		"far":   {0, -103.5, -104, -104.5, -110, -200, -1e30, -103, -102.9, -50, 0, -104.001, -103.999, -3, -2, -1, 0},
	}
	dstValues := []float32{nan, -nan, inf, -inf, math.MaxFloat32, -math.MaxFloat32, 0, negZero,
		sub, -sub, 0x1p-126, 1, -1, 0x1p24, -0.5, 1e-8,
		math.Float32frombits(0x7f800001), math.Float32frombits(0xffc12345)} // signalling and payloaded NaNs
	r := rand.New(rand.NewPCG(25, 26))
	varianttest.Run(t, func(t *testing.T, v string) {
		for name, x := range rows {
			t.Run(name, func(t *testing.T) {
				for k := range 4 {
					d := make([]float32, len(x))
					for i := range d {
						switch k {
						case 0:
							d[i] = 0
						case 1:
							d[i] = dstValues[i%len(dstValues)]
						case 2:
							d[i] = dstValues[(i+7)%len(dstValues)]
						default:
							d[i] = dstValues[r.IntN(len(dstValues))]
						}
					}
					checkAddSoftmax(t, v, d, x, k, 3-k)
				}
			})
		}
		// A row of only −Inf adds exactly 1/n.
		x, d := []float32{float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1))}, []float32{1, 2, 0}
		addSoftmax.For(v)(d, x)
		if d[0] != 1+float32(1.0/3) || d[1] != 2+float32(1.0/3) || d[2] != float32(1.0/3) {
			t.Fatalf("all −Inf adds %v to 1, 2, 0, want 1/3", d)
		}
		addSoftmax.For(v)(nil, nil)
		addSoftmax.For(v)([]float32{}, nil)
	})
}

// TestAddSoftmaxNaNAnywhere puts one NaN at every position of rows that take each path
// of the exponentials: every output becomes NaN, whatever dst held.
func TestAddSoftmaxNaNAnywhere(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	nans := []uint32{0x7fc00000, 0xffc00000, 0x7f800001, 0xff812345, 0x7fffffff}
	varianttest.Each(t, func(v string) {
		for _, row := range []int{0, 2, 3} { // normal, wide, masked
			for _, n := range []int{1, 2, 15, 16, 17, 40, 70} {
				for pos := range n {
					x := randomRow(r, n, softmaxRows[row].gen)
					x[pos] = math.Float32frombits(nans[(pos+n)%len(nans)])
					checkAddSoftmax(t, v, randomDst(r, n, addSoftmaxDsts[2].gen), x, pos%4, (pos+row)%4)
				}
			}
		}
	})
}

// TestAddSoftmaxPaths runs TestSoftmaxPaths' rows (each path of the SIMD exponentials)
// through AddSoftmax.
func TestAddSoftmaxPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	rows := []struct{ max, lo, odd float32 }{
		{7.5, -7.5, 0}, {7.5, -7.5, -7.5001}, {3, -3, float32(math.Inf(-1))}, {0, -0.5, 0},
		{0x1p12, -0x1p12, 0}, {0x1p12, 0x1p12 - 200, -0x1p12}, {0x1.000002p12, 0x1p12 - 50, 0},
		{-3, -40, 0}, {1e-30, -1e-30, 0},
	}
	varianttest.Each(t, func(v string) {
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
				checkAddSoftmax(t, v, randomDst(r, n, addSoftmaxDsts[n%4].gen), x, n%4, (n/2)%4)
			}
		}
	})
}

// TestAddSoftmaxVotes adds the softmax of many rows into one vote row, as SnapKV's
// window does, and holds the sum to Softmax then Add's bits after every row.
func TestAddSoftmaxVotes(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	varianttest.Each(t, func(v string) {
		const n = 1000
		votes, want := make([]float32, n), make([]float32, n)
		for w := range 32 {
			x, _ := guarded(t, randomRow(r, n, softmaxRows[w%4].gen), w%4)
			y, _ := guarded(t, x, w%4)
			addSoftmax.For(v)(votes, x)
			softmax.For(v)(y)
			add.For(v)(want, y)
			for i := range votes {
				if math.Float32bits(votes[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s: after row %d votes[%d] = %v, Softmax then Add give %v", v, w, i, votes[i], want[i])
				}
			}
		}
	})
}

func TestAddSoftmaxPanics(t *testing.T) {
	for _, c := range []struct{ dst, x int }{{3, 4}, {4, 3}, {0, 1}, {1, 0}} {
		t.Run(fmt.Sprintf("%d,%d", c.dst, c.x), func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatalf("AddSoftmax with len(dst) = %d, len(x) = %d did not panic", c.dst, c.x)
				}
			}()
			AddSoftmax(make([]float32, c.dst), make([]float32, c.x))
		})
	}
}

func TestAddSoftmaxAllocs(t *testing.T) {
	dst, x := make([]float32, 4099), make([]float32, 4099)
	varianttest.Each(t, func(v string) {
		if a := testing.AllocsPerRun(10, func() { AddSoftmax(dst, x) }); a != 0 {
			t.Fatalf("%s: AddSoftmax allocates %v times", v, a)
		}
	})
}

// TestSoftmaxAnywhere holds Softmax and AddSoftmax to the same bits wherever their rows
// lie: x at each of the 16 offsets within an AVX-512 vector from a 64-byte boundary,
// dst at another, give the bits of offset 0 on every variant, for every input
// distribution. (The vector sums of the exponentials once started at x's first vector
// boundary, and an output moved by 1 ulp with the row's address.)
func TestSoftmaxAnywhere(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	lengths := []int{1, 15, 16, 17, 31, 65, 129, 200, 1000, 4099}
	if testing.Short() {
		lengths = []int{17, 65, 1000}
	}
	bits := func(x []float32) []uint32 {
		b := make([]uint32, len(x))
		for i, f := range x {
			b[i] = math.Float32bits(f)
		}
		return b
	}
	varianttest.Each(t, func(v string) {
		for _, row := range softmaxRows {
			for _, n := range lengths {
				x := randomRow(r, n, row.gen)
				d := randomDst(r, n, addSoftmaxDsts[1].gen)
				var wantSoftmax, wantAdd []uint32
				for off := range 16 {
					y, _ := guarded(t, x, off)
					softmax.For(v)(y)
					scratch, _ := guarded(t, x, off)
					got, _ := guarded(t, d, (off*7+3)%16)
					addSoftmax.For(v)(got, scratch)
					if off == 0 {
						wantSoftmax, wantAdd = bits(y), bits(got)
						continue
					}
					if !slices.Equal(bits(y), wantSoftmax) {
						t.Fatalf("%s %s n=%d: Softmax at offset %d differs from offset 0", v, row.name, n, off)
					}
					if !slices.Equal(bits(got), wantAdd) {
						t.Fatalf("%s %s n=%d: AddSoftmax with x at offset %d differs from offset 0", v, row.name, n, off)
					}
				}
			}
		}
	})
}
