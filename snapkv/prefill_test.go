package snapkv_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/longtest"
	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// PrefillAttend is tested against a float64 causal attention over the rows the cache
// held before each chunk and the chunk's own, and against one kernels.AttendCausal
// call per head over the same rows, bit for bit; beside a cache fed the same chunks by
// Prefill, whose rows, selection and decode steps it must reproduce bit for bit; for
// bits independent of Workers; for its errors; and for steady-state allocations.

// prefillPrompt is one layer's prompt: float32 queries [hq][n][d] that lean towards a
// few keys of their KV head (peaked attention, as in a model), and keys and values
// narrowed to E, [hk][n][d values].
type prefillPrompt[E snapkv.Element] struct {
	hq, hk, n, d int
	q            []float32
	k, v         []E
}

func newPrefillPrompt[E snapkv.Element](r *rand.Rand, hq, hk, n, d int) *prefillPrompt[E] {
	k, v := make([]float32, hk*n*d), make([]float32, hk*n*d)
	for i := range k {
		k[i], v[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	q := make([]float32, hq*n*d)
	for j := range hq {
		h := j / (hq / hk)
		for i := range n {
			target := r.IntN(i + 1)
			for e := range d {
				q[(j*n+i)*d+e] = k[(h*n+target)*d+e] + float32(r.NormFloat64())
			}
		}
	}
	return &prefillPrompt[E]{hq: hq, hk: hk, n: n, d: d, q: q, k: narrowTo[E](k), v: narrowTo[E](v)}
}

// chunk is positions [lo, hi) in layout l with the queries of every position.
func (p *prefillPrompt[E]) chunk(lo, hi int, l snapkv.Layout, last bool) snapkv.ChunkOf[E] {
	w, m := perRow[E](p.d), hi-lo
	k, v := rows(p.k, p.hk, p.n, w, lo, hi), rows(p.v, p.hk, p.n, w, lo, hi)
	q := rows(p.q, p.hq, p.n, p.d, lo, hi)
	if l == snapkv.TokenMajor {
		k, v, q = oracle.TokenMajor(k, p.hk, m, w), oracle.TokenMajor(v, p.hk, m, w), oracle.TokenMajor(q, p.hq, m, p.d)
	}
	return snapkv.ChunkOf[E]{K: k, V: v, Q: q, Rows: m, Last: last}
}

// held copies what each KV head of c holds: keys and values.
func held[E snapkv.Element](c *snapkv.CacheOf[E], hk int) (k, v [][]E) {
	k, v = make([][]E, hk), make([][]E, hk)
	for h := range hk {
		kh, vh, _ := c.Head(h)
		k[h], v[h] = slices.Clone(kh), slices.Clone(vh)
	}
	return k, v
}

// checkPrefillOut holds out, PrefillAttend's output for the chunk [lo, hi) in layout
// l, to the float64 causal attention of every query over heldK, heldV (each KV head's
// rows before the chunk) and the chunk's rows up to its own position, within the
// kernel's bound (its test's: Attend's E plus 4u, and a row's keys·u more for q8_0;
// every third row in the short form), and to the bits of one kernels.AttendCausal
// call per KV head over the same rows.
func checkPrefillOut[E snapkv.Element](t *testing.T, what string, p *prefillPrompt[E], out []float32, heldK, heldV [][]E, lo, hi int, l snapkv.Layout) {
	t.Helper()
	hq, hk, n, d := p.hq, p.hk, p.n, p.d
	g, w, m := hq/hk, perRow[E](d), hi-lo
	scale := float32(1 / math.Sqrt(float64(d)))
	at := func(j, i int) int { // query head j's row of the chunk's position i in Q and out
		if l == snapkv.TokenMajor {
			return (i*hq + j) * d
		}
		return (j*m + i) * d
	}
	every := 1 // the float64 reference checks every every-th row; the kernel's bits, all
	if longtest.Short() {
		every = 3
	}
	for h := range hk {
		keys := append(slices.Clone(heldK[h]), p.k[(h*n+lo)*w:(h*n+hi)*w]...)
		vals := append(slices.Clone(heldV[h]), p.v[(h*n+lo)*w:(h*n+hi)*w]...)
		nk, old := len(keys)/w, len(heldK[h])/w
		kf, vf := widenFrom(keys), widenFrom(vals)
		key := func(j, e int) float64 { return float64(kf[j*d+e]) }
		value := func(j, e int) float64 { return float64(vf[j*d+e]) }
		qh := rows(p.q, hq, n, d, lo, hi)[h*g*m*d : (h+1)*g*m*d]
		want := make([]float32, g*m*d)
		snapkv.AttendCausalOf(want, qh, keys, vals, g, m, nk, d, scale)
		for r := range g {
			j := h*g + r
			for i := range m {
				got := out[at(j, i):][:d]
				if (i+j)%every == 0 {
					extra := 4 * 0x1p-24
					if w != d {
						extra += float64(old+i+1) * 0x1p-24
					}
					ref := oracle.Attend(qh[(r*m+i)*d:][:d], key, value, 1, old+i+1, d, scale, extra)[0]
					for e := range d {
						if err := ref.Check(e, got[e]); err != nil {
							t.Fatalf("%s: chunk [%d, %d), query head %d, position %d, out[%d]: %v", what, lo, hi, j, lo+i, e, err)
						}
					}
				}
				for e := range d {
					if a, b := math.Float32bits(got[e]), math.Float32bits(want[(r*m+i)*d+e]); a != b {
						t.Fatalf("%s: chunk [%d, %d), query head %d, position %d, out[%d] = %v, one kernels.AttendCausal call per head gives %v",
							what, lo, hi, j, lo+i, e, got[e], want[(r*m+i)*d+e])
					}
				}
			}
		}
	}
}

// sameCache fails unless a and b hold the same rows, bit for bit, and positions.
func sameCache[E snapkv.Element](t *testing.T, what string, a, b *snapkv.CacheOf[E], hk int) {
	t.Helper()
	for h := range hk {
		ka, va, pa := a.Head(h)
		kb, vb, pb := b.Head(h)
		if !slices.Equal(pa, pb) || !slices.Equal(ka, kb) || !slices.Equal(va, vb) {
			t.Fatalf("%s: KV head %d: PrefillAttend's cache holds positions %v, Prefill's %v (or other rows)", what, h, pb, pa)
		}
	}
}

// prefillSplits are the chunkings of a prompt of 90 positions the tests run.
var prefillSplits = [][]int{{90}, {30, 30, 30}, {1, 40, 49}, {32, 32, 26}, {7, 0, 83}}

// TestPrefillAttendFloat64: in every format, layout and mode and over several
// chunkings, PrefillAttend's output is the float64 causal attention over the rows the
// cache held before the chunk (all earlier positions in ModeFaithful, the kept ones in
// ModeBounded) and the chunk's, within the kernel's bound, and one kernel call's bits
// per head; its cache holds what a cache fed by Prefill holds after every chunk, and
// both decode the same bits.
func TestPrefillAttendFloat64(t *testing.T) {
	t.Run("fp16", testPrefillAttendFloat64[fp16.Float16])
	t.Run("bf16", testPrefillAttendFloat64[bf16.BFloat16])
	t.Run("q8_0", testPrefillAttendFloat64[q8.Block])
	t.Run("f32", testPrefillAttendFloat64[float32])
}

func testPrefillAttendFloat64[E snapkv.Element](t *testing.T) {
	r := rand.New(rand.NewPCG(71, uint64(perRow[E](32))))
	const hq, hk, n, d = 4, 2, 90, 32
	p := newPrefillPrompt[E](r, hq, hk, n, d)
	modes := []struct {
		name string
		cfg  snapkv.CacheConfig
	}{
		{"faithful", snapkv.CacheConfig{Select: snapkv.Config{Budget: 40, Window: 8, Kernel: 5, Workers: 3}, Reserve: 4}},
		{"bounded", snapkv.CacheConfig{Select: snapkv.Config{Budget: 24, Window: 8, Kernel: 3, Rule: snapkv.RuleProtected, Sinks: 2, Workers: 3},
			Mode: snapkv.ModeBounded, Reserve: 4}},
		{"faithful-h2o", snapkv.CacheConfig{Select: snapkv.Config{Budget: 30, Window: 6, Kernel: 3, Workers: 1},
			Decode: snapkv.DecodeBudget{Budget: 30, Interval: 2, Rule: snapkv.DecodeH2O}}},
	}
	splits := prefillSplits
	if longtest.Short() {
		splits = [][]int{{32, 32, 26}, {7, 0, 83}}
	}
	for _, mode := range modes {
		for _, layout := range []snapkv.Layout{snapkv.HeadMajor, snapkv.TokenMajor} {
			for _, split := range splits {
				what := fmt.Sprintf("%s %s layout %d chunks %v", formatName[E](), mode.name, layout, split)
				cfg := mode.cfg
				cfg.QHeads, cfg.KVHeads, cfg.Dim, cfg.Layout = hq, hk, d, layout
				plain, err := snapkv.NewCacheOf[E](cfg)
				if err != nil {
					t.Fatal(err)
				}
				c, err := snapkv.NewCacheOf[E](cfg)
				if err != nil {
					t.Fatal(err)
				}
				whole := make([]float32, hq*n*d) // the outputs, head-major over the prompt
				lo := 0
				for x, size := range split {
					ch := p.chunk(lo, lo+size, layout, x == len(split)-1)
					heldK, heldV := held(c, hk)
					out := make([]float32, len(ch.Q))
					for i := range out {
						out[i] = float32(math.NaN())
					}
					if err := plain.Prefill(ch); err != nil {
						t.Fatal(err)
					}
					if err := c.PrefillAttend(out, ch); err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					checkPrefillOut(t, what, p, out, heldK, heldV, lo, lo+size, layout)
					sameCache(t, what, plain, c, hk)
					for j := range hq {
						for i := range size {
							from := (j*size + i) * d
							if layout == snapkv.TokenMajor {
								from = (i*hq + j) * d
							}
							copy(whole[(j*n+lo+i)*d:][:d], out[from:][:d])
						}
					}
					lo += size
				}
				if cfg.Mode == snapkv.ModeFaithful && onTiles(split, kernels.CausalTile(hq/hk)) {
					// Chunks that start where the kernel's tiles do split the one
					// call's queries as the kernel allows: its bits.
					w, g := perRow[E](d), hq/hk
					want := make([]float32, hq*n*d)
					for h := range hk {
						snapkv.AttendCausalOf(want[h*g*n*d:(h+1)*g*n*d], p.q[h*g*n*d:(h+1)*g*n*d], p.k[h*n*w:(h+1)*n*w], p.v[h*n*w:(h+1)*n*w],
							g, n, n, d, float32(1/math.Sqrt(d)))
					}
					if !sameBits(whole, want) {
						t.Fatalf("%s: the chunks' outputs are not the bits of one call over the whole prompt", what)
					}
				}
				decodeAlike(t, what, r, plain, c, hq, hk, d, 6)
			}
		}
	}
}

// onTiles reports whether every chunk of split starts at a multiple of t positions.
func onTiles(split []int, t int) bool {
	lo := 0
	for _, size := range split {
		if lo%t != 0 {
			return false
		}
		lo += size
	}
	return true
}

// decodeAlike decodes tokens random tokens with both caches and fails unless every
// output and the rows they keep are the same bits.
func decodeAlike[E snapkv.Element](t *testing.T, what string, r *rand.Rand, a, b *snapkv.CacheOf[E], hq, hk, d, tokens int) {
	t.Helper()
	for tok := range tokens {
		k, v, q := make([]float32, hk*d), make([]float32, hk*d), make([]float32, hq*d)
		for i := range k {
			k[i], v[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		for i := range q {
			q[i] = float32(r.NormFloat64())
		}
		oa, ob := make([]float32, hq*d), make([]float32, hq*d)
		for _, x := range []struct {
			c   *snapkv.CacheOf[E]
			out []float32
		}{{a, oa}, {b, ob}} {
			if err := x.c.Append(narrowTo[E](k), narrowTo[E](v)); err != nil {
				t.Fatal(err)
			}
			if err := x.c.Attend(x.out, q); err != nil {
				t.Fatal(err)
			}
		}
		for i := range oa {
			if math.Float32bits(oa[i]) != math.Float32bits(ob[i]) {
				t.Fatalf("%s: decode token %d, out[%d]: %v after PrefillAttend, %v after Prefill", what, tok, i, ob[i], oa[i])
			}
		}
		sameCache(t, fmt.Sprintf("%s, decode token %d", what, tok), a, b, hk)
	}
	if sa, sb := a.Stats(), b.Stats(); sa.Compressions != sb.Compressions || sa.PeakRows != sb.PeakRows || sa.BytesAfter != sb.BytesAfter {
		t.Fatalf("%s: Stats %+v after PrefillAttend, %+v after Prefill", what, sb, sa)
	}
}

// TestPrefillAttendWorkers: the output's bits do not depend on Workers, whether heads
// are whole tasks, split into parts of equal causal work (copied through the workers'
// buffers in pieces), or run on the caller alone; for a whole prompt and a later
// chunk, in ModeFaithful and ModeBounded and both layouts for fp16 and two of those
// combinations for bf16 and q8_0, whose kernels the split does not see (the short
// form: two for fp16, one each for the others). No helper outlives a call.
func TestPrefillAttendWorkers(t *testing.T) {
	t.Run("fp16", testPrefillAttendWorkers[fp16.Float16])
	t.Run("bf16", testPrefillAttendWorkers[bf16.BFloat16])
	t.Run("q8_0", testPrefillAttendWorkers[q8.Block])
	t.Run("f32", testPrefillAttendWorkers[float32])
}

func testPrefillAttendWorkers[E snapkv.Element](t *testing.T) {
	r := rand.New(rand.NewPCG(73, uint64(perRow[E](32))))
	// G = 8: a kernel tile is 8 positions, a piece 128. The first chunk's 1280 query
	// rows per head split into up to 5 parts, those that cross position 128 into
	// pieces; the second chunk sees the rows held before it.
	hq, hk, d, split := 8, 1, 32, []int{160, 24}
	if !longtest.Short() {
		hq, hk, split = 16, 2, []int{160, 40}
	}
	type combo struct {
		mode   snapkv.Mode
		layout snapkv.Layout
	}
	combos := []combo{{snapkv.ModeFaithful, snapkv.TokenMajor}, {snapkv.ModeBounded, snapkv.HeadMajor},
		{snapkv.ModeFaithful, snapkv.HeadMajor}, {snapkv.ModeBounded, snapkv.TokenMajor}}
	switch {
	case formatName[E]() != "fp16" && longtest.Short():
		combos = combos[perRow[E](32)%2 : perRow[E](32)%2+1] // bf16 one, q8_0 the other
	case formatName[E]() != "fp16" || longtest.Short():
		combos = combos[:2]
	}
	total := 0
	for _, s := range split {
		total += s
	}
	p := newPrefillPrompt[E](r, hq, hk, total, d)
	before := runtime.NumGoroutine()
	for _, cb := range combos {
		var first [][]float32 // Workers 1's output per chunk
		for _, workers := range []int{1, 2, 3, 8} {
			what := fmt.Sprintf("%s mode %d layout %d Workers %d", formatName[E](), cb.mode, cb.layout, workers)
			c, err := snapkv.NewCacheOf[E](snapkv.CacheConfig{Select: snapkv.Config{Budget: 100, Window: 8, Kernel: 3, Workers: workers},
				Mode: cb.mode, QHeads: hq, KVHeads: hk, Dim: d, Layout: cb.layout})
			if err != nil {
				t.Fatal(err)
			}
			lo := 0
			for x, size := range split {
				ch := p.chunk(lo, lo+size, cb.layout, x == len(split)-1)
				out := make([]float32, len(ch.Q))
				if err := c.PrefillAttend(out, ch); err != nil {
					t.Fatal(err)
				}
				if workers == 1 {
					first = append(first, out)
				} else if !sameBits(out, first[x]) {
					t.Fatalf("%s: chunk %d's output differs from Workers 1's", what, x)
				}
				lo += size
			}
		}
	}
	if after := settleGoroutines(before); after > before {
		t.Fatalf("%d goroutines before the PrefillAttend calls, %d after", before, after)
	}
}

// sameBits reports whether a and b hold the same float32 bits.
func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// TestPrefillAttendLayers: LayersOf.PrefillAttend, with and without shared votes,
// keeps what LayersOf.Prefill keeps in every layer and writes the attention a lone
// ModeFaithful cache's PrefillAttend writes, bit for bit.
func TestPrefillAttendLayers(t *testing.T) {
	r := rand.New(rand.NewPCG(75, 76))
	const hq, hk, n, d, layers = 4, 2, 80, 32, 3
	prompts := make([]*prefillPrompt[fp16.Float16], layers)
	for l := range prompts {
		prompts[l] = newPrefillPrompt[fp16.Float16](r, hq, hk, n, d)
	}
	cc := snapkv.CacheConfig{Select: snapkv.Config{Budget: 24, Window: 8, Kernel: 5, Rule: snapkv.RuleProtected, Sinks: 2, Workers: 2},
		QHeads: hq, KVHeads: hk, Dim: d, Layout: snapkv.TokenMajor}
	for _, shared := range []bool{false, true} {
		cfg := snapkv.LayersConfig{Cache: cc, Layers: layers, SharedVotes: shared, Budgets: []int{24, 16, 32}}
		if shared {
			cfg.VoteLayers = []int{1}
		}
		plain, err := snapkv.NewLayers(cfg)
		if err != nil {
			t.Fatal(err)
		}
		s, err := snapkv.NewLayers(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, split := range [][2]int{{0, 50}, {50, n}} {
			for l, p := range prompts {
				lone, err := snapkv.NewCache(cc)
				if err != nil {
					t.Fatal(err)
				}
				if split[0] > 0 {
					if err := lone.Prefill(p.chunk(0, split[0], cc.Layout, false)); err != nil {
						t.Fatal(err)
					}
				}
				ch := p.chunk(split[0], split[1], cc.Layout, split[1] == n)
				want, got := make([]float32, len(ch.Q)), make([]float32, len(ch.Q))
				if err := lone.PrefillAttend(want, ch); err != nil {
					t.Fatal(err)
				}
				if err := plain.Prefill(l, ch); err != nil {
					t.Fatal(err)
				}
				if err := s.PrefillAttend(l, got, ch); err != nil {
					t.Fatal(err)
				}
				if !sameBits(got, want) {
					t.Fatalf("shared votes %v, layer %d, chunk %v: LayersOf.PrefillAttend's output is not a lone cache's", shared, l, split)
				}
			}
		}
		for l := range layers {
			sameCache(t, fmt.Sprintf("shared votes %v, layer %d", shared, l), plain.Layer(l), s.Layer(l), hk)
		}
	}
}

// TestPrefillAttendErrors: a chunk without every position's queries, or an out of
// another length, is an error naming the field, returned before anything changes.
func TestPrefillAttendErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(77, 78))
	const hq, hk, n, d, w = 4, 2, 20, 32, 4
	p := newPrefillPrompt[fp16.Float16](r, hq, hk, n, d)
	for _, layout := range []snapkv.Layout{snapkv.HeadMajor, snapkv.TokenMajor} {
		c, err := snapkv.NewCache(snapkv.CacheConfig{Select: snapkv.Config{Budget: 8, Window: w, Kernel: 3}, Mode: snapkv.ModeBounded,
			QHeads: hq, KVHeads: hk, Dim: d, Layout: layout})
		if err != nil {
			t.Fatal(err)
		}
		good := p.chunk(0, 10, layout, false)
		window := good
		window.Q = good.Q[len(good.Q)-hq*w*d:] // enough for Prefill, not for PrefillAttend
		if layout == snapkv.HeadMajor {
			window.Q = rows(p.q, hq, n, d, 10-w, 10)
		}
		noQ := good
		noQ.Q = nil
		full := len(good.Q)
		for _, tc := range []struct {
			name string
			out  []float32
			ch   snapkv.Chunk
			want string
		}{
			{"window queries only", make([]float32, full), window, fmt.Sprintf("len(Chunk.Q) = %d, want QHeads·n·Dim = 4·10·32 = %d", hq*w*d, full)},
			{"no queries", make([]float32, full), noQ, "len(Chunk.Q) = 0"},
			{"short out", make([]float32, full-1), good, fmt.Sprintf("len(out) = %d, want len(Chunk.Q)", full-1)},
			{"long out", make([]float32, full+d), good, fmt.Sprintf("len(out) = %d", full+d)},
			{"nil out", nil, good, "len(out) = 0"},
		} {
			if err := snapkvPrefillAttend(c, tc.out, tc.ch); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "snapkv: ") {
				t.Fatalf("layout %d, %s: error %v, want one containing %q", layout, tc.name, err, tc.want)
			}
			if c.Offset() != 0 || c.Stats().PeakRows != 0 {
				t.Fatalf("layout %d, %s: the failed call changed the cache (offset %d)", layout, tc.name, c.Offset())
			}
		}
		if err := c.PrefillAttend(make([]float32, full), good); err != nil {
			t.Fatalf("layout %d: the good chunk: %v", layout, err)
		}
		if err := c.PrefillAttend(nil, snapkv.Chunk{Last: true}); err != nil {
			t.Fatalf("layout %d: an empty Last chunk: %v", layout, err)
		}
		if err := c.PrefillAttend(make([]float32, full), good); err == nil || !strings.Contains(err.Error(), "after the last chunk") {
			t.Fatalf("layout %d: a chunk after Last: %v", layout, err)
		}
	}
	s, err := snapkv.NewLayers(snapkv.LayersConfig{Cache: snapkv.CacheConfig{Select: snapkv.Config{Budget: 8, Window: w, Kernel: 3},
		QHeads: hq, KVHeads: hk, Dim: d}, Layers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PrefillAttend(2, nil, snapkv.Chunk{}); err == nil || !strings.Contains(err.Error(), "layer 2") {
		t.Fatalf("layer out of range: %v", err)
	}
	if err := s.PrefillAttend(1, make([]float32, 3), p.chunk(0, 10, snapkv.HeadMajor, false)); err == nil || !strings.Contains(err.Error(), "layer 1: PrefillAttend: len(out) = 3") {
		t.Fatalf("short out for layer 1: %v", err)
	}
}

// snapkvPrefillAttend calls PrefillAttend and turns a panic into a failure's error, so
// that a panic on user input is reported as such.
func snapkvPrefillAttend(c *snapkv.Cache, out []float32, ch snapkv.Chunk) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return c.PrefillAttend(out, ch)
}

// TestPrefillAttendAllocs: a stream of equal chunks into a ModeBounded cache allocates
// nothing once warm, with one goroutine or helpers, whole heads or parts, in both
// layouts.
func TestPrefillAttendAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop the kernel's workspace at random")
	}
	r := rand.New(rand.NewPCG(79, 80))
	const hq, hk, d, size = 8, 1, 32, 64 // 512 query rows: two parts with 3 workers
	p := newPrefillPrompt[q8.Block](r, hq, hk, size, d)
	for _, layout := range []snapkv.Layout{snapkv.HeadMajor, snapkv.TokenMajor} {
		for _, workers := range []int{1, 3} {
			c, err := snapkv.NewCacheOf[q8.Block](snapkv.CacheConfig{Select: snapkv.Config{Budget: 8, Window: 8, Kernel: 3, Workers: workers},
				Mode: snapkv.ModeBounded, QHeads: hq, KVHeads: hk, Dim: d, Layout: layout})
			if err != nil {
				t.Fatal(err)
			}
			ch := p.chunk(0, size, layout, false)
			out := make([]float32, len(ch.Q))
			run := func() {
				if err := c.PrefillAttend(out, ch); err != nil {
					t.Fatal(err)
				}
			}
			for range 3 { // grow the working area, the selector's and the workers' buffers
				run()
			}
			if a := steadyAllocs(2, run); a != 0 {
				t.Errorf("layout %d, Workers %d: %v allocations per PrefillAttend", layout, workers, a)
			}
		}
	}
}
