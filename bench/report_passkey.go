package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvsimd/kvsimd/bench/llama"
)

// The pass-key evaluation (passkey.go, package bench/llama) joins the report as a
// result table: every method's accuracy on the committed prompts with the fp16 cache,
// then the methods PyTorch implements with the cache in each format (fp16, bf16, q8_0, f32:
// Go's count beside PyTorch's, cache KiB, and the full cache's logits against the
// float32 forward), a chart of accuracy against budget per method, and a map of the
// positions one SnapKV method kept in each layer and KV head of the first prompt, with
// the key's digits marked. -only leaves it out unless it names it ("-only pass-key"
// runs it alone).
func init() {
	resultTables = append(resultTables, resultTable{"pass-key evaluation", passkeyTable},
		resultTable{"streaming with a decode budget", passkeyStreamTable})
}

// The report evaluates the first prompts of the committed set, to stay within its
// time: each prompt runs every method, and measures decode speed in fewer rounds than
// `-passkey FILE`, which runs them all. The per-format table runs the dozen methods
// PyTorch implements on every prompt (passkeyFormatPrompts, about 2 s a format here),
// so that its counts compare with results-kvtypes.json's, which are over all 32;
// -quick runs passkeyQuickPrompts there too.
const passkeyPrompts, passkeyQuickPrompts, passkeyReportRounds, passkeyFormatPrompts = 6, 1, 3, 32

// passkeyMethods are the methods the report evaluates; tests narrow them.
var passkeyMethods = llama.Methods

func passkeyTable(quick bool) (Table, error) {
	t := Table{Title: "Pass-key retention"}
	file := filepath.Join(*passkeyModel, "prompts.json")
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		t.Note = fmt.Sprintf("Skipped: no %s here (run from the repository root).", file)
		return t, nil
	}
	m, err := llama.Load(*passkeyModel)
	if err != nil {
		return t, err
	}
	prompts, err := llama.LoadPrompts(file)
	if err != nil {
		return t, err
	}
	n, rounds, nf := passkeyPrompts, passkeyReportRounds, passkeyFormatPrompts
	if quick {
		n, rounds, nf = passkeyQuickPrompts, 1, passkeyQuickPrompts
	}
	all := prompts
	prompts = prompts[:min(len(prompts), n)]
	outcomes, err := m.Evaluate(prompts, passkeyMethods())
	if err != nil {
		return t, err
	}
	if err := m.MeasureDecode(outcomes, prompts[0], rounds); err != nil {
		return t, err
	}
	refs, err := loadPasskeyRefs(*passkeyModel)
	if err != nil {
		return t, err
	}
	formatPrompts, fp16 := all[:min(len(all), nf)], outcomes
	if len(formatPrompts) != len(prompts) {
		fp16 = nil
	}
	byFormat, err := passkeyFormats(m, formatPrompts, passkeyMethods(), fp16)
	if err != nil {
		return t, err
	}
	formatIDs := make([]int, len(formatPrompts))
	for i, p := range formatPrompts {
		formatIDs[i] = p.ID
	}
	ids := make([]int, len(prompts))
	rows := make([]llama.Row, len(outcomes))
	for i, p := range prompts {
		ids[i] = p.ID
	}
	for i, o := range outcomes {
		rows[i] = o.Row
	}
	t.Note = fmt.Sprintf("Prompts 1–%d of %s, decode speed over %d rounds, fp16 cache; `go run ./bench -passkey %s [-kv bf16|q8_0]` runs all of them. "+
		"The second table is the methods PyTorch implements with the cache stored as fp16, bf16 or q8_0, on prompts 1–%d.", len(prompts), file, rounds, file, len(formatPrompts))
	t.Markdown, t.Data = markdown(llama.FP16, outcomes, refs, ids), rows
	if len(byFormat) > 0 {
		t.Columns, t.Rows = formatsTable(byFormat, refs, formatIDs)
		t.Markdown += "\n" + markdownTable(t.Columns, t.Rows)
	}
	t.Charts = []Chart{{"passkey-accuracy.svg", passkeyAccuracyChart(outcomes)}}
	if c := passkeyKeptChart(outcomes, prompts[0]); c != nil {
		t.Charts = append(t.Charts, Chart{"passkey-kept.svg", c})
	}
	return t, nil
}

// formatOutcomes are one format's outcomes for the methods PyTorch implements, and its
// full-cache forward's largest |Δlogit| against the float32 forward.
type formatOutcomes struct {
	format    llama.Format
	outcomes  []llama.Outcome
	logitDiff float64
}

