package snapkv_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// The dense cache (ModeDense) is tested against float64 attention over every row, in
// every format and layout, for PrefillAttend and Attend; against the bits of the
// compressed cache configured to keep every row (KeepRatio 1, Window 1, Kernel 1);
// for its rows, Stats, Truncate, Clone and Reset, alone and in LayersOf; and for its
// configuration errors.

// denseSteps is count decode steps (token, lifecycle_test.go) drawn from r.
func denseSteps[E snapkv.Element](r *rand.Rand, count, hq, hk, d int) []token[E] {
	s := make([]token[E], count)
	for i := range s {
		k, v, q := make([]float32, hk*d), make([]float32, hk*d), make([]float32, hq*d)
		for j := range k {
			k[j], v[j] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		for j := range q {
			q[j] = float32(r.NormFloat64())
		}
		s[i] = token[E]{k: narrowTo[E](k), v: narrowTo[E](v), q: q}
	}
	return s
}

func TestDenseCache(t *testing.T) {
	t.Run("fp16", testDenseCache[fp16.Float16])
	t.Run("bf16", testDenseCache[bf16.BFloat16])
	t.Run("q8_0", testDenseCache[q8.Block])
	t.Run("f32", testDenseCache[float32])
}

func testDenseCache[E snapkv.Element](t *testing.T) {
	const hq, hk, n, d, tokens = 4, 2, 90, 64, 6
	g, w := hq/hk, perRow[E](d)
	for _, layout := range []snapkv.Layout{snapkv.HeadMajor, snapkv.TokenMajor} {
		r := rand.New(rand.NewPCG(17, uint64(layout)))
		p := newPrefillPrompt[E](r, hq, hk, n, d)
		steps := denseSteps[E](r, tokens, hq, hk, d)
		newCache := func(cfg snapkv.CacheConfig) *snapkv.CacheOf[E] {
			cfg.QHeads, cfg.KVHeads, cfg.Dim, cfg.Layout, cfg.Reserve = hq, hk, d, layout, 4
			c, err := snapkv.NewCacheOf[E](cfg)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		dense := newCache(snapkv.CacheConfig{Mode: snapkv.ModeDense}) // no Select at all
		keepAll := newCache(snapkv.CacheConfig{Select: snapkv.Config{KeepRatio: 1, Window: 1, Kernel: 1}})
		for _, split := range [][2]int{{0, 30}, {30, 60}, {60, n}} {
			lo, hi := split[0], split[1]
			heldK, heldV := held(dense, hk)
			got, want := make([]float32, hq*(hi-lo)*d), make([]float32, hq*(hi-lo)*d)
			if err := dense.PrefillAttend(got, p.chunk(lo, hi, layout, hi == n)); err != nil {
				t.Fatal(err)
			}
			if err := keepAll.PrefillAttend(want, p.chunk(lo, hi, layout, hi == n)); err != nil {
				t.Fatal(err)
			}
			checkPrefillOut(t, "dense", p, got, heldK, heldV, lo, hi, layout)
			if !sameBits(got, want) {
				t.Fatalf("layout %d chunk [%d, %d): the dense cache's PrefillAttend differs from a KeepRatio 1 cache's", layout, lo, hi)
			}
		}
		every := make([]int32, n)
		for i := range every {
			every[i] = int32(i)
		}
		for h := range hk {
			k, v, pos := dense.Head(h)
			if !slices.Equal(pos, every) || !slices.Equal(k, p.k[h*n*w:(h+1)*n*w]) || !slices.Equal(v, p.v[h*n*w:(h+1)*n*w]) {
				t.Fatalf("layout %d KV head %d: the dense cache holds positions %v, want every row as given", layout, h, pos)
			}
		}
		got, want := decode(t, dense, steps), decode(t, keepAll, steps)
		if !sameBits(got, want) {
			t.Fatalf("layout %d: the dense cache's Attend differs from a KeepRatio 1 cache's", layout)
		}
		// Each step's attention against float64 over every row the cache held then.
		scale := 1 / math.Sqrt(d)
		for h := range hk {
			keys, vals := slices.Clone(p.k[h*n*w:(h+1)*n*w]), slices.Clone(p.v[h*n*w:(h+1)*n*w])
			for i, s := range steps {
				keys, vals = append(keys, s.k[h*w:(h+1)*w]...), append(vals, s.v[h*w:(h+1)*w]...)
				kf, vf := widenFrom(keys), widenFrom(vals)
				key := func(j, e int) float64 { return float64(kf[j*d+e]) }
				value := func(j, e int) float64 { return float64(vf[j*d+e]) }
				extra := 4 * 0x1p-24
				if w != d {
					extra += float64(n+i+1) * 0x1p-24
				}
				for j := h * g; j < (h+1)*g; j++ {
					ref := oracle.Attend(s.q[j*d:(j+1)*d], key, value, 1, n+i+1, d, float32(scale), extra)[0]
					for e := range d {
						if err := ref.Check(e, got[(i*hq+j)*d+e]); err != nil {
							t.Fatalf("layout %d step %d query head %d out[%d]: %v", layout, i, j, e, err)
						}
					}
				}
			}
		}
		st := dense.Stats()
		if st.EvictionRatio != 0 || st.TokensSeen != n+tokens || st.RowsKept[0] != n+tokens || st.PeakRows != n {
			t.Fatalf("layout %d: Stats %+v, want every one of %d rows kept", layout, st, n+tokens)
		}

		// Clone: a fork decodes as the original does, and neither sees the other's rows.
		fork := dense.Clone()
		more := denseSteps[E](r, 3, hq, hk, d)
		a, b := decode(t, dense, more), decode(t, fork, more)
		if !sameBits(a, b) {
			t.Fatalf("layout %d: a clone decodes other bits than its original", layout)
		}
		if err := fork.Append(more[0].k, more[0].v); err != nil {
			t.Fatal(err)
		}
		if _, _, pos := dense.Head(0); len(pos) != n+tokens+3 {
			t.Fatalf("layout %d: the original holds %d rows after its clone's Append, want %d", layout, len(pos), n+tokens+3)
		}

		// Truncate inside the prompt: the cache is a dense cache of the first 70 rows.
		if err := dense.Truncate(70); err != nil {
			t.Fatal(err)
		}
		short := newCache(snapkv.CacheConfig{Mode: snapkv.ModeDense})
		if err := short.Prefill(p.chunk(0, 70, layout, true)); err != nil {
			t.Fatal(err)
		}
		sameCache(t, "Truncate(70)", short, dense, hk)
		if a, b := decode(t, dense, steps), decode(t, short, steps); !sameBits(a, b) || dense.Offset() != 70+tokens {
			t.Fatalf("layout %d: after Truncate(70) the cache decodes other bits than one prefilled with 70 rows (Offset %d)", layout, dense.Offset())
		}

		// Reset: a second sequence on the same cache gives a new cache's bits.
		dense.Reset()
		fresh := newCache(snapkv.CacheConfig{Mode: snapkv.ModeDense})
		for _, c := range []*snapkv.CacheOf[E]{dense, fresh} {
			if err := c.Prefill(p.chunk(0, n, layout, true)); err != nil {
				t.Fatal(err)
			}
		}
		sameCache(t, "Reset", fresh, dense, hk)
		if a, b := decode(t, dense, steps), decode(t, fresh, steps); !sameBits(a, b) {
			t.Fatalf("layout %d: after Reset the cache decodes other bits than a new one", layout)
		}
	}
}

// TestDenseResetAllocs: a dense cache's second sequence after Reset allocates only
// the prompt's working area (its three slices, which the prompt's end lets go, as
// every cache does): the heads' storage and Attend's workspace are reused.
func TestDenseResetAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop the kernels' workspaces at random")
	}
	const hq, hk, n, d = 4, 2, 40, 64
	r := rand.New(rand.NewPCG(5, 5))
	p := newPrefillPrompt[fp16.Float16](r, hq, hk, n, d)
	steps := denseSteps[fp16.Float16](r, 4, hq, hk, d)
	c, err := snapkv.NewCacheOf[fp16.Float16](snapkv.CacheConfig{Mode: snapkv.ModeDense, QHeads: hq, KVHeads: hk, Dim: d,
		Reserve: len(steps), Select: snapkv.Config{Workers: 1}})
	if err != nil {
		t.Fatal(err)
	}
	ch := p.chunk(0, n, snapkv.HeadMajor, true)
	out := make([]float32, hq*d)
	sequence := func() {
		c.Reset()
		if err := c.Prefill(ch); err != nil {
			t.Fatal(err)
		}
		for _, s := range steps {
			if err := c.Append(s.k, s.v); err != nil {
				t.Fatal(err)
			}
			if err := c.Attend(out, s.q); err != nil {
				t.Fatal(err)
			}
		}
	}
	if allocs := testing.AllocsPerRun(10, sequence); allocs > 3 {
		t.Fatalf("a dense sequence after Reset allocates %v times, want at most the working area's 3", allocs)
	}
}

