package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvsimd/kvsimd/bench/llama"
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/kernels"
)

// tinySections are the report's workload shrunk for a test: two sizes of one series
// (so a throughput chart is drawn), a flop-counting kernel and a byte-counting one.
func tinySections() []section {
	return []section{
		{"DotF16 n=64", "elem", 64, func(b *testing.B) { benchDotF16(b, 64) }},
		{"DotF16 n=256", "elem", 256, func(b *testing.B) { benchDotF16(b, 256) }},
		{"ToFloat32 n=128", "elem", 128, func(b *testing.B) { benchToFloat32(b, 128) }},
		{"Softmax n=256", "elem", 256, func(b *testing.B) { benchSoftmax(b, 256) }},
		// A decode step, for its footprint's read limit, the ÷ roofline section and chart.
		{tinyDecode, "row", decodeKVHeads * 2048, func(b *testing.B) {
			benchDecodeAttention(b, decodeLayerOf("fp16", false, 2048), "fused")
		}},
	}
}

var tinyDecode = decodeName("fp16", "head-major", "fused", 2048)

// tinyReport runs the report on tinySections with the hooks the snapkv and pass-key
// benchmarks use, and returns it with the directory it was written to and its stdout.
func tinyReport(t *testing.T, jsonOut bool) (*Report, string, []byte) {
	t.Helper()
	defer func(s []func(string) (string, bool), r []resultTable) { shares, resultTables = s, r }(shares, resultTables)
	shares = []func(string) (string, bool){func(whole string) (string, bool) { return "DotF16 n=64", whole == "DotF16 n=256" }}
	resultTables = []resultTable{{"pass-key fixture", func(quick bool) (Table, error) {
		return Table{
			Title: "Pass-key fixture", Columns: []string{"method", "budget", "accuracy"},
			Rows: [][]string{{"snapkv", "64", "100%"}},
			Charts: []Chart{
				{"passkey-accuracy.svg", accuracyChart("Pass-key accuracy against budget", []series{{"snapkv", []float64{16, 64}, []float64{50, 100}}}, 100)},
				{"passkey-kept.svg", keptMap(keptSpec{title: "Kept positions", rows: []string{"L0 H0", "L0 H1"}, positions: 1000,
					kept: [][]int{{1, 2, 500}, {999}}, mark: [2]int{500, 510}})},
			},
		}, nil
	}}}
	// The budget leaves room for the two runs the checks below want of the decode
	// section, whose first run (its layer's setup included) took over a second under
	// -race on a machine the CI's emulators shared.
	o := options{quick: true, reps: 2, benchtime: time.Millisecond, budget: 10 * time.Second, genericCap: time.Second, out: t.TempDir(), json: jsonOut, tiny: true}
	r, err := run(o, tinySections(), nil)
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.write(stdout, o); err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(stdout.Name())
	if err != nil {
		t.Fatal(err)
	}
	return r, o.out, out
}

