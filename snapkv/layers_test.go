package snapkv_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// keptOf returns every KV head's positions in c.
func keptOf[E snapkv.Element](c *snapkv.CacheOf[E], heads int) [][]int32 {
	out := make([][]int32, heads)
	for h := range out {
		_, _, pos := c.Head(h)
		out[h] = slices.Clone(pos)
	}
	return out
}

// TestLayersSharedFloat64 holds shared votes to an independent float64 computation:
// each vote layer's causal window softmax in float64 (refProbs), averaged over the vote
// layers, then summed over the window, reduced over the group and pooled as one layer's
// engine attention is (refVotes, refPooled). Every layer must keep an optimal set for
// those votes up to refTol, with its own budget, on every variant.
func TestLayersSharedFloat64(t *testing.T) {
	varianttest.Run(t, func(t *testing.T, variant string) {
		r := rand.New(rand.NewPCG(91, 92))
		const layers, hq, hk, n, w, d = 3, 4, 2, 90, 8, 32
		ps := make([]*problem, layers)
		for l := range ps {
			ps[l] = newProblem(r, hq, hk, n, w, d)
		}
		values := make([]fp16.Float16, hk*n*d)
		budgets, err := snapkv.PyramidBudgets(20, layers, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, votes := range [][]int{nil, {1}, {2, 0}} {
			for _, sel := range []snapkv.Config{
				{Window: w, Kernel: 5, Rule: snapkv.RuleProtected, Sinks: 2},
				{Window: w, Kernel: 3, Pool: snapkv.PoolMax, Group: snapkv.GroupMax},
				{Window: w, Kernel: 1, Group: snapkv.GroupSum, Rule: snapkv.RuleProtected, Sinks: 1, Workers: 2},
			} {
				what := fmt.Sprintf("votes %v %+v", votes, sel)
				s, err := snapkv.NewLayers(snapkv.LayersConfig{Cache: snapkv.CacheConfig{Select: sel, QHeads: hq, KVHeads: hk, Dim: d},
					Layers: layers, Budgets: budgets, SharedVotes: true, VoteLayers: votes})
				if err != nil {
					t.Fatal(err)
				}
				for l, p := range ps {
					if err := s.Prefill(l, snapkv.Chunk{K: p.k, V: values, Q: p.q, Last: true}); err != nil {
						t.Fatalf("%s: layer %d: %v", what, l, err)
					}
				}
				voters := votes
				if voters == nil {
					voters = []int{0, 1, 2}
				}
				attn := make([][][]float64, hq)
				for h := range attn {
					attn[h] = make([][]float64, w)
					for row := range attn[h] {
						attn[h][row] = make([]float64, n)
					}
					for _, l := range voters {
						probs := ps[l].refProbs(ps[l].q[h*w*d:(h+1)*w*d], h/(hq/hk))
						for row := range probs {
							for j, x := range probs[row] {
								attn[h][row][j] += x / float64(len(voters))
							}
						}
					}
				}
				pooled := refPooled(ps[0].refVotes("attn", sel.Group, attn), sel, n, w)
				for l := range layers {
					want := make([]int, hk)
					for h := range want {
						want[h] = budgets[l]
					}
					checkKept(t, fmt.Sprintf("%s layer %d", what, l), keptOf(s.Layer(l), hk), pooled, sel, n, w, want)
				}
			}
		}
	})
}

// TestLayersChunked: in every format and layout, however the layers' prompts are
// chunked and in whatever order the layers' chunks arrive (chunk by chunk through the
// layers as an engine prefills, layer by layer, last layer first), every layer keeps
// the rows of one Last chunk per layer in layer order, bit for bit: with shared votes
// (all layers, or some) and without, where each layer must equal a CacheOf of its own
// budget.
func TestLayersChunked(t *testing.T) {
	t.Run("fp16", layersChunked[fp16.Float16])
	t.Run("bf16", layersChunked[bf16.BFloat16])
	t.Run("q8_0", layersChunked[q8.Block])
	t.Run("f32", layersChunked[float32])
}

func layersChunked[E snapkv.Element](t *testing.T) {
	r := rand.New(rand.NewPCG(93, 94))
	const layers, hq, hk, n, w, d = 3, 4, 2, 100, 8, 64
	wd := perRow[E](d)
	ls := make([]*layer, layers)
	k, v := make([][]E, layers), make([][]E, layers)
	for l := range ls {
		ls[l] = newLayer(r, hq, hk, n, w, d)
		k[l], v[l] = keysAs[E](t, ls[l].k), randomRows[E](r, hk*n*wd)
	}
	budgets, err := snapkv.PyramidBudgets(24, layers, 2)
	if err != nil {
		t.Fatal(err)
	}
	sel := snapkv.Config{Budget: 24, Window: w, Kernel: 5, Rule: snapkv.RuleProtected, Sinks: 2}
	orders := map[string]func(layers, chunks int) [][2]int{
		"chunk by chunk": func(layers, chunks int) (o [][2]int) {
			for c := range chunks {
				for l := range layers {
					o = append(o, [2]int{l, c})
				}
			}
			return o
		},
		"layer by layer, last first": func(layers, chunks int) (o [][2]int) {
			for l := layers - 1; l >= 0; l-- {
				for c := range chunks {
					o = append(o, [2]int{l, c})
				}
			}
			return o
		},
	}
	for _, lc := range []snapkv.LayersConfig{
		{SharedVotes: true},
		{SharedVotes: true, VoteLayers: []int{1}, Budgets: budgets},
		{Budgets: budgets},
	} {
		lc.Layers = layers
		lc.Cache = snapkv.CacheConfig{Select: sel, QHeads: hq, KVHeads: hk, Dim: d, Reserve: 1}
		oneShot, err := snapkv.NewLayersOf[E](lc)
		if err != nil {
			t.Fatal(err)
		}
		for l := range layers {
			if err := oneShot.Prefill(l, cutChunks(ls[l], k[l], v[l], wd, lc.Cache, []int{n}, byQueries)[0]); err != nil {
				t.Fatal(err)
			}
			if lc.SharedVotes {
				continue
			}
			cc := lc.Cache
			cc.Select.Budget = budgets[l]
			alone, err := snapkv.NewCacheOf[E](cc)
			if err != nil {
				t.Fatal(err)
			}
			if err := alone.Prefill(cutChunks(ls[l], k[l], v[l], wd, cc, []int{n}, byQueries)[0]); err != nil {
				t.Fatal(err)
			}
			if got, want := keptOf(oneShot.Layer(l), hk), keptOf(alone, hk); !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
				t.Fatalf("%s %+v layer %d: kept %v, a CacheOf of budget %d %v", formatName[E](), lc, l, got, budgets[l], want)
			}
		}
		for _, layout := range []snapkv.Layout{snapkv.HeadMajor, snapkv.TokenMajor} {
			for _, sizes := range [][]int{{40, 60}, {7, 1, 89, 3}, {97, 3, 0}} {
				for name, order := range orders {
					what := fmt.Sprintf("%s votes %v budgets %v layout %d chunks %v %s", formatName[E](), lc.VoteLayers, lc.Budgets, layout, sizes, name)
					lc.Cache.Layout = layout
					s, err := snapkv.NewLayersOf[E](lc)
					if err != nil {
						t.Fatal(err)
					}
					chunks := make([][]snapkv.ChunkOf[E], layers)
					for l := range chunks {
						chunks[l] = cutChunks(ls[l], k[l], v[l], wd, lc.Cache, sizes, byQueries)
						if layout == snapkv.TokenMajor {
							for i := range chunks[l] {
								chunks[l][i] = tokenMajorChunk(chunks[l][i], hq, hk, d, wd)
							}
						}
					}
					for _, lcIdx := range order(layers, len(sizes)) {
						if err := s.Prefill(lcIdx[0], chunks[lcIdx[0]][lcIdx[1]]); err != nil {
							t.Fatalf("%s: layer %d chunk %d: %v", what, lcIdx[0], lcIdx[1], err)
						}
					}
					for l := range layers {
						sameRows(t, fmt.Sprintf("%s layer %d", what, l), s.Layer(l), oneShot.Layer(l), hk)
					}
				}
			}
		}
	}
}

