package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/internal/longtest"
	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/kvsimd/kvsimd/q8"
)

// The causal attention is tested per format on every variant: each row against the
// float64 reference over its visible keys (the doc's bound), against the composition
// on the same variant for special values, the strided and whole-layer forms against
// the contiguous bits, calls split at multiples of CausalTile against the whole
// call's bits, and for panics and allocations.

// causalKind is one format's causal kernels beside its decode ones.
type causalKind[E comparable] struct {
	*attendKind[E]
	causal        func(out, q []float32, k, v []E, rows, m, n, dim int, scale float32)
	causalStrided func(out, q []float32, k, v []E, rows, m, n, dim, qStride, kvStride int, scale float32)
	causalHeads   func(out, q []float32, k, v []E, heads, rows, m, n, dim int, scale float32)
}

var (
	fp16Causal = &causalKind[Float16]{fp16Attend, AttendCausal, AttendCausalStrided, AttendCausalHeads}
	bf16Causal = &causalKind[bf16.BFloat16]{bf16Attend, AttendCausalBF16, AttendCausalStridedBF16, AttendCausalHeadsBF16}
	q8Causal   = &causalKind[q8.Block]{q8Attend, AttendCausalQ8, AttendCausalStridedQ8, AttendCausalHeadsQ8}
	f32Causal  = &causalKind[float32]{f32Attend, AttendCausalF32, AttendCausalStridedF32, AttendCausalHeadsF32}
)

// causalInput is one call's operands: q [rows][m][dim], k and v [n][dim] packed.
type causalInput[E comparable] struct {
	q          []float32
	k, v       []E
	rows, m, n int
	dim        int
	scale      float32
	shape      string
}

func (in causalInput[E]) String() string {
	return fmt.Sprintf("%s rows=%d m=%d n=%d dim=%d scale=%v", in.shape, in.rows, in.m, in.n, in.dim, in.scale)
}

// row is query row g of position i's decode input: its visible keys and values.
func (in causalInput[E]) row(f *causalKind[E], g, i int) attendInput[E] {
	p := in.n - in.m + i
	return attendInput[E]{q: in.q[(g*in.m+i)*in.dim:][:in.dim], k: in.k[:(p+1)*in.dim/f.per], v: in.v[:(p+1)*in.dim/f.per],
		rows: 1, n: p + 1, dim: in.dim, stride: in.dim, scale: in.scale, shape: in.shape}
}

// reference is the float64 expectation of every row, [rows][m], with the doc's E:
// Attend's plus 4u, and (p+1)·u more for q8_0.
func (f *causalKind[E]) reference(in causalInput[E]) []oracle.AttendRow {
	want := make([]oracle.AttendRow, in.rows*in.m)
	for g := range in.rows {
		for i := range in.m {
			row := in.row(f, g, i)
			extra := 4 * 0x1p-24
			if f.per > 1 {
				extra += float64(row.n) * 0x1p-24
			}
			want[g*in.m+i] = f.attendKind.reference(row, extra)[0]
		}
	}
	return want
}

// compose is the doc's loop on the active variant.
func (f *causalKind[E]) compose(out []float32, in causalInput[E]) {
	for g := range in.rows {
		for i := range in.m {
			r := (g*in.m + i) * in.dim
			f.attendKind.compose(out[r:r+in.dim], in.row(f, g, i))
		}
	}
}

// input draws rows·m query rows and n keys of shape s and n random values.
func (f *causalKind[E]) input(r *rand.Rand, s, rows, m, n, dim int) causalInput[E] {
	q, k := make([]float32, rows*m*dim), make([]float32, n*dim)
	scale := attendShapes[s].fill(r, q, k, rows*m, n, dim)
	return causalInput[E]{q: q, k: f.fromFloats(k), v: f.random(r, n*dim), rows: rows, m: m, n: n, dim: dim,
		scale: scale, shape: attendShapes[s].name}
}

// tokenMajor lays q [rows][m][dim] out as [m] positions qStride apart, NaN between.
func tokenMajor(q []float32, rows, m, dim, qStride int) []float32 {
	t := make([]float32, max(0, (m-1)*qStride+rows*dim))
	for i := range t {
		t[i] = nan32
	}
	for g := range rows {
		for i := range m {
			copy(t[i*qStride+g*dim:][:dim], q[(g*m+i)*dim:][:dim])
		}
	}
	return t
}

