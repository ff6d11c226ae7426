package snapkv

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/q8"
)

// Rule is how the kept rows are chosen from the pooled votes.
type Rule int

const (
	// RulePaper is the authors' code: votes over the prefix [0, L−W) only, pooled with
	// zero padding at both ends of the prefix, top-(C−W) of the prefix, then the W
	// window rows. Sinks must be 0. It is the zero value.
	RulePaper Rule = iota
	// RuleProtected votes over all L rows and pools them, then keeps the first Sinks and
	// the last W positions and the top C−Sinks−W of the positions between them: the
	// PyTorch reference's "set them to +Inf after pooling, keep the top C", except that
	// protected rows stay kept even when the votes between them hold +Inf.
	RuleProtected
)

// Pool is the 1-D pooling applied to the votes (stride 1, padding Kernel/2).
type Pool int

const (
	PoolAvg Pool = iota // kernels.AvgPool1D: count_include_pad, divides by Kernel
	PoolMax             // kernels.MaxPool1D: padding never wins
)

// Group is how the window votes of the G query heads that share a KV head are reduced
// to one vote row for that KV head, before pooling.
type Group int

const (
	GroupMean Group = iota // the sum of the G vote rows times 1/G
	GroupMax               // elementwise maximum (NaN wins)
	GroupSum               // the sum, in query-head order
)

// Alloc is how a layer's budget is spread over its KV heads.
type Alloc int

const (
	// AllocUniform gives every KV head the same budget C.
	AllocUniform Alloc = iota
	// AllocAdaptive (AdaKV) shares C·KVHeads rows among the layer's KV heads: every head
	// keeps its protected rows (window, and sinks under RuleProtected) plus
	// ⌊Floor·(C − protected)⌋ of its own best rows, and the rest of the shared budget
	// goes to the best remaining rows of all heads, their pooled votes compared across
	// heads (see the package doc).
	AllocAdaptive
)

// Config is one layer's selection configuration. The zero value of every enum is the
// default: RulePaper, PoolAvg, GroupMean, AllocUniform.
type Config struct {
	Budget    int     // C: kept prompt rows per KV head, sinks and window included; or 0 with KeepRatio
	KeepRatio float64 // fraction of Len to keep, in (0, 1], used when Budget is 0: C = ⌈KeepRatio·Len⌉
	Window    int     // W: observation window rows (the last W prompt positions), ≥ 1, clamped to Len
	Kernel    int     // pooling kernel, odd ≥ 1 (1: no pooling)
	Pool      Pool
	Sinks     int // first positions always kept (RuleProtected); must be 0 for RulePaper
	Rule      Rule
	Group     Group
	Alloc     Alloc
	Floor     float64 // AllocAdaptive: fraction in [0, 1] of each head's selectable budget it keeps for itself (AdaKV's alpha; 0.2 is typical)
	Workers   int     // goroutines that a call's scored heads (and sequences) are spread over, at most one per head; 0 means GOMAXPROCS, 1 none
}

// Layout is how an Input's K and Q, or a Chunk's K, V and Q, order their rows. Attn is
// [QHeads][W][Len] in both.
//
// HeadMajor, the zero value, holds each head's rows together: K [KVHeads][Len][Dim], Q
// [QHeads][W][Dim]. TokenMajor holds each position's heads together, as most CPU
// engines keep a layer's cache: K [Len][KVHeads][Dim] (one row of KVHeads·Dim values
// per position), Q [W][QHeads][Dim]. An engine whose token-major buffer has room for a
// whole context passes its first Len positions, K[:Len·KVHeads·Dim], a reslice, not a
// copy: the lengths must be exact, which catches a wrong Len.
//
// The selection is the same, bit for bit, in both layouts. It reads a token-major K
// where it lies (kernels.ScoresStrided or its bf16 and q8_0 twins, a KV head's keys
// KVHeads·Dim values apart); only the window queries are gathered into the workspace
// (see [InputOf]). In q8_0, each row of Dim values is Dim/32 blocks: K
// [KVHeads][Len][Dim/32 blocks] or [Len][KVHeads][Dim/32 blocks]. A [Cache] keeps its
// working area head-major whatever the layout of its chunks (see [CacheConfig]).
type Layout int

const (
	HeadMajor  Layout = iota // [heads][positions][Dim]
	TokenMajor               // [positions][heads][Dim]
)

// maxHeads bounds QHeads and KVHeads: no model has more than a few hundred heads, and
// the bound keeps every per-head allocation and loop of an Input or Cache small, where
// an absurd count would otherwise pass the length checks (an empty prompt has none).
const maxHeads = 1 << 16

