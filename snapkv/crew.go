package snapkv

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// job is one call's scored heads, numbered across its plans, claimed one at a time by
// the caller and the woken crew members. It holds no pointer to the Selector, so that
// an abandoned Selector can be collected and its crew stopped.
type job struct {
	cfg   *Config
	plans []plan
	total int
	next  atomic.Int64
	wg    sync.WaitGroup
}

// run scores heads until none is left.
func (j *job) run(ws *workspace) {
	for {
		t := int(j.next.Add(1) - 1)
		if t >= j.total {
			return
		}
		i := 0
		for j.plans[i].keep != keepScored || t >= j.plans[i].firstTask+j.plans[i].in.KVHeads {
			i++
		}
		ws.score(j.cfg, &j.plans[i], t-j.plans[i].firstTask)
	}
}

// crew is the Selector's persistent helper goroutines, each with its own workspace.
// Waking one is a channel send, so a call allocates nothing.
type crew struct {
	wake chan *job
}

// startCrew starts workers−1 helpers once; they stop when the Selector is collected.
func (s *Selector) startCrew() {
	if s.crew != nil {
		return
	}
	c := &crew{wake: make(chan *job, s.workers)}
	for range s.workers - 1 {
		go c.work(new(workspace))
	}
	s.crew = c
	runtime.AddCleanup(s, func(c *crew) { close(c.wake) }, c)
}

func (c *crew) work(ws *workspace) {
	for j := range c.wake {
		j.run(ws)
		j.wg.Done()
	}
}
