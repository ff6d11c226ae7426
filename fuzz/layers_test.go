package fuzz

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/snapkv"
)

// FuzzLayers drives a LayersOf with fuzzed configurations and per-layer chunk
// sequences, misuse included, and requires that it never panics, that every error names
// the package, and that a twin given the same chunks token-major answers alike. Without
// shared votes each layer must answer as a CacheOf of its budget given its chunks. With
// shared votes, once every layer's prompt was accepted, every layer must hold exactly
// the rows that a one-shot Select keeps with engine attention computed here from the
// public kernels (each vote layer's window scores by kernels.Scores, the masked columns
// at −Inf, kernels.Softmax, summed in vote order and divided by their count), at their
// positions, as given. Each op byte is one chunk: bits 0-2 its length, bits 3-4 its
// queries (0 all rows, 1 the last Window rows, 2 none, 3 a malformed K), bits 5-6 its
// layer (mod Layers), bit 7 Last; a layer whose prompt has not ended gets an empty Last
// chunk after the ops. votes is a bit set of vote layers (0: none listed, every layer
// votes); enums bit 0 shared votes, bit 1 the vote layers in descending order, bit 2
// per-layer budgets (Budget + layer), bit 3 RuleProtected with a sink, bit 4 max pooling,
// bits 5-6 the group reduction.
func FuzzLayers(f *testing.F) {
	f.Add(uint8(3), uint8(0), int16(6), uint8(3), uint8(3), uint8(1), uint8(2), uint8(8), uint8(1), []byte{7, 7 | 32, 7 | 64, 128 | 7, 128 | 32 | 7, 128 | 64 | 7}, []byte{0x00, 0x3c, 0x00, 0xbc})
	f.Add(uint8(3), uint8(2), int16(5), uint8(2), uint8(1), uint8(1), uint8(2), uint8(4), uint8(1|4|8), []byte{5, 32 | 7, 128 | 8 | 3, 128 | 32 | 8 | 1, 64 | 16 | 7, 128 | 64 | 8 | 1}, []byte{1, 2, 3})
	f.Add(uint8(2), uint8(3), int16(4), uint8(2), uint8(3), uint8(2), uint8(1), uint8(4), uint8(1|2|16|32), []byte{128 | 32 | 6, 128 | 6}, []byte{})
	f.Add(uint8(2), uint8(1), int16(4), uint8(2), uint8(1), uint8(1), uint8(1), uint8(4), uint8(1), []byte{128 | 24 | 5, 128 | 32 | 5, 128 | 32 | 4}, []byte{0xff, 0x7b})
	f.Add(uint8(3), uint8(0), int16(4), uint8(2), uint8(3), uint8(1), uint8(2), uint8(4), uint8(4|8), []byte{7, 32 | 16 | 7, 128 | 64 | 3, 128 | 1, 128 | 32 | 1}, []byte{9})
	f.Fuzz(func(t *testing.T, layers, votes uint8, budget int16, window, kernel, kvHeads, group, dim, enums uint8, ops, data []byte) {
		lc := snapkv.LayersConfig{Layers: int(layers), SharedVotes: enums&1 != 0,
			Cache: snapkv.CacheConfig{
				Select: snapkv.Config{Budget: int(budget), Window: int(window), Kernel: int(kernel),
					Pool: snapkv.Pool(enums >> 4 & 1), Group: snapkv.Group(enums >> 5 & 3), Workers: 2},
				QHeads: int(kvHeads) * int(group), KVHeads: int(kvHeads), Dim: int(dim),
			}}
		if enums&8 != 0 {
			lc.Cache.Select.Rule, lc.Cache.Select.Sinks = snapkv.RuleProtected, 1
		}
		for l := range 8 {
			if votes>>l&1 != 0 {
				lc.VoteLayers = append(lc.VoteLayers, l)
			}
		}
		if enums&2 != 0 {
			slices.Reverse(lc.VoteLayers)
		}
		if enums&4 != 0 && layers <= 8 {
			for l := range int(layers) {
				lc.Budgets = append(lc.Budgets, int(budget)+l)
			}
		}
		s, err := snapkv.NewLayers(lc)
		if err != nil {
			checkErr(t, err)
			return
		}
		if layers > 4 || kvHeads > 2 || group > 3 || dim > 16 || len(ops) > 16 {
			return // valid but too big to fuzz quickly
		}
		twinCfg := lc
		twinCfg.Cache.Layout = snapkv.TokenMajor
		twin, err := snapkv.NewLayers(twinCfg)
		if err != nil {
			t.Fatalf("token-major twin: %v", err)
		}
		// Without shared votes, each layer alone.
		alone := make([]*snapkv.Cache, layers)
		for l := range alone {
			cc := lc.Cache
			if lc.Budgets != nil {
				cc.Select.Budget = lc.Budgets[l]
			}
			if alone[l], err = snapkv.NewCache(cc); err != nil {
				t.Fatalf("layer %d's cache alone: %v", l, err)
			}
		}
		hk, hq, d := lc.Cache.KVHeads, lc.Cache.QHeads, lc.Cache.Dim
		halves := uint16s(data)
		// Position p of layer l: key element i of KV head h, query element i of query head h.
		key := func(l, p, h, i int) fp16.Float16 {
			x := l*7919 + p*131 + h*31 + i
			if len(halves) > 0 {
				return fp16.Float16(halves[x%len(halves)])
			}
			return fp16.Float16(0x3800 + x%61)
		}
		query := func(l, p, h, i int) float32 { return float32((l+p*3+h*5+i)%13) - 6 }
		chunk := func(l, at, m int) (k, v []fp16.Float16, q []float32) {
			k, v, q = make([]fp16.Float16, hk*m*d), make([]fp16.Float16, hk*m*d), make([]float32, hq*m*d)
			for h := range hk {
				for p := range m {
					for i := range d {
						k[(h*m+p)*d+i] = key(l, at+p, h, i)
						v[(h*m+p)*d+i] = ^key(l, at+p, h, i)
					}
				}
			}
			for h := range hq {
				for p := range m {
					for i := range d {
						q[(h*m+p)*d+i] = query(l, at+p, h, i)
					}
				}
			}
			return k, v, q
		}
		at := make([]int, layers)
		ended := make([]bool, layers)
		accepted := true
		feed := func(l int, ch snapkv.Chunk, malformed bool) {
			err := s.Prefill(l, ch)
			tch := ch
			if !malformed {
				m := len(ch.K) / (hk * d)
				tch.K, tch.V = oracle.TokenMajor(ch.K, hk, m, d), oracle.TokenMajor(ch.V, hk, m, d)
				if ch.Q != nil {
					tch.Q = oracle.TokenMajor(ch.Q, hq, len(ch.Q)/(hq*d), d)
				}
			}
			sameErr(t, "Prefill", err, twin.Prefill(l, tch))
			if !lc.SharedVotes {
				errAlone := alone[l].Prefill(ch)
				if (err == nil) != (errAlone == nil) || err != nil && err.Error() != fmt.Sprintf("snapkv: layer %d: %s", l, strings.TrimPrefix(errAlone.Error(), "snapkv: ")) {
					t.Fatalf("layer %d: Prefill error %v, the layer's cache alone %v", l, err, errAlone)
				}
				sameHeads(t, s.Layer(l), alone[l], hk)
			}
			for l := range int(layers) {
				sameHeads(t, s.Layer(l), twin.Layer(l), hk)
			}
			if err != nil {
				checkErr(t, err)
				accepted = false
				return
			}
			at[l] += len(ch.K) / (hk * d)
			ended[l] = ended[l] || ch.Last
		}
		for _, op := range ops {
			l, m := int(op>>5&3)%int(layers), int(op&7)
			k, v, q := chunk(l, at[l], m)
			ch := snapkv.Chunk{K: k, V: v, Last: op&128 != 0}
			switch op >> 3 & 3 {
			case 0:
				ch.Q = q
			case 1:
				w := min(m, lc.Cache.Select.Window)
				ch.Q = rows(q, hq, m, d, m-w, m)
			case 3:
				ch.K = ch.K[:max(len(ch.K)-1, 0)]
			}
			feed(l, ch, op>>3&3 == 3)
		}
		for l := range int(layers) {
			if !ended[l] {
				feed(l, snapkv.Chunk{Last: true}, false)
			}
		}
		if !accepted || !lc.SharedVotes {
			return
		}
		n := at[0]
		w := min(lc.Cache.Select.Window, n)
		voters := lc.VoteLayers
		if len(voters) == 0 {
			for l := range int(layers) {
				voters = append(voters, l)
			}
		}
		attn := make([]float32, hq*w*n)
		block := make([]float32, w*n)
		for _, l := range voters {
			k, _, q := chunk(l, 0, n)
			for j := range hq {
				kh := k[j/(hq/hk)*n*d : (j/(hq/hk)+1)*n*d]
				kernels.Scores(block, q[(j*n+n-w)*d:(j*n+n)*d], kh, w, n, d, float32(1/math.Sqrt(float64(d))))
				for r := range w {
					row := block[r*n : (r+1)*n]
					for c := n - w + r + 1; c < n; c++ {
						row[c] = float32(math.Inf(-1))
					}
					kernels.Softmax(row)
				}
				kernels.Add(attn[j*w*n:(j+1)*w*n], block)
			}
		}
		for i := range attn {
			attn[i] /= float32(len(voters))
		}
		for l := range int(layers) {
			cfg := lc.Cache.Select
			if lc.Budgets != nil {
				cfg.Budget = lc.Budgets[l]
			}
			want, err := snapkv.Select(cfg, snapkv.Input{Attn: attn, QHeads: hq, KVHeads: hk, Len: n, Dim: d})
			if err != nil {
				t.Fatalf("one-shot Select with the shared attention: %v", err)
			}
			k, v, _ := chunk(l, 0, n)
			for h := range hk {
				gk, gv, pos := s.Layer(l).Head(h)
				if !slices.Equal(pos, want[h]) {
					t.Fatalf("layer %d head %d: positions %v, one shot %v", l, h, pos, want[h])
				}
				for j, p := range pos {
					src := (h*n + int(p)) * d
					if !slices.Equal(gk[j*d:(j+1)*d], k[src:src+d]) || !slices.Equal(gv[j*d:(j+1)*d], v[src:src+d]) {
						t.Fatalf("layer %d head %d row %d (position %d) differs from what was given", l, h, j, p)
					}
				}
			}
		}
	})
}
