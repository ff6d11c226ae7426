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

// score writes KV head h's pooled votes into p.pooled[h·cols:(h+1)·cols]: the window
// votes of its G query heads, reduced by cfg.Group, pooled by cfg.Pool.
func (ws *workspace) score(cfg *Config, p *plan, h int) {
	m := p.cols
	ws.group = grow(ws.group, m)
	ws.votes = grow(ws.votes, m)
	acc := ws.group
	for i := range p.g {
		if i == 0 {
			ws.windowSum(acc, p, h*p.g, h)
			continue
		}
		v := ws.votes
		ws.windowSum(v, p, h*p.g+i, h)
		if cfg.Group == GroupMax {
			maxInto(acc, v)
		} else {
			kernels.Add(acc, v)
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

// windowSum sets dst (the first len(dst) columns) to the sum over the window rows of
// query head qh's attention probabilities; kvh is its KV head.
func (ws *workspace) windowSum(dst []float32, p *plan, qh, kvh int) {
	in, w, n := &p.in, p.w, p.in.Len
	m := len(dst)
	if p.src == fromAttn {
		rows := in.Attn[qh*w*n : (qh+1)*w*n]
		copy(dst, rows[:m])
		for r := 1; r < w; r++ {
			kernels.Add(dst, rows[r*n:r*n+m])
		}
		return
	}
	d := in.Dim
	k := in.K[kvh*n*d : (kvh+1)*n*d]
	var q []float32
	if p.src == fromQueries {
		q = in.Q[qh*w*d : (qh+1)*w*d]
	} else {
		ws.kq = grow(ws.kq, w*d)
		q = ws.kq
		fp16.ToFloat32(q, k[(n-w)*d:])
	}
	ws.block = grow(ws.block, w*n)
	block := ws.block
	kernels.Scores(block, q, k, w, n, d, p.scale)
	for r := range w {
		// Row r is position n−w+r: it sees columns 0..n−w+r. The masked columns would
		// come out of the softmax as exact zeros, so they are left out of it, and out
		// of the sum.
		seen := n - w + r + 1
		row := block[r*n : r*n+seen]
		kernels.Softmax(row)
		c := min(seen, m)
		if r == 0 {
			copy(dst[:c], row[:c])
			clear(dst[c:])
		} else {
			kernels.Add(dst[:c], row[:c])
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
