package snapkv

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/kernels"
)

// maxLayers bounds LayersConfig.Layers, as maxHeads bounds the heads: no model has
// more than a few hundred layers.
const maxLayers = 1 << 16

// LayersConfig configures one sequence's caches for every layer of a model.
type LayersConfig struct {
	// Cache configures every layer's cache. Its Select.Budget (or KeepRatio) is every
	// layer's budget unless Budgets is set.
	Cache  CacheConfig
	Layers int // 1 to 1<<16
	// Budgets, if not nil, is each layer's budget C, Layers of them, each ≥ 1:
	// [PyramidBudgets]' result or the engine's own schedule. They replace
	// Cache.Select.Budget and KeepRatio.
	Budgets []int
	// SharedVotes selects every layer's rows from one score source, the window
	// attention of the VoteLayers averaged over them, instead of each layer's own: each
	// layer's selection waits until the last of the VoteLayers has received its Last
	// chunk (see [LayersOf]). It needs ModeFaithful and each layer's window queries
	// (Chunk.Q), never Chunk.Attn.
	SharedVotes bool
	// VoteLayers are the layers whose window attention votes under SharedVotes, each
	// once, averaged in this order; empty means every layer. Without SharedVotes it
	// must be empty.
	VoteLayers []int
}

// LayersOf is one sequence's compressed KV cache for every layer of a model, its rows
// of element type E (fp16, bf16 or q8_0, either [Layout]): a [CacheOf] per layer, the
// layers' budgets from [LayersConfig]. The engine prefills layer l's chunks with
// Prefill(l, chunk) or PrefillAttend(l, out, chunk), never through the layer's own
// cache, and decodes with Layer(l)'s Head, Append and Offset.
//
// Without SharedVotes each layer selects from its own window when its Last chunk
// arrives, as its CacheOf alone would.
//
// With SharedVotes every layer keeps the rows that the VoteLayers together attend to.
// A layer's Last chunk is added to its prompt rows without selecting; once the last of
// the VoteLayers has had its Last chunk, the shared attention A [QHeads][W][L] is
//
//	A = (Σ_{l ∈ VoteLayers} softmax(Scale·Qwin_l·K_lᵀ)) / |VoteLayers|   (Scale: CacheConfig.Scale, 0: 1/√Dim)
//
// each layer's causal window attention as the one-layer selection computes it from
// its window queries (a window row at position L−W+r sees keys 0 .. L−W+r), summed
// elementwise in VoteLayers' order and divided by their count in float32. Every layer
// that has had its Last chunk then selects with A as its Chunk.Attn (under its own
// budget, rule, pooling and group reduction), and a layer whose Last chunk comes later
// selects on arrival. Every layer's prompt must be as long.
//
// Why: a layer's own votes are only as good as that layer's attention. In a model
// where one layer retrieves (an induction or retrieval layer attends from the question
// to the answer's rows) and the others attend to local or positional patterns, the
// other layers keep rows that their decode attention will not need and drop the ones
// it will: sharing the votes makes every layer keep what the retrieving layers find,
// and choosing VoteLayers to be those layers keeps their peaks from being averaged
// away. docs/passkey.md measures both on a real model.
//
// Memory: a layer holds its whole prompt (KVHeads·L rows of K and of V, their
// positions and its last W queries, as a ModeFaithful [CacheOf] does) from its first
// chunk until it selects. With SharedVotes and layers prefilled in order, the peak is
// therefore the prompts of every layer up to the last of the VoteLayers (all layers
// when VoteLayers is empty) at once, plus A (QHeads·W·L float32) from the last vote
// layer's Last chunk until every layer has selected, and one query head's score block
// (W·L float32) while A is computed, on the caller's goroutine.
//
// ModeBounded cannot share votes (its layers select after every chunk, before the
// other layers' windows exist): SharedVotes with ModeBounded is an error. Without
// SharedVotes each layer's ModeBounded cache works as alone.
//
// A LayersOf is not safe for concurrent use. Errors name the bad value; a chunk that
// fails its checks leaves the layer as it was.
type LayersOf[E Element] struct {
	cfg    LayersConfig
	layers []*CacheOf[E]
	votes  []int  // the vote layers, in averaging order
	ended  []bool // layer's Last chunk arrived
	waited int    // vote layers whose Last chunk arrived
	length int    // the prompt length, once a Last chunk fixed it; −1 before
	attn   []float32
	open   int // layers that have not selected yet
}

