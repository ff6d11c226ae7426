package llama

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/longtest"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// TestSharedVotesAsBefore holds snapkv.LayersOf's shared votes to the bench code they
// replaced (schedule.go's measured.shared and passkey.go's caches before the move, kept
// here as benchShared): on the public prompts, in every cache format, every shared-votes
// method keeps exactly the rows the bench computed, in every layer and KV head, and
// decodes the same bytes. The bench code averaged the window attention of every layer;
// the layer-1 method is the same code over layer 1 alone.
func TestSharedVotesAsBefore(t *testing.T) {
	m := testModel(t)
	t.Run("fp16", func(t *testing.T) { sharedAsBefore(t, mustEngine[fp16.Float16](m)) })
	t.Run("bf16", func(t *testing.T) { sharedAsBefore(t, mustEngine[bf16.BFloat16](m)) })
	t.Run("q8_0", func(t *testing.T) { sharedAsBefore(t, mustEngine[q8.Block](m)) })
}

func sharedAsBefore[E snapkv.Element](t *testing.T, e *engine[E]) {
	ps, _ := testPrompts(t)
	if longtest.Short() {
		ps = ps[:1]
	}
	var methods []Method
	for _, me := range Methods() {
		if me.SharedVotes {
			methods = append(methods, me)
		}
	}
	if len(methods) == 0 {
		t.Fatal("no shared-votes methods")
	}
	correct := make([]int, len(methods))
	for _, pr := range ps {
		p, err := e.prefill([]byte(pr.Text))
		if err != nil {
			t.Fatal(err)
		}
		meas := newMeasured(e, p)
		for i, me := range methods {
			caches, _, err := e.caches(p, me, meas)
			if err != nil {
				t.Fatal(err)
			}
			before, err := benchShared(e, p, me, meas)
			if err != nil {
				t.Fatal(err)
			}
			for l := range caches {
				for h := range e.KVHeads {
					_, _, got := caches[l].Head(h)
					_, _, want := before[l].Head(h)
					if !slices.Equal(got, want) {
						t.Fatalf("prompt %d, %s C=%d, layer %d head %d: kept %v, the bench code kept %v", pr.ID, me.Name, me.Budget, l, h, got, want)
					}
				}
			}
			pred, err := e.generate(caches, p.Logits, len(pr.Answer))
			if err != nil {
				t.Fatal(err)
			}
			predBefore, err := e.generate(before, p.Logits, len(pr.Answer))
			if err != nil {
				t.Fatal(err)
			}
			if string(pred) != string(predBefore) {
				t.Fatalf("prompt %d, %s C=%d: decoded %q, the bench code's caches %q", pr.ID, me.Name, me.Budget, pred, predBefore)
			}
			if string(pred) == pr.Answer {
				correct[i]++
			}
		}
	}
	for i, me := range methods {
		t.Logf("%s C=%d: %d/%d on both paths", me.Name, me.Budget, correct[i], len(ps))
	}
}

// benchShared is the bench's shared votes as they were before snapkv had them: the
// window attention of the vote layers (all layers for nil) summed with kernels.Add in
// layer order and divided by their count, given to each layer's own snapkv.CacheOf as
// engine attention.
func benchShared[E snapkv.Element](e *engine[E], p *PrefillOf[E], me Method, meas *measured[E]) ([]KVOf[E], error) {
	votes := me.VoteLayers
	if votes == nil {
		for l := range e.Layers {
			votes = append(votes, l)
		}
	}
	attn := meas.attention(me.Window)
	shared := make([]float32, len(attn[0]))
	for _, l := range votes {
		kernels.Add(shared, attn[l])
	}
	for i := range shared {
		shared[i] /= float32(len(votes))
	}
	caches := make([]KVOf[E], e.Layers)
	for l := range caches {
		c, err := snapkv.NewCacheOf[E](snapkv.CacheConfig{Select: snapkv.Config{Budget: me.Budget, Window: me.Window, Kernel: ProtocolKernel,
			Pool: me.Pool, Sinks: me.Sinks, Rule: me.Rule, Group: snapkv.GroupMean, Workers: 1},
			QHeads: e.QHeads, KVHeads: e.KVHeads, Dim: e.HeadDim, Reserve: cacheReserve})
		if err != nil {
			return nil, err
		}
		if err := c.Prefill(snapkv.ChunkOf[E]{K: p.K[l], V: p.V[l], Attn: shared, Last: true}); err != nil {
			return nil, err
		}
		caches[l] = c
	}
	return caches, nil
}

