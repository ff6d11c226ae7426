package snapkv_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// token is one decode step's rows and query.
type token[E snapkv.Element] struct {
	k, v []E
	q    []float32
}

func tokens[E snapkv.Element](t *testing.T, seed uint64, count, hq, hk, d int) []token[E] {
	r := rand.New(rand.NewPCG(seed, 4))
	ts := make([]token[E], count)
	for i := range ts {
		ts[i] = token[E]{k: batchRows[E](t, r, hk*d), v: batchRows[E](t, r, hk*d), q: make([]float32, hq*d)}
		for j := range ts[i].q {
			ts[i].q[j] = float32(r.NormFloat64())
		}
	}
	return ts
}

// decode feeds c the tokens (Append, then Attend) and returns the outputs.
func decode[E snapkv.Element](t *testing.T, c *snapkv.CacheOf[E], ts []token[E]) []float32 {
	t.Helper()
	var outs []float32
	for _, tk := range ts {
		if err := c.Append(tk.k, tk.v); err != nil {
			t.Fatal(err)
		}
		out := make([]float32, len(tk.q))
		if err := c.Attend(out, tk.q); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out...)
	}
	return outs
}

var lifecycleRules = []snapkv.DecodeBudget{{}, {Budget: 30, Interval: 3, Rule: snapkv.DecodeSnapKV},
	{Budget: 30, Interval: 2, Rule: snapkv.DecodeH2O}, {Budget: 30, Interval: 4, Rule: snapkv.DecodeLongRange},
	{Budget: 30, Interval: 1, Rule: snapkv.DecodeRecent}}

// TestCacheClone: a clone, mid-prompt or mid-decode, goes on exactly as the cache
// would have, and independently: the original's later tokens leave it as a cache that
// never saw them; every format, layout and decode rule.
func TestCacheClone(t *testing.T) {
	t.Run("fp16", testCacheClone[fp16.Float16])
	t.Run("bf16", testCacheClone[bf16.BFloat16])
	t.Run("q8_0", testCacheClone[q8.Block])
	t.Run("f32", testCacheClone[float32])
}

