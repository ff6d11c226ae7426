package llama

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// The streaming pass-key study: a cache that keeps a budget while it generates
// (snapkv.CacheConfig.Decode). For each method, the first StreamPrefill bytes of each
// prompt are prefilled through snapkv caches, one per layer, whose prompt budget is
// the decode budget (so nothing is evicted there): each layer's rows and the queries
// of every row go in one Last chunk, and PrefillAttend gives the layer's attention.
// The rest of the prompt is then fed one byte at a time through Append and Attend
// (teacher forcing) and the answer generated greedily, the decode budget's schedule
// running after every token's attention. It is the protocol of the model's
// results-stream.json.

// StreamPrefill is the prompt bytes prefilled at once before streaming.
const StreamPrefill = 64

// StreamMethod is one row of the streaming study.
type StreamMethod struct {
	Name     string // the JSON "method": full, sinks-recent, snapkv-protected, snapkv-paper, h2o or long-range
	Window   int    // W of the SnapKV rules and long-range's band, 0 otherwise
	Kernel   int    // the pooling kernel; 0 means ProtocolKernel
	Budget   int    // rows per layer and KV head after each compression; 0 for full
	Interval int    // tokens between compressions; 0 for full
	Sinks    int
	Rule     snapkv.Rule       // the SnapKV rule (and Sinks' rule: RulePaper takes none)
	Decode   snapkv.DecodeRule // how a head is compressed
}

// StreamMethods is the study's grid: the full cache, then for budgets 128 and 256 and
// intervals 1 and 32 StreamingLLM, SnapKV protected and paper (window 16) and H2O,
// with the README's protocol (4 sinks, kernel 5, average pooling, group mean), and
// this package's fourth rule, long-range (snapkv.DecodeLongRange, window 16, kernel 7,
// one score table shared by the layers).
func StreamMethods() []StreamMethod {
	ms := []StreamMethod{{Name: "full"}}
	for _, b := range []int{128, 256} {
		for _, i := range []int{1, 32} {
			ms = append(ms,
				StreamMethod{Name: "sinks-recent", Budget: b, Interval: i, Sinks: ProtocolSinks, Rule: snapkv.RuleProtected, Decode: snapkv.DecodeRecent},
				StreamMethod{Name: "snapkv-protected", Window: 16, Budget: b, Interval: i, Sinks: ProtocolSinks, Rule: snapkv.RuleProtected, Decode: snapkv.DecodeSnapKV},
				StreamMethod{Name: "snapkv-paper", Window: 16, Budget: b, Interval: i, Rule: snapkv.RulePaper, Decode: snapkv.DecodeSnapKV},
				StreamMethod{Name: "h2o", Budget: b, Interval: i, Sinks: ProtocolSinks, Rule: snapkv.RuleProtected, Decode: snapkv.DecodeH2O},
				StreamMethod{Name: "long-range", Window: 16, Kernel: LongRangeKernel, Budget: b, Interval: i, Sinks: ProtocolSinks,
					Rule: snapkv.RuleProtected, Decode: snapkv.DecodeLongRange})
		}
	}
	return ms
}

// LongRangeKernel is long-range's pooling kernel: a row's score spreads over the three
// rows either side, so that a key whose one digit was looked at from afar keeps its
// neighbours (kernel 5 keeps 14 of 32 public prompts at budget 128, interval 32; 7, 9
// and 11 keep 30 to 32; docs/passkey.md).
const LongRangeKernel = 7

// StreamRow is one method's summary, the JSON object of `go run ./bench -passkey FILE
// -stream`.
type StreamRow struct {
	Method   string `json:"method"`
	KV       string `json:"kv"` // the cache format
	Window   int    `json:"window"`
	Budget   int    `json:"budget"`
	Interval int    `json:"interval"`
	Correct  int    `json:"correct"`
	Total    int    `json:"total"`
	// PeakRows is the most rows one layer's KV head held between tokens, over every
	// prompt (snapkv.Stats' PeakDecodeRows): at most Budget + Interval − 1.
	PeakRows int `json:"peak_rows"`
	// Compressions is the mean over prompts and layers of the tokens after which the
	// layer's cache compressed (snapkv.Stats' Compressions).
	Compressions float64 `json:"compressions"`
}

// StreamOutcome is one method's result on every prompt.
type StreamOutcome struct {
	StreamRow
	Method StreamMethod
	Preds  []string // the generated answer per prompt
}

// EvaluateStream runs every method of the streaming study on every prompt with the
// cache in format f (fp16, bf16, q8_0 or f32).
func (m *Model) EvaluateStream(f Format, prompts []Prompt, methods []StreamMethod) ([]StreamOutcome, error) {
	switch f {
	case FP16:
		return evaluateStream(mustEngine[fp16.Float16](m), prompts, methods)
	case BF16:
		return evaluateStream(mustEngine[bf16.BFloat16](m), prompts, methods)
	case Q8_0:
		e, err := newEngine[q8.Block](m)
		if err != nil {
			return nil, err
		}
		return evaluateStream(e, prompts, methods)
	case F32:
		return evaluateStream(mustEngine[float32](m), prompts, methods)
	}
	return nil, fmt.Errorf("llama: the streaming study takes a snapkv cache format (fp16, bf16, q8_0, f32), not %v", f)
}

