package snapkv

import (
	"errors"
	"fmt"
	"math"

	"github.com/kvsimd/kvsimd/fp16"
)

// Mode is how a Cache prefills.
type Mode int

const (
	// ModeFaithful keeps every prompt row until the chunk marked Last arrives, then
	// selects once over the whole prompt: the result equals a one-shot [Select] over
	// the same K, V and window queries, however the prompt was chunked.
	ModeFaithful Mode = iota
	// ModeBounded re-applies the budget after every chunk, over the rows kept so far
	// followed by the chunk's rows, with that chunk's last Window queries as the
	// observation window, so that no KV head ever holds (or has room for) more than
	// Budget + the longest chunk's rows. Kept rows keep their true positions, but the
	// selection sees them as neighbours (pooling runs over the kept sequence), so the
	// result approximates ModeFaithful's. Intermediate selections use a uniform budget; AllocAdaptive
	// applies to the last chunk's. It needs Config.Budget (KeepRatio depends on the
	// prompt length, unknown before the last chunk) and Q or no score source (Attn's
	// columns would have to be the kept rows).
	ModeBounded
	// ModeDense keeps every row, bit for bit, at positions 0 … Offset()−1: the cache an
	// engine keeps without eviction, behind the same Prefill, PrefillAttend, Append,
	// Attend, Head, Stats, Reset, Truncate and Clone as a compressed cache, so that an
	// engine switches by this field alone. Nothing is scored and no Selector is made:
	// chunks need no Q (PrefillAttend reads it; it is checked as in the other modes),
	// Attn is not read, and of CacheConfig.Select only Workers is (the goroutines of
	// Attend and PrefillAttend), so Window, Kernel and Budget may be zero.
	// CacheConfig.Decode must be zero (a decode budget evicts; ModeFaithful with
	// Select.KeepRatio 1 keeps the whole prompt and evicts while decoding), and
	// LayersConfig.SharedVotes false. The rows grow by doubling until the Last chunk,
	// which moves each head's rows into storage of its rows plus Reserve; Truncate(n)
	// never fails for 0 ≤ n ≤ Offset() after it.
	ModeDense
)

// CacheConfig configures one layer's cache.
//
// Layout is the layout of the Chunks (see [ChunkOf]). The cache keeps its working area
// head-major whatever it is: it copies every chunk into its own storage anyway, and
// scattering a token-major chunk into each head's rows on arrival costs the same copy,
// so that [CacheOf.Head] still returns a head's rows contiguous, [rows][Dim] values, and
// the selection, which reads that area, is the same in both layouts.
type CacheConfig struct {
	Select  Config
	Mode    Mode
	QHeads  int // query heads, a positive multiple of KVHeads, at most 1<<16 (key-proxy users: set it to KVHeads)
	KVHeads int // 1 to 1<<16
	Dim     int
	// Reserve is the number of decode tokens each KV head gets room for when the
	// prompt is compressed, so that the first Reserve calls to Append allocate nothing.
	// Appends past it grow a head's storage as append does. Positions are int32, so it
	// is at most math.MaxInt32.
	Reserve int
	Layout  Layout
	// Scale multiplies q·k in every attention the cache computes: Attend,
	// PrefillAttend, the selection's window scores and the decode budget's. 0 means
	// 1/√Dim; models with an attention multiplier set their own (Granite's
	// attention_multiplier, Gemma 2 and 3's query_pre_attn_scalar^−½, …) rather than fold
	// it into a copy of q. Positive and finite.
	Scale float32
	// Decode keeps each KV head within a budget while generating (see [DecodeBudget]);
	// the zero value appends every decoded row and never evicts.
	Decode DecodeBudget
	// PagePool, if not nil, bounds the rows of this cache and every other cache on it:
	// rows enter only once the cache holds their pages, and a call the pool cannot
	// supply returns an error wrapping ErrPoolFull and changes nothing (see [PagePool]).
	// Nil: no bound, the cache as without it.
	PagePool *PagePool
}