// passkeyFormats evaluates the methods of all that PyTorch implements on prompts with
// the cache in each of llama.Formats; fp16, if not nil, is all's fp16 outcomes on the
// same prompts, which it reuses. Each format's logit difference is the largest
// |Δlogit| over the prompts between the last prompt position's logits with that full
// cache and with the float32 one.
func passkeyFormats(m *llama.Model, prompts []llama.Prompt, all []llama.Method, fp16 []llama.Outcome) ([]formatOutcomes, error) {
	var methods []llama.Method
	var fp16Out []llama.Outcome
	for i, me := range all {
		if llama.PyTorchKey(llama.Row{Method: me.Name, Window: me.Window, Budget: me.Budget}) != "" {
			methods = append(methods, me)
			if fp16 != nil {
				fp16Out = append(fp16Out, fp16[i])
			}
		}
	}
	if len(methods) == 0 {
		return nil, nil
	}
	f32, err := m.LastLogits(llama.F32, prompts)
	if err != nil {
		return nil, err
	}
	var out []formatOutcomes
	for _, f := range llama.Formats() {
		fo := formatOutcomes{format: f}
		if f == llama.FP16 && fp16 != nil {
			fo.outcomes = fp16Out
		} else if fo.outcomes, err = m.EvaluateKV(f, prompts, methods); err != nil {
			return nil, err
		}
		fo.logitDiff = llama.MaxAbsDiff(fo.outcomes[0].LastLogits, f32)
		out = append(out, fo)
	}
	return out, nil
}

// formatsTable is the per-format table: each method with its formats side by side, Go's
// exact-match count beside PyTorch's with the same cache format, key digits kept, cache
// KiB right after compression (snapkv's Stats, in the format's bytes), and on the full
// cache's rows the largest |Δlogit| against the float32 forward.
func formatsTable(byFormat []formatOutcomes, refs passkeyRefs, ids []int) ([]string, [][]string) {
	cols := []string{"method", "W", "C", "KV", "exact match", "PyTorch (same KV)", "key digits kept", "cache KiB", "full cache: max abs Δlogit vs float32"}
	var rows [][]string
	for i := range byFormat[0].outcomes {
		for _, fo := range byFormat {
			r := fo.outcomes[i].Row
			budget, diff := "all", "-"
			if r.Budget > 0 {
				budget = fmt.Sprint(r.Budget)
			}
			if fo.outcomes[i].Method.Kind == llama.Full {
				diff = fmt.Sprintf("%.3g", fo.logitDiff)
			}
			rows = append(rows, []string{r.Method, fmt.Sprint(r.Window), budget, fo.format.String(),
				fmt.Sprintf("%d/%d", r.Correct, r.Total), refs.correct(fo.format, r, ids),
				fmt.Sprintf("%.3f", r.KeyDigitsKept), fmt.Sprintf("%.1f", r.CacheBytes/1024), diff})
		}
	}
	return cols, rows
}

// markdownTable renders columns and rows as a Markdown table, numbers right-aligned.
func markdownTable(cols []string, rows [][]string) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(cols, " | ") + " |\n|")
	for _, c := range cols {
		if c == "method" || c == "KV" {
			b.WriteString(" --- |")
		} else {
			b.WriteString(" --: |")
		}
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}

// passkeyAccuracyChart draws exact-match accuracy against the budget for the methods
// of one window (16) and those without a window, and the full cache as a line.
func passkeyAccuracyChart(outcomes []llama.Outcome) []byte {
	var lines []series
	index := map[string]int{}
	full := -1.0
	for _, o := range outcomes {
		acc := 100 * float64(o.Correct) / float64(max(o.Total, 1))
		if o.Method.Name == "full" {
			full = acc
			continue
		}
		if o.Method.Window != 0 && o.Method.Window != 16 {
			continue
		}
		i, ok := index[o.Method.Name]
		if !ok {
			i = len(lines)
			index[o.Method.Name] = i
			lines = append(lines, series{name: o.Method.Name})
		}
		lines[i].x = append(lines[i].x, float64(o.Method.Budget))
		lines[i].y = append(lines[i].y, acc)
	}
	return accuracyChart("Pass-key accuracy against KV budget (window 16)", lines, full)
}

// passkeyKeptChart maps the rows that SnapKV with the model README's protocol (protected,
// W=16, C=64) kept for prompt p, or nil if that method did not run.
func passkeyKeptChart(outcomes []llama.Outcome, p llama.Prompt) []byte {
	for _, o := range outcomes {
		if o.Method.Name != "snapkv-protected" || o.Method.Window != 16 || o.Method.Budget != 64 || len(o.Kept) == 0 {
			continue
		}
		var names []string
		var kept [][]int
		for l, heads := range o.Kept[0] {
			for h, pos := range heads {
				names = append(names, fmt.Sprintf("L%d H%d", l, h))
				k := make([]int, len(pos))
				for i, v := range pos {
					k[i] = int(v)
				}
				kept = append(kept, k)
			}
		}
		mark := [2]int{}
		if len(p.KeySpans) > 0 {
			mark = [2]int{p.KeySpans[0][0], p.KeySpans[len(p.KeySpans)-1][1]}
		}
		return keptMap(keptSpec{
			title: fmt.Sprintf("Positions kept by %s (W=%d, C=%d) per layer and KV head, prompt %d",
				o.Method.Name, o.Method.Window, o.Method.Budget, p.ID),
			rows: names, positions: len(p.Text), kept: kept, mark: mark,
		})
	}
	return nil
}

