package llama

import (
	"fmt"
	"math"
	"slices"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/q8"
)

// PrefillOf is a prompt run through the model with full causal attention and its KV
// cache in format E: every layer's stored K and V rows and post-RoPE queries, in
// snapkv's layout, and the logits of the last position (which choose the first
// generated token before any eviction). A row of HeadDim values is HeadDim/32 q8_0
// blocks, HeadDim elements otherwise.
type PrefillOf[E elem] struct {
	Format Format
	Len    int
	K, V   [][]E       // per layer, [KVHeads][Len][row], K after RoPE
	Q      [][]float32 // per layer, [QHeads][Len][HeadDim], after RoPE
	Logits []float32   // [Vocab], last position
	Hidden [][]float32 // last position's residual stream after the embedding and after each layer
	heads  int
	row    int // elements of a row
}

// Prefill is the fp16 cache's prefill.
type Prefill = PrefillOf[fp16.Float16]

// Prefill runs prompt at positions 0 .. len(prompt)−1 with an fp16 cache.
func (m *Model) Prefill(prompt []byte) (*Prefill, error) {
	return mustEngine[fp16.Float16](m).prefill(prompt)
}

// prefill runs prompt through the model with the full (uncompressed) cache: each
// layer's attention is format E's fused causal kernel over the stored rows.
func (e *engine[E]) prefill(prompt []byte) (*PrefillOf[E], error) {
	return e.prefillWith(prompt, e.causal)
}

// promptAttention writes layer l's causal attention over the whole prompt into out:
// out and q [QHeads][L][HeadDim] (post-RoPE queries), k and v [KVHeads][L][row] as
// stored. It is where a prefill's cache does its work.
type promptAttention[E elem] func(l int, out, q []float32, k, v []E) error

// prefillWith runs prompt through the model a layer at a time, as an engine prefills:
// every position's queries, keys and values, then the layer's attention over the
// whole prompt in one call to attend, then every position's output projection and
// feed-forward. Each position's arithmetic outside the attention is the decode step's
// (forward), so only the attention kernel tells a prefill from feeding the prompt one
// token at a time.
func (e *engine[E]) prefillWith(prompt []byte, attend promptAttention[E]) (*PrefillOf[E], error) {
	m, c := e.Model, e.Config
	n := len(prompt)
	if n == 0 || n > c.Context {
		return nil, fmt.Errorf("llama: prompt of %d bytes, want 1 .. %d", n, c.Context)
	}
	dm, d := c.DModel, c.HeadDim
	x := make([]float32, n*dm) // every position's residual stream
	for t, tok := range prompt {
		if int(tok) >= c.Vocab {
			return nil, fmt.Errorf("llama: token %d outside the vocabulary of %d", tok, c.Vocab)
		}
		copy(x[t*dm:(t+1)*dm], m.embed[int(tok)*dm:][:dm])
	}
	p := &PrefillOf[E]{Format: e.c.format, Len: n, K: make([][]E, c.Layers), V: make([][]E, c.Layers), Q: make([][]float32, c.Layers),
		Hidden: make([][]float32, c.Layers+1), heads: c.KVHeads, row: e.row}
	p.Hidden[0] = slices.Clone(x[(n-1)*dm:])
	s := e.newState()
	attn := make([]float32, c.QHeads*n*d) // a layer's attention, [QHeads][L][HeadDim]
	for l := range m.layers {
		w := &m.layers[l]
		k, v, q := make([]E, c.KVHeads*n*e.row), make([]E, c.KVHeads*n*e.row), make([]float32, c.QHeads*n*d)
		p.K[l], p.V[l], p.Q[l] = k, v, q
		for t := range n {
			rmsNorm(s.a, x[t*dm:(t+1)*dm], w.attnNorm, c.NormEps)
			matVec(s.q, w.wq, s.a)
			matVec(s.k, w.wk, s.a)
			matVec(s.v, w.wv, s.a)
			s.rope.at(t)
			s.rope.rotate(s.q)
			s.rope.rotate(s.k)
			e.c.narrow(s.kh, s.k)
			e.c.narrow(s.vh, s.v)
			for h := range c.QHeads {
				copy(q[(h*n+t)*d:][:d], s.q[h*d:])
			}
			for h := range c.KVHeads {
				copy(k[(h*n+t)*e.row:][:e.row], s.kh[h*e.row:])
				copy(v[(h*n+t)*e.row:][:e.row], s.vh[h*e.row:])
			}
		}
		if err := attend(l, attn, q, k, v); err != nil {
			return nil, fmt.Errorf("llama: layer %d: %w", l, err)
		}
		for t := range n {
			xt := x[t*dm : (t+1)*dm]
			for h := range c.QHeads {
				copy(s.attn[h*d:(h+1)*d], attn[(h*n+t)*d:])
			}
			matVecAdd(xt, w.wo, s.attn)
			e.feedForward(s, w, xt)
		}
		p.Hidden[l+1] = slices.Clone(x[(n-1)*dm:])
	}
	rmsNorm(s.a, x[(n-1)*dm:], m.norm, c.NormEps)
	matVec(s.logitsBuf, m.output, s.a)
	p.Logits = slices.Clone(s.logitsBuf)
	return p, nil
}