// ChunkOf is a run of consecutive prompt positions for one layer, post-RoPE, its K and
// V of the cache's element type E: K and V [KVHeads][n][Dim] values (in q8_0,
// [KVHeads][n][Dim/32 blocks]), and the queries of the same positions, Q
// [QHeads][n][Dim] or only its last rows, [QHeads][min(n, Window)][Dim] (only the last
// Window queries of the prompt are read); with CacheConfig.Layout TokenMajor, K and V
// [n][KVHeads][Dim] values (in q8_0, [n][KVHeads][Dim/32 blocks]) and Q
// [n or min(n, Window)][QHeads][Dim]. The cache keeps the last Window query rows across
// chunks, so a last chunk shorter than the window is scored with queries from the
// chunks before it; then those chunks must carry Q too. A chunk with neither Q nor
// Attn, in a cache that has never seen Q, selects with the key proxy (see [InputOf]).
// Attn may replace Q as in [InputOf], on the Last chunk of a ModeFaithful cache only:
// [QHeads][min(Window, L)][L] over the whole prompt of L rows, in both layouts. A chunk
// may be empty (n = 0), e.g. to mark the end.
//
// n is taken from len(K). Rows, when not 0, states it: a K of another length is then
// an error rather than another number of positions (a q8_0 chunk given Dim blocks per
// row instead of Dim/32 would otherwise count 32 times its tokens).
type ChunkOf[E Element] struct {
	K, V []E
	Q    []float32
	Attn []float32
	Rows int  // the chunk's positions n, checked against len(K) when not 0
	Last bool // the chunk that ends the prompt
}

// Chunk is the fp16 ChunkOf: K and V hold halves.
type Chunk = ChunkOf[fp16.Float16]

// CacheOf is one layer's compressed KV cache for one sequence (or, in [ModeDense], its
// full one, every row kept), its rows of element type
// E (fp16, bf16 or q8_0 blocks; see [Element]): per KV head, the kept K and V rows, as
// given, and their original positions. Prefill it with one Chunk or several (the last
// marked Last); the rows are then selected (see [Mode]) and gathered into storage of
// exactly the kept rows per head (plus CacheConfig.Reserve decode rows), the prompt's
// working memory is dropped, and decoded tokens are appended with [CacheOf.Append], never
// evicted unless CacheConfig.Decode sets a decode budget ([DecodeBudget]). Under AllocAdaptive the heads keep different numbers of rows, each stored at
// its own size.
//
// Memory: a compressed head of r rows holds r·R bytes of K, as many of V and 4 bytes
// per position, R being the bytes of a row of Dim values in the format (Dim·2 in fp16
// and bf16, Dim/32·34 in q8_0); [CacheOf.Stats] counts exactly that, and its
// BytesCapacity adds the reserved decode room. Before the prompt ends the cache holds the prompt rows (ModeFaithful) or
// at most Budget + chunk rows per head (ModeBounded) in a working area.
//
// A Cache is not safe for concurrent use; different Caches (other layers, other
// sequences) may be used from different goroutines at once. Errors name the bad field
// and value and leave the cache as it was, except a failure inside the selection, after
// which every call returns that error.
type CacheOf[E Element] struct {
	cfg   CacheConfig
	width int            // elements of E in a row of Dim values
	sel   *SelectorOf[E] // selects the prompt's rows when the last chunk arrives
	inter *SelectorOf[E] // ModeBounded's per-chunk selection, under a uniform budget
	kept  [][]int32      // the selectors' results, reused

	// The working area before the prompt ends: [KVHeads][rows][width] rows and
	// [KVHeads][rows] positions.
	wk, wv []E
	wpos   []int32
	rows   int

	// The query window: [QHeads][qValid][Dim], the queries of the last qValid prompt
	// positions (qValid ≤ Window). qNext is the buffer the next chunk builds into.
	q, qNext []float32
	qWin     []float32 // the last w rows of q when the window is shorter
	qValid   int
	sawQ     bool

	heads   []headRows[E] // after the prompt
	prompt  int           // prompt rows seen
	decoded int
	done    bool
	peak    int
	err     error

	rowsKept []int // Stats' RowsKept, reused
	pages    int   // pages held from cfg.PagePool (pool.go)

	att attendWork[E]  // Attend's workspace
	pre prefillWork[E] // PrefillAttend's workspace (prefill.go)
	dec decoder[E]     // the decode budget's state (decode.go)
}

// headRows is one KV head's compressed storage.
type headRows[E Element] struct {
	k, v []E
	pos  []int32
}

