package snapkv_test

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// This file tests the page pool (pool.go): the pages balance under any interleaving,
// admission refuses a call without changing the cache, a pooled cache's bits are an
// unpooled one's, decode allocates nothing more, and bad configurations are errors.

// poolSel is the selection the pool tests' compressing caches run.
var poolSel = snapkv.Config{Budget: 36, Window: 8, Kernel: 3, Rule: snapkv.RuleProtected, Sinks: 2, Workers: 1}

// poolConfigs are the caches the pool tests run: every mode and decode rule.
func poolConfigs(pool *snapkv.PagePool, hq, hk, d int, layout snapkv.Layout) map[string]snapkv.CacheConfig {
	base := snapkv.CacheConfig{Select: poolSel, QHeads: hq, KVHeads: hk, Dim: d, Layout: layout, Reserve: 8, PagePool: pool}
	cfgs := map[string]snapkv.CacheConfig{}
	for ri, rule := range lifecycleRules {
		cfg := base
		cfg.Decode = rule
		cfgs[fmt.Sprintf("faithful rule %d", ri)] = cfg
	}
	bounded := base
	bounded.Mode = snapkv.ModeBounded
	cfgs["bounded"] = bounded
	dense := base
	dense.Mode, dense.Select = snapkv.ModeDense, snapkv.Config{Workers: 1}
	cfgs["dense"] = dense
	return cfgs
}

// pagesOf is the pages c's rows take: per KV head, ⌈rows / pageRows⌉.
func pagesOf[E snapkv.Element](c *snapkv.CacheOf[E], pageRows int) int {
	n := 0
	for _, r := range c.Stats().RowsKept {
		n += (r + pageRows - 1) / pageRows
	}
	return n
}

// cacheState is what a cache shows: Stats (RowsKept copied), each head's rows and
// positions, and Offset.
type cacheState[E snapkv.Element] struct {
	stats  snapkv.Stats
	k, v   [][]E
	pos    [][]int32
	offset int
}

func stateOf[E snapkv.Element](c *snapkv.CacheOf[E], hk int) cacheState[E] {
	s := cacheState[E]{stats: c.Stats(), offset: c.Offset()}
	s.stats.RowsKept = slices.Clone(s.stats.RowsKept)
	s.k, s.v = held(c, hk)
	for h := range hk {
		_, _, pos := c.Head(h)
		s.pos = append(s.pos, slices.Clone(pos))
	}
	return s
}

