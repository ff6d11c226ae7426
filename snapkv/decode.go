package snapkv

import (
	"fmt"
	"math"
	"sort"

	"github.com/kvsimd/kvsimd/kernels"
)

// DecodeRule is how a decode budget ([DecodeBudget]) chooses the rows a KV head keeps
// when it is compressed during generation. Every rule works on the head's current
// rows in their order (position order), keeps each kept row's true position, and
// breaks ties towards the lower row.
type DecodeRule int

const (
	// DecodeSnapKV, the default, is [SelectorOf.Select] over the head's current rows
	// as the prompt, with the cache's Config (Rule, Sinks, Window, Kernel, Pool, Group)
	// and Budget = the decode budget, and as the observation window the last Window
	// queries the cache was given: the queries of the Last chunk's final positions
	// first, then the q of every [CacheOf.Attend] call, W clamped to the queries
	// recorded. Each Attend call records its q as the query of position Offset()−1
	// (a second call at that position replaces it). A window query at position p sees
	// the rows at positions ≤ p; the cache's scale (CacheConfig.Scale). RuleProtected keeps the first Sinks
	// rows, the last W rows and the top of the rest by votes pooled over all rows;
	// RulePaper keeps the top Budget − W of the rows before the last W (votes pooled
	// over those rows only) and the last W. When Sinks + W ≥ Budget (Sinks 0 under
	// RulePaper) no vote decides: the pinned rule of [DecodeBudget] keeps the rows. The
	// window's queries are matched to the head's rows by position: a compression that
	// finds a row at a position the window covers without its query, or, when votes
	// decide, a window query that is not at the position of one of the head's last W
	// rows (a token appended without its Attend call), returns an error and keeps the
	// rows.
	DecodeSnapKV DecodeRule = iota
	// DecodeRecent is StreamingLLM: the first Sinks rows and the last Budget − Sinks.
	DecodeRecent
	// DecodeH2O keeps the heavy hitters: the first Sinks rows, the last Budget/2 rows,
	// and the top Budget − Budget/2 − Sinks of the rows between them by the attention
	// each row has received, summed over every Attend call since it entered (each
	// call's softmax over the rows it saw, averaged over the G query heads of the KV
	// head). A prompt row starts with the attention that the Last chunk's query rows
	// paid it (causal by position, the same averaging, summed over the rows that the
	// chunk's Q gave; zero when it gave none), its softmax over every row the cache
	// held when the prompt ended, before the prompt's own selection.
	DecodeH2O
	// DecodeLongRange keeps the rows that something attended to from afar: the first
	// Sinks rows, the last 2·Window rows, and the top of the rest by their long-range
	// score pooled over the rows (Config.Kernel and Pool). A row's long-range score is
	// the largest attention it has received from a query at least Window positions
	// after it: each Attend call's softmax over the rows it saw, averaged over the G
	// query heads of a KV head, the largest over every KV head and every call since the
	// row entered (the Last chunk's query rows included, causal by position, as for
	// DecodeH2O), and over every layer's cache that shares DecodeBudget.Share. So every
	// KV head keeps the same positions, and with a shared table every layer does. Why:
	// local attention (a token looking at its last few neighbours) is what most
	// attention is, and it says nothing about what will be needed later; a row that a
	// later token retrieved from far away (a repeated name, a key quoted again) is
	// likely to be retrieved again, and one such look is enough, hence the maximum
	// rather than H2O's sum, which the local attention of every token dominates. The
	// last 2·Window rows are kept because they have not yet been seen from Window
	// positions away by more than a few queries.
	DecodeLongRange
)

// LongRange is the long-range scores of DecodeLongRange, by position: the caches of
// one sequence's layers share one through DecodeBudget.Share, so that every layer
// keeps the rows that any layer attended to from afar. Its zero value is empty and
// ready; it grows by 4 bytes per position the sequence reaches (amortised appends). It
// is not safe for concurrent use: a sequence's layers run one after another. Within a
// token, a layer that compresses sees the scores of the layers that attended before it.
type LongRange struct {
	best []float32 // by position
}