// sameRows requires c to hold want's positions in every head, with the same K and V
// elements.
func sameRows[E snapkv.Element](t *testing.T, what string, c, want *snapkv.CacheOf[E], heads int) {
	t.Helper()
	for h := range heads {
		k, v, pos := c.Head(h)
		wk, wv, wpos := want.Head(h)
		if !slices.Equal(pos, wpos) {
			t.Fatalf("%s head %d: positions %v, want %v", what, h, pos, wpos)
		}
		if !slices.Equal(k, wk) || !slices.Equal(v, wv) {
			t.Fatalf("%s head %d: the kept rows differ", what, h)
		}
	}
}

// TestLayersDeferred: with shared votes a layer holds its whole prompt until the last
// of the vote layers has had its Last chunk, then keeps its budget; a layer whose Last
// chunk comes after that selects at once, and decoding works on every layer.
func TestLayersDeferred(t *testing.T) {
	r := rand.New(rand.NewPCG(95, 96))
	const layers, hq, hk, n, w, d = 3, 2, 1, 50, 4, 16
	ls := make([]*layer, layers)
	for l := range ls {
		ls[l] = newLayer(r, hq, hk, n, w, d)
	}
	sel := snapkv.Config{Budget: 12, Window: w, Kernel: 3}
	rowsHeld := func(s *snapkv.Layers) []int {
		out := make([]int, layers)
		for l := range out {
			out[l] = s.Layer(l).Stats().RowsKept[0]
		}
		return out
	}
	for _, tc := range []struct {
		votes []int
		after [][]int // rows held by each layer after layer 0's, 1's and 2's Last chunk
	}{
		{nil, [][]int{{n, 0, 0}, {n, n, 0}, {12, 12, 12}}},
		{[]int{0}, [][]int{{12, 0, 0}, {12, 12, 0}, {12, 12, 12}}},
		{[]int{1}, [][]int{{n, 0, 0}, {12, 12, 0}, {12, 12, 12}}},
	} {
		s, err := snapkv.NewLayers(snapkv.LayersConfig{Cache: snapkv.CacheConfig{Select: sel, QHeads: hq, KVHeads: hk, Dim: d},
			Layers: layers, SharedVotes: true, VoteLayers: tc.votes})
		if err != nil {
			t.Fatal(err)
		}
		for l := range layers {
			if err := s.Prefill(l, ls[l].chunks(snapkv.CacheConfig{Select: sel}, []int{n}, byQueries)[0]); err != nil {
				t.Fatal(err)
			}
			if got := rowsHeld(s); !slices.Equal(got, tc.after[l]) {
				t.Errorf("votes %v: after layer %d's last chunk the layers hold %v rows, want %v", tc.votes, l, got, tc.after[l])
			}
		}
		for l := range layers {
			c := s.Layer(l)
			if err := c.Append(make([]fp16.Float16, hk*d), make([]fp16.Float16, hk*d)); err != nil || c.Offset() != n+1 {
				t.Errorf("votes %v layer %d: Append: %v, Offset %d", tc.votes, l, err, c.Offset())
			}
		}
	}
}

