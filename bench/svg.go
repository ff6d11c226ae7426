package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// A small SVG writer for the report's charts: line charts on linear or log axes,
// horizontal grouped bars, and a map of kept positions. Each chart has a <title>, a
// visible title, axis labels with units (class "axis-label") and a legend, so that it
// reads on its own in a browser.

// palette colours series in order; it stays distinguishable in greyscale print too.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf", "#bcbd22"}

type svg struct {
	b    strings.Builder
	w, h float64
}

func newSVG(w, h float64, title string) *svg {
	s := &svg{w: w, h: h}
	fmt.Fprintf(&s.b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&s.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&s.b, "<title>%s</title>\n", esc(title))
	s.rect(0, 0, w, h, "white", "")
	s.text(w/2, 22, "middle", "title", title, 15, 0)
	return s
}

func esc(s string) string { return html.EscapeString(s) }

func (s *svg) text(x, y float64, anchor, class, text string, size, rotate float64) {
	transform := ""
	if rotate != 0 {
		transform = fmt.Sprintf(` transform="rotate(%g %.1f %.1f)"`, rotate, x, y)
	}
	fmt.Fprintf(&s.b, `<text x="%.1f" y="%.1f" text-anchor="%s" class="%s" font-size="%g"%s>%s</text>`+"\n",
		x, y, anchor, class, size, transform, esc(text))
}

