package snapkv

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/q8"
)

// minPartRows is the fewest rows a part of a split head gets: below it, a goroutine's
// start and the merge cost more than the part's reading saves.
const minPartRows = 1024

// Attend writes one decoded token's attention over the cache to out: q and out are
// [QHeads][Dim], post-RoPE queries and their outputs, query head j attending to KV
// head j/G (G = QHeads/KVHeads) with CacheConfig.Scale (0: 1/√Dim):
//
//	for j := range QHeads {
//		k, v, _ := c.Head(j / G)
//		out[j] = Σᵣ softmaxᵣ(Scale·q[j]·k[r])·v[r]  // over the head's rows r
//	}
//
// Call it after the token's [CacheOf.Append], so that the token attends to itself. It
// runs [kernels.Attend] (or its bf16 and q8_0 twins) once per KV head, reading each
// head's K and V rows once for its G query heads, so out's numerics are that kernel's.
// The KV heads are spread over min(Workers, KVHeads) goroutines (Config.Workers; 0
// means GOMAXPROCS), the caller's and helpers done before Attend returns; where the
// heads are fewer than the workers, a head's rows are split into parts of at least
// 1024 rows, each attended with [kernels.AttendPartial] and merged exactly (up to
// rounding) with [kernels.AttendState.Merge]; a row whose merged output is NaN or ±Inf
// is then computed again by kernels.Attend over the whole head, so special values are
// the kernel's whatever the split. Steady-state calls allocate nothing. With a decode
// budget (CacheConfig.Decode), Attend then compresses every KV head holding Budget +
// Interval rows or more (see [DecodeBudget]) and returns that step's error, if any,
// after out is written.
//
// It returns an error before the prompt ended or when len(q) or len(out) is not
// QHeads·Dim.
func (c *CacheOf[E]) Attend(out, q []float32) error {
	if err := c.checkDecode(out, q); err != nil {
		return err
	}
	c.att.run(c, out, q)
	return c.afterAttend(q)
}

// checkDecode returns Attend's error for out and q, if any.
func (c *CacheOf[E]) checkDecode(out, q []float32) error {
	cfg := &c.cfg
	size := cfg.QHeads * cfg.Dim
	switch {
	case c.err != nil:
		return c.err
	case !c.done:
		return fmt.Errorf("snapkv: Attend before the prompt ended (%d prompt rows, no chunk marked Last yet)", c.prompt)
	case len(q) != size:
		return fmt.Errorf("snapkv: Attend: len(q) = %d, want QHeads·Dim = %d·%d = %d", len(q), cfg.QHeads, cfg.Dim, size)
	case len(out) != size:
		return fmt.Errorf("snapkv: Attend: len(out) = %d, want QHeads·Dim = %d·%d = %d", len(out), cfg.QHeads, cfg.Dim, size)
	}
	return nil
}

// attendWork is a Cache's workspace for Attend: one task per KV head, or per part of
// a head when the heads are fewer than the workers, and the parts' states.
type attendWork[E Element] struct {
	c      *CacheOf[E]
	out, q []float32
	parts  int // parts per head; 1: one kernel call per head
	tasks  int
	next   atomic.Int64
	states []kernels.AttendState // [KVHeads][parts], when parts > 1
	fan    fanOut
}

func (w *attendWork[E]) run(c *CacheOf[E], out, q []float32) {
	w.plan(c, out, q)
	w.next.Store(0)
	if w.fan.work == nil {
		w.fan.work = w.work
	}
	w.fan.run(min(c.workers(), w.tasks))
	w.finishAll()
}

// workers is the goroutines the cache's calls spread over: Config.Workers, 0 meaning
// GOMAXPROCS.
func (c *CacheOf[E]) workers() int {
	if w := c.cfg.Select.Workers; w > 0 {
		return w
	}
	return runtime.GOMAXPROCS(0)
}

// plan sets out the call's tasks: one per KV head, or per part of a head when the
// heads are fewer than the cache's workers (which a batch's call keeps, so that each
// cache's bits are its own Attend's).
func (w *attendWork[E]) plan(c *CacheOf[E], out, q []float32) {
	cfg := &c.cfg
	workers := c.workers()
	w.c, w.out, w.q = c, out, q
	w.parts = 1
	if workers > cfg.KVHeads {
		fewest := len(c.heads[0].pos)
		for h := range c.heads {
			fewest = min(fewest, len(c.heads[h].pos))
		}
		w.parts = max(1, min(workers/cfg.KVHeads, fewest/minPartRows))
	}
	w.tasks = cfg.KVHeads * w.parts
	if w.parts > 1 {
		g := cfg.QHeads / cfg.KVHeads
		if len(w.states) < w.tasks {
			w.states = make([]kernels.AttendState, w.tasks)
		}
		for t := range w.tasks {
			w.states[t].Reset(g, cfg.Dim)
		}
	}
}

