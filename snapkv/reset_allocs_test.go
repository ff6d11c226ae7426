package snapkv_test

import (
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/snapkv"
)

// TestCacheResetAllocs: a prefill and decode after Reset allocates no more than the
// first prefill and decode of a new cache did (construction left out), in every mode
// and with a decode budget: Reset keeps each KV head's storage, the decode budget's
// buffers and the workspaces, so what a sequence allocates again is what a prompt's
// end lets go (the working area, and a compressing cache's selectors), which holds a
// compressed cache to its budget between prompts.
func TestCacheResetAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop the kernels' workspaces at random")
	}
	const hq, hk, n, d = 4, 2, 120, 64
	r := rand.New(rand.NewPCG(8, 8))
	p := newPrefillPrompt[fp16.Float16](r, hq, hk, n, d)
	steps := denseSteps[fp16.Float16](r, 12, hq, hk, d)
	sel := snapkv.Config{Budget: 40, Window: 8, Kernel: 3, Rule: snapkv.RuleProtected, Sinks: 2, Workers: 1}
	configs := map[string]snapkv.CacheConfig{
		"faithful": {Select: sel},
		"bounded":  {Select: sel, Mode: snapkv.ModeBounded},
		"dense":    {Mode: snapkv.ModeDense, Select: snapkv.Config{Workers: 1}},
		"decode-snapkv": {Select: sel, Reserve: 8,
			Decode: snapkv.DecodeBudget{Budget: 36, Interval: 2}},
		"decode-h2o": {Select: sel, Reserve: 8,
			Decode: snapkv.DecodeBudget{Budget: 36, Interval: 2, Rule: snapkv.DecodeH2O}},
	}
	for name, cfg := range configs {
		cfg.QHeads, cfg.KVHeads, cfg.Dim = hq, hk, d
		if cfg.Reserve == 0 {
			cfg.Reserve = len(steps)
		}
		chunks := []snapkv.Chunk{p.chunk(0, 50, snapkv.HeadMajor, false), p.chunk(50, n, snapkv.HeadMajor, true)}
		outs := [][]float32{make([]float32, hq*50*d), make([]float32, hq*(n-50)*d)}
		out := make([]float32, hq*d)
		sequence := func(c *snapkv.Cache) {
			for i, ch := range chunks {
				if err := c.PrefillAttend(outs[i], ch); err != nil {
					t.Fatal(err)
				}
			}
			for _, s := range steps {
				if err := c.Append(s.k, s.v); err != nil {
					t.Fatal(err)
				}
				if err := c.Attend(out, s.q); err != nil {
					t.Fatal(err)
				}
			}
		}
		build := func() *snapkv.Cache {
			c, err := snapkv.NewCache(cfg)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		made := testing.AllocsPerRun(5, func() { build() })
		first := testing.AllocsPerRun(5, func() { sequence(build()) }) - made
		c := build()
		sequence(c)
		again := testing.AllocsPerRun(5, func() {
			c.Reset()
			sequence(c)
		})
		t.Logf("%s: a new cache's first sequence allocates %v times, one after Reset %v", name, first, again)
		if again > first {
			t.Errorf("%s: a sequence after Reset allocates %v times, the first sequence of a new cache %v", name, again, first)
		}
	}
}
