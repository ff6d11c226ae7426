package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvsimd/kvsimd/kernels"
)

// eachVariant runs body as the sub-benchmarks variant/n=N, for every variant this CPU
// runs and every size, so benchstat compares variants within one run.
func eachVariant(b *testing.B, sizes []int, body func(b *testing.B, n int)) {
	start := kernels.Active()
	defer kernels.Use(start)
	for _, v := range kernels.Variants() {
		must(kernels.Use(v))
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/n=%d", v, n), func(b *testing.B) { body(b, n) })
		}
	}
}

// A sample is one section's figures over the repetitions of one variant.
type sample struct {
	nsPerOp    []float64
	bytesPerOp int64
	flopsPerOp float64
}

// measure runs body reps times under the go test harness, each time for at least
// benchtime, and returns ns/op of each run. The body's setup runs once per repetition
// (b.Loop calls it once), outside the timing. Once the runs have taken budget, it stops
// early: after the first repetition that ends past it. One op of generic
// Scores at 128k keys takes seconds, and its first run already says what matters.
func measure(body func(b *testing.B), reps int, benchtime, budget time.Duration) sample {
	// Restore -test.benchtime, which a go test run of the benchmarks after the report's
	// tests would otherwise inherit.
	old := flag.Lookup("test.benchtime").Value.String()
	defer func() { must(flag.Set("test.benchtime", old)) }()
	must(flag.Set("test.benchtime", benchtime.String()))
	var s sample
	start := time.Now()
	for i := 0; i < reps && (i == 0 || time.Since(start) < budget); i++ {
		r := testing.Benchmark(body)
		if r.N == 0 {
			panic("benchmark body failed")
		}
		ns := float64(r.T.Nanoseconds()) / float64(r.N)
		s.nsPerOp = append(s.nsPerOp, ns)
		s.bytesPerOp = r.Bytes
		s.flopsPerOp = r.Extra["GFLOP/s"] * ns
	}
	return s
}

// progress writes one status line to stderr: on a terminal it is rewritten in place,
// elsewhere (a CI log) it prints one line per step.
type progress struct {
	w        io.Writer
	terminal bool
	started  time.Time
	shown    bool
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, started: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.terminal = true
		}
	}
	return p
}

// step reports that item done+1 of total, what, is running now.
func (p *progress) step(done, total int, what string) {
	if p == nil {
		return
	}
	line := fmt.Sprintf("[%3d/%d, %s] %s", done+1, total, time.Since(p.started).Round(time.Second), what)
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.shown = true
	} else {
		fmt.Fprintln(p.w, line)
	}
}

// finish ends the status line.
func (p *progress) finish() {
	if p == nil {
		return
	}
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "done in %s\n", time.Since(p.started).Round(100*time.Millisecond))
}

// run measures the limits, then every selected section on every selected variant,
// then the peers, shares and result tables, and assembles the report.
func run(o options, secs []section, p *progress) (*Report, error) {
	variants, err := variantsToRun(o.variants, kernels.Variants())
	if err != nil {
		return nil, err
	}
	var todo []section
	for _, s := range secs {
		if strings.Contains(s.name, o.only) {
			todo = append(todo, s)
		}
	}
	var tables []resultTable // -only picks result tables by name too
	for _, t := range resultTables {
		if strings.Contains(t.name, o.only) {
			tables = append(tables, t)
		}
	}
	r := newReport(o)
	total := 1 + len(todo)*len(variants) + len(tables)
	if o.peers {
		total++
	}
	done := 0

	p.step(done, total, "limits: FMA peak and read bandwidth")
	r.Limits = append(measureLimits(o), measureFootprints(o, todo)...)
	done++

	start := kernels.Active()
	defer kernels.Use(start)
	for _, s := range todo {
		fastest := time.Duration(math.MaxInt64)
		for _, v := range variants {
			if v == "generic" && fastest > o.genericCap && len(variants) > 1 {
				r.SkippedGeneric = append(r.SkippedGeneric, s.name)
				done++
				continue
			}
			p.step(done, total, fmt.Sprintf("%s · %s", s.name, v))
			must(kernels.Use(v))
			m := measure(s.body, o.reps, o.benchtime, o.budget)
			r.addFigure(s, v, m)
			fastest = min(fastest, time.Duration(statOf(m.nsPerOp).Median))
			done++
		}
	}
	must(kernels.Use(start))

	if o.peers {
		p.step(done, total, "peers: go run in bench/peers (builds the peer module first)")
		peers, err := runPeers(o)
		if err != nil {
			return nil, fmt.Errorf("peers: %w", err)
		}
		r.Figures = append(r.Figures, peers...)
		done++
	}
	for _, t := range tables {
		p.step(done, total, t.name)
		res, err := t.run(o.quick)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
		r.Tables = append(r.Tables, res)
		done++
	}
	p.finish()
	r.derive()
	return r, nil
}

// measureLimits times the FMA loop and the read loop at each cache level.
func measureLimits(o options) []Limit {
	samples := max(o.reps, 3)
	limits := []Limit{}
	if rates := fmaGFLOPS(samples); rates != nil {
		limits = append(limits, Limit{
			Name: fmt.Sprintf("FMA %d-bit", peakWidth), Unit: "GFLOP/s",
			What:  fmt.Sprintf("fp32 FMA throughput at %d bits, independent chains", peakWidth),
			Value: statOf(rates),
		})
	}
	minBytes := 1 << 30 // about 3 ms in L1, 30 ms from DRAM
	if o.quick {
		minBytes = 1 << 27
	}
	levels := cacheLevels()
	if o.tiny {
		levels, minBytes = levels[:2], 1<<22
	}
	for _, l := range levels {
		rates := readGBps(l.buffer, samples, minBytes)
		if rates == nil {
			break
		}
		limits = append(limits, Limit{
			Name: l.name + " read", Unit: "GB/s", Bytes: l.size,
			What:  fmt.Sprintf("%d-bit loads sweeping %s, a working set that fits in %s", peakWidth, sizeText(l.buffer), l.name),
			Value: statOf(rates),
		})
	}
	return limits
}

// measureFootprints times the read loop over each footprint the sections to run
// declare (footprints), once per distinct size: the read bandwidth their rooflines
// divide by, over the same bytes.
func measureFootprints(o options, todo []section) []Limit {
	var sizes []int64
	for _, s := range todo {
		if b, ok := footprints[s.name]; ok && !slices.Contains(sizes, b) {
			sizes = append(sizes, b)
		}
	}
	slices.Sort(sizes)
	minBytes := 1 << 30
	if o.quick || o.tiny {
		minBytes = 1 << 27
	}
	var limits []Limit
	for _, b := range sizes {
		rates := readGBps(int(b), max(o.reps, 3), minBytes)
		if rates == nil {
			break
		}
		limits = append(limits, Limit{
			Name: footprintLimitName(b), Unit: "GB/s", Bytes: int(b), Footprint: true,
			What:  fmt.Sprintf("%d-bit loads sweeping %s, the K and V of one decode step", peakWidth, sizeText(int(b))),
			Value: statOf(rates),
		})
	}
	return limits
}