func TestReportMarkdown(t *testing.T) {
	r, dir, stdout := tinyReport(t, false)
	file, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stdout, file) {
		t.Errorf("stdout differs from report.md")
	}
	md := string(stdout)
	header := "| " + strings.Join(figureColumns, " | ") + " |"
	lines := strings.Split(md, "\n")
	at := -1
	for i, l := range lines {
		if l == header {
			at = i
		}
	}
	if at < 0 {
		t.Fatalf("no kernel table with header %q in:\n%s", header, md)
	}
	rows := 0
	for _, l := range lines[at+2:] {
		if !strings.HasPrefix(l, "|") {
			break
		}
		cells := strings.Split(strings.Trim(l, "|"), " | ")
		if len(cells) != len(figureColumns) {
			t.Errorf("row has %d cells, want %d: %s", len(cells), len(figureColumns), l)
		}
		rows++
	}
	if want := len(tinySections()) * len(kernels.Variants()); rows != want || len(r.Figures) != want {
		t.Errorf("%d table rows and %d figures, want %d (sections × variants)", rows, len(r.Figures), want)
	}
	wants := []string{"| CPU |", "| chosen | **" + kernels.Active() + "**", "## Composite operations", "## Pass-key fixture", "passkey-kept.svg"}
	if peakFMA != nil || readLoop != nil { // a roofline needs a measured limit: none under purego
		wants = append(wants, "## Decode attention ÷ roofline")
	}
	for _, want := range wants {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, f := range r.Figures {
		if !(f.NsPerOp.Min <= f.NsPerOp.Median && f.NsPerOp.Median <= f.NsPerOp.Max && f.NsPerOp.Min > 0) || len(f.NsPerOp.All) < 2 {
			t.Errorf("%s %s: stat %+v", f.Name, f.Variant, f.NsPerOp)
		}
		if f.Variant == "generic" && f.VsGeneric != 1 {
			t.Errorf("%s generic: × generic = %v, want 1", f.Name, f.VsGeneric)
		}
		if len(r.Limits) > 0 && f.PctOfLimit <= 0 {
			t.Errorf("%s %s: no %% of limit although limits were measured", f.Name, f.Variant)
		}
	}
	if n := len(r.Shares); n != len(kernels.Variants()) {
		t.Errorf("%d shares, want one per variant", n)
	}
}

// TestReportJSON checks report.json against the documented schema by decoding it
// generically, so a renamed or retyped field fails here.
func TestReportJSON(t *testing.T) {
	r, dir, stdout := tinyReport(t, true)
	file, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stdout, file) {
		t.Errorf("-json stdout differs from report.json")
	}
	var doc map[string]any
	if err := json.Unmarshal(file, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["schema"] != Schema {
		t.Errorf("schema = %v, want %s", doc["schema"], Schema)
	}
	requireKeys(t, "report", doc, map[string]string{"time": "string", "go": "string", "reps": "number", "benchtime_ns": "number",
		"machine": "object", "limits": "array", "figures": "array", "shares": "array", "tables": "array"})
	requireKeys(t, "machine", doc["machine"].(map[string]any), map[string]string{"cpu": "string", "features": "array",
		"variants": "array", "active": "string", "why": "string", "l1d_bytes": "number"})
	figs := doc["figures"].([]any)
	if len(figs) != len(r.Figures) {
		t.Fatalf("%d figures in JSON, %d in the report", len(figs), len(r.Figures))
	}
	for _, f := range figs {
		f := f.(map[string]any)
		requireKeys(t, fmt.Sprint(f["name"]), f, map[string]string{"name": "string", "kernel": "string", "series": "string",
			"n": "number", "variant": "string", "ns_per_op": "object", "unit": "string", "per_op": "number",
			"bytes_per_op": "number", "flops_per_op": "number", "gb_per_s": "number", "gflop_per_s": "number",
			"vs_generic": "number", "pct_of_limit": "number"})
		requireKeys(t, "ns_per_op", f["ns_per_op"].(map[string]any), map[string]string{"median": "number", "min": "number", "max": "number", "samples": "array"})
	}
	for _, l := range doc["limits"].([]any) {
		requireKeys(t, "limit", l.(map[string]any), map[string]string{"name": "string", "what": "string", "unit": "string", "value": "object"})
	}
	var back Report
	if err := json.Unmarshal(file, &back); err != nil {
		t.Fatal(err)
	}
	if back.Figures[0].NsPerOp.Median != r.Figures[0].NsPerOp.Median || back.Figures[0].Name != r.Figures[0].Name {
		t.Errorf("JSON round trip: %+v, want %+v", back.Figures[0], r.Figures[0])
	}
}

func requireKeys(t *testing.T, what string, m map[string]any, want map[string]string) {
	t.Helper()
	for k, typ := range want {
		v, ok := m[k]
		if !ok {
			t.Errorf("%s: no field %q", what, k)
			continue
		}
		var got string
		switch v.(type) {
		case string:
			got = "string"
		case float64:
			got = "number"
		case map[string]any:
			got = "object"
		case []any:
			got = "array"
		}
		if got != typ {
			t.Errorf("%s.%s is %T, want %s", what, k, v, typ)
		}
	}
}