// causal is the full cache's prompt attention (a promptAttention): per KV head, format
// E's fused causal kernel (kernels.AttendCausal, AttendCausalBF16 or AttendCausalQ8)
// over the stored rows, the whole prompt's queries being the last L of L positions. The
// float32 cache, which has no fused kernel, runs the composition it stands for, the
// decode step's over each position's visible rows.
func (e *engine[E]) causal(_ int, out, q []float32, k, v []E) error {
	c := e.Config
	d, g := c.HeadDim, c.QHeads/c.KVHeads
	n := len(q) / (c.QHeads * d)
	scale := float32(1 / math.Sqrt(float64(d)))
	for h := range c.KVHeads {
		o, qh := out[h*g*n*d:(h+1)*g*n*d], q[h*g*n*d:(h+1)*g*n*d]
		kh, vh := k[h*n*e.row:(h+1)*n*e.row], v[h*n*e.row:(h+1)*n*e.row]
		switch k := any(kh).(type) {
		case []fp16.Float16:
			kernels.AttendCausal(o, qh, k, any(vh).([]fp16.Float16), g, n, n, d, scale)
		case []bf16.BFloat16:
			kernels.AttendCausalBF16(o, qh, k, any(vh).([]bf16.BFloat16), g, n, n, d, scale)
		case []q8.Block:
			kernels.AttendCausalQ8(o, qh, k, any(vh).([]q8.Block), g, n, n, d, scale)
		default:
			e.composeCausal(o, qh, kh, vh, g, n, scale)
		}
	}
	return nil
}

// composeCausal is one KV head's causal attention by the composition: for each
// position t, one score block for the head's g query rows over rows 0 … t, then
// Softmax and the weighted sum per query row, as attend runs it for the float32 cache.
func (e *engine[E]) composeCausal(out, q []float32, k, v []E, g, n int, scale float32) {
	d := e.HeadDim
	qt, sc := make([]float32, g*d), make([]float32, g*n)
	for t := range n {
		for r := range g {
			copy(qt[r*d:(r+1)*d], q[(r*n+t)*d:])
		}
		s := sc[:g*(t+1)]
		e.c.scores(s, qt, k[:(t+1)*e.row], g, t+1, d, scale)
		for r := range g {
			p := s[r*(t+1) : (r+1)*(t+1)]
			kernels.Softmax(p)
			e.c.weighted(out[(r*n+t)*d:(r*n+t+1)*d], p, v[:(t+1)*e.row])
		}
	}
}

// RowsOf is one layer's cache in format E holding chosen prompt rows of a prefill (all
// of them for the full cache, sinks and recent rows for the StreamingLLM baseline) plus
// every decoded row: the cache of the methods that are not SnapKV.
type RowsOf[E elem] struct {
	row  int   // elements of a row
	k, v [][]E // per KV head
	pos  [][]int32
	next int
}

// Rows is the fp16 cache of the methods that are not SnapKV.
type Rows = RowsOf[fp16.Float16]

// Keep returns layer l's cache with, for KV head h, the prompt rows kept[h] (ascending
// positions); kept == nil keeps every row.
func (p *PrefillOf[E]) Keep(l int, kept [][]int32) *RowsOf[E] {
	r := &RowsOf[E]{row: p.row, k: make([][]E, p.heads), v: make([][]E, p.heads), pos: make([][]int32, p.heads), next: p.Len}
	for h := range p.heads {
		var rows []int32
		if kept == nil {
			for t := range p.Len {
				rows = append(rows, int32(t))
			}
		} else {
			rows = slices.Clone(kept[h])
		}
		r.pos[h] = rows
		for _, t := range rows {
			src := (h*p.Len + int(t)) * p.row
			r.k[h] = append(r.k[h], p.K[l][src:src+p.row]...)
			r.v[h] = append(r.v[h], p.V[l][src:src+p.row]...)
		}
	}
	return r
}

func (r *RowsOf[E]) Append(k, v []E) error {
	for h := range r.k {
		r.k[h] = append(r.k[h], k[h*r.row:(h+1)*r.row]...)
		r.v[h] = append(r.v[h], v[h*r.row:(h+1)*r.row]...)
		r.pos[h] = append(r.pos[h], int32(r.next))
	}
	r.next++
	return nil
}

func (r *RowsOf[E]) Head(h int) (k, v []E, pos []int32) { return r.k[h], r.v[h], r.pos[h] }

func (r *RowsOf[E]) Offset() int { return r.next }

// Generate greedily decodes n tokens with fp16 caches after a prefill whose last logits
// are first: the first token is their argmax; each token is then fed at position
// caches[0].Offset() to choose the next.
func (m *Model) Generate(caches []KV, first []float32, n int) ([]byte, error) {
	return mustEngine[fp16.Float16](m).generate(caches, first, n)
}

func (e *engine[E]) generate(caches []KVOf[E], first []float32, n int) ([]byte, error) {
	if n < 1 {
		return nil, nil
	}
	s := e.newState()
	out := []byte{byte(argmax(first))}
	for len(out) < n {
		logits, err := e.forward(s, caches, out[len(out)-1], true)
		if err != nil {
			return nil, err
		}
		out = append(out, byte(argmax(logits)))
	}
	return out, nil
}