// Reset forgets every position's score, for another sequence, keeping the storage.
func (s *LongRange) Reset() { s.best = s.best[:0] }

// raise makes at least p the score of position at.
func (s *LongRange) raise(at int32, p float32) {
	for int(at) >= len(s.best) {
		s.best = append(s.best, 0)
	}
	if p > s.best[at] {
		s.best[at] = p
	}
}

// score is the score of position at.
func (s *LongRange) score(at int32) float32 {
	if int(at) < len(s.best) {
		return s.best[at]
	}
	return 0
}

// DecodeBudget keeps every KV head of a [CacheOf] within a budget while it generates.
// The zero value (Budget 0) is no budget: decoded rows are appended and never evicted.
//
// At the end of every [CacheOf.Attend] call, after the output is computed over every
// row (the token just appended included), every KV head that holds at least Budget +
// Interval rows is compressed to Budget rows by the Rule. So between Attend calls a
// head holds at most Budget + Interval − 1 rows (once the prompt's own rows are down
// to that), Interval 1 compresses after every token, and a larger Interval trades a
// few rows of memory for fewer compressions. Rows keep their true positions, and
// Offset is unchanged. When the protected rows fill the budget (Sinks + W ≥ Budget
// for DecodeSnapKV, Sinks + Budget/2 ≥ Budget for DecodeH2O, Sinks +
// 2·Window ≥ Budget for DecodeLongRange), the first min(Sinks, Budget) rows and then
// the most recent rows are kept, as in the prompt's pinned cases.
//
// Sinks, Window and the pooling come from CacheConfig.Select; the prompt's own budget
// (Select.Budget or KeepRatio) applies to the prompt only. Select.Alloc must be
// AllocUniform: a decode budget with AllocAdaptive is an error, for now.
//
// Cost: DecodeSnapKV scores W·G query rows against a head's Budget + Interval rows
// per compression, so amortised over Interval tokens it costs about
// W·(Budget+Interval)·Dim/Interval multiply-adds per query head and token;
// DecodeH2O and DecodeLongRange score each Attend call's query against every row once
// more (one extra read of K per token, on the caller's goroutine) and, when the prompt
// ends, the Last chunk's query rows against the prompt's rows; DecodeRecent only moves
// rows. Steady state allocates nothing once every head's storage has grown to Budget +
// Interval rows (CacheConfig.Reserve ≥ Budget + Interval − the prompt's kept rows
// makes that so from the first token), except that DecodeLongRange's table grows by
// 4 bytes per new position, in amortised appends.
type DecodeBudget struct {
	Budget   int // rows per KV head after each compression, 1 to math.MaxInt32; 0 means no budget
	Interval int // a head is compressed once it holds Budget + Interval rows; ≥ 1 with a Budget
	Rule     DecodeRule
	// Share is the long-range scores that DecodeLongRange shares with the other layers'
	// caches of the sequence (one LongRange for all of them); nil: this cache's own.
	// Other rules take none.
	Share *LongRange
}

