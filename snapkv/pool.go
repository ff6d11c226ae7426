package snapkv

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// ErrPoolFull is the error, wrapped, of a call that needs more pages than its cache's
// [PagePool] has free: test for it with errors.Is. The call has changed nothing.
var ErrPoolFull = errors.New("snapkv: page pool full")

// PagePoolConfig configures a [PagePool].
type PagePoolConfig struct {
	Pages    int // the budget: pages in the pool, ≥ 1
	PageRows int // rows of one KV head in a page, ≥ 1 (16 is vLLM's block size)
}

// PagePoolStats is a PagePool's count of pages.
type PagePoolStats struct {
	InUse     int // pages the caches hold now
	Free      int // Pages − InUse
	HighWater int // the most pages held at once since NewPagePool
	Pages     int // the budget, PagePoolConfig.Pages
}

// PagePool bounds the KV memory of many caches (every layer of every sequence a server
// holds) by a fixed number of pages, so that a server admits a request only while the
// memory for it is there, and refuses it, with an error wrapping [ErrPoolFull], rather
// than growing without bound. A page is PageRows rows of one KV head of one cache:
// their K and V rows and their positions. Set CacheConfig.PagePool (and so
// LayersConfig.Cache.PagePool, for every layer) to the pool; a nil one is no bound, the
// cache as it always was.
//
// The pool is an accounting pool: each cache keeps its rows in its own storage, as
// without a pool, and holds from the pool, per KV head, ⌈rows held / PageRows⌉ pages,
// counting the prompt's working area (the rows a prefill chunk holds before the
// prompt's selection, or ModeBounded's, drops some). Before any row enters the cache
// (a Prefill or PrefillAttend chunk, an Append) the cache takes the pages those rows
// need, all or none; when it cannot, the call returns an error wrapping ErrPoolFull
// and the cache is exactly as it was, so the engine can finish, evict or preempt
// another sequence and call again. When rows leave (the prompt's selection, a
// ModeBounded chunk's, a decode-budget compression, Truncate, Reset) the cache gives
// back the pages it no longer needs; [CacheOf.Release] gives back every page and lets
// the cache's storage go. A [CacheOf.Clone] takes the pages of the rows it copies.
//
// Why the storage is not physically paged: the kernels read a KV head's rows as one
// contiguous run ([kernels.Attend], the selection's Scores, the decode budget's
// compaction), which is what makes them fast and what Head returns; paging the storage
// would put a block table under every one of them. [kernels.AttendPaged] exists for
// engines that keep their own block tables. What admission needs is a bound on the sum
// of every cache's rows, and that the accounting gives exactly, at the granularity of
// a page, without moving a row. The pool does not count the transient copy when a
// prompt's kept rows move from the working area into their storage, nor the capacity
// that Reserve or append's doubling leaves unused, nor workspaces: it counts rows.
// Pages are the same for every cache on the pool whatever its Dim or format: a pool
// shared by caches of different shapes bounds rows, and the engine sizes Pages from
// the largest row's bytes.
//
// A PagePool is safe for concurrent use: caches on different goroutines may share one.
// Each cache is still used by one goroutine at a time.
type PagePool struct {
	mu       sync.Mutex
	pages    int
	pageRows int
	inUse    int
	high     int
}

// NewPagePool returns an empty pool of cfg.Pages pages of cfg.PageRows rows, or an error
// naming a field that is not positive.
func NewPagePool(cfg PagePoolConfig) (*PagePool, error) {
	switch {
	case cfg.Pages < 1:
		return nil, fmt.Errorf("snapkv: PagePoolConfig.Pages %d, want ≥ 1", cfg.Pages)
	case cfg.PageRows < 1:
		return nil, fmt.Errorf("snapkv: PagePoolConfig.PageRows %d, want ≥ 1", cfg.PageRows)
	}
	return &PagePool{pages: cfg.Pages, pageRows: cfg.PageRows}, nil
}

// Stats returns the pool's counts, consistent with each other.
func (p *PagePool) Stats() PagePoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PagePoolStats{InUse: p.inUse, Free: p.pages - p.inUse, HighWater: p.high, Pages: p.pages}
}

// pagesFor is the pages that rows rows of one KV head take (without overflow on
// 32-bit platforms).
func (p *PagePool) pagesFor(rows int) int64 {
	n := int64(rows / p.pageRows)
	if rows%p.pageRows != 0 {
		n++
	}
	return n
}