// TestPagePoolBalance: many caches of every mode and decode rule on one pool, driven
// from several goroutines by random interleavings (fixed seeds) of prefill chunks,
// decode steps, Truncate, Reset, Release and Clone, with the pool often full: after
// every round the pool's pages in use are exactly the pages the caches' rows take, the
// high water never passes the budget, and once every cache is released the pool is
// empty again. Run it under -race too.
func TestPagePoolBalance(t *testing.T) {
	const hq, hk, d, pageRows, workers, rounds, steps = 4, 2, 32, 8, 4, 8, 150
	pool, err := snapkv.NewPagePool(snapkv.PagePoolConfig{Pages: 160, PageRows: pageRows})
	if err != nil {
		t.Fatal(err)
	}
	type seq struct {
		c       *snapkv.Cache
		p       *prefillPrompt[fp16.Float16]
		layout  snapkv.Layout
		plen    int // this sequence's prompt length; 0: a new prompt starts
		next    int // the next prompt position to prefill; plen once the prompt ended
		tok     int // the next token of ts
		ts      []token[fp16.Float16]
		attends bool // PrefillAttend rather than Prefill
	}
	r := rand.New(rand.NewPCG(41, 42))
	var seqs [][]*seq // per goroutine
	for g := range workers {
		var mine []*seq
		layout := snapkv.Layout(g % 2)
		cfgs := poolConfigs(pool, hq, hk, d, layout)
		names := slices.Sorted(maps.Keys(cfgs))
		for i, name := range names {
			if (i+g)%2 != 0 { // half of the configurations per goroutine
				continue
			}
			c, err := snapkv.NewCache(cfgs[name])
			if err != nil {
				t.Fatal(name, err)
			}
			mine = append(mine, &seq{c: c, p: newPrefillPrompt[fp16.Float16](r, hq, hk, 120, d), layout: layout,
				ts: tokens[fp16.Float16](t, uint64(10*g+i), 64, hq, hk, d), attends: i%3 == 0})
		}
		seqs = append(seqs, mine)
	}
	check := func(round int) {
		t.Helper()
		want := 0
		for _, mine := range seqs {
			for _, s := range mine {
				want += pagesOf(s.c, pageRows)
			}
		}
		st := pool.Stats()
		if st.InUse != want || st.Free != st.Pages-st.InUse || st.HighWater > st.Pages || st.Pages != 160 {
			t.Fatalf("round %d: pool %+v, the caches' rows take %d pages", round, st, want)
		}
	}
	full := 0 // calls refused, all goroutines
	var mu sync.Mutex
	for round := range rounds {
		var wg sync.WaitGroup
		for g, mine := range seqs {
			wg.Go(func() {
				rg := rand.New(rand.NewPCG(uint64(round), uint64(g)))
				refused := 0
				fail := func(s *seq, what string, err error) bool {
					switch {
					case err == nil:
						return false
					case errors.Is(err, snapkv.ErrPoolFull):
						refused++
						// Make room: release one of this goroutine's other caches.
						o := mine[rg.IntN(len(mine))]
						if o != s {
							o.c.Release()
							o.next, o.plen = 0, 0
						}
						return true
					}
					t.Errorf("round %d goroutine %d: %s: %v", round, g, what, err)
					return true
				}
				for range steps {
					s := mine[rg.IntN(len(mine))]
					c := s.c
					if s.plen == 0 { // a new prompt
						s.plen, s.next = 20+rg.IntN(100), 0
					}
					switch op := rg.IntN(10); {
					case s.next < s.plen: // prefill a chunk
						hi := min(s.plen, s.next+1+rg.IntN(40))
						ch := s.p.chunk(s.next, hi, s.layout, hi == s.plen)
						var err error
						if s.attends {
							err = c.PrefillAttend(make([]float32, hq*(hi-s.next)*d), ch)
						} else {
							err = c.Prefill(ch)
						}
						if !fail(s, "prefill", err) {
							s.next = hi
						}
					case op < 5: // decode a few tokens
						for range 1 + rg.IntN(6) {
							tk := s.ts[s.tok%len(s.ts)]
							if fail(s, "Append", c.Append(tk.k, tk.v)) {
								break
							}
							s.tok++
							if fail(s, "Attend", c.Attend(make([]float32, hq*d), tk.q)) {
								break
							}
						}
					case op == 5: // roll back a draft; an error where an eviction forbids it
						n := max(0, c.Offset()-rg.IntN(8))
						if err := c.Truncate(n); err != nil && !strings.Contains(err.Error(), "dropped") {
							t.Errorf("round %d goroutine %d: Truncate(%d): %v", round, g, n, err)
						}
					case op == 6:
						c.Reset()
						s.plen = 0
					case op == 7:
						c.Release()
						s.plen = 0
					case op == 8: // fork, then drop the fork
						b := c.Clone()
						tk := s.ts[s.tok%len(s.ts)]
						if err := b.Append(tk.k, tk.v); err == nil {
							fail(s, "clone's Attend", b.Attend(make([]float32, hq*d), tk.q))
						} else if !errors.Is(err, snapkv.ErrPoolFull) && !strings.Contains(err.Error(), "Append before the prompt ended") {
							t.Errorf("round %d goroutine %d: clone's Append: %v", round, g, err)
						}
						b.Release()
					default:
						_ = c.Stats()
					}
				}
				mu.Lock()
				full += refused
				mu.Unlock()
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		check(round)
	}
	if full == 0 {
		t.Errorf("no call was refused: the pool never filled, so admission went untested")
	}
	t.Logf("%d calls refused; pool %+v", full, pool.Stats())
	for _, mine := range seqs {
		for _, s := range mine {
			s.c.Release()
		}
	}
	if st := pool.Stats(); st.InUse != 0 || st.Free != st.Pages || st.HighWater > st.Pages || st.HighWater == 0 {
		t.Fatalf("every cache released: pool %+v, want InUse 0, Free = Pages and 0 < HighWater ≤ Pages", st)
	}
}

// TestPagePoolAdmission: a prefill chunk (the first or a later one), a PrefillAttend
// chunk, an Append, a clone and a layer's chunk that the pool cannot supply return an
// error wrapping ErrPoolFull and leave the cache as it was; once pages are free the
// same calls succeed and the cache goes on with the bits of a cache that never failed,
// in every format.
func TestPagePoolAdmission(t *testing.T) {
	t.Run("fp16", testPagePoolAdmission[fp16.Float16])
	t.Run("bf16", testPagePoolAdmission[bf16.BFloat16])
	t.Run("q8_0", testPagePoolAdmission[q8.Block])
	t.Run("f32", testPagePoolAdmission[float32])
}

func testPagePoolAdmission[E snapkv.Element](t *testing.T) {
	const hq, hk, d, pageRows = 4, 2, 32, 8
	r := rand.New(rand.NewPCG(43, 44))
	p := newPrefillPrompt[E](r, hq, hk, 100, d)
	ts := tokens[E](t, 45, 30, hq, hk, d)
	for _, layout := range []snapkv.Layout{snapkv.HeadMajor, snapkv.TokenMajor} {
		for name, cfg := range poolConfigs(nil, hq, hk, d, layout) {
			what := fmt.Sprintf("layout %d %s", layout, name)
			pool, err := snapkv.NewPagePool(snapkv.PagePoolConfig{Pages: 40, PageRows: pageRows})
			if err != nil {
				t.Fatal(err)
			}
			want, err := snapkv.NewCacheOf[E](cfg) // unpooled: the bits to match
			if err != nil {
				t.Fatal(err)
			}
			cfg.PagePool = pool
			c, err := snapkv.NewCacheOf[E](cfg)
			if err != nil {
				t.Fatal(err)
			}
			hog, err := snapkv.NewCacheOf[E](snapkv.CacheConfig{Mode: snapkv.ModeDense, QHeads: 1, KVHeads: 1, Dim: d, PagePool: pool})
			if err != nil {
				t.Fatal(err)
			}
			// hog takes all but free pages (a dense prompt of rows rows, one head).
			hogRows := func(free int) {
				t.Helper()
				hog.Release()
				rows := (pool.Stats().Free - free) * pageRows
				k := batchRows[E](t, r, rows*d)
				if err := hog.Prefill(snapkv.ChunkOf[E]{K: k, V: k, Last: true}); err != nil {
					t.Fatalf("%s: hog: %v", what, err)
				}
			}
			// refused runs call, which must fail with ErrPoolFull and change nothing,
			// then frees the pool and runs it again on c and on want.
			refused := func(step string, call func(*snapkv.CacheOf[E]) error) {
				t.Helper()
				before := stateOf(c, hk)
				used := pool.Stats().InUse
				err := call(c)
				if !errors.Is(err, snapkv.ErrPoolFull) || !strings.Contains(err.Error(), "pages") {
					t.Fatalf("%s: %s with the pool full: error %v, want one wrapping ErrPoolFull", what, step, err)
				}
				if after := stateOf(c, hk); !reflect.DeepEqual(before, after) || pool.Stats().InUse != used {
					t.Fatalf("%s: %s refused changed the cache: %+v, was %+v", what, step, after.stats, before.stats)
				}
				hog.Release()
				for _, x := range []*snapkv.CacheOf[E]{c, want} {
					if err := call(x); err != nil {
						t.Fatalf("%s: %s with pages free: %v", what, step, err)
					}
				}
				sameCache(t, what+" after "+step, c, want, hk)
			}
			// The first chunk: 40 rows a head, 5 pages each, 10 in all; 9 are free.
			hogRows(9)
			refused("the first chunk", func(x *snapkv.CacheOf[E]) error { return x.Prefill(p.chunk(0, 40, layout, false)) })
			// A PrefillAttend chunk: 40 more rows a head (ModeBounded: 36 + 40), 10
			// more pages; 9 are free.
			hogRows(9)
			outs := map[*snapkv.CacheOf[E]][]float32{c: make([]float32, hq*40*d), want: make([]float32, hq*40*d)}
			refused("a PrefillAttend chunk", func(x *snapkv.CacheOf[E]) error {
				return x.PrefillAttend(outs[x], p.chunk(40, 80, layout, false))
			})
			if !sameBits(outs[c], outs[want]) {
				t.Fatalf("%s: PrefillAttend's output after a refusal differs from a cache that never failed", what)
			}
			// The last chunk: 20 more rows a head, 6 more pages (ModeBounded: 4); 1 is free.
			hogRows(1)
			refused("the last chunk", func(x *snapkv.CacheOf[E]) error { return x.Prefill(p.chunk(80, 100, layout, true)) })
			if st := pool.Stats(); st.InUse != pagesOf(c, pageRows) {
				t.Fatalf("%s: the prompt ended: pool %+v, the cache's rows take %d pages", what, st, pagesOf(c, pageRows))
			}
			// Decode until an Append needs a new page while none is free.
			for i, tk := range ts {
				hogRows(0)
				before := pool.Stats().InUse
				err := c.Append(tk.k, tk.v)
				if err == nil {
					if pool.Stats().InUse != before {
						t.Fatalf("%s: token %d: Append took pages from a full pool", what, i)
					}
					if err := want.Append(tk.k, tk.v); err != nil {
						t.Fatal(err)
					}
				} else {
					if err := c.Append(tk.k, tk.v); !errors.Is(err, snapkv.ErrPoolFull) {
						t.Fatalf("%s: token %d: Append: %v", what, i, err)
					}
					refused(fmt.Sprintf("token %d's Append", i), func(x *snapkv.CacheOf[E]) error { return x.Append(tk.k, tk.v) })
				}
				o1, o2 := make([]float32, hq*d), make([]float32, hq*d)
				if err := c.Attend(o1, tk.q); err != nil {
					t.Fatal(err)
				}
				if err := want.Attend(o2, tk.q); err != nil {
					t.Fatal(err)
				}
				if !sameBits(o1, o2) {
					t.Fatalf("%s: token %d: Attend's bits differ from a cache that never failed", what, i)
				}
				sameCache(t, fmt.Sprintf("%s token %d", what, i), c, want, hk)
			}
			// A clone the pool cannot hold is empty, its calls errors until Reset.
			hogRows(0)
			clone := c.Clone()
			if err := clone.Append(ts[0].k, ts[0].v); !errors.Is(err, snapkv.ErrPoolFull) {
				t.Fatalf("%s: a clone the pool cannot hold: Append: %v, want ErrPoolFull", what, err)
			}
			if st := clone.Stats(); st.TokensSeen != 0 || slices.Max(st.RowsKept) != 0 {
				t.Fatalf("%s: a clone the pool cannot hold holds %+v", what, st)
			}
			clone.Reset()
			if err := clone.Prefill(p.chunk(0, 100, layout, true)); !errors.Is(err, snapkv.ErrPoolFull) {
				t.Fatalf("%s: a reset clone's prompt in a full pool: %v", what, err)
			}
			hog.Release()
			fork := c.Clone()
			switch st, pages := pool.Stats(), pagesOf(c, pageRows); {
			case 2*pages <= st.Pages && st.InUse != 2*pages:
				t.Fatalf("%s: a clone: pool %+v, want twice the cache's %d pages", what, st, pages)
			case 2*pages <= st.Pages:
				sameCache(t, what+" clone", fork, c, hk)
			case st.InUse != pages: // the dense cache's 34 pages, twice, are more than 40
				t.Fatalf("%s: a clone the pool cannot hold: pool %+v, want the cache's %d pages", what, st, pages)
			}
			for _, x := range []*snapkv.CacheOf[E]{c, fork, clone, hog} {
				x.Release()
			}
			if st := pool.Stats(); st.InUse != 0 || st.Free != st.Pages {
				t.Fatalf("%s: all released: pool %+v", what, st)
			}
		}
	}
}

// TestPagePoolLayers: LayersConfig.Cache.PagePool puts every layer on the pool; a
// layer's chunk the pool refuses is an error that errors.Is sees ErrPoolFull through
// and leaves the layer as it was, and Release gives back every layer's pages.
func TestPagePoolLayers(t *testing.T) {
	const hq, hk, d, layers = 4, 2, 32, 3
	for _, shared := range []bool{false, true} {
		// 100 rows a head are 7 pages, 14 a layer. Shared votes: two layers hold their
		// prompts, 28 pages, and 2 are free. Each its own: two layers' kept 36 rows, 3
		// pages a head, 12 in all, and 13 are free.
		pages := 25
		if shared {
			pages = 30
		}
		pool, err := snapkv.NewPagePool(snapkv.PagePoolConfig{Pages: pages, PageRows: 16})
		if err != nil {
			t.Fatal(err)
		}
		s, err := snapkv.NewLayers(snapkv.LayersConfig{Layers: layers, SharedVotes: shared,
			Cache: snapkv.CacheConfig{Select: poolSel, QHeads: hq, KVHeads: hk, Dim: d, PagePool: pool}})
		if err != nil {
			t.Fatal(err)
		}
		p := newPrefillPrompt[fp16.Float16](rand.New(rand.NewPCG(46, 47)), hq, hk, 100, d)
		for l := range layers {
			err := s.Prefill(l, p.chunk(0, 100, snapkv.HeadMajor, true))
			switch {
			case l < 2 && err != nil:
				t.Fatal(err)
			case l == 2 && (!errors.Is(err, snapkv.ErrPoolFull) || !strings.Contains(err.Error(), "layer 2")):
				t.Fatalf("shared %v: layer 2 in a full pool: %v, want ErrPoolFull naming the layer", shared, err)
			}
		}
		if st := s.Layer(2).Stats(); st.TokensSeen != 0 {
			t.Fatalf("shared %v: a refused layer holds %+v", shared, st)
		}
		s.Release()
		if st := pool.Stats(); st.InUse != 0 {
			t.Fatalf("shared %v: layers released: pool %+v", shared, st)
		}
	}
}

// TestPagePoolSameBits: a pooled cache writes the bits an unpooled one writes and
// keeps the same rows, through PrefillAttend, decode with every decode rule,
// Truncate and Reset, in every mode and format; and its pool counts exactly the
// pages of its rows.
func TestPagePoolSameBits(t *testing.T) {
	t.Run("fp16", testPagePoolSameBits[fp16.Float16])
	t.Run("bf16", testPagePoolSameBits[bf16.BFloat16])
	t.Run("q8_0", testPagePoolSameBits[q8.Block])
	t.Run("f32", testPagePoolSameBits[float32])
}

func testPagePoolSameBits[E snapkv.Element](t *testing.T) {
	const hq, hk, d, pageRows = 4, 2, 32, 4
	r := rand.New(rand.NewPCG(48, 49))
	first, second := newPrefillPrompt[E](r, hq, hk, 130, d), newPrefillPrompt[E](r, hq, hk, 90, d)
	pool, err := snapkv.NewPagePool(snapkv.PagePoolConfig{Pages: 1000, PageRows: pageRows})
	if err != nil {
		t.Fatal(err)
	}
	for _, layout := range []snapkv.Layout{snapkv.HeadMajor, snapkv.TokenMajor} {
		for name, cfg := range poolConfigs(nil, hq, hk, d, layout) {
			what := fmt.Sprintf("layout %d %s", layout, name)
			plain, err := snapkv.NewCacheOf[E](cfg)
			if err != nil {
				t.Fatal(err)
			}
			cfg.PagePool = pool
			pooled, err := snapkv.NewCacheOf[E](cfg)
			if err != nil {
				t.Fatal(err)
			}
			balanced := func(step string) {
				t.Helper()
				sameCache(t, what+" "+step, pooled, plain, hk)
				if st := pool.Stats(); st.InUse != pagesOf(pooled, pageRows) {
					t.Fatalf("%s: %s: pool %+v, the rows take %d pages", what, step, st, pagesOf(pooled, pageRows))
				}
			}
			if !sameBits(resetRun(t, pooled, first, layout, 1, 40, false), resetRun(t, plain, first, layout, 1, 40, false)) {
				t.Fatalf("%s: the pooled cache's outputs differ", what)
			}
			balanced("decoded")
			n := pooled.Offset() - 3
			if err, err2 := pooled.Truncate(n), plain.Truncate(n); (err == nil) != (err2 == nil) {
				t.Fatalf("%s: Truncate(%d): %v pooled, %v plain", what, n, err, err2)
			}
			balanced("truncated")
			ts := tokens[E](t, 50, 10, hq, hk, d)
			if !sameBits(decode(t, pooled, ts), decode(t, plain, ts)) {
				t.Fatalf("%s: decode after Truncate differs", what)
			}
			balanced("decoded after Truncate")
			pooled.Reset()
			plain.Reset()
			balanced("reset")
			if !sameBits(resetRun(t, pooled, second, layout, 2, 20, false), resetRun(t, plain, second, layout, 2, 20, false)) {
				t.Fatalf("%s: the pooled cache's outputs after Reset differ", what)
			}
			balanced("second sequence")
			if a, b := pooled.Stats(), plain.Stats(); !reflect.DeepEqual(a, b) {
				t.Fatalf("%s: Stats %+v pooled, %+v plain", what, a, b)
			}
			pooled.Release()
			if st := pool.Stats(); st.InUse != 0 {
				t.Fatalf("%s: released: pool %+v", what, st)
			}
		}
	}
}

// TestPagePoolDecodeAllocs: a pooled cache's steady-state decode (Append and Attend,
// taking and giving back pages as its heads cross page boundaries and compress)
// allocates nothing, as an unpooled cache's does, under every decode rule.
func TestPagePoolDecodeAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop scratch space at random")
	}
	const hq, hk, d, prompt = 8, 2, 64, 48
	s := newStream[fp16.Float16](rand.New(rand.NewPCG(3, 4)), hq, hk, prompt+1, d)
	pool, err := snapkv.NewPagePool(snapkv.PagePoolConfig{Pages: 64, PageRows: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range []snapkv.DecodeRule{snapkv.DecodeSnapKV, snapkv.DecodeRecent, snapkv.DecodeH2O} {
		for _, p := range []*snapkv.PagePool{nil, pool} {
			sel := snapkv.Config{Budget: 32, Window: 8, Kernel: 5, Sinks: 4, Rule: snapkv.RuleProtected, Workers: 1}
			c, err := snapkv.NewCache(snapkv.CacheConfig{Select: sel, QHeads: hq, KVHeads: hk, Dim: d, Reserve: 16,
				Decode: snapkv.DecodeBudget{Budget: 32, Interval: 3, Rule: rule}, PagePool: p})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Prefill(s.prompt(prompt, prompt, snapkv.HeadMajor)); err != nil {
				t.Fatal(err)
			}
			k, v, q, out := s.token(s.k, prompt), s.token(s.v, prompt), s.query(prompt), make([]float32, hq*d)
			step := func() {
				if err := c.Append(k, v); err != nil {
					t.Fatal(err)
				}
				if err := c.Attend(out, q); err != nil {
					t.Fatal(err)
				}
			}
			for range 300 {
				step()
			}
			high := pool.Stats().HighWater
			if a := steadyAllocs(60, step); a != 0 {
				t.Errorf("rule %d, pooled %v: %v allocations per token", rule, p != nil, a)
			}
			if p != nil && (pool.Stats().InUse != pagesOf(c, 4) || high < 2*9) { // 32 rows + up to 2 more a head
				t.Errorf("rule %d: pool %+v, the rows take %d pages", rule, pool.Stats(), pagesOf(c, 4))
			}
			c.Release()
		}
	}
}

// TestPagePoolConfig: a pool of no pages or no rows per page is an error naming the
// field, never a panic, and so is a cache on a PagePool that NewPagePool did not make.
func TestPagePoolConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  snapkv.PagePoolConfig
		want string
	}{
		{snapkv.PagePoolConfig{Pages: 0, PageRows: 16}, "PagePoolConfig.Pages 0"},
		{snapkv.PagePoolConfig{Pages: -3, PageRows: 16}, "PagePoolConfig.Pages -3"},
		{snapkv.PagePoolConfig{Pages: 8, PageRows: 0}, "PagePoolConfig.PageRows 0"},
		{snapkv.PagePoolConfig{Pages: 8, PageRows: -1}, "PagePoolConfig.PageRows -1"},
		{snapkv.PagePoolConfig{}, "PagePoolConfig.Pages 0"},
	} {
		var p *snapkv.PagePool
		var err error
		if v := panicValue(func() { p, err = snapkv.NewPagePool(tc.cfg) }); v != nil {
			t.Fatalf("%+v: panic %v", tc.cfg, v)
		}
		if p != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, %v, want an error containing %q", tc.cfg, p, err, tc.want)
		}
	}
	for _, mode := range []snapkv.Mode{snapkv.ModeFaithful, snapkv.ModeDense} {
		_, err := snapkv.NewCache(snapkv.CacheConfig{Select: poolSel, Mode: mode, QHeads: 2, KVHeads: 1, Dim: 32, PagePool: &snapkv.PagePool{}})
		if err == nil || !strings.Contains(err.Error(), "not made by NewPagePool") {
			t.Errorf("mode %d: a zero PagePool: %v", mode, err)
		}
	}
	p, err := snapkv.NewPagePool(snapkv.PagePoolConfig{Pages: 5, PageRows: 16})
	if err != nil {
		t.Fatal(err)
	}
	if st := p.Stats(); st != (snapkv.PagePoolStats{Free: 5, Pages: 5}) {
		t.Errorf("a new pool's Stats %+v", st)
	}
}