// InputOf is one layer of one sequence, post-RoPE, its K and Q in the given Layout,
// its keys of element type E (see [Element]): fp16, bf16 or q8_0. For q8_0, every
// row of Dim values is Dim/32 blocks (Dim must be a multiple of 32), so K holds
// KVHeads·Len·Dim/32 blocks, head-major [KVHeads][Len][Dim/32 blocks] or token-major
// [Len][KVHeads][Dim/32 blocks]: blocks of 32 along each head's row, as ggml keeps them.
//
// Exactly one score source is used: Q (window queries, the default), Attn
// (probabilities the engine already computed), or neither (the last W key rows stand
// in for queries, widened exactly to float32). A token-major Q is gathered into the
// workspace in the head-major order that kernels.Scores takes: W·G·Dim values per
// group of G query heads, small next to the W×Len score block the group's Scores call
// writes. K is Len·KVHeads·Dim values, as much as the Scores calls read, so it is
// never copied.
//
// The selection depends on the keys' values only: keys whose values are the same in
// two formats (an fp16 key that is also a bfloat16, or a q·d with a power-of-two d in
// q8_0) select the same rows, bit for bit, in both, since the Scores kernel of each
// format gives the same bits for the same widened values on a variant.
type InputOf[E Element] struct {
	Q       []float32 // [QHeads][W][Dim] (TokenMajor: [W][QHeads][Dim]), W = min(Config.Window, Len): queries of positions Len−W .. Len−1
	Attn    []float32 // [QHeads][W][Len] in both layouts, used as given (rows should already be causal)
	K       []E       // [KVHeads][Len][Dim] values (TokenMajor: [Len][KVHeads][Dim]); may be nil with Attn
	QHeads  int       // a positive multiple of KVHeads, at most 1<<16; ignored (not checked) by the key proxy
	KVHeads int       // 1 to 1<<16
	Len     int
	Dim     int // may be 0 with Attn and no K; a multiple of 32 for q8_0
	Layout  Layout
	Scale   float32 // the scores' scale, s = Scale·q·k: 0 means 1/√Dim; positive and finite
}

// Input is the fp16 InputOf: K holds halves. It keeps the name it had before the
// other formats, so that fp16 code compiles unchanged.
type Input = InputOf[fp16.Float16]

// Select returns, for each KV head h, the kept prompt positions of that head in
// ascending order. It is the one-call form of [SelectorOf.Select]: it borrows a
// Selector's workspace from a pool (one per format) that keeps it between calls, so
// that in steady state it allocates only its result (one array of positions, rows
// sliced from it). E is inferred from in: Select(cfg, in) with an [Input] selects
// over fp16 keys.
func Select[E Element](cfg Config, in InputOf[E]) ([][]int32, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	pool := &oneCalls[format[E]()]
	o := pool.Get().(*oneCall[E])
	defer pool.Put(o)
	o.s.configure(cfg)
	var err error
	o.kept, err = o.s.Select(o.kept, in)
	if err != nil {
		return nil, err
	}
	return cloneRows(o.kept), nil
}

// oneCall is what Select keeps between calls: a Selector and the rows it selects into.
type oneCall[E Element] struct {
	s    SelectorOf[E]
	kept [][]int32
}

// oneCalls holds the one-call Select's Selectors, one pool per format (indexed by
// format[E]), since a Selector's plans hold keys of one element type.
var oneCalls = [...]sync.Pool{
	{New: func() any { return new(oneCall[fp16.Float16]) }},
	{New: func() any { return new(oneCall[bf16.BFloat16]) }},
	{New: func() any { return new(oneCall[q8.Block]) }},
	{New: func() any { return new(oneCall[float32]) }},
}

// cloneRows copies rows into one array, each row capped at its length so that an
// append to one cannot overwrite the next.
func cloneRows(rows [][]int32) [][]int32 {
	n := 0
	for _, r := range rows {
		n += len(r)
	}
	flat, out := make([]int32, n), make([][]int32, len(rows))
	for i, r := range rows {
		out[i] = flat[:len(r):len(r)]
		copy(out[i], r)
		flat = flat[len(r):]
	}
	return out
}

// SelectorOf is a validated Config with a reusable workspace, for inputs whose keys
// are of element type E: in steady state (same or smaller shapes, dst reused) Select
// allocates nothing. A Selector is not safe for concurrent use; it spreads one call's
// heads over up to Config.Workers goroutines itself, started for the call and done
// with it before it returns (see the package doc's "Work and memory"). Between calls
// it keeps only its workspace: no reference to a call's inputs or dst, so a Selector
// kept per layer does not keep the last prompt's keys alive.
type SelectorOf[E Element] struct {
	cfg     Config
	workers int
	plans   []plan[E] // one per sequence of the current call
	pooled  []float32 // every scored head's pooled votes, carved up among plans
	space   workspace // the caller's
	helpers []*helper // kept between calls, so that their workspaces are reused
	ada     adaptive

	// The current call's scored heads, numbered across its plans and claimed one at a
	// time by the caller and the helpers.
	tasks int
	next  atomic.Int64
	wg    sync.WaitGroup
}

// helper is the workspace of one helper goroutine and its body, made once so that
// starting it (go h.run()) allocates nothing.
type helper struct {
	space workspace
	run   func()
}

// Selector is the fp16 SelectorOf, the Selector of [Input]s.
type Selector = SelectorOf[fp16.Float16]