// validate checks the decode budget of cfg.
func (b *DecodeBudget) validate(cfg *CacheConfig) error {
	switch {
	case b.Budget == 0 && (b.Interval != 0 || b.Rule != DecodeSnapKV || b.Share != nil):
		return fmt.Errorf("snapkv: CacheConfig.Decode.Interval %d, Rule %d or Share without a Decode.Budget; set Budget ≥ 1", b.Interval, b.Rule)
	case b.Budget == 0:
		return nil
	case b.Budget < 0 || b.Budget > math.MaxInt32:
		return fmt.Errorf("snapkv: CacheConfig.Decode.Budget %d, want 1 to %d (or 0 for no decode budget)", b.Budget, math.MaxInt32)
	case b.Interval < 1 || b.Interval > math.MaxInt32-b.Budget:
		return fmt.Errorf("snapkv: CacheConfig.Decode.Interval %d, want 1 to %d (Budget + Interval within the int32 positions)", b.Interval, math.MaxInt32-b.Budget)
	case b.Rule != DecodeSnapKV && b.Rule != DecodeRecent && b.Rule != DecodeH2O && b.Rule != DecodeLongRange:
		return fmt.Errorf("snapkv: CacheConfig.Decode.Rule %d is not DecodeSnapKV, DecodeRecent, DecodeH2O or DecodeLongRange", b.Rule)
	case b.Share != nil && b.Rule != DecodeLongRange:
		return fmt.Errorf("snapkv: CacheConfig.Decode.Share with Rule %d; only DecodeLongRange shares scores", b.Rule)
	case cfg.Select.Alloc == AllocAdaptive:
		return fmt.Errorf("snapkv: CacheConfig.Select.Alloc AllocAdaptive with CacheConfig.Decode.Budget %d: a decode budget takes AllocUniform only, for now", b.Budget)
	}
	return nil
}

// reset empties the state for another sequence under budget b, keeping its buffers.
func (d *decoder[E]) reset(b DecodeBudget) {
	d.compressions, d.peak, d.dropAt, d.prevDropAt = 0, 0, 0, 0
	if d.share != nil && b.Share == nil { // the cache's own
		d.share.Reset()
	}
}

// decoder is a Cache's state for its decode budget and its decode statistics.
type decoder[E Element] struct {
	compressions int // Attend calls that compressed at least one head
	peak         int // most rows of one head at the prompt's end or after an Attend call

	// DecodeSnapKV: the last Window queries, a ring of slots per query head,
	// [QHeads][slots][Dim], and the slots' positions; the slots grow, by doubling,
	// with the queries recorded up to Window, so that a large Window costs only the
	// queries the cache has been given.
	sel    *SelectorOf[E]
	ring   []float32
	ringAt []int32
	next   int // the slot the next query goes to
	count  int // queries recorded, at most Window
	win    []float32
	ins    []InputOf[E]
	heads  []int // the heads being compressed
	kept   [][][]int32

	votes  [][]float32 // DecodeH2O: per head, the attention each row has received
	share  *LongRange  // DecodeLongRange's scores
	probs  []float32   // DecodeH2O, DecodeLongRange: one head's [G][rows] probabilities
	scores []float32   // DecodeLongRange: one head's rows' scores, then pooled
	rows   []int32     // DecodeRecent, DecodeH2O, DecodeLongRange: the rows a head keeps

	// The last compression, for Truncate: the offset it ran at (0: none), the offset of
	// the one before it, and per head the positions it dropped.
	dropAt, prevDropAt int
	dropped            [][]int32
}