// Layers is the fp16 LayersOf: K and V hold halves.
type Layers = LayersOf[fp16.Float16]

// NewLayers validates cfg and returns empty fp16 caches for its layers.
func NewLayers(cfg LayersConfig) (*Layers, error) { return NewLayersOf[fp16.Float16](cfg) }

// NewLayersOf validates cfg and returns empty caches of element type E for its layers.
func NewLayersOf[E Element](cfg LayersConfig) (*LayersOf[E], error) {
	switch {
	case cfg.Layers < 1 || cfg.Layers > maxLayers:
		return nil, fmt.Errorf("snapkv: LayersConfig.Layers %d, want 1 to %d", cfg.Layers, maxLayers)
	case cfg.Budgets != nil && len(cfg.Budgets) != cfg.Layers:
		return nil, fmt.Errorf("snapkv: LayersConfig.Budgets has %d budgets for %d layers", len(cfg.Budgets), cfg.Layers)
	case cfg.SharedVotes && cfg.Cache.Mode == ModeDense:
		return nil, errors.New("snapkv: LayersConfig.SharedVotes with ModeDense, which selects nothing; use ModeFaithful")
	case cfg.SharedVotes && cfg.Cache.Mode == ModeBounded:
		return nil, errors.New("snapkv: LayersConfig.SharedVotes with ModeBounded: shared votes select once, from every layer's whole prompt; use ModeFaithful")
	case !cfg.SharedVotes && len(cfg.VoteLayers) > 0:
		return nil, fmt.Errorf("snapkv: LayersConfig.VoteLayers %v without SharedVotes", cfg.VoteLayers)
	}
	for l, b := range cfg.Budgets {
		if b < 1 {
			return nil, fmt.Errorf("snapkv: LayersConfig.Budgets[%d] = %d, want ≥ 1", l, b)
		}
	}
	s := &LayersOf[E]{cfg: cfg, layers: make([]*CacheOf[E], cfg.Layers), ended: make([]bool, cfg.Layers), length: -1, open: cfg.Layers}
	if cfg.SharedVotes {
		s.votes = slices.Clone(cfg.VoteLayers)
		if len(s.votes) == 0 {
			s.votes = make([]int, cfg.Layers)
			for l := range s.votes {
				s.votes[l] = l
			}
		}
		seen := make([]bool, cfg.Layers)
		for _, l := range s.votes {
			if l < 0 || l >= cfg.Layers {
				return nil, fmt.Errorf("snapkv: LayersConfig.VoteLayers holds layer %d, want 0 to %d", l, cfg.Layers-1)
			}
			if seen[l] {
				return nil, fmt.Errorf("snapkv: LayersConfig.VoteLayers holds layer %d twice", l)
			}
			seen[l] = true
		}
	}
	for l := range s.layers {
		cc := cfg.Cache
		if cfg.Budgets != nil {
			cc.Select.Budget, cc.Select.KeepRatio = cfg.Budgets[l], 0
		}
		c, err := NewCacheOf[E](cc)
		if err != nil {
			return nil, layerErr(l, err)
		}
		s.layers[l] = c
	}
	return s, nil
}

// Layer returns layer l's cache, for its Head, Append, Offset and Stats; nil if l is
// outside [0, Layers). Prefill its chunks through [LayersOf.Prefill], not its own.
func (s *LayersOf[E]) Layer(l int) *CacheOf[E] {
	if l < 0 || l >= len(s.layers) {
		return nil
	}
	return s.layers[l]
}

// Reset empties every layer for another sequence ([CacheOf.Reset]), the same
// configuration and storage, and forgets the shared votes' progress; a DecodeLongRange
// table shared through the layers' DecodeBudget.Share is reset too.
func (s *LayersOf[E]) Reset() {
	for _, c := range s.layers {
		c.Reset()
	}
	if share := s.cfg.Cache.Decode.Share; share != nil {
		share.Reset()
	}
	clear(s.ended)
	s.waited, s.length, s.attn, s.open = 0, -1, nil, len(s.layers)
}

