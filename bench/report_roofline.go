package main

import (
	"fmt"
	"strings"
)

// Each figure is held to its roofline: the least time any of the resources it uses
// allows, max(FLOPs ÷ FMA peak, bytes ÷ read bandwidth, vector instructions ÷ issue
// rate), so a kernel bound by its exponentials or its compares is not called slow
// against a memory limit it cannot reach. The read bandwidth is the one measured over
// the figure's own footprint where the run measured one (decode attention), else that
// of the cache level holding its bytes.

// An issueCost is the vector loop of a kernel that its instructions bind: the FMA
// issue slots it takes per vector of elements (whatever the width: a 512-bit loop
// counts per 16 lanes, a 256-bit one per 8), counted from the variant's assembly.
type issueCost struct {
	slots float64
	what  string
}

// issueCosts gives, for a kernel (a figure's first word), the issue cost of its loop
// at the section's parameters (name) on a variant (for Softmax the neon loop's for
// every variant but avx512 and avx2); false for kernels whose loops the FMA peak and the read bandwidth
// already bound (dots, scores, conversions, attention). A shuffle costs two FMA slots:
// x86 cores issue one a cycle (port 5) against two FMAs, and the loop is held to the
// busier of the two. Additions and subtractions are not counted, since Zen cores
// issue them beside the FMAs: the limit must be one no core beats.
func issueCosts(kernel, name, variant string) (issueCost, bool) {
	wide := variant == "avx512"
	k7 := strings.Contains(name, " k=7 ")
	switch kernel {
	case "Softmax", "AddSoftmax":
		if wide {
			return issueCost{9, "the exponential's 7 FMAs and 1 VSCALEFPS a vector (ExpSumAVX512's loop; its 2 shuffles issue beside them), then 1 multiply by 1/sum: 9 FMA slots a vector"}, true
		}
		if variant == "avx2" {
			return issueCost{11, "the exponential's 9 FMAs and 1 multiply a vector (ExpSumAVX2's loop, 2^k applied by its last FMA), then 1 multiply by 1/sum: 11 FMA slots a vector"}, true
		}
		return issueCost{10, "the exponential's 8 FMAs and 1 multiply a vector (ExpSumNEON's loop, which applies 2^k by an integer add), then 1 multiply by 1/sum: 10 FMA slots a vector"}, true
	case "Max", "Sum", "Add":
		return issueCost{1, "1 max or add a vector"}, true
	case "TopK":
		return issueCost{1, "the filter pass's 1 compare a vector against the sampled threshold (a floor: keeping the survivors costs more)"}, true
	case "MaxPool1D", "AvgPool1D":
		// Shuffles a vector of output as the fixed-k loops (…Valid5…, …Valid7…) issue
		// them, keyed {average, k = 7, avx512}.
		shuffles := map[[3]bool]float64{
			{false, false, false}: 3, {false, true, false}: 4, {false, false, true}: 4, {false, true, true}: 4,
			{true, false, false}: 3, {true, true, false}: 4, {true, false, true}: 4, {true, true, true}: 5,
		}[[3]bool{kernel == "AvgPool1D", k7, wide}]
		loop := fmt.Sprintf("%sValid%dAVX2", kernel, map[bool]int{false: 5, true: 7}[k7])
		if wide {
			loop = strings.Replace(loop, "AVX2", "AVX512", 1)
		}
		return issueCost{2 * shuffles, fmt.Sprintf("%g shuffles a vector of output (%s), at one a cycle: they bind before its 1.5–3.5 FMA-pipe ops", shuffles, loop)}, true
	}
	return issueCost{}, false
}

// issueLimitName is the Limit a figure bound by its instructions names.
const issueLimitName = "instruction issue"

// rooflineNs returns the roofline of f in nanoseconds and the limit that sets it: the
// longest of the FMA time, the read time and the issue time, each where the run has the
// limit and f the work. fma is the FMA peak (GFLOP/s, 0 if unmeasured); read returns
// the read limit f's bytes are held to.
func rooflineNs(f Figure, fma float64, read func(bytes int64) (Limit, bool)) (float64, string) {
	best, name := 0.0, ""
	if fma > 0 && f.FlopsPerOp > 0 {
		best, name = f.FlopsPerOp/fma, fmt.Sprintf("FMA %d-bit", peakWidth)
	}
	if l, ok := read(f.BytesPerOp); ok && f.BytesPerOp > 0 && l.Value.Max > 0 {
		if t := float64(f.BytesPerOp) / l.Value.Max; t > best {
			best, name = t, l.Name
		}
	}
	// One FMA is two flops on every lane: fma/2 lane-slots a nanosecond.
	if c, ok := issueCosts(f.Kernel, f.Name, f.Variant); ok && fma > 0 && f.PerOp > 0 {
		if t := float64(f.PerOp) * c.slots / (fma / 2); t > best {
			best, name = t, issueLimitName
		}
	}
	return best, name
}

