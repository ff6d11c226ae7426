package snapkv

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/kvsimd/kvsimd/fp16"
)

// BatchOf attends one decoded token for many sequences of a layer in one call, as a
// server decodes a batch: sequences of different lengths, each with its own cache.
// [BatchOf.Attend] writes for every sequence exactly what its own [CacheOf.Attend]
// writes, with the same error rules, and runs every KV head of every sequence (or part
// of a head, where a cache's own Workers would split it) on Workers goroutines that
// claim them one at a time, so that one that drew short heads takes more: the batch is
// balanced by rows whatever the sequences' lengths. No goroutine outlives the call.
//
// The zero value is ready to use, with Workers 0 (GOMAXPROCS); a BatchOf keeps its
// workspace, so steady-state calls allocate nothing. It is not safe for concurrent use,
// nor may a cache take part in two calls at once.
type BatchOf[E Element] struct {
	// Workers is the goroutines a call spreads over, the caller's included; 0 means
	// GOMAXPROCS.
	Workers int

	caches []*CacheOf[E]
	ends   []int // ends[s]: the call's tasks through sequence s
	total  int   // the call's tasks
	next   atomic.Int64
	fan    fanOut
}

// Batch is a batch of fp16 caches.
type Batch = BatchOf[fp16.Float16]

// Attend writes, for each sequence s, caches[s]'s attention of the decoded token q[s]
// into out[s]: the bits caches[s].Attend(out[s], q[s]) writes (its kernels and its
// split of heads into parts, from the cache's own Config.Workers), then each cache's
// decode-budget step, as Attend runs it. Call it after each sequence's Append.
//
// It returns an error, before it attends to anything, when out, q and caches differ in
// length, when a cache appears twice or is nil, or when a sequence fails Attend's
// checks (naming the sequence); the decode-budget steps' errors, after every out[s] is
// written, are joined, each naming its sequence.
func (b *BatchOf[E]) Attend(out, q [][]float32, caches []*CacheOf[E]) error {
	if len(out) != len(caches) || len(q) != len(caches) {
		return fmt.Errorf("snapkv: Batch.Attend: len(out) = %d, len(q) = %d, want len(caches) = %d", len(out), len(q), len(caches))
	}
	for s, c := range caches {
		if c == nil {
			return fmt.Errorf("snapkv: Batch.Attend: caches[%d] is nil", s)
		}
		if err := c.checkDecode(out[s], q[s]); err != nil {
			return fmt.Errorf("sequence %d: %w", s, err)
		}
	}
	b.ends = b.ends[:0]
	total := 0
	for s, c := range caches {
		if c.att.c != nil { // planned already: the same cache twice, or in another call
			for _, p := range caches[:s] {
				p.att.finishAll()
			}
			return fmt.Errorf("snapkv: Batch.Attend: caches[%d] appears twice in the batch (or is attending in another call)", s)
		}
		c.att.plan(c, out[s], q[s])
		total += c.att.tasks
		b.ends = append(b.ends, total)
	}
	b.caches = append(b.caches[:0], caches...)
	b.total = total
	b.next.Store(0)
	workers := b.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if b.fan.work == nil {
		b.fan.work = b.work
	}
	b.fan.run(min(workers, total))
	var errs []error
	for s, c := range b.caches {
		c.att.finishAll()
		if err := c.afterAttend(q[s]); err != nil {
			errs = append(errs, fmt.Errorf("sequence %d: %w", s, err))
		}
	}
	clear(b.caches) // hold no reference to the call's caches
	return errors.Join(errs...)
}

// work runs the call's tasks, claiming one at a time, until none is left.
func (b *BatchOf[E]) work(int) {
	s := 0 // the claims only grow, and so does their sequence
	for {
		t := int(b.next.Add(1) - 1)
		if t >= b.total {
			return
		}
		for b.ends[s] <= t {
			s++
		}
		first := 0
		if s > 0 {
			first = b.ends[s-1]
		}
		b.caches[s].att.task(t - first)
	}
}
