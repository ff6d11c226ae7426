package snapkv

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// A cache's life beyond one run of a sequence: Truncate for the tokens a speculative
// decoder rejects, Clone for a forked sequence (and CacheOf.Reset for the next request).

// Truncate takes the cache back to its first n positions, as speculative decoding
// rolls back the draft tokens it rejects: Offset becomes n, and every row at a
// position ≥ n leaves each KV head, with its query in the DecodeSnapKV window and its
// long-range score. The rows at positions below n must be the ones the cache held at
// offset n; where an eviction dropped one of them since, Truncate returns an error
// naming the positions and leaves the cache as it was:
//
//   - a decode-budget compression that ran after position n (a head's rows below n
//     then depend on the tokens past n): the error names the rows it dropped below n,
//     per KV head;
//   - n inside the prompt of a cache whose prompt selection dropped rows below n (a
//     cache that keeps every row, ModeDense or Select.KeepRatio 1, truncates
//     anywhere).
//
// DecodeH2O's and DecodeLongRange's scores keep the attention that the dropped tokens'
// queries paid to the rows that stay (a sum of float32 probabilities cannot be taken
// back exactly), so their next compressions may differ from those of a cache that
// never saw the draft. A shared LongRange is the sequence's: truncate every layer. It
// also returns an error before the prompt ends (Reset starts a prompt over), for n
// outside [0, Offset()], or after a selection's error.
func (c *CacheOf[E]) Truncate(n int) error {
	switch {
	case c.err != nil:
		return c.err
	case !c.done:
		return fmt.Errorf("snapkv: Truncate before the prompt ended (%d prompt rows, no chunk marked Last yet); Reset starts a prompt over", c.prompt)
	case n < 0 || n > c.Offset():
		return fmt.Errorf("snapkv: Truncate(%d), want 0 to Offset() = %d", n, c.Offset())
	}
	if err := c.checkTruncate(n); err != nil {
		return err
	}
	d := &c.dec
	for h := range c.heads {
		hr := &c.heads[h]
		keep := sort.Search(len(hr.pos), func(i int) bool { return int(hr.pos[i]) >= n })
		hr.k, hr.v, hr.pos = hr.k[:keep*c.width], hr.v[:keep*c.width], hr.pos[:keep]
		if d.votes != nil {
			d.votes[h] = d.votes[h][:keep]
		}
	}
	if ring := len(d.ringAt); ring > 0 {
		for d.count > 0 && int(d.ringAt[(d.next-1+ring)%ring]) >= n {
			d.next, d.count = (d.next-1+ring)%ring, d.count-1
		}
	}
	if d.share != nil && len(d.share.best) > n {
		d.share.best = d.share.best[:n]
	}
	if n >= c.prompt {
		c.decoded = n - c.prompt
	} else {
		c.prompt, c.decoded = n, 0
	}
	d.dropAt, d.prevDropAt = min(d.dropAt, n), min(d.prevDropAt, n)
	c.poolTrim()
	return nil
}

// checkTruncate returns Truncate(n)'s error when an eviction dropped rows below n that
// the cache held at offset n.
func (c *CacheOf[E]) checkTruncate(n int) error {
	d := &c.dec
	every := true // each head holds every position below n: nothing can be missing
	for h := range c.heads {
		pos := c.heads[h].pos
		below := sort.Search(len(pos), func(i int) bool { return int(pos[i]) >= n })
		every = every && below == n
	}
	switch {
	case every:
		return nil
	case n < c.prompt:
		var missing []string
		for h := range c.heads {
			missing = append(missing, fmt.Sprintf("KV head %d lacks %s", h, absent(c.heads[h].pos, n)))
		}
		return fmt.Errorf("snapkv: Truncate(%d) within the prompt of %d rows, whose selection dropped rows below %d: %s", n, c.prompt, n, strings.Join(missing, "; "))
	case d.dropAt <= n:
		return nil // no compression since position n: the rows below n are offset n's
	}
	var dropped []string
	for h, p := range d.dropped {
		if below := p[:sort.Search(len(p), func(i int) bool { return int(p[i]) >= n })]; len(below) > 0 {
			dropped = append(dropped, fmt.Sprintf("KV head %d at positions %s", h, listPositions(below)))
		}
	}
	earlier := ""
	if d.prevDropAt > n {
		earlier = ", and earlier compressions since then dropped more"
	}
	if len(dropped) == 0 && earlier == "" {
		return nil // the compressions since n dropped only rows at positions ≥ n
	}
	return fmt.Errorf("snapkv: Truncate(%d): the decode budget compressed at offset %d, after position %d, and dropped rows the cache held at offset %d: %s%s",
		n, d.dropAt, n, n, strings.Join(dropped, "; "), earlier)
}

// absent describes the positions below n missing from pos (ascending).
func absent(pos []int32, n int) string {
	var miss []int32
	i := 0
	for p := range n {
		for i < len(pos) && int(pos[i]) < p {
			i++
		}
		if i == len(pos) || int(pos[i]) != p {
			miss = append(miss, int32(p))
		}
	}
	return fmt.Sprintf("%d positions (%s)", len(miss), listPositions(miss))
}

