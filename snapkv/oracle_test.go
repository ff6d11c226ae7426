package snapkv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/internal/varianttest"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/x448/float16"
)

// The PyTorch reference vectors of testdata/snapkv-oracle (see its README): section
// "seed" is RuleProtected, "original" is RulePaper.

type tensor[T any] struct {
	Shape []int `json:"shape"`
	Data  []T   `json:"data"`
}

type boundary struct {
	TieFree    bool    `json:"tie_free"`
	Tied       []int32 `json:"tied_positions"`
	TiedNeeded int     `json:"tied_needed"`
	RelGap     float64 `json:"rel_gap"`
}

type oracleSelection struct {
	Pooled       tensor[float32] `json:"pooled"`        // seed
	PooledPrefix tensor[float32] `json:"pooled_prefix"` // original
	Indices      tensor[int32]   `json:"indices"`
	Sorted       tensor[int32]   `json:"indices_sorted"`
	Evicted      *bool           `json:"evicted"`
	Boundary     [][]boundary    `json:"boundary"`
}

type oracleCase struct {
	Name   string `json:"name"`
	Params struct {
		Batch, Heads, Window, Sinks, Budget, Kernel int
		Len                                         int `json:"prompt_len"`
		Dim                                         int `json:"head_dim"`
	} `json:"params"`
	Inputs struct {
		Q tensor[float32] `json:"q_window"`
		K tensor[float32] `json:"k"`
	} `json:"inputs"`
	Attn     tensor[float32]            `json:"attn_window"`
	Seed     map[string]oracleSelection `json:"seed"`
	Original map[string]oracleSelection `json:"original"`
}

func loadOracle(t *testing.T) []*oracleCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "snapkv-oracle", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no oracle vectors: %v", err)
	}
	var cases []*oracleCase
	for _, f := range files {
		if filepath.Base(f) == "manifest.json" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := new(oracleCase)
		if err := json.Unmarshal(b, c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		cases = append(cases, c)
	}
	return cases
}

// batchSlice returns the part of a [B][rest...] tensor that belongs to batch entry b.
func batchSlice[T any](x tensor[T], b int) []T {
	n := len(x.Data) / x.Shape[0]
	return x.Data[b*n : (b+1)*n]
}

// config is the case's Config under rule and pooling.
func (c *oracleCase) config(rule Rule, pool string) Config {
	cfg := Config{Budget: c.Params.Budget, Window: c.Params.Window, Kernel: c.Params.Kernel, Rule: rule, Workers: 1}
	if rule == RuleProtected {
		cfg.Sinks = c.Params.Sinks
	}
	if pool == "max" {
		cfg.Pool = PoolMax
	}
	return cfg
}

// checkOracleSet compares the kept rows of one head with the oracle's: exactly, or,
// where the oracle's boundary lists tied positions, as a set that keeps every position
// the oracle kept outside the tie and the right number from inside it.
func checkOracleSet(t *testing.T, what string, got, want []int32, bd boundary) {
	t.Helper()
	if bd.TieFree {
		if !slices.Equal(got, want) {
			t.Errorf("%s: kept %v, want %v", what, got, want)
		}
		return
	}
	if len(got) != len(want) {
		t.Fatalf("%s: kept %d rows, want %d", what, len(got), len(want))
	}
	inTie := 0
	for _, p := range got {
		if slices.Contains(bd.Tied, p) {
			inTie++
		} else if !slices.Contains(want, p) {
			t.Errorf("%s: kept %d, which the oracle neither kept nor lists as tied", what, p)
		}
	}
	if inTie != bd.TiedNeeded {
		t.Errorf("%s: kept %d tied positions, want %d (tied %v)", what, inTie, bd.TiedNeeded, bd.Tied)
	}
}

// oracleWant is the oracle's kept rows of one head under rule: the seed indices, or the
// prefix picks followed by the window.
func oracleWant(c *oracleCase, rule Rule, sel oracleSelection, b, h int) []int32 {
	L, W := c.Params.Len, c.Params.Window
	if rule == RuleProtected {
		n := sel.Indices.Shape[2]
		return batchSlice(sel.Indices, b)[h*n : (h+1)*n]
	}
	if sel.Evicted != nil && !*sel.Evicted {
		all := make([]int32, L)
		for i := range all {
			all[i] = int32(i)
		}
		return all
	}
	n := sel.Sorted.Shape[2]
	want := slices.Clone(batchSlice(sel.Sorted, b)[h*n : (h+1)*n])
	for i := L - W; i < L; i++ {
		want = append(want, int32(i))
	}
	return want
}

