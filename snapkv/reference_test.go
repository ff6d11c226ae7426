package snapkv_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/internal/longtest"
	"github.com/kvsimd/kvsimd/internal/varianttest"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/snapkv"
	"github.com/x448/float16"
)

// This file checks Select against an independent float64 implementation of SnapKV
// written from the design notes, on random GQA shapes. The float32 pipeline may order
// two positions whose float64 votes differ by less than its rounding either way, so
// the check is that the kept set is optimal up to a tolerance: every protected row is
// kept, and no dropped row's float64 vote beats a kept one's by more than tol.

// refTol is the tolerance, relative to the largest pooled vote of the head. Every
// vote is a sum of probabilities each within about |δ| (relative) of float64, where δ
// is the float32 error of its logit (DotF32F16's bound: ≲ 2·Dim·2⁻²⁴·Σ|qk|/√Dim, about
// 1e-4 at Dim 128 for these inputs) plus the softmax's 4 ulp.
const refTol = 2e-4

// problem is one random layer.
type problem struct {
	q      []float32
	k      []fp16.Float16
	hq, hk int
	n, w   int // Len and the (clamped) window
	d      int
	scale  float64 // the scores' scale; 0 means 1/√d
}

func newProblem(r *rand.Rand, hq, hk, n, w, d int) *problem {
	p := &problem{hq: hq, hk: hk, n: n, w: min(w, n), d: d}
	p.k = make([]fp16.Float16, hk*n*d)
	for i := range p.k {
		p.k[i] = float16.Fromfloat32(float32(r.NormFloat64()))
	}
	// Queries near a few random keys of their KV head, so that attention is peaked as
	// in a real model (random queries give flat votes: all cuts near ties).
	p.q = make([]float32, hq*p.w*d)
	g := hq / hk
	for h := range hq {
		kv := h / g
		for row := range p.w {
			target := r.IntN(n)
			for i := range d {
				kq := p.k[(kv*n+target)*d+i].Float32()
				p.q[(h*p.w+row)*d+i] = 0.5*kq + float32(r.NormFloat64())
			}
		}
	}
	return p
}

// refProbs returns the float64 causal softmax of query head h's window rows [W][L]
// against KV head kv, with queries q [W][D] (nil: the last W keys of kv).
func (p *problem) refProbs(q []float32, kv int) [][]float64 {
	n, w, d := p.n, p.w, p.d
	scale := p.scale
	if scale == 0 {
		scale = 1 / math.Sqrt(float64(d))
	}
	probs := make([][]float64, w)
	for r := range w {
		seen := n - w + r + 1
		row := make([]float64, n)
		m := math.Inf(-1)
		for j := range seen {
			var s float64
			for i := range d {
				var qi float64
				if q == nil {
					qi = float64(p.k[(kv*n+n-w+r)*d+i].Float32())
				} else {
					qi = float64(q[r*d+i])
				}
				s += qi * float64(p.k[(kv*n+j)*d+i].Float32())
			}
			row[j] = s * scale
			m = max(m, row[j])
		}
		var sum float64
		for j := range seen {
			row[j] = math.Exp(row[j] - m)
			sum += row[j]
		}
		for j := range seen {
			row[j] /= sum
		}
		probs[r] = row
	}
	return probs
}

// refVotes returns every KV head's float64 vote row [L]: window sums of the group's
// query heads (or of the key proxy), reduced by group.
func (p *problem) refVotes(src string, group snapkv.Group, attn [][][]float64) [][]float64 {
	g := p.hq / p.hk
	if src == "keys" {
		g = 1
	}
	votes := make([][]float64, p.hk)
	for kv := range p.hk {
		acc := make([]float64, p.n)
		for i := range g {
			h := kv*g + i
			var probs [][]float64
			switch src {
			case "keys":
				probs = p.refProbs(nil, kv)
			default:
				probs = attn[h]
			}
			for j := range p.n {
				var s float64
				for r := range p.w {
					s += probs[r][j]
				}
				switch {
				case i == 0:
					acc[j] = s
				case group == snapkv.GroupMax:
					acc[j] = max(acc[j], s)
				default:
					acc[j] += s
				}
			}
		}
		if group == snapkv.GroupMean {
			for j := range acc {
				acc[j] /= float64(g)
			}
		}
		votes[kv] = acc
	}
	return votes
}

// refPool pools x as PyTorch's avg_pool1d (count_include_pad) or max_pool1d, stride 1,
// padding kernel/2.
func refPool(x []float64, kernel int, pool snapkv.Pool) []float64 {
	out := make([]float64, len(x))
	for i := range x {
		s, m := 0.0, math.Inf(-1)
		for j := i - kernel/2; j <= i+kernel/2; j++ {
			if j >= 0 && j < len(x) {
				s += x[j]
				m = max(m, x[j])
			}
		}
		if pool == snapkv.PoolMax {
			out[i] = m
		} else {
			out[i] = s / float64(kernel)
		}
	}
	return out
}

