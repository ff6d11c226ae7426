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

// TestPasskeyJSONSchema runs `-passkey FILE -json` on two prompts and checks the output
// is one JSON array of objects with exactly the documented fields' types, one object
// per method, window and budget, the README's grid included.
func TestPasskeyJSONSchema(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "passkey-model", "prompts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all struct {
		Prompts []json.RawMessage `json:"prompts"`
	}
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	two, err := json.Marshal(map[string]any{"prompts": all.Prompts[:2]})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "two.json")
	if err := os.WriteFile(file, two, 0o644); err != nil {
		t.Fatal(err)
	}
	*passkeyModel = filepath.Join("..", "testdata", "passkey-model")

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
		if ints["total"] != 2 || ints["correct"] > 2 {
			t.Errorf("row %v: correct/total over 2 prompts", r)
		}
		if (method == "full" || method == "sinks-recent") && ints["window"] != 0 {
			t.Errorf("row %v: %s carries window 0", r, method)
		}
		if method == "full" && kdk < 1-1e-9 {
			t.Errorf("full cache keeps key digits %v, want 1", kdk)
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
