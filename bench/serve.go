package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/snapkv"
)

// The serving study (issue #43, item 5; docs/serving.md): `go run ./bench -serve`
// simulates a server on this machine. One snapkv.PagePool, the same size for every
// scenario, holds the KV rows of one decoder layer of every sequence; requests arrive
// one every -serve-arrive decode steps and queue FIFO; each simulated step admits what
// the pool lets in (prefilling it chunk by chunk), then decodes one token of every
// running sequence (an Append each, then one snapkv.Batch.Attend over all of them),
// preempting the most recently admitted sequence when an Append finds the pool full.
// The scenarios differ only in the cache: full (ModeDense) or SnapKV at a few budgets
// (ModeBounded), one with a decode budget. The table counts how many sequences each
// runs at once on the same memory; the charts draw the pool's occupancy and the
// running sequences over the steps.
var (
	serveFlag     = flag.Bool("serve", false, "simulate a server of one PagePool, full cache against SnapKV (docs/serving.md): print its table, write serve.md and serve-*.svg to -out, and exit")
	serveRequests = flag.Int("serve-requests", 64, "with -serve: the requests")
	serveArrive   = flag.Int("serve-arrive", 2, "with -serve: decode steps between two requests' arrivals (request i arrives at step i×this); at 2 the pool, not the arrivals, bounds the sequences")
	servePrompt   = flag.Int("serve-prompt", 16384, "with -serve: each request's prompt tokens")
	serveGen      = flag.Int("serve-gen", 256, "with -serve: each request's generated tokens")
	servePoolSeqs = flag.Int("serve-pool", 8, "with -serve: the pool's size, in full-cache sequences of prompt + generated rows")
)

// serveConfig sizes the study; defaultServeConfig is the but for its requests,
// 32 rather than 64 (the full cache's decode alone takes about 80 ms a step on 2
// vCPUs, so 64 requests ran over 3 minutes); tests run a tiny one.
type serveConfig struct {
	Requests int // requests, request i arriving at step i·Arrive
	Arrive   int // decode steps between arrivals
	Prompt   int // prompt tokens of every request
	Gen      int // generated tokens of every request
	Chunk    int // prompt rows per Prefill chunk
	PoolSeqs int // the pool holds exactly this many full-cache sequences of Prompt+Gen rows
	PageRows int

	QHeads, KVHeads, Dim int
	Window, Kernel       int
	Budgets              []int // a ModeBounded scenario per budget
	DecodeBudget         int   // a scenario with this prompt and decode budget; 0: none
	Interval             int   // the decode budget's Interval
	Seed                 uint64
}

func defaultServeConfig() serveConfig {
	return serveConfig{
		Requests: 64, Arrive: 2, Prompt: 16384, Gen: 256, Chunk: 1024, PoolSeqs: 8, PageRows: 16,
		QHeads: 32, KVHeads: 8, Dim: 128, Window: 32, Kernel: 7,
		Budgets: []int{1024, 2048, 4096}, DecodeBudget: 2048, Interval: 32, Seed: 43,
	}
}

// pages is the pool's size: PoolSeqs sequences of Prompt+Gen rows in every KV head.
func (c serveConfig) pages() int {
	return c.PoolSeqs * c.KVHeads * ceilDiv(c.Prompt+c.Gen, c.PageRows)
}

// rowBytes is a row's bytes in one KV head: fp16 K and V of Dim values and an int32
// position.
func (c serveConfig) rowBytes() int { return 2*2*c.Dim + 4 }

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func (c serveConfig) check() error {
	switch {
	case c.Requests < 1 || c.Arrive < 0 || c.Prompt < 1 || c.Gen < 1 || c.Chunk < 1 || c.PoolSeqs < 1 || c.PageRows < 1:
		return fmt.Errorf("serve: requests %d, arrive %d, prompt %d, gen %d, chunk %d, pool %d, page rows %d: want each ≥ 1 (arrive ≥ 0)",
			c.Requests, c.Arrive, c.Prompt, c.Gen, c.Chunk, c.PoolSeqs, c.PageRows)
	}
	return nil
}

// A serveScenario is one cache configuration, PagePool left for the run to set.
type serveScenario struct {
	Name  string
	Cache snapkv.CacheConfig
}