// Cache is the fp16 CacheOf: it keeps K and V as halves.
type Cache = CacheOf[fp16.Float16]

// NewCache validates cfg and returns an empty cache of fp16 rows.
func NewCache(cfg CacheConfig) (*Cache, error) { return NewCacheOf[fp16.Float16](cfg) }

// NewCacheOf validates cfg and returns an empty cache of rows of element type E; for
// q8_0, cfg.Dim must be a multiple of 32.
func NewCacheOf[E Element](cfg CacheConfig) (*CacheOf[E], error) {
	switch {
	case cfg.KVHeads < 1 || cfg.KVHeads > maxHeads:
		return nil, fmt.Errorf("snapkv: CacheConfig.KVHeads %d, want 1 to %d", cfg.KVHeads, maxHeads)
	case cfg.QHeads < 1 || cfg.QHeads > maxHeads || cfg.QHeads%cfg.KVHeads != 0:
		return nil, fmt.Errorf("snapkv: CacheConfig.QHeads %d, want a multiple of KVHeads %d from 1 to %d", cfg.QHeads, cfg.KVHeads, maxHeads)
	case cfg.Dim < 1:
		return nil, fmt.Errorf("snapkv: CacheConfig.Dim %d, want ≥ 1", cfg.Dim)
	case cfg.Mode != ModeFaithful && cfg.Mode != ModeBounded && cfg.Mode != ModeDense:
		return nil, fmt.Errorf("snapkv: CacheConfig.Mode %d is not ModeFaithful, ModeBounded or ModeDense", cfg.Mode)
	case cfg.Reserve < 0:
		return nil, fmt.Errorf("snapkv: CacheConfig.Reserve %d is negative", cfg.Reserve)
	case cfg.Reserve > math.MaxInt32:
		return nil, fmt.Errorf("snapkv: CacheConfig.Reserve %d exceeds the int32 positions", cfg.Reserve)
	case cfg.Layout != HeadMajor && cfg.Layout != TokenMajor:
		return nil, fmt.Errorf("snapkv: CacheConfig.Layout %d is not HeadMajor or TokenMajor", cfg.Layout)
	case !(cfg.Scale >= 0 && cfg.Scale <= math.MaxFloat32):
		return nil, fmt.Errorf("snapkv: CacheConfig.Scale %v, want a positive finite scale (or 0 for 1/√Dim)", cfg.Scale)
	case cfg.Mode == ModeBounded && cfg.Select.Budget == 0:
		return nil, fmt.Errorf("snapkv: ModeBounded needs Select.Budget ≥ 1, not KeepRatio %v: the prompt length is unknown before the last chunk", cfg.Select.KeepRatio)
	}
	if err := checkDim[E]("CacheConfig.Dim", cfg.Dim); err != nil {
		return nil, err
	}
	if err := checkPool(&cfg); err != nil {
		return nil, err
	}
	if err := cfg.Decode.validate(&cfg); err != nil {
		return nil, err
	}
	if _, ok := mul(cfg.QHeads, cfg.Dim, 1); !ok { // then KVHeads·Dim does not either
		return nil, fmt.Errorf("snapkv: CacheConfig.QHeads·Dim = %d·%d overflows int", cfg.QHeads, cfg.Dim)
	}
	if cfg.Mode == ModeDense {
		return newDenseOf[E](cfg)
	}
	sel, err := NewSelectorOf[E](cfg.Select)
	if err != nil {
		return nil, err
	}
	c := &CacheOf[E]{cfg: cfg, width: cfg.Dim / perElem[E](), sel: sel}
	if cfg.Mode == ModeBounded {
		uniform := cfg.Select
		uniform.Alloc, uniform.Floor = AllocUniform, 0
		if c.inter, err = NewSelectorOf[E](uniform); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// scale is the cache's attention scale: CacheConfig.Scale, or 1/√Dim.
func (cfg *CacheConfig) scale() float32 {
	if cfg.Scale != 0 {
		return cfg.Scale
	}
	return float32(1 / math.Sqrt(float64(cfg.Dim)))
}

// Prefill adds a chunk of prompt rows. In ModeBounded it then re-applies the budget; a
// chunk marked Last ends the prompt: the rows are selected and gathered, and the cache
// takes decode tokens from then on. [CacheOf.PrefillAttend] does the same and also
// computes the chunk's attention. On a PagePool that cannot supply the pages the
// chunk's rows need (held before any selection drops some), it returns an error
// wrapping ErrPoolFull and changes nothing.
func (c *CacheOf[E]) Prefill(ch ChunkOf[E]) error { return c.prefill(nil, ch, false) }

// prefill is Prefill, and with attend PrefillAttend: the chunk's attention is written
// to out once its rows are in the working area, before a selection moves them.
func (c *CacheOf[E]) prefill(out []float32, ch ChunkOf[E], attend bool) error {
	var err error
	if attend {
		err = c.checkAttend(out, ch)
	}
	n := 0
	if err == nil {
		n, err = c.checkChunk(ch)
	}
	if err == nil {
		call := "Prefill"
		if attend {
			call = "PrefillAttend"
		}
		err = c.poolReserve(n, call)
	}
	if err != nil {
		return err
	}
	if c.cfg.Mode != ModeDense { // a dense cache keeps no window
		c.pushQueries(ch.Q, n)
	}
	c.appendRows(ch, n)
	if attend {
		c.pre.run(c, out, ch.Q, n)
	}
	switch {
	case ch.Last:
		err = c.endPrompt(ch)
		c.pre.release()
	case c.cfg.Mode == ModeBounded:
		err = c.reduce()
	}
	c.poolTrim()
	if err != nil {
		c.err = fmt.Errorf("snapkv: cache unusable after a failed selection: %w", err)
		return c.err
	}
	return nil
}

// checkChunk validates ch against the cache's state and returns its row count.
func (c *CacheOf[E]) checkChunk(ch ChunkOf[E]) (int, error) {
	cfg := &c.cfg
	if c.err != nil {
		return 0, c.err
	}
	if c.done {
		return 0, fmt.Errorf("snapkv: Prefill after the last chunk: the prompt ended at position %d", c.prompt)
	}
	row := cfg.KVHeads * c.width
	dims, unit := rowDims[E]()
	if ch.Rows < 0 {
		return 0, fmt.Errorf("snapkv: Chunk.Rows %d is negative", ch.Rows)
	}
	if want, ok := mul(ch.Rows, cfg.KVHeads, c.width); ch.Rows != 0 && (!ok || len(ch.K) != want) {
		return 0, fmt.Errorf("snapkv: len(Chunk.K) = %d%s, want Chunk.Rows·KVHeads·%s = %d·%d·%d = %d", len(ch.K), unit, dims,
			ch.Rows, cfg.KVHeads, c.width, want)
	}
	if len(ch.K)%row != 0 {
		return 0, fmt.Errorf("snapkv: len(Chunk.K) = %d%s is not a multiple of KVHeads·%s = %d·%d", len(ch.K), unit, dims, cfg.KVHeads, c.width)
	}
	n := len(ch.K) / row
	switch {
	case len(ch.V) != len(ch.K):
		return 0, fmt.Errorf("snapkv: len(Chunk.V) = %d, want len(Chunk.K) = %d", len(ch.V), len(ch.K))
	case n > math.MaxInt32-c.prompt:
		return 0, fmt.Errorf("snapkv: prompt of %d + %d rows exceeds the int32 positions", c.prompt, n)
	case ch.Q != nil && ch.Attn != nil:
		return 0, errors.New("snapkv: Chunk.Q and Chunk.Attn are both set; set one")
	case ch.Attn != nil && !ch.Last:
		return 0, errors.New("snapkv: Chunk.Attn on a chunk that is not Last; only the last chunk's is read")
	case ch.Attn != nil && cfg.Mode == ModeBounded:
		return 0, errors.New("snapkv: Chunk.Attn with ModeBounded; give Q, or no score source for the key proxy")
	}
	w := cfg.Select.Window
	if ch.Q != nil {
		full, ok := mul(cfg.QHeads, n, cfg.Dim)
		last, _ := mul(cfg.QHeads, min(n, w), cfg.Dim) // ≤ full
		if !ok || len(ch.Q) != full && len(ch.Q) != last {
			return 0, fmt.Errorf("snapkv: len(Chunk.Q) = %d, want QHeads·min(n, Window)·Dim = %d·%d·%d = %d (or QHeads·n·Dim = %d)",
				len(ch.Q), cfg.QHeads, min(n, w), cfg.Dim, last, full)
		}
	}
	if !ch.Last && cfg.Mode == ModeFaithful || cfg.Mode == ModeDense {
		return n, nil
	}
	// This chunk selects: its score source must cover the window.
	length := c.rows + n
	win := min(w, length)
	switch {
	case ch.Attn != nil:
		if want, ok := mul(cfg.QHeads, win, length); !ok || len(ch.Attn) != want {
			return 0, fmt.Errorf("snapkv: len(Chunk.Attn) = %d, want QHeads·min(Window, L)·L = %d·%d·%d", len(ch.Attn), cfg.QHeads, win, length)
		}
	case c.sawQ || ch.Q != nil:
		if have := c.validAfter(ch.Q, n); have < win {
			return 0, fmt.Errorf("snapkv: Chunk.Q: the window needs the queries of the last %d positions, the chunks gave %d", win, have)
		}
	}
	return n, nil
}

// validAfter is how many of the latest positions have queries after a chunk of n rows
// with queries q.
func (c *CacheOf[E]) validAfter(q []float32, n int) int {
	w := c.cfg.Select.Window
	switch {
	case q != nil && n <= w:
		return min(w, c.qValid+n)
	case q != nil:
		return w
	case n == 0:
		return c.qValid
	}
	return 0
}

// pushQueries moves the query window on by a chunk of n rows with queries q (the last
// min(n, Window) rows, or all n).
func (c *CacheOf[E]) pushQueries(q []float32, n int) {
	valid := c.validAfter(q, n)
	if q == nil {
		c.qValid = valid
		return
	}
	c.sawQ = true
	hq, d := c.cfg.QHeads, c.cfg.Dim
	m := min(n, c.cfg.Select.Window) // rows of q that enter the window
	given := len(q) / (hq * d)
	old := valid - m // rows kept from the previous window
	c.qNext = grow(c.qNext, hq*valid*d)
	for h := range hq {
		dst := c.qNext[h*valid*d : (h+1)*valid*d]
		copy(dst, c.q[(h*c.qValid+c.qValid-old)*d:(h+1)*c.qValid*d])
		if m > 0 {
			rows, stride := headOf(q, c.cfg.Layout, h, hq, given, d)
			copyRows(dst[old*d:], rows[(given-m)*stride:], d, stride)
		}
	}
	c.q, c.qNext, c.qValid = c.qNext, c.q, valid
}

// appendRows adds the chunk's n rows after the rows of each head in the working area.
func (c *CacheOf[E]) appendRows(ch ChunkOf[E], n int) {
	hs, d := c.cfg.KVHeads, c.width
	old, rows := c.rows, c.rows+n
	if need := hs * rows; need > cap(c.wpos) {
		// Doubling keeps a long chunked prompt's copying linear; a bounded cache
		// grows to what it holds, at most Budget + the longest chunk.
		capRows := need
		if c.cfg.Mode != ModeBounded {
			capRows = max(need, 2*cap(c.wpos))
		}
		wk, wv := make([]E, hs*rows*d, capRows*d), make([]E, hs*rows*d, capRows*d)
		wpos := make([]int32, need, capRows)
		for h := range hs {
			copy(wk[h*rows*d:], c.wk[h*old*d:(h+1)*old*d])
			copy(wv[h*rows*d:], c.wv[h*old*d:(h+1)*old*d])
			copy(wpos[h*rows:], c.wpos[h*old:(h+1)*old])
		}
		c.wk, c.wv, c.wpos = wk, wv, wpos
	} else {
		c.wk, c.wv, c.wpos = c.wk[:hs*rows*d], c.wv[:hs*rows*d], c.wpos[:need]
		for h := hs - 1; h > 0; h-- { // last head first: each moves up onto moved space
			copy(c.wk[h*rows*d:], c.wk[h*old*d:(h+1)*old*d])
			copy(c.wv[h*rows*d:], c.wv[h*old*d:(h+1)*old*d])
			copy(c.wpos[h*rows:], c.wpos[h*old:(h+1)*old])
		}
	}
	for h := range hs {
		if n > 0 {
			k, stride := headOf(ch.K, c.cfg.Layout, h, hs, n, d)
			v, _ := headOf(ch.V, c.cfg.Layout, h, hs, n, d)
			copyRows(c.wk[(h*rows+old)*d:(h+1)*rows*d], k, d, stride)
			copyRows(c.wv[(h*rows+old)*d:(h+1)*rows*d], v, d, stride)
		}
		for i := range n {
			c.wpos[h*rows+old+i] = int32(c.prompt + i)
		}
	}
	c.rows, c.prompt = rows, c.prompt+n
	c.peak = max(c.peak, rows)
}

// input is the working area as a selection input, scored by attn, by the query window,
// or (no queries ever seen) by the key proxy.
func (c *CacheOf[E]) input(attn []float32) InputOf[E] {
	cfg := &c.cfg
	in := InputOf[E]{Attn: attn, K: c.wk, QHeads: cfg.QHeads, KVHeads: cfg.KVHeads, Len: c.rows, Dim: cfg.Dim, Scale: cfg.Scale}
	if attn != nil || !c.sawQ {
		return in
	}
	in.Q = c.q
	if w := min(cfg.Select.Window, c.rows); w < c.qValid {
		hq, d := cfg.QHeads, cfg.Dim
		c.qWin = grow(c.qWin, hq*w*d)
		for h := range hq {
			copy(c.qWin[h*w*d:(h+1)*w*d], c.q[(h*c.qValid+c.qValid-w)*d:(h+1)*c.qValid*d])
		}
		in.Q = c.qWin
	}
	return in
}

// reduce re-applies the budget to the working area (ModeBounded), compacting the kept
// rows in place: row i of head h moves from h·old+kept[i] ≥ h·rows+i, so the rows still
// to move are never overwritten.
func (c *CacheOf[E]) reduce() error {
	var err error
	if c.kept, err = c.inter.Select(c.kept, c.input(nil)); err != nil {
		return err
	}
	hs, d := c.cfg.KVHeads, c.width
	old, rows := c.rows, len(c.kept[0]) // a uniform budget: every head keeps as many
	for h := range hs {
		for i, r := range c.kept[h] {
			from, to := h*old+int(r), h*rows+i
			copy(c.wk[to*d:(to+1)*d], c.wk[from*d:(from+1)*d])
			copy(c.wv[to*d:(to+1)*d], c.wv[from*d:(from+1)*d])
			c.wpos[to] = c.wpos[from]
		}
	}
	c.wk, c.wv, c.wpos, c.rows = c.wk[:hs*rows*d], c.wv[:hs*rows*d], c.wpos[:hs*rows], rows
	return nil
}

// finish selects the prompt's rows and gathers each head's into storage of exactly its
// kept rows plus the decode reserve, then drops the working area.
func (c *CacheOf[E]) finish(attn []float32) error {
	if c.cfg.Mode == ModeDense {
		return c.keepAll()
	}
	var err error
	if c.kept, err = c.sel.Select(c.kept, c.input(attn)); err != nil {
		return err
	}
	d, old := c.width, c.rows
	for _, kept := range c.kept { // both at most MaxInt32: their sum fits a 64-bit int
		if r := int64(len(kept)) + int64(c.cfg.Reserve); r > int64(math.MaxInt/d) {
			dims, _ := rowDims[E]()
			return fmt.Errorf("snapkv: (kept rows + CacheConfig.Reserve)·%s = (%d + %d)·%d overflows int", dims, len(kept), c.cfg.Reserve, d)
		}
	}
	if len(c.heads) != c.cfg.KVHeads {
		c.heads = make([]headRows[E], c.cfg.KVHeads)
	}
	for h, kept := range c.kept {
		r, capRows := len(kept), len(kept)+c.cfg.Reserve
		hr := &c.heads[h] // a Reset cache's storage, where it is large enough
		hr.k, hr.v, hr.pos = sized(hr.k, r*d, capRows*d), sized(hr.v, r*d, capRows*d), sized(hr.pos, r, capRows)
		gatherRows(hr.k, c.wk[h*old*d:(h+1)*old*d], kept, d)
		gatherRows(hr.v, c.wv[h*old*d:(h+1)*old*d], kept, d)
		for i, p := range kept {
			hr.pos[i] = c.wpos[h*old+int(p)]
		}
	}
	c.done = true
	c.wk, c.wv, c.wpos, c.rows = nil, nil, nil, 0
	c.q, c.qNext, c.qWin, c.kept, c.sel, c.inter = nil, nil, nil, nil, nil, nil
	return nil
}

// sized returns x[:n] if x has room for c elements, else a new slice of length n and
// capacity c.
func sized[T any](x []T, n, c int) []T {
	if cap(x) >= c {
		return x[:n]
	}
	return make([]T, n, c)
}

// Reset empties the cache for another sequence: an empty prompt and the same
// configuration, as NewCacheOf returns it, keeping the storage it has. Each KV head's
// rows take the next prompt's kept rows and Reserve where they fit, the decode
// budget's buffers and Attend's and PrefillAttend's workspaces are reused, and so is
// the working area when Reset comes before the prompt ends. (When a prompt ends the
// cache lets its working area go: that is what holds a compressed cache to its
// budget; the next prompt allocates one, as the first did.) A DecodeLongRange cache's
// own long-range scores are cleared; a shared one (DecodeBudget.Share) belongs to the
// sequence: call its Reset once for all its layers. Reset clears a selection's error
// and gives every page back to the cache's PagePool ([CacheOf.Release] also lets the
// storage go). Slices that Head returned before Reset must not be used after it.
func (c *CacheOf[E]) Reset() {
	if c.sel == nil && c.cfg.Mode != ModeDense { // let go of when the last prompt ended
		c.sel, _ = NewSelectorOf[E](c.cfg.Select) // validated by NewCacheOf
		if c.cfg.Mode == ModeBounded {
			uniform := c.cfg.Select
			uniform.Alloc, uniform.Floor = AllocUniform, 0
			c.inter, _ = NewSelectorOf[E](uniform)
		}
	}
	for h := range c.heads {
		hr := &c.heads[h]
		hr.k, hr.v, hr.pos = hr.k[:0], hr.v[:0], hr.pos[:0]
	}
	c.rows, c.qValid, c.sawQ = 0, 0, false
	c.prompt, c.decoded, c.done, c.peak, c.err = 0, 0, false, 0, nil
	c.dec.reset(c.cfg.Decode)
	c.poolTrim() // no rows: every page goes back
}

// Append adds one decoded token's rows, k and v [KVHeads][Dim] values (one position of
// either Layout; KVHeads·Dim/32 blocks for q8_0), at position Offset().
// It allocates nothing while every head has room (CacheConfig.Reserve). On a
// PagePool that cannot supply the pages the rows need, it returns an error wrapping
// ErrPoolFull and adds nothing.
func (c *CacheOf[E]) Append(k, v []E) error {
	cfg := &c.cfg
	row := cfg.KVHeads * c.width
	dims, unit := rowDims[E]()
	switch {
	case c.err != nil:
		return c.err
	case !c.done:
		return fmt.Errorf("snapkv: Append before the prompt ended (%d prompt rows, no chunk marked Last yet)", c.prompt)
	case len(k) != row:
		return fmt.Errorf("snapkv: len(k) = %d%s, want KVHeads·%s = %d·%d = %d", len(k), unit, dims, cfg.KVHeads, c.width, row)
	case len(v) != row:
		return fmt.Errorf("snapkv: len(v) = %d%s, want KVHeads·%s = %d·%d = %d", len(v), unit, dims, cfg.KVHeads, c.width, row)
	case c.Offset() >= math.MaxInt32:
		return fmt.Errorf("snapkv: Append at position %d exceeds the int32 positions", c.Offset())
	}
	if err := c.poolReserve(1, "Append"); err != nil {
		return err
	}
	d, at := c.width, int32(c.Offset())
	for h := range c.heads {
		hr := &c.heads[h]
		hr.k = append(hr.k, k[h*d:(h+1)*d]...)
		hr.v = append(hr.v, v[h*d:(h+1)*d]...)
		hr.pos = append(hr.pos, at)
	}
	c.decoded++
	return nil
}

// Head returns KV head h's rows: k and v [rows][Dim] values ([rows][Dim/32 blocks] for
// q8_0) and their positions, ascending.
// Before the prompt ends these are the rows held so far (all of them in ModeFaithful,
// the kept and the latest chunk's in ModeBounded), so that an engine can attend to
// them while prefilling the next chunk. The slices alias the cache and stay valid until
// the next Prefill or Append. Head panics, naming h, if h is outside [0, KVHeads): as
// for a slice index, that is a programmer error, and nils would read as no rows.
func (c *CacheOf[E]) Head(h int) (k, v []E, pos []int32) {
	if h < 0 || h >= c.cfg.KVHeads {
		panic(fmt.Sprintf("snapkv: Head(%d) of a cache of %d KV heads", h, c.cfg.KVHeads))
	}
	if c.done {
		hr := &c.heads[h]
		return hr.k, hr.v, hr.pos
	}
	n := c.rows * c.width
	return c.wk[h*n : (h+1)*n : (h+1)*n], c.wv[h*n : (h+1)*n : (h+1)*n], c.wpos[h*c.rows : (h+1)*c.rows : (h+1)*c.rows]
}

// Offset is the true next position: prompt rows seen plus decoded tokens, not the row
// count. RoPE needs it for the next token.
func (c *CacheOf[E]) Offset() int { return c.prompt + c.decoded }

// Stats describes what a Cache holds. Its bytes are those of the cache's format: with
// R the bytes of one row of Dim values, Dim·2 for fp16 and bf16 and Dim/32·34 for
// q8_0 (32 int8 values and an fp16 scale per block), a position's K and V rows in
// one KV head take 2·R bytes. The cache also keeps each kept row's position, 4 bytes,
// which an uncompressed cache has no need of: BytesAfter counts them and BytesBefore
// does not, so 1 − BytesAfter/BytesBefore, the memory saved, is a little less than
// EvictionRatio, the rows evicted.
type Stats struct {
	TokensSeen int // prompt rows plus decoded tokens
	// RowsKept is per KV head, decoded rows included. It is the cache's own slice,
	// rewritten by the next Stats call (so Stats allocates nothing): copy it to keep it.
	RowsKept []int
	// PeakRows is the most rows one KV head held at once before the prompt ended:
	// the prompt length in ModeFaithful, at most Budget + the longest chunk in
	// ModeBounded.
	PeakRows    int
	BytesBefore int64 // what an uncompressed cache of the format holds: TokensSeen·KVHeads·2·R, no positions
	BytesAfter  int64 // Σ_h RowsKept[h]·(2·R + 4): K and V rows and their positions
	// BytesCapacity is what the storage holds room for: BytesAfter plus the decode
	// rows reserved (CacheConfig.Reserve) and not yet used, or the room append grew.
	BytesCapacity int64
	EvictionRatio float64 // 1 − ΣRowsKept / (TokensSeen·KVHeads), in rows; 0 for an empty cache
	// Compressions counts the Attend calls after which the decode budget compressed
	// at least one KV head (CacheConfig.Decode).
	Compressions int
	// PeakDecodeRows is the most rows one KV head held when the prompt ended or at the
	// end of an Attend call (after its compressions): with a decode budget, at most
	// max(Budget + Interval − 1, the prompt's kept rows).
	PeakDecodeRows int
}

// Stats reports the cache's contents, in the bytes of its format.
func (c *CacheOf[E]) Stats() Stats {
	cfg := &c.cfg
	c.rowsKept = grow(c.rowsKept, cfg.KVHeads)
	s := Stats{TokensSeen: c.Offset(), RowsKept: c.rowsKept, PeakRows: c.peak,
		Compressions: c.dec.compressions, PeakDecodeRows: c.dec.peak}
	elem := elemBytes[E]()
	kv := 2 * int64(c.width) * elem // a position's K and V rows in one head: 2·R
	kept := 0
	for h := range s.RowsKept {
		_, _, pos := c.Head(h)
		s.RowsKept[h] = len(pos)
		kept += len(pos)
		if c.done {
			hr := &c.heads[h]
			s.BytesCapacity += int64(cap(hr.k)+cap(hr.v))*elem + int64(cap(hr.pos))*4
		}
	}
	if !c.done {
		s.BytesCapacity = int64(cap(c.wk)+cap(c.wv))*elem + int64(cap(c.wpos))*4
	}
	s.BytesBefore = int64(s.TokensSeen) * int64(cfg.KVHeads) * kv
	s.BytesAfter = int64(kept) * (kv + 4)
	if s.TokensSeen > 0 {
		s.EvictionRatio = 1 - float64(kept)/(float64(s.TokensSeen)*float64(cfg.KVHeads))
	}
	return s
}
