package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/bench/llama"
)

// TestPasskeyStream runs `-passkey FILE -stream` on the first committed prompt, beside
// a copy of results-stream.json: the JSON (-kv q8_0) is one object per streaming
// method with exactly the documented fields, peaks within Budget + Interval − 1, and
// the Markdown (fp16) puts PyTorch's answer for that prompt beside Go's.
func TestPasskeyStream(t *testing.T) {
	dir := filepath.Join("..", "testdata", "passkey-model")
	b, err := os.ReadFile(filepath.Join(dir, "prompts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all struct {
		Prompts []map[string]any `json:"prompts"`
	}
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	one, err := json.Marshal(map[string]any{"prompts": all.Prompts[:1]})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	file := filepath.Join(tmp, "one.json")
	ref, err := os.ReadFile(filepath.Join(dir, "results-stream.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, one, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "results-stream.json"), ref, 0o644); err != nil {
		t.Fatal(err)
	}
	*passkeyModel = dir
	defer func() { *passkeyStrm = false }()
	*passkeyStrm = true

	var out bytes.Buffer
	if err := writePasskey(&out, file, "q8_0", true); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	if len(rows) != len(llama.StreamMethods()) {
		t.Fatalf("%d rows for %d methods", len(rows), len(llama.StreamMethods()))
	}
	fields := []string{"budget", "compressions", "correct", "interval", "kv", "method", "peak_rows", "total", "window"}
	for _, r := range rows {
		var keys []string
		for k := range r {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, fields) || r["kv"] != "q8_0" || r["total"] != 1.0 {
			t.Fatalf("row %v, want the fields %v, kv q8_0, total 1", r, fields)
		}
		budget, interval, peak := r["budget"].(float64), r["interval"].(float64), r["peak_rows"].(float64)
		if budget > 0 && peak != budget+interval-1 || budget == 0 && peak != 504 {
			t.Errorf("%v: peak %v rows, want Budget + Interval − 1 (504 for the full cache)", r, peak)
		}
	}

	out.Reset()
	if err := writePasskey(&out, file, "fp16", false); err != nil {
		t.Fatal(err)
	}
	md := out.String()
	if lines := strings.Count(md, "\n"); lines != len(llama.StreamMethods())+2 {
		t.Errorf("Markdown table has %d lines for %d methods:\n%s", lines, len(llama.StreamMethods()), md)
	}
	if !strings.Contains(md, "| full | 0 | all | - | 1/1 | 1/1 | none | 504 | 504 | 0.0 |") {
		t.Errorf("no full-cache row with PyTorch's figures beside Go's:\n%s", md)
	}
}
