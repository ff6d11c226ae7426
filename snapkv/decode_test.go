package snapkv_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// This file checks the decode budget (CacheConfig.Decode) against an independent
// float64 model of the schedule written from its documentation: the model keeps its
// own window queries (with their positions) and H2O scores, takes each head's rows
// from the cache before every Attend call, decides whether the head must be
// compressed and, if so, which rows each rule keeps: exactly for the rows the rules
// protect, and for the rest an optimal choice up to refTol of the float64 votes, as
// TestFloat64 checks Select (the float32 pipeline may order near ties either way). The
// kept rows' K and V must be the stream's, bit for bit.

// stream is one random sequence of a layer: every position's keys, values and queries,
// the keys and values already rounded to the cache's format E.
type stream[E snapkv.Element] struct {
	hq, hk, d, n int
	k, v         []E         // [KVHeads][n][row] as stored
	kf           [][]float64 // [KVHeads][n·d] the stored keys widened
	q            []float32   // [QHeads][n][d]
}

// newStream draws n positions whose queries lean towards an earlier key of their KV
// head, so that attention is peaked as in a real model.
func newStream[E snapkv.Element](r *rand.Rand, hq, hk, n, d int) *stream[E] {
	s := &stream[E]{hq: hq, hk: hk, d: d, n: n}
	kf32, vf32 := make([]float32, hk*n*d), make([]float32, hk*n*d)
	for i := range kf32 {
		kf32[i], vf32[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	s.k, s.v = narrowTo[E](kf32), narrowTo[E](vf32)
	back := widenFrom(s.k)
	s.kf = make([][]float64, hk)
	for h := range hk {
		s.kf[h] = make([]float64, n*d)
		for i := range n * d {
			s.kf[h][i] = float64(back[h*n*d+i])
		}
	}
	s.q = make([]float32, hq*n*d)
	for j := range hq {
		h := j / (hq / hk)
		for t := range n {
			target := r.IntN(t + 1)
			for i := range d {
				s.q[(j*n+t)*d+i] = 0.7*back[(h*n+target)*d+i] + float32(r.NormFloat64())
			}
		}
	}
	return s
}

// narrowTo rounds x to E with the format's own conversion.
func narrowTo[E snapkv.Element](x []float32) []E {
	var out []E
	switch o := any(&out).(type) {
	case *[]fp16.Float16:
		*o = make([]fp16.Float16, len(x))
		fp16.FromFloat32(*o, x)
	case *[]bf16.BFloat16:
		*o = make([]bf16.BFloat16, len(x))
		bf16.FromFloat32(*o, x)
	case *[]q8.Block:
		*o = make([]q8.Block, len(x)/32)
		q8.Quantize(*o, x)
	case *[]float32:
		*o = slices.Clone(x)
	}
	return out
}

// widenFrom returns the values of x.
func widenFrom[E snapkv.Element](x []E) []float32 {
	switch x := any(x).(type) {
	case []fp16.Float16:
		out := make([]float32, len(x))
		fp16.ToFloat32(out, x)
		return out
	case []bf16.BFloat16:
		out := make([]float32, len(x))
		bf16.ToFloat32(out, x)
		return out
	case []q8.Block:
		out := make([]float32, len(x)*32)
		q8.Dequantize(out, x)
		return out
	case []float32:
		return slices.Clone(x)
	}
	panic("unreachable")
}

// token returns position t's rows [KVHeads][row] of x ([KVHeads][n][row]).
func (s *stream[E]) token(x []E, t int) []E {
	w := perRow[E](s.d)
	out := make([]E, 0, s.hk*w)
	for h := range s.hk {
		out = append(out, x[(h*s.n+t)*w:(h*s.n+t+1)*w]...)
	}
	return out
}

// query returns position t's queries [QHeads][d].
func (s *stream[E]) query(t int) []float32 {
	out := make([]float32, 0, s.hq*s.d)
	for j := range s.hq {
		out = append(out, s.q[(j*s.n+t)*s.d:(j*s.n+t+1)*s.d]...)
	}
	return out
}

// prompt returns the Last chunk of the first n positions in layout l, with the queries
// of its last qRows positions (0: no Q).
func (s *stream[E]) prompt(n, qRows int, l snapkv.Layout) snapkv.ChunkOf[E] {
	w := perRow[E](s.d)
	ch := snapkv.ChunkOf[E]{Last: true}
	for t := range n {
		for h := range s.hk {
			if l == snapkv.TokenMajor {
				ch.K = append(ch.K, s.k[(h*s.n+t)*w:(h*s.n+t+1)*w]...)
				ch.V = append(ch.V, s.v[(h*s.n+t)*w:(h*s.n+t+1)*w]...)
			}
		}
	}
	if l == snapkv.HeadMajor {
		for h := range s.hk {
			ch.K = append(ch.K, s.k[h*s.n*w:(h*s.n+n)*w]...)
			ch.V = append(ch.V, s.v[h*s.n*w:(h*s.n+n)*w]...)
		}
	}
	if qRows == 0 {
		return ch
	}
	if l == snapkv.TokenMajor {
		for t := n - qRows; t < n; t++ {
			ch.Q = append(ch.Q, s.query(t)...)
		}
		return ch
	}
	for j := range s.hq {
		ch.Q = append(ch.Q, s.q[(j*s.n+n-qRows)*s.d:(j*s.n+n)*s.d]...)
	}
	return ch
}

// probs is the float64 softmax of query vector q (of KV head h's group) over the rows
// at positions pos, the first seen of them.
func (s *stream[E]) probs(q []float32, h int, pos []int32, seen int) []float64 {
	d := s.d
	out := make([]float64, seen)
	m := math.Inf(-1)
	for i, p := range pos[:seen] {
		var dot float64
		for x := range d {
			dot += float64(q[x]) * s.kf[h][int(p)*d+x]
		}
		out[i] = dot / math.Sqrt(float64(d))
		m = max(m, out[i])
	}
	var sum float64
	for i := range out {
		out[i] = math.Exp(out[i] - m)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// decodeCase is one configuration of the schedule.
type decodeCase struct {
	name   string
	sel    snapkv.Config // the prompt's selection and the rule's Sinks, Window, pooling
	dec    snapkv.DecodeBudget
	prompt int // prompt rows
	qRows  int // rows of the Last chunk's Q: all of them, min(prompt, Window), or 0
	attn   bool
}

func decodeCases() []decodeCase {
	prot := snapkv.Config{Budget: 64, Window: 8, Kernel: 5, Sinks: 4, Rule: snapkv.RuleProtected}
	paper := snapkv.Config{Budget: 64, Window: 8, Kernel: 3, Pool: snapkv.PoolMax, Group: snapkv.GroupMax}
	with := func(c snapkv.Config, f func(*snapkv.Config)) snapkv.Config { f(&c); return c }
	return []decodeCase{
		{"snapkv-protected/I1", prot, snapkv.DecodeBudget{Budget: 24, Interval: 1}, 40, 40, false},
		{"snapkv-protected/I5/prompt-evicts", with(prot, func(c *snapkv.Config) { c.Budget = 20 }), snapkv.DecodeBudget{Budget: 24, Interval: 5}, 40, 8, false},
		{"snapkv-protected/sum/I3", with(prot, func(c *snapkv.Config) { c.Group = snapkv.GroupSum; c.Window = 16 }), snapkv.DecodeBudget{Budget: 30, Interval: 3}, 40, 16, false},
		{"snapkv-paper/I3", paper, snapkv.DecodeBudget{Budget: 20, Interval: 3}, 40, 40, false},
		{"snapkv-paper/I1/short-prompt", with(paper, func(c *snapkv.Config) { c.Window = 16; c.Pool = snapkv.PoolAvg; c.Group = snapkv.GroupMean }), snapkv.DecodeBudget{Budget: 20, Interval: 1}, 6, 6, false},
		{"snapkv-protected/budget-in-protected", prot, snapkv.DecodeBudget{Budget: 12, Interval: 2}, 30, 30, false},
		{"snapkv-protected/window-over-64", with(prot, func(c *snapkv.Config) { c.Window = 80 }), snapkv.DecodeBudget{Budget: 90, Interval: 3}, 40, 40, false},
		{"snapkv-protected/attn-prompt", with(prot, func(c *snapkv.Config) { c.Window = 16 }), snapkv.DecodeBudget{Budget: 24, Interval: 4}, 30, 0, true},
		{"snapkv-paper/key-proxy-prompt", with(paper, func(c *snapkv.Config) { c.Window = 12 }), snapkv.DecodeBudget{Budget: 22, Interval: 2}, 30, 0, false},
		{"recent/I1", prot, snapkv.DecodeBudget{Budget: 16, Interval: 1, Rule: snapkv.DecodeRecent}, 40, 40, false},
		{"recent/I7", with(prot, func(c *snapkv.Config) { c.Budget = 20 }), snapkv.DecodeBudget{Budget: 16, Interval: 7, Rule: snapkv.DecodeRecent}, 40, 8, false},
		{"h2o/I1", prot, snapkv.DecodeBudget{Budget: 24, Interval: 1, Rule: snapkv.DecodeH2O}, 40, 40, false},
		{"h2o/I6/prompt-evicts", with(prot, func(c *snapkv.Config) { c.Budget = 18; c.Sinks = 2 }), snapkv.DecodeBudget{Budget: 20, Interval: 6, Rule: snapkv.DecodeH2O}, 40, 8, false},
		{"h2o/no-prompt-queries", prot, snapkv.DecodeBudget{Budget: 20, Interval: 2, Rule: snapkv.DecodeH2O}, 30, 0, true},
		{"h2o/budget-in-protected", prot, snapkv.DecodeBudget{Budget: 6, Interval: 3, Rule: snapkv.DecodeH2O}, 30, 30, false},
		{"longrange/I1", with(prot, func(c *snapkv.Config) { c.Window = 4 }), snapkv.DecodeBudget{Budget: 24, Interval: 1, Rule: snapkv.DecodeLongRange}, 40, 40, false},
		{"longrange/I5/max/prompt-evicts", with(prot, func(c *snapkv.Config) { c.Window = 6; c.Budget = 26; c.Pool = snapkv.PoolMax }), snapkv.DecodeBudget{Budget: 30, Interval: 5, Rule: snapkv.DecodeLongRange}, 40, 6, false},
		{"longrange/no-prompt-queries", with(prot, func(c *snapkv.Config) { c.Window = 3 }), snapkv.DecodeBudget{Budget: 20, Interval: 2, Rule: snapkv.DecodeLongRange}, 30, 0, true},
		{"longrange/budget-in-protected", prot, snapkv.DecodeBudget{Budget: 18, Interval: 3, Rule: snapkv.DecodeLongRange}, 30, 30, false},
	}
}

// TestDecodeBudgetFloat64 runs every decode rule, in every format and both layouts of
// the prompt, on every kernel variant, against the float64 model of the schedule.
func TestDecodeBudgetFloat64(t *testing.T) {
	varianttest.Run(t, func(t *testing.T, _ string) {
		t.Run("fp16", decodeFloat64[fp16.Float16])
		t.Run("bf16", decodeFloat64[bf16.BFloat16])
		t.Run("q8_0", decodeFloat64[q8.Block])
		t.Run("f32", decodeFloat64[float32])
	})
}

func decodeFloat64[E snapkv.Element](t *testing.T) {
	const hq, hk, d, steps = 4, 2, 32, 60
	for i, tc := range decodeCases() {
		for _, layout := range []snapkv.Layout{snapkv.HeadMajor, snapkv.TokenMajor} {
			t.Run(fmt.Sprintf("%s/layout%d", tc.name, layout), func(t *testing.T) {
				s := newStream[E](rand.New(rand.NewPCG(uint64(i), 32)), hq, hk, tc.prompt+steps, d)
				runDecodeModel(t, s, tc, layout)
			})
		}
	}
}

// windowQuery is a query the model records, with its position.
type windowQuery struct {
	at int32
	q  []float32 // [QHeads][d]
}

func runDecodeModel[E snapkv.Element](t *testing.T, s *stream[E], tc decodeCase, layout snapkv.Layout) {
	hq, hk, d := s.hq, s.hk, s.d
	g, w := hq/hk, perRow[E](d)
	c, err := snapkv.NewCacheOf[E](snapkv.CacheConfig{Select: tc.sel, QHeads: hq, KVHeads: hk, Dim: d, Layout: layout, Decode: tc.dec})
	if err != nil {
		t.Fatal(err)
	}
	ch := s.prompt(tc.prompt, tc.qRows, layout)
	if tc.attn {
		win := min(tc.sel.Window, tc.prompt)
		ch.Attn = make([]float32, hq*win*tc.prompt)
		for i := range ch.Attn {
			ch.Attn[i] = float32(i%7) / 7
		}
	}
	if err := c.Prefill(ch); err != nil {
		t.Fatal(err)
	}

	// The model's state: window queries and H2O scores by position.
	var window []windowQuery
	for r := tc.prompt - min(tc.qRows, tc.sel.Window); r < tc.prompt && tc.qRows > 0; r++ {
		window = append(window, windowQuery{int32(r), s.query(r)})
	}
	scores := make([]map[int32]float64, hk)
	for h := range hk {
		scores[h] = map[int32]float64{}
		all := make([]int32, tc.prompt)
		for p := range all {
			all[p] = int32(p)
		}
		for r := tc.prompt - tc.qRows; r < tc.prompt; r++ {
			for j := range g {
				q := s.q[((h*g+j)*s.n+r)*d : ((h*g+j)*s.n+r+1)*d]
				for i, p := range s.probs(q, h, all, r+1) {
					scores[h][all[i]] += p / float64(g)
				}
			}
		}
	}
	// DecodeLongRange's scores by position: the prompt's query rows, then every Attend.
	far := int32(tc.sel.Window)
	best := map[int32]float64{}
	raise := func(p []float64, pos []int32, at int32) {
		for i, x := range p {
			if pos[i] <= at-far {
				best[pos[i]] = max(best[pos[i]], x)
			}
		}
	}
	all := make([]int32, tc.prompt)
	for p := range all {
		all[p] = int32(p)
	}
	for h := range hk {
		for r := tc.prompt - tc.qRows; r < tc.prompt; r++ {
			mean := make([]float64, r+1)
			for j := range g {
				q := s.q[((h*g+j)*s.n+r)*d : ((h*g+j)*s.n+r+1)*d]
				for i, p := range s.probs(q, h, all, r+1) {
					mean[i] += p / float64(g)
				}
			}
			raise(mean, all, int32(r))
		}
	}
	peak, compressions := 0, 0
	for h := range hk {
		_, _, pos := c.Head(h)
		peak = max(peak, len(pos))
	}

	out := make([]float32, hq*d)
	for tok := tc.prompt; tok < s.n; tok++ {
		if err := c.Append(s.token(s.k, tok), s.token(s.v, tok)); err != nil {
			t.Fatal(err)
		}
		before := make([][]int32, hk)
		for h := range hk {
			_, _, pos := c.Head(h)
			before[h] = slices.Clone(pos)
		}
		q := s.query(tok)
		window = append(window, windowQuery{int32(tok), q})
		if len(window) > tc.sel.Window {
			window = window[1:]
		}
		for h := range hk {
			mean := make([]float64, len(before[h]))
			for j := range g {
				for i, p := range s.probs(q[(h*g+j)*d:(h*g+j+1)*d], h, before[h], len(before[h])) {
					scores[h][before[h][i]] += p / float64(g)
					mean[i] += p / float64(g)
				}
			}
			raise(mean, before[h], int32(tok))
		}
		if err := c.Attend(out, q); err != nil {
			t.Fatal(err)
		}
		if c.Offset() != tok+1 {
			t.Fatalf("token %d: Offset %d, want %d", tok, c.Offset(), tok+1)
		}
		compressed := false
		for h := range hk {
			k, v, pos := c.Head(h)
			what := fmt.Sprintf("token %d head %d", tok, h)
			for i, p := range pos {
				if !slices.Equal(k[i*w:(i+1)*w], s.k[(h*s.n+int(p))*w:][:w]) || !slices.Equal(v[i*w:(i+1)*w], s.v[(h*s.n+int(p))*w:][:w]) {
					t.Fatalf("%s: row %d (position %d) is not the stream's", what, i, p)
				}
			}
			n := len(before[h])
			if n < tc.dec.Budget+tc.dec.Interval {
				if !slices.Equal(pos, before[h]) {
					t.Fatalf("%s: %d rows changed below Budget + Interval: %v → %v", what, n, before[h], pos)
				}
				continue
			}
			compressed = true
			idx := make([]int32, len(pos))
			for i, p := range pos {
				j, ok := slices.BinarySearch(before[h], p)
				if !ok {
					t.Fatalf("%s: kept position %d that the head did not hold", what, p)
				}
				idx[i] = int32(j)
			}
			checkDecodeRule(t, what, s, tc, h, before[h], idx, window, scores[h], best)
			for p := range scores[h] {
				if _, ok := slices.BinarySearch(pos, p); !ok {
					delete(scores[h], p)
				}
			}
		}
		if compressed {
			compressions++
		}
		for h := range hk {
			_, _, pos := c.Head(h)
			peak = max(peak, len(pos))
		}
	}
	st := c.Stats()
	if st.Compressions != compressions || st.PeakDecodeRows != peak {
		t.Errorf("Stats: %d compressions, peak %d rows; the model counts %d and %d", st.Compressions, st.PeakDecodeRows, compressions, peak)
	}
	if compressions == 0 {
		t.Errorf("the case never compressed")
	}
	if limit := max(tc.dec.Budget+tc.dec.Interval-1, min(tc.prompt, tc.sel.Budget)); peak > limit {
		t.Errorf("peak %d rows, over max(Budget + Interval − 1, the prompt's kept rows) = %d", peak, limit)
	}
}

// checkDecodeRule checks the rows idx (indices into the head's rows before, ascending)
// that the cache kept of head h under tc's rule.
func checkDecodeRule[E snapkv.Element](t *testing.T, what string, s *stream[E], tc decodeCase, h int, before []int32, idx []int32, window []windowQuery, scores, best map[int32]float64) {
	t.Helper()
	n, b := len(before), tc.dec.Budget
	sinks := min(tc.sel.Sinks, b)
	recentFrom := func() []int32 { // the pinned case: sinks, then the most recent rows
		var want []int32
		for i := range b {
			if i < sinks {
				want = append(want, int32(i))
			} else {
				want = append(want, int32(n-b+i))
			}
		}
		return want
	}
	exact := func(want []int32) {
		if !slices.Equal(idx, want) {
			t.Fatalf("%s: kept rows %v, want %v", what, idx, want)
		}
	}
	switch tc.dec.Rule {
	case snapkv.DecodeRecent:
		exact(recentFrom())
	case snapkv.DecodeH2O:
		top := max(b-b/2-sinks, 0)
		if top == 0 {
			exact(recentFrom())
			return
		}
		votes := make([]float64, n)
		for i, p := range before {
			votes[i] = scores[p]
		}
		checkKept(t, what, [][]int32{idx}, [][]float64{votes}, snapkv.Config{Rule: snapkv.RuleProtected, Sinks: sinks}, n, b-sinks-top, []int{b})
	case snapkv.DecodeLongRange:
		top := max(b-sinks-2*tc.sel.Window, 0)
		if top == 0 {
			exact(recentFrom())
			return
		}
		raw := make([]float64, n)
		for i, p := range before {
			raw[i] = best[p]
		}
		pooled := refPool(raw, tc.sel.Kernel, tc.sel.Pool)
		checkKept(t, what, [][]int32{idx}, [][]float64{pooled}, snapkv.Config{Rule: snapkv.RuleProtected, Sinks: sinks}, n, b-sinks-top, []int{b})
	default:
		m := min(len(window), n)
		protected := m
		if tc.sel.Rule == snapkv.RuleProtected {
			protected += sinks
		}
		if protected >= b {
			exact(recentFrom())
			return
		}
		g := s.hq / s.hk
		acc := make([]float64, n)
		for j := range g {
			sum := make([]float64, n)
			for _, wq := range window[len(window)-m:] {
				seen, _ := slices.BinarySearch(before, wq.at+1)
				for i, p := range s.probs(wq.q[(h*g+j)*s.d:(h*g+j+1)*s.d], h, before, seen) {
					sum[i] += p
				}
			}
			for i := range acc {
				switch {
				case j == 0:
					acc[i] = sum[i]
				case tc.sel.Group == snapkv.GroupMax:
					acc[i] = max(acc[i], sum[i])
				default:
					acc[i] += sum[i]
				}
			}
		}
		if tc.sel.Group == snapkv.GroupMean {
			for i := range acc {
				acc[i] /= float64(g)
			}
		}
		pooled := refPooled([][]float64{acc}, tc.sel, n, m)
		checkKept(t, what, [][]int32{idx}, pooled, tc.sel, n, m, []int{b})
	}
}

// TestDecodeBudgetAllocs: once every head's storage has grown to Budget + Interval
// rows, Append and Attend with a decode budget allocate nothing, for every rule and
// format, with one worker and with helpers.
func TestDecodeBudgetAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop scratch space at random")
	}
	t.Run("fp16", decodeAllocs[fp16.Float16])
	t.Run("bf16", decodeAllocs[bf16.BFloat16])
	t.Run("q8_0", decodeAllocs[q8.Block])
	t.Run("f32", decodeAllocs[float32])
}

func decodeAllocs[E snapkv.Element](t *testing.T) {
	const hq, hk, d, prompt = 8, 2, 64, 48
	s := newStream[E](rand.New(rand.NewPCG(3, 4)), hq, hk, prompt+1, d)
	for _, rule := range []snapkv.DecodeRule{snapkv.DecodeSnapKV, snapkv.DecodeRecent, snapkv.DecodeH2O} {
		for _, workers := range []int{1, 2} {
			sel := snapkv.Config{Budget: 32, Window: 8, Kernel: 5, Sinks: 4, Rule: snapkv.RuleProtected, Workers: workers}
			c, err := snapkv.NewCacheOf[E](snapkv.CacheConfig{Select: sel, QHeads: hq, KVHeads: hk, Dim: d, Reserve: 16,
				Decode: snapkv.DecodeBudget{Budget: 32, Interval: 3, Rule: rule}})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Prefill(s.prompt(prompt, prompt, snapkv.HeadMajor)); err != nil {
				t.Fatal(err)
			}
			k, v, q, out := s.token(s.k, prompt), s.token(s.v, prompt), s.query(prompt), make([]float32, hq*d)
			step := func() {
				if err := c.Append(k, v); err != nil {
					t.Fatal(err)
				}
				if err := c.Attend(out, q); err != nil {
					t.Fatal(err)
				}
			}
			for range 300 {
				step()
			}
			if a := steadyAllocs(60, step); a != 0 {
				t.Errorf("rule %d, %d workers: %v allocations per token", rule, workers, a)
			}
			if st := c.Stats(); st.Compressions == 0 || st.PeakDecodeRows != 34 {
				t.Errorf("rule %d: %d compressions, peak %d rows, want some and 34", rule, st.Compressions, st.PeakDecodeRows)
			}
		}
	}
}

// TestDecodeBudgetErrors: bad decode budgets name the field and value, and a window
// whose queries are not the last rows (a token appended without its Attend) is an
// error, not a wrong selection.
func TestDecodeBudgetErrors(t *testing.T) {
	sel := snapkv.Config{Budget: 16, Window: 4, Kernel: 3, Sinks: 2, Rule: snapkv.RuleProtected}
	for _, tc := range []struct {
		dec   snapkv.DecodeBudget
		alloc snapkv.Alloc
		want  string
	}{
		{snapkv.DecodeBudget{Budget: -1, Interval: 1}, snapkv.AllocUniform, "Decode.Budget -1"},
		{snapkv.DecodeBudget{Budget: 8}, snapkv.AllocUniform, "Decode.Interval 0"},
		{snapkv.DecodeBudget{Interval: 4}, snapkv.AllocUniform, "Decode.Interval 4, Rule 0 or Share without a Decode.Budget"},
		{snapkv.DecodeBudget{Budget: 8, Interval: 1, Rule: 7}, snapkv.AllocUniform, "Decode.Rule 7"},
		{snapkv.DecodeBudget{Budget: 8, Interval: math.MaxInt32}, snapkv.AllocUniform, "Decode.Interval 2147483647"},
		{snapkv.DecodeBudget{Budget: 8, Interval: 1}, snapkv.AllocAdaptive, "Alloc AllocAdaptive with CacheConfig.Decode.Budget 8"},
		{snapkv.DecodeBudget{Budget: 8, Interval: 1, Rule: snapkv.DecodeH2O, Share: new(snapkv.LongRange)}, snapkv.AllocUniform, "Decode.Share with Rule 2"},
	} {
		cfg := sel
		cfg.Alloc = tc.alloc
		_, err := snapkv.NewCache(snapkv.CacheConfig{Select: cfg, QHeads: 2, KVHeads: 1, Dim: 32, Decode: tc.dec})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v, %v: error %v, want one containing %q", tc.dec, tc.alloc, err, tc.want)
		}
	}

	s := newStream[fp16.Float16](rand.New(rand.NewPCG(5, 6)), 2, 1, 40, 32)
	c, err := snapkv.NewCache(snapkv.CacheConfig{Select: sel, QHeads: 2, KVHeads: 1, Dim: 32, Decode: snapkv.DecodeBudget{Budget: 12, Interval: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Prefill(s.prompt(16, 4, snapkv.HeadMajor)); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, 2*32)
	for tok := 16; tok < 18; tok++ { // two tokens, one Attend
		if err := c.Append(s.token(s.k, tok), s.token(s.v, tok)); err != nil {
			t.Fatal(err)
		}
	}
	err = c.Attend(out, s.query(17))
	if err == nil || !strings.Contains(err.Error(), "window query 0 of 4 is at position 13 but KV head 0's row 14 is at 14") {
		t.Errorf("a token without its Attend: error %v", err)
	}
}

// TestDecodeLongRangeShared: two layers' caches sharing one LongRange keep, at every
// compression, the rows that the float64 model chooses from the largest long-range
// attention that either layer paid each position so far (the layers attending in
// order within a token), in every format.
func TestDecodeLongRangeShared(t *testing.T) {
	t.Run("fp16", decodeShared[fp16.Float16])
	t.Run("bf16", decodeShared[bf16.BFloat16])
	t.Run("q8_0", decodeShared[q8.Block])
	t.Run("f32", decodeShared[float32])
}

func decodeShared[E snapkv.Element](t *testing.T) {
	const hq, hk, d, prompt, steps = 4, 2, 32, 30, 50
	sel := snapkv.Config{Budget: 64, Window: 4, Kernel: 5, Sinks: 2, Rule: snapkv.RuleProtected}
	share := new(snapkv.LongRange)
	dec := snapkv.DecodeBudget{Budget: 20, Interval: 3, Rule: snapkv.DecodeLongRange, Share: share}
	tc := decodeCase{sel: sel, dec: dec, prompt: prompt, qRows: prompt}
	streams := []*stream[E]{
		newStream[E](rand.New(rand.NewPCG(21, 1)), hq, hk, prompt+steps, d),
		newStream[E](rand.New(rand.NewPCG(21, 2)), hq, hk, prompt+steps, d),
	}
	g, far := hq/hk, int32(sel.Window)
	best := map[int32]float64{}
	// raise adds the long-range attention that layer s's queries at position at pay
	// the rows at positions pos to the model's shared scores.
	raise := func(s *stream[E], h int, q []float32, pos []int32, at int32) {
		seen, _ := slices.BinarySearch(pos, at+1)
		mean := make([]float64, seen)
		for j := range g {
			for i, p := range s.probs(q[j*d:(j+1)*d], h, pos, seen) {
				mean[i] += p / float64(g)
			}
		}
		for i, x := range mean {
			if pos[i] <= at-far {
				best[pos[i]] = max(best[pos[i]], x)
			}
		}
	}
	caches := make([]*snapkv.CacheOf[E], len(streams))
	all := make([]int32, prompt)
	for p := range all {
		all[p] = int32(p)
	}
	for l, s := range streams {
		c, err := snapkv.NewCacheOf[E](snapkv.CacheConfig{Select: sel, QHeads: hq, KVHeads: hk, Dim: d, Decode: dec})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Prefill(s.prompt(prompt, prompt, snapkv.HeadMajor)); err != nil {
			t.Fatal(err)
		}
		for h := range hk {
			for r := range prompt {
				q := make([]float32, 0, g*d)
				for j := range g {
					q = append(q, s.q[((h*g+j)*s.n+r)*d:((h*g+j)*s.n+r+1)*d]...)
				}
				raise(s, h, q, all, int32(r))
			}
		}
		caches[l] = c
	}
	out := make([]float32, hq*d)
	compressed := 0
	for tok := prompt; tok < prompt+steps; tok++ {
		for l, s := range streams {
			c := caches[l]
			if err := c.Append(s.token(s.k, tok), s.token(s.v, tok)); err != nil {
				t.Fatal(err)
			}
			q := s.query(tok)
			before := make([][]int32, hk)
			for h := range hk {
				_, _, pos := c.Head(h)
				before[h] = slices.Clone(pos)
				raise(s, h, q[h*g*d:(h+1)*g*d], before[h], int32(tok))
			}
			if err := c.Attend(out, q); err != nil {
				t.Fatal(err)
			}
			for h := range hk {
				_, _, pos := c.Head(h)
				if len(before[h]) < dec.Budget+dec.Interval {
					continue
				}
				compressed++
				idx := make([]int32, len(pos))
				for i, p := range pos {
					j, ok := slices.BinarySearch(before[h], p)
					if !ok {
						t.Fatalf("layer %d token %d head %d: kept position %d it did not hold", l, tok, h, p)
					}
					idx[i] = int32(j)
				}
				checkDecodeRule(t, fmt.Sprintf("layer %d token %d head %d", l, tok, h), s, tc, h, before[h], idx, nil, nil, best)
			}
		}
	}
	if compressed == 0 {
		t.Error("no layer compressed")
	}
}

// TestDecodeBudgetAttendTwice: a second Attend at the same position (an engine that
// recomputes a token) replaces that position's window query, so a cache that first
// attends with a wrong query and then with the right one (where the first call does
// not compress) keeps what a cache attending once keeps; and DecodeRecent and
// DecodeLongRange (a maximum) keep the same rows when a token attends twice alike.
func TestDecodeBudgetAttendTwice(t *testing.T) {
	const hq, hk, d, prompt, steps = 4, 2, 32, 20, 40
	s := newStream[fp16.Float16](rand.New(rand.NewPCG(9, 9)), hq, hk, prompt+steps, d)
	for _, rule := range []snapkv.DecodeRule{snapkv.DecodeSnapKV, snapkv.DecodeRecent, snapkv.DecodeLongRange} { // H2O sums every call
		sel := snapkv.Config{Budget: 64, Window: 4, Kernel: 3, Sinks: 2, Rule: snapkv.RuleProtected}
		dec := snapkv.DecodeBudget{Budget: 16, Interval: 3, Rule: rule}
		cfg := snapkv.CacheConfig{Select: sel, QHeads: hq, KVHeads: hk, Dim: d, Decode: dec}
		once, err := snapkv.NewCache(cfg)
		if err != nil {
			t.Fatal(err)
		}
		twice, _ := snapkv.NewCache(cfg)
		for _, c := range []*snapkv.Cache{once, twice} {
			if err := c.Prefill(s.prompt(prompt, prompt, snapkv.HeadMajor)); err != nil {
				t.Fatal(err)
			}
		}
		out := make([]float32, hq*d)
		for tok := prompt; tok < prompt+steps; tok++ {
			for _, c := range []*snapkv.Cache{once, twice} {
				if err := c.Append(s.token(s.k, tok), s.token(s.v, tok)); err != nil {
					t.Fatal(err)
				}
			}
			first := s.query(tok)
			if _, _, pos := twice.Head(0); rule == snapkv.DecodeSnapKV && len(pos) < dec.Budget+dec.Interval {
				first = s.query(tok - prompt/2) // replaced by the next call before any compression reads it
			}
			for _, err := range []error{once.Attend(out, s.query(tok)), twice.Attend(out, first), twice.Attend(out, s.query(tok))} {
				if err != nil {
					t.Fatal(err)
				}
			}
			for h := range hk {
				_, _, a := once.Head(h)
				_, _, b := twice.Head(h)
				if !slices.Equal(a, b) {
					t.Fatalf("rule %d token %d head %d: once %v, twice %v", rule, tok, h, a, b)
				}
			}
		}
		if once.Stats().Compressions == 0 {
			t.Errorf("rule %d never compressed", rule)
		}
	}
}