// TestReportCharts parses every SVG the report wrote as XML and requires a title and
// at least two axis labels in each.
func TestReportCharts(t *testing.T) {
	r, dir, _ := tinyReport(t, false)
	files, err := filepath.Glob(filepath.Join(dir, "*.svg"))
	if err != nil {
		t.Fatal(err)
	}
	want := len(r.charts())
	if len(files) != want || want < 3 {
		t.Fatalf("%d SVG files, want %d (at least a throughput chart and the two table charts)", len(files), want)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		title, labels, err := svgText(data)
		if err != nil {
			t.Errorf("%s: not well-formed XML: %v", filepath.Base(f), err)
			continue
		}
		if strings.TrimSpace(title) == "" {
			t.Errorf("%s: no <title>", filepath.Base(f))
		}
		if len(labels) < 2 {
			t.Errorf("%s: axis labels %q, want two", filepath.Base(f), labels)
		}
		for _, l := range labels {
			if strings.TrimSpace(l) == "" {
				t.Errorf("%s: empty axis label", filepath.Base(f))
			}
		}
		checkTextFits(t, filepath.Base(f), data)
	}
	if len(r.Limits) > 0 && !slices.ContainsFunc(files, func(f string) bool { return filepath.Base(f) == "decode-roofline.svg" }) {
		t.Errorf("no decode-roofline.svg among %v", files)
	}
}

// checkTextFits holds every unrotated <text> of an SVG inside the drawing, its width
// as textWidth sets it: a label cut at the edge fails here.
func checkTextFits(t *testing.T, name string, data []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	width := 0.0
	var open *xml.StartElement
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range tok.Attr {
				attr[a.Name.Local] = a.Value
			}
			if tok.Name.Local == "svg" {
				fmt.Sscan(attr["width"], &width)
			}
			if tok.Name.Local == "text" && attr["transform"] == "" {
				e := tok.Copy()
				open = &e
			}
		case xml.EndElement:
			open = nil
		case xml.CharData:
			if open == nil {
				continue
			}
			attr := map[string]string{}
			for _, a := range open.Attr {
				attr[a.Name.Local] = a.Value
			}
			var x, size float64
			fmt.Sscan(attr["x"], &x)
			fmt.Sscan(attr["font-size"], &size)
			w := textWidth(string(tok), size)
			lo, hi := x, x+w
			switch attr["text-anchor"] {
			case "end":
				lo, hi = x-w, x
			case "middle":
				lo, hi = x-w/2, x+w/2
			}
			if lo < 0 || hi > width {
				t.Errorf("%s: %q spans x %.0f…%.0f, outside the drawing's 0…%.0f", name, string(tok), lo, hi, width)
			}
		}
	}
	if width <= 0 {
		t.Errorf("%s: no width", name)
	}
}

// TestBarLabelsFit draws the % of limit chart with the longest names the report has
// (a decode attention loop on the peer-sized group names) and requires every label
// whole: its computed width within the left margin.
func TestBarLabelsFit(t *testing.T) {
	long := "DecodeAttention fp16 head-major loop Hkv=8 G=4 dim=128 n=65536"
	if w := textWidth(long, barLabelSize); w+labelGap <= 300 {
		t.Fatalf("the label is %.0f px: too short to show what the former 300 px margin cut", w)
	}
	c := barChart(barSpec{
		title: "labels", value: axis{label: "% of limit"}, rowsLabel: "kernel, size",
		categories: []string{"DotF16 n=64", long, "ScoresStrided rows=32 dim=128 stride=1024 n=16400"},
		groups:     []string{"avx512", "avx2", "generic", "vek32 (peer): fp16 widened to fp32 beforehand"},
		values:     [][]float64{{50, 40, 5, 30}, {90, 80, 10, math.NaN()}, {100, 95, 3, math.NaN()}},
		mark:       100,
	})
	checkTextFits(t, "bar chart", c)
	if !bytes.Contains(c, []byte(">"+long+"<")) {
		t.Errorf("the long label is not drawn whole")
	}
}

