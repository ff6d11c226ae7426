package snapkv

import (
	"fmt"
	"math"
	"runtime"
	"sync/atomic"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/q8"
)

// minPrefillPart is the fewest query rows (positions times a KV head's G query heads)
// a part of a split head gets: every kernel call lays out the values of all the keys
// its queries see once, which 256 query rows make a small cost next to their share of
// the causal triangle.
const minPrefillPart = 256

// prefillPiece is the most query rows a worker copies through its buffer at once
// (see prefillWork): 1024 rows keep the buffer at 8·Dim KiB and the values' layout,
// repeated per piece, near 1 % of the piece's work.
const prefillPiece = 1024

// PrefillAttend does what [CacheOf.Prefill] does with ch and also writes into out the
// chunk's causal attention at the cache's scale (CacheConfig.Scale, 0: 1/√Dim): query
// head j (of KV head h = j/G) at the chunk's position i attends over the rows KV head h
// holds from earlier chunks and the chunk's own rows up to and including position i:
//
//	for j := range QHeads {
//		for i := range n {
//			keys, values := KV head j/G's rows before the chunk, then the chunk's rows 0 … i
//			out[j][i] = Σᵣ softmaxᵣ(Scale·Q[j][i]·keys[r])·values[r]
//		}
//	}
//
// ch.Q must carry the queries of every position of the chunk in the cache's Layout:
// head-major [QHeads][n][Dim], token-major [n][QHeads][Dim]; out has Q's shape and
// layout. In ModeFaithful the earlier rows are every earlier prompt position, so out is
// the exact causal attention of the prompt so far. In ModeBounded they are the rows
// that the earlier chunks' selections kept (Head(h) before the call, at most Budget
// per head): every one precedes the chunk, so all of the chunk's queries see all of
// them, and out is the attention an engine gets when it attends over what the cache
// keeps.
//
// The attention is computed once the chunk's rows join the cache's working area, before
// any selection moves them; the selection, what Head returns after the Last chunk and
// every decode step after it are Prefill's for the same chunks, bit for bit.
//
// It runs [kernels.AttendCausal] (or its bf16 and q8_0 twins) per KV head over the
// held rows followed by the chunk's (contiguous in the working area), the chunk's
// queries being the last n: out's numerics are that kernel's, its bound and special
// values included. In ModeFaithful, a prompt chunked at multiples of
// [kernels.CausalTile](G) positions gets the bits of one chunk.
//
// The work is spread over Workers goroutines (Config.Workers; 0 means GOMAXPROCS), the
// caller's and helpers done before it returns, as KV heads times parts of a head's
// queries. Where the heads do not divide evenly among the workers, each head's queries
// are cut into parts of equal causal work (later positions see more keys), enough to
// make the tasks a multiple of the workers, each of at least 256 query rows; the cuts
// fall at multiples of CausalTile(G) rows of the working area, where the kernel's
// tiles begin, so out's bits do not depend on Workers. A part of a head-major chunk,
// and a token-major chunk's queries when several goroutines run, go through a buffer
// per worker that the cache keeps until the Last chunk: a stream of equal chunks into
// a ModeBounded cache allocates nothing once warm.
//
// Errors, returned before anything changes, are Prefill's, a Q that does not hold
// QHeads·n·Dim queries (every position's, also when n exceeds Window), and len(out) ≠
// len(Q).
func (c *CacheOf[E]) PrefillAttend(out []float32, ch ChunkOf[E]) error {
	return c.prefill(out, ch, true)
}

// PrefillAttend is [LayersOf.Prefill] with layer l's chunk attention written into out
// as [CacheOf.PrefillAttend] writes it: over the rows the layer holds before the chunk
// and the chunk's own rows, causally. With SharedVotes every layer holds its whole
// prompt until it selects (ModeFaithful), so out is the exact causal attention, and the
// selection waits for the votes as Prefill's does.
func (s *LayersOf[E]) PrefillAttend(l int, out []float32, ch ChunkOf[E]) error {
	return s.prefill(l, out, ch, true)
}

// checkAttend validates what PrefillAttend needs beyond Prefill: the queries of every
// position and an out of their length. A chunk that Prefill would refuse for its state
// or K passes here, for checkChunk to name.
func (c *CacheOf[E]) checkAttend(out []float32, ch ChunkOf[E]) error {
	cfg := &c.cfg
	row := cfg.KVHeads * c.width
	if c.err != nil || c.done || len(ch.K)%row != 0 {
		return nil
	}
	n := len(ch.K) / row
	want, ok := mul(cfg.QHeads, n, cfg.Dim)
	switch {
	case !ok:
		return fmt.Errorf("snapkv: PrefillAttend: QHeads·n·Dim = %d·%d·%d overflows int", cfg.QHeads, n, cfg.Dim)
	case len(ch.Q) != want:
		return fmt.Errorf("snapkv: PrefillAttend: len(Chunk.Q) = %d, want QHeads·n·Dim = %d·%d·%d = %d, the queries of every position",
			len(ch.Q), cfg.QHeads, n, cfg.Dim, want)
	case len(out) != want:
		return fmt.Errorf("snapkv: PrefillAttend: len(out) = %d, want len(Chunk.Q) = QHeads·n·Dim = %d", len(out), want)
	}
	return nil
}

