package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/x448/float16"
)

// scoresDims are the head dimensions tested: every length of the scalar tails, the
// fast paths and their neighbours, and the common head sizes.
var scoresDims = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 31, 32, 33, 64, 80, 96, 128, 256}

// checkScores runs every variant on one score block at a few offsets into padded
// inputs and a guarded dst, and checks every entry against the float64 reference and
// against generic.
func checkScores(t *testing.T, what string, q []float32, k []uint16, rows, n, dim int, scale float32) {
	t.Helper()
	varianttest.Each(t, scoresChecker(t, what, scores.For, q, k, rows, n, dim, scale))
}

type scoresFunc = func(dst, q []float32, k []uint16, rows, n, dim, stride int, scale float32)

// checkScoresOf is checkScores for the implementations impl(v) of the given variants,
// called side by side with the active variant unchanged: for the panel kernels that
// scores_amd64_test.go calls directly, which are a part of a variant, not one.
func checkScoresOf(t *testing.T, what string, variants []string, impl func(v string) scoresFunc,
	q []float32, k []uint16, rows, n, dim int, scale float32) {
	t.Helper()
	check := scoresChecker(t, what, impl, q, k, rows, n, dim, scale)
	for _, v := range variants {
		check(v)
	}
}

// scoresChecker returns the check of checkScores for variant v's implementation
// impl(v), the references computed once for all variants.
func scoresChecker(t *testing.T, what string, impl func(v string) scoresFunc,
	q []float32, k []uint16, rows, n, dim int, scale float32) func(v string) {
	generic := make([]float32, rows*n)
	scoresGeneric(generic, q, k, rows, n, dim, dim, scale)
	settleScores(generic, q, rowsF16{k, dim}, n, dim, scale, maxF16)
	want := make([]oracle.DotExpectation, rows*n)
	for i := range rows {
		for j := range n {
			want[i*n+j] = oracle.ExpectDot(dim, oracle.SingleAt(q[i*dim:(i+1)*dim]), oracle.HalfAt(k[j*dim:(j+1)*dim]), float64(scale))
		}
	}
	return func(v string) {
		t.Helper()
		for _, off := range []int{0, 3} {
			// At offset 3 the keys lie an odd stride apart with NaNs between them,
			// which no entry may read.
			stride, ks := dim, k
			if off != 0 {
				stride = dim + 3
				ks = spreadRows(k, n, dim, stride)
			}
			buf := make([]float32, rows*n+2*dotPad)
			for i := range buf {
				buf[i] = dotSentry
			}
			dst := buf[dotPad : dotPad+rows*n]
			impl(v)(dst, padF32(q, off), padF16(ks, 3-off), rows, n, dim, stride, scale)
			settleScores(dst, q, rowsF16{ks, stride}, n, dim, scale, maxF16) // as Scores does
			for i, x := range buf {
				if (i < dotPad || i >= dotPad+rows*n) && x != dotSentry {
					t.Fatalf("%s %s rows=%d n=%d dim=%d stride=%d: wrote %v at %d outside dst", v, what, rows, n, dim, stride, x, i-dotPad)
				}
			}
			for e, got := range dst {
				if err := want[e].CheckSettled(got); err != nil {
					t.Fatalf("%s %s rows=%d n=%d dim=%d stride=%d: dst[%d*n+%d]: %v", v, what, rows, n, dim, stride, e/n, e%n, err)
				}
				g := generic[e]
				if d := math.Abs(float64(got) - float64(g)); !(d <= 2*want[e].Bound) && !want[e].Overflowable &&
					!(math.IsNaN(float64(got)) && math.IsNaN(float64(g))) && got != g {
					t.Fatalf("%s %s rows=%d n=%d dim=%d stride=%d: dst[%d*n+%d] = %v, generic %v", v, what, rows, n, dim, stride, e/n, e%n, got, g)
				}
			}
		}
	}
}

func TestScoresShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	keyCounts := []int{1, 2, 3, 4, 5, 6, 7, 8, 13}
	for _, dim := range scoresDims {
		// Every row count for a dim with a scalar tail and for a fast path; else the
		// counts at each boundary of the row kernel's tiles. (Blocks this small never
		// reach the panel kernels; TestScoresPanels and TestScoresLarge cover those.)
		rowCounts := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 16, 17, 28, 31, 32, 33, 64}
		if dim == 9 || dim == 64 {
			rowCounts = rowCounts[:0]
			for rows := 1; rows <= 64; rows++ {
				rowCounts = append(rowCounts, rows)
			}
		}
		for _, rows := range rowCounts {
			for _, n := range keyCounts {
				q, k := randomF32(r, rows*dim), randomF16(r, n*dim)
				checkScores(t, "random", q, k, rows, n, dim, float32(r.NormFloat64()))
			}
		}
	}
}

func TestScoresLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	// Whole panels, panels and the row kernel for the rest, a partial last panel, the
	// row kernel alone, a dst whose rows are a power of two plus 16 floats apart, and a
	// dim too large for the kernels with a scratch of keys.
	for _, c := range []struct{ rows, n, dim int }{{32, 1031, 128}, {65, 517, 64}, {20, 130, 17}, {29, 200, 33}, {7, 300, 96}, {32, 4096 + 16, 128}, {5, 40, 520}} {
		q, k := randomF32(r, c.rows*c.dim), randomF16(r, c.n*c.dim)
		checkScores(t, "random", q, k, c.rows, c.n, c.dim, 1/float32(math.Sqrt(float64(c.dim))))
	}
}

// TestScoresKeyBlocks runs every key count up to a few key blocks of the kernels that
// widen keys a block at a time (16 on NEON; amd64 sends these shapes to its row kernel,
// TestScoresPanelsBlocks covers its panels), with every row count of a tile and its
// remainders, at dims with and without a tail after whole steps of four.
func TestScoresKeyBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 12))
	dims, rowCounts, maxKeys := []int{1, 3, 4, 6, 64, 128}, []int{1, 2, 3, 4, 5, 7, 9}, 50
	if testing.Short() {
		dims, rowCounts, maxKeys = []int{3, 64}, []int{3, 5}, 34
	}
	for _, dim := range dims {
		for _, rows := range rowCounts {
			for n := 1; n <= maxKeys; n++ {
				q, k := randomF32(r, rows*dim), randomF16(r, n*dim)
				checkScores(t, "random", q, k, rows, n, dim, 0.5)
			}
		}
	}
}

// scoresSpecials are the values TestScoresSpecial puts into one query row and one key.
var scoresSpecials = []struct {
	name string
	q, k float32
}{
	{"NaN query", float32(math.NaN()), 1},
	{"NaN key", 1, float32(math.NaN())},
	{"Inf query", float32(math.Inf(1)), 0.5},
	{"-Inf key", 2, float32(math.Inf(-1))},
	{"Inf·0", float32(math.Inf(1)), 0},
	{"overflow", 3e38, 4},
	{"overflow negative", 2e38, -60000},
	{"subnormal", 0x1p-140, 0x1p-24},
}

// eachScoresSpecial calls check with blocks of random values where one query row and
// one key row hold a special value at the same element: that row's and that column's
// entries must follow IEEE, and no other entry may change.
func eachScoresSpecial(r *rand.Rand, rowCounts []int, n int, check func(name string, q []float32, k []uint16, rows, dim int)) {
	for _, dim := range []int{1, 5, 8, 9, 17, 64, 128} {
		for _, s := range scoresSpecials {
			for _, rows := range rowCounts {
				for _, d := range []int{0, dim / 2, dim - 1} {
					q, k := randomF32(r, rows*dim), randomF16(r, n*dim)
					i, j := r.IntN(rows), r.IntN(n)
					q[i*dim+d], k[j*dim+d] = s.q, uint16(float16.Fromfloat32(s.k))
					check(s.name, q, k, rows, dim)
				}
			}
		}
	}
}

func TestScoresSpecial(t *testing.T) {
	const n = 5
	eachScoresSpecial(rand.New(rand.NewPCG(6, 6)), []int{1, 3, 4, 6}, n, func(name string, q []float32, k []uint16, rows, dim int) {
		checkScores(t, name, q, k, rows, n, dim, 0.25)
	})
}

