package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kvsimd/kvsimd/bench/llama"
)

// The pass-key evaluation (passkey.go, package bench/llama) joins the report as a
// result table: every method's accuracy on the committed prompts, a chart of accuracy
// against budget per method, and a map of the positions one SnapKV method kept in each
// layer and KV head of the first prompt, with the key's digits marked. -only leaves it
// out unless it names it ("-only pass-key" runs it alone).
func init() {
	resultTables = append(resultTables, resultTable{"pass-key evaluation", passkeyTable})
}

// The report evaluates the first prompts of the committed set, to stay within its
// time: each prompt runs every method (about 4 s here), and measures decode speed in
// fewer rounds than `-passkey FILE`, which runs them all.
const passkeyPrompts, passkeyQuickPrompts, passkeyReportRounds = 6, 1, 3

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
	n, rounds := passkeyPrompts, passkeyReportRounds
	if quick {
		n, rounds = passkeyQuickPrompts, 1
	}
	prompts = prompts[:min(len(prompts), n)]
	outcomes, err := m.Evaluate(prompts, passkeyMethods())
	if err != nil {
		return t, err
	}
	if err := m.MeasureDecode(outcomes, prompts[0], rounds); err != nil {
		return t, err
	}
	ref, err := llama.LoadReference(filepath.Join(*passkeyModel, "results.json"))
	if errors.Is(err, fs.ErrNotExist) {
		ref = nil
	} else if err != nil {
		return t, err
	}
	ids := make([]int, len(prompts))
	rows := make([]llama.Row, len(outcomes))
	for i, p := range prompts {
		ids[i] = p.ID
	}
	for i, o := range outcomes {
		rows[i] = o.Row
	}
	t.Note = fmt.Sprintf("Prompts 1–%d of %s, decode speed over %d rounds; `go run ./bench -passkey %s` runs all of them.", len(prompts), file, rounds, file)
	t.Markdown, t.Data = markdown(outcomes, ref, ids), rows
	t.Charts = []Chart{{"passkey-accuracy.svg", passkeyAccuracyChart(outcomes)}}
	if c := passkeyKeptChart(outcomes, prompts[0]); c != nil {
		t.Charts = append(t.Charts, Chart{"passkey-kept.svg", c})
	}
	return t, nil
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
