package llama

import (
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
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
	if testing.Short() {
		ps = ps[:2]
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