// Prefill adds a chunk of layer l's prompt rows (see [ChunkOf] and [CacheOf.Prefill]).
// With SharedVotes, a Last chunk selects the layer only once the VoteLayers' windows
// are all known, and the Last chunk of the last of them selects every layer that
// waited.
func (s *LayersOf[E]) Prefill(l int, ch ChunkOf[E]) error { return s.prefill(l, nil, ch, false) }

// prefill is Prefill, and with attend PrefillAttend.
func (s *LayersOf[E]) prefill(l int, out []float32, ch ChunkOf[E], attend bool) error {
	if l < 0 || l >= len(s.layers) {
		return fmt.Errorf("snapkv: Prefill of layer %d, want 0 to %d", l, len(s.layers)-1)
	}
	c := s.layers[l]
	if !s.cfg.SharedVotes {
		return layerErr(l, c.prefill(out, ch, attend))
	}
	switch {
	case s.ended[l]:
		return fmt.Errorf("snapkv: Prefill of layer %d after its last chunk", l)
	case ch.Attn != nil:
		return fmt.Errorf("snapkv: Chunk.Attn for layer %d with SharedVotes, which computes the shared attention from each layer's Chunk.Q", l)
	case ch.Last && !c.sawQ && ch.Q == nil:
		return fmt.Errorf("snapkv: layer %d: SharedVotes needs the layer's window queries, and no chunk gave Chunk.Q", l)
	}
	n, err := c.checkChunk(ch) // as the last chunk, if it is: its queries must cover the window
	if err != nil {
		return layerErr(l, err)
	}
	if ch.Last && s.length >= 0 && c.prompt+n != s.length {
		return fmt.Errorf("snapkv: layer %d's prompt of %d rows, the other layers' have %d", l, c.prompt+n, s.length)
	}
	last := ch.Last
	ch.Last = false // the rows join the prompt; the selection waits for the votes
	if err := c.prefill(out, ch, attend); err != nil {
		return layerErr(l, err)
	}
	if !last {
		return nil
	}
	s.ended[l], s.length = true, c.prompt
	if slices.Contains(s.votes, l) {
		s.waited++
	}
	switch {
	case s.attn != nil:
		return s.finish(l)
	case s.waited < len(s.votes):
		return nil
	}
	s.attn = s.sharedAttention()
	for w := range s.layers {
		if s.ended[w] {
			if err := s.finish(w); err != nil {
				return err
			}
		}
	}
	return nil
}

// finish selects layer l's rows with the shared attention and drops the attention
// when the last layer has selected.
func (s *LayersOf[E]) finish(l int) error {
	if err := s.layers[l].Prefill(ChunkOf[E]{Attn: s.attn, Last: true}); err != nil {
		return layerErr(l, err)
	}
	if s.open--; s.open == 0 {
		s.attn = nil
	}
	return nil
}

// sharedAttention is A, [QHeads][W][L]: the vote layers' causal window attention,
// summed in their order and divided by their count. Each layer's working area is
// head-major and its query window [QHeads][W][Dim] whatever the chunks' Layout.
func (s *LayersOf[E]) sharedAttention() []float32 {
	cc := &s.cfg.Cache
	n := s.length
	w := min(cc.Select.Window, n)
	hq, d, g := cc.QHeads, cc.Dim, cc.QHeads/cc.KVHeads
	scale := cc.scale()
	sum := make([]float32, hq*w*n)
	block := make([]float32, w*n)
	for _, l := range s.votes {
		c := s.layers[l]
		q := c.input(nil).Q
		for j := range hq {
			k, _, _ := c.Head(j / g)
			scoresStrided(block, q[j*w*d:(j+1)*w*d], k, w, n, c.width, c.width, scale)
			for r := range w {
				row := block[r*n : (r+1)*n]
				for t := n - w + r + 1; t < n; t++ {
					row[t] = float32(math.Inf(-1))
				}
				kernels.Softmax(row)
			}
			kernels.Add(sum[j*w*n:(j+1)*w*n], block)
		}
	}
	count := float32(len(s.votes))
	for i := range sum {
		sum[i] /= count
	}
	return sum
}

// layerErr names layer l in err, a layer's error, if any.
func layerErr(l int, err error) error {
	if err == nil {
		return nil
	}
	return &layerError{layer: l, err: err} // pool.go: errors.Is sees ErrPoolFull through it
}
