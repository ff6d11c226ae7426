package snapkv_test

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/snapkv"
)

// ExampleCache prefills one layer of a 64-token prompt in two chunks, compresses it to
// 16 rows per KV head, decodes two tokens and reads head 0 back with its positions.
func ExampleCache() {
	const qHeads, kvHeads, dim, prompt = 4, 2, 8, 64
	c, err := snapkv.NewCache(snapkv.CacheConfig{
		Select:  snapkv.Config{Budget: 16, Window: 8, Kernel: 5},
		QHeads:  qHeads,
		KVHeads: kvHeads,
		Dim:     dim,
		Reserve: 32, // decode rows per head that append without allocating
	})
	if err != nil {
		panic(err)
	}

	// Stand-ins for an engine's post-RoPE rows: positions 0..39, then 40..63, with the
	// queries of each chunk's last Window positions.
	r := rand.New(rand.NewPCG(1, 2))
	halves := func(n int) []fp16.Float16 {
		h := make([]fp16.Float16, n)
		for i := range h {
			h[i] = fp16.Float16(r.IntN(0x3c00)) // values in [0, 1)
		}
		return h
	}
	floats := func(n int) []float32 {
		f := make([]float32, n)
		for i := range f {
			f[i] = float32(r.NormFloat64())
		}
		return f
	}
	for _, ch := range []struct {
		rows int
		last bool
	}{{40, false}, {24, true}} {
		err := c.Prefill(snapkv.Chunk{
			K:    halves(kvHeads * ch.rows * dim),
			V:    halves(kvHeads * ch.rows * dim),
			Q:    floats(qHeads * 8 * dim), // [QHeads][min(rows, Window)][Dim]
			Last: ch.last,
		})
		if err != nil {
			panic(err)
		}
	}

	// Decode: each token's K and V rows [KVHeads][Dim] go after the kept ones.
	for range 2 {
		if err := c.Append(halves(kvHeads*dim), halves(kvHeads*dim)); err != nil {
			panic(err)
		}
	}

	k, _, pos := c.Head(0)
	fmt.Println("next position:", c.Offset())
	fmt.Println("head 0 rows:", len(pos), "K elements:", len(k))
	fmt.Println("head 0 positions:", pos)
	st := c.Stats()
	fmt.Printf("kept %v rows per head, %d of %d bytes (eviction %.2f)\n", st.RowsKept, st.BytesAfter, st.BytesBefore, st.EvictionRatio)
	// Output:
	// next position: 66
	// head 0 rows: 18 K elements: 144
	// head 0 positions: [5 8 14 24 36 37 38 39 56 57 58 59 60 61 62 63 64 65]
	// kept [18 18] rows per head, 1296 of 4224 bytes (eviction 0.73)
}

