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
	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// TestScaleFloat64: Input.Scale is the scale of the window scores: the kept rows are
// the best by the float64 votes at that scale (up to refTol), from the queries and
// from the key proxy.
func TestScaleFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, sh := range []struct{ hk, g, n, w, d int }{{2, 1, 100, 8, 64}, {1, 4, 700, 32, 64}} {
		p := newProblem(r, sh.hk*sh.g, sh.hk, sh.n, sh.w, sh.d)
		p.scale = 0.6 / math.Sqrt(float64(sh.d))
		for _, src := range []string{"queries", "keys"} {
			in := snapkv.Input{K: p.k, QHeads: p.hq, KVHeads: p.hk, Len: p.n, Dim: p.d, Scale: float32(p.scale)}
			attn := make([][][]float64, p.hq)
			if src == "queries" {
				in.Q = p.q
				for h := range p.hq {
					attn[h] = p.refProbs(p.q[h*p.w*p.d:(h+1)*p.w*p.d], h/sh.g)
				}
			} else {
				for h := range p.hk {
					attn[h] = p.refProbs(nil, h)
				}
			}
			cfg := snapkv.Config{Budget: sh.n / 4, Window: sh.w, Kernel: 5, Rule: snapkv.RuleProtected, Sinks: 2}
			got, err := snapkv.Select(cfg, in)
			if err != nil {
				t.Fatal(err)
			}
			pooled := refPooled(p.refVotes(src, snapkv.GroupMean, attn), cfg, p.n, p.w)
			what := fmt.Sprintf("%s Hq=%d Hkv=%d L=%d scale %.4f", src, p.hq, p.hk, p.n, p.scale)
			checkKept(t, what, got, pooled, cfg, p.n, p.w, slices.Repeat([]int{cfg.Budget}, p.hk))
		}
	}
}

// TestCacheScale: CacheConfig.Scale is the scale of the cache's attention, prompt and
// decode, against float64; Scale = 1/√Dim given explicitly is Scale 0's bits, in the
// outputs and in the rows kept by the prompt's selection and the decode budget.
func TestCacheScale(t *testing.T) {
	t.Run("fp16", testCacheScale[fp16.Float16])
	t.Run("bf16", testCacheScale[bf16.BFloat16])
	t.Run("q8_0", testCacheScale[q8.Block])
	t.Run("f32", testCacheScale[float32])
}