// serveScenarios are the full cache, SnapKV at each budget, and SnapKV with a decode
// budget: every cache fp16, token-major chunks, Workers 1.
func serveScenarios(c serveConfig) []serveScenario {
	base := snapkv.CacheConfig{QHeads: c.QHeads, KVHeads: c.KVHeads, Dim: c.Dim, Layout: snapkv.TokenMajor, Reserve: c.Gen}
	full := base
	full.Mode, full.Select = snapkv.ModeDense, snapkv.Config{Workers: 1}
	out := []serveScenario{{"full", full}}
	sel := func(budget int) snapkv.Config {
		return snapkv.Config{Budget: budget, Window: c.Window, Kernel: c.Kernel, Pool: snapkv.PoolAvg, Workers: 1}
	}
	for _, b := range c.Budgets {
		s := base
		s.Mode, s.Select = snapkv.ModeBounded, sel(b)
		out = append(out, serveScenario{fmt.Sprintf("SnapKV %d", b), s})
	}
	if b := c.DecodeBudget; b > 0 {
		s := base
		s.Mode, s.Select, s.Reserve = snapkv.ModeBounded, sel(b), c.Interval
		s.Decode = snapkv.DecodeBudget{Budget: b, Interval: c.Interval, Rule: snapkv.DecodeSnapKV}
		out = append(out, serveScenario{fmt.Sprintf("SnapKV %d + decode budget %d", b, b), s})
	}
	return out
}

// holds is how many sequences the pool holds at their largest once prefilled (every
// KV head at its most rows while generating): Pages ÷ a sequence's pages.
func (c serveConfig) holds(s serveScenario) float64 {
	rows := c.Prompt + c.Gen
	if s.Cache.Mode != snapkv.ModeDense {
		kept := min(c.Prompt, s.Cache.Select.Budget)
		rows = kept + c.Gen
		if d := s.Cache.Decode; d.Budget > 0 {
			rows = min(rows, max(kept, d.Budget+d.Interval))
		}
	}
	return float64(c.pages()) / float64(c.KVHeads*ceilDiv(rows, c.PageRows))
}

// serveResult is one scenario's run.
type serveResult struct {
	Name        string
	Completed   int
	Generated   int // tokens of the completed requests
	Steps       int // simulated steps until the last request finished
	MeanRunning float64
	MaxRunning  int
	Preemptions int
	Failed      int     // admissions that stopped at a full pool (their pages released)
	MeanWait    float64 // steps from arrival to (the last) admission, mean over requests
	// Saturated is the mean running sequences over the steps at which an arrived
	// request still waited after admission (the pool refused it): the concurrency the
	// pool allows, not the arrivals; NaN when no request ever waited.
	Saturated  float64
	Peak       float64 // the pool's high water mark, fraction of its pages
	FinalInUse int     // pages in use after the last request (0: every page came back)
	Holds      float64 // sequences the pool holds at their largest (serveConfig.holds)
	Wall       time.Duration
	Decode     time.Duration // inside the decode phase: Appends, Batch.Attend, releases
	Prefill    time.Duration // inside admission: random chunks and Prefill calls

	Running   []int     // per step: the sequences decoded
	Occupancy []float64 // per step, after the batch's Attend: pool InUse ÷ Pages
}

// serveSeq is a running sequence: its request, its cache and decode buffers.
type serveSeq struct {
	req    int // request index
	cache  *snapkv.Cache
	gen    int
	q, out []float32
}

// serveSim is one scenario's server.
type serveSim struct {
	cfg  serveConfig
	sc   serveScenario
	pool *snapkv.PagePool
	rng  *rand.PCG
	free []*serveSeq // released caches, reused for the next admission

	k, v   []fp16.Float16 // a chunk's rows, reused
	qw     []float32      // a chunk's last Window queries
	tk, tv []fp16.Float16 // one decoded token's rows

	batch  snapkv.Batch
	outs   [][]float32
	qs     [][]float32
	caches []*snapkv.Cache
}

