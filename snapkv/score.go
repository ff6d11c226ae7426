package snapkv

import (
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/kernels"
)

// workspace is one goroutine's scratch for scoring a KV head.
type workspace struct {
	block []float32 // [W][L] scores, then probabilities
	votes []float32 // one query head's window sum
	group []float32 // the group's reduced votes
	kq    []float32 // [W][Dim] the key proxy's queries
}

// scoresRows is how many query rows one Scores call takes when a group allows: the
// SIMD variants widen each key once per block of 64 rows (at Dim 128), so two 32-row
// windows cost less in one call than in two.
const scoresRows = 64

// score writes KV head h's pooled votes into p.pooled[h·cols:(h+1)·cols]: the window
// votes of its G query heads, reduced by cfg.Group, pooled by cfg.Pool.
func (ws *workspace) score(cfg *Config, p *plan, h int) {
	m := p.cols
	ws.group = grow(ws.group, m)
	ws.votes = grow(ws.votes, m)
	acc := ws.group
	for i := 0; i < p.g; i += p.batch {
		nh := min(p.batch, p.g-i)
		probs := ws.probs(p, h*p.g+i, nh, h)
		for j := range nh {
			if i+j == 0 {
				p.windowSum(acc, probs[j*p.w*p.in.Len:])
				continue
			}
			v := ws.votes
			p.windowSum(v, probs[j*p.w*p.in.Len:])
			if cfg.Group == GroupMax {
				maxInto(acc, v)
			} else {
				kernels.Add(acc, v)
			}
		}
	}
	if cfg.Group == GroupMean && p.g > 1 {
		scaleBy(acc, 1/float32(p.g))
	}
	out := p.pooled[h*m : (h+1)*m]
	if cfg.Pool == PoolMax {
		kernels.MaxPool1D(out, acc, cfg.Kernel)
	} else {
		kernels.AvgPool1D(out, acc, cfg.Kernel)
	}
}

// probs returns the attention probabilities [nh][W][L] of the query heads qh ..
// qh+nh−1 of KV head kvh: Input.Attn itself, or the causal softmax of their scores
// (in which row r, position L−W+r, holds only its L−W+r+1 visible columns; the
// masked columns would come out of the softmax as exact zeros, so they are left out
// of it, and hold garbage).
func (ws *workspace) probs(p *plan, qh, nh, kvh int) []float32 {
	in, w, n, d := &p.in, p.w, p.in.Len, p.in.Dim
	if p.src == fromAttn {
		return in.Attn[qh*w*n : (qh+nh)*w*n]
	}
	k := in.K[kvh*n*d : (kvh+1)*n*d]
	var q []float32
	if p.src == fromQueries {
		q = in.Q[qh*w*d : (qh+nh)*w*d]
	} else {
		ws.kq = grow(ws.kq, w*d)
		q = ws.kq
		fp16.ToFloat32(q, k[(n-w)*d:])
	}
	ws.block = grow(ws.block, nh*w*n)
	block := ws.block
	kernels.Scores(block, q, k, nh*w, n, d, p.scale)
	for i := range nh * w {
		kernels.Softmax(block[i*n : i*n+n-w+i%w+1])
	}
	return block
}

// windowSum sets dst (the first len(dst) columns) to the sum of the W rows of one
// query head's probabilities, reading only the columns each row defines.
func (p *plan) windowSum(dst, probs []float32) {
	n, w, m := p.in.Len, p.w, len(dst)
	for r := range w {
		c := m
		if p.src != fromAttn {
			c = min(n-w+r+1, m)
		}
		row := probs[r*n : r*n+c]
		if r == 0 {
			copy(dst, row)
			clear(dst[c:])
		} else {
			kernels.Add(dst[:c], row)
		}
	}
}

// maxInto sets dst to the elementwise maximum of dst and src; NaN wins.
func maxInto(dst, src []float32) {
	src = src[:len(dst)]
	for i, v := range src {
		if v > dst[i] || v != v {
			dst[i] = v
		}
	}
}

// scaleBy multiplies x by s.
func scaleBy(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}
