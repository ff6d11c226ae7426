package main

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// markdown renders the report: the machine, the limits, one row per figure, then
// shares, result tables and the list of charts.
func (r *Report) markdown() string {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "# kvsimd benchmark report\n\n")
	fmt.Fprintf(&b, "| | |\n| --- | --- |\n")
	fmt.Fprintf(&b, "| CPU | %s, %d logical cores |\n", orDash(m.CPU), m.Cores)
	fmt.Fprintf(&b, "| features | %s |\n", orDash(strings.Join(m.Features, " ")))
	fmt.Fprintf(&b, "| variants | %s |\n", strings.Join(m.Variants, " "))
	fmt.Fprintf(&b, "| chosen | **%s**: %s |\n", m.Active, m.Why)
	fmt.Fprintf(&b, "| caches | L1d %s, L2 %s, L3 %s |\n", sizeText(m.L1D), sizeText(m.L2), sizeText(m.L3))
	commit := ""
	if r.Commit != "" {
		commit = ", commit " + r.Commit[:min(12, len(r.Commit))]
	}
	fmt.Fprintf(&b, "| build | %s%s |\n", r.Go, commit)
	fmt.Fprintf(&b, "| method | each figure is the median of %d runs of at least %s (fewer for the slowest, which say so); ± is (max − min) / median |\n\n",
		r.Reps, time.Duration(r.BenchtimeNs))

	fmt.Fprintf(&b, "## Limits measured in this run\n\n")
	if len(r.Limits) == 0 {
		why := "purego, or no AVX2"
		if !strings.HasSuffix(r.Go, "/amd64") { // r.Go ends in GOOS/GOARCH
			why = "the FMA-peak and read-bandwidth loops are amd64 assembly"
		}
		fmt.Fprintf(&b, "No peak or bandwidth loop in this build (%s): the %% of limit column is empty.\n\n", why)
	} else {
		fmt.Fprintf(&b, "| limit | best | median | ± | what |\n| --- | ---: | ---: | ---: | --- |\n")
		for _, l := range r.Limits {
			fmt.Fprintf(&b, "| %s | %s %s | %s | %s | %s |\n", l.Name, num(l.Value.Max), l.Unit, num(l.Value.Median), spreadText(l.Value), l.What)
		}
		fmt.Fprintf(&b, "\nKernels are held to the best run of each limit. A kernel whose data lives in a cache level is held to the fastest of that level and those beyond it, since a shared machine can measure a nearer level slower than a farther one; a read limit measured over a footprint (\"read 8 MiB\") holds the figures that read exactly those bytes.\n")
		b.WriteString(r.issueMarkdown())
		fmt.Fprintf(&b, "\n")
	}

	if len(r.Figures) > 0 { // -only may name no kernel section (e.g. pass-key)
		fmt.Fprintf(&b, "## Kernels\n\n")
		fmt.Fprintf(&b, "Throughput is GFLOP/s for kernels that count flops, else GB/s of the data they stream. %% of limit is the kernel's roofline ÷ its time: the roofline is the longest of its FLOPs ÷ the FMA peak, its bytes ÷ the read bandwidth (of its footprint, or of the cache level that holds them) and its vector instructions ÷ the issue rate; limit names the one that binds.\n\n")
		b.WriteString(figureTable(r.Figures))
	}
	if len(r.SkippedGeneric) > 0 {
		fmt.Fprintf(&b, "\nNot run on generic, which would take seconds per op (× generic is then empty): %s.\n", strings.Join(r.SkippedGeneric, "; "))
	}

	b.WriteString(r.decodeMarkdown())

	if len(r.Shares) > 0 {
		fmt.Fprintf(&b, "\n## Composite operations\n\n| operation | variant | time | part | part's time | share |\n| --- | --- | ---: | --- | ---: | ---: |\n")
		for _, s := range r.Shares {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", s.Whole, s.Variant, timeText(s.WholeNs), s.Part, timeText(s.PartNs), pct(s.Percent))
		}
	}
	for _, t := range r.Tables {
		fmt.Fprintf(&b, "\n## %s\n\n", t.Title)
		if t.Note != "" {
			fmt.Fprintf(&b, "%s\n", t.Note)
		}
		if t.Markdown == "" && len(t.Columns) == 0 && len(t.Rows) == 0 {
			continue // a note alone, such as "Skipped: …"
		}
		if t.Note != "" {
			b.WriteString("\n")
		}
		if t.Markdown != "" {
			b.WriteString(t.Markdown)
			continue
		}
		fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(t.Columns, " | "), strings.Repeat(" --- |", len(t.Columns)))
		for _, row := range t.Rows {
			fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
		}
	}
	if charts := r.charts(); len(charts) > 0 {
		fmt.Fprintf(&b, "\n## Charts\n\n")
		for _, c := range charts {
			fmt.Fprintf(&b, "- [%s](%s)\n", c.File, c.File)
		}
	}
	return b.String()
}

// figureColumns are the kernel table's columns, in order.
var figureColumns = []string{"kernel", "variant", "time", "±", "ns/unit", "throughput", "× generic", "% of limit", "limit"}

func figureTable(figs []Figure) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| %s |\n| --- | --- |%s\n", strings.Join(figureColumns, " | "), strings.Repeat(" ---: |", len(figureColumns)-3)+" --- |")
	for _, f := range figs {
		v, unit := f.Throughput()
		variant := f.Variant
		if f.Peer {
			variant = f.Variant + ": " + f.Computes
		}
		perUnit := "–"
		if f.PerOp > 0 {
			perUnit = fmt.Sprintf("%s/%s", num(f.NsPerOp.Median/float64(f.PerOp)), f.Unit)
		}
		rate := "–"
		if v > 0 {
			rate = num(v) + " " + unit
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			f.Name, variant, timeText(f.NsPerOp.Median), spreadText(f.NsPerOp), perUnit,
			rate, ratio(f.VsGeneric), pctOrDash(f.PctOfLimit), orDash(f.Limit))
	}
	return b.String()
}

// num prints 3 significant digits, without exponent for the ranges a report has.
func num(x float64) string {
	switch a := math.Abs(x); {
	case x == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", x)
	case a >= 10:
		return fmt.Sprintf("%.1f", x)
	case a >= 1:
		return fmt.Sprintf("%.2f", x)
	default:
		return fmt.Sprintf("%.3g", x)
	}
}

// timeText prints nanoseconds in the unit that keeps 1–999 before the point.
func timeText(ns float64) string {
	switch {
	case ns >= 1e9:
		return num(ns/1e9) + " s"
	case ns >= 1e6:
		return num(ns/1e6) + " ms"
	case ns >= 1e3:
		return num(ns/1e3) + " µs"
	default:
		return num(ns) + " ns"
	}
}

func sizeText(bytes int) string {
	switch {
	case bytes <= 0:
		return "unknown"
	case bytes%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", bytes>>20)
	case bytes%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", bytes>>10)
	default:
		return fmt.Sprintf("%d B", bytes)
	}
}

func pct(p float64) string { return fmt.Sprintf("%.0f%%", p) }

// spreadText is a Stat's spread, or "1 run" when there is nothing to spread.
func spreadText(s Stat) string {
	if len(s.All) < 2 {
		return "1 run"
	}
	return pct(100 * s.Spread())
}

func pctOrDash(p float64) string {
	if p == 0 {
		return "–"
	}
	return pct(p)
}

func ratio(x float64) string {
	if x == 0 {
		return "–"
	}
	return num(x) + "×"
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
