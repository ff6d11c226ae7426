package llama

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
)

// Reference is the PyTorch evaluation, results.json.
type Reference struct {
	Summary   map[string]refSummary `json:"summary"`
	PerPrompt []refPrompt           `json:"per_prompt"`
}

type refSummary struct {
	Accuracy     float64 `json:"accuracy"`
	AccuracyFP16 float64 `json:"accuracy_kv_fp16"`
	KeyDigits    float64 `json:"key_digits_kept"`
}

type refPrompt struct {
	ID   int                     `json:"id"`
	FP32 map[string]refSelection `json:"fp32"`
	FP16 map[string]struct {
		Pred    string `json:"pred"`
		Correct bool   `json:"correct"`
	} `json:"kv_fp16"`
}

// refSelection is one prompt under one method: the kept positions [layer][KV head] and,
// for SnapKV, how close each cut was to a tie: (score of the last kept row − best score
// left out) / |score of the last kept row|.
type refSelection struct {
	Kept    [][][]int32 `json:"kept"`
	RelGap  [][]float64 `json:"rel_gap"`
	Correct bool        `json:"correct"`
}

// LoadReference reads results.json.
func LoadReference(file string) (*Reference, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var r Reference
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("llama: %s: %w", file, err)
	}
	return &r, nil
}

// Key names row's configuration in results.json, or "" when PyTorch did not run it.
func (r *Reference) Key(row Row) string {
	k := PyTorchKey(row)
	if _, ok := r.Summary[k]; !ok {
		return ""
	}
	return k
}

// PyTorchKey is the name results.json and results-kvtypes.json give row's
// configuration, or "" for a method the PyTorch reference does not implement.
func PyTorchKey(row Row) string {
	switch row.Method {
	case "full":
		return "full"
	case "snapkv-protected":
		return fmt.Sprintf("snapkv_w%d_b%d", row.Window, row.Budget)
	case "snapkv-paper":
		return fmt.Sprintf("snapkv_paper_w%d_b%d", row.Window, row.Budget)
	case "sinks-recent":
		return fmt.Sprintf("sinks_recent_b%d", row.Budget)
	}
	return ""
}

// KVTypes is PyTorch's evaluation with the cache in each format, results-kvtypes.json:
// the exact-match count over all its prompts for each format and configuration, K
// (after RoPE) and V rounded to the format as they are written and SnapKV selecting on
// the rounded keys (q8_0 by ggml's rule, emulated exactly).
type KVTypes struct {
	Prompts int                       `json:"n_prompts"`
	Counts  map[string]map[string]int `json:"correct"` // format → results.json key → correct
}

// LoadKVTypes reads results-kvtypes.json.
func LoadKVTypes(file string) (*KVTypes, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var r KVTypes
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("llama: %s: %w", file, err)
	}
	if r.Prompts < 1 || len(r.Counts) == 0 {
		return nil, fmt.Errorf("llama: %s holds no counts", file)
	}
	return &r, nil
}

// Correct returns PyTorch's exact-match count over its r.Prompts prompts for row's
// configuration with the cache in format f; false if PyTorch did not run it.
func (r *KVTypes) Correct(f Format, row Row) (int, bool) {
	n, ok := r.Counts[f.String()][PyTorchKey(row)]
	return n, ok
}

func (r *Reference) prompt(id int) (refPrompt, bool) {
	i := slices.IndexFunc(r.PerPrompt, func(p refPrompt) bool { return p.ID == id })
	if i < 0 {
		return refPrompt{}, false
	}
	return r.PerPrompt[i], true
}

// Correct returns PyTorch's exact-match count with a KV cache in format f, FP16 (the
// cache this package's reference runs) or F32, on the prompts with the given ids; false
// if one is missing or results.json has no run in f.
func (r *Reference) Correct(f Format, key string, ids []int) (int, bool) {
	n := 0
	for _, id := range ids {
		p, ok := r.prompt(id)
		if !ok {
			return 0, false
		}
		var correct bool
		switch f {
		case FP16:
			res, ok := p.FP16[key]
			if !ok {
				return 0, false
			}
			correct = res.Correct
		case F32:
			res, ok := p.FP32[key]
			if !ok {
				return 0, false
			}
			correct = res.Correct
		default:
			return 0, false
		}
		if correct {
			n++
		}
	}
	return n, true
}

// Agreement counts the (prompt, layer, KV head) cuts whose kept sets equal PyTorch's
// (Same), differ where PyTorch's cut was a near tie, rel_gap < NearTie (NearTie), or
// differ otherwise (Differ), with the positions in either set but not both (Moved) and
// the largest rel_gap of a cut that differs (WidestGap).
type Agreement struct {
	Same, NearTie, Differ, Moved int
	WidestGap                    float64
}

// NearTie is the rel_gap below which a differing cut is put down to rounding. This
// cache rounds K to fp16 (a relative change of up to 2⁻¹¹ ≈ 4.9e-4 per element) where
// PyTorch's selections used float32 keys, and a score's error passes into its softmax
// weight and the pooled vote about one for one; 2e-3 is four times that unit roundoff.
// On the 32 prompts the widest gap of a cut that differs is 9.5e-4.
const NearTie = 2e-3

// CompareKept compares o's kept sets with PyTorch's fp32-cache run of key, prompt by
// prompt (prompts in the order Evaluate saw them, ids ids).
func (r *Reference) CompareKept(key string, o Outcome, ids []int) (Agreement, error) {
	var a Agreement
	for i, id := range ids {
		p, ok := r.prompt(id)
		if !ok {
			return a, fmt.Errorf("llama: results.json has no prompt %d", id)
		}
		ref, ok := p.FP32[key]
		if !ok || len(ref.Kept) != len(o.Kept[i]) {
			return a, fmt.Errorf("llama: results.json: prompt %d has no %s kept sets for %d layers", id, key, len(o.Kept[i]))
		}
		for l := range ref.Kept {
			for h := range ref.Kept[l] {
				moved := symmetricDifference(ref.Kept[l][h], o.Kept[i][l][h])
				gap := math.Inf(1)
				if ref.RelGap != nil {
					gap = ref.RelGap[l][h]
				}
				switch {
				case moved == 0:
					a.Same++
					continue
				case gap < NearTie:
					a.NearTie++
				default:
					a.Differ++
				}
				a.WidestGap = max(a.WidestGap, gap)
				a.Moved += moved
			}
		}
	}
	return a, nil
}

// symmetricDifference counts the elements of exactly one of two ascending sets.
func symmetricDifference(a, b []int32) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			i++
			j++
		case a[i] < b[j]:
			n++
			i++
		default:
			n++
			j++
		}
	}
	return n + len(a) - i + len(b) - j
}