// passkeyStreamPrompts is how many prompts the report's streaming table runs: all 32
// of the committed set (about 20 s here), so that its counts compare with
// results-stream.json's; -quick runs passkeyQuickPrompts.
const passkeyStreamPrompts = 32

// passkeyStreamTable is the streaming study (llama.StreamMethods: a decode budget while
// the prompt is fed token by token) with the fp16 cache, PyTorch's figures beside Go's
// when results-stream.json sits beside the prompts. -only leaves it out unless it
// names it ("-only streaming").
func passkeyStreamTable(quick bool) (Table, error) {
	t := Table{Title: "Pass-key retention while streaming"}
	file := filepath.Join(*passkeyModel, "prompts.json")
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		t.Note = fmt.Sprintf("Skipped: no %s here (run from the repository root).", file)
		return t, nil
	}
	m, err := llama.Load(*passkeyModel)
	if err != nil {
		return t, err
	}
	prompts, err := llama.LoadPrompts(file)
	if err != nil {
		return t, err
	}
	n := passkeyStreamPrompts
	if quick {
		n = passkeyQuickPrompts
	}
	prompts = prompts[:min(len(prompts), n)]
	outcomes, err := m.EvaluateStream(llama.FP16, prompts, llama.StreamMethods())
	if err != nil {
		return t, err
	}
	ref, err := loadStreamRef(*passkeyModel)
	if err != nil {
		return t, err
	}
	rows := make([]llama.StreamRow, len(outcomes))
	for i, o := range outcomes {
		rows[i] = o.StreamRow
	}
	t.Note = fmt.Sprintf("Prompts 1–%d of %s, fp16 cache: the first %d bytes prefilled at once, the rest fed one byte at a time, the decode budget's schedule after every token; "+
		"`go run ./bench -passkey %s -stream [-kv bf16|q8_0]` runs it alone.", len(prompts), file, llama.StreamPrefill, file)
	t.Markdown, t.Data = streamMarkdown(llama.FP16, outcomes, ref, prompts), rows
	return t, nil
}

// loadStreamRef reads the results-stream.json in dir, or returns nil if there is none.
func loadStreamRef(dir string) (*llama.StreamReference, error) {
	ref, err := llama.LoadStreamReference(filepath.Join(dir, "results-stream.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return ref, err
}

// streamMarkdown is the streaming study as a table. With ref (PyTorch's fp16 cache,
// answers in the order of the committed prompts, which prompts must follow) and the
// fp16 cache, each row carries PyTorch's count on the same prompts, the prompts whose
// answers differ from PyTorch's, and PyTorch's peak rows.
func streamMarkdown(f llama.Format, outcomes []llama.StreamOutcome, ref *llama.StreamReference, prompts []llama.Prompt) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| method | W | C | interval | exact match (%v KV) | PyTorch (fp16 KV) | answers ≠ PyTorch's | peak rows | PyTorch | compressions per layer |\n", f)
	b.WriteString("| --- | --: | --: | --: | --: | --: | --- | --: | --: | --: |\n")
	for _, o := range outcomes {
		r := o.StreamRow
		pyCorrect, differ, pyPeak := "-", "-", "-"
		if _, peak, pred, ok := ref.Lookup(r); ok && len(pred) >= len(prompts) {
			pyPeak = fmt.Sprint(peak)
			if f == llama.FP16 {
				n, diff := 0, []string{}
				for i, p := range prompts {
					if pred[i] == p.Answer {
						n++
					}
					if pred[i] != o.Preds[i] {
						diff = append(diff, fmt.Sprintf("%d (Go %s, PyTorch %s)", p.ID, o.Preds[i], pred[i]))
					}
				}
				pyCorrect, differ = fmt.Sprintf("%d/%d", n, len(prompts)), "none"
				if len(diff) > 0 {
					differ = strings.Join(diff, "; ")
				}
			}
		}
		budget, interval := "all", "-"
		if r.Budget > 0 {
			budget, interval = fmt.Sprint(r.Budget), fmt.Sprint(r.Interval)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %d/%d | %s | %s | %d | %s | %.1f |\n",
			r.Method, r.Window, budget, interval, r.Correct, r.Total, pyCorrect, differ, r.PeakRows, pyPeak, r.Compressions)
	}
	return b.String()
}