// TestVoteLayerChoice is docs/passkey.md's study of which layers should vote: shared
// votes from every layer, from each layer alone, and each layer's own votes
// (snapkv-protected), at every budget on the public prompts. It checks what the doc
// concludes from it: at C = 32, layer VoteLayer's votes alone decode the most keys of
// all these, and at least half of them.
func TestVoteLayerChoice(t *testing.T) {
	if testing.Short() {
		t.Skip("32 prompts: not in -short")
	}
	m := testModel(t)
	ps, _ := testPrompts(t)
	votes := [][]int{nil}
	for l := range m.Layers {
		votes = append(votes, []int{l})
	}
	var methods []Method
	for _, c := range []int{32, 64, 128} {
		base := Method{Kind: SnapKV, Window: 16, Budget: c, Sinks: ProtocolSinks, Rule: snapkv.RuleProtected, Pool: snapkv.PoolAvg}
		own := base
		own.Name = "own votes"
		methods = append(methods, own)
		for _, v := range votes {
			me := base
			me.Name, me.SharedVotes, me.VoteLayers = fmt.Sprintf("shared votes of layers %v", v), true, v
			if v == nil {
				me.Name = "shared votes of every layer"
			}
			methods = append(methods, me)
		}
	}
	out, err := m.Evaluate(ps, methods)
	if err != nil {
		t.Fatal(err)
	}
	best := map[int]Outcome{}
	for _, o := range out {
		t.Logf("C=%3d %-28s %2d/%d, key digits kept %.3f (per layer %.2f)", o.Budget, o.Method.Name, o.Correct, o.Total, o.KeyDigitsKept, o.PerLayer)
		if b, ok := best[o.Budget]; !ok || o.Correct > b.Correct {
			best[o.Budget] = o
		}
	}
	for _, o := range out {
		if o.Budget == 32 && slices.Equal(o.Method.VoteLayers, []int{VoteLayer}) {
			if o.Correct < best[32].Correct || 2*o.Correct < o.Total {
				t.Errorf("C=32: layer %d's votes decode %d/%d, %s %d", VoteLayer, o.Correct, o.Total, best[32].Method.Name, best[32].Correct)
			}
			logChoices(t, ps, o)
		}
	}
}

// logChoices logs where the rows that o chose (neither sinks nor window) lie in each
// prompt, layer 0's KV head 0 (shared votes choose the same rows in every layer with
// one budget): digits of the key's first and second copy, rows up to 4 before the
// second copy, rows within 4 of the window, elsewhere.
func logChoices(t *testing.T, ps []Prompt, o Outcome) {
	var first, second, before, nearWindow, elsewhere int
	for i, pr := range ps {
		n := len(pr.Text)
		s1, s2 := pr.KeySpans[0], pr.KeySpans[len(pr.KeySpans)-1]
		for _, p := range o.Kept[i][0][0] {
			switch q := int(p); {
			case q < o.Method.Sinks || q >= n-o.Method.Window:
			case q >= s1[0] && q < s1[1]:
				first++
			case q >= s2[0] && q < s2[1]:
				second++
			case q >= s2[0]-4 && q < s2[0]:
				before++
			case q >= n-o.Method.Window-4:
				nearWindow++
			default:
				elsewhere++
			}
		}
		if o.Preds[i] != pr.Answer {
			t.Logf("prompt %d: decoded %q, key %s at %v: chose %v", pr.ID, o.Preds[i], pr.Answer, pr.KeySpans, o.Kept[i][0][0][o.Method.Sinks:len(o.Kept[i][0][0])-o.Method.Window])
		}
	}
	t.Logf("C=%d, %s: of the %d chosen rows per prompt, on average %.2f are digits of the key's first copy, %.2f of its second, %.2f the 4 rows before the second, %.2f within 4 rows of the window, %.2f elsewhere",
		o.Budget, o.Method.Name, o.Budget-o.Method.Sinks-o.Method.Window, avg(first, len(ps)), avg(second, len(ps)), avg(before, len(ps)), avg(nearWindow, len(ps)), avg(elsewhere, len(ps)))
}

func avg(n, count int) float64 { return float64(n) / float64(count) }
