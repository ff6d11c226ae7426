package llama

import (
	"math"
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/longtest"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// TestPrefillThroughSnapKV: the prompt prefilled through snapkv's PrefillAttend (an
// engine's path with compressed caches, prefillSnap) is the full cache's prefill bit
// for bit, every layer's rows and queries, hidden states and logits, and its caches
// keep what the evaluation builds from that prefill (caches: Prefill of its rows),
// rows and positions, for a method of each kind: both rules, max pooling, AdaKV, the
// per-layer schedules and shared votes (the short form: an 80-byte prompt, the
// protected rule and shared votes). Every format.
func TestPrefillThroughSnapKV(t *testing.T) {
	m := testModel(t)
	t.Run("fp16", func(t *testing.T) { prefillThroughSnapKV(t, mustEngine[fp16.Float16](m)) })
	t.Run("bf16", func(t *testing.T) { prefillThroughSnapKV(t, mustEngine[bf16.BFloat16](m)) })
	t.Run("q8_0", func(t *testing.T) { prefillThroughSnapKV(t, mustEngine[q8.Block](m)) })
}

func prefillThroughSnapKV[E snapkv.Element](t *testing.T, e *engine[E]) {
	ps, _ := testPrompts(t)
	text := []byte(ps[endToEndPrompt].Text)
	kinds := map[string]bool{"snapkv-protected": true, "snapkv-shared-votes-layer1": true}
	if longtest.Short() {
		text = text[:80] // more rows than the first budgets, 32
	}
	p, err := e.prefill(text)
	if err != nil {
		t.Fatal(err)
	}
	meas := newMeasured(e, p)
	seen := map[string]bool{}
	for _, me := range Methods() {
		if me.Kind != SnapKV || seen[me.Name] || longtest.Short() && !kinds[me.Name] {
			continue
		}
		seen[me.Name] = true
		want, _, err := e.caches(p, me, meas)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := e.snapConfig(p, me, meas)
		if err != nil {
			t.Fatal(err)
		}
		s, err := snapkv.NewLayersOf[E](cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := prefillSnap(e, text, s)
		if err != nil {
			t.Fatal(err)
		}
		if !sameFloats(got.Logits, p.Logits) {
			t.Fatalf("%s C=%d: the logits differ from the full cache's prefill", me.Name, me.Budget)
		}
		for l := range e.Layers {
			if !sameFloats(got.Hidden[l+1], p.Hidden[l+1]) || !sameFloats(got.Q[l], p.Q[l]) ||
				!slices.Equal(got.K[l], p.K[l]) || !slices.Equal(got.V[l], p.V[l]) {
				t.Fatalf("%s C=%d, layer %d: the hidden state, queries or rows differ from the full cache's prefill", me.Name, me.Budget, l)
			}
			for h := range e.KVHeads {
				k, v, pos := s.Layer(l).Head(h)
				wk, wv, wpos := want[l].Head(h)
				if !slices.Equal(pos, wpos) || !slices.Equal(k, wk) || !slices.Equal(v, wv) {
					t.Fatalf("%s C=%d, layer %d, KV head %d: kept %v, the caches built from the prefill %v", me.Name, me.Budget, l, h, pos, wpos)
				}
			}
		}
	}
}

// TestPrefillAsDecode holds the full cache's prefill, one causal kernel call per layer
// and KV head, to feeding the prompt one token at a time through the decode step
// (forward, kernels.Attend over the rows so far): the float32 cache, whose prefill and
// decode both run the composition, bit for bit; the other formats' logits within
// 1e-3, the model README's bound for a float32 reimplementation (the two kernels round
// differently, about 3e-5 apart here), and layer 0's stored rows, which depend on the
// bytes alone, the same bits.
func TestPrefillAsDecode(t *testing.T) {
	m := testModel(t)
	ps, _ := testPrompts(t)
	n := len(ps[0].Text)
	if longtest.Short() {
		n = 48
	}
	prompt := []byte(ps[0].Text[:n])
	t.Run("f32", func(t *testing.T) { prefillAsDecode(t, mustEngine[float32](m), prompt, 0) })
	t.Run("fp16", func(t *testing.T) { prefillAsDecode(t, mustEngine[fp16.Float16](m), prompt, 1e-3) })
	t.Run("bf16", func(t *testing.T) { prefillAsDecode(t, mustEngine[bf16.BFloat16](m), prompt, 1e-3) })
	t.Run("q8_0", func(t *testing.T) { prefillAsDecode(t, mustEngine[q8.Block](m), prompt, 1e-3) })
}

func prefillAsDecode[E elem](t *testing.T, e *engine[E], prompt []byte, tol float64) {
	p, err := e.prefill(prompt)
	if err != nil {
		t.Fatal(err)
	}
	caches := make([]KVOf[E], e.Layers)
	for l := range caches {
		caches[l] = &RowsOf[E]{row: e.row, k: make([][]E, e.KVHeads), v: make([][]E, e.KVHeads), pos: make([][]int32, e.KVHeads)}
	}
	s := e.newState()
	var logits []float32
	for i, tok := range prompt {
		if logits, err = e.forward(s, caches, tok, i == len(prompt)-1); err != nil {
			t.Fatal(err)
		}
	}
	worst := 0.0
	for i := range logits {
		worst = max(worst, math.Abs(float64(logits[i])-float64(p.Logits[i])))
	}
	if tol == 0 && !sameFloats(logits, p.Logits) || !(worst <= tol) {
		t.Fatalf("%v: the prefill's logits differ from token-at-a-time decoding by up to %.3g, want ≤ %.3g", e.c.format, worst, tol)
	}
	t.Logf("%v: max |Δlogit| %.3g between the prefill and token-at-a-time decoding", e.c.format, worst)
	for h := range e.KVHeads {
		k, v, _ := caches[0].Head(h)
		if !slices.Equal(k, p.K[0][h*p.Len*e.row:(h+1)*p.Len*e.row]) || !slices.Equal(v, p.V[0][h*p.Len*e.row:(h+1)*p.Len*e.row]) {
			t.Fatalf("%v: layer 0's stored rows differ between the prefill and decoding", e.c.format)
		}
	}
}

// sameFloats reports whether a and b hold the same float32 bits.
func sameFloats(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}