// TestLayersErrors: bad configurations and misuse return errors naming the value, and
// a rejected chunk leaves its layer as it was.
func TestLayersErrors(t *testing.T) {
	const hq, hk, d = 2, 1, 4
	cache := snapkv.CacheConfig{Select: snapkv.Config{Budget: 4, Window: 2, Kernel: 1}, QHeads: hq, KVHeads: hk, Dim: d}
	good := snapkv.LayersConfig{Cache: cache, Layers: 2, SharedVotes: true}
	with := func(f func(*snapkv.LayersConfig)) snapkv.LayersConfig { c := good; f(&c); return c }
	for _, tc := range []struct {
		cfg  snapkv.LayersConfig
		want string
	}{
		{with(func(c *snapkv.LayersConfig) { c.Layers = 0 }), "Layers 0"},
		{with(func(c *snapkv.LayersConfig) { c.Layers = 1<<16 + 1 }), "Layers 65537"},
		{with(func(c *snapkv.LayersConfig) { c.Budgets = []int{4} }), "1 budgets for 2 layers"},
		{with(func(c *snapkv.LayersConfig) { c.Budgets = []int{4, 0} }), "Budgets[1] = 0"},
		{with(func(c *snapkv.LayersConfig) { c.Cache.Mode = snapkv.ModeBounded }), "SharedVotes with ModeBounded"},
		{with(func(c *snapkv.LayersConfig) { c.SharedVotes, c.VoteLayers = false, []int{1} }), "VoteLayers [1] without SharedVotes"},
		{with(func(c *snapkv.LayersConfig) { c.VoteLayers = []int{2} }), "layer 2, want 0 to 1"},
		{with(func(c *snapkv.LayersConfig) { c.VoteLayers = []int{-1} }), "layer -1, want 0 to 1"},
		{with(func(c *snapkv.LayersConfig) { c.VoteLayers = []int{1, 1} }), "layer 1 twice"},
		{with(func(c *snapkv.LayersConfig) { c.Cache.KVHeads = 0 }), "layer 0: CacheConfig.KVHeads 0"},
		{with(func(c *snapkv.LayersConfig) { c.Cache.Select.Kernel = 2 }), "Kernel 2"},
	} {
		if _, err := snapkv.NewLayers(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewLayers(%+v) = %v, want an error naming %q", tc.cfg, err, tc.want)
		}
	}

	halves := func(rows int) []fp16.Float16 { return make([]fp16.Float16, hk*rows*d) }
	queries := func(rows int) []float32 { return make([]float32, hq*rows*d) }
	chunk := func(rows int, last bool) snapkv.Chunk {
		return snapkv.Chunk{K: halves(rows), V: halves(rows), Q: queries(rows), Last: last}
	}
	for _, tc := range []struct {
		name string
		run  func(s *snapkv.Layers) error
		want string
	}{
		{"layer -1", func(s *snapkv.Layers) error { return s.Prefill(-1, chunk(8, true)) }, "layer -1, want 0 to 1"},
		{"layer 2", func(s *snapkv.Layers) error { return s.Prefill(2, chunk(8, true)) }, "layer 2, want 0 to 1"},
		{"attn", func(s *snapkv.Layers) error {
			ch := chunk(8, true)
			ch.Q, ch.Attn = nil, make([]float32, hq*2*8)
			return s.Prefill(0, ch)
		}, "Chunk.Attn for layer 0 with SharedVotes"},
		{"no queries", func(s *snapkv.Layers) error {
			ch := chunk(8, true)
			ch.Q = nil
			return s.Prefill(1, ch)
		}, "layer 1: SharedVotes needs the layer's window queries"},
		{"short window", func(s *snapkv.Layers) error {
			if err := s.Prefill(0, snapkv.Chunk{K: halves(6), V: halves(6)}); err != nil {
				return nil
			}
			return s.Prefill(0, snapkv.Chunk{K: halves(1), V: halves(1), Q: queries(1), Last: true})
		}, "layer 0: Chunk.Q: the window needs the queries of the last 2 positions, the chunks gave 1"},
		{"bad K", func(s *snapkv.Layers) error { return s.Prefill(1, snapkv.Chunk{K: halves(8)[:3], V: halves(8)[:3]}) }, "layer 1: len(Chunk.K) = 3"},
		{"lengths", func(s *snapkv.Layers) error {
			if err := s.Prefill(0, chunk(8, true)); err != nil {
				return nil
			}
			return s.Prefill(1, chunk(7, true))
		}, "layer 1's prompt of 7 rows, the other layers' have 8"},
		{"after last", func(s *snapkv.Layers) error {
			if err := s.Prefill(0, chunk(8, true)); err != nil {
				return nil
			}
			return s.Prefill(0, chunk(1, false))
		}, "Prefill of layer 0 after its last chunk"},
	} {
		s, err := snapkv.NewLayers(good)
		if err != nil {
			t.Fatal(err)
		}
		if err := tc.run(s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
			continue
		}
		// The rejected chunk changed nothing: both layers still take an 8-row prompt
		// (whatever a setup chunk before it added) and select.
		for l := range 2 {
			rows := 8 - s.Layer(l).Offset()
			if err := s.Prefill(l, chunk(rows, true)); err != nil && !strings.Contains(err.Error(), "after its last chunk") {
				t.Errorf("%s: layer %d after the error: %v", tc.name, l, err)
			}
		}
		for l := range 2 {
			if got := s.Layer(l).Stats().RowsKept[0]; got != 4 {
				t.Errorf("%s: layer %d keeps %d rows after the error, want the budget 4", tc.name, l, got)
			}
		}
	}
	if s, _ := snapkv.NewLayers(good); s.Layer(2) != nil || s.Layer(-1) != nil {
		t.Error("Layer outside [0, Layers) is not nil")
	}
}
