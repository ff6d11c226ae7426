package main

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/aligned"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/kernels"
)

// dotSizes runs from one attention head's row to a vector that no longer fits in L1.
var dotSizes = []int{64, 128, 256, 1024, 4096, 65536}

// The score block of SnapKV's default observation window (32 queries) against prompts
// of 4k, 16k and 128k keys; the largest K (32 MiB at dim 128) only fits in L3 or DRAM.
// 4096+16 and 16384+16 keys show whether a power-of-two row stride of dst costs
// anything (rows n floats apart that share L1 sets).
var (
	scoresRows  = 32
	scoresDims  = []int{64, 128}
	scoresSizes = []int{4096, 4096 + 16, 16384, 16384 + 16, 131072}
)

// scoresKVHeads is the KV heads of the token-major cache ([n][heads][dim]) whose one
// head ScoresStrided scores where it lies, stride = heads·dim apart (Llama 3 8B's
// grouped-query attention): the same keys as Scores', eight times as far apart.
//
// The stride is a power of two (2 KiB at dim 128), so one head's keys fall in an
// eighth of the sets of every cache level, which can then hold only an eighth as many:
// from about 16k keys at dim 128 (4 MiB of one head against a 32 MiB L3) they stream
// from DRAM where Scores' contiguous keys still sit in L3. On a Zen 5 machine (AVX-512,
// dim 128, rough figures from a shared machine), 16400 keys ran 3–10 % slower strided,
// 32784 keys 10–18 % (at stride 1088 halves, no power of two, within 1 % of
// contiguous) and 131072 keys, from DRAM both ways, up to 15 % (3–5 % of it the TLB,
// which 2 MiB pages recover); up to 8k keys, and wherever the keys fit in L2, strided
// ran as fast as contiguous. An engine that scores every head in turn reads the whole
// cache, all sets, from DRAM anyway.
const scoresKVHeads = 8

func init() {
	for _, d := range []struct {
		name string
		body func(b *testing.B, n int)
	}{{"DotF16", benchDotF16}, {"DotF32F16", benchDotF32F16}, {"DotF32", benchDotF32}} {
		for _, n := range dotSizes {
			sections = append(sections, section{fmt.Sprintf("%s n=%d", d.name, n), "elem", n, func(b *testing.B) { d.body(b, n) }})
		}
	}
	const dim = 128
	for _, keys := range scoresSizes {
		sections = append(sections, section{fmt.Sprintf("Scores rows=%d dim=%d n=%d", scoresRows, dim, keys), "score", scoresRows * keys,
			func(b *testing.B) { benchScores(b, scoresRows, keys, dim) }})
	}
	for _, keys := range scoresSizes {
		sections = append(sections, section{fmt.Sprintf("ScoresStrided rows=%d dim=%d stride=%d n=%d", scoresRows, dim, scoresKVHeads*dim, keys), "score", scoresRows * keys,
			func(b *testing.B) { benchScoresStrided(b, scoresRows, keys, dim, scoresKVHeads) }})
	}
}

// randomFloats returns normally distributed float32s, like post-RoPE queries.
func randomFloats(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 2))
	f := aligned.Make[float32](n)
	for i := range f {
		f[i] = float32(r.NormFloat64())
	}
	return f
}

// dotSink keeps the dot products observable, so the benchmark loops are not optimised
// away.
//
//lint:ignore U1000 a benchmark sink: written so the benchmarked calls are kept, never meant to be read
var dotSink float32

func benchDotF16(b *testing.B, n int) {
	x, y := randomHalves(n, 3), randomHalves(n, 4)
	b.SetBytes(int64(4 * n))
	b.ReportAllocs()
	for b.Loop() {
		dotSink += kernels.DotF16(x, y)
	}
	reportFlops(b, float64(2*n))
}

func benchDotF32F16(b *testing.B, n int) {
	x, y := randomFloats(n, 5), randomHalves(n, 6)
	b.SetBytes(int64(6 * n))
	b.ReportAllocs()
	for b.Loop() {
		dotSink += kernels.DotF32F16(x, y)
	}
	reportFlops(b, float64(2*n))
}

func benchDotF32(b *testing.B, n int) {
	x, y := randomFloats(n, 7), randomFloats(n, 8)
	b.SetBytes(int64(8 * n))
	b.ReportAllocs()
	for b.Loop() {
		dotSink += kernels.DotF32(x, y)
	}
	reportFlops(b, float64(2*n))
}

// benchScores counts bytes of K, the operand that streams from memory.
func benchScores(b *testing.B, rows, n, dim int) {
	q, k := randomFloats(rows*dim, 9), randomHalves(n*dim, 10)
	dst := make([]float32, rows*n)
	b.SetBytes(int64(2 * n * dim))
	b.ReportAllocs()
	for b.Loop() {
		kernels.Scores(dst, q, k, rows, n, dim, 0.125)
	}
	reportFlops(b, float64(2*rows*n*dim))
}

// benchScoresStrided is benchScores on one head of a token-major cache of heads KV
// heads: the same keys, stride = heads·dim apart. Only that head's rows are filled;
// the rest of the cache is never read.
func benchScoresStrided(b *testing.B, rows, n, dim, heads int) {
	q, k := randomFloats(rows*dim, 9), randomHalves(n*dim, 10)
	stride, head := heads*dim, heads/2
	cache := make([]fp16.Float16, n*stride)
	for j := range n {
		copy(cache[j*stride+head*dim:][:dim], k[j*dim:(j+1)*dim])
	}
	dst := make([]float32, rows*n)
	b.SetBytes(int64(2 * n * dim))
	b.ReportAllocs()
	for b.Loop() {
		kernels.ScoresStrided(dst, q, cache[head*dim:], rows, n, dim, stride, 0.125)
	}
	reportFlops(b, float64(2*rows*n*dim))
}
