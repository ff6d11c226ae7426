package snapkv

import (
	"fmt"
	"math"
)

// A dense cache (CacheConfig.Mode ModeDense) keeps every row it is given, as an engine
// without eviction keeps its KV cache, behind the same calls as a compressed cache:
// Prefill and PrefillAttend take the prompt's chunks in either Layout, Append takes
// decoded tokens, Attend attends over every row, and Head, Offset, Stats, Reset,
// Truncate and Clone work as on any cache. So an engine switches between a full and a
// compressed cache by configuration alone.
//
// Why a Mode and not another type: the dense cache is CacheOf with its selection left
// out, so it shares every line that stores, gathers and attends rows (every format,
// both layouts, the workspaces, Workers, BatchOf), and a second type would have to
// repeat each of those methods and their docs. The Mode also makes the switch one
// field. What it leaves out: no Selector is made, the query window is not kept (Q is
// checked as for the other modes, all n rows or the last min(n, Select.Window), and
// read only by PrefillAttend), Attn is not read, and nothing is scored, so a dense
// cache needs neither window queries nor Window, Kernel or Budget: of
// CacheConfig.Select only Workers is read (the goroutines of Attend and
// PrefillAttend). CacheConfig.Decode must be zero (a decode budget evicts; a
// ModeFaithful cache with Select.KeepRatio 1 and a decode budget keeps every prompt
// row and then evicts during generation), and so must LayersConfig.SharedVotes.
//
// Memory: until the Last chunk the rows grow in the working area by doubling, as a
// ModeFaithful cache's do; the Last chunk copies each KV head's rows into storage of
// exactly its rows plus Reserve, and lets the working area go, so for that copy the
// cache holds the prompt twice. After it, a head of r rows holds r·R bytes of K, as
// many of V and 4·r of positions (Stats counts them), and Append grows a head past its
// Reserve as append does. The rows are the ones given, bit for bit, at positions 0,
// 1, … Offset()−1, so an Attend over them is kernels.Attend over the whole sequence,
// and Truncate(n) never fails for 0 ≤ n ≤ Offset().

// newDenseOf returns an empty ModeDense cache for cfg, which NewCacheOf validated but
// for what only a dense cache forbids.
func newDenseOf[E Element](cfg CacheConfig) (*CacheOf[E], error) {
	if cfg.Select.Workers < 0 {
		return nil, fmt.Errorf("snapkv: CacheConfig.Select.Workers %d is negative", cfg.Select.Workers)
	}
	if cfg.Decode != (DecodeBudget{}) {
		return nil, fmt.Errorf("snapkv: CacheConfig.Decode.Budget %d with ModeDense, which keeps every row; use ModeFaithful with Select.KeepRatio 1 to keep the prompt and evict while decoding", cfg.Decode.Budget)
	}
	return &CacheOf[E]{cfg: cfg, width: cfg.Dim / perElem[E]()}, nil
}

// keepAll ends a dense cache's prompt: each KV head's rows move from the working area
// into storage of exactly its rows plus the decode reserve (a Reset cache's, where it
// is large enough), and the working area is let go.
func (c *CacheOf[E]) keepAll() error {
	d, rows := c.width, c.rows
	if r := int64(rows) + int64(c.cfg.Reserve); r > int64(math.MaxInt/d) { // both at most MaxInt32
		dims, _ := rowDims[E]()
		return fmt.Errorf("snapkv: (prompt rows + CacheConfig.Reserve)·%s = (%d + %d)·%d overflows int", dims, rows, c.cfg.Reserve, d)
	}
	if len(c.heads) != c.cfg.KVHeads {
		c.heads = make([]headRows[E], c.cfg.KVHeads)
	}
	capRows := rows + c.cfg.Reserve
	for h := range c.heads {
		hr := &c.heads[h]
		hr.k, hr.v, hr.pos = sized(hr.k, rows*d, capRows*d), sized(hr.v, rows*d, capRows*d), sized(hr.pos, rows, capRows)
		copy(hr.k, c.wk[h*rows*d:(h+1)*rows*d])
		copy(hr.v, c.wv[h*rows*d:(h+1)*rows*d])
		copy(hr.pos, c.wpos[h*rows:(h+1)*rows])
	}
	c.done = true
	c.wk, c.wv, c.wpos, c.rows = nil, nil, nil, 0
	c.q, c.qNext, c.qWin = nil, nil, nil
	return nil
}