// endPrompt ends the prompt with the Last chunk ch: it selects the prompt's rows
// (finish) and starts the decode budget's state from what the prompt leaves: the last
// window queries for DecodeSnapKV, the Last chunk's attention for DecodeH2O.
func (c *CacheOf[E]) endPrompt(ch ChunkOf[E]) error {
	// finish drops the working area and the query window; keep them for the start.
	q, qValid, wk, wpos, rows := c.q, c.qValid, c.wk, c.wpos, c.rows
	if err := c.finish(ch.Attn); err != nil {
		return err
	}
	d := &c.dec
	for h := range c.heads {
		d.peak = max(d.peak, len(c.heads[h].pos))
	}
	b := c.cfg.Decode
	if b.Budget == 0 {
		return nil
	}
	hq, dim := c.cfg.QHeads, c.cfg.Dim
	switch b.Rule {
	case DecodeSnapKV:
		w := c.cfg.Select.Window
		sel := c.cfg.Select
		sel.Budget, sel.KeepRatio = b.Budget, 0
		if d.sel == nil {
			d.sel = &SelectorOf[E]{}
		}
		d.sel.configure(sel)
		slots := min(w, max(qValid, minSlots))
		d.ring, d.ringAt = grow(d.ring, hq*slots*dim), grow(d.ringAt, slots)
		clear(d.ring) // as new: a Reset cache's hold the last sequence's
		clear(d.ringAt)
		for h := range hq {
			copy(d.ring[h*slots*dim:], q[h*qValid*dim:(h+1)*qValid*dim])
		}
		for i := range qValid {
			d.ringAt[i] = int32(c.prompt - qValid + i)
		}
		d.count, d.next = qValid, qValid%slots
	case DecodeH2O:
		d.votes = growKeep(d.votes, c.cfg.KVHeads)
		prompt := make([]float32, c.cfg.KVHeads*rows)
		c.promptAttention(ch, wk, wpos, rows, func(h int, _ int32, p []float32) {
			kernels.Add(prompt[h*rows:h*rows+len(p)], p)
		})
		for h := range c.heads {
			hr := &c.heads[h]
			d.votes[h] = sized(d.votes[h], len(hr.pos), cap(hr.pos))
			at := wpos[h*rows : (h+1)*rows]
			j := 0
			for i, p := range hr.pos { // a subset of the working rows, both ascending
				for at[j] != p {
					j++
				}
				d.votes[h][i] = prompt[h*rows+j]
			}
		}
	case DecodeLongRange:
		switch {
		case b.Share != nil:
			d.share = b.Share
		case d.share == nil:
			d.share = new(LongRange)
		}
		far := c.cfg.Select.Window
		c.promptAttention(ch, wk, wpos, rows, func(h int, at int32, p []float32) {
			for i, v := range p {
				if pos := wpos[h*rows+i]; int(pos) <= int(at)-far {
					d.share.raise(pos, v)
				}
			}
		})
	}
	return nil
}

// promptAttention calls add with the attention that each of the Last chunk's query
// rows paid KV head h's working rows: for the query at position at, the softmax of
// each of the group's query heads over the rows at positions ≤ at, averaged over the
// group (p, the first len(p) working rows). It calls nothing when the chunk has no Q.
// Its scratch, G·min(64, query rows)·rows floats, lives for the call.
func (c *CacheOf[E]) promptAttention(ch ChunkOf[E], wk []E, wpos []int32, rows int, add func(h int, at int32, p []float32)) {
	cfg := &c.cfg
	hq, hk, dim, width := cfg.QHeads, cfg.KVHeads, cfg.Dim, c.width
	g, given := hq/hk, len(ch.Q)/(hq*dim)
	if given == 0 || rows == 0 {
		return
	}
	scale := cfg.scale()
	block := min(given, scoresRows)
	scores, qs, mean := make([]float32, g*block*rows), make([]float32, block*dim), make([]float32, rows)
	for h := range hk {
		k, at := wk[h*rows*width:(h+1)*rows*width], wpos[h*rows:(h+1)*rows]
		for r0 := 0; r0 < given; r0 += block {
			m := min(block, given-r0)
			for j := range g {
				src, stride := headOf(ch.Q, cfg.Layout, h*g+j, hq, given, dim)
				copyRows(qs[:m*dim], src[r0*stride:], dim, stride)
				scoresStrided(scores[j*m*rows:(j+1)*m*rows], qs[:m*dim], k, m, rows, width, width, scale)
			}
			for i := range m {
				p := int32(c.prompt - given + r0 + i)
				seen := sort.Search(rows, func(t int) bool { return at[t] > p })
				sum := mean[:seen]
				clear(sum)
				for j := range g {
					row := scores[(j*m+i)*rows : (j*m+i)*rows+seen]
					kernels.Softmax(row)
					kernels.Add(sum, row)
				}
				if g > 1 {
					scaleBy(sum, 1/float32(g))
				}
				add(h, p, sum)
			}
		}
	}
}