// TestTextWidth: wider text measures wider, and a string the width of its parts.
func TestTextWidth(t *testing.T) {
	if a, b := textWidth("mmmm", 10), textWidth("iiii", 10); a <= b {
		t.Errorf("mmmm %.1f px not wider than iiii %.1f", a, b)
	}
	if a, b := textWidth("n=65536 ", 12)+textWidth("fp16", 12), textWidth("n=65536 fp16", 12); math.Abs(a-b) > 1e-9 {
		t.Errorf("parts %.3f, whole %.3f", a, b)
	}
	if w := textWidth("abc", 20); w != 2*textWidth("abc", 10) {
		t.Errorf("width does not scale with the font size: %.2f", w)
	}
}

// TestRoofline holds derive to the roofline's arithmetic on figures whose limits are
// set by hand: every read level at 100 GB/s (so the level a size falls in does not
// matter), the FMA peak at 100 GFLOP/s (50 lane-FMAs a nanosecond), and one decode
// footprint of 8 MiB measured at 20 GB/s.
func TestRoofline(t *testing.T) {
	fma := fmt.Sprintf("FMA %d-bit", peakWidth)
	r := &Report{Limits: []Limit{{Name: fma, Unit: "GFLOP/s", Value: Stat{Max: 100}}}}
	for _, lv := range cacheLevels() {
		r.Limits = append(r.Limits, Limit{Name: lv.name + " read", Unit: "GB/s", Bytes: lv.size, Value: Stat{Max: 100}})
	}
	r.Limits = append(r.Limits, Limit{Name: "read 8 MiB", Unit: "GB/s", Bytes: 8 << 20, Footprint: true, Value: Stat{Max: 20}})
	decode := decodeName("fp16", "head-major", "fused", 2048)
	loop := decodeName("fp16", "head-major", "loop", 2048)
	fig := func(name string, perOp int, bytes int64, flops, ns float64) Figure {
		return Figure{Name: name, Variant: "avx2", PerOp: perOp, BytesPerOp: bytes, FlopsPerOp: flops, NsPerOp: Stat{Median: ns}}
	}
	r.Figures = []Figure{
		// 2048 flops: 20.48 ns; 8192 bytes: 81.92 ns, the bound.
		fig("DotF16 n=1024", 1024, 8192, 2048, 163.84),
		// 1e6 flops: 10 µs, the bound; 1000 bytes: 10 ns.
		fig("Scores rows=32 dim=128 n=4096", 32*4096, 1000, 1e6, 12500),
		// 16384 bytes: 163.84 ns; 4096 elements × 11 slots (avx2) ÷ 50 = 901.12 ns, the bound.
		fig("Softmax n=4096", 4096, 16384, 0, 1802.24),
		// 131072 elements × 6 slots (k=5) ÷ 50 = 15728.64 ns; 524288 bytes: 5242.88 ns.
		fig("MaxPool1D k=5 n=131072", 131072, 524288, 0, 15728.64*4),
		// 8·4·2048·4·128 = 33554432 flops: 335544.32 ns; 8 MiB at 20 GB/s: 419430.4 ns.
		fig(decode, 8*2048, 8<<20, 33554432, 838860.8),
		fig(loop, 8*2048, 8<<20, 33554432, 419430.4*3),
	}
	r.derive()
	want := []struct {
		limit      string
		rooflineNs float64
		vs         float64
	}{
		{"L", 81.92, 2},
		{fma, 10000, 1.25},
		{issueLimitName, 901.12, 2},
		{issueLimitName, 15728.64, 4},
		{"read 8 MiB", 419430.4, 2},
		{"read 8 MiB", 419430.4, 3},
	}
	for i, w := range want {
		f := r.Figures[i]
		if !strings.HasPrefix(f.Limit, w.limit) || math.Abs(f.RooflineNs-w.rooflineNs) > 1e-6*w.rooflineNs ||
			math.Abs(f.VsRoofline-w.vs) > 1e-9 || math.Abs(f.PctOfLimit-100/w.vs) > 1e-9 {
			t.Errorf("%s: limit %q, roofline %.4g ns, ÷ roofline %.6g, %% %.4g; want %q, %.4g ns, %.6g",
				f.Name, f.Limit, f.RooflineNs, f.VsRoofline, f.PctOfLimit, w.limit, w.rooflineNs, w.vs)
		}
	}
	if !strings.HasSuffix(r.Figures[0].Limit, " read") || r.Figures[0].Limit == "read 8 MiB" {
		t.Errorf("DotF16 held to %q, want its cache level's read limit", r.Figures[0].Limit)
	}
	rows := r.decodeRows()
	if len(rows) != 1 {
		t.Fatalf("%d decode rows, want the fused one", len(rows))
	}
	d := rows[0]
	if d.format != "fp16" || d.layout != "head-major" || d.n != 2048 || math.Abs(d.flopNs-335544.32) > 1e-6 ||
		math.Abs(d.readNs-419430.4) > 1e-6 || math.Abs(d.loop.VsRoofline-3) > 1e-9 {
		t.Errorf("decode row %+v", d)
	}
	md := r.decodeMarkdown()
	if !strings.Contains(md, "| fp16 | head-major | 2048 | avx2 | 839 µs | 336 µs | 419 µs | read 8 MiB | 2.00 | 3.00 |") {
		t.Errorf("decode section:\n%s", md)
	}
	if c := r.decodeChart(); c == nil {
		t.Errorf("no decode chart")
	} else {
		checkTextFits(t, "decode chart", c)
	}
}

