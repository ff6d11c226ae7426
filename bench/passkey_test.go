package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPasskeyJSONSchema runs `-passkey FILE -json` on one prompt and checks the output
// is one JSON array of objects with exactly the documented fields' types, one object
// per method, window and budget, docs/passkey.md's grid included.
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

	var out bytes.Buffer
	if err := writePasskey(&out, file, true); err != nil {
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
		// Every schedule keeps the same total memory as its uniform budget: C rows per
		// layer of the passkey model's 3 layers, each 64-dim fp16 K and V plus an int32
		// position (every prompt row for the full cache).
		rows := ints["budget"]
		if method == "full" {
			rows = len(p["text"].(string))
		}
		if got, ok := r["cache_bytes"].(float64); !ok || got != float64(rows*3*(64*2*2+4)) {
			t.Errorf("row %v: cache_bytes %v, want %d", r, r["cache_bytes"], rows*3*(64*2*2+4))
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
		"sinks-recent/0/32", "sinks-recent/0/64", "sinks-recent/0/128"} {
		if !seen[want] {
			t.Errorf("no row for %s", want)
		}
	}

	out.Reset()
	if err := writePasskey(&out, file, false); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(out.String(), "\n"); lines != len(rows)+2 {
		t.Errorf("Markdown table has %d lines for %d rows", lines, len(rows))
	}
}