// runServe runs one scenario on a fresh pool of cfg.pages() pages.
func runServe(cfg serveConfig, sc serveScenario) (serveResult, error) {
	res := serveResult{Name: sc.Name, Holds: cfg.holds(sc)}
	if err := cfg.check(); err != nil {
		return res, err
	}
	pool, err := snapkv.NewPagePool(snapkv.PagePoolConfig{Pages: cfg.pages(), PageRows: cfg.PageRows})
	if err != nil {
		return res, err
	}
	sc.Cache.PagePool = pool
	row := cfg.KVHeads * cfg.Dim
	s := &serveSim{cfg: cfg, sc: sc, pool: pool, rng: rand.NewPCG(cfg.Seed, 0x5e17e),
		k: make([]fp16.Float16, cfg.Chunk*row), v: make([]fp16.Float16, cfg.Chunk*row),
		qw: make([]float32, min(cfg.Chunk, cfg.Window)*cfg.QHeads*cfg.Dim),
		tk: make([]fp16.Float16, row), tv: make([]fp16.Float16, row)}
	s.batch.Workers = 1

	queue := make([]int, cfg.Requests) // request indices, FIFO; preempted ones go back to the head
	for i := range queue {
		queue[i] = i
	}
	arrive := func(r int) int { return r * cfg.Arrive }
	var running []*serveSeq // in order of admission
	admitted := make([]int, cfg.Requests)
	limit := 100*(cfg.Requests*(cfg.Arrive+cfg.Gen)) + 1000
	satSteps, satSum := 0, 0
	start := time.Now()
	for res.Completed < cfg.Requests {
		step := res.Steps
		if step > limit {
			return res, fmt.Errorf("serve: %s: %d of %d requests done after %d steps: the pool thrashes", sc.Name, res.Completed, cfg.Requests, step)
		}
		// (1) Admission: the queue's head while it has arrived and the pool takes it.
		t := time.Now()
		for len(queue) > 0 && arrive(queue[0]) <= step {
			seq, err := s.prefill(queue[0])
			if err != nil {
				return res, err
			}
			if seq == nil { // the pool is full: the request stays at the head
				res.Failed++
				if len(running) == 0 {
					return res, fmt.Errorf("serve: %s: a pool of %d pages cannot prefill one request of %d rows", sc.Name, cfg.pages(), cfg.Prompt)
				}
				break
			}
			admitted[seq.req] = step
			running = append(running, seq)
			queue = queue[1:]
		}
		res.Prefill += time.Since(t)
		waiting := len(queue) > 0 && arrive(queue[0]) <= step

		// (2) Decode: a token's rows into every running sequence, then one batched
		// Attend. An Append the pool cannot supply preempts the newest sequence.
		t = time.Now()
		for i := 0; i < len(running); i++ {
			seq := running[i]
			fillHalves(s.rng, s.tk)
			fillHalves(s.rng, s.tv)
			for {
				err := seq.cache.Append(s.tk, s.tv)
				if err == nil {
					break
				}
				if !errors.Is(err, snapkv.ErrPoolFull) {
					return res, fmt.Errorf("serve: %s: request %d: %w", sc.Name, seq.req, err)
				}
				victim := running[len(running)-1]
				running = running[:len(running)-1]
				s.release(victim)
				queue = append([]int{victim.req}, queue...)
				res.Preemptions++
				if victim == seq {
					if len(running) == 0 {
						return res, fmt.Errorf("serve: %s: a pool of %d pages cannot hold one sequence", sc.Name, cfg.pages())
					}
					break
				}
			}
		}
		n := len(running)
		if n > 0 {
			s.outs, s.qs, s.caches = s.outs[:0], s.qs[:0], s.caches[:0]
			for _, seq := range running {
				fillFloats(s.rng, seq.q)
				s.outs, s.qs, s.caches = append(s.outs, seq.out), append(s.qs, seq.q), append(s.caches, seq.cache)
			}
			if err := s.batch.Attend(s.outs, s.qs, s.caches); err != nil {
				return res, fmt.Errorf("serve: %s: %w", sc.Name, err)
			}
			clear(s.caches)
		}
		// (3) Record, then finish the sequences that have generated every token.
		st := pool.Stats()
		res.Running = append(res.Running, n)
		res.Occupancy = append(res.Occupancy, float64(st.InUse)/float64(st.Pages))
		res.MaxRunning = max(res.MaxRunning, n)
		if waiting {
			satSteps++
			satSum += n
		}
		kept := running[:0]
		for _, seq := range running {
			if seq.gen++; seq.gen < cfg.Gen {
				kept = append(kept, seq)
				continue
			}
			res.Completed++
			res.Generated += cfg.Gen
			res.MeanWait += float64(admitted[seq.req] - arrive(seq.req))
			s.release(seq)
		}
		clear(running[len(kept):])
		running = kept
		res.Decode += time.Since(t)
		res.Steps++
	}
	res.Wall = time.Since(start)
	sum := 0
	for _, n := range res.Running {
		sum += n
	}
	res.MeanRunning = float64(sum) / float64(max(res.Steps, 1))
	res.MeanWait /= float64(res.Completed)
	res.Saturated = math.NaN()
	if satSteps > 0 {
		res.Saturated = float64(satSum) / float64(satSteps)
	}
	st := pool.Stats()
	res.Peak, res.FinalInUse = float64(st.HighWater)/float64(st.Pages), st.InUse
	if st.InUse != 0 {
		return res, fmt.Errorf("serve: %s: %d pages still in use after the last request", sc.Name, st.InUse)
	}
	return res, nil
}