// listPositions lists up to 8 positions.
func listPositions(p []int32) string {
	var b strings.Builder
	for i, x := range p[:min(len(p), 8)] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, x)
	}
	if len(p) > 8 {
		fmt.Fprintf(&b, ", … %d more", len(p)-8)
	}
	return b.String()
}

// Clone returns a copy of the cache that shares nothing mutable with it: a forked
// sequence (beam search, a shared system prompt, a speculative branch) that goes on
// independently. Each KV head's storage keeps its capacity (the room Reserve gave
// it). A DecodeLongRange table shared through DecodeBudget.Share is copied too and the
// copy is the clone's own (its config's Share points at it): to fork a sequence whose
// layers share one table, clone them with [LayersOf.Clone], which shares one copy
// among the clones. On a [PagePool] the clone takes its own pages; if the pool lacks
// them the clone is empty and its calls return an error wrapping ErrPoolFull until
// Reset or Release.
func (c *CacheOf[E]) Clone() *CacheOf[E] {
	var share *LongRange
	if c.cfg.Decode.Share != nil {
		share = c.cfg.Decode.Share.clone()
	}
	return c.cloneWith(share)
}

// cloneWith is Clone with share as the copy of the cache's shared long-range table.
func (c *CacheOf[E]) cloneWith(share *LongRange) *CacheOf[E] {
	n := &CacheOf[E]{cfg: c.cfg, width: c.width, wk: slices.Clone(c.wk), wv: slices.Clone(c.wv), wpos: slices.Clone(c.wpos),
		rows: c.rows, q: slices.Clone(c.q), qValid: c.qValid, sawQ: c.sawQ,
		prompt: c.prompt, decoded: c.decoded, done: c.done, peak: c.peak, err: c.err}
	n.cfg.Decode.Share = share
	if c.sel != nil {
		n.sel, _ = NewSelectorOf[E](c.cfg.Select) // validated by NewCacheOf
	}
	if c.inter != nil {
		n.inter, _ = NewSelectorOf[E](c.inter.cfg)
	}
	if c.heads != nil {
		n.heads = make([]headRows[E], len(c.heads))
		for h, hr := range c.heads {
			n.heads[h] = headRows[E]{k: cloneCap(hr.k), v: cloneCap(hr.v), pos: cloneCap(hr.pos)}
		}
	}
	d, o := &n.dec, &c.dec
	d.compressions, d.peak, d.next, d.count = o.compressions, o.peak, o.next, o.count
	d.ring, d.ringAt = slices.Clone(o.ring), slices.Clone(o.ringAt)
	if o.sel != nil {
		d.sel = &SelectorOf[E]{}
		d.sel.configure(o.sel.cfg)
	}
	if o.votes != nil {
		d.votes = make([][]float32, len(o.votes))
		for h, v := range o.votes {
			d.votes[h] = cloneCap(v)
		}
	}
	switch {
	case share != nil:
		d.share = share
	case o.share != nil:
		d.share = o.share.clone()
	}
	d.dropAt, d.prevDropAt = o.dropAt, o.prevDropAt
	d.dropped = make([][]int32, len(o.dropped))
	for h, p := range o.dropped {
		d.dropped[h] = slices.Clone(p)
	}
	n.poolClone(c.pages) // the clone's rows take their own pages
	return n
}

// cloneCap copies x into a slice of the same length and capacity.
func cloneCap[T any](x []T) []T {
	if x == nil {
		return nil
	}
	return append(make([]T, 0, cap(x)), x...)
}

// clone copies the table.
func (s *LongRange) clone() *LongRange { return &LongRange{best: slices.Clone(s.best)} }

// Truncate takes every layer back to its first n positions ([CacheOf.Truncate]). The
// layers are checked first: on an error no layer has changed. It is an error before
// every layer's prompt ended.
func (s *LayersOf[E]) Truncate(n int) error {
	for l, c := range s.layers {
		switch {
		case c.err != nil:
			return layerErr(l, c.err)
		case !c.done:
			return layerErr(l, fmt.Errorf("snapkv: Truncate before the prompt ended (%d prompt rows, no chunk marked Last yet); Reset starts a prompt over", c.prompt))
		case n < 0 || n > c.Offset():
			return layerErr(l, fmt.Errorf("snapkv: Truncate(%d), want 0 to Offset() = %d", n, c.Offset()))
		}
		if err := c.checkTruncate(n); err != nil {
			return layerErr(l, err)
		}
	}
	for _, c := range s.layers {
		if err := c.Truncate(n); err != nil {
			return err // checked above: unreachable
		}
	}
	return nil
}

// Clone returns a copy of every layer's cache and of the shared votes' progress,
// sharing nothing mutable with s; a DecodeLongRange table the layers share is copied
// once and shared by the clones.
func (s *LayersOf[E]) Clone() *LayersOf[E] {
	n := &LayersOf[E]{cfg: s.cfg, layers: make([]*CacheOf[E], len(s.layers)), votes: slices.Clone(s.votes),
		ended: slices.Clone(s.ended), waited: s.waited, length: s.length, attn: slices.Clone(s.attn), open: s.open}
	if s.cfg.Cache.Decode.Share != nil {
		n.cfg.Cache.Decode.Share = s.cfg.Cache.Decode.Share.clone()
	}
	for l, c := range s.layers {
		n.layers[l] = c.cloneWith(n.cfg.Cache.Decode.Share)
	}
	return n
}