// ExampleCache_engine is an engine's per-layer loop over a token-major KV cache: two
// layers with PyramidKV budgets, the prompt prefilled in two chunks, then three tokens
// decoded against the kept rows, RoPE'd at the true position the cache keeps (Offset).
// The stand-in projections plant a "needle" in the key of one position per KV head (5
// and 20) that every query looks for. The loop runs in each Mode: both keep the needles
// (and their neighbours, through the pooling), and the decoded tokens attend to them;
// ModeBounded never holds more than Budget + a chunk per head before the prompt ends.
func ExampleCache_engine() {
	const layers, qHeads, kvHeads, dim, window = 2, 4, 2, 8, 8
	const g = qHeads / kvHeads    // query heads per KV head
	chunks := []int{32, 16}       // prompt positions 0..31, then 32..47
	needle := [kvHeads]int{5, 20} // per KV head
	budgets, err := snapkv.PyramidBudgets(18, layers, 1.5)
	if err != nil {
		panic(err)
	}
	fmt.Println("budgets per layer:", budgets)

	// The engine's projections of one layer at positions from..to−1, before RoPE,
	// token-major: k, v [positions][KVHeads][Dim], q [positions][QHeads][Dim].
	r := rand.New(rand.NewPCG(3, 4))
	noise := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = r.Float32()/2 - 0.25
		}
		return x
	}
	type proj struct{ k, v, q []float32 }
	project := func(from, to int) proj {
		p := proj{noise((to - from) * kvHeads * dim), noise((to - from) * kvHeads * dim), noise((to - from) * qHeads * dim)}
		for i := range to - from {
			for h := range kvHeads {
				if from+i == needle[h] {
					p.k[(i*kvHeads+h)*dim+dim-2] = 4 // in RoPE's slowest pair
				}
			}
			for j := range qHeads {
				p.q[(i*qHeads+j)*dim+dim-2] = 4
			}
		}
		return p
	}
	prompt := make([][]proj, layers) // [layer][chunk]
	for l := range layers {
		from := 0
		for _, n := range chunks {
			prompt[l] = append(prompt[l], project(from, from+n))
			from += n
		}
	}
	decode := make([][]proj, 3) // [token][layer]
	for t := range decode {
		for range layers {
			decode[t] = append(decode[t], project(-1, 0))
		}
	}
	halves := func(x []float32) []fp16.Float16 {
		h := make([]fp16.Float16, len(x))
		fp16.FromFloat32(h, x)
		return h
	}

	for _, mode := range []snapkv.Mode{snapkv.ModeFaithful, snapkv.ModeBounded} {
		caches := make([]*snapkv.Cache, layers) // one per layer of this sequence
		for l := range caches {
			caches[l], err = snapkv.NewCache(snapkv.CacheConfig{
				Select: snapkv.Config{Budget: budgets[l], Window: window, Kernel: 3, Pool: snapkv.PoolMax,
					Rule: snapkv.RuleProtected, Sinks: 1},
				Mode:   mode,
				Layout: snapkv.TokenMajor,
				QHeads: qHeads, KVHeads: kvHeads, Dim: dim,
				Reserve: 4,
			})
			if err != nil {
				panic(err)
			}
		}

		// Prefill, chunk by chunk and layer by layer: K and Q post-RoPE at their
		// positions, the chunk's last Window queries. (The engine attends to the chunk
		// here too, e.g. with kernels.ScoresStrided over its token-major rows.)
		from := 0
		for c, n := range chunks {
			for l := range layers {
				p := prompt[l][c]
				k, q := slices.Clone(p.k), slices.Clone(p.q)
				rope(k, from, kvHeads, dim)
				rope(q, from, qHeads, dim)
				err := caches[l].Prefill(snapkv.Chunk{K: halves(k), V: halves(p.v), Q: q[(n-window)*qHeads*dim:],
					Last: c == len(chunks)-1})
				if err != nil {
					panic(err)
				}
			}
			from += n
		}

		// Decode: each token at the true next position, layer by layer; attention reads
		// each KV head's kept rows, the token's own last.
		scores, out := make([]float32, g*64), make([]float32, qHeads*dim)
		top := make([]int32, 0, 1) // TopK's result, reused: TopK(nil, …) would allocate each call
		attends := map[int32]bool{}
		for _, tok := range decode {
			pos := caches[0].Offset()
			for l := range layers {
				k, q := slices.Clone(tok[l].k), slices.Clone(tok[l].q)
				rope(k, pos, kvHeads, dim)
				rope(q, pos, qHeads, dim)
				if err := caches[l].Append(halves(k), halves(tok[l].v)); err != nil {
					panic(err)
				}
				for h := range kvHeads {
					keys, values, positions := caches[l].Head(h)
					n := len(positions)
					s := scores[:g*n]
					kernels.Scores(s, q[h*g*dim:(h+1)*g*dim], keys, g, n, dim, 1/float32(math.Sqrt(dim)))
					for i := range g {
						p := s[i*n : (i+1)*n]
						kernels.Softmax(p)
						kernels.WeightedSumRows(out[(h*g+i)*dim:][:dim], p, values)
						top = kernels.TopK(top, p, 1)
						attends[positions[top[0]]] = true
					}
				}
				// out, [QHeads][Dim], goes on through the layer's output projection.
			}
		}

		fmt.Printf("%s: decode attends most to positions %v\n",
			map[snapkv.Mode]string{snapkv.ModeFaithful: "ModeFaithful", snapkv.ModeBounded: "ModeBounded"}[mode],
			slices.Sorted(maps.Keys(attends)))
		for l, c := range caches {
			st := c.Stats()
			kept := make([]bool, kvHeads)
			for h := range kept {
				_, _, pos := c.Head(h)
				kept[h] = slices.Contains(pos, int32(needle[h]))
			}
			fmt.Printf("  layer %d: next position %d, rows per head %v, needles kept %v, at most %d rows before the end\n",
				l, c.Offset(), st.RowsKept, kept, st.PeakRows)
			fmt.Printf("    %d tokens, %d of %d bytes (room for %d), eviction %.2f\n",
				st.TokensSeen, st.BytesAfter, st.BytesBefore, st.BytesCapacity, st.EvictionRatio)
		}
		_, _, pos := caches[1].Head(0)
		fmt.Println("  layer 1, head 0:", pos)
	}
	// Output:
	// budgets per layer: [24 12]
	// ModeFaithful: decode attends most to positions [5 20]
	//   layer 0: next position 51, rows per head [27 27], needles kept [true true], at most 48 rows before the end
	//     51 tokens, 1944 of 3264 bytes (room for 2016), eviction 0.47
	//   layer 1: next position 51, rows per head [15 15], needles kept [true true], at most 48 rows before the end
	//     51 tokens, 1080 of 3264 bytes (room for 1152), eviction 0.71
	//   layer 1, head 0: [0 4 5 6 40 41 42 43 44 45 46 47 48 49 50]
	// ModeBounded: decode attends most to positions [5 20]
	//   layer 0: next position 51, rows per head [27 27], needles kept [true true], at most 40 rows before the end
	//     51 tokens, 1944 of 3264 bytes (room for 2016), eviction 0.47
	//   layer 1: next position 51, rows per head [15 15], needles kept [true true], at most 32 rows before the end
	//     51 tokens, 1080 of 3264 bytes (room for 1152), eviction 0.71
	//   layer 1, head 0: [0 4 5 6 40 41 42 43 44 45 46 47 48 49 50]
}

