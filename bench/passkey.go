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
	passkeyKV    = flag.String("kv", "fp16", "with -passkey: the KV cache's format, fp16, bf16, q8_0 (ggml's blocks of 32) or f32")
	passkeyStrm  = flag.Bool("stream", false, "with -passkey: the streaming study instead (a decode budget while the prompt is fed one byte at a time, results-stream.json's protocol)")
)

// passkeySpeedRounds is how many rounds the decode speed is measured in; each method's
// fastest round counts.
var passkeySpeedRounds = 7

// runPasskey evaluates every method of llama.Methods (with -stream, of
// llama.StreamMethods) on the prompts of file with the cache in format kv and prints
// one JSON array (asJSON) or a Markdown table. When a
// results.json sits beside file, the table carries PyTorch's figures and the agreement
// of the kept sets; for bf16 and q8_0, PyTorch's counts come from the
// results-kvtypes.json beside it.
func runPasskey(file, kv string, asJSON bool) error {
	return writePasskey(os.Stdout, file, kv, asJSON)
}

func writePasskey(w io.Writer, file, kv string, asJSON bool) error {
	f, err := llama.ParseFormat(kv)
	if err != nil {
		return err
	}
	m, err := llama.Load(*passkeyModel)
	if err != nil {
		return err
	}
	prompts, err := llama.LoadPrompts(file)
	if err != nil {
		return err
	}
	if *passkeyStrm {
		return writeStream(w, m, f, prompts, filepath.Dir(file), asJSON)
	}
	outcomes, err := m.EvaluateKV(f, prompts, llama.Methods())
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
	refs, err := loadPasskeyRefs(filepath.Dir(file))
	if err != nil {
		return err
	}
	ids := make([]int, len(prompts))
	for i, p := range prompts {
		ids[i] = p.ID
	}
	_, err = io.WriteString(w, markdown(f, outcomes, refs, ids))
	return err
}

// writeStream runs the streaming study (llama.StreamMethods) on prompts with the cache
// in format f and prints one JSON array or a Markdown table, PyTorch's figures beside
// Go's when a results-stream.json sits in dir.
func writeStream(w io.Writer, m *llama.Model, f llama.Format, prompts []llama.Prompt, dir string, asJSON bool) error {
	outcomes, err := m.EvaluateStream(f, prompts, llama.StreamMethods())
	if err != nil {
		return err
	}
	if asJSON {
		rows := make([]llama.StreamRow, len(outcomes))
		for i, o := range outcomes {
			rows[i] = o.StreamRow
		}
		b, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	ref, err := loadStreamRef(dir)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, streamMarkdown(f, outcomes, ref, prompts))
	return err
}

// passkeyRefs are PyTorch's figures found beside the prompts: results.json (fp16 cache,
// per prompt) and results-kvtypes.json (counts per cache format over all its prompts).
// Either may be nil.
type passkeyRefs struct {
	fp16    *llama.Reference
	kvtypes *llama.KVTypes
}

func loadPasskeyRefs(dir string) (passkeyRefs, error) {
	var r passkeyRefs
	ref, err := llama.LoadReference(filepath.Join(dir, "results.json"))
	if err == nil {
		r.fp16 = ref
	} else if !errors.Is(err, fs.ErrNotExist) {
		return r, err
	}
	kv, err := llama.LoadKVTypes(filepath.Join(dir, "results-kvtypes.json"))
	if err == nil {
		r.kvtypes = kv
	} else if !errors.Is(err, fs.ErrNotExist) {
		return r, err
	}
	return r, nil
}

// correct is PyTorch's exact-match count for row with the cache in format f over the
// prompts ids, as "n/len(ids)", or "-" where the references do not have it: fp16 from
// results.json prompt by prompt, the other formats from results-kvtypes.json, whose
// counts are over all its prompts (so only when ids are as many).
func (r passkeyRefs) correct(f llama.Format, row llama.Row, ids []int) string {
	if (f == llama.FP16 || f == llama.F32) && r.fp16 != nil { // results.json ran both
		if key := r.fp16.Key(row); key != "" {
			if n, ok := r.fp16.Correct(f, key, ids); ok {
				return fmt.Sprintf("%d/%d", n, len(ids))
			}
		}
		return "-"
	}
	if r.kvtypes != nil && len(ids) == r.kvtypes.Prompts {
		if n, ok := r.kvtypes.Correct(f, row); ok {
			return fmt.Sprintf("%d/%d", n, len(ids))
		}
	}
	return "-"
}

// markdown is the evaluation with the cache in format f as a table, PyTorch's figures
// beside Go's where refs have them, and the decode speed of each compressed cache
// against the full one. Key digits kept and the kept sets are compared with PyTorch's
// fp32-cache selections (results.json) in every format: with bf16 and q8_0 keys more
// cuts move.
func markdown(f llama.Format, outcomes []llama.Outcome, refs passkeyRefs, ids []int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| method | W | C | exact match | PyTorch (%v KV) | key digits kept | PyTorch | per layer | kept sets = PyTorch's (near tie / other) | rows per layer | cache KiB | decode tok/s | vs full |\n", f)
	b.WriteString("| --- | --: | --: | --: | --: | --: | --: | --- | --- | --- | --: | --: | --: |\n")
	var full float64
	for _, o := range outcomes {
		if o.Method.Name == "full" {
			full = o.DecodeTokensPerS
		}
	}
	for _, o := range outcomes {
		r, ref := o.Row, refs.fp16
		pyCorrect, pyKDK, agree := refs.correct(f, r, ids), "-", "-"
		key := ""
		if ref != nil {
			key = ref.Key(r)
		}
		if key != "" {
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
	if err := runPasskey(*passkeyFile, *passkeyKV, asJSON); err != nil {
		fmt.Fprintln(os.Stderr, "passkey:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