// TestDecodeWork: the roofline's work for one decode step, 4·dim flops per query row
// and key, and the K and V bytes of each format.
func TestDecodeWork(t *testing.T) {
	if got, want := decodeFlops(2048), float64(8*4*2048*4*128); got != want {
		t.Errorf("decodeFlops(2048) = %g, want %g", got, want)
	}
	for format, want := range map[string]int64{"fp16": 2 * 8 * 2048 * 128 * 2, "bf16": 2 * 8 * 2048 * 128 * 2, "q8_0": 2 * 8 * 2048 * 4 * 34} {
		if got := decodeBytes(format, 2048); got != want {
			t.Errorf("decodeBytes(%s, 2048) = %d, want %d", format, got, want)
		}
		if got := decodeLayerOf(format, false, 2048).bytes(); got != want {
			t.Errorf("%s layer: %d bytes, want %d", format, got, want)
		}
	}
}

// svgText decodes an SVG document and returns its <title> and the text of its
// elements of class axis-label.
func svgText(data []byte) (title string, labels []string, err error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	var stack []xml.StartElement
	root := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", nil, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
			stack = append(stack, tok)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 {
				continue
			}
			top := stack[len(stack)-1]
			if top.Name.Local == "title" {
				title += string(tok)
			}
			for _, a := range top.Attr {
				if a.Name.Local == "class" && a.Value == "axis-label" {
					labels = append(labels, string(tok))
				}
			}
		}
	}
	if root != "svg" {
		return "", nil, fmt.Errorf("root element %q, want svg", root)
	}
	return title, labels, nil
}

