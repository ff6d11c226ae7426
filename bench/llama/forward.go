package llama

import (
	"fmt"
	"math"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/q8"
)

// KVOf is one layer's KV cache in format E as the forward pass sees it.
// *snapkv.CacheOf[E] implements it; so does the uncompressed cache of this package.
type KVOf[E elem] interface {
	// Append adds one token's rows, k and v [KVHeads][HeadDim values], stored as E.
	Append(k, v []E) error
	// Head returns KV head h's rows, k and v [rows][HeadDim values], and their positions.
	Head(h int) (k, v []E, pos []int32)
	// Offset is the position of the next token: RoPE rotates it by this.
	Offset() int
}

// KV is the fp16 cache, *snapkv.Cache's format.
type KV = KVOf[fp16.Float16]

// engine runs the model with its KV cache in format E: every K and V row is rounded to
// E as it is written, and the attention reads the stored rows with E's kernels.
type engine[E elem] struct {
	*Model
	c   *codec[E]
	row int // elements of one head's row: HeadDim/c.per
}

func newEngine[E elem](m *Model) (*engine[E], error) {
	c := codecOf[E]()
	if m.HeadDim%c.per != 0 {
		return nil, fmt.Errorf("llama: a %v cache needs head_dim a multiple of %d, the model has %d", c.format, c.per, m.HeadDim)
	}
	return &engine[E]{Model: m, c: c, row: m.HeadDim / c.per}, nil
}

// mustEngine is newEngine for formats every model takes (fp16, float32).
func mustEngine[E elem](m *Model) *engine[E] {
	e, err := newEngine[E](m)
	if err != nil {
		panic(err)
	}
	return e
}

// state is the scratch of one token's forward pass.
type state[E elem] struct {
	rope      *rope
	x, a      []float32 // residual stream, normed input [DModel]
	q, attn   []float32 // [QHeads·HeadDim]
	k, v      []float32 // [KVHeads·HeadDim]
	kh, vh    []E       // k and v as stored: [KVHeads][row]
	gate, up  []float32 // [FFNDim]
	scores    []float32 // [group·rows], the float32 cache's attention
	hidden    [][]float32
	logitsBuf []float32
}

func (e *engine[E]) newState() *state[E] {
	c := e.Config
	s := &state[E]{
		rope:      newRope(c.HeadDim, c.RopeTheta),
		x:         make([]float32, c.DModel),
		a:         make([]float32, c.DModel),
		q:         make([]float32, c.QHeads*c.HeadDim),
		attn:      make([]float32, c.QHeads*c.HeadDim),
		k:         make([]float32, c.KVHeads*c.HeadDim),
		v:         make([]float32, c.KVHeads*c.HeadDim),
		kh:        make([]E, c.KVHeads*e.row),
		vh:        make([]E, c.KVHeads*e.row),
		gate:      make([]float32, c.FFNDim),
		up:        make([]float32, c.FFNDim),
		hidden:    make([][]float32, c.Layers+1),
		logitsBuf: make([]float32, c.Vocab),
	}
	for i := range s.hidden {
		s.hidden[i] = make([]float32, c.DModel)
	}
	return s
}

// forward runs token tok at position caches[0].Offset() through every layer, appending
// its K and V rows, rounded to E, to each layer's cache, and returns the logits if
// wantLogits (a slice of s that the next call overwrites).
func (e *engine[E]) forward(s *state[E], caches []KVOf[E], tok byte, wantLogits bool) ([]float32, error) {
	m, c := e.Model, e.Config
	if len(caches) != c.Layers {
		return nil, fmt.Errorf("llama: %d caches for %d layers", len(caches), c.Layers)
	}
	if int(tok) >= c.Vocab {
		return nil, fmt.Errorf("llama: token %d outside the vocabulary of %d", tok, c.Vocab)
	}
	pos := caches[0].Offset()
	s.rope.at(pos)
	copy(s.x, m.embed[int(tok)*c.DModel:][:c.DModel])
	copy(s.hidden[0], s.x)
	group := c.QHeads / c.KVHeads
	for l := range m.layers {
		w := &m.layers[l]
		rmsNorm(s.a, s.x, w.attnNorm, c.NormEps)
		matVec(s.q, w.wq, s.a)
		matVec(s.k, w.wk, s.a)
		matVec(s.v, w.wv, s.a)
		s.rope.rotate(s.q)
		s.rope.rotate(s.k)
		e.c.narrow(s.kh, s.k)
		e.c.narrow(s.vh, s.v)
		if err := caches[l].Append(s.kh, s.vh); err != nil {
			return nil, fmt.Errorf("llama: layer %d: %w", l, err)
		}
		if a, ok := caches[l].(attender); ok {
			if err := a.Attend(s.attn, s.q); err != nil {
				return nil, fmt.Errorf("llama: layer %d: %w", l, err)
			}
		} else {
			for h := 0; h < c.KVHeads; h++ {
				keys, values, _ := caches[l].Head(h)
				e.attend(s, h, group, keys, values)
			}
		}
		matVecAdd(s.x, w.wo, s.attn)
		e.feedForward(s, w, s.x)
		copy(s.hidden[l+1], s.x)
	}
	if !wantLogits {
		return nil, nil
	}
	rmsNorm(s.a, s.x, m.norm, c.NormEps)
	matVec(s.logitsBuf, m.output, s.a)
	return s.logitsBuf, nil
}