// prefillWork is a Cache's workspace for PrefillAttend: the chunk's tasks, a KV head
// and a part of its queries each, claimed by the workers one at a time.
//
// The kernels take a head's queries packed, [G][m][Dim], or token-major, and mark all
// the memory a call spans as theirs for the race detector. A whole head of a
// head-major chunk is packed where it lies. A part of one is not, and a token-major
// head's span interleaves the other heads' rows, which another worker may be writing:
// those are copied, a piece of at most prefillPiece query rows at a time, through the
// worker's own buffer, unless one goroutine does all the work.
type prefillWork[E Element] struct {
	c      *CacheOf[E]
	out, q []float32
	n, old int   // the chunk's positions and the rows each head held before it
	cuts   []int // the parts' first positions in the chunk, then n
	tasks  int
	direct bool // every task calls the kernel on q and out where they lie
	next   atomic.Int64
	bufs   [][]float32 // per worker: a piece's queries, then its outputs
	fan    fanOut
}

// run writes the attention of the chunk's n positions, whose rows are the last n of
// each head in the working area and whose queries are q, into out.
func (w *prefillWork[E]) run(c *CacheOf[E], out, q []float32, n int) {
	if n == 0 {
		return
	}
	cfg := &c.cfg
	workers := cfg.Select.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	g := cfg.QHeads / cfg.KVHeads
	w.c, w.out, w.q, w.n, w.old = c, out, q, n, c.rows-n
	w.split(workers, g)
	w.tasks = cfg.KVHeads * (len(w.cuts) - 1)
	workers = min(workers, w.tasks)
	// split cuts heads into parts only for several workers, so a head-major direct
	// task is a whole head.
	w.direct = workers == 1 || cfg.Layout == HeadMajor && len(w.cuts) == 2
	if !w.direct {
		size := 2 * g * min(pieceLen(g), w.maxPart()) * cfg.Dim
		for len(w.bufs) < workers {
			w.bufs = append(w.bufs, nil)
		}
		for i := range workers {
			w.bufs[i] = grow(w.bufs[i], size)
		}
	}
	w.next.Store(0)
	if w.fan.work == nil {
		w.fan.work = w.work
	}
	w.fan.run(workers)
	w.c, w.out, w.q = nil, nil, nil // hold no reference to the call's slices
}

// release drops the buffers once the prompt has ended.
func (w *prefillWork[E]) release() {
	w.cuts, w.bufs, w.fan.helpers = nil, nil, nil
}

// pieceLen is the positions of a piece: prefillPiece query rows of g heads, a
// multiple of the kernel's tile.
func pieceLen(g int) int {
	t := kernels.CausalTile(g)
	return max(t, prefillPiece/g/t*t)
}

// maxPart is the most positions of one part.
func (w *prefillWork[E]) maxPart() int {
	most := 0
	for p := range len(w.cuts) - 1 {
		most = max(most, w.cuts[p+1]-w.cuts[p])
	}
	return most
}

// split cuts the chunk's positions into the parts of every head. KVHeads·parts is a
// multiple of workers, so that equal tasks divide evenly, with parts of at least
// minPrefillPart query rows. Position i of the chunk sees old+i+1 keys, so the first i
// positions cost W(i) = i·old + i(i+1)/2 key rows; part k ends where W reaches
// k/parts of W(n), at the nearest start of a tile of the working area's rows.
func (w *prefillWork[E]) split(workers, g int) {
	n, old := w.n, w.old
	parts := 1
	if workers > 1 {
		parts = min(workers/gcd(w.c.cfg.KVHeads, workers), max(1, g*n/minPrefillPart))
	}
	w.cuts = append(w.cuts[:0], 0)
	t := kernels.CausalTile(g)
	b := float64(old) + 0.5
	total := float64(n)*float64(old) + float64(n)*float64(n+1)/2
	for k := 1; k < parts; k++ {
		x := math.Sqrt(b*b+2*total*float64(k)/float64(parts)) - b // W(x) = k/parts of W(n)
		i := int(math.Round((float64(old)+x)/float64(t)))*t - old
		if i > w.cuts[len(w.cuts)-1] && i < n {
			w.cuts = append(w.cuts, i)
		}
	}
	w.cuts = append(w.cuts, n)
}

