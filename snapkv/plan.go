package snapkv

import (
	"errors"
	"fmt"
	"math"
)

// source is where the votes come from.
type source int

const (
	fromQueries source = iota // Input.Q
	fromAttn                  // Input.Attn
	fromKeys                  // the last W key rows as queries
)

// keep is how a sequence's rows are chosen.
type keep int

const (
	keepScored keep = iota // score, pool, top-k
	keepAll                // Len ≤ C: every row
	keepRecent             // protected rows fill C: the sinks, then the most recent rows
)

// plan is one validated sequence of a call and what is derived from it.
type plan[E Element] struct {
	in        InputOf[E]
	src       source
	keep      keep
	w, c      int // window (clamped to Len) and budget
	g         int // query heads voting for each KV head
	batch     int // query heads per Scores call: as many windows as fit scoresRows, at most g
	cols      int // vote columns: L−W under RulePaper, L under RuleProtected
	width     int // elements of E in a row of Dim values (Dim/32 blocks for q8_0)
	scale     float32
	firstTask int       // index of this plan's head 0 in the call's task numbering
	pooled    []float32 // [KVHeads][cols] pooled votes (keepScored only)
	dst       [][]int32
}

// plan validates in against s's Config and fills p.
func (s *SelectorOf[E]) plan(p *plan[E], in InputOf[E]) error {
	cfg := &s.cfg
	switch {
	case in.Layout != HeadMajor && in.Layout != TokenMajor:
		return fmt.Errorf("snapkv: Layout %d is not HeadMajor or TokenMajor", in.Layout)
	case in.KVHeads < 1 || in.KVHeads > maxHeads:
		return fmt.Errorf("snapkv: KVHeads %d, want 1 to %d", in.KVHeads, maxHeads)
	case in.Len < 0:
		return fmt.Errorf("snapkv: Len %d is negative", in.Len)
	case in.Len > math.MaxInt32:
		return fmt.Errorf("snapkv: Len %d exceeds the int32 positions", in.Len)
	case in.Dim < 0:
		return fmt.Errorf("snapkv: Dim %d is negative", in.Dim)
	case !(in.Scale >= 0 && in.Scale <= math.MaxFloat32):
		return fmt.Errorf("snapkv: Input.Scale %v, want a positive finite scale (or 0 for 1/√Dim)", in.Scale)
	case in.Q != nil && in.Attn != nil:
		return errors.New("snapkv: Input.Q and Input.Attn are both set; set one (or neither, for the key proxy)")
	}
	*p = plan[E]{in: in, w: min(cfg.Window, in.Len), c: cfg.budget(in.Len), g: 1, batch: 1, cols: in.Len}
	switch {
	case in.Q != nil:
		p.src = fromQueries
	case in.Attn != nil:
		p.src = fromAttn
	default:
		p.src = fromKeys
	}
	if p.src != fromKeys { // the key proxy has no query heads
		switch {
		case in.QHeads < 1 || in.QHeads > maxHeads:
			return fmt.Errorf("snapkv: QHeads %d, want a multiple of KVHeads %d from 1 to %d", in.QHeads, in.KVHeads, maxHeads)
		case in.QHeads%in.KVHeads != 0:
			return fmt.Errorf("snapkv: QHeads %d is not a multiple of KVHeads %d", in.QHeads, in.KVHeads)
		}
		p.g = in.QHeads / in.KVHeads
	}
	if in.Dim == 0 && (p.src != fromAttn || in.K != nil) {
		return errors.New("snapkv: Dim 0, want ≥ 1")
	}
	if err := checkDim[E]("Dim", in.Dim); err != nil {
		return err
	}
	p.width = in.Dim / perElem[E]()
	if p.src != fromAttn || in.K != nil {
		if err := checkKeys[E](len(in.K), in.KVHeads, in.Len, in.Dim); err != nil {
			return err
		}
	}
	switch p.src {
	case fromQueries:
		if err := checkLen("Q", len(in.Q), "QHeads·W·Dim", in.QHeads, p.w, in.Dim); err != nil {
			return err
		}
		if p.w > 0 {
			p.batch = min(max(scoresRows/p.w, 1), p.g)
		}
	case fromAttn:
		if err := checkLen("Attn", len(in.Attn), "QHeads·W·Len", in.QHeads, p.w, in.Len); err != nil {
			return err
		}
	}
	switch {
	case in.Scale != 0:
		p.scale = in.Scale
	case in.Dim > 0:
		p.scale = float32(1 / math.Sqrt(float64(in.Dim)))
	}
	protected := p.w
	if cfg.Rule == RuleProtected {
		protected += cfg.Sinks
		if protected < p.w { // Sinks near MaxInt
			protected = math.MaxInt
		}
	} else {
		p.cols = in.Len - p.w
	}
	switch {
	case in.Len <= p.c:
		p.keep = keepAll
	case protected >= p.c:
		p.keep = keepRecent
	case cfg.Alloc == AllocAdaptive && in.KVHeads > math.MaxInt32/in.Len:
		return fmt.Errorf("snapkv: KVHeads·Len = %d·%d exceeds the int32 positions of AllocAdaptive's shared ranking", in.KVHeads, in.Len)
	case p.src != fromAttn:
		if _, ok := mul(p.batch*p.w, in.Len, 4); !ok {
			return fmt.Errorf("snapkv: Window %d, Len %d: the score block of %d·%d floats overflows int", p.w, in.Len, p.batch*p.w, in.Len)
		}
	}
	return nil
}

// keepPinned fills row with the rows of a pinned case: all of them, or the sinks and
// the most recent rows.
func (p *plan[E]) keepPinned(row []int32, sinks int) []int32 {
	n := min(p.in.Len, p.c)
	sinks = min(sinks, n)
	row = grow(row, n)
	for i := range sinks {
		row[i] = int32(i)
	}
	for i, first := sinks, p.in.Len-n; i < n; i++ {
		row[i] = int32(first + i)
	}
	return row
}