// afterAttend runs at the end of every Attend call, after the output is computed, with
// the call's queries q [QHeads][Dim]: it records what the decode budget's rule needs
// and compresses every KV head that holds Budget + Interval rows or more.
func (c *CacheOf[E]) afterAttend(q []float32) error {
	d, b := &c.dec, c.cfg.Decode
	var err error
	if b.Budget > 0 {
		switch b.Rule {
		case DecodeSnapKV:
			c.recordQuery(q)
		case DecodeH2O, DecodeLongRange:
			c.addAttention(q)
		}
		err = c.compress()
	}
	for h := range c.heads {
		d.peak = max(d.peak, len(c.heads[h].pos))
	}
	c.poolTrim() // after a compression, the pages it emptied
	return err
}

// minSlots is the query slots a DecodeSnapKV cache starts with (or Window, if fewer).
const minSlots = 64

// recordQuery adds q, the query of position Offset()−1, to the window; a second call
// at the same position replaces that position's query.
func (c *CacheOf[E]) recordQuery(q []float32) {
	d := &c.dec
	hq, dim := c.cfg.QHeads, c.cfg.Dim
	at := int32(c.Offset() - 1)
	w := len(d.ringAt)
	slot := d.next
	switch {
	case d.count > 0 && d.ringAt[(slot+w-1)%w] == at:
		slot = (slot + w - 1) % w // a second call at this position replaces its query
	case d.count == w && w < c.cfg.Select.Window:
		c.growSlots() // full and never wrapped (only Window slots wrap): in order
		w, slot = len(d.ringAt), d.next
		fallthrough
	default:
		d.next = (slot + 1) % w
		d.count = min(d.count+1, w)
	}
	d.ringAt[slot] = at
	for h := range hq {
		copy(d.ring[(h*w+slot)*dim:(h*w+slot+1)*dim], q[h*dim:(h+1)*dim])
	}
}

// growSlots doubles the query slots (up to Window) of a full ring that has never
// wrapped, keeping its queries in order.
func (c *CacheOf[E]) growSlots() {
	d := &c.dec
	hq, dim, w := c.cfg.QHeads, c.cfg.Dim, len(d.ringAt)
	slots := min(2*w, c.cfg.Select.Window)
	ring, at := make([]float32, hq*slots*dim), make([]int32, slots)
	for h := range hq {
		copy(ring[h*slots*dim:], d.ring[h*w*dim:(h+1)*w*dim])
	}
	copy(at, d.ringAt)
	d.ring, d.ringAt, d.next = ring, at, w
}

// addAttention adds the attention that the call's queries q pay each KV head's rows
// (per head, the softmax of its G query heads over all its rows, averaged over them)
// to the rows' H2O votes, or raises their long-range scores with it.
func (c *CacheOf[E]) addAttention(q []float32) {
	d := &c.dec
	dim, g := c.cfg.Dim, c.cfg.QHeads/c.cfg.KVHeads
	scale := c.cfg.scale()
	far := c.Offset() - 1 - c.cfg.Select.Window // the last position seen from afar
	for h := range c.heads {
		hr := &c.heads[h]
		n := len(hr.pos)
		for d.votes != nil && len(d.votes[h]) < n { // rows appended since the last call start with none
			d.votes[h] = append(d.votes[h], 0)
		}
		d.probs = grow(d.probs, g*n)
		scoresStrided(d.probs, q[h*g*dim:(h+1)*g*dim], hr.k, g, n, c.width, c.width, scale)
		for i := range g {
			kernels.Softmax(d.probs[i*n : (i+1)*n])
			if i > 0 {
				kernels.Add(d.probs[:n], d.probs[i*n:(i+1)*n])
			}
		}
		if g > 1 {
			scaleBy(d.probs[:n], 1/float32(g))
		}
		if d.votes != nil {
			kernels.Add(d.votes[h], d.probs[:n])
			continue
		}
		for i, at := range hr.pos {
			if int(at) > far {
				break
			}
			d.share.raise(at, d.probs[i])
		}
	}
}