// NewSelector validates cfg and returns a Selector of fp16 keys.
func NewSelector(cfg Config) (*Selector, error) { return NewSelectorOf[fp16.Float16](cfg) }

// NewSelectorOf validates cfg and returns a Selector of keys of element type E.
func NewSelectorOf[E Element](cfg Config) (*SelectorOf[E], error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := new(SelectorOf[E])
	s.configure(cfg)
	return s, nil
}

// configure sets a validated cfg.
func (s *SelectorOf[E]) configure(cfg Config) {
	s.cfg, s.workers = cfg, cfg.Workers
	if s.workers == 0 {
		s.workers = runtime.GOMAXPROCS(0)
	}
}

// Select writes head h's kept positions into dst[h][:0] (growing dst and its rows only
// when short) and returns dst[:in.KVHeads].
func (s *SelectorOf[E]) Select(dst [][]int32, in InputOf[E]) ([][]int32, error) {
	s.plans = grow(s.plans, 1)
	defer clear(s.plans) // a kept Selector must not keep the call's slices alive
	p := &s.plans[0]
	if err := s.plan(p, in); err != nil {
		return dst, err
	}
	p.dst = growKeep(dst, in.KVHeads)
	s.run()
	return p.dst, nil
}

// SelectBatch selects for several sequences of different lengths at once, spreading
// sequences and heads over the workers. dst[i] is reused as in Select. On an error
// (which names the bad input's index) nothing is selected.
func (s *SelectorOf[E]) SelectBatch(dst [][][]int32, ins []InputOf[E]) ([][][]int32, error) {
	s.plans = grow(s.plans, len(ins))
	defer clear(s.plans) // as in Select: nothing of the call's inputs or dst stays
	for i := range ins {
		if err := s.plan(&s.plans[i], ins[i]); err != nil {
			return dst, fmt.Errorf("snapkv: ins[%d]: %s", i, strings.TrimPrefix(err.Error(), "snapkv: "))
		}
	}
	dst = growKeep(dst, len(ins))
	for i := range ins {
		dst[i] = growKeep(dst[i], ins[i].KVHeads)
		s.plans[i].dst = dst[i]
	}
	s.run()
	return dst, nil
}

// run selects for every plan: the pinned cases inline, the scoring of heads spread
// over min(workers, heads) goroutines (the caller and helpers started for this call,
// all finished before it returns), then the top-k of each head (or the adaptive
// allocation).
func (s *SelectorOf[E]) run() {
	tasks, votes := 0, 0
	for i := range s.plans {
		p := &s.plans[i]
		if p.keep != keepScored {
			for h := range p.dst {
				p.dst[h] = p.keepPinned(p.dst[h], s.cfg.Sinks)
			}
			continue
		}
		p.firstTask = tasks
		tasks += p.in.KVHeads
		votes += p.in.KVHeads * p.cols
	}
	s.pooled = grow(s.pooled, votes)
	votes = 0
	for i := range s.plans {
		if p := &s.plans[i]; p.keep == keepScored {
			n := p.in.KVHeads * p.cols
			p.pooled = s.pooled[votes : votes+n : votes+n]
			votes += n
		}
	}

	s.tasks = tasks
	s.next.Store(0)
	helpers := max(min(s.workers, tasks)-1, 0)
	for len(s.helpers) < helpers {
		h := new(helper)
		h.run = func() {
			s.score(&h.space)
			s.wg.Done()
		}
		s.helpers = append(s.helpers, h)
	}
	s.wg.Add(helpers)
	for _, h := range s.helpers[:helpers] {
		go h.run()
	}
	s.score(&s.space)
	s.wg.Wait()

	// The top-k runs here, on the caller's goroutine only: kernels.TopK's scratch comes
	// from a sync.Pool, which allocates when several goroutines that migrate between Ps
	// take and return its items, and the top-k is a small part of the work.
	for i := range s.plans {
		p := &s.plans[i]
		switch {
		case p.keep != keepScored:
		case s.cfg.Alloc == AllocAdaptive:
			p.allocate(&s.ada, &s.cfg)
		default:
			for h := range p.in.KVHeads {
				p.keepTop(&s.cfg, h)
			}
		}
	}
}

// score scores the call's heads, claiming one at a time, until none is left.
func (s *SelectorOf[E]) score(ws *workspace) {
	for {
		t := int(s.next.Add(1) - 1)
		if t >= s.tasks {
			return
		}
		i := 0
		for s.plans[i].keep != keepScored || t >= s.plans[i].firstTask+s.plans[i].in.KVHeads {
			i++
		}
		s.plans[i].score(ws, &s.cfg, t-s.plans[i].firstTask)
	}
}

// grow returns x[:n], reallocated (contents dropped) only when its capacity is short.
func grow[T any](x []T, n int) []T {
	if cap(x) < n {
		return make([]T, n)
	}
	return x[:n]
}

// growKeep is grow for results: it keeps the elements it has (rows to reuse).
func growKeep[T any](x []T, n int) []T {
	if cap(x) < n {
		x = append(x[:cap(x)], make([]T, n-cap(x))...)
	}
	return x[:n]
}
