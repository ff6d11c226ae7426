package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/cpuid/v2"
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/kernels"
)

// Schema names the layout of report.json below; it changes when a field changes meaning.
const Schema = "kvsimd-bench/1"

// Report is report.json. Every timing is a Stat over the repetitions; throughputs and
// percentages are derived from the medians.
type Report struct {
	Schema string `json:"schema"` // "kvsimd-bench/1"
	// Time is when the run started; Go is runtime.Version() and GOOS/GOARCH; Commit is
	// the VCS revision the binary was built from, when the build recorded it.
	Time   time.Time `json:"time"`
	Go     string    `json:"go"`
	Commit string    `json:"commit,omitempty"`
	// Reps is how many times each figure was measured, each for at least BenchtimeNs.
	Reps        int      `json:"reps"`
	BenchtimeNs int64    `json:"benchtime_ns"`
	Machine     Machine  `json:"machine"`
	Limits      []Limit  `json:"limits"`
	Figures     []Figure `json:"figures"`
	// SkippedGeneric names the sections whose generic variant was not run: the
	// fastest variant took so long that generic would have taken seconds.
	SkippedGeneric []string `json:"skipped_generic,omitempty"`
	Shares         []Share  `json:"shares,omitempty"`
	Tables         []Table  `json:"tables,omitempty"`
}

// Machine is what the CPU offers and what kvsimd chose.
type Machine struct {
	CPU      string   `json:"cpu"`
	Features []string `json:"features"` // the ones kvsimd's variants look at
	Variants []string `json:"variants"` // those this CPU and build run, best first
	Active   string   `json:"active"`   // the variant start-up installed
	Why      string   `json:"why"`      // why that one
	Cores    int      `json:"logical_cores"`
	L1D      int      `json:"l1d_bytes"`
	L2       int      `json:"l2_bytes"`
	L3       int      `json:"l3_bytes"` // -1: not reported by the CPU (hypervisors)
}

// A Stat summarises repeated measurements: the median and the extremes.
type Stat struct {
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	All    []float64 `json:"samples"`
}

// Spread is the range of the samples relative to their median.
func (s Stat) Spread() float64 {
	if s.Median == 0 {
		return 0
	}
	return (s.Max - s.Min) / s.Median
}

func statOf(x []float64) Stat {
	if len(x) == 0 {
		return Stat{}
	}
	s := slices.Clone(x)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Stat{Median: m, Min: s[0], Max: s[len(s)-1], All: x}
}

// A Limit is a ceiling measured in this run: "FMA 512-bit" in GFLOP/s, or "L1 read",
// "L2 read", "L3 read", "DRAM read" in GB/s. Kernels are held to Value.Max, the best
// the machine showed, since sharing only ever slows a run down.
type Limit struct {
	Name  string `json:"name"`
	What  string `json:"what"`
	Unit  string `json:"unit"`
	Bytes int    `json:"level_bytes,omitempty"` // capacity of the cache level; 0 for DRAM
	// Footprint marks a read limit measured over exactly Bytes, the footprint of the
	// figures whose BytesPerOp it equals ("read 8 MiB": one decode step's K and V).
	Footprint bool `json:"footprint,omitempty"`
	Value     Stat `json:"value"`
}

// A Figure is one kernel at one size on one variant, or one peer library's row.
type Figure struct {
	Name   string `json:"name"`   // the section: "DotF16 n=1024"
	Kernel string `json:"kernel"` // its first word: "DotF16"
	Series string `json:"series"` // the name without n=N: "DotF16"
	N      int    `json:"n"`      // the n=N of the name; 0 if none
	// Variant is the kvsimd variant, or for a peer the library ("vek32"); Computes
	// says what a peer actually computes, which may differ from the kernel (data
	// widened to fp32 beforehand, say).
	Variant  string `json:"variant"`
	Peer     bool   `json:"peer,omitempty"`
	Computes string `json:"computes,omitempty"`
	// NsPerOp is the time of one op; Unit and PerOp say how many things one op does.
	NsPerOp Stat   `json:"ns_per_op"`
	Unit    string `json:"unit"`
	PerOp   int    `json:"per_op"`
	// BytesPerOp is what the op reads from the data it streams (b.SetBytes);
	// FlopsPerOp its floating-point operations, 0 if it does none worth counting.
	BytesPerOp int64   `json:"bytes_per_op"`
	FlopsPerOp float64 `json:"flops_per_op"`
	// Derived from the median: GB/s over BytesPerOp, GFLOP/s over FlopsPerOp,
	// VsGeneric = generic's median ÷ this median (0 without generic in the run).
	GBps      float64 `json:"gb_per_s"`
	GFLOPs    float64 `json:"gflop_per_s"`
	VsGeneric float64 `json:"vs_generic"`
	// RooflineNs is the least time the op's work allows, the longest of FlopsPerOp ÷
	// the FMA peak, BytesPerOp ÷ its read bandwidth (over its own footprint where the
	// run measured it, else of the cache level that holds it) and its vector
	// instructions ÷ the issue rate (issueCosts); Limit names the one that sets it.
	// VsRoofline is NsPerOp's median ÷ RooflineNs (1 = at the roofline) and
	// PctOfLimit its inverse in percent.
	RooflineNs float64 `json:"roofline_ns,omitempty"`
	VsRoofline float64 `json:"vs_roofline,omitempty"`
	Limit      string  `json:"limit,omitempty"`
	PctOfLimit float64 `json:"pct_of_limit"`
}