// prefill prefills request r into a fresh cache (a released one where there is one),
// chunk by chunk, each chunk's rows and window queries random. It returns nil, and
// releases the cache, when a chunk finds the pool full.
func (s *serveSim) prefill(r int) (*serveSeq, error) {
	cfg := &s.cfg
	var seq *serveSeq
	if n := len(s.free); n > 0 {
		seq, s.free = s.free[n-1], s.free[:n-1]
	} else {
		c, err := snapkv.NewCache(s.sc.Cache)
		if err != nil {
			return nil, err
		}
		seq = &serveSeq{cache: c, q: make([]float32, cfg.QHeads*cfg.Dim), out: make([]float32, cfg.QHeads*cfg.Dim)}
	}
	seq.req, seq.gen = r, 0
	row := cfg.KVHeads * cfg.Dim
	for off := 0; off < cfg.Prompt; off += cfg.Chunk {
		n := min(cfg.Chunk, cfg.Prompt-off)
		ch := snapkv.Chunk{K: s.k[:n*row], V: s.v[:n*row], Rows: n, Last: off+n == cfg.Prompt}
		fillHalves(s.rng, ch.K)
		fillHalves(s.rng, ch.V)
		if s.sc.Cache.Mode != snapkv.ModeDense { // the chunk's last Window queries: ModeBounded selects after each chunk
			ch.Q = s.qw[:min(n, cfg.Window)*cfg.QHeads*cfg.Dim]
			fillFloats(s.rng, ch.Q)
		}
		if err := seq.cache.Prefill(ch); err != nil {
			s.release(seq)
			if errors.Is(err, snapkv.ErrPoolFull) {
				return nil, nil
			}
			return nil, fmt.Errorf("serve: %s: request %d: %w", s.sc.Name, r, err)
		}
	}
	return seq, nil
}

// release gives every page of seq's cache back and keeps the cache for the next.
func (s *serveSim) release(seq *serveSeq) {
	seq.cache.Release()
	s.free = append(s.free, seq)
}

// fillHalves fills x with random fp16 values of magnitude in [1/8, 1/2), either sign:
// the bits directly, four values per draw.
func fillHalves(r *rand.PCG, x []fp16.Float16) {
	i := 0
	for ; i+4 <= len(x); i += 4 {
		u := r.Uint64()
		x[i] = fp16.Float16(uint16(u)&0x87ff | 0x3000)
		x[i+1] = fp16.Float16(uint16(u>>16)&0x87ff | 0x3000)
		x[i+2] = fp16.Float16(uint16(u>>32)&0x87ff | 0x3000)
		x[i+3] = fp16.Float16(uint16(u>>48)&0x87ff | 0x3000)
	}
	for ; i < len(x); i++ {
		x[i] = fp16.Float16(uint16(r.Uint64())&0x87ff | 0x3000)
	}
}

// fillFloats fills x with random values in [−1, 1), two per draw.
func fillFloats(r *rand.PCG, x []float32) {
	const scale = 1.0 / (1 << 31)
	i := 0
	for ; i+2 <= len(x); i += 2 {
		u := r.Uint64()
		x[i] = float32(int32(uint32(u))) * scale
		x[i+1] = float32(int32(uint32(u>>32))) * scale
	}
	for ; i < len(x); i++ {
		x[i] = float32(int32(uint32(r.Uint64()))) * scale
	}
}

// serveStudy runs every scenario of cfg, full first, reporting each to progress
// (nil: none).
func serveStudy(cfg serveConfig, progress io.Writer) ([]serveResult, error) {
	var out []serveResult
	for _, sc := range serveScenarios(cfg) {
		r, err := runServe(cfg, sc)
		if err != nil {
			return out, err
		}
		if progress != nil {
			fmt.Fprintf(progress, "serve: %-30s %d/%d requests, %d steps, %.1f s\n", sc.Name, r.Completed, cfg.Requests, r.Steps, r.Wall.Seconds())
		}
		out = append(out, r)
		runtime.GC() // the last scenario's caches are garbage: not the next one's to collect
	}
	return out, nil
}