func TestCompare(t *testing.T) {
	var out bytes.Buffer
	if err := compareFiles(&out, "testdata/old.json", "testdata/new.json"); err != nil {
		t.Fatal(err)
	}
	old, err := readReport("testdata/old.json")
	if err != nil {
		t.Fatal(err)
	}
	cur, err := readReport("testdata/new.json")
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	common := 0
	for _, n := range cur.Figures {
		for _, o := range old.Figures {
			if n.Name != o.Name || n.Variant != o.Variant {
				continue
			}
			common++
			row := fmt.Sprintf("| %s | %s | %s |", n.Name, n.Variant, timeText(o.NsPerOp.Median))
			line := lineWith(text, row)
			if line == "" {
				t.Errorf("no row starting %q in:\n%s", row, text)
				continue
			}
			if want := "| " + num(n.NsPerOp.Median/o.NsPerOp.Median) + " |"; !strings.Contains(line, want) {
				t.Errorf("row %q lacks the ratio %s", line, want)
			}
			faster, slower := n.NsPerOp.Max < o.NsPerOp.Min, n.NsPerOp.Min > o.NsPerOp.Max
			if strings.Contains(line, "faster") != faster || strings.Contains(line, "slower") != slower {
				t.Errorf("row %q: verdict should be faster=%v slower=%v", line, faster, slower)
			}
		}
	}
	if common < 2 {
		t.Fatalf("the fixtures share %d figures; the test needs two", common)
	}
	for _, want := range []string{"only in old: Softmax n=4096 · avx2", "only in new: Scores rows=32 dim=128 n=4096 · avx2", "| FMA 256-bit |"} {
		if !strings.Contains(text, want) {
			t.Errorf("comparison lacks %q:\n%s", want, text)
		}
	}
	// The geometric mean for avx2 covers its single common figure.
	if want := fmt.Sprintf("| avx2 | 1 | %s |", num(math.Exp(math.Log(40.0/50)))); !strings.Contains(text, want) {
		t.Errorf("comparison lacks %q", want)
	}
}