// work runs tasks, claiming one at a time, until none is left.
func (w *attendWork[E]) work(int) {
	for {
		t := int(w.next.Add(1) - 1)
		if t >= w.tasks {
			return
		}
		w.task(t)
	}
}

// task runs task t of the planned call: a KV head, or a part of one.
func (w *attendWork[E]) task(t int) {
	c := w.c
	d, g := c.cfg.Dim, c.cfg.QHeads/c.cfg.KVHeads
	scale := c.cfg.scale()
	h, part := t/w.parts, t%w.parts
	hr := &c.heads[h]
	q := w.q[h*g*d : (h+1)*g*d]
	if w.parts == 1 {
		attendRows(w.out[h*g*d:(h+1)*g*d], q, hr.k, hr.v, g, len(hr.pos), d, scale)
		return
	}
	n, width := len(hr.pos), c.width
	lo, hi := part*n/w.parts, (part+1)*n/w.parts
	k, v := hr.k[lo*width:hi*width], hr.v[lo*width:hi*width]
	attendPartial(&w.states[t], q, k, v, hi-lo, d, scale)
}

// finishAll merges the heads' parts, if any, and lets go of the call's slices.
func (w *attendWork[E]) finishAll() {
	if w.parts > 1 {
		for h := range w.c.cfg.KVHeads {
			w.finish(h)
		}
	}
	w.c, w.out, w.q = nil, nil, nil // hold no reference to the call's slices
}

// finish merges head h's parts and writes its output; rows that come out NaN or ±Inf
// are computed again over the whole head, by the kernel that falls back on the
// composition.
func (w *attendWork[E]) finish(h int) {
	c := w.c
	d, g := c.cfg.Dim, c.cfg.QHeads/c.cfg.KVHeads
	first := &w.states[h*w.parts]
	for p := 1; p < w.parts; p++ {
		first.Merge(&w.states[h*w.parts+p])
	}
	out := w.out[h*g*d : (h+1)*g*d]
	first.Finish(out)
	for i := range g {
		o := out[i*d : (i+1)*d]
		if s := kernels.Sum(o); s-s == 0 {
			continue
		}
		hr := &c.heads[h]
		attendRows(o, w.q[(h*g+i)*d:(h*g+i+1)*d], hr.k, hr.v, 1, len(hr.pos), d, c.cfg.scale())
	}
}

// attendRows is kernels.Attend over n packed rows of E (dim values each).
func attendRows[E Element](out, q []float32, k, v []E, rows, n, dim int, scale float32) {
	switch k := any(k).(type) {
	case []fp16.Float16:
		kernels.Attend(out, q, k, any(v).([]fp16.Float16), rows, n, dim, scale)
	case []bf16.BFloat16:
		kernels.AttendBF16(out, q, k, any(v).([]bf16.BFloat16), rows, n, dim, scale)
	case []q8.Block:
		kernels.AttendQ8(out, q, k, any(v).([]q8.Block), rows, n, dim, scale)
	case []float32:
		kernels.AttendF32(out, q, k, any(v).([]float32), rows, n, dim, scale)
	}
}

// attendPartial is kernels.AttendPartial over n packed rows of E (dim values each).
func attendPartial[E Element](st *kernels.AttendState, q []float32, k, v []E, n, dim int, scale float32) {
	switch k := any(k).(type) {
	case []fp16.Float16:
		kernels.AttendPartial(st, q, k, any(v).([]fp16.Float16), n, dim, scale)
	case []bf16.BFloat16:
		kernels.AttendPartialBF16(st, q, k, any(v).([]bf16.BFloat16), n, dim, scale)
	case []q8.Block:
		kernels.AttendPartialQ8(st, q, k, any(v).([]q8.Block), n, dim, scale)
	case []float32:
		kernels.AttendPartialF32(st, q, k, any(v).([]float32), n, dim, scale)
	}
}

// fanOut runs a call's work on goroutines: the caller's and helpers it waits for, none
// outliving the call. The helpers' closures are made once and kept, so a warm call
// allocates nothing.
type fanOut struct {
	work    func(worker int) // the owner's method, set once: goroutine worker's share, 0 the caller's
	helpers []func()
	wg      sync.WaitGroup
}

// run calls work on goroutines goroutines (at least the caller's) and waits for them.
func (f *fanOut) run(goroutines int) {
	helpers := max(goroutines-1, 0)
	for i := len(f.helpers); i < helpers; i++ {
		f.helpers = append(f.helpers, func() {
			f.work(i + 1)
			f.wg.Done()
		})
	}
	f.wg.Add(helpers)
	for _, h := range f.helpers[:helpers] {
		go h()
	}
	f.work(0)
	f.wg.Wait()
}
