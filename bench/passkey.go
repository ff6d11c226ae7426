package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvsimd/kvsimd/bench/llama"
)

var (
	passkeyFile  = flag.String("passkey", "", "evaluate pass-key retention on the prompts of this file (prompts.json's format) and exit")
	passkeyModel = flag.String("passkey-model", filepath.Join("testdata", "passkey-model"), "directory of the model's config.json and model.safetensors")
)

// passkeySpeedRounds is how many rounds the decode speed is measured in; each method's
// fastest round counts.
var passkeySpeedRounds = 7

// runPasskey evaluates every method of llama.Methods on the prompts of file and prints
// one JSON array (asJSON) or a Markdown table. When a results.json sits beside file,
// the table carries PyTorch's figures and the agreement of the kept sets.
func runPasskey(file string, asJSON bool) error { return writePasskey(os.Stdout, file, asJSON) }

func writePasskey(w io.Writer, file string, asJSON bool) error {
	m, err := llama.Load(*passkeyModel)
	if err != nil {
		return err
	}
	prompts, err := llama.LoadPrompts(file)
	if err != nil {
		return err
	}
	outcomes, err := m.Evaluate(prompts, llama.Methods())
	if err != nil {
		return err
	}
	if err := m.MeasureDecode(outcomes, prompts[0], passkeySpeedRounds); err != nil {
		return err
	}
	if asJSON {
		rows := make([]llama.Row, len(outcomes))
		for i, o := range outcomes {
			rows[i] = o.Row
		}
		b, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	ref, err := llama.LoadReference(filepath.Join(filepath.Dir(file), "results.json"))
	if errors.Is(err, fs.ErrNotExist) {
		ref = nil
	} else if err != nil {
		return err
	}
	ids := make([]int, len(prompts))
	for i, p := range prompts {
		ids[i] = p.ID
	}
	_, err = io.WriteString(w, markdown(outcomes, ref, ids))
	return err
}

// markdown is the evaluation as a table, PyTorch's figures beside Go's where ref has
// them, and the decode speed of each compressed cache against the full one.
func markdown(outcomes []llama.Outcome, ref *llama.Reference, ids []int) string {
	var b strings.Builder
	b.WriteString("| method | W | C | exact match | PyTorch (fp16 KV) | key digits kept | PyTorch | per layer | kept sets = PyTorch's (near tie / other) | rows per layer | cache KiB | decode tok/s | vs full |\n")
	b.WriteString("| --- | --: | --: | --: | --: | --: | --: | --- | --- | --- | --: | --: | --: |\n")
	var full float64
	for _, o := range outcomes {
		if o.Method.Name == "full" {
			full = o.DecodeTokensPerS
		}
	}
	for _, o := range outcomes {
		r := o.Row
		pyCorrect, pyKDK, agree := "-", "-", "-"
		key := ""
		if ref != nil {
			key = ref.Key(r)
		}
		if key != "" {
			if n, ok := ref.Correct(key, ids); ok {
				pyCorrect = fmt.Sprintf("%d/%d", n, len(ids))
			}
			switch {
			case key == "full":
				pyKDK = "1"
			case len(ids) == len(ref.PerPrompt):
				pyKDK = fmt.Sprintf("%.3f", ref.Summary[key].KeyDigits)
			}
			if a, err := ref.CompareKept(key, o, ids); err == nil {
				agree = fmt.Sprintf("%d of %d (%d / %d)", a.Same, a.Same+a.NearTie+a.Differ, a.NearTie, a.Differ)
			}
		}
		budget, ratio := "all", "-"
		if r.Budget > 0 {
			budget = fmt.Sprint(r.Budget)
		}
		if full > 0 {
			ratio = fmt.Sprintf("%.1f×", r.DecodeTokensPerS/full)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %d/%d | %s | %.3f | %s | %s | %s | %s | %.1f | %.0f | %s |\n",
			r.Method, r.Window, budget, r.Correct, r.Total, pyCorrect, r.KeyDigitsKept, pyKDK,
			join(r.PerLayer, "%.2f"), agree, join(r.LayerBudgets, "%.0f"), r.CacheBytes/1024, r.DecodeTokensPerS, ratio)
	}
	return b.String()
}

func join(xs []float64, format string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(s, " / ")
}

// passkeyMain is main's hook, called after flag.Parse: it runs -passkey and exits when
// the flag is set. -json is main's flag (the report's JSON switch), read by name.
func passkeyMain() {
	if *passkeyFile == "" {
		return
	}
	asJSON := false
	if f := flag.Lookup("json"); f != nil {
		asJSON = f.Value.String() == "true"
	}
	if err := runPasskey(*passkeyFile, asJSON); err != nil {
		fmt.Fprintln(os.Stderr, "passkey:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
