package snapkv

// API SKELETON (coordinator): selection. Bodies come from the snapkv branch.

import (
	"errors"

	"github.com/kvsimd/kvsimd/fp16"
)

var errNotYet = errors.New("snapkv: not implemented yet")

// Rule is how the kept rows are chosen from the pooled votes.
type Rule int

const (
	// RulePaper is the authors' code: votes over the prefix [0, L−W) only, pooled with
	// zero padding at both ends of the prefix, top-(C−W) of the prefix, then the W
	// window rows. Sinks must be 0.
	RulePaper Rule = iota
	// RuleProtected votes over all L rows, pools, then sets the first Sinks and the last
	// W positions to +Inf after pooling, and keeps the top C.
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
	GroupMean Group = iota
	GroupMax
	GroupSum
)

// Alloc is how a layer's budget is spread over its KV heads.
type Alloc int

const (
	// AllocUniform gives every KV head the same budget C.
	AllocUniform Alloc = iota
	// AllocAdaptive (AdaKV) shares C·KVHeads rows among the layer's KV heads: every head
	// is guaranteed Floor·C rows (and at least its sinks and window), the rest go to the
	// heads whose pooled votes are largest, compared across heads.
	AllocAdaptive
)

// Config is one layer's selection configuration.
type Config struct {
	Budget    int     // C: kept prompt rows per KV head, sinks and window included; or 0 with KeepRatio
	KeepRatio float64 // fraction of Len to keep, in (0, 1], used when Budget is 0: C = ceil(KeepRatio·Len)
	Window    int     // W: observation window rows (the last W prompt positions), ≥ 1, clamped to Len
	Kernel    int     // pooling kernel, odd ≥ 1 (1: no pooling)
	Pool      Pool
	Sinks     int // first positions always kept (RuleProtected); must be 0 for RulePaper
	Rule      Rule
	Group     Group
	Alloc     Alloc
	Floor     float64 // AllocAdaptive: fraction in [0, 1] of C guaranteed to each head (AdaKV's alpha; 0.2 is typical)
	Workers   int     // goroutines that heads (and sequences) are spread over; 0 means GOMAXPROCS, 1 none
}

// Input is one layer of one sequence, all row-major and post-RoPE. Exactly one score
// source is used: Q (window queries, the default), Attn (probabilities the engine
// already computed), or neither (the last W key rows stand in for queries).
type Input struct {
	Q       []float32      // [QHeads][W][Dim], W = min(Config.Window, Len): queries of positions Len−W .. Len−1
	Attn    []float32      // [QHeads][W][Len]
	K       []fp16.Float16 // [KVHeads][Len][Dim]
	QHeads  int            // a multiple of KVHeads; for the key proxy, QHeads == KVHeads is allowed
	KVHeads int
	Len     int
	Dim     int
}

// Select returns, for each KV head h, the kept prompt positions of that head in
// ascending order. It is the one-call form of [Selector.Select].
func Select(cfg Config, in Input) ([][]int32, error) {
	s, err := NewSelector(cfg)
	if err != nil {
		return nil, err
	}
	return s.Select(nil, in)
}

// Selector is a validated Config with a reusable workspace: in steady state (same or
// smaller shapes, dst reused) Select allocates nothing. A Selector is not safe for
// concurrent use; it spreads one call's heads over Config.Workers goroutines itself.
type Selector struct {
	cfg Config
}

// NewSelector validates cfg.
func NewSelector(cfg Config) (*Selector, error) { return &Selector{cfg: cfg}, errNotYet }

// Select writes head h's kept positions into dst[h][:0] (growing dst and its rows only
// when short) and returns dst[:in.KVHeads].
func (s *Selector) Select(dst [][]int32, in Input) ([][]int32, error) { return nil, errNotYet }

// SelectBatch selects for several sequences of different lengths at once, spreading
// sequences and heads over the workers. dst[i] is reused as in Select.
func (s *Selector) SelectBatch(dst [][][]int32, ins []Input) ([][][]int32, error) {
	return nil, errNotYet
}

