package snapkv_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/kvsimd/kvsimd/fp16"
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
