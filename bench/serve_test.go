package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tinyServeConfig is the study in miniature: 256-token prompts in chunks of 64, budget
// 32, 6 requests, a pool of 2 full-cache sequences.
func tinyServeConfig() serveConfig {
	return serveConfig{
		Requests: 6, Arrive: 2, Prompt: 256, Gen: 16, Chunk: 64, PoolSeqs: 2, PageRows: 16,
		QHeads: 8, KVHeads: 2, Dim: 64, Window: 8, Kernel: 7,
		Budgets: []int{32}, DecodeBudget: 32, Interval: 4, Seed: 1,
	}
}

// TestServe runs the tiny study and checks that every request completes, that every
// page comes back to the pool, that SnapKV runs more sequences at once than the full
// cache, and that the table and both charts are written.
func TestServe(t *testing.T) {
	cfg := tinyServeConfig()
	start := time.Now()
	results, err := serveStudy(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 || results[0].Name != "full" {
		t.Fatalf("scenarios %v, want full, SnapKV 32 and SnapKV 32 with a decode budget", results)
	}
	full := results[0]
	for _, r := range results {
		if r.Completed != cfg.Requests || r.Generated != cfg.Requests*cfg.Gen {
			t.Errorf("%s: %d requests completed, %d tokens, want %d and %d", r.Name, r.Completed, r.Generated, cfg.Requests, cfg.Requests*cfg.Gen)
		}
		if r.FinalInUse != 0 {
			t.Errorf("%s: %d pages in use after the last request, want 0", r.Name, r.FinalInUse)
		}
		if r.Peak <= 0 || r.Peak > 1 {
			t.Errorf("%s: peak pool %v, want in (0, 1]", r.Name, r.Peak)
		}
		if len(r.Running) != r.Steps || len(r.Occupancy) != r.Steps {
			t.Errorf("%s: %d and %d points for %d steps", r.Name, len(r.Running), len(r.Occupancy), r.Steps)
		}
		if r.Name != "full" && !(r.MeanRunning > full.MeanRunning && r.MaxRunning > full.MaxRunning) {
			t.Errorf("%s runs %.2f sequences at once (max %d), full %.2f (max %d): want more", r.Name, r.MeanRunning, r.MaxRunning, full.MeanRunning, full.MaxRunning)
		}
	}
	if full.MaxRunning > cfg.PoolSeqs {
		t.Errorf("full ran %d sequences at once on a pool of %d full sequences", full.MaxRunning, cfg.PoolSeqs)
	}

	dir := t.TempDir()
	var out, note bytes.Buffer
	if err := writeServe(&out, &note, dir, cfg, results, time.Since(start)); err != nil {
		t.Fatal(err)
	}
	md := out.String()
	rows := 0
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| ---") {
			rows++
		}
	}
	if rows != len(results)+1 { // the header and a row per scenario
		t.Errorf("table has %d rows, want a header and %d:\n%s", rows, len(results), md)
	}
	for _, want := range []string{"concurrency ÷ full", "| full |", "| SnapKV 32 |", "≥ 6×"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "serve.md")); err != nil || string(b) != md {
		t.Errorf("serve.md: %v, or not the table printed", err)
	}
	for _, f := range []string{"serve-pool.svg", "serve-running.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if !strings.HasPrefix(s, "<?xml") || !strings.HasSuffix(s, "</svg>\n") || !strings.Contains(s, "SnapKV 32") || !strings.Contains(s, "<polyline") {
			t.Errorf("%s is not a chart with a line per scenario:\n%.400s", f, s)
		}
	}
	if !strings.Contains(note.String(), dir) {
		t.Errorf("the note %q does not say where the files went", note.String())
	}
}

// TestServePreempt runs a pool of one full sequence that SnapKV admits every request
// into, then fills as they generate (64 tokens, twice the kept prompt), so that Appends find it full: every
// preempted request is recomputed and completes, and every page comes back.
func TestServePreempt(t *testing.T) {
	cfg := tinyServeConfig()
	cfg.Arrive, cfg.Gen, cfg.PoolSeqs, cfg.Budgets, cfg.DecodeBudget = 0, 64, 1, []int{32}, 0
	var full float64
	for _, sc := range serveScenarios(cfg) {
		r, err := runServe(cfg, sc)
		if err != nil {
			t.Fatal(err)
		}
		if r.Completed != cfg.Requests || r.FinalInUse != 0 {
			t.Errorf("%s: %d of %d completed, %d pages left in use", r.Name, r.Completed, cfg.Requests, r.FinalInUse)
		}
		if sc.Name == "full" {
			full = r.Saturated
		} else if r.Preemptions == 0 {
			t.Errorf("%s: no preemption on a pool its prompts overfill", r.Name)
		}
		if !(r.Saturated > 0) || sc.Name != "full" && !(r.Saturated > full) {
			t.Errorf("%s: %v sequences running while requests waited, full %v: want more than full", r.Name, r.Saturated, full)
		}
		t.Logf("%s: %d preemptions, %d failed admissions, %d steps, max running %d", r.Name, r.Preemptions, r.Failed, r.Steps, r.MaxRunning)
	}
}
