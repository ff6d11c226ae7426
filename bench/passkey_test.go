package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/bench/llama"
)

// TestPasskeyJSONSchema runs `-passkey FILE -json` on one prompt, with the fp16 cache
// and with `-kv q8_0`, and checks the output is one JSON array of objects with exactly
// the documented fields' types, one object per method, window and budget,
// docs/passkey.md's grid included, each naming its cache format and counting its bytes.
func TestPasskeyJSONSchema(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "passkey-model", "prompts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all struct {
		Prompts []map[string]any `json:"prompts"`
	}
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	// Prompt 0 hides its key in the first 60 bytes: keep 200 bytes of it and the
	// question, so the test (40-odd methods) stays quick under emulation too.
	p := all.Prompts[0]
	p["text"] = p["text"].(string)[:200] + " What is the pass key? The pass key is "
	one, err := json.Marshal(map[string]any{"prompts": []any{p}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "one.json")
	if err := os.WriteFile(file, one, 0o644); err != nil {
		t.Fatal(err)
	}
	*passkeyModel = filepath.Join("..", "testdata", "passkey-model")
	defer func(r int) { passkeySpeedRounds = r }(passkeySpeedRounds)
	passkeySpeedRounds = 1

	for _, kv := range []struct {
		name     string
		rowBytes int // a 64-value row of K or V
	}{{"fp16", 64 * 2}, {"q8_0", 2 * 34}} {
		t.Run(kv.name, func(t *testing.T) {
			checkPasskeyJSON(t, file, kv.name, len(p["text"].(string)), kv.rowBytes)
		})
	}

	var out bytes.Buffer
	if err := writePasskey(&out, file, "fp16", false); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(out.String(), "\n"); lines != len(llama.Methods())+2 {
		t.Errorf("Markdown table has %d lines for %d methods", lines, len(llama.Methods()))
	}
	if err := writePasskey(&out, file, "q4_0", true); err == nil || !strings.Contains(err.Error(), "q4_0") {
		t.Errorf("-kv q4_0: error %v, want one naming it", err)
	}
}

func checkPasskeyJSON(t *testing.T, file, kv string, promptLen, rowBytes int) {
	var out bytes.Buffer
	if err := writePasskey(&out, file, kv, true); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("output is not a JSON array of objects: %v\n%s", err, out.Bytes())
	}
	seen := map[string]bool{}
	for _, r := range rows {
		method, ok := r["method"].(string)
		if !ok || method == "" {
			t.Fatalf("row %v: method is not a non-empty string", r)
		}
		ints := map[string]int{}
		for _, k := range []string{"window", "budget", "correct", "total"} {
			f, ok := r[k].(float64)
			if !ok || f != float64(int(f)) || f < 0 {
				t.Fatalf("row %v: %s is not a non-negative integer", r, k)
			}
			ints[k] = int(f)
		}
		kdk, ok := r["key_digits_kept"].(float64)
		if !ok || kdk < 0 || kdk > 1+1e-9 {
			t.Fatalf("row %v: key_digits_kept is not a fraction", r)
		}
		if ints["total"] != 1 || ints["correct"] > 1 {
			t.Errorf("row %v: correct/total over 1 prompt", r)
		}
		if (method == "full" || method == "sinks-recent") && ints["window"] != 0 {
			t.Errorf("row %v: %s carries window 0", r, method)
		}
		if method == "full" && kdk < 1-1e-9 {
			t.Errorf("full cache keeps key digits %v, want 1", kdk)
		}
		if r["kv"] != kv {
			t.Errorf("row %v: kv %v, want %q", r, r["kv"], kv)
		}
		// Every schedule keeps the same total memory as its uniform budget: C rows per
		// layer of the passkey model's 3 layers, each a 64-value K and V row in the
		// cache's format plus an int32 position (every prompt row for the full cache).
		rows := ints["budget"]
		if method == "full" {
			rows = promptLen
		}
		if got, ok := r["cache_bytes"].(float64); !ok || got != float64(rows*3*(2*rowBytes+4)) {
			t.Errorf("row %v: cache_bytes %v, want %d", r, r["cache_bytes"], rows*3*(2*rowBytes+4))
		}
		if tps, ok := r["decode_tokens_per_s"].(float64); !ok || !(tps > 0) {
			t.Errorf("row %v: decode_tokens_per_s is not positive", r)
		}
		key := fmt.Sprintf("%s/%d/%d", method, ints["window"], ints["budget"])
		if seen[key] {
			t.Errorf("two rows for %s", key)
		}
		seen[key] = true
	}
	for _, want := range []string{"full/0/0",
		"snapkv-protected/16/32", "snapkv-protected/16/64", "snapkv-protected/16/128", "snapkv-protected/32/64", "snapkv-protected/32/128",
		"snapkv-paper/16/32", "snapkv-paper/16/64", "snapkv-paper/16/128",
		"sinks-recent/0/32", "sinks-recent/0/64", "sinks-recent/0/128",
		"snapkv-shared-votes-layer1/16/32", "snapkv-shared-votes-layer1/16/64", "snapkv-shared-votes-layer1/16/128"} {
		if !seen[want] {
			t.Errorf("no row for %s", want)
		}
	}
	if len(rows) != len(llama.Methods()) {
		t.Errorf("%d rows for %d methods", len(rows), len(llama.Methods()))
	}
}

