package llama

import (
	"fmt"
	"slices"

	"github.com/kvsimd/kvsimd/fp16"
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

func (e *engine[E]) prefill(prompt []byte) (*PrefillOf[E], error) {
	c := e.Config
	n := len(prompt)
	if n == 0 || n > c.Context {
		return nil, fmt.Errorf("llama: prompt of %d bytes, want 1 .. %d", n, c.Context)
	}
	p := &PrefillOf[E]{Format: e.c.format, Len: n, K: make([][]E, c.Layers), V: make([][]E, c.Layers), Q: make([][]float32, c.Layers),
		heads: c.KVHeads, row: e.row}
	caches := make([]KVOf[E], c.Layers)
	for l := range caches {
		p.K[l] = make([]E, c.KVHeads*n*e.row)
		p.V[l] = make([]E, c.KVHeads*n*e.row)
		p.Q[l] = make([]float32, c.QHeads*n*c.HeadDim)
		caches[l] = &promptKV[E]{k: p.K[l], v: p.V[l], heads: c.KVHeads, len: n, row: e.row}
	}
	s := e.newState()
	t := 0
	s.queryStore = func(l int, q []float32) {
		for h := 0; h < c.QHeads; h++ {
			copy(p.Q[l][(h*n+t)*c.HeadDim:][:c.HeadDim], q[h*c.HeadDim:])
		}
	}
	for t = range prompt {
		logits, err := e.forward(s, caches, prompt[t], t == n-1)
		if err != nil {
			return nil, err
		}
		if logits != nil {
			p.Logits = slices.Clone(logits)
		}
	}
	p.Hidden = s.hidden
	return p, nil
}

// promptKV fills a Prefill's [KVHeads][len][row] arrays row by row; attention sees the
// rows written so far (causal).
type promptKV[E elem] struct {
	k, v            []E
	heads, len, row int
	n               int
}

func (c *promptKV[E]) Append(k, v []E) error {
	if c.n == c.len {
		return fmt.Errorf("llama: prompt cache full at %d rows", c.len)
	}
	for h := 0; h < c.heads; h++ {
		copy(c.k[(h*c.len+c.n)*c.row:][:c.row], k[h*c.row:])
		copy(c.v[(h*c.len+c.n)*c.row:][:c.row], v[h*c.row:])
	}
	c.n++
	return nil
}

func (c *promptKV[E]) Head(h int) (k, v []E, pos []int32) {
	base := h * c.len * c.row
	return c.k[base : base+c.n*c.row], c.v[base : base+c.n*c.row], nil
}

func (c *promptKV[E]) Offset() int { return c.n }

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
