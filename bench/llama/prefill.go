package llama

import (
	"fmt"
	"slices"

	"github.com/kvsimd/kvsimd/fp16"
)

// Prefill is a prompt run through the model with full causal attention: every layer's
// fp16 K and V rows and post-RoPE queries, in snapkv's layout, and the logits of the
// last position (which choose the first generated token before any eviction).
type Prefill struct {
	Len    int
	K, V   [][]fp16.Float16 // per layer, [KVHeads][Len][HeadDim], K after RoPE
	Q      [][]float32      // per layer, [QHeads][Len][HeadDim], after RoPE
	Logits []float32        // [Vocab], last position
	Hidden [][]float32      // last position's residual stream after the embedding and after each layer
}

// Prefill runs prompt at positions 0 .. len(prompt)−1.
func (m *Model) Prefill(prompt []byte) (*Prefill, error) {
	c := m.Config
	n := len(prompt)
	if n == 0 || n > c.Context {
		return nil, fmt.Errorf("llama: prompt of %d bytes, want 1 .. %d", n, c.Context)
	}
	p := &Prefill{Len: n, K: make([][]fp16.Float16, c.Layers), V: make([][]fp16.Float16, c.Layers), Q: make([][]float32, c.Layers)}
	caches := make([]KV, c.Layers)
	for l := range caches {
		p.K[l] = make([]fp16.Float16, c.KVHeads*n*c.HeadDim)
		p.V[l] = make([]fp16.Float16, c.KVHeads*n*c.HeadDim)
		p.Q[l] = make([]float32, c.QHeads*n*c.HeadDim)
		caches[l] = &promptKV{k: p.K[l], v: p.V[l], heads: c.KVHeads, len: n, dim: c.HeadDim}
	}
	s := m.newState()
	t := 0
	s.queryStore = func(l int, q []float32) {
		for h := 0; h < c.QHeads; h++ {
			copy(p.Q[l][(h*n+t)*c.HeadDim:][:c.HeadDim], q[h*c.HeadDim:])
		}
	}
	for t = range prompt {
		logits, err := m.forward(s, caches, prompt[t], t == n-1)
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

// promptKV fills a Prefill's [KVHeads][len][dim] arrays row by row; attention sees the
// rows written so far (causal).
type promptKV struct {
	k, v            []fp16.Float16
	heads, len, dim int
	n               int
}

func (c *promptKV) Append(k, v []fp16.Float16) error {
	if c.n == c.len {
		return fmt.Errorf("llama: prompt cache full at %d rows", c.len)
	}
	for h := 0; h < c.heads; h++ {
		copy(c.k[(h*c.len+c.n)*c.dim:][:c.dim], k[h*c.dim:])
		copy(c.v[(h*c.len+c.n)*c.dim:][:c.dim], v[h*c.dim:])
	}
	c.n++
	return nil
}

func (c *promptKV) Head(h int) (k, v []fp16.Float16, pos []int32) {
	base := h * c.len * c.dim
	return c.k[base : base+c.n*c.dim], c.v[base : base+c.n*c.dim], nil
}

func (c *promptKV) Offset() int { return c.n }

// Rows is one layer's cache holding chosen prompt rows of a Prefill (all of them for the
// full cache, sinks and recent rows for the StreamingLLM baseline) plus every decoded
// row: the cache of the methods that are not SnapKV.
type Rows struct {
	dim  int
	k, v [][]fp16.Float16 // per KV head
	pos  [][]int32
	next int
}

// Keep returns layer l's cache with, for KV head h, the prompt rows kept[h] (ascending
// positions); kept == nil keeps every row.
func (p *Prefill) Keep(l int, kept [][]int32, kvHeads, dim int) *Rows {
	r := &Rows{dim: dim, k: make([][]fp16.Float16, kvHeads), v: make([][]fp16.Float16, kvHeads), pos: make([][]int32, kvHeads), next: p.Len}
	for h := range kvHeads {
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
			src := (h*p.Len + int(t)) * dim
			r.k[h] = append(r.k[h], p.K[l][src:src+dim]...)
			r.v[h] = append(r.v[h], p.V[l][src:src+dim]...)
		}
	}
	return r
}

func (r *Rows) Append(k, v []fp16.Float16) error {
	for h := range r.k {
		r.k[h] = append(r.k[h], k[h*r.dim:(h+1)*r.dim]...)
		r.v[h] = append(r.v[h], v[h*r.dim:(h+1)*r.dim]...)
		r.pos[h] = append(r.pos[h], int32(r.next))
	}
	r.next++
	return nil
}

func (r *Rows) Head(h int) (k, v []fp16.Float16, pos []int32) { return r.k[h], r.v[h], r.pos[h] }

func (r *Rows) Offset() int { return r.next }

// Generate greedily decodes n tokens after a prefill whose last logits are first: the
// first token is their argmax; each token is then fed at position caches[0].Offset() to
// choose the next.
func (m *Model) Generate(caches []KV, first []float32, n int) ([]byte, error) {
	if n < 1 {
		return nil, nil
	}
	s := m.newState()
	out := []byte{byte(argmax(first))}
	for len(out) < n {
		logits, err := m.forward(s, caches, out[len(out)-1], true)
		if err != nil {
			return nil, err
		}
		out = append(out, byte(argmax(logits)))
	}
	return out, nil
}