// refPooled is every head's pooled float64 votes as the rule sees them: over the
// prefix [0, L−W) (paper) or all of [0, L) (protected).
func refPooled(votes [][]float64, cfg snapkv.Config, n, w int) [][]float64 {
	out := make([][]float64, len(votes))
	for h, v := range votes {
		if cfg.Rule == snapkv.RulePaper {
			v = v[:n-w]
		}
		out[h] = refPool(v, cfg.Kernel, cfg.Pool)
	}
	return out
}

// checkKept holds the kept rows of every head to the float64 pooled votes: protected
// rows kept, the rest an optimal choice up to refTol. budgets[h] is the number of rows
// head h must keep.
func checkKept(t *testing.T, what string, got [][]int32, pooled [][]float64, cfg snapkv.Config, n, w int, budgets []int) {
	t.Helper()
	sinks := 0
	if cfg.Rule == snapkv.RuleProtected {
		sinks = cfg.Sinks
	}
	for h, rows := range got {
		if len(rows) != budgets[h] {
			t.Fatalf("%s head %d: kept %d rows, want %d", what, h, len(rows), budgets[h])
		}
		if !slices.IsSorted(rows) || len(slices.Compact(slices.Clone(rows))) != len(rows) {
			t.Fatalf("%s head %d: rows not strictly ascending: %v", what, h, rows)
		}
		for i := range sinks {
			if rows[i] != int32(i) {
				t.Fatalf("%s head %d: sink %d not kept: %v", what, h, i, rows[:sinks])
			}
		}
		for i := range w {
			if rows[len(rows)-w+i] != int32(n-w+i) {
				t.Fatalf("%s head %d: window row %d not kept", what, h, n-w+i)
			}
		}
		if rows[len(rows)-w-1] >= int32(n-w) && len(rows) > sinks+w {
			t.Fatalf("%s head %d: bad rows %v", what, h, rows)
		}
		kept := make([]bool, n)
		for _, r := range rows {
			kept[r] = true
		}
		minKept, maxDropped, top := math.Inf(1), math.Inf(-1), 0.0
		for i := sinks; i < n-w; i++ {
			v := pooled[h][i]
			top = max(top, v)
			if kept[i] {
				minKept = min(minKept, v)
			} else {
				maxDropped = max(maxDropped, v)
			}
		}
		if maxDropped > minKept+refTol*top {
			t.Errorf("%s head %d: dropped a row with vote %v, kept one with %v (tolerance %v)",
				what, h, maxDropped, minKept, refTol*top)
		}
	}
}