// TestFormatsTable checks the per-format table on made-up outcomes: each method's
// formats side by side, PyTorch's count with the same format (results.json's per prompt
// for fp16, results-kvtypes.json's over all its prompts for the others, so only when
// as many prompts ran), and the logit difference on the full cache's rows only.
func TestFormatsTable(t *testing.T) {
	refs, err := loadPasskeyRefs(filepath.Join("..", "testdata", "passkey-model"))
	if err != nil || refs.fp16 == nil || refs.kvtypes == nil {
		t.Fatalf("references: %+v, %v", refs, err)
	}
	full := llama.Method{Name: "full", Kind: llama.Full}
	paper := llama.Method{Name: "snapkv-paper", Kind: llama.SnapKV, Window: 16, Budget: 64}
	ids := make([]int, 32)
	for i := range ids {
		ids[i] = i
	}
	var byFormat []formatOutcomes
	for i, f := range llama.Formats() {
		var os []llama.Outcome
		for _, me := range []llama.Method{full, paper} {
			os = append(os, llama.Outcome{Method: me, Format: f, Row: llama.Row{Method: me.Name, KV: f.String(),
				Window: me.Window, Budget: me.Budget, Correct: 29 + i, Total: 32, CacheBytes: 2048}})
		}
		byFormat = append(byFormat, formatOutcomes{format: f, outcomes: os, logitDiff: 0.5 * float64(i)})
	}
	cols, rows := formatsTable(byFormat, refs, ids)
	want := [][]string{
		{"full", "0", "all", "fp16", "29/32", "32/32", "0.000", "2.0", "0"},
		{"full", "0", "all", "bf16", "30/32", "32/32", "0.000", "2.0", "0.5"},
		{"full", "0", "all", "q8_0", "31/32", "32/32", "0.000", "2.0", "1"},
		{"full", "0", "all", "f32", "32/32", "32/32", "0.000", "2.0", "1.5"},
		{"snapkv-paper", "16", "64", "fp16", "29/32", "10/32", "0.000", "2.0", "-"},
		{"snapkv-paper", "16", "64", "bf16", "30/32", "10/32", "0.000", "2.0", "-"},
		{"snapkv-paper", "16", "64", "q8_0", "31/32", "11/32", "0.000", "2.0", "-"},
		{"snapkv-paper", "16", "64", "f32", "32/32", "10/32", "0.000", "2.0", "-"},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("rows\n%v\nwant\n%v", rows, want)
	}
	md := markdownTable(cols, rows)
	if lines := strings.Count(md, "\n"); lines != len(want)+2 || !strings.HasPrefix(md, "| method | W | C | KV |") {
		t.Errorf("Markdown:\n%s", md)
	}
	// On fewer prompts than results-kvtypes.json counts over, its counts do not apply.
	if got := refs.correct(llama.Q8_0, byFormat[2].outcomes[1].Row, ids[:6]); got != "-" {
		t.Errorf("q8_0 PyTorch count over 6 prompts: %q, want -", got)
	}
	if got := refs.correct(llama.FP16, byFormat[0].outcomes[1].Row, ids[:6]); got == "-" {
		t.Errorf("fp16 PyTorch count over 6 prompts: %q, want results.json's", got)
	}
}