// Throughput is the figure's headline rate and its unit: GFLOP/s if it counts flops,
// else GB/s.
func (f Figure) Throughput() (float64, string) {
	if f.FlopsPerOp > 0 {
		return f.GFLOPs, "GFLOP/s"
	}
	return f.GBps, "GB/s"
}

// A Share is the fraction of a composite section's time (one SnapKV layer) that one of
// its parts (the Scores block at the same shape) takes, per variant.
type Share struct {
	Whole   string  `json:"whole"`
	Part    string  `json:"part"`
	Variant string  `json:"variant"`
	WholeNs float64 `json:"whole_ns"`
	PartNs  float64 `json:"part_ns"`
	Percent float64 `json:"percent"`
}

// A Table is a result that is not a kernel timing, such as the pass-key evaluation:
// Markdown columns and rows (or, when its producer already renders one, Markdown
// verbatim), Data for report.json, and charts to write beside it.
type Table struct {
	Title    string     `json:"title"`
	Note     string     `json:"note,omitempty"`
	Columns  []string   `json:"columns,omitempty"`
	Rows     [][]string `json:"rows,omitempty"`
	Markdown string     `json:"-"`
	Data     any        `json:"data,omitempty"`
	Charts   []Chart    `json:"-"`
}

// A Chart is one SVG file of the report.
type Chart struct {
	File string // "passkey-accuracy.svg"
	SVG  []byte
}

// shares name the parts of composite sections: given a section's name, a rule
// returns the name of the section that times one part of it, or false. The report
// prints the part's share of the whole for each variant that ran both; the SnapKV
// layer's rule is in report_snapkv.go.
var shares []func(whole string) (part string, ok bool)

// resultTables are non-timing results run after the kernels, the pass-key evaluation
// among them; quick asks for a smaller run. A table may carry charts (see
// lineChart and keptMap in svg.go).
var resultTables []resultTable

type resultTable struct {
	name string
	run  func(quick bool) (Table, error)
}

func newReport(o options) *Report {
	r := &Report{
		Schema: Schema, Time: time.Now().UTC(),
		Go:   runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		Reps: o.reps, BenchtimeNs: o.benchtime.Nanoseconds(),
		Machine: Machine{
			CPU: cpuid.CPU.BrandName, Features: relevantFeatures(),
			Variants: kernels.Variants(), Active: kernels.Active(), Why: whyActive(),
			Cores: runtime.NumCPU(),
			L1D:   cpuid.CPU.Cache.L1D, L2: cpuid.CPU.Cache.L2, L3: cpuid.CPU.Cache.L3,
		},
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				r.Commit = s.Value
			}
		}
	}
	return r
}

var sizeParam = regexp.MustCompile(`(^| )n=(\d+)`)

func (r *Report) addFigure(s section, variant string, m sample) {
	r.Figures = append(r.Figures, Figure{
		Name: s.name, Variant: variant, NsPerOp: statOf(m.nsPerOp), Unit: s.unit, PerOp: s.perElement,
		BytesPerOp: m.bytesPerOp, FlopsPerOp: m.flopsPerOp,
	})
}

// parseName sets Kernel, Series and N from a figure's name, "Kernel params… n=N".
func (f *Figure) parseName() {
	f.Kernel, f.Series, f.N = strings.Fields(f.Name + " ?")[0], f.Name, 0
	if loc := sizeParam.FindStringSubmatchIndex(f.Name); loc != nil {
		f.N, _ = strconv.Atoi(f.Name[loc[4]:loc[5]])
		f.Series = strings.TrimSpace(f.Name[:loc[0]] + f.Name[loc[1]:])
	}
}