// causalShapes are (rows, m, n) the bound test runs: whole prompts and later chunks
// around the tiles (64 rows: 16 positions of 4 rows) and the blocks of 256 keys.
var causalShapes = [][3]int{
	{1, 0, 0}, {4, 0, 5}, {1, 1, 1}, {4, 1, 1}, {4, 3, 3}, {4, 16, 16}, {4, 17, 17}, {4, 15, 40},
	{1, 70, 70}, {2, 33, 100}, {3, 21, 21}, {5, 13, 29}, {8, 9, 300}, {4, 40, 257}, {4, 64, 300},
	{4, 300, 300}, {1, 260, 520}, {6, 11, 700}, {7, 40, 40}, {4, 100, 1100},
}

func TestAttendCausalBound(t *testing.T) {
	t.Run("fp16", func(t *testing.T) { testCausalBound(t, fp16Causal) })
	t.Run("bf16", func(t *testing.T) { testCausalBound(t, bf16Causal) })
	t.Run("q8_0", func(t *testing.T) { testCausalBound(t, q8Causal) })
	t.Run("f32", func(t *testing.T) { testCausalBound(t, f32Causal) })
}

func testCausalBound[E comparable](t *testing.T, f *causalKind[E]) {
	r := rand.New(rand.NewPCG(41, uint64(f.per)))
	// The tiles' panels and row kernels at the dims with kernels of their own (64, 128),
	// others and tails; Scores' and the decode attention's tests take every dim.
	dims, shapes, budget := []int{1, 7, 17, 64, 100, 128}, causalShapes, 1<<21
	if f.per > 1 {
		dims = []int{32, 64, 128}
	}
	if longtest.Short() {
		dims = dims[len(dims)-2:]
		shapes, budget = [][3]int{{1, 0, 0}, {4, 17, 17}, {3, 21, 40}, {4, 40, 300}}, 1<<20
	}
	c := 0
	for _, dim := range dims {
		for _, sh := range shapes {
			rows, m, n := sh[0], sh[1], sh[2]
			// The float64 reference costs rows·m·n·dim: the largest shapes at small dims.
			if rows*m*n*dim > budget && dim > 8 {
				continue
			}
			in := f.input(r, c%len(attendShapes), rows, m, n, dim)
			c++
			checkCausalBound(t, f, r, in)
		}
	}
}

// checkCausalBound runs every variant on in from unaligned NaN-padded inputs into a
// guarded NaN-filled out, holds each output to the float64 bound, the token-major
// strided call and the whole-layer call to the contiguous bits, and the inputs to
// being left as they were.
func checkCausalBound[E comparable](t *testing.T, f *causalKind[E], r *rand.Rand, in causalInput[E]) {
	t.Helper()
	rows, m, n, dim := in.rows, in.m, in.n, in.dim
	want := f.reference(in)
	kvStride := dim + f.per*(1+r.IntN(dim/f.per+2))
	qStride := rows*dim + r.IntN(9)
	q := padF32(in.q, 1+r.IntN(15))
	k, v := f.pad(in.k, 1+r.IntN(15)), f.pad(in.v, 1+r.IntN(15))
	sk := f.pad(f.spread(in.k, n, dim, kvStride), 1+r.IntN(15))
	sv := f.pad(f.spread(in.v, n, dim, kvStride), 1+r.IntN(15))
	tq := tokenMajor(in.q, rows, m, dim, qStride)
	saved := [][]E{slices.Clone(k), slices.Clone(v), slices.Clone(sk), slices.Clone(sv)}
	nans := make([]float32, rows*m*dim)
	for i := range nans {
		nans[i] = nan32
	}
	tnans := make([]float32, len(tq))
	for i := range tnans {
		tnans[i] = nan32
	}
	outOff := r.IntN(16)
	varianttest.Each(t, func(variant string) {
		t.Helper()
		out, intact := guarded(t, nans, outOff)
		f.causal(out, q, k, v, rows, m, n, dim, in.scale)
		intact()
		for e, got := range out {
			if err := want[e/dim].Check(e%dim, got); err != nil {
				t.Fatalf("%s %s %v: row %d (g %d, i %d), out[%d]: %v", variant, f.name, in, e/dim, e/dim/max(m, 1), e/dim%max(m, 1), e%dim, err)
			}
		}
		tout := slices.Clone(tnans)
		f.causalStrided(tout, tq, sk, sv, rows, m, n, dim, qStride, kvStride, in.scale)
		for g := range rows {
			for i := range m {
				for d := range dim {
					a, b := tout[i*qStride+g*dim+d], out[(g*m+i)*dim+d]
					if !sameFloatBits(a, b) {
						t.Fatalf("%s %s %v: strided (qStride %d, kvStride %d): g %d, i %d, d %d: %v, contiguous gives %v",
							variant, f.name, in, qStride, kvStride, g, i, d, a, b)
					}
				}
			}
		}
		for e := len(tq) - 1; e >= 0 && m > 0; e-- { // the gaps between token-major rows
			if inRow := e%qStride < rows*dim; !inRow && tout[e] == tout[e] {
				t.Fatalf("%s %s %v: strided call wrote out[%d] between rows", variant, f.name, in, e)
			}
		}
	})
	for i := range q {
		if math.Float32bits(q[i]) != math.Float32bits(in.q[i]) {
			t.Fatalf("%s %v: q[%d] changed to %v", f.name, in, i, q[i])
		}
	}
	for x, now := range [][]E{k, v, sk, sv} {
		if !sameElems(now, saved[x]) {
			t.Fatalf("%s %v: input %d (k, v, strided k, strided v) changed", f.name, in, x)
		}
	}
}

