package snapkv_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// ExampleNewCacheOf keeps a layer's cache in q8_0, as llama.cpp does with
// --cache-type-k q8_0 --cache-type-v q8_0: the engine quantizes each post-RoPE K and V
// row into blocks of 32 values (q8.Quantize, ggml's rule), the cache selects on the
// stored keys and keeps the chosen blocks as they are, and decoding reads them with the
// q8_0 kernels. A "needle" planted in the key of position 9 of each KV head, which
// the window queries look for, is kept; a row of 64 values takes 2·34 bytes instead of
// fp16's 128.
func ExampleNewCacheOf() {
	const qHeads, kvHeads, dim, prompt, window = 4, 2, 64, 96, 8
	c, err := snapkv.NewCacheOf[q8.Block](snapkv.CacheConfig{
		Select:  snapkv.Config{Budget: 24, Window: window, Kernel: 5},
		QHeads:  qHeads,
		KVHeads: kvHeads,
		Dim:     dim, // a multiple of 32: each row is dim/32 blocks
		Reserve: 8,
	})
	if err != nil {
		panic(err)
	}

	// Stand-ins for the engine's float32 rows, [KVHeads][prompt][Dim], quantized as
	// the engine stores them: [KVHeads][prompt][Dim/32] blocks.
	r := rand.New(rand.NewPCG(3, 4))
	needle := make([]float32, dim)
	for i := range needle {
		needle[i] = float32(r.NormFloat64())
	}
	k, v := make([]float32, kvHeads*prompt*dim), make([]float32, kvHeads*prompt*dim)
	for i := range k {
		k[i], v[i] = 0.1*float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	for h := range kvHeads {
		copy(k[(h*prompt+9)*dim:], needle)
	}
	kq, vq := make([]q8.Block, len(k)/q8.BlockLen), make([]q8.Block, len(v)/q8.BlockLen)
	q8.Quantize(kq, k)
	q8.Quantize(vq, v)
	q := make([]float32, qHeads*window*dim) // [QHeads][Window][Dim]: the window's queries
	for i := range q {
		q[i] = 2*needle[i%dim] + float32(r.NormFloat64())
	}
	if err := c.Prefill(snapkv.ChunkOf[q8.Block]{K: kq, V: vq, Q: q, Last: true}); err != nil {
		panic(err)
	}

	// Decode one token: its K and V rows [KVHeads][Dim], quantized; then attention over
	// KV head 0's kept blocks (24 prompt rows and the token) of a query that looks for
	// the needle.
	tok, kTok, vTok := make([]float32, kvHeads*dim), make([]q8.Block, kvHeads*dim/q8.BlockLen), make([]q8.Block, kvHeads*dim/q8.BlockLen)
	for i := range tok {
		tok[i] = float32(r.NormFloat64())
	}
	q8.Quantize(kTok, tok)
	q8.Quantize(vTok, tok)
	if err := c.Append(kTok, vTok); err != nil {
		panic(err)
	}
	keys, vals, pos := c.Head(0) // [rows][Dim/32] blocks each
	n := len(pos)
	s, out := make([]float32, n), make([]float32, dim)
	kernels.ScoresQ8(s, needle, keys, 1, n, dim, float32(1/math.Sqrt(dim)))
	kernels.Softmax(s)
	kernels.WeightedSumRowsQ8(out, s, vals)

	fmt.Println("head 0 keeps", n, "rows in", len(keys), "blocks, the needle at position 9 among them:", slices.Contains(pos, 9))
	st := c.Stats()
	fmt.Printf("kept %d of %d bytes (q8_0: 34 bytes per 32 values); fp16 rows would take %d\n",
		st.BytesAfter, st.BytesBefore, int64(n*kvHeads)*(2*dim*2+4))
	top := slices.Index(s, slices.Max(s))
	fmt.Printf("the needle's query attends most to position %d (weight %.2f); output[0] = %.2f\n", pos[top], s[top], out[0])
	// Output:
	// head 0 keeps 25 rows in 50 blocks, the needle at position 9 among them: true
	// kept 7000 of 26384 bytes (q8_0: 34 bytes per 32 values); fp16 rows would take 13000
	// the needle's query attends most to position 9 (weight 0.99); output[0] = 1.47
}