func TestScoresPanics(t *testing.T) {
	for _, c := range []struct {
		dst, q, k, rows, n, dim int
	}{
		{0, 0, 0, 0, 0, 0},   // dim 0
		{0, 0, 0, -1, 0, 4},  // negative rows
		{0, 0, 0, 0, -1, 4},  // negative n
		{6, 8, 12, 2, 3, 4},  // the valid shape: dst 2·3, q 2·4, k 3·4
		{5, 8, 12, 2, 3, 4},  // dst short
		{6, 9, 12, 2, 3, 4},  // q long
		{6, 8, 11, 2, 3, 4},  // k short
		{7, 8, 12, 2, 3, 4},  // dst long
		{0, 0, 12, 0, 3, 4},  // rows 0 with keys is fine
		{0, 8, 12, 2, 3, 4},  // but not with an empty dst
		{2, 8, 12, 1, 3, 4},  // q for two rows, one row declared
		{6, 8, 12, 2, 3, 5},  // wrong dim
		{6, 8, 12, 2, 3, -4}, // negative dim
	} {
		fine := c.dim >= 1 && c.rows >= 0 && c.n >= 0 && c.dst == c.rows*c.n && c.q == c.rows*c.dim && c.k == c.n*c.dim
		panicked := func() (p bool) {
			defer func() { p = recover() != nil }()
			Scores(make([]float32, c.dst), make([]float32, c.q), make([]Float16, c.k), c.rows, c.n, c.dim, 1)
			return false
		}()
		if panicked == fine {
			t.Errorf("Scores(len(dst)=%d, len(q)=%d, len(k)=%d, rows=%d, n=%d, dim=%d): panicked = %v",
				c.dst, c.q, c.k, c.rows, c.n, c.dim, panicked)
		}
	}
}

func TestScoresExported(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	const rows, n, dim = 5, 19, 64
	q, k := randomF32(r, rows*dim), randomF16(r, n*dim)
	kh := toHalves(k)
	got, want := make([]float32, rows*n), make([]float32, rows*n)
	varianttest.Each(t, func(v string) {
		Scores(got, q, kh, rows, n, dim, 0.125)
		scores.For(v)(want, q, k, rows, n, dim, dim, 0.125)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: Scores[%d] = %v, its implementation gives %v", v, i, got[i], want[i])
			}
		}
		if allocs := testing.AllocsPerRun(10, func() { Scores(got, q, kh, rows, n, dim, 0.125) }); allocs != 0 {
			t.Errorf("%s: Scores allocates %v times", v, allocs)
		}
	})
}

func ExampleScores() {
	q := []float32{1, 2, 3, 4} // two query rows of dim 2
	k := []Float16{float16.Fromfloat32(1), float16.Fromfloat32(0), float16.Fromfloat32(0.5), float16.Fromfloat32(-1)}
	dst := make([]float32, 4)
	Scores(dst, q, k, 2, 2, 2, 0.5)
	fmt.Println(dst)
	// Output: [0.5 -0.75 1.5 -1.25]
}

// TestScoresCannotOverflow holds the settling shortcut to its bound: with one query
// row of equal entries and keys of fp16's largest value, the entry equals the bound
// ‖q‖·√dim·65504·|scale| exactly, so the shortcut must hold just below 2¹²⁵ (where the
// entry is finite on every variant) and decline just above it, and for NaN or Inf
// queries. Then, with small queries, keys holding ±Inf and NaN (which the shortcut
// leaves unsettled) must give the float64 answer on every variant.
func TestScoresCannotOverflow(t *testing.T) {
	const dim = 64
	for _, c := range []struct {
		log2Bound float64
		want      bool
	}{{124.99, true}, {125.01, false}} {
		q := make([]float32, dim)
		for d := range q {
			q[d] = 1
		}
		// ‖q‖·√dim·65504 = dim·65504; scale brings the bound to 2^log2Bound.
		scale := float32(math.Exp2(c.log2Bound) / (dim * 65504))
		if got := scoresCannotOverflow(q, dim, scale, maxF16); got != c.want {
			t.Fatalf("bound 2^%v: scoresCannotOverflow = %v, want %v", c.log2Bound, got, c.want)
		}
		k := toHalves(halvesOf(slices.Repeat([]float32{65504}, dim)))
		varianttest.Each(t, func(v string) {
			dst := make([]float32, 1)
			Scores(dst, q, k, 1, 1, dim, scale)
			if c.want && (math.IsInf(float64(dst[0]), 0) || dst[0] != dst[0]) {
				t.Fatalf("%s: entry at bound 2^%v = %v, not finite", v, c.log2Bound, dst[0])
			}
		})
	}
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		if scoresCannotOverflow([]float32{1, bad, 2}, 3, 1, maxF16) {
			t.Fatalf("scoresCannotOverflow accepts a query holding %v", bad)
		}
	}
	r := rand.New(rand.NewPCG(31, 32))
	const rows, n = 5, 150
	q, k := randomF32(r, rows*dim), randomF32(r, n*dim)
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for j := 0; j < n; j += 4 {
		k[j*dim+j%dim] = []float32{inf, -inf, nan}[j%3]
		if j%8 == 0 {
			k[j*dim+(j+5)%dim] = -inf // Infs of both signs in one key
		}
	}
	q[2*dim] = 0 // 0·Inf in row 2 where a key holds Inf in column 0
	if !scoresCannotOverflow(q, dim, 0.125, maxF16) {
		t.Fatal("scoresCannotOverflow declines small random queries")
	}
	k16 := halvesOf(k)
	kh := toHalves(k16)
	dst := make([]float32, rows*n)
	varianttest.Each(t, func(v string) {
		Scores(dst, q, kh, rows, n, dim, 0.125)
		for e, got := range dst {
			i, j := e/n, e%n
			want := oracle.ExpectDot(dim, oracle.SingleAt(q[i*dim:(i+1)*dim]), oracle.HalfAt(k16[j*dim:(j+1)*dim]), 0.125)
			if err := want.CheckSettled(got); err != nil {
				t.Fatalf("%s: dst[%d*n+%d]: %v", v, i, j, err)
			}
		}
	})
}

