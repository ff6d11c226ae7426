package snapkv_test

import (
	"fmt"
	"github.com/kvsimd/kvsimd/internal/oracle"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
	"github.com/x448/float16"
)

// layer is one random layer's whole prompt: q [QHeads][L][Dim] (every position's
// queries, as an engine has them during prefill), k and v [KVHeads][L][Dim].
type layer struct {
	q        []float32
	k, v     []fp16.Float16
	hq, hk   int
	n, d     int
	attnRows int // the window of attn
	attn     []float32
}

// newLayer draws a layer whose queries lean towards a few keys of their KV head, so
// that attention is peaked as in a real model, and engine attention for a window of w.
func newLayer(r *rand.Rand, hq, hk, n, w, d int) *layer {
	l := &layer{hq: hq, hk: hk, n: n, d: d, attnRows: min(w, n)}
	l.k, l.v = make([]fp16.Float16, hk*n*d), make([]fp16.Float16, hk*n*d)
	for i := range l.k {
		l.k[i] = float16.Fromfloat32(float32(r.NormFloat64()))
		l.v[i] = fp16.Float16(r.Uint32()) // every bit pattern: the gather must be exact
	}
	l.q = make([]float32, hq*n*d)
	for h := range hq {
		kv := h / (hq / hk)
		for row := range n {
			target := r.IntN(n)
			for i := range d {
				l.q[(h*n+row)*d+i] = 0.5*l.k[(kv*n+target)*d+i].Float32() + float32(r.NormFloat64())
			}
		}
	}
	l.attn = make([]float32, hq*l.attnRows*n)
	for i := range l.attn {
		l.attn[i] = r.Float32()
	}
	return l
}

// rows returns x's rows [lo, hi) of every head, x being [heads][n][d].
func rows[T any](x []T, heads, n, d, lo, hi int) []T {
	out := make([]T, 0, heads*(hi-lo)*d)
	for h := range heads {
		out = append(out, x[(h*n+lo)*d:(h*n+hi)*d]...)
	}
	return out
}

// source is a score source for a test: window queries, engine attention or the key proxy.
type source int

const (
	byQueries source = iota
	byAttn
	byKeys
)

func (s source) String() string { return [...]string{"queries", "attn", "keys"}[s] }