// TestAttendCausalHeads: the whole-layer form is the loop of strided calls its doc
// gives, bit for bit.
func TestAttendCausalHeads(t *testing.T) {
	t.Run("fp16", func(t *testing.T) { testCausalHeads(t, fp16Causal) })
	t.Run("bf16", func(t *testing.T) { testCausalHeads(t, bf16Causal) })
	t.Run("q8_0", func(t *testing.T) { testCausalHeads(t, q8Causal) })
	t.Run("f32", func(t *testing.T) { testCausalHeads(t, f32Causal) })
}

func testCausalHeads[E comparable](t *testing.T, f *causalKind[E]) {
	r := rand.New(rand.NewPCG(42, uint64(f.per)))
	for _, sh := range [][4]int{{3, 4, 20, 40}, {2, 1, 70, 70}, {1, 5, 9, 9}, {4, 2, 0, 3}, {2, 4, 33, 300}} {
		heads, rows, m, n := sh[0], sh[1], sh[2], sh[3]
		dim := 64
		q := make([]float32, m*heads*rows*dim)
		normals(r, q, 1)
		kf := make([]float32, n*heads*dim)
		normals(r, kf, 1)
		k, v := f.fromFloats(kf), f.random(r, n*heads*dim)
		scale := float32(0.125)
		varianttest.Each(t, func(variant string) {
			got, want := make([]float32, len(q)), make([]float32, len(q))
			f.causalHeads(got, q, k, v, heads, rows, m, n, dim, scale)
			qs, kvs := heads*rows*dim, heads*dim
			for h := 0; h < heads && m > 0; h++ {
				g, kh := h*rows*dim, h*dim/f.per
				qe, ke := g+(m-1)*qs+rows*dim, kh+((n-1)*kvs+dim)/f.per
				f.causalStrided(want[g:qe], q[g:qe], k[kh:ke], v[kh:ke], rows, m, n, dim, qs, kvs, scale)
			}
			for e := range got {
				if !sameFloatBits(got[e], want[e]) {
					t.Fatalf("%s %s heads %d rows %d m %d n %d: out[%d] = %v, the loop gives %v", variant, f.name, heads, rows, m, n, e, got[e], want[e])
				}
			}
		})
	}
}

// TestAttendCausalSplits: calls over the queries split at multiples of CausalTile,
// each over the keys up to its last query, give the whole call's bits (snapkv's
// PrefillAttend splits so).
func TestAttendCausalSplits(t *testing.T) {
	t.Run("fp16", func(t *testing.T) { testCausalSplits(t, fp16Causal) })
	t.Run("q8_0", func(t *testing.T) { testCausalSplits(t, q8Causal) })
	t.Run("f32", func(t *testing.T) { testCausalSplits(t, f32Causal) })
}