func TestDenseErrors(t *testing.T) {
	base := snapkv.CacheConfig{Mode: snapkv.ModeDense, QHeads: 2, KVHeads: 1, Dim: 32}
	bad := base
	bad.Decode = snapkv.DecodeBudget{Budget: 8, Interval: 1, Rule: snapkv.DecodeRecent}
	if _, err := snapkv.NewCache(bad); err == nil {
		t.Error("ModeDense with a decode budget: no error")
	}
	bad = base
	bad.Select.Workers = -1
	if _, err := snapkv.NewCache(bad); err == nil {
		t.Error("ModeDense with Workers -1: no error")
	}
	bad = base
	bad.Mode = snapkv.ModeDense + 1
	if _, err := snapkv.NewCache(bad); err == nil {
		t.Error("an unknown Mode: no error")
	}
	if _, err := snapkv.NewLayers(snapkv.LayersConfig{Layers: 2, Cache: base, SharedVotes: true}); err == nil {
		t.Error("SharedVotes with ModeDense: no error")
	}
	// A dense cache needs no window queries: a Last chunk without Q is kept whole.
	c, err := snapkv.NewCache(base)
	if err != nil {
		t.Fatal(err)
	}
	k := make([]fp16.Float16, 5*32)
	if err := c.Prefill(snapkv.Chunk{K: k, V: k, Last: true}); err != nil {
		t.Fatal(err)
	}
	if _, _, pos := c.Head(0); len(pos) != 5 {
		t.Fatalf("a dense cache holds %d rows of 5", len(pos))
	}
}