func testCacheClone[E snapkv.Element](t *testing.T) {
	const hq, hk, d = 4, 2, 32
	for _, layout := range []snapkv.Layout{snapkv.HeadMajor, snapkv.TokenMajor} {
		for ri, rule := range lifecycleRules {
			cfg := snapkv.CacheConfig{Select: snapkv.Config{Budget: 36, Window: 8, Kernel: 3, Rule: snapkv.RuleProtected, Sinks: 2},
				QHeads: hq, KVHeads: hk, Dim: d, Layout: layout, Reserve: 4, Decode: rule}
			what := fmt.Sprintf("layout %d rule %d", layout, ri)
			r := rand.New(rand.NewPCG(uint64(ri), uint64(layout)))
			p := newPrefillPrompt[E](r, hq, hk, 100, d)
			mk := func() *snapkv.CacheOf[E] {
				c, err := snapkv.NewCacheOf[E](cfg)
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			first, x, y := tokens[E](t, 1, 9, hq, hk, d), tokens[E](t, 2, 12, hq, hk, d), tokens[E](t, 3, 12, hq, hk, d)
			// Mid-prompt: clone after the first chunk.
			a := mk()
			if err := a.Prefill(p.chunk(0, 60, layout, false)); err != nil {
				t.Fatal(err)
			}
			b := a.Clone()
			for _, c := range []*snapkv.CacheOf[E]{a, b} {
				if err := c.Prefill(p.chunk(60, 100, layout, true)); err != nil {
					t.Fatal(err)
				}
			}
			sameRows(t, what+" cloned mid-prompt", b, a, hk)
			// Mid-decode: clone after the first tokens, then feed the two different ones.
			decode(t, a, first)
			b = a.Clone()
			gotA, gotB := decode(t, a, x), decode(t, b, y)
			wantA, wantB := mk(), mk()
			for _, c := range []*snapkv.CacheOf[E]{wantA, wantB} {
				for _, ch := range []snapkv.ChunkOf[E]{p.chunk(0, 60, layout, false), p.chunk(60, 100, layout, true)} {
					if err := c.Prefill(ch); err != nil {
						t.Fatal(err)
					}
				}
				decode(t, c, first)
			}
			if !sameBits(gotA, decode(t, wantA, x)) || !sameBits(gotB, decode(t, wantB, y)) {
				t.Fatalf("%s: the original or its clone decodes other bits than a cache fed its tokens alone", what)
			}
			sameRows(t, what+" original", a, wantA, hk)
			sameRows(t, what+" clone", b, wantB, hk)
			if sa, sb := b.Stats(), wantB.Stats(); sa.Compressions != sb.Compressions || sa.PeakDecodeRows != sb.PeakDecodeRows {
				t.Fatalf("%s: the clone's Stats %+v, want %+v", what, sa, sb)
			}
		}
	}
}

// TestSharedPrefix: a prefix prefilled once and cloned into forks that go on with
// different suffixes (docs/snapkv-caches.md, shared prefixes) gives each fork the rows
// and decoded bits of a cache that prefilled its whole prompt alone; every format and
// layout, in the modes that select and the dense one.
func TestSharedPrefix(t *testing.T) {
	t.Run("fp16", testSharedPrefix[fp16.Float16])
	t.Run("bf16", testSharedPrefix[bf16.BFloat16])
	t.Run("q8_0", testSharedPrefix[q8.Block])
	t.Run("f32", testSharedPrefix[float32])
}

func testSharedPrefix[E snapkv.Element](t *testing.T) {
	const hq, hk, d, n, shared = 4, 2, 32, 100, 60
	for _, layout := range []snapkv.Layout{snapkv.HeadMajor, snapkv.TokenMajor} {
		for _, mode := range []snapkv.Mode{snapkv.ModeFaithful, snapkv.ModeDense} {
			cfg := snapkv.CacheConfig{Select: snapkv.Config{Budget: 36, Window: 8, Kernel: 3, Rule: snapkv.RuleProtected, Sinks: 2},
				QHeads: hq, KVHeads: hk, Dim: d, Layout: layout, Mode: mode}
			what := fmt.Sprintf("layout %d mode %d", layout, mode)
			mk := func() *snapkv.CacheOf[E] {
				c, err := snapkv.NewCacheOf[E](cfg)
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			r := rand.New(rand.NewPCG(7, uint64(layout)))
			a, b := newPrefillPrompt[E](r, hq, hk, n, d), newPrefillPrompt[E](r, hq, hk, n, d)
			prefix := mk()
			if err := prefix.Prefill(a.chunk(0, shared, layout, false)); err != nil {
				t.Fatal(err)
			}
			x := tokens[E](t, 4, 6, hq, hk, d)
			for i, suffix := range []*prefillPrompt[E]{a, b} {
				fork, alone := prefix.Clone(), mk()
				if err := alone.Prefill(a.chunk(0, shared, layout, false)); err != nil {
					t.Fatal(err)
				}
				for _, c := range []*snapkv.CacheOf[E]{fork, alone} {
					if err := c.Prefill(suffix.chunk(shared, n, layout, true)); err != nil {
						t.Fatal(err)
					}
				}
				sameRows(t, fmt.Sprintf("%s fork %d", what, i), fork, alone, hk)
				if !sameBits(decode(t, fork, x), decode(t, alone, x)) {
					t.Fatalf("%s: fork %d decodes other bits than a cache that prefilled its prompt alone", what, i)
				}
			}
		}
	}
}

// TestCacheTruncate: a cache truncated back to n decodes what a cache that stopped at
// n decodes, bits and rows: after decoded tokens, inside the prompt of a cache that
// keeps every row, and past decode-budget compressions that dropped only rows the
// truncated cache would not hold; where a compression since n (or the prompt's
// selection) dropped a row below n, it is an error naming it, and the cache is
// unchanged.
func TestCacheTruncate(t *testing.T) {
	t.Run("fp16", testCacheTruncate[fp16.Float16])
	t.Run("bf16", testCacheTruncate[bf16.BFloat16])
	t.Run("q8_0", testCacheTruncate[q8.Block])
	t.Run("f32", testCacheTruncate[float32])
}

func testCacheTruncate[E snapkv.Element](t *testing.T) {
	const hq, hk, d, prompt = 4, 2, 32, 100
	for _, layout := range []snapkv.Layout{snapkv.HeadMajor, snapkv.TokenMajor} {
		r := rand.New(rand.NewPCG(9, uint64(layout)))
		p := newPrefillPrompt[E](r, hq, hk, prompt, d)
		drafts, next := tokens[E](t, 5, 10, hq, hk, d), tokens[E](t, 6, 6, hq, hk, d)
		for _, tc := range []struct {
			name   string
			sel    snapkv.Config
			budget snapkv.DecodeBudget
			n      int    // truncate to
			err    string // "": no error
		}{
			{"decoded tokens", snapkv.Config{Budget: 40, Window: 8, Kernel: 3}, snapkv.DecodeBudget{}, prompt + 4, ""},
			{"to the prompt's end", snapkv.Config{Budget: 40, Window: 8, Kernel: 3}, snapkv.DecodeBudget{}, prompt, ""},
			{"into a whole prompt", snapkv.Config{KeepRatio: 1, Window: 1, Kernel: 1}, snapkv.DecodeBudget{}, 70, ""},
			{"into a selected prompt", snapkv.Config{Budget: 40, Window: 8, Kernel: 3}, snapkv.DecodeBudget{}, 70, "within the prompt of 100 rows"},
			{"no compression since", snapkv.Config{Budget: 40, Window: 8, Kernel: 3},
				snapkv.DecodeBudget{Budget: 40, Interval: 8, Rule: snapkv.DecodeRecent}, prompt + 8, ""},
			{"a compression since", snapkv.Config{Budget: 40, Window: 8, Kernel: 3},
				snapkv.DecodeBudget{Budget: 40, Interval: 8, Rule: snapkv.DecodeRecent}, prompt + 5, "dropped rows the cache held at offset 105: KV head 0 at positions"},
			{"outside", snapkv.Config{Budget: 40, Window: 8, Kernel: 3}, snapkv.DecodeBudget{}, prompt + 11, "want 0 to Offset() = 110"},
		} {
			what := fmt.Sprintf("layout %d %s", layout, tc.name)
			cfg := snapkv.CacheConfig{Select: tc.sel, QHeads: hq, KVHeads: hk, Dim: d, Layout: layout, Reserve: 16, Decode: tc.budget}
			mk := func(rows int) *snapkv.CacheOf[E] {
				c, err := snapkv.NewCacheOf[E](cfg)
				if err != nil {
					t.Fatal(err)
				}
				if err := c.Prefill(p.chunk(0, rows, layout, true)); err != nil {
					t.Fatal(err)
				}
				return c
			}
			c := mk(prompt)
			decode(t, c, drafts)
			before := c.Clone()
			err := c.Truncate(tc.n)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("%s: Truncate(%d) = %v, want an error containing %q", what, tc.n, err, tc.err)
				}
				sameRows(t, what+": after the refused Truncate", c, before, hk)
				continue
			}
			if err != nil {
				t.Fatalf("%s: Truncate(%d): %v", what, tc.n, err)
			}
			var want *snapkv.CacheOf[E]
			if tc.n >= prompt {
				want = mk(prompt)
				decode(t, want, drafts[:tc.n-prompt])
			} else {
				want = mk(tc.n) // the whole prompt's rows below n, as a shorter prompt keeps them
			}
			sameRows(t, what, c, want, hk)
			if c.Offset() != want.Offset() {
				t.Fatalf("%s: Offset %d after Truncate(%d), want %d", what, c.Offset(), tc.n, want.Offset())
			}
			if !sameBits(decode(t, c, next), decode(t, want, next)) {
				t.Fatalf("%s: the truncated cache decodes other bits than one that stopped at %d", what, tc.n)
			}
			sameRows(t, what+" after decoding on", c, want, hk)
		}
	}
}

