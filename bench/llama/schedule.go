package llama

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/kvsimd/kvsimd/kernels"
)

// Schedule is how a total budget of C rows per layer is spread over the layers.
type Schedule int

const (
	// Uniform gives every layer C rows.
	Uniform Schedule = iota
	// Pyramid is PyramidKV's arithmetic schedule (snapkv.PyramidBudgets, beta = PyramidBeta):
	// most rows in layer 0, fewest in the last.
	Pyramid
	// Entropy gives each layer its sinks and window, then shares the remaining rows in
	// proportion to the effective number of rows the layer's window attends to,
	// exp(entropy) of its pooled votes over the candidate rows: a layer whose attention
	// is spread thin needs more rows to keep the same share of it.
	Entropy
	// AdaptiveLayers is AdaKV's rule applied across layers instead of heads: every layer
	// keeps its sinks and window plus a floor of AdaptiveFloor of its share of the rest;
	// the remaining rows go to the candidates with the largest pooled votes, compared
	// across layers. Votes are comparable because every layer's W window rows each sum
	// to one.
	AdaptiveLayers
)

// PyramidBeta is the ratio of the mean budget to the last layer's. PyramidKV uses 20
// on 32-layer models; with 3 layers that would leave the last layer a couple of rows,
// so this uses 2 (layer budgets 1.5C, C, 0.5C).
const PyramidBeta = 2

// AdaptiveFloor is AdaKV's alpha: the fraction of each layer's share it is guaranteed.
const AdaptiveFloor = 0.2

// windowAttention returns layer l's attention of the last w prompt positions,
// [QHeads][w][L]: softmax(q·Kᵀ/√d) per window row over the stored keys, causal (row r,
// at position L−w+r, sees keys 0 .. L−w+r), as snapkv computes it from the window
// queries.
func (e *engine[E]) windowAttention(p *PrefillOf[E], l, w int) []float32 {
	c := e.Config
	L, d, group := p.Len, c.HeadDim, c.QHeads/c.KVHeads
	w = min(w, L)
	attn := make([]float32, c.QHeads*w*L)
	for j := range c.QHeads {
		h := j / group
		q := p.Q[l][(j*L+L-w)*d : (j*L+L)*d]
		sc := attn[j*w*L : (j+1)*w*L]
		e.c.scores(sc, q, p.K[l][h*L*e.row:(h+1)*L*e.row], w, L, d, float32(1/math.Sqrt(float64(d))))
		for r := range w {
			row := sc[r*L : (r+1)*L]
			for t := L - w + r + 1; t < L; t++ {
				row[t] = float32(math.Inf(-1))
			}
			kernels.Softmax(row)
		}
	}
	return attn
}

// measured is one prefill's window attention, computed once per window for the
// measured schedules, which read it.
type measured[E elem] struct {
	e    *engine[E]
	p    *PrefillOf[E]
	attn map[int][][]float32 // window → layer → [QHeads][W][L]
}

func newMeasured[E elem](e *engine[E], p *PrefillOf[E]) *measured[E] {
	return &measured[E]{e: e, p: p, attn: map[int][][]float32{}}
}

func (x *measured[E]) attention(w int) [][]float32 {
	a, ok := x.attn[w]
	if !ok {
		a = make([][]float32, x.e.Layers)
		for l := range a {
			a[l] = x.e.windowAttention(x.p, l, w)
		}
		x.attn[w] = a
	}
	return a
}

// votes returns, for each layer, KV head h's SnapKV votes over all L prompt positions,
// average-pooled as the protected rule pools them: the window attention summed over the
// w rows and averaged over the query heads of the group. This is the schedules'
// measurement of each layer's attention; the selection itself is snapkv's.
func (x *measured[E]) votes(h, w, kernel int) [][]float32 {
	c := x.e.Config
	L, group := x.p.Len, c.QHeads/c.KVHeads
	w = min(w, L)
	votes := make([][]float32, c.Layers)
	sum := make([]float32, L)
	for l, attn := range x.attention(w) {
		clear(sum)
		for j := h * group; j < (h+1)*group; j++ {
			for r := range w {
				kernels.Add(sum, attn[(j*w+r)*L:][:L])
			}
		}
		for t := range sum {
			sum[t] /= float32(group)
		}
		votes[l] = make([]float32, L)
		kernels.AvgPool1D(votes[l], sum, kernel)
	}
	return votes
}

// layerBudgets spreads layers·c rows over the layers by schedule s. fixed is the rows
// each layer keeps whatever its votes (sinks and window); candidates are the votes of
// the other rows, per layer.
func layerBudgets(s Schedule, c, layers, fixed int, candidates [][]float32) ([]int, error) {
	spare := layers * (c - fixed)
	if spare <= 0 {
		return nil, fmt.Errorf("llama: budget %d leaves no rows beyond %d sinks and window rows", c, fixed)
	}
	out := make([]int, layers)
	switch s {
	case Entropy:
		weights := make([]float64, layers)
		for l, v := range candidates {
			weights[l] = math.Exp(entropy(v))
		}
		for l, n := range apportion(spare, weights) {
			out[l] = fixed + n
		}
	case AdaptiveLayers:
		floor := int(AdaptiveFloor * float64(c-fixed))
		type cand struct {
			v     float32
			layer int
		}
		var rest []cand
		for l, v := range candidates {
			sorted := slices.Clone(v)
			slices.SortFunc(sorted, func(a, b float32) int { return cmp.Compare(b, a) })
			out[l] = fixed + min(floor, len(sorted))
			for _, x := range sorted[min(floor, len(sorted)):] {
				rest = append(rest, cand{x, l})
			}
		}
		slices.SortStableFunc(rest, func(a, b cand) int { return cmp.Compare(b.v, a.v) })
		for _, x := range rest[:min(spare-layers*floor, len(rest))] {
			out[x.layer]++
		}
	default:
		return nil, fmt.Errorf("llama: schedule %d has no measured budgets", s)
	}
	return out, nil
}

// entropy is the Shannon entropy (nats) of v normalised to sum to one.
func entropy(v []float32) float64 {
	var sum, h float64
	for _, x := range v {
		sum += float64(x)
	}
	if !(sum > 0) {
		return 0
	}
	for _, x := range v {
		if p := float64(x) / sum; p > 0 {
			h -= p * math.Log(p)
		}
	}
	return h
}

// apportion splits n into integers proportional to weights, largest remainders first.
func apportion(n int, weights []float64) []int {
	var total float64
	for _, w := range weights {
		total += w
	}
	out := make([]int, len(weights))
	rem := make([]int, len(weights))
	given := 0
	for i, w := range weights {
		share := float64(n) * w / total
		out[i] = int(share)
		given += out[i]
		rem[i] = i
	}
	slices.SortStableFunc(rem, func(a, b int) int {
		fa := float64(n)*weights[a]/total - float64(out[a])
		fb := float64(n)*weights[b]/total - float64(out[b])
		return cmp.Compare(fb, fa)
	})
	for i := 0; given < n; i++ {
		out[rem[i%len(rem)]]++
		given++
	}
	return out
}