// TestFloat64 runs GQA shapes through every source, rule, pooling and group reduction
// on every variant and checks them against the float64 implementation.
func TestFloat64(t *testing.T) {
	type shape struct{ hk, g, n, w, d int }
	shapes := []shape{
		{2, 1, 100, 8, 64}, {2, 2, 257, 16, 128}, {1, 4, 700, 32, 64}, {2, 8, 1024, 32, 128},
		{1, 1, 8192, 32, 128},
	}
	if longtest.Short() {
		shapes = shapes[:3]
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, sh := range shapes {
		p := newProblem(r, sh.hk*sh.g, sh.hk, sh.n, sh.w, sh.d)
		attn := make([][][]float64, p.hq)
		flat := make([]float32, 0, p.hq*p.w*p.n)
		for h := range p.hq {
			attn[h] = p.refProbs(p.q[h*p.w*p.d:(h+1)*p.w*p.d], h/sh.g)
			for _, row := range attn[h] {
				for _, v := range row {
					flat = append(flat, float32(v))
				}
			}
		}
		for _, src := range []string{"queries", "attn", "keys"} {
			in := snapkv.Input{K: p.k, QHeads: p.hq, KVHeads: p.hk, Len: p.n, Dim: p.d}
			switch src {
			case "queries":
				in.Q = p.q
			case "attn":
				in.Attn = flat
			}
			for _, group := range []snapkv.Group{snapkv.GroupMean, snapkv.GroupMax, snapkv.GroupSum} {
				if src == "keys" && group != snapkv.GroupMean {
					continue // one "query head" per KV head: nothing to reduce
				}
				votes := p.refVotes(src, group, attn)
				for _, cfg := range []snapkv.Config{
					{Budget: sh.n / 4, Window: sh.w, Kernel: 5, Rule: snapkv.RulePaper},
					{Budget: sh.n / 3, Window: sh.w, Kernel: 7, Rule: snapkv.RuleProtected, Sinks: 4, Pool: snapkv.PoolMax, Workers: 3},
					{KeepRatio: 0.3, Window: sh.w, Kernel: 1, Rule: snapkv.RuleProtected, Sinks: 1, Workers: 2},
				} {
					cfg.Group = group
					pooled := refPooled(votes, cfg, p.n, p.w)
					c := cfg.Budget
					if c == 0 {
						c = int(math.Ceil(cfg.KeepRatio * float64(p.n)))
					}
					budgets := slices.Repeat([]int{c}, p.hk)
					varianttest.Each(t, func(variant string) {
						got, err := snapkv.Select(cfg, in)
						if err != nil {
							t.Fatal(err)
						}
						what := fmt.Sprintf("%s %s Hq=%d Hkv=%d L=%d W=%d D=%d group=%d %+v", variant, src, p.hq, p.hk, p.n, p.w, p.d, group, cfg)
						checkKept(t, what, got, pooled, cfg, p.n, p.w, budgets)
					})
				}
			}
		}
	}
}

// TestAdaptiveFloat64 holds AllocAdaptive to the float64 votes: the heads' rows sum to
// C·KVHeads, every head keeps its protected rows and at least its floor, each head's
// picks are its best rows, and every pick beyond a head's floor beats every row left
// out in any head (up to refTol).
func TestAdaptiveFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	shapes := []struct{ hk, g, n, w, d int }{{4, 2, 300, 8, 32}, {8, 4, 1000, 32, 64}}
	if longtest.Short() {
		shapes = shapes[:1]
	}
	for _, sh := range shapes {
		p := newProblem(r, sh.hk*sh.g, sh.hk, sh.n, sh.w, sh.d)
		// Different heads attend differently: sharpen some heads' queries.
		for h := range p.hq {
			for i := range p.w * p.d {
				p.q[h*p.w*p.d+i] *= float32(1 + h%3)
			}
		}
		attn := make([][][]float64, p.hq)
		for h := range p.hq {
			attn[h] = p.refProbs(p.q[h*p.w*p.d:(h+1)*p.w*p.d], h/sh.g)
		}
		votes := p.refVotes("queries", snapkv.GroupMean, attn)
		in := snapkv.Input{Q: p.q, K: p.k, QHeads: p.hq, KVHeads: p.hk, Len: p.n, Dim: p.d}
		for _, cfg := range []snapkv.Config{
			{Budget: sh.n / 5, Window: sh.w, Kernel: 5, Alloc: snapkv.AllocAdaptive, Floor: 0.2, Workers: 2},
			{Budget: sh.n / 4, Window: sh.w, Kernel: 5, Alloc: snapkv.AllocAdaptive, Rule: snapkv.RuleProtected, Sinks: 4},
			{Budget: sh.n / 3, Window: sh.w, Kernel: 3, Alloc: snapkv.AllocAdaptive, Floor: 0.5, Pool: snapkv.PoolMax},
		} {
			pooled := refPooled(votes, cfg, p.n, p.w)
			varianttest.Each(t, func(variant string) {
				got, err := snapkv.Select(cfg, in)
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("%s Hkv=%d L=%d %+v", variant, p.hk, p.n, cfg)
				checkAdaptive(t, what, got, pooled, cfg, p.n, p.w)
			})
		}
	}
}

func checkAdaptive(t *testing.T, what string, got [][]int32, pooled [][]float64, cfg snapkv.Config, n, w int) {
	t.Helper()
	sinks := 0
	if cfg.Rule == snapkv.RuleProtected {
		sinks = cfg.Sinks
	}
	free := cfg.Budget - sinks - w
	floor := int(cfg.Floor * float64(free))
	total, top := 0, 0.0
	for _, v := range pooled {
		for _, x := range v[sinks : n-w] {
			top = max(top, x)
		}
	}
	tol := refTol * top
	var budgets []int
	beyondFloor, dropped := math.Inf(1), math.Inf(-1)
	for h, rows := range got {
		total += len(rows)
		if len(rows) < sinks+w+floor {
			t.Fatalf("%s head %d: kept %d rows, below its floor %d", what, h, len(rows), sinks+w+floor)
		}
		budgets = append(budgets, len(rows))
		var picks []float64
		kept := make([]bool, n)
		for _, r := range rows[sinks : len(rows)-w] {
			kept[r] = true
			picks = append(picks, pooled[h][r])
		}
		for i := sinks; i < n-w; i++ {
			if !kept[i] {
				dropped = max(dropped, pooled[h][i])
			}
		}
		slices.Sort(picks)
		slices.Reverse(picks)
		if len(picks) > floor {
			beyondFloor = min(beyondFloor, picks[len(picks)-1])
		}
	}
	if total != cfg.Budget*len(got) {
		t.Fatalf("%s: kept %d rows in all, want C·KVHeads = %d", what, total, cfg.Budget*len(got))
	}
	// Each head's own picks are its best (the per-head check of checkKept), and picks
	// beyond the floor beat every drop.
	checkKept(t, what, got, pooled, cfg, n, w, budgets)
	if dropped > beyondFloor+tol {
		t.Errorf("%s: a row with vote %v was left out while a head won one with %v beyond its floor", what, dropped, beyondFloor)
	}
}
