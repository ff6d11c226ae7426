package llama

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// Prompt is one pass-key prompt in prompts.json's format.
type Prompt struct {
	ID       int      `json:"id"`
	Text     string   `json:"text"`
	Answer   string   `json:"answer"`
	Depth    float64  `json:"depth"`
	KeySpans [][2]int `json:"key_spans"` // byte ranges [start, end) of the key's digits
}

// LoadPrompts reads a file in prompts.json's format: {"prompts": [...]}.
func LoadPrompts(file string) ([]Prompt, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var f struct {
		Prompts []Prompt `json:"prompts"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("llama: %s: %w", file, err)
	}
	if len(f.Prompts) == 0 {
		return nil, fmt.Errorf("llama: %s holds no prompts", file)
	}
	for _, p := range f.Prompts {
		if p.Answer == "" {
			return nil, fmt.Errorf("llama: %s: prompt %d has no answer", file, p.ID)
		}
		for _, s := range p.KeySpans {
			if s[0] < 0 || s[0] > s[1] || s[1] > len(p.Text) {
				return nil, fmt.Errorf("llama: %s: prompt %d: key span %v outside its %d bytes", file, p.ID, s, len(p.Text))
			}
		}
	}
	return f.Prompts, nil
}

// Kind is what builds a method's cache.
type Kind int

const (
	Full        Kind = iota // every prompt row
	SinksRecent             // StreamingLLM: the first Sinks rows and the last C−Sinks
	SnapKV                  // snapkv.Cache, one per layer
)

// Method is one row of the evaluation.
type Method struct {
	Name     string // the JSON "method"
	Kind     Kind
	Window   int // W (SnapKV only)
	Budget   int // C: kept prompt rows per layer and KV head (mean over layers for a Schedule); 0 for Full
	Sinks    int
	Rule     snapkv.Rule
	Pool     snapkv.Pool
	Alloc    snapkv.Alloc
	Schedule Schedule
	// SharedVotes selects every layer's rows from the window attention of VoteLayers
	// (every layer if nil) averaged over them, instead of the layer's own
	// (snapkv.LayersConfig.SharedVotes).
	SharedVotes bool
	VoteLayers  []int
}

// VoteLayer is the layer whose window attention finds the key on this model (docs/passkey.md,
// TestKeyRankByLayer): snapkv-shared-votes-layer1 selects every layer's rows from its votes alone.
const VoteLayer = 1

// The README's protocol.
const (
	ProtocolSinks  = 4
	ProtocolKernel = 5
)

// Methods is the evaluation grid: the README's protocol (full cache; SnapKV protected
// with 4 sinks and paper, average pooling with kernel 5, windows 16 and 32, budgets 32,
// 64 and 128; sinks+recent), max pooling, AdaKV across heads, the per-layer schedules
// at the same total memory as the uniform budget, and shared votes. Budgets that the
// sinks and window alone fill are left out (they degenerate into sinks+recent).
func Methods() []Method {
	ms := []Method{{Name: "full", Kind: Full}}
	for _, pool := range []snapkv.Pool{snapkv.PoolAvg, snapkv.PoolMax} {
		for _, w := range []int{16, 32} {
			for _, c := range []int{32, 64, 128} {
				suffix := ""
				if pool == snapkv.PoolMax {
					suffix = "-maxpool"
				}
				if c > ProtocolSinks+w {
					ms = append(ms, Method{Name: "snapkv-protected" + suffix, Kind: SnapKV, Window: w, Budget: c,
						Sinks: ProtocolSinks, Rule: snapkv.RuleProtected, Pool: pool})
				}
				if c > w {
					ms = append(ms, Method{Name: "snapkv-paper" + suffix, Kind: SnapKV, Window: w, Budget: c,
						Rule: snapkv.RulePaper, Pool: pool})
				}
			}
		}
	}
	for _, c := range []int{32, 64, 128} {
		ms = append(ms, Method{Name: "sinks-recent", Kind: SinksRecent, Budget: c, Sinks: ProtocolSinks})
	}
	for _, s := range []struct {
		name  string
		sched Schedule
		alloc snapkv.Alloc
	}{
		{"snapkv-adakv-heads", Uniform, snapkv.AllocAdaptive},
		{"snapkv-pyramid", Pyramid, snapkv.AllocUniform},
		{"snapkv-entropy", Entropy, snapkv.AllocUniform},
		{"snapkv-adaptive", AdaptiveLayers, snapkv.AllocUniform},
	} {
		for _, c := range []int{32, 64, 128} {
			ms = append(ms, Method{Name: s.name, Kind: SnapKV, Window: 16, Budget: c, Sinks: ProtocolSinks,
				Rule: snapkv.RuleProtected, Pool: snapkv.PoolAvg, Alloc: s.alloc, Schedule: s.sched})
		}
	}
	for _, c := range []int{32, 64, 128} {
		ms = append(ms, Method{Name: "snapkv-shared-votes", Kind: SnapKV, Window: 16, Budget: c, Sinks: ProtocolSinks,
			Rule: snapkv.RuleProtected, Pool: snapkv.PoolAvg, SharedVotes: true})
	}
	for _, c := range []int{32, 64, 128} {
		ms = append(ms, Method{Name: "snapkv-shared-votes-layer1", Kind: SnapKV, Window: 16, Budget: c, Sinks: ProtocolSinks,
			Rule: snapkv.RuleProtected, Pool: snapkv.PoolAvg, SharedVotes: true, VoteLayers: []int{VoteLayer}})
	}
	return ms
}

// Row is one method's summary, the JSON object of `go run ./bench -passkey`. Full
// and sinks+recent carry window 0; full carries budget 0 (every row).
type Row struct {
	Method string `json:"method"`
	// KV is the cache format: "fp16", "bf16" or "q8_0".
	KV            string    `json:"kv"`
	Window        int       `json:"window"`
	Budget        int       `json:"budget"`
	Correct       int       `json:"correct"`
	Total         int       `json:"total"`
	KeyDigitsKept float64   `json:"key_digits_kept"`
	PerLayer      []float64 `json:"key_digits_kept_per_layer"`
	// LayerBudgets is the mean kept prompt rows per KV head of each layer.
	LayerBudgets []float64 `json:"layer_budgets"`
	// CacheBytes is the mean over prompts of the sum over layers of the cache's bytes right
	// after compression (snapkv.Stats' BytesAfter formula: a K and a V row in the cache's
	// format, Format.RowBytes each, plus an int32 position per row).
	CacheBytes float64 `json:"cache_bytes"`
	// DecodeTokensPerS is decode throughput after a prompt's prefill: forward steps (one
	// token through every layer with this method's cache) per second, set by
	// MeasureDecode.
	DecodeTokensPerS float64 `json:"decode_tokens_per_s"`
}

// Outcome is one method's result on every prompt.
type Outcome struct {
	Row
	Method Method
	Format Format
	Preds  []string
	Kept   [][][][]int32 // [prompt][layer][KV head] kept prompt positions, ascending
	// LastLogits are each prompt's last logits after the full-attention prefill with
	// the cache in Format, before any method's eviction: the same for every method of
	// one evaluation (LastLogits' result).
	LastLogits [][]float32
}

var _ KV = (*snapkv.Cache)(nil)

// Evaluate is EvaluateKV with the fp16 cache.
func (m *Model) Evaluate(prompts []Prompt, methods []Method) ([]Outcome, error) {
	return m.EvaluateKV(FP16, prompts, methods)
}

// EvaluateKV runs every method on every prompt with the KV cache in format f: one
// full-attention prefill per prompt, then for each method its caches, then greedy
// decoding of len(answer) bytes.
func (m *Model) EvaluateKV(f Format, prompts []Prompt, methods []Method) ([]Outcome, error) {
	r, err := m.runner(f)
	if err != nil {
		return nil, err
	}
	return r.evaluate(prompts, methods)
}

// runner is an engine of some format, for the exported methods that take a Format.
type runner interface {
	evaluate(prompts []Prompt, methods []Method) ([]Outcome, error)
	measureDecode(outcomes []Outcome, pr Prompt, rounds int) error
	lastLogits(prompt []byte) ([]float32, error)
}

func (m *Model) runner(f Format) (runner, error) {
	switch f {
	case FP16:
		return newEngine[fp16.Float16](m)
	case BF16:
		return newEngine[bf16.BFloat16](m)
	case Q8_0:
		return newEngine[q8.Block](m)
	case F32:
		return newEngine[float32](m)
	}
	return nil, fmt.Errorf("llama: no KV cache format %v", f)
}

func (e *engine[E]) evaluate(prompts []Prompt, methods []Method) ([]Outcome, error) {
	out := make([]Outcome, len(methods))
	for i, me := range methods {
		out[i].Method, out[i].Format = me, e.c.format
		out[i].Row = Row{Method: me.Name, KV: e.c.format.String(), Window: me.Window, Budget: me.Budget, Total: len(prompts),
			PerLayer: make([]float64, e.Layers), LayerBudgets: make([]float64, e.Layers)}
	}
	for _, pr := range prompts {
		p, err := e.prefill([]byte(pr.Text))
		if err != nil {
			return nil, fmt.Errorf("llama: prompt %d: %w", pr.ID, err)
		}
		meas := newMeasured(e, p)
		for i := range out {
			out[i].LastLogits = append(out[i].LastLogits, p.Logits)
		}
		for i, me := range methods {
			caches, bytes, err := e.caches(p, me, meas)
			if err != nil {
				return nil, fmt.Errorf("llama: prompt %d, %s W=%d C=%d, %v cache: %w", pr.ID, me.Name, me.Window, me.Budget, e.c.format, err)
			}
			kept := make([][][]int32, e.Layers)
			for l, c := range caches {
				kept[l] = make([][]int32, e.KVHeads)
				for h := range e.KVHeads {
					_, _, pos := c.Head(h)
					kept[l][h] = append([]int32(nil), pos...)
				}
			}
			pred, err := e.generate(caches, p.Logits, len(pr.Answer))
			if err != nil {
				return nil, fmt.Errorf("llama: prompt %d, %s: %w", pr.ID, me.Name, err)
			}

			o := &out[i]
			o.Preds = append(o.Preds, string(pred))
			o.Kept = append(o.Kept, kept)
			if string(pred) == pr.Answer {
				o.Correct++
			}
			o.CacheBytes += float64(bytes) / float64(len(prompts))
			for l := range kept {
				for h := range kept[l] {
					f := keyDigitsKept(pr, kept[l][h]) / float64(e.KVHeads)
					o.PerLayer[l] += f / float64(len(prompts))
					o.KeyDigitsKept += f / float64(len(prompts)*e.Layers)
					o.LayerBudgets[l] += float64(len(kept[l][h])) / float64(e.KVHeads*len(prompts))
				}
			}
		}
	}
	return out, nil
}

// LastLogits returns, for each prompt, the logits of its last position after a
// full-attention prefill with the cache in format f (F32: the model's float32 forward).
func (m *Model) LastLogits(f Format, prompts []Prompt) ([][]float32, error) {
	r, err := m.runner(f)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(prompts))
	for i, pr := range prompts {
		if out[i], err = r.lastLogits([]byte(pr.Text)); err != nil {
			return nil, fmt.Errorf("llama: prompt %d: %w", pr.ID, err)
		}
	}
	return out, nil
}

func (e *engine[E]) lastLogits(prompt []byte) ([]float32, error) {
	p, err := e.prefill(prompt)
	if err != nil {
		return nil, err
	}
	return p.Logits, nil
}

// MaxAbsDiff is the largest |a[i][j] − b[i][j]| over equally shaped logits, NaN if
// either holds a NaN where the other does not agree, +Inf if the shapes differ.
func MaxAbsDiff(a, b [][]float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var worst float64
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return math.Inf(1)
		}
		for j := range a[i] {
			d := math.Abs(float64(a[i][j]) - float64(b[i][j]))
			if d != d {
				return math.NaN()
			}
			worst = max(worst, d)
		}
	}
	return worst
}

// speedTokens is the decode steps of one round of the speed measurement.
const speedTokens = 16

// MeasureDecode sets each outcome's DecodeTokensPerS, measured after the prefill of pr
// by decodeSpeed in rounds rounds: every method in one run, so their ratios compare.
// The outcomes must be of one cache format, which the measurement runs.
func (m *Model) MeasureDecode(outcomes []Outcome, pr Prompt, rounds int) error {
	if len(outcomes) == 0 {
		return nil
	}
	for _, o := range outcomes {
		if o.Format != outcomes[0].Format {
			return fmt.Errorf("llama: MeasureDecode over %v and %v caches", outcomes[0].Format, o.Format)
		}
	}
	r, err := m.runner(outcomes[0].Format)
	if err != nil {
		return err
	}
	return r.measureDecode(outcomes, pr, rounds)
}

func (e *engine[E]) measureDecode(outcomes []Outcome, pr Prompt, rounds int) error {
	p, err := e.prefill([]byte(pr.Text))
	if err != nil {
		return err
	}
	methods := make([]Method, len(outcomes))
	for i, o := range outcomes {
		methods[i] = o.Method
	}
	speeds, err := e.decodeSpeed(p, methods, rounds, speedTokens)
	if err != nil {
		return err
	}
	for i := range outcomes {
		outcomes[i].DecodeTokensPerS = speeds[i]
	}
	return nil
}

// decodeSpeed measures each method's decode throughput after prefill p, in tokens per
// second. Each of rounds rounds builds every method's caches afresh and decodes tokens
// tokens with each, the methods in an order rotated by one every round so none always
// runs first; a method's fastest round counts, the one the machine's other work
// disturbed least. All methods are measured in the same run, so their ratios compare.
func (e *engine[E]) decodeSpeed(p *PrefillOf[E], methods []Method, rounds, tokens int) ([]float64, error) {
	best := make([]time.Duration, len(methods))
	meas := newMeasured(e, p)
	for r := range rounds {
		for k := range methods {
			i := (k + r) % len(methods)
			caches, _, err := e.caches(p, methods[i], meas)
			if err != nil {
				return nil, err
			}
			start := time.Now()
			if _, err := e.generate(caches, p.Logits, tokens+1); err != nil {
				return nil, err
			}
			if d := time.Since(start); r == 0 || d < best[i] {
				best[i] = d
			}
		}
	}
	speeds := make([]float64, len(methods))
	for i, d := range best {
		speeds[i] = float64(tokens) / d.Seconds()
	}
	return speeds, nil
}

// caches builds method me's per-layer caches from a prefill and returns their bytes
// right after compression. meas is p's window attention, shared across methods. The
// SnapKV caches take p's rows and queries rather than running the prompt again
// through PrefillAttend (prefillSnap, an engine's path): in ModeFaithful its attention
// is the full cache's bit for bit, so both give the same caches
// (TestPrefillThroughSnapKV), and the prompt runs through the model once for all
// methods.
func (e *engine[E]) caches(p *PrefillOf[E], me Method, meas *measured[E]) ([]KVOf[E], int64, error) {
	caches := make([]KVOf[E], e.Layers)
	var bytes int64
	switch me.Kind {
	case Full, SinksRecent:
		for l := range caches {
			var kept [][]int32
			if me.Kind == SinksRecent {
				kept = make([][]int32, e.KVHeads)
				for h := range kept {
					kept[h] = sinksRecent(p.Len, me.Budget, me.Sinks)
				}
			}
			r := p.Keep(l, kept)
			caches[l] = r
			bytes += rowsBytes(r, e.KVHeads, e.c.format.RowBytes(e.HeadDim))
		}
		return caches, bytes, nil
	}
	cfg, err := e.snapConfig(p, me, meas)
	if err != nil {
		return nil, 0, err
	}
	return snapLayers(cfg, p.K, p.V, p.Q)
}

// snapConfig is the configuration of SnapKV method me's caches after prefill p, whose
// window attention the measured schedules read.
func (e *engine[E]) snapConfig(p *PrefillOf[E], me Method, meas *measured[E]) (snapkv.LayersConfig, error) {
	budgets, err := e.scheduleBudgets(p, me, meas)
	if err != nil {
		return snapkv.LayersConfig{}, err
	}
	cfg := snapkv.Config{Budget: me.Budget, Window: me.Window, Kernel: ProtocolKernel, Pool: me.Pool,
		Sinks: me.Sinks, Rule: me.Rule, Group: snapkv.GroupMean, Alloc: me.Alloc, Workers: 1}
	if me.Alloc == snapkv.AllocAdaptive {
		cfg.Floor = AdaptiveFloor
	}
	return snapkv.LayersConfig{
		Cache: snapkv.CacheConfig{Select: cfg, Mode: snapkv.ModeFaithful,
			QHeads: e.QHeads, KVHeads: e.KVHeads, Dim: e.HeadDim, Reserve: cacheReserve},
		Layers: e.Layers, Budgets: budgets, SharedVotes: me.SharedVotes, VoteLayers: me.VoteLayers,
	}, nil
}

// cacheReserve is the decode rows a snapkv.Cache makes room for when it compresses:
// enough for the answers and the speed measurement.
const cacheReserve = 32

// scheduleBudgets returns method me's budget for each layer.
func (e *engine[E]) scheduleBudgets(p *PrefillOf[E], me Method, meas *measured[E]) ([]int, error) {
	m := e.Model
	switch me.Schedule {
	case Uniform:
		b := make([]int, m.Layers)
		for l := range b {
			b[l] = me.Budget
		}
		return b, nil
	case Pyramid:
		return snapkv.PyramidBudgets(me.Budget, m.Layers, PyramidBeta)
	}
	if m.KVHeads != 1 {
		return nil, fmt.Errorf("measured schedules take one KV head per layer, the model has %d", m.KVHeads)
	}
	v := meas.votes(0, me.Window, ProtocolKernel)
	w := min(me.Window, p.Len)
	candidates := make([][]float32, len(v))
	for l := range v {
		candidates[l] = v[l][min(me.Sinks, p.Len-w) : p.Len-w]
	}
	return layerBudgets(me.Schedule, me.Budget, m.Layers, me.Sinks+w, candidates)
}

// sinksRecent is the StreamingLLM baseline's kept rows: 0 .. sinks−1 and the last
// c−sinks positions (everything when c ≥ n).
func sinksRecent(n, c, sinks int) []int32 {
	var kept []int32
	for t := range n {
		if t < sinks || t >= n-(c-sinks) {
			kept = append(kept, int32(t))
		}
	}
	return kept
}

// rowsBytes is snapkv.Stats' BytesAfter formula for a Rows cache: a K and a V row of
// rowBytes bytes each plus an int32 position per row.
func rowsBytes[E elem](r *RowsOf[E], kvHeads, rowBytes int) int64 {
	var n int64
	for h := range kvHeads {
		_, _, pos := r.Head(h)
		n += int64(len(pos)) * int64(2*rowBytes+4)
	}
	return n
}

// keyDigitsKept is the fraction of the prompt's key-digit bytes whose positions are in
// kept (ascending).
func keyDigitsKept(p Prompt, kept []int32) float64 {
	in := map[int32]bool{}
	for _, t := range kept {
		in[t] = true
	}
	var n, total int
	for _, s := range p.KeySpans {
		for t := s[0]; t < s[1]; t++ {
			total++
			if in[int32(t)] {
				n++
			}
		}
	}
	if total == 0 {
		return 0
	}
	return float64(n) / float64(total)
}
