package snapkv_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// resetRun feeds c one sequence: the prompt p in chunks of 40 through PrefillAttend
// (or only its first chunk, if partial), then tokens decode steps of Append and Attend,
// and returns every output it wrote.
func resetRun[E snapkv.Element](t *testing.T, c *snapkv.CacheOf[E], p *prefillPrompt[E], layout snapkv.Layout, seed uint64, tokens int, partial bool) []float32 {
	t.Helper()
	var outs []float32
	for lo := 0; lo < p.n; lo += 40 {
		hi := min(lo+40, p.n)
		out := make([]float32, p.hq*(hi-lo)*p.d)
		if err := c.PrefillAttend(out, p.chunk(lo, hi, layout, hi == p.n)); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out...)
		if partial {
			return outs
		}
	}
	r := rand.New(rand.NewPCG(seed, 9))
	for range tokens {
		if err := c.Append(batchRows[E](t, r, p.hk*p.d), batchRows[E](t, r, p.hk*p.d)); err != nil {
			t.Fatal(err)
		}
		q, out := make([]float32, p.hq*p.d), make([]float32, p.hq*p.d)
		for i := range q {
			q[i] = float32(r.NormFloat64())
		}
		if err := c.Attend(out, q); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, out...)
	}
	return outs
}

// TestCacheReset: a cache Reset after a sequence (or in the middle of a prompt)
// gives a second sequence the bits a new cache gives it, outputs, rows and Stats, in
// every format, layout and mode and under every decode rule; and the second sequence's
// rows go into the first's storage where they fit.
func TestCacheReset(t *testing.T) {
	t.Run("fp16", testCacheReset[fp16.Float16])
	t.Run("bf16", testCacheReset[bf16.BFloat16])
	t.Run("q8_0", testCacheReset[q8.Block])
	t.Run("f32", testCacheReset[float32])
}

func testCacheReset[E snapkv.Element](t *testing.T) {
	const hq, hk, d = 4, 2, 32
	rules := []snapkv.DecodeBudget{{}, {Budget: 30, Interval: 3, Rule: snapkv.DecodeSnapKV},
		{Budget: 30, Interval: 2, Rule: snapkv.DecodeH2O}, {Budget: 30, Interval: 4, Rule: snapkv.DecodeLongRange},
		{Budget: 30, Interval: 1, Rule: snapkv.DecodeRecent}}
	for _, layout := range []snapkv.Layout{snapkv.HeadMajor, snapkv.TokenMajor} {
		for _, mode := range []snapkv.Mode{snapkv.ModeFaithful, snapkv.ModeBounded} {
			for ri, rule := range rules {
				cfg := snapkv.CacheConfig{
					Select: snapkv.Config{Budget: 36, Window: 8, Kernel: 3, Rule: snapkv.RuleProtected, Sinks: 2},
					Mode:   mode, QHeads: hq, KVHeads: hk, Dim: d, Layout: layout, Reserve: 24, Decode: rule}
				what := fmt.Sprintf("layout %d mode %d rule %d", layout, mode, ri)
				r := rand.New(rand.NewPCG(uint64(ri), uint64(mode)))
				first, second := newPrefillPrompt[E](r, hq, hk, 130, d), newPrefillPrompt[E](r, hq, hk, 110, d)
				for _, partial := range []bool{false, true} {
					used, err := snapkv.NewCacheOf[E](cfg)
					if err != nil {
						t.Fatal(err)
					}
					resetRun(t, used, first, layout, 1, 20, partial)
					var before []unsafe.Pointer
					if !partial {
						for h := range hk {
							k, _, _ := used.Head(h)
							before = append(before, unsafe.Pointer(unsafe.SliceData(k)))
						}
					}
					used.Reset()
					if used.Offset() != 0 || used.Stats().TokensSeen != 0 {
						t.Fatalf("%s: after Reset, Offset %d", what, used.Offset())
					}
					fresh, err := snapkv.NewCacheOf[E](cfg)
					if err != nil {
						t.Fatal(err)
					}
					got, want := resetRun(t, used, second, layout, 2, 25, false), resetRun(t, fresh, second, layout, 2, 25, false)
					if !sameBits(got, want) {
						t.Fatalf("%s partial %v: the Reset cache's outputs differ from a new cache's", what, partial)
					}
					for h := range hk {
						ka, va, pa := used.Head(h)
						kb, vb, pb := fresh.Head(h)
						if !slices.Equal(pa, pb) || !slices.Equal(ka, kb) || !slices.Equal(va, vb) {
							t.Fatalf("%s partial %v: head %d keeps %v after Reset, a new cache %v", what, partial, h, pa, pb)
						}
					}
					sa, sb := used.Stats(), fresh.Stats()
					if sa.TokensSeen != sb.TokensSeen || sa.Compressions != sb.Compressions || sa.PeakDecodeRows != sb.PeakDecodeRows || sa.PeakRows != sb.PeakRows {
						t.Fatalf("%s partial %v: Stats %+v after Reset, a new cache's %+v", what, partial, sa, sb)
					}
					if rule.Budget > 0 && !partial {
						// 36 kept rows + Reserve 24 fit where the first sequence's did.
						used.Reset()
						resetRun(t, used, second, layout, 2, 0, false)
						for h := range hk {
							if k, _, _ := used.Head(h); unsafe.Pointer(unsafe.SliceData(k)) != before[h] {
								t.Fatalf("%s: head %d's rows moved to new storage after Reset", what, h)
							}
						}
					}
				}
			}
		}
	}
}