// TestDenseLayers: LayersOf with ModeDense (and per-layer Budgets, which a dense cache
// does not read) keeps every row of every layer, and Truncate, Clone and Reset reach
// every layer.
func TestDenseLayers(t *testing.T) {
	const layers, hq, hk, n, d = 3, 4, 2, 50, 32
	r := rand.New(rand.NewPCG(3, 3))
	p := newPrefillPrompt[fp16.Float16](r, hq, hk, n, d)
	s, err := snapkv.NewLayers(snapkv.LayersConfig{Layers: layers, Budgets: []int{4, 8, 16},
		Cache: snapkv.CacheConfig{Mode: snapkv.ModeDense, QHeads: hq, KVHeads: hk, Dim: d, Reserve: 2}})
	if err != nil {
		t.Fatal(err)
	}
	for l := range layers {
		out := make([]float32, hq*n*d)
		if err := s.PrefillAttend(l, out, p.chunk(0, n, snapkv.HeadMajor, true)); err != nil {
			t.Fatal(err)
		}
	}
	fork := s.Clone()
	if err := s.Truncate(20); err != nil {
		t.Fatal(err)
	}
	for l := range layers {
		for h := range hk {
			k, _, pos := s.Layer(l).Head(h)
			_, _, forked := fork.Layer(l).Head(h)
			if len(pos) != 20 || !slices.Equal(k, p.k[h*n*d:(h*n+20)*d]) || len(forked) != n {
				t.Fatalf("layer %d KV head %d: %d rows after Truncate(20) (want the first 20), the clone %d (want %d)", l, h, len(pos), len(forked), n)
			}
		}
	}
	s.Reset()
	if s.Layer(2).Offset() != 0 || fork.Layer(2).Offset() != n {
		t.Fatalf("after Reset: offsets %d and the clone's %d, want 0 and %d", s.Layer(2).Offset(), fork.Layer(2).Offset(), n)
	}
}