// serveMarkdown is the study's table with the configuration above it and the issue's
// target below it.
func serveMarkdown(cfg serveConfig, results []serveResult, total time.Duration) string {
	var b strings.Builder
	pages := cfg.pages()
	bytes := float64(pages) * float64(cfg.PageRows*cfg.rowBytes())
	fmt.Fprintf(&b, "## Serving study: one page pool, full cache against SnapKV\n\n")
	fmt.Fprintf(&b, "%d requests of %d-token prompts and %d generated tokens, request i arriving at step i×%d "+
		"(a step is one batched decode step of every running sequence), FIFO. One decoder layer: %d KV heads, %d query heads (G %d), Dim %d, fp16, "+
		"token-major prompt chunks of %d rows, Workers 1 (GOMAXPROCS %d, kernels %s).\n\n",
		cfg.Requests, cfg.Prompt, cfg.Gen, cfg.Arrive, cfg.KVHeads, cfg.QHeads, cfg.QHeads/cfg.KVHeads, cfg.Dim,
		cfg.Chunk, runtime.GOMAXPROCS(0), kernels.Active())
	fmt.Fprintf(&b, "Pool: %d pages of %d rows, exactly %d full-cache sequences of %d rows × %d KV heads; "+
		"%.1f MiB in fp16 at Dim %d (%d B a row: K, V and an int32 position). Every layer of a model scales the pool and the sequences alike, so the ratios hold for a model.\n\n",
		pages, cfg.PageRows, cfg.PoolSeqs, cfg.Prompt+cfg.Gen, cfg.KVHeads, bytes/(1<<20), cfg.Dim, cfg.rowBytes())
	b.WriteString("| scenario | pool holds (sequences) | completed | mean running | max running | concurrency ÷ full | running while requests wait (÷ full) | preemptions | failed admissions | peak pool | steps | mean wait (steps) | tok/s | decode tok/s | run (s) |\n")
	b.WriteString("| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |\n")
	var full serveResult
	for _, r := range results {
		if r.Name == "full" {
			full = r
		}
	}
	for _, r := range results {
		ratio := "-"
		if full.MeanRunning > 0 {
			ratio = fmt.Sprintf("%.2f× (max %.2f×)", r.MeanRunning/full.MeanRunning, float64(r.MaxRunning)/float64(max(full.MaxRunning, 1)))
		}
		sat := "-"
		switch {
		case !math.IsNaN(r.Saturated) && full.Saturated > 0:
			sat = fmt.Sprintf("%.1f (%.2f×)", r.Saturated, r.Saturated/full.Saturated)
		case !math.IsNaN(r.Saturated):
			sat = fmt.Sprintf("%.1f", r.Saturated)
		}
		fmt.Fprintf(&b, "| %s | %.1f | %d/%d | %.1f | %d | %s | %s | %d | %d | %.1f %% | %d | %.1f | %.0f | %.0f | %.1f |\n",
			r.Name, r.Holds, r.Completed, cfg.Requests, r.MeanRunning, r.MaxRunning, ratio, sat, r.Preemptions, r.Failed,
			100*r.Peak, r.Steps, r.MeanWait, float64(r.Generated)/r.Wall.Seconds(), float64(r.Generated)/r.Decode.Seconds(), r.Wall.Seconds())
	}
	fmt.Fprintf(&b, "\nWhole study: %.0f s. tok/s: generated tokens of completed requests ÷ the scenario's wall clock, prefill included; decode tok/s ÷ the time inside the decode phase. "+
		"Pool holds: Pages ÷ a sequence's pages at its largest once prefilled. Mean running: over every step until the last request finished. "+
		"Running while requests wait: the mean over the steps at which an arrived request still waited after admission (the pool, not the arrivals, was the bound; - : none waited).\n\n", total.Seconds())
	b.WriteString("Target (issue #43): 16,384-token prompts, 256 generated, Budget 2,048: SnapKV ÷ full ≥ 6× sequences served at once.")
	for _, r := range results {
		if full.MeanRunning > 0 && strings.HasPrefix(r.Name, "SnapKV 2048") {
			fmt.Fprintf(&b, " %s: %.2f× mean, %.2f× max, %.2f× the pool's capacity", r.Name,
				r.MeanRunning/full.MeanRunning, float64(r.MaxRunning)/float64(max(full.MaxRunning, 1)), r.Holds/full.Holds)
			if !math.IsNaN(r.Saturated) && full.Saturated > 0 {
				fmt.Fprintf(&b, ", %.2f× while requests waited", r.Saturated/full.Saturated)
			}
			b.WriteString(".")
		}
	}
	if cfg.Arrive > 0 {
		fmt.Fprintf(&b, " At one arrival every %d steps and %d steps of decoding each, at most min(%d, ⌈%d/%d⌉) = %d requests are in flight at once however large the pool: "+
			"where the pool holds more, the arrivals bound the ratios, and the mean also counts the ramp up and the drain.",
			cfg.Arrive, cfg.Gen, cfg.Requests, cfg.Gen, cfg.Arrive, min(cfg.Requests, ceilDiv(cfg.Gen, cfg.Arrive)))
	}
	b.WriteString("\n")
	return b.String()
}

