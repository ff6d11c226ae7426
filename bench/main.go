// Command bench is kvsimd's report: what this CPU can run and which variant start-up
// chose, then every kernel per variant at the sizes that matter for SnapKV, each as
// time, throughput, speed-up over generic and percentage of its roofline measured in
// the same process (the longest of its FLOPs at the FMA peak, its bytes at the read
// bandwidth of its footprint or cache level, and its vector instructions at the issue
// rate: report_roofline.go), optionally beside the Go libraries one would use instead.
// Fused decode attention gets a section and chart of its own, time ÷ roofline per
// format and layout (decode-roofline.svg; -only DecodeAttention runs it alone).
//
//	go run ./bench                  # Markdown on stdout; report.md, report.json, charts in ./bench-report
//	go run ./bench -quick           # the same in under 30 s, fewer repetitions
//	go run ./bench -peers           # adds vek32, gonum blas32, viterin/partial, x448/float16
//	go run ./bench -compare old.json new.json   # each figure's ratio between two runs
//	go run ./bench -serve           # the serving study: full cache against SnapKV on one page pool (serve.go)
//	go test -bench . ./bench        # the same bodies as go test benchmarks, for benchstat
//
// Each kernel family's file appends to sections (and, for composite figures and
// non-timing results, to shares and resultTables, see report.go); the report picks up
// whatever is registered, so a new family needs no edit here.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// A section measures one kernel at one size; the report runs it for every variant.
type section struct {
	// name is "Kernel params… n=N": sections whose names differ only in n=N form one
	// series of the throughput-vs-size chart.
	name string
	// unit names what perElement counts ("elem", "score"); perElement is how many of
	// them one op processes, for the ns/unit figure.
	unit       string
	perElement int
	// body is a go test benchmark: it calls b.SetBytes with the bytes one op reads,
	// and reportFlops if the op does floating-point arithmetic worth counting.
	body func(b *testing.B)
}

var sections []section

// options are the report's flags.
type options struct {
	quick    bool
	variants string // comma-separated; empty: every variant this CPU runs
	only     string // substring of section names
	peers    bool
	out      string
	json     bool
	// reps is how many times each figure is measured; benchtime is each time's
	// minimum duration.
	reps      int
	benchtime time.Duration
	// budget is the time after which a figure takes no more repetitions.
	budget time.Duration
	// genericCap: generic is not run where the fastest variant takes longer than
	// this per op, since generic would take seconds (SnapKV's layer, 128k-key Scores).
	genericCap time.Duration
	// tiny, for tests only, measures the read bandwidth of L1 and L2 alone and
	// briefly.
	tiny bool
}

func main() {
	var o options
	flag.BoolVar(&o.quick, "quick", false, "fewer and shorter repetitions: under 30 s")
	flag.StringVar(&o.variants, "isa", "", "measure only these variants (comma-separated, e.g. avx2 or avx2,generic); × generic needs generic")
	flag.StringVar(&o.only, "only", "", "run only the sections and result tables (e.g. pass-key) whose name contains this")
	flag.BoolVar(&o.peers, "peers", false, "also run the peer libraries (go run in bench/peers, a module of its own)")
	flag.StringVar(&o.out, "out", "bench-report", "directory for report.md, report.json and the SVG charts; empty for none")
	flag.BoolVar(&o.json, "json", false, "print report.json on stdout instead of the Markdown (with -passkey: its rows as JSON)")
	compare := flag.Bool("compare", false, "compare two report.json files: -compare old.json new.json")
	flag.Parse()
	passkeyMain()
	serveMain()
	testing.Init()

	if *compare {
		if flag.NArg() != 2 {
			fatalf("-compare needs two files: -compare old.json new.json")
		}
		if err := compareFiles(os.Stdout, flag.Arg(0), flag.Arg(1)); err != nil {
			fatalf("%v", err)
		}
		return
	}
	o.reps, o.benchtime, o.budget, o.genericCap = 5, 25*time.Millisecond, 6*time.Second, 20*time.Millisecond
	if o.quick {
		o.reps, o.benchtime, o.budget, o.genericCap = 3, 5*time.Millisecond, time.Second, time.Millisecond
	}
	r, err := run(o, sections, newProgress(os.Stderr))
	if err != nil {
		fatalf("%v", err)
	}
	if err := r.write(os.Stdout, o); err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(1)
}

// variantsToRun returns the variants the -isa flag names, checked against those this
// CPU runs, or all of them.
func variantsToRun(flagValue string, available []string) ([]string, error) {
	if flagValue == "" {
		return available, nil
	}
	var out []string
	for _, v := range strings.Split(flagValue, ",") {
		if !slices.Contains(available, v) {
			return nil, fmt.Errorf("-isa %s: this CPU and build run %s", v, strings.Join(available, ", "))
		}
		out = append(out, v)
	}
	return out, nil
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