// TestLayersReset: a Reset LayersOf with shared votes and a shared long-range table
// selects and decodes a second sequence as new ones do.
func TestLayersReset(t *testing.T) {
	const layers, hq, hk, d = 3, 4, 2, 32
	mk := func() *snapkv.Layers {
		s, err := snapkv.NewLayers(snapkv.LayersConfig{Layers: layers, SharedVotes: true, Cache: snapkv.CacheConfig{
			Select: snapkv.Config{Budget: 30, Window: 8, Kernel: 3}, QHeads: hq, KVHeads: hk, Dim: d,
			Decode: snapkv.DecodeBudget{Budget: 24, Interval: 2, Rule: snapkv.DecodeLongRange, Share: new(snapkv.LongRange)}}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	run := func(s *snapkv.Layers, p []*prefillPrompt[fp16.Float16], seed uint64) []float32 {
		var outs []float32
		for l := range layers {
			out := make([]float32, hq*p[l].n*d)
			if err := s.PrefillAttend(l, out, p[l].chunk(0, p[l].n, snapkv.HeadMajor, true)); err != nil {
				t.Fatal(err)
			}
			outs = append(outs, out...)
		}
		r := rand.New(rand.NewPCG(seed, 3))
		for range 12 {
			for l := range layers {
				c := s.Layer(l)
				if err := c.Append(batchRows[fp16.Float16](t, r, hk*d), batchRows[fp16.Float16](t, r, hk*d)); err != nil {
					t.Fatal(err)
				}
				q, out := make([]float32, hq*d), make([]float32, hq*d)
				for i := range q {
					q[i] = float32(r.NormFloat64())
				}
				if err := c.Attend(out, q); err != nil {
					t.Fatal(err)
				}
				outs = append(outs, out...)
			}
		}
		return outs
	}
	r := rand.New(rand.NewPCG(11, 12))
	var first, second []*prefillPrompt[fp16.Float16]
	for range layers {
		first = append(first, newPrefillPrompt[fp16.Float16](r, hq, hk, 70, d))
		second = append(second, newPrefillPrompt[fp16.Float16](r, hq, hk, 60, d))
	}
	used := mk()
	run(used, first, 1)
	used.Reset()
	if got, want := run(used, second, 2), run(mk(), second, 2); !sameBits(got, want) {
		t.Fatal("a Reset LayersOf's outputs differ from a new one's")
	}
}
