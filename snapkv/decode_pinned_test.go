package snapkv_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/snapkv"
)

// TestDecodeBudgetPinned runs every decode rule where the protected rows fill the
// budget, or nearly: Sinks from 0 past Budget and W around Budget − Sinks, Interval 1
// and more, in both layouts, against the float64 model of the schedule
// (runDecodeModel). There a compression keeps the first min(Sinks, Budget) rows and
// then the most recent ones, so a sink can sit among the rows that the window's
// queries cover, or the window's queries can be at positions no longer held: every
// Attend call must still succeed and keep the head within Budget + Interval − 1 rows.
// The first cases are the ones issue 41 found.
func TestDecodeBudgetPinned(t *testing.T) {
	type shape struct{ sinks, window, budget, interval, prompt, steps int }
	shapes := []shape{
		{30, 16, 40, 1, 80, 200},
		{4, 8, 10, 1, 60, 200},
		{1, 64, 32, 8, 70, 200},
		{10, 2, 5, 1, 60, 200},
	}
	const budget = 10
	for _, sinks := range []int{0, 1, 3, budget - 2, budget - 1, budget, budget + 3} {
		for _, interval := range []int{1, 3} {
			// A sink is among the last W rows at the next compression once
			// W > Budget + Interval − Sinks.
			for _, window := range []int{budget - sinks - 1, budget - sinks, budget - sinks + 1, budget - sinks + interval + 1, budget + interval + 2} {
				if window >= 1 {
					shapes = append(shapes, shape{sinks, window, budget, interval, 40, 40})
				}
			}
		}
	}
	const hq, hk, d = 4, 2, 32
	for i, sh := range shapes {
		sel := snapkv.Config{Budget: sh.budget, Window: sh.window, Kernel: 3, Sinks: sh.sinks, Rule: snapkv.RuleProtected}
		if i%2 == 1 { // half the prompts keep more than the decode budget, unpinned
			sel.Budget = 3 * sh.budget
		}
		sels := []snapkv.Config{sel}
		if sh.sinks == 0 {
			paper := sel
			paper.Rule, paper.Pool, paper.Group = snapkv.RulePaper, snapkv.PoolMax, snapkv.GroupMax
			sels = append(sels, paper)
		}
		for _, sel := range sels {
			for _, rule := range []snapkv.DecodeRule{snapkv.DecodeSnapKV, snapkv.DecodeRecent, snapkv.DecodeH2O, snapkv.DecodeLongRange} {
				if sel.Rule == snapkv.RulePaper && rule != snapkv.DecodeSnapKV {
					continue // the other rules take Sinks and Window only
				}
				tc := decodeCase{
					name:   fmt.Sprintf("S%d/W%d/B%d/I%d/rule%d/prompt-rule%d", sh.sinks, sh.window, sh.budget, sh.interval, rule, sel.Rule),
					sel:    sel,
					dec:    snapkv.DecodeBudget{Budget: sh.budget, Interval: sh.interval, Rule: rule},
					prompt: sh.prompt,
					qRows:  sh.prompt,
				}
				if i%3 == 2 { // the Last chunk's queries only for the window
					tc.qRows = min(sh.window, sh.prompt)
				}
				for _, layout := range []snapkv.Layout{snapkv.HeadMajor, snapkv.TokenMajor} {
					t.Run(fmt.Sprintf("%s/layout%d", tc.name, layout), func(t *testing.T) {
						s := newStream[fp16.Float16](rand.New(rand.NewPCG(uint64(i), 41)), hq, hk, sh.prompt+sh.steps, d)
						runDecodeModel(t, s, tc, layout)
					})
				}
			}
		}
	}
}

// TestDecodeBudgetPinnedMissingAttend: where the pinned rule keeps the rows, a token
// appended without its Attend call is still an error, found by matching the window's
// queries to the rows by position: the token's row has no query.
func TestDecodeBudgetPinnedMissingAttend(t *testing.T) {
	const prompt = 30
	sel := snapkv.Config{Budget: 10, Window: 8, Kernel: 3, Sinks: 4, Rule: snapkv.RuleProtected}
	s := newStream[fp16.Float16](rand.New(rand.NewPCG(5, 41)), 2, 1, prompt+3, 32)
	c, err := snapkv.NewCache(snapkv.CacheConfig{Select: sel, QHeads: 2, KVHeads: 1, Dim: 32, Decode: snapkv.DecodeBudget{Budget: 10, Interval: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Prefill(s.prompt(prompt, prompt, snapkv.HeadMajor)); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, 2*32)
	for tok := prompt; tok < prompt+3; tok++ {
		if err := c.Append(s.token(s.k, tok), s.token(s.v, tok)); err != nil {
			t.Fatal(err)
		}
		if tok == prompt+1 {
			continue // no Attend for this token
		}
		err := c.Attend(out, s.query(tok))
		switch {
		case tok == prompt && err != nil:
			t.Fatal(err)
		case tok == prompt+2 && (err == nil || !strings.Contains(err.Error(), "KV head 0's row 10 at position 31 has no window query (the window's 8 are at positions 24 to 32)")):
			t.Errorf("a token without its Attend: error %v", err)
		}
	}
}
