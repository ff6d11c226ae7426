package llama

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/x448/float16"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/longtest"
	"github.com/kvsimd/kvsimd/q8"
)

func testKVTypes(t testing.TB) *KVTypes {
	t.Helper()
	r, err := LoadKVTypes(filepath.Join(modelDir, "results-kvtypes.json"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPasskeyKVTypes runs every configuration of results-kvtypes.json on all 32 prompts
// with the cache in each format and requires PyTorch's exact-match count in every cell:
// the same rounding of K and V as they are written (q8_0 by ggml's rule), the same
// selection on the stored keys, the same answers. The float32 cache's counts are
// results.json's own (PyTorch's fp32 cache), and so are its kept sets, but at near ties. It also holds each row's cache bytes to
// the format's: a K and a V row of Format.RowBytes plus an int32 position per kept
// row, over the three layers.
func TestPasskeyKVTypes(t *testing.T) {
	if longtest.Short() {
		t.Skip("32 prompts in four formats: with KVSIMD_LONG=1 (CI) only, not in -short")
	}
	m := testModel(t)
	ps, ref := testPrompts(t)
	kv := testKVTypes(t)
	var ok bool
	if kv.Prompts != len(ps) {
		t.Fatalf("results-kvtypes.json counts over %d prompts, prompts.json has %d", kv.Prompts, len(ps))
	}
	methods := referenceMethods(ref)
	ids := make([]int, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	kv.Counts[F32.String()] = map[string]int{}
	for _, me := range methods {
		key := PyTorchKey(Row{Method: me.Name, Window: me.Window, Budget: me.Budget})
		if kv.Counts[F32.String()][key], ok = ref.Correct(F32, key, ids); !ok {
			t.Fatalf("results.json lacks %s's fp32 run", key)
		}
	}
	for _, f := range Formats() {
		if n := len(kv.Counts[f.String()]); n != len(methods) {
			t.Fatalf("%v: results-kvtypes.json has %d configurations, Methods has %d of them", f, n, len(methods))
		}
		out, err := m.EvaluateKV(f, ps, methods)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out {
			want, ok := kv.Correct(f, o.Row)
			if !ok {
				t.Fatalf("%v %s: not in results-kvtypes.json", f, PyTorchKey(o.Row))
			}
			if o.Correct != want {
				t.Errorf("%v %s: %d/%d correct, PyTorch %d", f, PyTorchKey(o.Row), o.Correct, o.Total, want)
			}
			rows := float64(o.Budget)
			if o.Method.Kind == Full {
				rows = 0
				for _, p := range ps {
					rows += float64(len(p.Text)) / float64(len(ps))
				}
			}
			if bytes := rows * float64(m.Layers*(2*f.RowBytes(m.HeadDim)+4)); o.CacheBytes != bytes {
				t.Errorf("%v %s: %.0f cache bytes, want %.0f", f, PyTorchKey(o.Row), o.CacheBytes, bytes)
			}
			if f == F32 && o.Method.Kind != Full { // PyTorch's own cache: its kept sets too
				a, err := ref.CompareKept(PyTorchKey(o.Row), o, ids)
				if err != nil {
					t.Fatal(err)
				}
				if a.Differ != 0 {
					t.Errorf("f32 %s: %d kept sets differ from PyTorch's fp32 run away from a near tie", PyTorchKey(o.Row), a.Differ)
				}
			}
			t.Logf("%-4v %-22s %2d/%d (PyTorch %2d); key digits kept %.3f; cache %.1f KiB", f, PyTorchKey(o.Row), o.Correct, o.Total, want, o.KeyDigitsKept, o.CacheBytes/1024)
		}
	}
}

// TestStoredRows checks what each format's cache holds against rounding written here
// from the formats' definitions: layer 0's K (after RoPE) and V of every position depend
// on its byte and position alone, so the float32 forward's rows, rounded, must be the
// format's stored rows bit for bit, at [KVHeads][Len][row]. q8_0 is rounded by ggml's
// quantize_row_q8_0_ref as its C reads, along each head's row in blocks of 32; fp16 by
// x448/float16; bf16 by round to nearest even on the bits.
func TestStoredRows(t *testing.T) {
	m := testModel(t)
	ps, _ := testPrompts(t)
	prompt := []byte(ps[0].Text[:96])
	ref, err := mustEngine[float32](m).prefill(prompt)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("fp16", func(t *testing.T) {
		checkStoredRows(t, mustEngine[fp16.Float16](m), prompt, ref, func(dst []fp16.Float16, src []float32) {
			for i, x := range src {
				dst[i] = fp16.Float16(float16.Fromfloat32(x))
			}
		})
	})
	t.Run("bf16", func(t *testing.T) {
		checkStoredRows(t, mustEngine[bf16.BFloat16](m), prompt, ref, func(dst []bf16.BFloat16, src []float32) {
			for i, x := range src {
				u := math.Float32bits(x)
				dst[i] = bf16.BFloat16((u + 0x7fff + (u>>16)&1) >> 16) // no NaN here
			}
		})
	})
	t.Run("q8_0", func(t *testing.T) {
		checkStoredRows(t, mustEngine[q8.Block](m), prompt, ref, quantizeRowQ8Ref)
	})
}

func checkStoredRows[E elem](t *testing.T, e *engine[E], prompt []byte, ref *PrefillOf[float32], round func(dst []E, src []float32)) {
	p, err := e.prefill(prompt)
	if err != nil {
		t.Fatal(err)
	}
	d := e.HeadDim
	want := make([]E, e.row)
	for _, x := range []struct {
		name      string
		got, from []E
		f32       []float32
	}{{"K", p.K[0], nil, ref.K[0]}, {"V", p.V[0], nil, ref.V[0]}} {
		for h := range e.KVHeads {
			for pos := range p.Len {
				round(want, x.f32[(h*p.Len+pos)*d:][:d])
				got := x.got[(h*p.Len+pos)*e.row:][:e.row]
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("layer 0 %s, head %d, position %d, element %d: stored %v, the float32 row rounded %v", x.name, h, pos, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// quantizeRowQ8Ref is ggml's quantize_row_q8_0_ref as its C reads, for finite input:
//
//	amax = MAX(amax, fabsf(x[j])); d = amax/((1 << 7) - 1); id = d ? 1.0f/d : 0.0f;
//	y[i].d = GGML_FP32_TO_FP16(d); y[i].qs[j] = roundf(x[j]*id);
func quantizeRowQ8Ref(dst []q8.Block, src []float32) {
	for i := range dst {
		x := src[i*32 : (i+1)*32]
		var amax float32
		for _, v := range x {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		dst[i].D = fp16.Float16(float16.Fromfloat32(d))
		for j, v := range x {
			dst[i].Q[j] = int8(math.Round(float64(v * id))) // roundf: half away from zero
		}
	}
}

// TestLogitsByFormat measures each format's full-cache forward against the model's
// float32 forward (the F32 cache) on reference.json's prompts. The float32 forward must
// be within 1e-3 of PyTorch's float32 logits (the model README's bound for a float32
// reimplementation), and every format's greedy 8 bytes must be PyTorch's.
func TestLogitsByFormat(t *testing.T) {
	m := testModel(t)
	b, err := os.ReadFile(filepath.Join(modelDir, "reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	prompts := make([]Prompt, len(ref.Prompts))
	want := make([][]float32, len(ref.Prompts))
	for i, r := range ref.Prompts {
		prompts[i] = Prompt{ID: i, Text: r.Prompt}
		want[i] = r.LastLogits
	}
	f32, err := m.LastLogits(F32, prompts)
	if err != nil {
		t.Fatal(err)
	}
	if d := MaxAbsDiff(f32, want); !(d <= 1e-3) {
		t.Errorf("float32 forward: last logits differ from PyTorch's by up to %.3g, want ≤ 1e-3", d)
	} else {
		t.Logf("float32 forward: max |Δlogit| %.3g against PyTorch's float32", d)
	}
	for _, f := range Formats() {
		got, err := m.LastLogits(f, prompts)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v cache: max |Δlogit| %.3g against the float32 forward", f, MaxAbsDiff(got, f32))
		for i, p := range ref.Prompts {
			var pred []byte
			switch f {
			case FP16:
				pred = greedyFull(t, mustEngine[fp16.Float16](m), p.Prompt, len(p.GreedyInts))
			case BF16:
				pred = greedyFull(t, mustEngine[bf16.BFloat16](m), p.Prompt, len(p.GreedyInts))
			case Q8_0:
				pred = greedyFull(t, mustEngine[q8.Block](m), p.Prompt, len(p.GreedyInts))
			case F32:
				pred = greedyFull(t, mustEngine[float32](m), p.Prompt, len(p.GreedyInts))
			}
			for j, c := range p.GreedyInts {
				if pred[j] != byte(c) {
					t.Errorf("%v cache, prompt %d: greedy %q, PyTorch (float32) %v", f, i, pred, p.GreedyInts)
					break
				}
			}
		}
	}
}

// greedyFull decodes n bytes after prompt with the full cache.
func greedyFull[E elem](t *testing.T, e *engine[E], prompt string, n int) []byte {
	t.Helper()
	p, err := e.prefill([]byte(prompt))
	if err != nil {
		t.Fatal(err)
	}
	caches := make([]KVOf[E], e.Layers)
	for l := range caches {
		caches[l] = p.Keep(l, nil)
	}
	out, err := e.generate(caches, p.Logits, n)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