func testCausalSplits[E comparable](t *testing.T, f *causalKind[E]) {
	r := rand.New(rand.NewPCG(43, uint64(f.per)))
	for _, sh := range [][3]int{{4, 100, 300}, {1, 200, 200}, {3, 50, 61}, {8, 40, 40}} {
		rows, m, n := sh[0], sh[1], sh[2]
		in := f.input(r, 0, rows, m, n, 64)
		tile := CausalTile(rows)
		varianttest.Each(t, func(variant string) {
			whole := make([]float32, len(in.q))
			f.causal(whole, in.q, in.k, in.v, rows, m, n, in.dim, in.scale)
			first := n - m
			for a := first; a < n; {
				b := min(n, (a/tile+1+r.IntN(3))*tile) // a multiple of the tile, or n
				part := b - a
				pq, po := make([]float32, rows*part*in.dim), make([]float32, rows*part*in.dim)
				for g := range rows {
					copy(pq[g*part*in.dim:][:part*in.dim], in.q[(g*m+a-first)*in.dim:][:part*in.dim])
				}
				f.causal(po, pq, in.k[:b*in.dim/f.per], in.v[:b*in.dim/f.per], rows, part, b, in.dim, in.scale)
				for g := range rows {
					for e := range part * in.dim {
						x, y := po[g*part*in.dim+e], whole[(g*m+a-first)*in.dim+e]
						if !sameFloatBits(x, y) {
							t.Fatalf("%s %s %v: queries %d…%d: g %d, out[%d] = %v, the whole call gives %v", variant, f.name, in, a, b-1, g, e, x, y)
						}
					}
				}
				a = b
			}
		})
	}
}

func TestAttendCausalSpecial(t *testing.T) {
	t.Run("fp16", func(t *testing.T) { testCausalSpecial(t, fp16Causal) })
	t.Run("bf16", func(t *testing.T) { testCausalSpecial(t, bf16Causal) })
	t.Run("q8_0", func(t *testing.T) { testCausalSpecial(t, q8Causal) })
	t.Run("f32", func(t *testing.T) { testCausalSpecial(t, f32Causal) })
}

// testCausalSpecial holds every variant to the composition on the same variant, as
// checkAttendSpecial does for Attend: NaN where it is NaN, the same Inf where it is
// ±Inf, otherwise within the bound.
func testCausalSpecial[E comparable](t *testing.T, f *causalKind[E]) {
	r := rand.New(rand.NewPCG(44, uint64(f.per)))
	shapes := [][3]int{{4, 20, 20}, {2, 20, 280}}
	if longtest.Short() {
		shapes = shapes[:1]
	}
	for _, s := range attendSpecials {
		for c, sh := range shapes {
			rows, m, n := sh[0], sh[1], sh[2]
			dim := []int{64, 32}[c%2]
			q, k, v := make([]float32, rows*m*dim), make([]float32, n*dim), make([]float32, n*dim)
			normals(r, q, 1)
			normals(r, k, 1)
			normals(r, v, 4)
			scale, ks, vs := s.edit(r, q, k, v, rows*m, n, dim)
			in := causalInput[E]{q: q, k: f.fromFloats(k), v: f.fromFloats(v), rows: rows, m: m, n: n, dim: dim, scale: scale, shape: s.name}
			for _, x := range ks {
				f.set(in.k, x.i, x.x)
			}
			for _, x := range vs {
				f.set(in.v, x.i, x.x)
			}
			want := f.reference(in)
			got, comp := make([]float32, len(q)), make([]float32, len(q))
			varianttest.Each(t, func(variant string) {
				f.compose(comp, in)
				f.causal(got, in.q, in.k, in.v, rows, m, n, dim, in.scale)
				for e, g := range got {
					var err error
					switch c := comp[e]; {
					case c != c:
						if g == g {
							err = fmt.Errorf("got %v, the composition gives NaN", g)
						}
					case c-c != 0:
						if g != c {
							err = fmt.Errorf("got %v, the composition gives %v", g, c)
						}
					default:
						err = want[e/dim].Check(e%dim, g)
					}
					if err != nil {
						t.Fatalf("%s %s %v: row %d, out[%d]: %v", variant, f.name, in, e/dim, e%dim, err)
					}
				}
			})
		}
	}
}