// rope rotates rows of heads·dim values as RoPE does, row i at position first+i: each
// head's pairs (2j, 2j+1) by (first+i)·10000^(−2j/dim) radians.
func rope(x []float32, first, heads, dim int) {
	for i := range len(x) / (heads * dim) {
		for h := range heads {
			row := x[(i*heads+h)*dim:][:dim]
			for j := range dim / 2 {
				s, c := math.Sincos(float64(first+i) * math.Pow(10000, -2*float64(j)/float64(dim)))
				x0, x1 := float64(row[2*j]), float64(row[2*j+1])
				row[2*j], row[2*j+1] = float32(x0*c-x1*s), float32(x0*s+x1*c)
			}
		}
	}
}

// The Last chunk of a ModeFaithful cache may carry the window's attention that the
// engine computed anyway (Chunk.Attn, [QHeads][W][L] over the whole prompt) instead of
// its queries. Here the one query head's two window rows look at positions 2 and 9 of
// 12, and at themselves; with a budget of 4 the cache keeps those and the window.
func ExampleChunk() {
	const n, window, dim = 12, 2, 4
	c, err := snapkv.NewCache(snapkv.CacheConfig{Select: snapkv.Config{Budget: 4, Window: window, Kernel: 1},
		QHeads: 1, KVHeads: 1, Dim: dim})
	if err != nil {
		panic(err)
	}
	attn := make([]float32, window*n) // [QHeads=1][W][L]
	for r := range window {
		row := attn[r*n:][:n]
		row[2], row[9], row[n-window+r] = 0.5, 0.25, 0.25
	}
	k, v := make([]fp16.Float16, n*dim), make([]fp16.Float16, n*dim) // [KVHeads=1][L][Dim]
	if err := c.Prefill(snapkv.Chunk{K: k, V: v, Attn: attn, Last: true}); err != nil {
		panic(err)
	}
	_, _, pos := c.Head(0)
	fmt.Println(pos)
	// Output: [2 9 10 11]
}