// gcd is the greatest common divisor of two positive ints.
func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// work runs tasks, claiming one at a time, until none is left; worker numbers its
// buffer.
func (w *prefillWork[E]) work(worker int) {
	c := w.c
	cfg := &c.cfg
	hq, d, g := cfg.QHeads, cfg.Dim, cfg.QHeads/cfg.KVHeads
	wd, rows, n, old := c.width, c.rows, w.n, w.old
	parts := len(w.cuts) - 1
	scale := cfg.scale()
	for {
		t := int(w.next.Add(1) - 1)
		if t >= w.tasks {
			return
		}
		h, part := t/parts, t%parts
		a, b := w.cuts[part], w.cuts[part+1]
		base := h * rows * wd
		if w.direct {
			keys := old + b
			k, v := c.wk[base:base+keys*wd], c.wv[base:base+keys*wd]
			if cfg.Layout == TokenMajor {
				at, end := (a*hq+h*g)*d, ((b-1)*hq+(h+1)*g)*d
				attendCausalStrided(w.out[at:end], w.q[at:end], k, v, g, b-a, keys, d, hq*d, scale)
				continue
			}
			at, end := h*g*n*d, (h+1)*g*n*d // parts == 1: the whole head
			attendCausal(w.out[at:end], w.q[at:end], k, v, g, n, keys, d, scale)
			continue
		}
		step := pieceLen(g)
		for lo := a; lo < b; {
			// Pieces end at multiples of step rows of the working area, a multiple
			// of the tile.
			hi := min(b, (old+lo)/step*step+step-old)
			keys := old + hi
			w.attendPiece(worker, h, lo, hi, c.wk[base:base+keys*wd], c.wv[base:base+keys*wd], scale)
			lo = hi
		}
	}
}

// attendPiece attends positions lo … hi−1 of KV head h through the worker's buffer:
// their queries are packed into it, attended over keys k and values v (the working
// area's rows up to position hi−1), and the outputs copied to out.
func (w *prefillWork[E]) attendPiece(worker, h, lo, hi int, k, v []E, scale float32) {
	cfg := &w.c.cfg
	hq, d, g, n := cfg.QHeads, cfg.Dim, cfg.QHeads/cfg.KVHeads, w.n
	m := hi - lo
	buf := w.bufs[worker]
	qb, ob := buf[:g*m*d], buf[g*m*d:2*g*m*d]
	for r := range g {
		j := h*g + r // the query head
		for i := lo; i < hi; i++ {
			copy(qb[(r*m+i-lo)*d:][:d], w.q[w.at(j, i, hq, n, d):][:d])
		}
	}
	attendCausal(ob, qb, k, v, g, m, w.old+hi, d, scale)
	for r := range g {
		j := h*g + r
		for i := lo; i < hi; i++ {
			copy(w.out[w.at(j, i, hq, n, d):][:d], ob[(r*m+i-lo)*d:][:d])
		}
	}
}

// at is where query head j's row of the chunk's position i starts in Q and out.
func (w *prefillWork[E]) at(j, i, hq, n, d int) int {
	if w.c.cfg.Layout == TokenMajor {
		return (i*hq + j) * d
	}
	return (j*n + i) * d
}

// attendCausal is kernels.AttendCausal over packed rows of E.
func attendCausal[E Element](out, q []float32, k, v []E, rows, m, n, dim int, scale float32) {
	switch k := any(k).(type) {
	case []fp16.Float16:
		kernels.AttendCausal(out, q, k, any(v).([]fp16.Float16), rows, m, n, dim, scale)
	case []bf16.BFloat16:
		kernels.AttendCausalBF16(out, q, k, any(v).([]bf16.BFloat16), rows, m, n, dim, scale)
	case []q8.Block:
		kernels.AttendCausalQ8(out, q, k, any(v).([]q8.Block), rows, m, n, dim, scale)
	case []float32:
		kernels.AttendCausalF32(out, q, k, any(v).([]float32), rows, m, n, dim, scale)
	}
}

// attendCausalStrided is kernels.AttendCausalStrided over packed rows of E, the
// queries and outputs qStride apart.
func attendCausalStrided[E Element](out, q []float32, k, v []E, rows, m, n, dim, qStride int, scale float32) {
	switch k := any(k).(type) {
	case []fp16.Float16:
		kernels.AttendCausalStrided(out, q, k, any(v).([]fp16.Float16), rows, m, n, dim, qStride, dim, scale)
	case []bf16.BFloat16:
		kernels.AttendCausalStridedBF16(out, q, k, any(v).([]bf16.BFloat16), rows, m, n, dim, qStride, dim, scale)
	case []q8.Block:
		kernels.AttendCausalStridedQ8(out, q, k, any(v).([]q8.Block), rows, m, n, dim, qStride, dim, scale)
	case []float32:
		kernels.AttendCausalStridedF32(out, q, k, any(v).([]float32), rows, m, n, dim, qStride, dim, scale)
	}
}