func TestAttendCausalPanics(t *testing.T) {
	q4, k4 := make([]float32, 4*16), make([]Float16, 4*16)
	for _, c := range []struct {
		name, want string
		call       func()
	}{
		{"m > n", "want rows ≥ 0, 0 ≤ m ≤ n", func() { AttendCausal(q4, q4, k4[:16*3], k4[:16*3], 1, 4, 3, 16, 1) }},
		{"negative rows", "want rows ≥ 0", func() { AttendCausal(nil, nil, nil, nil, -1, 0, 0, 16, 1) }},
		{"dim 0", "1 ≤ dim", func() { AttendCausal(nil, nil, nil, nil, 1, 0, 0, 0, 1) }},
		{"short q", "len(out) = 64, len(q) = 48, want rows·m·dim = 1·4·16 = 64", func() { AttendCausal(q4, q4[:48], k4, k4, 1, 4, 4, 16, 1) }},
		{"long k", "len(k) = 64, len(v) = 48, want n·dim = 48", func() { AttendCausal(q4[:48], q4[:48], k4, k4[:48], 1, 3, 3, 16, 1) }},
		{"n 0, k not empty", "len(k) = 64, len(v) = 0, want n·dim = 0", func() { AttendCausal(nil, nil, k4, nil, 1, 0, 0, 16, 1) }},
		{"short strided q", "want ≥ (m−1)·qStride + rows·dim = 80", func() { AttendCausalStrided(q4, q4, k4, k4, 2, 2, 2, 16, 48, 16, 1) }},
		{"qStride below rows·dim", "qStride ≥ rows·dim", func() { AttendCausalStrided(q4, q4, k4, k4, 2, 1, 1, 16, 16, 16, 1) }},
		{"short strided k", "want (n−1)·kvStride + dim = 64", func() { AttendCausalStrided(q4, q4, k4[:50], k4, 1, 1, 2, 16, 16, 48, 1) }},
		{"q8 dim", "multiples of 32", func() { AttendCausalQ8(nil, nil, nil, nil, 1, 0, 0, 16, 1) }},
		{"heads k", "want n·heads·dim = 32", func() { AttendCausalHeads(q4[:32], q4[:32], k4, k4, 2, 1, 1, 1, 16, 1) }},
		{"heads q", "want m·heads·rows·dim = 1·2·1·16 = 32", func() { AttendCausalHeads(q4, q4, k4[:32], k4[:32], 2, 1, 1, 1, 16, 1) }},
	} {
		func() {
			defer func() {
				msg := fmt.Sprint(recover())
				if !strings.HasPrefix(msg, "kernels.AttendCausal") || !strings.Contains(msg, c.want) {
					t.Errorf("%s: panic %q, want one from kernels.AttendCausal… saying %q", c.name, msg, c.want)
				}
			}()
			c.call()
		}()
	}
}

func TestAttendCausalAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop its contents at random")
	}
	testCausalAllocs(t, fp16Causal)
	testCausalAllocs(t, bf16Causal)
	testCausalAllocs(t, q8Causal)
	testCausalAllocs(t, f32Causal)
}

func testCausalAllocs[E comparable](t *testing.T, f *causalKind[E]) {
	r := rand.New(rand.NewPCG(45, uint64(f.per)))
	const rows, m, n, dim = 4, 20, 280, 32
	in := f.input(r, 0, rows, m, n, dim)
	special := f.input(r, 0, rows, m, n, dim)
	f.set(special.v, 7*dim+3, inf32) // an Inf value: its rows are computed again
	out := make([]float32, rows*m*dim)
	varianttest.Each(t, func(variant string) {
		for _, c := range []struct {
			name string
			call func()
		}{
			{"AttendCausal", func() { f.causal(out, in.q, in.k, in.v, rows, m, n, dim, in.scale) }},
			{"computed again", func() { f.causal(out, special.q, special.k, special.v, rows, m, n, dim, special.scale) }},
			{"heads", func() { f.causalHeads(out, in.q, in.k, in.v, 1, rows, m, n, dim, in.scale) }},
		} {
			c.call()
			least := testing.AllocsPerRun(3, c.call)
			for range 2 {
				least = min(least, testing.AllocsPerRun(3, c.call))
			}
			if least != 0 {
				t.Errorf("%s %s %s: %v allocations per call", variant, f.name, c.name, least)
			}
		}
	})
}