// TestCacheTruncateErrors: before the prompt ends and after a negative n, Truncate
// is an error.
func TestCacheTruncateErrors(t *testing.T) {
	c, err := snapkv.NewCache(snapkv.CacheConfig{Select: snapkv.Config{Budget: 4, Window: 1, Kernel: 1}, QHeads: 2, KVHeads: 1, Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Truncate(0); err == nil || !strings.Contains(err.Error(), "before the prompt ended") {
		t.Fatalf("Truncate before the prompt: %v", err)
	}
	if err := c.Prefill(snapkv.Chunk{K: make([]fp16.Float16, 3*8), V: make([]fp16.Float16, 3*8), Last: true}); err != nil {
		t.Fatal(err)
	}
	if err := c.Truncate(-1); err == nil || !strings.Contains(err.Error(), "Truncate(-1)") {
		t.Fatalf("Truncate(-1): %v", err)
	}
}

// TestLayersCloneTruncate: a LayersOf clone with a shared long-range table decodes as
// the original would, independently, and LayersOf.Truncate takes every layer back or
// none.
func TestLayersCloneTruncate(t *testing.T) {
	const layers, hq, hk, d = 2, 4, 2, 32
	s, err := snapkv.NewLayers(snapkv.LayersConfig{Layers: layers, SharedVotes: true, Cache: snapkv.CacheConfig{
		Select: snapkv.Config{Budget: 30, Window: 8, Kernel: 3}, QHeads: hq, KVHeads: hk, Dim: d, Reserve: 8,
		Decode: snapkv.DecodeBudget{Budget: 24, Interval: 4, Rule: snapkv.DecodeLongRange, Share: new(snapkv.LongRange)}}})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(21, 22))
	for l := range layers {
		p := newPrefillPrompt[fp16.Float16](r, hq, hk, 60, d)
		if err := s.Prefill(l, p.chunk(0, 60, snapkv.HeadMajor, true)); err != nil {
			t.Fatal(err)
		}
	}
	step := func(s *snapkv.Layers, ts []token[fp16.Float16]) []float32 {
		var outs []float32
		for _, tk := range ts {
			for l := range layers {
				c := s.Layer(l)
				if err := c.Append(tk.k, tk.v); err != nil {
					t.Fatal(err)
				}
				out := make([]float32, hq*d)
				if err := c.Attend(out, tk.q); err != nil {
					t.Fatal(err)
				}
				outs = append(outs, out...)
			}
		}
		return outs
	}
	step(s, tokens[fp16.Float16](t, 1, 3, hq, hk, d))
	b := s.Clone()
	x := tokens[fp16.Float16](t, 2, 9, hq, hk, d)
	if !sameBits(step(s, x), step(b, x)) {
		t.Fatal("a LayersOf clone decodes other bits than the original")
	}
	// 30 rows after the prompt, compressed to 24 at offsets 61, 65 and 69.
	if err := b.Truncate(68); err == nil || !strings.Contains(err.Error(), "compressed at offset 69") {
		t.Fatalf("Truncate(68) past the compression at 69: %v", err)
	}
	if b.Layer(0).Offset() != 72 || b.Layer(1).Offset() != 72 {
		t.Fatalf("a refused Truncate moved a layer: offsets %d, %d", b.Layer(0).Offset(), b.Layer(1).Offset())
	}
	if err := b.Truncate(70); err != nil {
		t.Fatal(err)
	}
	if b.Layer(0).Offset() != 70 || b.Layer(1).Offset() != 70 || s.Layer(0).Offset() != 72 {
		t.Fatalf("Truncate(70): offsets %d, %d, the original's %d", b.Layer(0).Offset(), b.Layer(1).Offset(), s.Layer(0).Offset())
	}
}