// TestOracleAttn feeds the oracle's attention probabilities (Input.Attn) and compares
// the pooled votes and the kept rows of both rules and both poolings, on every variant.
func TestOracleAttn(t *testing.T) {
	for _, c := range loadOracle(t) {
		varianttest.Each(t, func(variant string) {
			for _, rule := range []Rule{RuleProtected, RulePaper} {
				section := c.Seed
				if rule == RulePaper {
					section = c.Original
				}
				for _, pool := range []string{"avg", "max"} {
					sel := section[pool]
					s, err := NewSelector(c.config(rule, pool))
					if err != nil {
						t.Fatal(err)
					}
					for b := range c.Params.Batch {
						in := Input{Attn: batchSlice(c.Attn, b), QHeads: c.Params.Heads, KVHeads: c.Params.Heads, Len: c.Params.Len}
						got, err := s.Select(nil, in)
						if err != nil {
							t.Fatalf("%s: %v", c.Name, err)
						}
						checkOraclePooled(t, c, s, rule, sel, b)
						for h := range c.Params.Heads {
							what := c.Name + "/" + variant + "/" + ruleName(rule) + "/" + pool
							bd := boundary{TieFree: true}
							if sel.Boundary != nil {
								bd = sel.Boundary[b][h]
							}
							checkOracleSet(t, what, got[h], oracleWant(c, rule, sel, b, h), bd)
						}
					}
				}
			}
		})
	}
}

// checkOraclePooled compares the pooled votes of the last call with the oracle's, to
// the README's 2e-7 (absolute, on votes of order 1).
func checkOraclePooled(t *testing.T, c *oracleCase, s *Selector, rule Rule, sel oracleSelection, b int) {
	t.Helper()
	// The Selector keeps no plan after the call (it must not keep its inputs): its
	// pooled votes are what the call scored, none in the pinned cases.
	sinks, window := 0, min(c.Params.Window, c.Params.Len)
	if rule == RuleProtected {
		sinks = c.Params.Sinks
	}
	if c.Params.Len <= c.Params.Budget || sinks+window >= c.Params.Budget {
		if len(s.pooled) != 0 {
			t.Fatalf("%s: %d pooled votes in a pinned case, want none scored", c.Name, len(s.pooled))
		}
		return
	}
	pooled := s.pooled
	want := sel.Pooled
	if rule == RulePaper {
		want = sel.PooledPrefix
	}
	w := batchSlice(want, b)
	if len(w) != len(pooled) {
		t.Fatalf("%s: %d pooled votes, oracle has %d", c.Name, len(pooled), len(w))
	}
	for i := range w {
		if d := pooled[i] - w[i]; d > 2e-6 || d < -2e-6 {
			t.Fatalf("%s %s: pooled[%d] = %v, oracle %v", c.Name, ruleName(rule), i, pooled[i], w[i])
		}
	}
}

func ruleName(r Rule) string {
	if r == RulePaper {
		return "paper"
	}
	return "protected"
}

// TestOracleQueries runs the queries source on the oracle's window queries and its keys
// rounded to fp16 (the oracle's keys are float32). Rounding moves the scores by about
// 2⁻¹¹ relative, so a head whose cut is closer than queryGap may legitimately keep other
// rows and is skipped; the rest must keep exactly the oracle's rows. TestFloat64 holds
// every cut to a float64 recomputation on the rounded keys.
// queryGap is the relative gap at the cut below which fp16 keys may flip a row.
const queryGap = 1e-3

func TestOracleQueries(t *testing.T) {
	compared := 0
	for _, c := range loadOracle(t) {
		k := make([]fp16.Float16, len(c.Inputs.K.Data))
		for i, v := range c.Inputs.K.Data {
			k[i] = float16.Fromfloat32(v)
		}
		for _, rule := range []Rule{RuleProtected, RulePaper} {
			sel := c.Seed["avg"]
			if rule == RulePaper {
				sel = c.Original["avg"]
			}
			for b := range c.Params.Batch {
				kb := k[b*len(k)/c.Params.Batch : (b+1)*len(k)/c.Params.Batch]
				in := Input{Q: batchSlice(c.Inputs.Q, b), K: kb, QHeads: c.Params.Heads, KVHeads: c.Params.Heads, Len: c.Params.Len, Dim: c.Params.Dim}
				got, err := Select(c.config(rule, "avg"), in)
				if err != nil {
					t.Fatalf("%s: %v", c.Name, err)
				}
				for h := range c.Params.Heads {
					if sel.Boundary != nil && sel.Boundary[b][h].RelGap < queryGap {
						continue
					}
					compared++
					if want := oracleWant(c, rule, sel, b, h); !slices.Equal(got[h], want) {
						t.Errorf("%s %s head %d: kept %v, want %v", c.Name, ruleName(rule), h, got[h], want)
					}
				}
			}
		}
	}
	if compared == 0 {
		t.Fatal("no head's cut was decisive enough to compare")
	}
	t.Logf("%d heads compared", compared)
}