// take takes n pages if the pool has them, else none; it returns the pages free.
func (p *PagePool) take(n int64) (ok bool, free int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	free = p.pages - p.inUse
	if n > int64(free) {
		return false, free
	}
	p.inUse += int(n)
	p.high = max(p.high, p.inUse)
	return true, free - int(n)
}

// give returns n pages to the pool.
func (p *PagePool) give(n int) {
	p.mu.Lock()
	p.inUse -= n
	p.mu.Unlock()
}

// checkPool reports a CacheConfig.PagePool that NewPagePool did not make.
func checkPool(cfg *CacheConfig) error {
	if cfg.PagePool != nil && (cfg.PagePool.pages < 1 || cfg.PagePool.pageRows < 1) {
		return errors.New("snapkv: CacheConfig.PagePool was not made by NewPagePool (a zero PagePool has no pages)")
	}
	return nil
}

// pagesNeeded is the pages the cache's rows take with extra more rows in every KV head:
// the working area's before the prompt ends, each head's own after.
func (c *CacheOf[E]) pagesNeeded(extra int) int64 {
	p := c.cfg.PagePool
	if !c.done {
		return int64(c.cfg.KVHeads) * p.pagesFor(c.rows+extra)
	}
	var n int64
	for h := range c.heads {
		n += p.pagesFor(len(c.heads[h].pos) + extra)
	}
	return n
}

// poolReserve takes from the cache's pool, all or none, the pages that extra more rows
// in every KV head need, before they enter; call names the call in the error, which
// wraps ErrPoolFull. Without a pool it does nothing.
func (c *CacheOf[E]) poolReserve(extra int, call string) error {
	p := c.cfg.PagePool
	if p == nil {
		return nil
	}
	need := c.pagesNeeded(extra)
	if need <= int64(c.pages) {
		return nil
	}
	more := need - int64(c.pages)
	ok, free := p.take(more)
	if !ok {
		return fmt.Errorf("snapkv: %s of %d rows per KV head needs %d more pages of %d rows, the pool has %d free of %d: %w",
			call, extra, more, p.pageRows, free, p.pages, ErrPoolFull)
	}
	c.pages = int(need)
	return nil
}

// poolTrim gives back to the cache's pool the pages its rows no longer need, after rows
// left. Without a pool it does nothing.
func (c *CacheOf[E]) poolTrim() {
	p := c.cfg.PagePool
	if p == nil {
		return
	}
	if need := int(c.pagesNeeded(0)); need < c.pages { // ≤ c.pages: fits an int
		p.give(c.pages - need)
		c.pages = need
	}
}

// poolClone takes for n, a clone of a cache holding pages pages, as many pages: if the
// pool lacks them, n is left empty, as after Release, holding none, and every call but
// Reset and Release returns the error (wrapping ErrPoolFull) until one of them.
func (n *CacheOf[E]) poolClone(pages int) {
	p := n.cfg.PagePool
	n.pages = 0
	if p == nil || pages == 0 {
		return
	}
	if ok, free := p.take(int64(pages)); ok {
		n.pages = pages
	} else {
		n.Release()
		n.err = fmt.Errorf("snapkv: Clone needs %d pages of %d rows, the pool has %d free of %d; Reset or Release the clone: %w",
			pages, p.pageRows, free, p.pages, ErrPoolFull)
	}
}

// Release empties the cache as [CacheOf.Reset] does, gives every page it holds back to
// its pool (CacheConfig.PagePool), and lets its rows' storage go: the cache of a finished
// request that an engine keeps for the next. The next prompt allocates its storage
// again. Without a pool it is Reset that lets the storage go.
func (c *CacheOf[E]) Release() {
	c.Reset() // gives back every page: no rows are left
	c.heads = nil
	c.wk, c.wv, c.wpos = nil, nil, nil
	c.q, c.qNext, c.qWin = nil, nil, nil
	if c.dec.votes != nil {
		clear(c.dec.votes)
	}
}

// Release releases every layer's cache ([CacheOf.Release]) and forgets the shared
// votes' progress, as Reset does.
func (s *LayersOf[E]) Release() {
	s.Reset()
	for _, c := range s.layers {
		c.Release()
	}
}

// layerError is a layer's error, naming the layer, that errors.Is and errors.As see
// through (ErrPoolFull above all).
type layerError struct {
	layer int
	err   error
}

func (e *layerError) Error() string {
	return fmt.Sprintf("snapkv: layer %d: %s", e.layer, strings.TrimPrefix(e.err.Error(), "snapkv: "))
}

func (e *layerError) Unwrap() error { return e.err }