// serveCharts are the pool's occupancy and the running sequences over the steps, one
// line per scenario, each averaged over buckets of steps so that a line has at most
// 120 points.
func serveCharts(cfg serveConfig, results []serveResult) []Chart {
	const points = 120
	steps := 0
	for _, r := range results {
		steps = max(steps, r.Steps)
	}
	bucket := max(1, ceilDiv(steps, points))
	occ, run := make([]series, len(results)), make([]series, len(results))
	fullMax := 0
	for i, r := range results {
		occ[i].name, run[i].name = r.Name, r.Name
		if r.Name == "full" {
			fullMax = r.MaxRunning
		}
		for s := 0; s < len(r.Running); s += bucket {
			e := min(s+bucket, len(r.Running))
			var o, n float64
			for j := s; j < e; j++ {
				o += r.Occupancy[j]
				n += float64(r.Running[j])
			}
			x := float64(s+e-1) / 2
			occ[i].x, occ[i].y = append(occ[i].x, x), append(occ[i].y, 100*o/float64(e-s))
			run[i].x, run[i].y = append(run[i].x, x), append(run[i].y, n/float64(e-s))
		}
	}
	xlabel := fmt.Sprintf("simulated step (one batched decode step; points are means over %d steps)", bucket)
	x := axis{label: xlabel, min: 0, max: float64(max(steps, 1))}
	title := fmt.Sprintf("%d requests, %d-token prompts, %d generated, one every %d steps", cfg.Requests, cfg.Prompt, cfg.Gen, cfg.Arrive)
	pool := lineChart(lineSpec{
		title:  "Page pool occupancy: " + title,
		x:      x,
		y:      axis{label: "pool pages in use (%)", min: 0, max: 105, at: []float64{0, 20, 40, 60, 80, 100}},
		series: occ, limits: []refLine{{"pool", 100, "%"}},
	})
	var limits []refLine
	if fullMax > 0 {
		limits = append(limits, refLine{"target 6 × full's max:", float64(6 * fullMax), "sequences"})
	}
	running := lineChart(lineSpec{
		title:  "Sequences decoding at once: " + title,
		x:      x,
		y:      axis{label: "running sequences"},
		series: run, limits: limits,
	})
	return []Chart{{"serve-pool.svg", pool}, {"serve-running.svg", running}}
}

// writeServe prints the table on w and, with dir not empty, writes serve.md and the
// charts there, saying so on note.
func writeServe(w, note io.Writer, dir string, cfg serveConfig, results []serveResult, total time.Duration) error {
	md := serveMarkdown(cfg, results, total)
	if _, err := io.WriteString(w, md); err != nil {
		return err
	}
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "serve.md"), []byte(md), 0o644); err != nil {
		return err
	}
	names := []string{"serve.md"}
	for _, c := range serveCharts(cfg, results) {
		if err := os.WriteFile(filepath.Join(dir, c.File), c.SVG, 0o644); err != nil {
			return err
		}
		names = append(names, c.File)
	}
	fmt.Fprintf(note, "wrote %s: %s\n", dir, strings.Join(names, ", "))
	return nil
}

// serveMain is main's hook, called after flag.Parse: it runs -serve and exits when the
// flag is set. -out is main's flag, read by name.
func serveMain() {
	if !*serveFlag {
		return
	}
	cfg := defaultServeConfig()
	cfg.Requests, cfg.Arrive, cfg.Prompt, cfg.Gen, cfg.PoolSeqs = *serveRequests, *serveArrive, *servePrompt, *serveGen, *servePoolSeqs
	dir := "bench-report"
	if f := flag.Lookup("out"); f != nil {
		dir = f.Value.String()
	}
	start := time.Now()
	results, err := serveStudy(cfg, os.Stderr)
	if err == nil {
		err = writeServe(os.Stdout, os.Stderr, dir, cfg, results, time.Since(start))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