// readLimitFor returns the read limit bytes are held to: a limit measured over exactly
// that footprint, else the fastest of the cache level that holds them and those
// beyond it (a shared machine can measure a nearer level slower than a farther one).
func (r *Report) readLimitFor(bytes int64) (Limit, bool) {
	for _, l := range r.Limits {
		if l.Footprint && int64(l.Bytes) == bytes {
			return l, true
		}
	}
	levels := cacheLevels()
	var best Limit
	for _, lv := range levels[levelFor(levels, bytes):] {
		if l, ok := r.limit(lv.name + " read"); ok && l.Value.Max > best.Value.Max {
			best = l
		}
	}
	return best, best.Value.Max > 0
}

// footprints maps a section to the bytes its roofline's read bandwidth is measured
// over, the K and V one decode step reads; the run measures a read limit per footprint.
var footprints = map[string]int64{}

// footprintLimitName names the read limit over a footprint.
func footprintLimitName(bytes int64) string { return "read " + sizeText(int(bytes)) }

// A decodeRow is one fused decode attention figure against its roofline, with the
// loop's figure of the same format, layout, size and variant where the run has one.
type decodeRow struct {
	format, layout, variant string
	n                       int
	fused, loop             Figure
	flopNs, readNs          float64 // the roofline's two terms
}

// decodeRows collects the fused DecodeAttention figures, in the report's order.
func (r *Report) decodeRows() []decodeRow {
	fma := 0.0
	if l, ok := r.limit(fmt.Sprintf("FMA %d-bit", peakWidth)); ok {
		fma = l.Value.Max
	}
	var rows []decodeRow
	for _, f := range r.Figures {
		w := strings.Fields(f.Name)
		if f.Peer || f.Kernel != "DecodeAttention" || len(w) < 4 || w[3] != "fused" || f.RooflineNs <= 0 {
			continue
		}
		d := decodeRow{format: w[1], layout: w[2], variant: f.Variant, n: f.N, fused: f}
		loopName := strings.Replace(f.Name, " fused ", " loop ", 1)
		for _, l := range r.Figures {
			if l.Name == loopName && l.Variant == f.Variant && !l.Peer {
				d.loop = l
			}
		}
		if fma > 0 {
			d.flopNs = f.FlopsPerOp / fma
		}
		if l, ok := r.readLimitFor(f.BytesPerOp); ok {
			d.readNs = float64(f.BytesPerOp) / l.Value.Max
		}
		rows = append(rows, d)
	}
	return rows
}

// decodeMarkdown is the report's "Decode attention ÷ roofline" section; empty without
// fused decode figures.
func (r *Report) decodeMarkdown() string {
	rows := r.decodeRows()
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Decode attention ÷ roofline\n\n")
	fmt.Fprintf(&b, "One decode step of a layer (Hkv %d, G %d, dim %d, n rows per KV head), time ÷ max(FLOPs ÷ FMA peak, K+V bytes ÷ read bandwidth over the same footprint), FLOPs = 4·dim per query row and key; 1.00 is at the roofline. Fused is `kernels.AttendStrided` per KV head (head-major) or `kernels.AttendHeads` (token-major), in each format's form; the loop is Scores, Softmax and WeightedSumRows.\n\n",
		decodeKVHeads, decodeGroup, decodeDim)
	fmt.Fprintf(&b, "| format | layout | n | variant | fused | FLOPs ÷ FMA peak | K+V ÷ read | bound | fused ÷ roofline | loop ÷ roofline |\n| --- | --- | ---: | --- | ---: | ---: | ---: | --- | ---: | ---: |\n")
	for _, d := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", d.format, d.layout, d.n, d.variant,
			timeText(d.fused.NsPerOp.Median), timeText(d.flopNs), timeText(d.readNs), d.fused.Limit,
			ratioOrDash(d.fused.VsRoofline), ratioOrDash(d.loop.VsRoofline))
	}
	return b.String()
}

func ratioOrDash(x float64) string {
	if x == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", x)
}

// issueMarkdown lists the instruction limits of the kernels in the report.
func (r *Report) issueMarkdown() string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, f := range r.Figures {
		c, ok := issueCosts(f.Kernel, f.Name, f.Variant)
		if !ok || seen[c.what] {
			continue
		}
		seen[c.what] = true
		if b.Len() == 0 {
			fmt.Fprintf(&b, "\nInstruction limits (FMA issue slots per vector of elements, at the FMA peak's rate, peak ÷ 2 lane-slots a nanosecond; a shuffle takes two):\n\n")
		}
		fmt.Fprintf(&b, "- %s, %s: %g: %s\n", f.Kernel, f.Variant, c.slots, c.what)
	}
	return b.String()
}