// TestScoresAhead holds the kernels that prefetch a second stream (scoresAhead, the
// fused attention's) to Scores' bits on every variant and format: the stream to
// prefetch, given or nil, changes no score. Shapes cover the row kernels' tiles and
// their tails, where the prefetching happens, and the panel kernels, which ignore it.
func TestScoresAhead(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 31))
	rowCounts, keyCounts := []int{1, 2, 3, 4, 5, 8, 13, 32}, []int{1, 3, 4, 5, 8, 9, 130}
	dims := []int{1, 7, 16, 17, 32, 64, 128}
	if testing.Short() {
		rowCounts, keyCounts, dims = []int{1, 4, 5, 13}, []int{1, 5, 130}, []int{7, 32, 128}
	}
	bits := func(x []float32) []uint32 {
		b := make([]uint32, len(x))
		for i, f := range x {
			b[i] = math.Float32bits(f)
		}
		return b
	}
	for _, v := range dispatch.Tested() {
		for _, dim := range dims {
			for _, rows := range rowCounts {
				for _, n := range keyCounts {
					stride := dim + r.IntN(2)*3
					q := randomF32(r, rows*dim)
					scale := float32(r.NormFloat64())
					name := fmt.Sprintf("%s rows %d n %d dim %d stride %d", v, rows, n, dim, stride)
					span := (n-1)*stride + dim
					h, ahead := randomF16(r, span), randomF16(r, span)
					for _, format := range []string{"fp16", "bf16"} {
						plain, prefetching := scores.For(v), scoresAhead.For(v)
						if format == "bf16" { // the same bits read as bfloat16s
							plain, prefetching = scoresBF16.For(v), scoresAheadBF16.For(v)
						}
						want, got := make([]float32, rows*n), make([]float32, rows*n)
						plain(want, q, h, rows, n, dim, stride, scale)
						for _, a := range [][]uint16{ahead, nil} {
							prefetching(got, q, h, a, rows, n, dim, stride, scale)
							if !slices.Equal(bits(got), bits(want)) {
								t.Fatalf("%s %s, ahead %t: scores differ from Scores'", format, name, a != nil)
							}
						}
					}
					if dim%32 != 0 {
						continue
					}
					bs := dim/32 + r.IntN(2) // blocks
					blocks := func() []byte {
						b := make([]byte, ((n-1)*bs+dim/32)*q8BlockSize)
						for i := range b {
							b[i] = byte(r.Uint32())
						}
						return b
					}
					k8, ahead8 := blocks(), blocks()
					want, got := make([]float32, rows*n), make([]float32, rows*n)
					scoresQ8.For(v)(want, q, k8, rows, n, dim, bs, scale)
					for _, a := range [][]byte{ahead8, nil} {
						scoresAheadQ8.For(v)(got, q, k8, a, rows, n, dim, bs, scale)
						if !slices.Equal(bits(got), bits(want)) {
							t.Fatalf("q8_0 %s, blocks %d apart, ahead %t: scores differ from Scores'", name, bs, a != nil)
						}
					}
				}
			}
		}
	}
}