// derive orders the figures (a kernel's peers right after its variants) and fills in
// each figure's rates, speed-up and nearest limit, and the shares.
func (r *Report) derive() {
	first := map[string]int{}
	for i, f := range r.Figures {
		if _, ok := first[f.Name]; !ok {
			first[f.Name] = i
		}
	}
	slices.SortStableFunc(r.Figures, func(a, b Figure) int { return first[a.Name] - first[b.Name] })
	generic := map[string]float64{}
	for _, f := range r.Figures {
		if f.Variant == "generic" && !f.Peer {
			generic[f.Name] = f.NsPerOp.Median
		}
	}
	fma := 0.0
	if l, ok := r.limit(fmt.Sprintf("FMA %d-bit", peakWidth)); ok {
		fma = l.Value.Max
	}
	for i := range r.Figures {
		f := &r.Figures[i]
		f.parseName()
		ns := f.NsPerOp.Median
		if ns <= 0 {
			continue
		}
		f.GBps = float64(f.BytesPerOp) / ns
		f.GFLOPs = f.FlopsPerOp / ns
		if g, ok := generic[f.Name]; ok {
			f.VsGeneric = g / ns
		}
		f.RooflineNs, f.Limit = rooflineNs(*f, fma, r.readLimitFor)
		f.VsRoofline, f.PctOfLimit = 0, 0
		if f.RooflineNs > 0 {
			f.VsRoofline = ns / f.RooflineNs
			f.PctOfLimit = 100 / f.VsRoofline
		}
	}
	r.Shares = nil
	for _, rule := range shares {
		for _, w := range r.Figures {
			part, ok := rule(w.Name)
			if !ok || w.Peer {
				continue
			}
			for _, p := range r.Figures {
				if p.Name == part && p.Variant == w.Variant && !p.Peer {
					r.Shares = append(r.Shares, Share{
						Whole: w.Name, Part: p.Name, Variant: w.Variant,
						WholeNs: w.NsPerOp.Median, PartNs: p.NsPerOp.Median,
						Percent: 100 * p.NsPerOp.Median / w.NsPerOp.Median,
					})
				}
			}
		}
	}
}

func (r *Report) limit(name string) (Limit, bool) {
	for _, l := range r.Limits {
		if l.Name == name {
			return l, true
		}
	}
	return Limit{}, false
}

// write prints the Markdown (or with -json the JSON) on w and, with -out, writes
// report.md, report.json and the charts there.
func (r *Report) write(w *os.File, o options) error {
	md := r.markdown()
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	js = append(js, '\n')
	if o.json {
		_, err = w.Write(js)
	} else {
		_, err = w.WriteString(md)
	}
	if err != nil || o.out == "" {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	files := map[string][]byte{"report.md": []byte(md), "report.json": js}
	for _, c := range r.charts() {
		files[c.File] = c.SVG
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(o.out, name), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "wrote %s: report.md, report.json and %d charts\n", o.out, len(files)-2)
	return nil
}

// whyActive says why start-up installed the variant it did, naming the CPU features
// from the variants' own lists (dispatch.Needs).
func whyActive() string {
	v := kernels.Variants()
	switch {
	case kernels.EnvError() != nil:
		return fmt.Sprintf("the best this CPU runs; %v", kernels.EnvError())
	case os.Getenv("KVSIMD_ISA") != "":
		return "KVSIMD_ISA=" + os.Getenv("KVSIMD_ISA") + " in the environment"
	case v[0] == "avx2":
		return "the best this CPU runs: it has " + featureNames(dispatch.Needs("avx2")) +
			", but not " + featureNames(lacking(dispatch.Needs("avx512"))) + " (avx512)"
	case v[0] != dispatch.Generic:
		return "the best this CPU runs: it has " + featureNames(dispatch.Needs(v[0]))
	}
	simplest := map[string]string{"amd64": "avx2", "arm64": "neon"}[runtime.GOARCH]
	if simplest == "" {
		return "the only one on " + runtime.GOARCH + ": no assembly for this architecture"
	}
	if missing := lacking(dispatch.Needs(simplest)); len(missing) > 0 {
		return "the only one: the CPU lacks " + featureNames(missing) + " (" + simplest + ")"
	}
	return "the only one: a purego/noasm build"
}

// lacking returns the features of fs this CPU does not have.
func lacking(fs []cpuid.FeatureID) []cpuid.FeatureID {
	return slices.DeleteFunc(fs, func(f cpuid.FeatureID) bool { return cpuid.CPU.Supports(f) })
}

func featureNames(fs []cpuid.FeatureID) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.String()
	}
	return strings.Join(names, ", ")
}

// relevantFeatures lists the features of this CPU that a variant needs, then the
// half-precision arithmetic ones, which no variant uses yet but a reader may ask about.
func relevantFeatures() []string {
	var fs []cpuid.FeatureID
	for _, v := range []string{"avx2", "avx512", "neon"} {
		for _, f := range dispatch.Needs(v) {
			if !slices.Contains(fs, f) {
				fs = append(fs, f)
			}
		}
	}
	fs = append(fs, cpuid.AVX512FP16, cpuid.ASIMDHP, cpuid.FPHP)
	var have []string
	for _, f := range fs {
		if cpuid.CPU.Supports(f) {
			have = append(have, f.String())
		}
	}
	return have
}