func evaluateStream[E snapkv.Element](e *engine[E], prompts []Prompt, methods []StreamMethod) ([]StreamOutcome, error) {
	out := make([]StreamOutcome, len(methods))
	for i, me := range methods {
		out[i].Method = me
		out[i].StreamRow = StreamRow{Method: me.Name, KV: e.c.format.String(), Window: me.Window, Budget: me.Budget,
			Interval: me.Interval, Total: len(prompts)}
	}
	for _, pr := range prompts {
		text := []byte(pr.Text)
		if len(text) <= StreamPrefill {
			return nil, fmt.Errorf("llama: prompt %d has %d bytes, the streaming study needs more than %d", pr.ID, len(text), StreamPrefill)
		}
		for i, me := range methods {
			pred, stats, err := stream(e, text[:StreamPrefill], text[StreamPrefill:], me, len(pr.Answer))
			if err != nil {
				return nil, fmt.Errorf("llama: prompt %d, %s B=%d I=%d: %w", pr.ID, me.Name, me.Budget, me.Interval, err)
			}
			o := &out[i]
			o.Preds = append(o.Preds, string(pred))
			if string(pred) == pr.Answer {
				o.Correct++
			}
			for _, st := range stats {
				o.PeakRows = max(o.PeakRows, st.PeakDecodeRows)
				o.Compressions += float64(st.Compressions) / float64(len(prompts)*len(stats))
			}
		}
	}
	return out, nil
}

// stream prefills prefix into method me's caches, feeds rest through them one token
// at a time, generates n answer bytes and returns them with each layer's Stats.
func stream[E snapkv.Element](e *engine[E], prefix, rest []byte, me StreamMethod, n int) ([]byte, []snapkv.Stats, error) {
	kernel := me.Kernel
	if kernel == 0 {
		kernel = ProtocolKernel
	}
	cfg := snapkv.CacheConfig{
		Select: snapkv.Config{Budget: max(me.Budget, len(prefix)), Window: max(me.Window, 1), Kernel: kernel,
			Pool: snapkv.PoolAvg, Group: snapkv.GroupMean, Sinks: me.Sinks, Rule: me.Rule, Workers: 1},
		QHeads: e.QHeads, KVHeads: e.KVHeads, Dim: e.HeadDim, Reserve: me.Budget + me.Interval,
	}
	if me.Budget > 0 {
		cfg.Decode = snapkv.DecodeBudget{Budget: me.Budget, Interval: me.Interval, Rule: me.Decode}
		if me.Decode == snapkv.DecodeLongRange {
			cfg.Decode.Share = new(snapkv.LongRange) // every layer keeps what any layer looked at from afar
		}
	} else {
		cfg.Reserve = len(rest) + n
	}
	sl, err := snapkv.NewLayersOf[E](snapkv.LayersConfig{Cache: cfg, Layers: e.Layers})
	if err != nil {
		return nil, nil, err
	}
	if _, err := prefillSnap(e, prefix, sl); err != nil {
		return nil, nil, err
	}
	layers := make([]*snapkv.CacheOf[E], e.Layers)
	caches := make([]KVOf[E], e.Layers)
	for l := range layers {
		layers[l] = sl.Layer(l)
		caches[l] = layers[l]
	}
	s := e.newState()
	var logits []float32
	for i, tok := range rest {
		if logits, err = e.forward(s, caches, tok, i == len(rest)-1); err != nil {
			return nil, nil, err
		}
	}
	pred, err := e.generate(caches, logits, n)
	if err != nil {
		return nil, nil, err
	}
	stats := make([]snapkv.Stats, len(layers))
	for l, c := range layers {
		stats[l] = c.Stats()
	}
	return pred, stats, nil
}

// StreamReference is PyTorch's streaming study, results-stream.json: per method key
// (full, recent_b128_i1, protected_w16_b128_i1, paper_…, h2o_…) its count, peak rows
// and answers in prompt order.
type StreamReference struct {
	Prompts int                  `json:"n_prompts"`
	Methods map[string]refStream `json:"methods"`
}

type refStream struct {
	Correct  int      `json:"correct"`
	PeakRows int      `json:"peak_rows"`
	Pred     []string `json:"pred"`
}

// LoadStreamReference reads results-stream.json.
func LoadStreamReference(file string) (*StreamReference, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var r StreamReference
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("llama: %s: %w", file, err)
	}
	return &r, nil
}

// StreamKey names a streaming row in results-stream.json's methods ("" for a method
// PyTorch does not run).
func StreamKey(r StreamRow) string {
	switch r.Method {
	case "full":
		return "full"
	case "sinks-recent":
		return fmt.Sprintf("recent_b%d_i%d", r.Budget, r.Interval)
	case "snapkv-protected":
		return fmt.Sprintf("protected_w%d_b%d_i%d", r.Window, r.Budget, r.Interval)
	case "snapkv-paper":
		return fmt.Sprintf("paper_w%d_b%d_i%d", r.Window, r.Budget, r.Interval)
	case "h2o":
		return fmt.Sprintf("h2o_b%d_i%d", r.Budget, r.Interval)
	}
	return ""
}

// Lookup returns PyTorch's figures for row, if it ran it (never with a nil r).
func (r *StreamReference) Lookup(row StreamRow) (correct, peak int, pred []string, ok bool) {
	if r == nil {
		return 0, 0, nil, false
	}
	m, ok := r.Methods[StreamKey(row)]
	return m.Correct, m.PeakRows, m.Pred, ok
}