// compress brings every KV head holding Budget + Interval rows or more down to Budget
// rows by the decode rule.
func (c *CacheOf[E]) compress() error {
	d, b := &c.dec, c.cfg.Decode
	d.heads = d.heads[:0]
	for h := range c.heads {
		if len(c.heads[h].pos) >= b.Budget+b.Interval {
			d.heads = append(d.heads, h)
		}
	}
	if len(d.heads) == 0 {
		return nil
	}
	d.prevDropAt, d.dropAt = d.dropAt, c.Offset()
	d.dropped = growKeep(d.dropped, len(c.heads))
	for h := range d.dropped {
		d.dropped[h] = d.dropped[h][:0]
	}
	if b.Rule == DecodeSnapKV {
		if err := c.selectSnapKV(); err != nil {
			return err
		}
	} else {
		for _, h := range d.heads {
			c.keepRows(h, c.keepRule(h))
		}
	}
	d.compressions++
	return nil
}

// selectSnapKV compresses d.heads with the Selector, each head's rows an input of one
// KV head and its G query heads' window; or, when the protected rows fill the budget,
// by the pinned rule, which no query decides.
func (c *CacheOf[E]) selectSnapKV() error {
	d, b := &c.dec, c.cfg.Decode
	hq, dim, ring := c.cfg.QHeads, c.cfg.Dim, len(d.ringAt)
	g := hq / c.cfg.KVHeads
	w := d.count // ≥ 1: this call's query is recorded
	first := (d.next - w + ring) % ring
	// The Selector's own test (its window is min(w, rows), rows > Budget), written so
	// that a Sinks near MaxInt cannot overflow.
	pinned := w >= b.Budget || c.cfg.Select.Rule == RuleProtected && c.cfg.Select.Sinks >= b.Budget-w
	for _, h := range d.heads {
		if err := c.checkWindow(h, first, w, pinned); err != nil {
			return err
		}
	}
	if pinned {
		for _, h := range d.heads {
			c.keepRows(h, c.keepRule(h))
		}
		return nil
	}
	d.win = grow(d.win, len(d.heads)*g*w*dim)
	d.ins = grow(d.ins, len(d.heads))
	for i, h := range d.heads {
		win := d.win[i*g*w*dim : (i+1)*g*w*dim]
		for j := range g {
			for r := range w {
				slot := (first + r) % ring
				qh := h*g + j
				copy(win[(j*w+r)*dim:(j*w+r+1)*dim], d.ring[(qh*ring+slot)*dim:(qh*ring+slot+1)*dim])
			}
		}
		hr := &c.heads[h]
		d.ins[i] = InputOf[E]{Q: win, K: hr.k, QHeads: g, KVHeads: 1, Len: len(hr.pos), Dim: dim, Scale: c.cfg.Scale}
	}
	cfg := d.sel.cfg
	cfg.Window = w
	d.sel.configure(cfg)
	var err error
	if d.kept, err = d.sel.SelectBatch(d.kept, d.ins); err != nil {
		return err
	}
	for i, h := range d.heads {
		c.keepRows(h, d.kept[i][0])
		d.ins[i] = InputOf[E]{} // hold no reference to the rows
	}
	return nil
}