func (s *svg) line(x1, y1, x2, y2 float64, stroke string, width float64, dash string) {
	d := ""
	if dash != "" {
		d = fmt.Sprintf(` stroke-dasharray="%s"`, dash)
	}
	fmt.Fprintf(&s.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%g"%s/>`+"\n", x1, y1, x2, y2, stroke, width, d)
}

func (s *svg) rect(x, y, w, h float64, fill, stroke string) {
	st := ""
	if stroke != "" {
		st = fmt.Sprintf(` stroke="%s"`, stroke)
	}
	fmt.Fprintf(&s.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"%s/>`+"\n", x, y, w, h, fill, st)
}

func (s *svg) polyline(pts [][2]float64, stroke string, dash string) {
	var p []string
	for _, q := range pts {
		p = append(p, fmt.Sprintf("%.1f,%.1f", q[0], q[1]))
	}
	d := ""
	if dash != "" {
		d = fmt.Sprintf(` stroke-dasharray="%s"`, dash)
	}
	fmt.Fprintf(&s.b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(p, " "), stroke, d)
	for _, q := range pts {
		fmt.Fprintf(&s.b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", q[0], q[1], stroke)
	}
}

func (s *svg) bytes() []byte { return []byte(s.b.String() + "</svg>\n") }

// An axis maps data to pixels between lo and hi pixels.
type axis struct {
	label    string // with the unit: "n (elements)"
	log      bool
	min, max float64
	at       []float64 // tick values; nil for the automatic ones
}

func (a axis) pos(v, lo, hi float64) float64 {
	if a.log {
		return lo + (hi-lo)*(math.Log10(v)-math.Log10(a.min))/(math.Log10(a.max)-math.Log10(a.min))
	}
	return lo + (hi-lo)*(v-a.min)/(a.max-a.min)
}

// ticks returns tick values: every decade (and 2, 5 between when there are few)
// on a log axis, 4–8 round steps on a linear one.
func (a axis) ticks() []float64 {
	if a.at != nil {
		return a.at
	}
	var t []float64
	if a.log {
		lo, hi := math.Floor(math.Log10(a.min)), math.Ceil(math.Log10(a.max))
		for e := lo; e <= hi; e++ {
			for _, m := range []float64{1, 2, 5} {
				v := m * math.Pow(10, e)
				if (m == 1 || hi-lo <= 3) && v >= a.min*0.999 && v <= a.max*1.001 {
					t = append(t, v)
				}
			}
		}
		return t
	}
	step := math.Pow(10, math.Floor(math.Log10((a.max-a.min)/4)))
	for (a.max-a.min)/step > 8 {
		step *= 2
	}
	for v := math.Ceil(a.min/step) * step; v <= a.max+step*1e-9; v += step {
		t = append(t, v)
	}
	return t
}

// widen pads a data range so points do not sit on the frame; log axes to whole
// factors, linear ones to zero where the data is positive.
func widen(lo, hi float64, log bool) (float64, float64) {
	if log {
		if lo <= 0 {
			lo = hi / 1000
		}
		return lo / 1.5, hi * 1.5
	}
	if lo > 0 {
		lo = 0
	}
	if hi == lo {
		hi = lo + 1
	}
	return lo, hi + (hi-lo)*0.05
}

func tickText(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9 && math.Mod(v, 1e9) == 0:
		return fmt.Sprintf("%gG", v/1e9)
	case a >= 1e6 && math.Mod(v, 1e6) == 0:
		return fmt.Sprintf("%gM", v/1e6)
	case a >= 1e3 && math.Mod(v, 1e3) == 0:
		return fmt.Sprintf("%gk", v/1e3)
	default:
		return fmt.Sprintf("%g", v)
	}
}

// A series is one line of a line chart.
type series struct {
	name string
	x, y []float64
}

// A refLine is a horizontal line across a chart: a measured limit, labelled with its
// name, value and unit.
type refLine struct {
	name string
	y    float64
	unit string
}

type lineSpec struct {
	title  string
	x, y   axis // min and max are found from the data when both are 0
	series []series
	limits []refLine
}

// lineChart draws series as lines with points, and limits as dashed horizontal lines
// labelled at their right end; the legend sits right of the plot.
func lineChart(c lineSpec) []byte {
	const h, left, top, right, bottom = 480, 70, 40, 620, 420
	w := math.Ceil(max(860, right+20+legendWidth(seriesNames(c.series)), textWidth(c.title, titleSize)+40))
	xs, ys := []float64{}, []float64{}
	for _, s := range c.series {
		for i := range s.x {
			if s.y[i] > 0 || !c.y.log {
				xs, ys = append(xs, s.x[i]), append(ys, s.y[i])
			}
		}
	}
	for _, l := range c.limits {
		ys = append(ys, l.y)
	}
	if c.x.min == 0 && c.x.max == 0 && len(xs) > 0 {
		c.x.min, c.x.max = widen(minOf(xs), maxOf(xs), c.x.log)
	}
	if c.y.min == 0 && c.y.max == 0 && len(ys) > 0 {
		c.y.min, c.y.max = widen(minOf(ys), maxOf(ys), c.y.log)
	}
	s := newSVG(w, h, c.title)
	frame(s, c.x, c.y, left, top, right, bottom)
	px := func(v float64) float64 { return c.x.pos(v, left, right) }
	py := func(v float64) float64 { return c.y.pos(v, bottom, top) }
	for _, l := range c.limits {
		y := py(l.y)
		s.line(left, y, right, y, "#555", 1.2, "6 4")
		s.text(right-4, y-4, "end", "limit", fmt.Sprintf("%s %s %s", l.name, num(l.y), l.unit), 11, 0)
	}
	for i, se := range c.series {
		color := palette[i%len(palette)]
		var pts [][2]float64
		for j := range se.x {
			if c.y.log && se.y[j] <= 0 {
				continue
			}
			pts = append(pts, [2]float64{px(se.x[j]), py(se.y[j])})
		}
		s.polyline(pts, color, "")
	}
	legend(s, right+20, top+10, seriesNames(c.series), "line")
	return s.bytes()
}

// frame draws the plot's box, ticks, grid and axis labels.
func frame(s *svg, x, y axis, left, top, right, bottom float64) {
	s.rect(left, top, right-left, bottom-top, "none", "#333")
	for _, t := range x.ticks() {
		p := x.pos(t, left, right)
		s.line(p, top, p, bottom, "#e4e4e4", 1, "")
		s.line(p, bottom, p, bottom+5, "#333", 1, "")
		s.text(p, bottom+18, "middle", "tick", tickText(t), 11, 0)
	}
	for _, t := range y.ticks() {
		p := y.pos(t, bottom, top)
		s.line(left, p, right, p, "#e4e4e4", 1, "")
		s.line(left-5, p, left, p, "#333", 1, "")
		s.text(left-8, p+4, "end", "tick", tickText(t), 11, 0)
	}
	s.text((left+right)/2, bottom+40, "middle", "axis-label", x.label, 13, 0)
	s.text(left-50, (top+bottom)/2, "middle", "axis-label", y.label, 13, -90)
}

// legend lists names with their palette colour, as a line or a square swatch.
func legend(s *svg, x, y float64, names []string, swatch string) {
	s.text(x, y, "start", "legend-title", "legend", 12, 0)
	for i, n := range names {
		yy := y + 18*float64(i+1)
		color := palette[i%len(palette)]
		if swatch == "line" {
			s.line(x, yy-4, x+22, yy-4, color, 2.5, "")
		} else {
			s.rect(x, yy-11, 14, 10, color, "")
		}
		s.text(x+legendSwatch, yy, "start", "legend", n, legendSize, 0)
	}
}

func seriesNames(ss []series) []string {
	var n []string
	for _, s := range ss {
		n = append(n, s.name)
	}
	return n
}

type barSpec struct {
	title      string
	value      axis   // the horizontal axis; its label carries the unit
	rowsLabel  string // what the categories are: "kernel, size"
	categories []string
	groups     []string    // one bar per group in each category, coloured
	values     [][]float64 // [category][group]; NaN: no bar
	mark       float64     // a vertical reference line (100 %), 0 for none
}

// Font sizes of the bar chart's category labels and of every legend entry.
const (
	barLabelSize  = 10.5
	legendSize    = 11
	titleSize     = 15
	legendSwatch  = 28 // legend text starts this far right of the swatch
	labelGap      = 6  // between a category label and the plot
	barPlotWidth  = 400
	barLeftMargin = 12
)

// barChart draws horizontal grouped bars, one row per category, labelled at the left;
// the left margin fits the longest label and the width the legend and the title, so
// every label reads whole.
func barChart(c barSpec) []byte {
	const top, barH, gap = 50, 7, 8
	longest := 0.0
	for _, cat := range c.categories {
		longest = max(longest, textWidth(cat, barLabelSize))
	}
	left := math.Ceil(max(barLeftMargin+longest+labelGap, textWidth(c.rowsLabel, 13)+barLeftMargin, 100))
	right := left + max(barPlotWidth, textWidth(c.value.label, 13)+20) // the axis label centred below
	w := right + 20 + legendWidth(c.groups)
	w = math.Ceil(max(w, textWidth(c.title, titleSize)+40))
	rowH := float64(len(c.groups))*barH + gap
	bottom := top + rowH*float64(len(c.categories))
	h := bottom + 60
	var all []float64
	for _, row := range c.values {
		for _, v := range row {
			if !math.IsNaN(v) {
				all = append(all, v)
			}
		}
	}
	if c.value.max == 0 {
		c.value.max = max(c.mark, maxOf(all)) * 1.05
	}
	s := newSVG(w, h, c.title)
	x := c.value
	for _, t := range x.ticks() {
		p := x.pos(t, left, right)
		s.line(p, top, p, bottom, "#e4e4e4", 1, "")
		s.text(p, bottom+16, "middle", "tick", tickText(t), 11, 0)
	}
	s.rect(left, top, right-left, bottom-top, "none", "#333")
	s.text((left+right)/2, bottom+40, "middle", "axis-label", x.label, 13, 0)
	s.text(barLeftMargin, top-10, "start", "axis-label", c.rowsLabel, 13, 0)
	for i, cat := range c.categories {
		y0 := top + rowH*float64(i) + gap/2
		s.text(left-labelGap, y0+rowH/2, "end", "tick", cat, barLabelSize, 0)
		for j := range c.groups {
			v := c.values[i][j]
			if math.IsNaN(v) {
				continue
			}
			end := x.pos(v, left, right)
			s.rect(left, y0+float64(j)*barH, end-left, barH-1, palette[j%len(palette)], "")
			s.text(end+3, y0+float64(j+1)*barH-1, "start", "value", num(v), 7, 0)
		}
	}
	if c.mark > 0 {
		p := x.pos(c.mark, left, right)
		s.line(p, top, p, bottom, "#555", 1.2, "6 4")
	}
	legend(s, right+20, top+10, c.groups, "box")
	return s.bytes()
}

// keptSpec is a map of which positions a cache kept, one row per layer and head.
type keptSpec struct {
	title     string
	rows      []string // "L0 H3"
	positions int      // prompt length
	kept      [][]int  // [row] positions kept, any order
	mark      [2]int   // [from, to) positions to outline: the pass key
}

// keptMap draws each row as a strip of the prompt, cells dark where a position was
// kept; positions are binned into at most 600 columns, a column dark if it kept any.
func keptMap(c keptSpec) []byte {
	const left, top, width, rowH = 90, 50, 600, 10
	cols := min(max(c.positions, 1), width)
	per := float64(max(c.positions, 1)) / float64(cols)
	cellW := float64(width) / float64(cols)
	bottom := top + rowH*float64(len(c.rows))
	s := newSVG(left+width+180, bottom+70, c.title)
	for i, name := range c.rows {
		y := top + rowH*float64(i)
		s.text(left-6, y+rowH-2, "end", "tick", name, 9, 0)
		dark := make([]bool, cols)
		for _, p := range c.kept[i] {
			if p >= 0 && p < c.positions {
				dark[min(int(float64(p)/per), cols-1)] = true
			}
		}
		s.rect(left, y, width, rowH-1, "#f0f0f0", "")
		for j, d := range dark {
			if d {
				s.rect(left+cellW*float64(j), y, cellW, rowH-1, palette[0], "")
			}
		}
	}
	if c.mark[1] > c.mark[0] {
		x0 := left + float64(c.mark[0])/per*cellW
		x1 := left + float64(c.mark[1])/per*cellW
		fmt.Fprintf(&s.b, `<rect x="%.1f" y="%d" width="%.1f" height="%.1f" fill="none" stroke="%s" stroke-width="2"/>`+"\n",
			x0-1, top-3, max(x1-x0, 1)+2, bottom-top+6, palette[1])
	}
	x := axis{label: "prompt position (tokens)", min: 0, max: float64(c.positions)}
	for _, t := range x.ticks() {
		p := x.pos(t, left, left+width)
		s.line(p, bottom, p, bottom+5, "#333", 1, "")
		s.text(p, bottom+18, "middle", "tick", tickText(t), 11, 0)
	}
	s.text(left+width/2, bottom+40, "middle", "axis-label", x.label, 13, 0)
	s.text(14, top-10, "start", "axis-label", "layer, head", 13, 0)
	s.text(left+width+20, top+10, "start", "legend-title", "legend", 12, 0)
	s.rect(left+width+20, top+20, 14, 10, palette[0], "")
	s.text(left+width+40, top+29, "start", "legend", "kept", 11, 0)
	s.rect(left+width+20, top+38, 14, 10, "#f0f0f0", "")
	s.text(left+width+40, top+47, "start", "legend", "evicted", 11, 0)
	fmt.Fprintf(&s.b, `<rect x="%d" y="%d" width="14" height="10" fill="none" stroke="%s" stroke-width="2"/>`+"\n", left+width+20, top+56, palette[1])
	s.text(left+width+40, top+65, "start", "legend", "pass key", 11, 0)
	return s.bytes()
}

func minOf(x []float64) float64 {
	m := math.Inf(1)
	for _, v := range x {
		m = math.Min(m, v)
	}
	return m
}

func maxOf(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	if math.IsInf(m, -1) {
		return 0
	}
	return m
}

// legendWidth is the room a legend of these names takes right of its x.
func legendWidth(names []string) float64 {
	w := textWidth("legend", 12)
	for _, n := range names {
		w = max(w, legendSwatch+textWidth(n, legendSize))
	}
	return w + 12
}

// textWidth is the width of text at a font size in pixels, as the widest of the usual
// sans-serif faces (DejaVu Sans) sets it, rounded up per character class: the charts
// size their margins from it, so it must not fall short.
func textWidth(text string, size float64) float64 {
	em := 0.0
	for _, r := range text {
		switch {
		case strings.ContainsRune("il|.,:;'!", r):
			em += 0.32
		case r == ' ' || strings.ContainsRune("fjrt-()[]/", r):
			em += 0.42
		case strings.ContainsRune("mw%MW", r):
			em += 1.0
		case strings.ContainsRune("=+×÷<>~", r):
			em += 0.84
		case r >= '0' && r <= '9':
			em += 0.64
		case r >= 'A' && r <= 'Z':
			em += 0.78
		case r >= 'a' && r <= 'z':
			em += 0.64
		default:
			em += 0.84
		}
	}
	return em * size
}