// oneShot is the reference: Select over the whole prompt at once.
func (l *layer) oneShot(t *testing.T, cfg snapkv.Config, src source) [][]int32 {
	t.Helper()
	in := snapkv.Input{K: l.k, QHeads: l.hq, KVHeads: l.hk, Len: l.n, Dim: l.d}
	switch w := min(cfg.Window, l.n); src {
	case byQueries:
		in.Q = rows(l.q, l.hq, l.n, l.d, l.n-w, l.n)
	case byAttn:
		in.Attn = l.attn
	}
	sel, err := snapkv.Select(cfg, in)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

// prefill feeds the layer to c in chunks of the given sizes (the last marked Last),
// passing all of a chunk's queries or only its last Window rows in turn, and checks
// after each chunk that c holds no more rows per head than it may.
func (l *layer) prefill(t *testing.T, c *snapkv.Cache, cfg snapkv.CacheConfig, chunks []int, src source) {
	t.Helper()
	prefillOf(t, l, c, l.k, l.v, cfg, chunks, src)
}

// prefillOf is prefill for a cache of any format, its prompt k and v [KVHeads][L][Dim]
// values in that format.
func prefillOf[E snapkv.Element](t *testing.T, l *layer, c *snapkv.CacheOf[E], k, v []E, cfg snapkv.CacheConfig, chunks []int, src source) {
	t.Helper()
	at := 0
	for i, ch := range cutChunks(l, k, v, perRow[E](l.d), cfg, chunks, src) {
		if err := c.Prefill(ch); err != nil {
			t.Fatalf("chunk %d of %v: %v", i, chunks, err)
		}
		at += chunks[i]
		if c.Offset() != at {
			t.Fatalf("chunk %d of %v: Offset %d, want %d", i, chunks, c.Offset(), at)
		}
		if cfg.Mode == snapkv.ModeBounded && !ch.Last {
			st := c.Stats()
			room := int64(cfg.KVHeads) * int64(cfg.Select.Budget+slices.Max(chunks[:i+1])) * (2*rowBytes[E](cfg.Dim) + 4)
			if st.BytesCapacity > room {
				t.Fatalf("chunk %d of %v: %d bytes of room, more than Budget + the longest chunk's %d", i, chunks, st.BytesCapacity, room)
			}
			for h, kept := range st.RowsKept {
				if kept > cfg.Select.Budget {
					t.Fatalf("chunk %d of %v: head %d holds %d rows after compressing, budget %d", i, chunks, h, kept, cfg.Select.Budget)
				}
			}
		}
	}
}

// chunks cuts the layer into head-major chunks of the given sizes (the last marked
// Last), with all of a chunk's queries or only its last Window rows in turn.
func (l *layer) chunks(cfg snapkv.CacheConfig, sizes []int, src source) []snapkv.Chunk {
	return cutChunks(l, l.k, l.v, l.d, cfg, sizes, src)
}

// checkHeads checks that every head of c holds exactly the rows of l at want[h] (bit
// for bit, compared element by element) and those positions.
func (l *layer) checkHeads(t *testing.T, what string, c *snapkv.Cache, want [][]int32) {
	t.Helper()
	for h := range l.hk {
		k, v, pos := c.Head(h)
		if !slices.Equal(pos, want[h]) {
			t.Fatalf("%s: head %d positions %v, want %v", what, h, pos, want[h])
		}
		if len(k) != len(pos)*l.d || len(v) != len(pos)*l.d {
			t.Fatalf("%s: head %d: %d positions, len(k) = %d, len(v) = %d", what, h, len(pos), len(k), len(v))
		}
		for i, p := range pos {
			for j := range l.d {
				src := (h*l.n+int(p))*l.d + j
				if k[i*l.d+j] != l.k[src] || v[i*l.d+j] != l.v[src] {
					t.Fatalf("%s: head %d row %d (position %d) differs from the prompt's at %d", what, h, i, p, j)
				}
			}
		}
	}
}

// TestCacheFaithfulChunked: however the prompt is chunked (a last chunk shorter than the
// window, an empty last chunk, single rows), ModeFaithful keeps exactly the one-shot
// selection's rows, bit for bit, for every score source and allocation.
func TestCacheFaithfulChunked(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	const hq, hk, n, w, d = 8, 2, 200, 16, 16
	l := newLayer(r, hq, hk, n, w, d)
	chunkings := [][]int{{200}, {100, 100}, {50, 50, 50, 50}, {190, 10}, {7, 1, 180, 12}, {200, 0}, {199, 1}, {60, 130, 5, 5}}
	for _, sel := range []snapkv.Config{
		{Budget: 48, Window: w, Kernel: 5},
		{Budget: 48, Window: w, Kernel: 7, Pool: snapkv.PoolMax, Rule: snapkv.RuleProtected, Sinks: 4, Group: snapkv.GroupMax},
		{KeepRatio: 0.3, Window: w, Kernel: 5, Alloc: snapkv.AllocAdaptive, Floor: 0.2, Workers: 3},
		{Budget: 300, Window: w, Kernel: 5}, // keeps everything
		{Budget: 10, Window: w, Kernel: 5},  // W ≥ C: the most recent rows
	} {
		for _, src := range []source{byQueries, byAttn, byKeys} {
			want := l.oneShot(t, sel, src)
			for _, chunks := range chunkings {
				cfg := snapkv.CacheConfig{Select: sel, QHeads: hq, KVHeads: hk, Dim: d}
				c, err := snapkv.NewCache(cfg)
				if err != nil {
					t.Fatal(err)
				}
				l.prefill(t, c, cfg, chunks, src)
				l.checkHeads(t, fmt.Sprintf("%+v %v chunks %v", sel, src, chunks), c, want)
				if st := c.Stats(); st.PeakRows != n {
					t.Fatalf("%+v chunks %v: PeakRows %d, want the prompt's %d", sel, chunks, st.PeakRows, n)
				}
			}
		}
	}
}

// TestCacheHeadDuringPrefill: before the last chunk a faithful cache shows every row so
// far, so that an engine can attend to the earlier chunks.
func TestCacheHeadDuringPrefill(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	l := newLayer(r, 4, 2, 90, 8, 8)
	cfg := snapkv.CacheConfig{Select: snapkv.Config{Budget: 20, Window: 8, Kernel: 3}, QHeads: 4, KVHeads: 2, Dim: 8}
	c, err := snapkv.NewCache(cfg)
	if err != nil {
		t.Fatal(err)
	}
	at := 0
	for _, n := range []int{30, 25, 35} {
		ch := snapkv.Chunk{K: rows(l.k, 2, 90, 8, at, at+n), V: rows(l.v, 2, 90, 8, at, at+n), Q: rows(l.q, 4, 90, 8, at, at+n), Last: at+n == 90}
		if err := c.Prefill(ch); err != nil {
			t.Fatal(err)
		}
		at += n
		if !ch.Last {
			l.checkHeads(t, fmt.Sprintf("after %d rows", at), c, [][]int32{span(0, at), span(0, at)})
		}
	}
}

// TestCacheBounded: ModeBounded never holds more than Budget + chunk rows per head,
// keeps every row at its true position with its own K and V, always keeps the latest
// window, and with the prompt in one chunk equals ModeFaithful.
func TestCacheBounded(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	const hq, hk, n, w, d = 8, 2, 300, 16, 16
	l := newLayer(r, hq, hk, n, w, d)
	for _, sel := range []snapkv.Config{
		{Budget: 48, Window: w, Kernel: 5},
		{Budget: 48, Window: w, Kernel: 7, Pool: snapkv.PoolMax, Rule: snapkv.RuleProtected, Sinks: 4},
		{Budget: 48, Window: w, Kernel: 5, Alloc: snapkv.AllocAdaptive, Floor: 0.2},
		{Budget: 10, Window: w, Kernel: 5},
	} {
		for _, src := range []source{byQueries, byKeys} {
			for _, chunks := range [][]int{{300}, {100, 100, 100}, {64, 64, 64, 64, 44}, {290, 10}, {5, 5, 200, 90}, {1, 1, 1, 297}} {
				cfg := snapkv.CacheConfig{Select: sel, Mode: snapkv.ModeBounded, QHeads: hq, KVHeads: hk, Dim: d}
				c, err := snapkv.NewCache(cfg)
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("%+v %v chunks %v", sel, src, chunks)
				l.prefill(t, c, cfg, chunks, src)
				st := c.Stats()
				if bound := sel.Budget + slices.Max(chunks); st.PeakRows > bound {
					t.Fatalf("%s: PeakRows %d > budget + longest chunk = %d", what, st.PeakRows, bound)
				}
				total := 0
				for h := range hk {
					_, _, pos := c.Head(h)
					total += len(pos)
					if sel.Alloc == snapkv.AllocUniform && len(pos) != min(sel.Budget, n) {
						t.Fatalf("%s: head %d keeps %d rows, want %d", what, h, len(pos), sel.Budget)
					}
					if !slices.IsSorted(pos) || len(slices.Compact(slices.Clone(pos))) != len(pos) {
						t.Fatalf("%s: head %d positions not strictly ascending: %v", what, h, pos)
					}
					if recent := min(w, sel.Budget); !slices.Equal(pos[len(pos)-recent:], span(n-recent, n)) {
						t.Fatalf("%s: head %d does not end with the latest %d positions: %v", what, h, recent, pos)
					}
				}
				if total > hk*sel.Budget {
					t.Fatalf("%s: %d rows kept, budget %d per head", what, total, sel.Budget)
				}
				// Whatever was kept is the prompt's own rows at their positions.
				kept := make([][]int32, hk)
				for h := range hk {
					_, _, kept[h] = c.Head(h)
				}
				l.checkHeads(t, what, c, kept)
				if len(chunks) == 1 {
					l.checkHeads(t, what+" vs one shot", c, l.oneShot(t, sel, src))
				}
			}
		}
	}
}

// TestCacheAppend: decode rows go after the kept rows at the true positions, whatever
// was evicted, and Offset counts the prompt and the decoded tokens, not the rows.
func TestCacheAppend(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	const hq, hk, n, w, d = 4, 2, 120, 8, 8
	l := newLayer(r, hq, hk, n, w, d)
	for _, mode := range []snapkv.Mode{snapkv.ModeFaithful, snapkv.ModeBounded} {
		for _, reserve := range []int{0, 3, 40} {
			sel := snapkv.Config{Budget: 30, Window: w, Kernel: 5}
			cfg := snapkv.CacheConfig{Select: sel, Mode: mode, QHeads: hq, KVHeads: hk, Dim: d, Reserve: reserve}
			c, err := snapkv.NewCache(cfg)
			if err != nil {
				t.Fatal(err)
			}
			l.prefill(t, c, cfg, []int{50, 70}, byQueries)
			prompt := make([][]int32, hk)
			for h := range hk {
				_, _, pos := c.Head(h)
				prompt[h] = slices.Clone(pos)
			}
			var dk, dv [][]fp16.Float16
			for i := range 10 {
				k, v := make([]fp16.Float16, hk*d), make([]fp16.Float16, hk*d)
				for j := range k {
					k[j], v[j] = fp16.Float16(r.Uint32()), fp16.Float16(r.Uint32())
				}
				if err := c.Append(k, v); err != nil {
					t.Fatal(err)
				}
				dk, dv = append(dk, k), append(dv, v)
				if c.Offset() != n+i+1 {
					t.Fatalf("after %d appends: Offset %d, want %d", i+1, c.Offset(), n+i+1)
				}
			}
			for h := range hk {
				k, v, pos := c.Head(h)
				kept := len(prompt[h])
				if !slices.Equal(pos[:kept], prompt[h]) || !slices.Equal(pos[kept:], span(n, n+10)) {
					t.Fatalf("mode %d: head %d positions %v", mode, h, pos)
				}
				for i := range 10 {
					if !slices.Equal(k[(kept+i)*d:(kept+i+1)*d], dk[i][h*d:(h+1)*d]) || !slices.Equal(v[(kept+i)*d:(kept+i+1)*d], dv[i][h*d:(h+1)*d]) {
						t.Fatalf("mode %d: head %d decode row %d differs from what was appended", mode, h, i)
					}
				}
			}
			if st := c.Stats(); st.TokensSeen != n+10 || st.RowsKept[0] != 30+10 {
				t.Fatalf("mode %d: Stats %+v, want %d tokens and %d rows", mode, st, n+10, 40)
			}
		}
	}
}

// TestCacheBytes: the stats follow their formulas from what Head shows, in the bytes
// of each format (a row of Dim values: Dim·2 bytes in fp16 and bf16, Dim/32·34 in
// q8_0), and the storage after the prompt is exactly the kept rows plus the reserve.
func TestCacheBytes(t *testing.T) {
	t.Run("fp16", cacheBytes[fp16.Float16])
	t.Run("bf16", cacheBytes[bf16.BFloat16])
	t.Run("q8_0", cacheBytes[q8.Block])
	t.Run("f32", cacheBytes[float32])
}

func cacheBytes[E snapkv.Element](t *testing.T) {
	r := rand.New(rand.NewPCG(49, 50))
	const hq, hk, n, w, d = 8, 4, 256, 16, 32
	l := newLayer(r, hq, hk, n, w, d)
	wd := perRow[E](d)
	k, v := keysAs[E](t, l.k), randomRows[E](r, hk*n*wd)
	row := 2*rowBytes[E](d) + 4 // a position's K and V rows in one head, and the position
	for _, alloc := range []snapkv.Alloc{snapkv.AllocUniform, snapkv.AllocAdaptive} {
		for _, reserve := range []int{0, 5} {
			sel := snapkv.Config{Budget: 64, Window: w, Kernel: 5, Alloc: alloc}
			cfg := snapkv.CacheConfig{Select: sel, QHeads: hq, KVHeads: hk, Dim: d, Reserve: reserve}
			c, err := snapkv.NewCacheOf[E](cfg)
			if err != nil {
				t.Fatal(err)
			}
			prefillOf(t, l, c, k, v, cfg, []int{128, 128}, byQueries)
			for appended := 0; appended <= reserve+2; appended++ {
				st := c.Stats()
				kept, room := 0, 0
				for h := range hk {
					k, v, pos := c.Head(h)
					if st.RowsKept[h] != len(pos) {
						t.Fatalf("RowsKept[%d] = %d, Head shows %d", h, st.RowsKept[h], len(pos))
					}
					kept += len(pos)
					room += max(reserve-appended, 0)
					if appended <= reserve && (cap(k) != cap(v) || cap(k) != (len(pos)-appended+reserve)*wd || cap(pos) != len(pos)-appended+reserve) {
						t.Fatalf("%v reserve %d: head %d of %d rows has cap(k) %d, cap(pos) %d", alloc, reserve, h, len(pos), cap(k), cap(pos))
					}
				}
				if want := int64(kept) * row; st.BytesAfter != want {
					t.Fatalf("BytesAfter %d, want %d", st.BytesAfter, want)
				}
				if want := st.BytesAfter + int64(room)*row; appended <= reserve && st.BytesCapacity != want {
					t.Fatalf("%v reserve %d after %d appends: BytesCapacity %d, want %d", alloc, reserve, appended, st.BytesCapacity, want)
				}
				if want := int64(n+appended) * hk * (row - 4); st.BytesBefore != want || st.TokensSeen != n+appended {
					t.Fatalf("BytesBefore %d, TokensSeen %d; want %d, %d", st.BytesBefore, st.TokensSeen, want, n+appended)
				}
				if want := 1 - float64(kept)/float64((n+appended)*hk); st.EvictionRatio != want {
					t.Fatalf("EvictionRatio %v, want %v", st.EvictionRatio, want)
				}
				if err := c.Append(make([]E, hk*wd), make([]E, hk*wd)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// The bytes of one position in this layer (K and V, 4 heads of 32 values, and 4
	// positions), per format: fp16 and bf16 2·64·4 + 4·4, q8_0 2·34·4 + 4·4 (the rows
	// 17/32 of fp16's: 34 bytes hold 32 values), float32 2·128·4 + 4·4.
	want := map[string]int64{"fp16": 528, "bf16": 528, "q8_0": 288, "f32": 1040}[formatName[E]()]
	if got := int64(hk) * row; got != want {
		t.Fatalf("a position's rows take %d bytes, want %d", got, want)
	}
}

// TestCacheAdaptive: AdaKV heads keep different numbers of rows, each stored at exactly
// its size, the layer's total within the shared budget.
func TestCacheAdaptive(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	const hq, hk, n, w, d = 8, 4, 400, 16, 16
	l := newLayer(r, hq, hk, n, w, d)
	sel := snapkv.Config{Budget: 60, Window: w, Kernel: 5, Alloc: snapkv.AllocAdaptive, Floor: 0.2}
	cfg := snapkv.CacheConfig{Select: sel, QHeads: hq, KVHeads: hk, Dim: d}
	c, err := snapkv.NewCache(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l.prefill(t, c, cfg, []int{150, 250}, byQueries)
	want := l.oneShot(t, sel, byQueries)
	l.checkHeads(t, "adaptive", c, want)
	sizes, total := map[int]bool{}, 0
	for h := range hk {
		k, _, pos := c.Head(h)
		sizes[len(pos)] = true
		total += len(pos)
		if cap(k) != len(k) || cap(pos) != len(pos) {
			t.Fatalf("head %d of %d rows stores cap(k) = %d, cap(pos) = %d", h, len(pos), cap(k), cap(pos))
		}
	}
	if len(sizes) < 2 {
		t.Fatalf("every head keeps the same number of rows %v; the test needs heads that differ", sizes)
	}
	if total != hk*sel.Budget {
		t.Fatalf("%d rows kept, want the shared budget %d", total, hk*sel.Budget)
	}
}

// huge is 2⁵⁰ where an int holds it (−1 on 32-bit platforms).
var huge = func() int {
	n := int64(1) << 50
	if int64(int(n)) != n {
		return -1
	}
	return int(n)
}()

func TestCacheErrors(t *testing.T) {
	good := snapkv.CacheConfig{Select: snapkv.Config{Budget: 8, Window: 4, Kernel: 3}, QHeads: 4, KVHeads: 2, Dim: 4}
	with := func(f func(*snapkv.CacheConfig)) snapkv.CacheConfig { c := good; f(&c); return c }
	for _, tc := range []struct {
		cfg  snapkv.CacheConfig
		want string
	}{
		{with(func(c *snapkv.CacheConfig) { c.KVHeads = 0 }), "KVHeads 0"},
		{with(func(c *snapkv.CacheConfig) { c.QHeads = 5 }), "QHeads 5"},
		{with(func(c *snapkv.CacheConfig) { c.QHeads = 0 }), "QHeads 0"},
		{with(func(c *snapkv.CacheConfig) { c.Dim = -1 }), "Dim -1"},
		{with(func(c *snapkv.CacheConfig) { c.Mode = 7 }), "Mode 7"},
		{with(func(c *snapkv.CacheConfig) { c.Reserve = -2 }), "Reserve -2"},
		{with(func(c *snapkv.CacheConfig) {
			c.Mode = snapkv.ModeBounded
			c.Select.Budget = 0
			c.Select.KeepRatio = 0.5
		}), "KeepRatio 0.5"},
		{with(func(c *snapkv.CacheConfig) { c.Select.Kernel = 4 }), "Kernel 4"},
		{with(func(c *snapkv.CacheConfig) { c.QHeads = 1 << 16; c.Dim = math.MaxInt/4 + 1 }), "overflows"},
		{with(func(c *snapkv.CacheConfig) { c.Reserve = math.MaxInt }), fmt.Sprintf("Reserve %d exceeds the int32 positions", math.MaxInt)},
		{with(func(c *snapkv.CacheConfig) { c.Reserve = math.MaxInt / 2 }), fmt.Sprintf("Reserve %d", math.MaxInt/2)},
		{with(func(c *snapkv.CacheConfig) { c.Reserve = tooLong }), fmt.Sprintf("Reserve %d", tooLong)},
		{with(func(c *snapkv.CacheConfig) { c.Reserve = huge }), fmt.Sprintf("Reserve %d", huge)},
		{with(func(c *snapkv.CacheConfig) { c.QHeads, c.KVHeads, c.Dim = math.MaxInt/2, math.MaxInt/2, 1 }), fmt.Sprintf("KVHeads %d, want 1 to 65536", math.MaxInt/2)},
		{with(func(c *snapkv.CacheConfig) { c.QHeads, c.KVHeads, c.Dim = 1<<16+1, 1, 1 }), "QHeads 65537"},
		{with(func(c *snapkv.CacheConfig) { c.Layout = 2 }), "Layout 2 is not HeadMajor or TokenMajor"},
	} {
		// With a 32-bit int, MaxInt and MaxInt/2 are int32 positions, and a valid Reserve.
		if strconv.IntSize == 32 && (tc.cfg.Reserve == math.MaxInt || tc.cfg.Reserve == math.MaxInt/2) {
			continue
		}
		if _, err := snapkv.NewCache(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewCache(%+v) = %v, want an error naming %q", tc.cfg, err, tc.want)
		}
	}

	const hk, hq, d = 2, 4, 4
	halves := func(rows int) []fp16.Float16 { return make([]fp16.Float16, hk*rows*d) }
	queries := func(rows int) []float32 { return make([]float32, hq*rows*d) }
	for _, tc := range []struct {
		name   string
		cfg    snapkv.CacheConfig
		before []snapkv.Chunk
		chunk  snapkv.Chunk
		want   string
	}{
		{"ragged K", good, nil, snapkv.Chunk{K: make([]fp16.Float16, 9), V: make([]fp16.Float16, 9)}, "len(Chunk.K) = 9"},
		{"V short", good, nil, snapkv.Chunk{K: halves(3), V: halves(2)}, "len(Chunk.V) = 16"},
		{"Q rows", good, nil, snapkv.Chunk{K: halves(6), V: halves(6), Q: queries(5)}, "len(Chunk.Q) = 80"},
		{"Q and Attn", good, nil, snapkv.Chunk{K: halves(6), V: halves(6), Q: queries(4), Attn: make([]float32, 96), Last: true}, "Chunk.Q and Chunk.Attn"},
		{"Attn early", good, nil, snapkv.Chunk{K: halves(6), V: halves(6), Attn: make([]float32, 96)}, "not Last"},
		{"Attn bounded", with(func(c *snapkv.CacheConfig) { c.Mode = snapkv.ModeBounded }), nil,
			snapkv.Chunk{K: halves(6), V: halves(6), Attn: make([]float32, 96), Last: true}, "ModeBounded"},
		{"Attn shape", good, nil, snapkv.Chunk{K: halves(6), V: halves(6), Attn: make([]float32, 95), Last: true}, "len(Chunk.Attn) = 95"},
		{"window queries missing", good, []snapkv.Chunk{{K: halves(10), V: halves(10)}},
			snapkv.Chunk{K: halves(2), V: halves(2), Q: queries(2), Last: true}, "the last 4 positions, the chunks gave 2"},
		{"queries stop", good, []snapkv.Chunk{{K: halves(10), V: halves(10), Q: queries(4)}},
			snapkv.Chunk{K: halves(2), V: halves(2), Last: true}, "the chunks gave 0"},
		{"bounded queries short", with(func(c *snapkv.CacheConfig) { c.Mode = snapkv.ModeBounded }), []snapkv.Chunk{{K: halves(10), V: halves(10), Q: queries(4)}},
			snapkv.Chunk{K: halves(5), V: halves(5)}, "the chunks gave 0"},
		{"after Last", good, []snapkv.Chunk{{K: halves(10), V: halves(10), Q: queries(4), Last: true}},
			snapkv.Chunk{K: halves(1), V: halves(1), Q: queries(1)}, "after the last chunk"},
	} {
		c, err := snapkv.NewCache(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range tc.before {
			if err := c.Prefill(ch); err != nil {
				t.Fatalf("%s: setup: %v", tc.name, err)
			}
		}
		before := c.Stats()
		before.RowsKept = slices.Clone(before.RowsKept) // the next Stats call rewrites it
		if err := c.Prefill(tc.chunk); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Prefill = %v, want an error naming %q", tc.name, err, tc.want)
		}
		if after := c.Stats(); after.TokensSeen != before.TokensSeen || !slices.Equal(after.RowsKept, before.RowsKept) {
			t.Errorf("%s: the failed Prefill changed the cache: %+v → %+v", tc.name, before, after)
		}
	}

	c, err := snapkv.NewCache(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Append(halves(1), halves(1)); err == nil || !strings.Contains(err.Error(), "before the prompt ended") {
		t.Errorf("Append before prefill = %v", err)
	}
	if err := c.Prefill(snapkv.Chunk{K: halves(10), V: halves(10), Q: queries(10)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Append(halves(1), halves(1)); err == nil || !strings.Contains(err.Error(), "no chunk marked Last") {
		t.Errorf("Append before the last chunk = %v", err)
	}
	// A last chunk shorter than the window takes the rest of its queries from before.
	if err := c.Prefill(snapkv.Chunk{K: halves(2), V: halves(2), Q: queries(2), Last: true}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		k, v []fp16.Float16
		want string
	}{
		{make([]fp16.Float16, 7), halves(1), "len(k) = 7"},
		{halves(1), make([]fp16.Float16, 9), "len(v) = 9"},
		{nil, nil, "len(k) = 0"},
	} {
		if err := c.Append(tc.k, tc.v); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Append = %v, want an error naming %q", err, tc.want)
		}
	}
	if c.Offset() != 12 {
		t.Errorf("failed Appends moved Offset to %d", c.Offset())
	}
	for _, h := range []int{2, -1} {
		want := fmt.Sprintf("snapkv: Head(%d) of a cache of 2 KV heads", h)
		if got := panicValue(func() { c.Head(h) }); got != want {
			t.Errorf("Head(%d) panicked with %v, want %q", h, got, want)
		}
	}
}

// TestCacheConcurrent: caches of several sequences of different lengths prefill and
// decode at once from their own goroutines (run with -race) and each equals its
// one-shot selection.
func TestCacheConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	const hq, hk, w, d = 8, 2, 16, 16
	sel := snapkv.Config{Budget: 40, Window: w, Kernel: 5, Workers: 2}
	lengths := []int{300, 41, 170, 500, 12, 229}
	layers := make([]*layer, len(lengths))
	for i, n := range lengths {
		layers[i] = newLayer(r, hq, hk, n, w, d)
	}
	caches := make([]*snapkv.Cache, len(lengths))
	errs := make([]error, len(lengths))
	var wg sync.WaitGroup
	for i, l := range layers {
		cfg := snapkv.CacheConfig{Select: sel, Mode: snapkv.Mode(i % 2), QHeads: hq, KVHeads: hk, Dim: d, Reserve: 4}
		c, err := snapkv.NewCache(cfg)
		if err != nil {
			t.Fatal(err)
		}
		caches[i] = c
		wg.Go(func() { errs[i] = l.feed(c, max(l.n/3, 1), 4) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("sequence %d: %v", i, err)
		}
	}
	for i, l := range layers {
		if caches[i].Offset() != l.n+4 {
			t.Fatalf("sequence %d: Offset %d, want %d", i, caches[i].Offset(), l.n+4)
		}
		// The same sequence alone: ModeFaithful against one shot, ModeBounded against
		// the same chunks fed on this goroutine.
		want := l.oneShot(t, sel, byQueries)
		if i%2 == int(snapkv.ModeBounded) {
			c, err := snapkv.NewCache(snapkv.CacheConfig{Select: sel, Mode: snapkv.ModeBounded, QHeads: hq, KVHeads: hk, Dim: d})
			if err != nil {
				t.Fatal(err)
			}
			if err := l.feed(c, max(l.n/3, 1), 0); err != nil {
				t.Fatal(err)
			}
			for h := range want {
				_, _, pos := c.Head(h)
				want[h] = slices.Clone(pos)
			}
		}
		for h := range want {
			want[h] = append(want[h], span(l.n, l.n+4)...)
			_, _, pos := caches[i].Head(h)
			if !slices.Equal(pos, want[h]) {
				t.Fatalf("sequence %d head %d: positions %v, want %v", i, h, pos, want[h])
			}
		}
	}
}

// feed prefills c with l in chunks of the given length, with their queries, then
// appends decode zero tokens, and returns the first error; it is safe to run in a
// goroutine of its own.
func (l *layer) feed(c *snapkv.Cache, chunk, decode int) error {
	return feedOf(l, c, l.k, l.v, chunk, decode)
}

// feedOf is feed for a cache of any format, its prompt k and v [KVHeads][L][Dim]
// values in that format.
func feedOf[E snapkv.Element](l *layer, c *snapkv.CacheOf[E], k, v []E, chunk, decode int) error {
	wd := perRow[E](l.d)
	for at := 0; at < l.n; at += chunk {
		end := min(at+chunk, l.n)
		ch := snapkv.ChunkOf[E]{K: rows(k, l.hk, l.n, wd, at, end), V: rows(v, l.hk, l.n, wd, at, end),
			Q: rows(l.q, l.hq, l.n, l.d, at, end), Last: end == l.n}
		if err := c.Prefill(ch); err != nil {
			return err
		}
	}
	for range decode {
		if err := c.Append(make([]E, l.hk*wd), make([]E, l.hk*wd)); err != nil {
			return err
		}
	}
	return nil
}

// TestCacheAppendAllocs: with room reserved, decoding allocates nothing.
func TestCacheAppendAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(55, 56))
	const hq, hk, n, w, d = 8, 2, 100, 8, 16
	l := newLayer(r, hq, hk, n, w, d)
	cfg := snapkv.CacheConfig{Select: snapkv.Config{Budget: 20, Window: w, Kernel: 5}, QHeads: hq, KVHeads: hk, Dim: d, Reserve: 200}
	c, err := snapkv.NewCache(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l.prefill(t, c, cfg, []int{n}, byQueries)
	k, v := make([]fp16.Float16, hk*d), make([]fp16.Float16, hk*d)
	if a := testing.AllocsPerRun(100, func() {
		if err := c.Append(k, v); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Fatalf("Append allocates %v times", a)
	}
}

// TestCacheFaithfulLarge is TestCacheFaithfulChunked at a model's shape: Dim 128, a
// 32-row window, GQA 4, a 4096-row prompt in chunks of an engine's sizes.
func TestCacheFaithfulLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large shape")
	}
	r := rand.New(rand.NewPCG(57, 58))
	const hq, hk, n, w, d = 8, 2, 4096, 32, 128
	l := newLayer(r, hq, hk, n, w, d)
	for _, sel := range []snapkv.Config{
		{Budget: 512, Window: w, Kernel: 7},
		{Budget: 512, Window: w, Kernel: 7, Alloc: snapkv.AllocAdaptive, Floor: 0.2},
	} {
		want := l.oneShot(t, sel, byQueries)
		for _, chunks := range [][]int{{4096}, {1024, 1024, 1024, 1024}, {2048, 2040, 8}} {
			cfg := snapkv.CacheConfig{Select: sel, QHeads: hq, KVHeads: hk, Dim: d}
			c, err := snapkv.NewCache(cfg)
			if err != nil {
				t.Fatal(err)
			}
			l.prefill(t, c, cfg, chunks, byQueries)
			l.checkHeads(t, fmt.Sprintf("%+v chunks %v", sel, chunks), c, want)
		}
	}
}

// TestCacheTokenMajor: a cache given token-major chunks holds, after every chunk, the
// same rows at the same positions as one given the same data head-major, and reports
// the same Stats, in both modes, however the prompt is chunked, for every score source.
func TestCacheTokenMajor(t *testing.T) {
	r := rand.New(rand.NewPCG(59, 60))
	const hq, hk, n, w, d = 6, 3, 150, 8, 8
	l := newLayer(r, hq, hk, n, w, d)
	for _, mode := range []snapkv.Mode{snapkv.ModeFaithful, snapkv.ModeBounded} {
		for _, sel := range []snapkv.Config{
			{Budget: 40, Window: w, Kernel: 5},
			{Budget: 40, Window: w, Kernel: 3, Rule: snapkv.RuleProtected, Sinks: 2, Alloc: snapkv.AllocAdaptive, Floor: 0.3, Workers: 2},
		} {
			for _, src := range []source{byQueries, byAttn, byKeys} {
				if src == byAttn && mode == snapkv.ModeBounded {
					continue // Attn is for ModeFaithful only
				}
				for _, sizes := range [][]int{{150}, {50, 50, 50}, {7, 1, 139, 3}, {149, 1, 0}} {
					cfg := snapkv.CacheConfig{Select: sel, Mode: mode, QHeads: hq, KVHeads: hk, Dim: d, Reserve: 2}
					head, err := snapkv.NewCache(cfg)
					if err != nil {
						t.Fatal(err)
					}
					cfg.Layout = snapkv.TokenMajor
					token, err := snapkv.NewCache(cfg)
					if err != nil {
						t.Fatal(err)
					}
					for i, ch := range l.chunks(cfg, sizes, src) {
						what := fmt.Sprintf("mode %d %+v %v chunks %v, after chunk %d", mode, sel, src, sizes, i)
						if err := head.Prefill(ch); err != nil {
							t.Fatalf("%s: %v", what, err)
						}
						m := len(ch.K) / (hk * d)
						ch.K, ch.V = oracle.TokenMajor(ch.K, hk, m, d), oracle.TokenMajor(ch.V, hk, m, d)
						if ch.Q != nil {
							ch.Q = oracle.TokenMajor(ch.Q, hq, len(ch.Q)/(hq*d), d)
						}
						if err := token.Prefill(ch); err != nil {
							t.Fatalf("%s: token-major: %v", what, err)
						}
						for h := range hk {
							k, v, pos := head.Head(h)
							tk, tv, tpos := token.Head(h)
							if !slices.Equal(tk, k) || !slices.Equal(tv, v) || !slices.Equal(tpos, pos) {
								t.Fatalf("%s: head %d: token-major holds positions %v, head-major %v (or their rows differ)", what, h, tpos, pos)
							}
						}
						if a, b := token.Stats(), head.Stats(); !reflect.DeepEqual(a, b) {
							t.Fatalf("%s: token-major Stats %+v, head-major %+v", what, a, b)
						}
					}
				}
			}
		}
	}
}

// TestCacheStorageOverflow: a Reserve that validates but whose storage, at this Dim,
// would overflow int fails the prompt's last chunk with an error, not a panic.
func TestCacheStorageOverflow(t *testing.T) {
	cfg := snapkv.CacheConfig{Select: snapkv.Config{Budget: 8, Window: 4, Kernel: 3}, QHeads: 1, KVHeads: 1, Dim: math.MaxInt / 4, Reserve: 8}
	c, err := snapkv.NewCache(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("(kept rows + CacheConfig.Reserve)·Dim = (0 + 8)·%d overflows int", math.MaxInt/4)
	if err := c.Prefill(snapkv.Chunk{Last: true}); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Prefill = %v, want an error containing %q", err, want)
	}
}