// checkWindow matches the window's w queries (ring slots from first on, ascending
// positions) to head h's rows by position. Every row at a position from the window's
// first on must have its query: a row without one is a token appended without its
// Attend call. When votes decide (not pinned), the queries must also be at the
// positions of the head's last w rows, the rows the Selector's window covers. A pinned
// compression reads no query, and its kept rows need not be the window's: the sinks
// may lie among the window's positions, and the rows of its first positions may be
// gone.
func (c *CacheOf[E]) checkWindow(h, first, w int, pinned bool) error {
	d := &c.dec
	ring, pos := len(d.ringAt), c.heads[h].pos
	n := len(pos)
	if !pinned { // rows > Budget > w
		for r := range w {
			slot := (first + r) % ring
			if at := pos[n-w+r]; at != d.ringAt[slot] {
				return fmt.Errorf("snapkv: decode budget: window query %d of %d is at position %d but KV head %d's row %d is at %d; call Attend once after each token's Append", r, w, d.ringAt[slot], h, n-w+r, at)
			}
		}
		return nil
	}
	r := w - 1 // the newest query not above row i's position
	for i := n - 1; i >= 0 && pos[i] >= d.ringAt[first]; i-- {
		for r > 0 && d.ringAt[(first+r)%ring] > pos[i] {
			r--
		}
		if d.ringAt[(first+r)%ring] != pos[i] {
			return fmt.Errorf("snapkv: decode budget: KV head %d's row %d at position %d has no window query (the window's %d are at positions %d to %d); call Attend once after each token's Append", h, i, pos[i], w, d.ringAt[first], d.ringAt[(first+w-1)%ring])
		}
	}
	return nil
}

// keepRule returns head h's kept rows under DecodeRecent, DecodeH2O or
// DecodeLongRange, or DecodeSnapKV's pinned case (no top), ascending.
func (c *CacheOf[E]) keepRule(h int) []int32 {
	d, b := &c.dec, c.cfg.Decode
	pos := c.heads[h].pos
	n := len(pos)
	sinks := min(c.cfg.Select.Sinks, b.Budget)
	top := 0
	var scores []float32
	switch b.Rule {
	case DecodeH2O:
		top = max(b.Budget-b.Budget/2-sinks, 0)
		scores = d.votes[h]
	case DecodeLongRange:
		top = max(b.Budget-sinks-2*min(c.cfg.Select.Window, b.Budget), 0)
		d.scores = grow(d.scores, 2*n)
		raw, pooled := d.scores[:n], d.scores[n:]
		for i, at := range pos {
			raw[i] = d.share.score(at)
		}
		if c.cfg.Select.Pool == PoolMax {
			kernels.MaxPool1D(pooled, raw, c.cfg.Select.Kernel)
		} else {
			kernels.AvgPool1D(pooled, raw, c.cfg.Select.Kernel)
		}
		scores = pooled
	}
	recent := b.Budget - sinks - top
	d.rows = grow(d.rows, b.Budget)
	for i := range sinks {
		d.rows[i] = int32(i)
	}
	if top > 0 {
		picked := kernels.TopK(d.rows[sinks:sinks], scores[sinks:n-recent], top)
		for i := range picked {
			picked[i] += int32(sinks)
		}
	}
	for i := range recent {
		d.rows[sinks+top+i] = int32(n - recent + i)
	}
	return d.rows
}

// keepRows compacts head h to its rows kept (ascending indices), in place: row i moves
// from kept[i] ≥ i, so no row still to move is overwritten.
func (c *CacheOf[E]) keepRows(h int, kept []int32) {
	hr, w := &c.heads[h], c.width
	votes := c.dec.votes
	next := 0 // the rows not kept, for Truncate: kept is ascending
	for r, p := range hr.pos {
		if next < len(kept) && int(kept[next]) == r {
			next++
		} else {
			c.dec.dropped[h] = append(c.dec.dropped[h], p)
		}
	}
	for i, r := range kept {
		copy(hr.k[i*w:(i+1)*w], hr.k[int(r)*w:(int(r)+1)*w])
		copy(hr.v[i*w:(i+1)*w], hr.v[int(r)*w:(int(r)+1)*w])
		hr.pos[i] = hr.pos[r]
		if votes != nil {
			votes[h][i] = votes[h][r]
		}
	}
	n := len(kept)
	hr.k, hr.v, hr.pos = hr.k[:n*w], hr.v[:n*w], hr.pos[:n]
	if votes != nil {
		votes[h] = votes[h][:n]
	}
}