// feedForward adds layer w's SwiGLU feed-forward of x's norm to x, one position's
// residual stream.
func (e *engine[E]) feedForward(s *state[E], w *layer, x []float32) {
	rmsNorm(s.a, x, w.ffnNorm, e.NormEps)
	matVec(s.gate, w.w1, s.a)
	matVec(s.up, w.w3, s.a)
	for i, g := range s.gate {
		s.gate[i] = g / float32(1+math.Exp(float64(-g))) * s.up[i]
	}
	matVecAdd(x, w.w2, s.gate)
}

// attender is a cache that computes one token's attention over its own rows, as
// *snapkv.CacheOf[E] does (Attend, which also runs its decode budget): out and q
// [QHeads][HeadDim], scale 1/√HeadDim.
type attender interface {
	Attend(out, q []float32) error
}

// attend computes the attention outputs of the query heads that share KV head h:
// softmax(q·Kᵀ/√HeadDim)·V over the n cached rows, with format E's fused kernel
// (kernels.Attend, AttendBF16 or AttendQ8), which reads each row once for the whole
// group. The float32 cache, which has no fused kernel, runs the composition it
// stands for: one Scores block for the group, then Softmax and WeightedSumRows per
// query head.
func (e *engine[E]) attend(s *state[E], h, group int, keys, values []E) {
	d := e.HeadDim
	n := len(keys) / e.row
	q, out := s.q[h*group*d:(h+1)*group*d], s.attn[h*group*d:(h+1)*group*d]
	scale := float32(1 / math.Sqrt(float64(d)))
	switch k := any(keys).(type) {
	case []fp16.Float16:
		kernels.Attend(out, q, k, any(values).([]fp16.Float16), group, n, d, scale)
		return
	case []bf16.BFloat16:
		kernels.AttendBF16(out, q, k, any(values).([]bf16.BFloat16), group, n, d, scale)
		return
	case []q8.Block:
		kernels.AttendQ8(out, q, k, any(values).([]q8.Block), group, n, d, scale)
		return
	}
	if cap(s.scores) < group*n {
		s.scores = make([]float32, group*n, 2*group*n)
	}
	sc := s.scores[:group*n]
	e.c.scores(sc, q, keys, group, n, d, scale)
	for j := 0; j < group; j++ {
		p := sc[j*n : (j+1)*n]
		kernels.Softmax(p)
		e.c.weighted(out[j*d:(j+1)*d], p, values)
	}
}

// rmsNorm sets dst to x·(1/√(mean(x²)+eps))·w.
func rmsNorm(dst, x, w []float32, eps float64) {
	ms := kernels.DotF32(x, x) / float32(len(x))
	r := float32(1 / math.Sqrt(float64(ms)+eps))
	for i, v := range x {
		dst[i] = v * r * w[i]
	}
}

// matVec sets dst = W·x for W [len(dst)][len(x)].
func matVec(dst, w, x []float32) {
	n := len(x)
	for o := range dst {
		dst[o] = kernels.DotF32(w[o*n:(o+1)*n], x)
	}
}

// matVecAdd adds W·x to dst.
func matVecAdd(dst, w, x []float32) {
	n := len(x)
	for o := range dst {
		dst[o] += kernels.DotF32(w[o*n:(o+1)*n], x)
	}
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}