func testCacheScale[E snapkv.Element](t *testing.T) {
	const hq, hk, n, d = 4, 2, 96, 64
	g := hq / hk
	for _, layout := range []snapkv.Layout{snapkv.HeadMajor, snapkv.TokenMajor} {
		r := rand.New(rand.NewPCG(7, uint64(layout)))
		p := newPrefillPrompt[E](r, hq, hk, n, d)
		cache := func(scale float32) *snapkv.CacheOf[E] {
			c, err := snapkv.NewCacheOf[E](snapkv.CacheConfig{
				Select: snapkv.Config{Budget: 40, Window: 8, Kernel: 3, Rule: snapkv.RuleProtected, Sinks: 2},
				QHeads: hq, KVHeads: hk, Dim: d, Layout: layout, Scale: scale, Reserve: 8,
				Decode: snapkv.DecodeBudget{Budget: 36, Interval: 2, Rule: snapkv.DecodeH2O}})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		const scale = 0.45
		def, explicit, scaled := cache(0), cache(float32(1/math.Sqrt(d))), cache(scale)
		outs := make([][]float32, 3)
		for i, c := range []*snapkv.CacheOf[E]{def, explicit, scaled} {
			outs[i] = make([]float32, hq*n*d)
			if err := c.PrefillAttend(outs[i], p.chunk(0, n, layout, true)); err != nil {
				t.Fatal(err)
			}
		}
		if !sameBits(outs[0], outs[1]) {
			t.Fatalf("layout %d: PrefillAttend with Scale 1/√Dim differs from Scale 0", layout)
		}
		// The prompt's selection took the scale: the rows Select keeps at Input.Scale.
		const win = 8
		qwin := make([]float32, 0, hq*win*d)
		for j := range hq {
			qwin = append(qwin, p.q[(j*n+n-win)*d:(j+1)*n*d]...)
		}
		sel, err := snapkv.Select(snapkv.Config{Budget: 40, Window: win, Kernel: 3, Rule: snapkv.RuleProtected, Sinks: 2},
			snapkv.InputOf[E]{Q: qwin, K: p.k, QHeads: hq, KVHeads: hk, Len: n, Dim: d, Scale: scale})
		if err != nil {
			t.Fatal(err)
		}
		for h := range hk {
			if _, _, pos := scaled.Head(h); !slices.Equal(pos, sel[h]) {
				t.Fatalf("layout %d head %d: the cache keeps %v, Select at its scale %v", layout, h, pos, sel[h])
			}
		}
		// The scaled prompt's attention against float64, every query head and position.
		w := perRow[E](d)
		at := func(j, i int) int {
			if layout == snapkv.TokenMajor {
				return (i*hq + j) * d
			}
			return (j*n + i) * d
		}
		for h := range hk {
			kf, vf := widenFrom(p.k[h*n*w:(h+1)*n*w]), widenFrom(p.v[h*n*w:(h+1)*n*w])
			key := func(j, e int) float64 { return float64(kf[j*d+e]) }
			value := func(j, e int) float64 { return float64(vf[j*d+e]) }
			extra := 4 * 0x1p-24
			if w != d {
				extra += float64(n) * 0x1p-24
			}
			for r := range g {
				j := h*g + r
				for i := range n {
					ref := oracle.Attend(p.q[(j*n+i)*d:][:d], key, value, 1, i+1, d, scale, extra)[0]
					for e := range d {
						if err := ref.Check(e, outs[2][at(j, i)+e]); err != nil {
							t.Fatalf("layout %d: query head %d position %d out[%d]: %v", layout, j, i, e, err)
						}
					}
				}
			}
		}
		// Decode: the same tokens into each cache; the scaled one against float64.
		for step := range 6 {
			k, v := batchRows[E](t, r, hk*d), batchRows[E](t, r, hk*d)
			q := make([]float32, hq*d)
			for i := range q {
				q[i] = float32(r.NormFloat64())
			}
			var heldK, heldV [][]E // what the scaled cache attends to: its rows before Attend compresses them
			for i, c := range []*snapkv.CacheOf[E]{def, explicit, scaled} {
				if err := c.Append(k, v); err != nil {
					t.Fatal(err)
				}
				if c == scaled {
					heldK, heldV = held(c, hk)
				}
				outs[i] = make([]float32, hq*d)
				if err := c.Attend(outs[i], q); err != nil {
					t.Fatal(err)
				}
			}
			if !sameBits(outs[0], outs[1]) {
				t.Fatalf("layout %d step %d: Attend with Scale 1/√Dim differs from Scale 0", layout, step)
			}
			for h := range hk {
				_, _, a := def.Head(h)
				_, _, b := explicit.Head(h)
				if !slices.Equal(a, b) {
					t.Fatalf("layout %d step %d head %d: Scale 1/√Dim keeps %v, Scale 0 %v", layout, step, h, b, a)
				}
				kf, vf := widenFrom(heldK[h]), widenFrom(heldV[h])
				key := func(j, e int) float64 { return float64(kf[j*d+e]) }
				value := func(j, e int) float64 { return float64(vf[j*d+e]) }
				rows := len(heldK[h]) / w
				extra := 0.0
				if w != d {
					extra = float64(rows) * 0x1p-24
				}
				ref := oracle.Attend(q[h*g*d:(h+1)*g*d], key, value, g, rows, d, scale, extra)
				for r := range g {
					for e := range d {
						if err := ref[r].Check(e, outs[2][(h*g+r)*d+e]); err != nil {
							t.Fatalf("layout %d step %d: query head %d out[%d]: %v", layout, step, h*g+r, e, err)
						}
					}
				}
			}
		}
	}
}

// TestScaleErrors: a negative, NaN or infinite scale is a configuration error.
func TestScaleErrors(t *testing.T) {
	for _, s := range []float32{-1, float32(math.NaN()), float32(math.Inf(1))} {
		_, err := snapkv.NewCache(snapkv.CacheConfig{Select: snapkv.Config{Budget: 4, Window: 1, Kernel: 1}, QHeads: 2, KVHeads: 1, Dim: 8, Scale: s})
		if err == nil || !strings.Contains(err.Error(), "CacheConfig.Scale") {
			t.Errorf("Scale %v: %v", s, err)
		}
		_, err = snapkv.Select(snapkv.Config{Budget: 4, Window: 1, Kernel: 1},
			snapkv.Input{K: make([]fp16.Float16, 8*8), QHeads: 1, KVHeads: 1, Len: 8, Dim: 8, Scale: s})
		if err == nil || !strings.Contains(err.Error(), "Input.Scale") {
			t.Errorf("Input.Scale %v: %v", s, err)
		}
	}
}
