package snapkv

import "github.com/kvsimd/kvsimd/kernels"

// workspace is one goroutine's scratch for scoring a KV head.
type workspace struct {
	block []float32 // [nh][W][L] scores
	votes []float32 // one query head's window sum, L columns
	group []float32 // the group's reduced votes (the first cols of L)
	q     []float32 // [nh][W][Dim] queries that Input.Q cannot give as they lie
}

// scoresRows is how many query rows one Scores call takes when a group allows: the
// SIMD variants widen each key once per block of 64 rows (at Dim 128), so two 32-row
// windows cost less in one call than in two.
const scoresRows = 64

// score writes KV head h's pooled votes into p.pooled[h·cols:(h+1)·cols]: the window
// votes of its G query heads, reduced by cfg.Group, pooled by cfg.Pool, with ws as
// scratch.
func (p *plan[E]) score(ws *workspace, cfg *Config, h int) {
	m, n := p.cols, p.in.Len
	// A window sum runs over every column its rows define, up to L; the votes are its
	// first cols (L−W under RulePaper).
	ws.group = grow(ws.group, n)
	ws.votes = grow(ws.votes, n)
	acc := ws.group[:m]
	for i := 0; i < p.g; i += p.batch {
		nh := min(p.batch, p.g-i)
		rows := p.rows(ws, h*p.g+i, nh, h)
		for j := range nh {
			if i+j == 0 {
				p.windowSum(ws.group, rows[j*p.w*n:])
				continue
			}
			p.windowSum(ws.votes, rows[j*p.w*n:])
			if v := ws.votes[:m]; cfg.Group == GroupMax {
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

// rows returns the [nh][W][L] rows that the window sums of the query heads qh ..
// qh+nh−1 of KV head kvh read: Input.Attn's probabilities, or their scores, one
// kernels.Scores call for the nh heads.
func (p *plan[E]) rows(ws *workspace, qh, nh, kvh int) []float32 {
	in, w, n := &p.in, p.w, p.in.Len
	if p.src == fromAttn {
		return in.Attn[qh*w*n : (qh+nh)*w*n]
	}
	k, stride := headOf(in.K, in.Layout, kvh, in.KVHeads, n, p.width)
	q := p.queries(ws, qh, nh, k, stride)
	ws.block = grow(ws.block, nh*w*n)
	scoresStrided(ws.block, q, k, nh*w, n, p.width, stride, p.scale)
	return ws.block
}

// queries returns the window queries [nh][W][Dim] of query heads qh .. qh+nh−1 in the
// order kernels.ScoresStrided takes them (it has no stride for queries): head-major Q
// as it lies; token-major Q gathered, nh·W·Dim values, a small copy next to the nh·W×L
// score block they make (K, L·Dim per head, is read where it lies instead: copying it
// would move as much memory as scoring it); or, for the key proxy, the last W of the
// keys k (stride elements apart) widened row by row, exactly.
func (p *plan[E]) queries(ws *workspace, qh, nh int, k []E, stride int) []float32 {
	in, w, d := &p.in, p.w, p.in.Dim
	if p.src == fromQueries && in.Layout == HeadMajor {
		return in.Q[qh*w*d : (qh+nh)*w*d]
	}
	ws.q = grow(ws.q, nh*w*d)
	if p.src == fromKeys { // nh = 1
		for r := range w {
			widen(ws.q[r*d:(r+1)*d], k[(in.Len-w+r)*stride:][:p.width])
		}
		return ws.q
	}
	for j := range nh {
		q, qStride := headOf(in.Q, in.Layout, qh+j, in.QHeads, w, d)
		copyRows(ws.q[j*w*d:(j+1)*w*d], q, d, qStride)
	}
	return ws.q
}

// headOf returns head h's rows of x, [heads][n][d] (HeadMajor) or [n][heads][d]
// (TokenMajor), and the distance between them: row i is rows[i·stride:][:d]. n ≥ 1.
func headOf[T any](x []T, l Layout, h, heads, n, d int) (rows []T, stride int) {
	if l == TokenMajor {
		return x[h*d:], heads * d
	}
	return x[h*n*d : (h+1)*n*d], d
}

// copyRows copies the len(dst)/d rows of d elements that lie stride apart in src into
// dst, one after the other.
func copyRows[T any](dst, src []T, d, stride int) {
	if stride == d {
		copy(dst, src)
		return
	}
	for i := range len(dst) / d {
		copy(dst[i*d:(i+1)*d], src[i*stride:])
	}
}

// windowSum sets dst, L columns, to the sum of the W rows of one query head's
// probabilities: Attn's rows as given, over the first cols columns (the rest of dst is
// not written); or the causal softmax of each score row, row r (position L−W+r) over
// its L−W+r+1 visible columns, which kernels.AddSoftmax adds in the pass that
// normalises it, while the row is still in cache. Masked columns would come out of the
// softmax as exact zeros, so they are left out of it, and dst beyond a row's visible
// columns only ever holds the earlier rows' sums. AddSoftmax gives the bits of Softmax
// then Add, so the votes are those of the softmax rows summed in order.
func (p *plan[E]) windowSum(dst, rows []float32) {
	n, w := p.in.Len, p.w
	if p.src == fromAttn {
		m := p.cols
		copy(dst[:m], rows[:m])
		for r := 1; r < w; r++ {
			kernels.Add(dst[:m], rows[r*n:r*n+m])
		}
		return
	}
	clear(dst)
	for r := range w {
		c := n - w + r + 1
		kernels.AddSoftmax(dst[:c], rows[r*n:r*n+c])
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
