package main

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
)

// charts returns the report's SVG files: throughput against size for every series
// measured at two or more sizes, % of limit for every figure, and the result tables'
// own charts.
func (r *Report) charts() []Chart {
	var out []Chart
	var order []string
	bySeries := map[string][]Figure{}
	for _, f := range r.Figures {
		if f.N == 0 {
			continue
		}
		if _, ok := bySeries[f.Series]; !ok {
			order = append(order, f.Series)
		}
		bySeries[f.Series] = append(bySeries[f.Series], f)
	}
	for _, name := range order {
		figs := bySeries[name]
		sizes := map[int]bool{}
		for _, f := range figs {
			sizes[f.N] = true
		}
		if len(sizes) < 2 {
			continue
		}
		out = append(out, Chart{"throughput-" + slug(name) + ".svg", r.throughputChart(name, figs)})
	}
	if c := r.limitChart(); c != nil {
		out = append(out, Chart{"pct-of-limit.svg", c})
	}
	if c := r.decodeChart(); c != nil {
		out = append(out, Chart{"decode-roofline.svg", c})
	}
	if c := r.prefillChart(); c != nil {
		out = append(out, Chart{"prefill-attention.svg", c})
	}
	for _, t := range r.Tables {
		out = append(out, t.Charts...)
	}
	return out
}

// throughputChart is one series' throughput against n, a line per variant or peer,
// on log-log axes, with the limits that apply as dashed lines.
func (r *Report) throughputChart(name string, figs []Figure) []byte {
	_, unit := figs[0].Throughput()
	var lines []series
	index := map[string]int{}
	for _, f := range figs {
		label := f.Variant
		if f.Peer {
			label = f.Variant + " (peer)"
		}
		i, ok := index[label]
		if !ok {
			i = len(lines)
			index[label] = i
			lines = append(lines, series{name: label})
		}
		v, _ := f.Throughput()
		lines[i].x = append(lines[i].x, float64(f.N))
		lines[i].y = append(lines[i].y, v)
	}
	var limits []refLine
	for _, l := range r.Limits {
		footprintOf := func(f Figure) bool { return int64(l.Bytes) == f.BytesPerOp }
		if l.Footprint && !slices.ContainsFunc(figs, footprintOf) {
			continue // another series' footprint
		}
		if l.Unit == unit {
			limits = append(limits, refLine{l.Name, l.Value.Max, l.Unit})
		}
	}
	return lineChart(lineSpec{
		title:  name + ": throughput against size",
		x:      axis{label: "n (" + unitName(figs[0].Unit) + " per op)", log: true},
		y:      axis{label: "throughput (" + unit + ")", log: true},
		series: lines, limits: limits,
	})
}

// limitChart is every kvsimd figure's % of its limit, one bar per variant.
func (r *Report) limitChart() []byte {
	var cats, groups []string
	at := map[[2]string]float64{}
	for _, f := range r.Figures {
		if f.PctOfLimit == 0 {
			continue
		}
		name := f.Variant
		if f.Peer {
			name += " (peer)"
		}
		if !slices.Contains(cats, f.Name) {
			cats = append(cats, f.Name)
		}
		if !slices.Contains(groups, name) {
			groups = append(groups, name)
		}
		at[[2]string{f.Name, name}] = f.PctOfLimit
	}
	if len(cats) == 0 {
		return nil
	}
	values := barValues(cats, groups, at)
	return barChart(barSpec{
		title:      "Kernel throughput as % of its roofline (FMA peak, read bandwidth or instruction issue)",
		value:      axis{label: "% of the roofline measured in this run (100 = at the roofline)"},
		rowsLabel:  "kernel, size",
		categories: cats, groups: groups, values: values, mark: 100,
	})
}

// decodeChart is fused decode attention's time ÷ roofline, a row per format, layout
// and n, a bar per SIMD variant (generic only where nothing else ran).
func (r *Report) decodeChart() []byte {
	rows := r.decodeRows()
	if len(rows) == 0 {
		return nil
	}
	var cats, groups []string
	at := map[[2]string]float64{}
	simd := slices.ContainsFunc(rows, func(d decodeRow) bool { return d.variant != "generic" })
	for _, d := range rows {
		if simd && d.variant == "generic" {
			continue // 10–40× the roofline would squeeze the variants' bars; the table has it
		}
		cat := fmt.Sprintf("%s %s n=%d", d.format, d.layout, d.n)
		if !slices.Contains(cats, cat) {
			cats = append(cats, cat)
		}
		if !slices.Contains(groups, d.variant) {
			groups = append(groups, d.variant)
		}
		at[[2]string{cat, d.variant}] = d.fused.VsRoofline
	}
	values := barValues(cats, groups, at)
	return barChart(barSpec{
		title:     fmt.Sprintf("Fused decode attention ÷ roofline (Hkv %d, G %d, dim %d)", decodeKVHeads, decodeGroup, decodeDim),
		value:     axis{label: "time ÷ max(FLOPs ÷ FMA peak, K+V bytes ÷ read bandwidth); 1 = at the roofline"},
		rowsLabel: "format, layout, n", categories: cats, groups: groups, values: values, mark: 1,
	})
}

// accuracyChart is pass-key accuracy (percent) against the KV budget, a line per
// method, with the full cache's accuracy as a dashed line when full ≥ 0; the pass-key
// evaluation puts it in its Table's Charts.
func accuracyChart(title string, methods []series, full float64) []byte {
	var ref []refLine
	if full >= 0 {
		ref = []refLine{{"full cache", full, "%"}}
	}
	var budgets []float64
	for _, m := range methods {
		for _, b := range m.x {
			if !slices.Contains(budgets, b) {
				budgets = append(budgets, b)
			}
		}
	}
	return lineChart(lineSpec{
		title:  title,
		x:      axis{label: "KV budget (prompt rows kept per layer and KV head)", log: true, at: budgets},
		y:      axis{label: "pass-key accuracy (%)", min: 0, max: 105},
		series: methods, limits: ref,
	})
}

// unitName spells out a section's unit for an axis label.
func unitName(unit string) string {
	switch unit {
	case "elem", "":
		return "elements"
	default:
		return unit + "s"
	}
}

var nonWord = regexp.MustCompile(`[^a-z0-9]+`)

func slug(s string) string {
	return strings.Trim(nonWord.ReplaceAllString(strings.ToLower(s), "-"), "-")
}

// barValues lays at's values out as a bar chart's [category][group], NaN (no bar) where
// a category has no value for a group.
func barValues(cats, groups []string, at map[[2]string]float64) [][]float64 {
	values := make([][]float64, len(cats))
	for i, c := range cats {
		values[i] = make([]float64, len(groups))
		for j, g := range groups {
			v, ok := at[[2]string{c, g}]
			if !ok {
				v = math.NaN()
			}
			values[i][j] = v
		}
	}
	return values
}