func lineWith(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func TestCompareRejectsOtherSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.json")
	if err := os.WriteFile(path, []byte(`{"schema": "something-else"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := compareFiles(io.Discard, "testdata/old.json", path); err == nil || !strings.Contains(err.Error(), "schema") {
		t.Errorf("error %v, want one naming the schema", err)
	}
}

func TestVariantsToRun(t *testing.T) {
	all := kernels.Variants()
	if got, err := variantsToRun("", all); err != nil || len(got) != len(all) {
		t.Errorf("no -isa: %v, %v", got, err)
	}
	if got, err := variantsToRun("generic", all); err != nil || len(got) != 1 || got[0] != "generic" {
		t.Errorf("-isa generic: %v, %v", got, err)
	}
	if _, err := variantsToRun("avx9000", all); err == nil {
		t.Errorf("-isa avx9000: no error")
	}
}

// TestPasskeyTable runs the pass-key evaluation as the report does with -quick, on the
// committed model and the methods the charts draw (the full cache, SnapKV at W=16 and
// two budgets, sinks+recent), and checks its table and charts.
func TestPasskeyTable(t *testing.T) {
	if testing.Short() {
		t.Skip("evaluates the model")
	}
	defer func(m string, methods func() []llama.Method) { *passkeyModel, passkeyMethods = m, methods }(*passkeyModel, passkeyMethods)
	*passkeyModel = filepath.Join("..", "testdata", "passkey-model")
	var few []llama.Method
	for _, m := range llama.Methods() {
		if m.Name == "full" || m.Name == "sinks-recent" || m.Name == "snapkv-protected" && m.Window == 16 && m.Budget <= 64 {
			few = append(few, m)
		}
	}
	passkeyMethods = func() []llama.Method { return few }
	tab, err := passkeyTable(true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tab.Markdown, "| full |") || !strings.Contains(tab.Markdown, "| snapkv-protected |") {
		t.Errorf("table lacks the full cache or snapkv-protected:\n%s", tab.Markdown)
	}
	rows, ok := tab.Data.([]llama.Row)
	if !ok || len(rows) != len(few) {
		t.Fatalf("data %T, want one llama.Row per method", tab.Data)
	}
	for _, r := range rows {
		if r.Total != passkeyQuickPrompts || r.DecodeTokensPerS <= 0 {
			t.Errorf("%s C=%d: %d prompts, %v decode tokens/s", r.Method, r.Budget, r.Total, r.DecodeTokensPerS)
		}
	}
	if len(tab.Charts) != 2 {
		t.Fatalf("%d charts, want accuracy and kept positions", len(tab.Charts))
	}
	for _, c := range tab.Charts {
		title, labels, err := svgText(c.SVG)
		if err != nil || title == "" || len(labels) < 2 {
			t.Errorf("%s: title %q, axis labels %q, error %v", c.File, title, labels, err)
		}
	}
}

// TestWhyActiveNamesTheFeatures checks that the report's reason for the chosen variant
// names every feature that variant needs, from dispatch's own list, and that the
// features line shows them.
func TestWhyActiveNamesTheFeatures(t *testing.T) {
	if kernels.EnvError() != nil || os.Getenv("KVSIMD_ISA") != "" {
		t.Skip("a variant forced through KVSIMD_ISA is reported as such")
	}
	why, have := whyActive(), relevantFeatures()
	for _, f := range dispatch.Needs(kernels.Variants()[0]) {
		if !strings.Contains(why, f.String()) {
			t.Errorf("whyActive() = %q: does not name %s", why, f)
		}
		if !slices.Contains(have, f.String()) {
			t.Errorf("relevantFeatures() = %v: lacks %s, which this CPU has", have, f)
		}
	}
	t.Log(why)
}

// TestReportSkipsPasskey runs the report with the pass-key evaluation registered as
// main registers it: without the model's prompts its section is the skip note alone,
// no empty table after it, and an -only that names another section leaves the
// pass-key section out, unevaluated.
func TestReportSkipsPasskey(t *testing.T) {
	defer func(m string) { *passkeyModel = m }(*passkeyModel)
	*passkeyModel = t.TempDir() // no prompts.json
	report := func(only string) *Report {
		t.Helper()
		o := options{quick: true, reps: 2, benchtime: time.Millisecond, budget: time.Second, genericCap: time.Second, tiny: true, only: only}
		r, err := run(o, tinySections()[3:4], nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	md := report("").markdown()
	title := "## Pass-key retention\n\n"
	at := strings.Index(md, title)
	if at < 0 {
		t.Fatalf("no pass-key section in:\n%s", md)
	}
	section, _, _ := strings.Cut(md[at+len(title):], "\n## ")
	want := "Skipped: no " + filepath.Join(*passkeyModel, "prompts.json") + " here (run from the repository root).\n"
	if section != want {
		t.Errorf("pass-key section without the model:\n%q\nwant the skip note alone:\n%q", section, want)
	}

	for _, only := range []string{"Softmax", "DotF16"} {
		r := report(only)
		if md := r.markdown(); strings.Contains(md, "Pass-key") || strings.Contains(md, "Skipped") || len(r.Tables) != 0 {
			t.Errorf("-only %s: the report has the pass-key section (%d tables):\n%s", only, len(r.Tables), md)
		}
	}
	if r := report("pass-key"); len(r.Tables) != 1 || len(r.Figures) != 0 || strings.Contains(r.markdown(), "## Kernels") {
		t.Errorf("-only pass-key: %d tables and %d figures, want the pass-key table alone, no empty kernel table:\n%s", len(r.Tables), len(r.Figures), r.markdown())
	}
}

// TestLimitsNoteNamesArch: a report from a build without the peak loops says why, and
// on a GOARCH other than amd64 the reason is the GOARCH, not purego or a missing AVX2.
func TestLimitsNoteNamesArch(t *testing.T) {
	for goarch, want := range map[string]string{
		"amd64": "(purego, or no AVX2)",
		"arm64": "(the FMA-peak and read-bandwidth loops are amd64 assembly)",
	} {
		r := &Report{Go: "go1.26 linux/" + goarch}
		if md := r.markdown(); !strings.Contains(md, want) {
			t.Errorf("%s: the limits note lacks %q:\n%s", goarch, want, md)
		}
	}
}
