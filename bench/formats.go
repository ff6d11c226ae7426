package main

import (
	"fmt"
	"testing"

	"github.com/kvsimd/kvsimd/aligned"
	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/q8"
)

// cacheFormats are the element formats a KV cache is kept in. The format benchmarks
// run the same keys and values in each: random normal values, rounded to each format
// from float32.
var cacheFormats = []string{"fp16", "bf16", "q8_0", "f32"}

func init() {
	const dim, n = 128, 4096
	for _, f := range cacheFormats[1:] {
		for _, keys := range []int{4096, 16384, 131072} {
			sections = append(sections, section{fmt.Sprintf("Scores %s keys rows=%d dim=%d n=%d", f, scoresRows, dim, keys), "score", scoresRows * keys,
				func(b *testing.B) { benchScoresFormat(b, f, scoresRows, keys, dim) }})
		}
		sections = append(sections, section{fmt.Sprintf("WeightedSumRows %s dim=%d n=%d", f, dim, n), "elem", n * dim,
			func(b *testing.B) { benchWeightedSumRowsFormat(b, f, n, dim) }})
	}
}

// formatRows holds n·dim values in each format, with the bytes one row of dim takes.
type formatRows struct {
	f16      []fp16.Float16
	bf16     []bf16.BFloat16
	q8       []q8.Block
	f32      []float32
	rowBytes int
}

func rowsIn(format string, n, dim int, seed uint64) formatRows {
	x := randomFloats(n*dim, seed)
	switch format {
	case "fp16":
		r := formatRows{f16: aligned.Make[fp16.Float16](n * dim), rowBytes: 2 * dim}
		fp16.FromFloat32(r.f16, x)
		return r
	case "bf16":
		r := formatRows{bf16: aligned.Make[bf16.BFloat16](n * dim), rowBytes: 2 * dim}
		bf16.FromFloat32(r.bf16, x)
		return r
	case "q8_0":
		r := formatRows{q8: aligned.Make[q8.Block](n * dim / q8.BlockLen), rowBytes: dim / q8.BlockLen * q8.BlockSize}
		q8.Quantize(r.q8, x)
		return r
	case "f32":
		r := formatRows{f32: aligned.Make[float32](n * dim), rowBytes: 4 * dim}
		copy(r.f32, x)
		return r
	}
	panic("bench: unknown cache format " + format)
}

// benchScoresFormat is benchScores with keys in format; it counts the bytes of K in
// that format, so MB/s compares how fast each format's keys are consumed.
func benchScoresFormat(b *testing.B, format string, rows, n, dim int) {
	q, k := randomFloats(rows*dim, 9), rowsIn(format, n, dim, 10)
	dst := make([]float32, rows*n)
	b.SetBytes(int64(n * k.rowBytes))
	b.ReportAllocs()
	// The format is chosen outside the timed loops, so no format pays for the choice.
	switch format {
	case "fp16":
		for b.Loop() {
			kernels.Scores(dst, q, k.f16, rows, n, dim, 0.125)
		}
	case "bf16":
		for b.Loop() {
			kernels.ScoresBF16(dst, q, k.bf16, rows, n, dim, 0.125)
		}
	case "q8_0":
		for b.Loop() {
			kernels.ScoresQ8(dst, q, k.q8, rows, n, dim, 0.125)
		}
	case "f32":
		for b.Loop() {
			kernels.ScoresF32(dst, q, k.f32, rows, n, dim, 0.125)
		}
	}
	reportFlops(b, float64(2*rows*n*dim))
}

// benchWeightedSumRowsFormat is benchWeightedSumRows with values in format.
func benchWeightedSumRowsFormat(b *testing.B, format string, n, dim int) {
	w, v := attentionLogits(n, 11), rowsIn(format, n, dim, 12)
	kernels.Softmax(w)
	dst := make([]float32, dim)
	b.SetBytes(int64(n * v.rowBytes))
	b.ReportAllocs()
	switch format {
	case "fp16":
		for b.Loop() {
			kernels.WeightedSumRows(dst, w, v.f16)
		}
	case "bf16":
		for b.Loop() {
			kernels.WeightedSumRowsBF16(dst, w, v.bf16)
		}
	case "q8_0":
		for b.Loop() {
			kernels.WeightedSumRowsQ8(dst, w, v.q8)
		}
	case "f32":
		for b.Loop() {
			kernels.WeightedSumRowsF32(dst, w, v.f32)
		}
	}
	reportFlops(b, float64(2*n*dim))
}

// benchDotFormat is benchDotF32F16 with b in format.
func benchDotFormat(b *testing.B, format string, n int) {
	x, y := randomFloats(n, 5), rowsIn(format, 1, n, 6)
	b.SetBytes(int64(4*n + y.rowBytes))
	b.ReportAllocs()
	switch format {
	case "fp16":
		for b.Loop() {
			dotSink += kernels.DotF32F16(x, y.f16)
		}
	case "bf16":
		for b.Loop() {
			dotSink += kernels.DotF32BF16(x, y.bf16)
		}
	case "q8_0":
		for b.Loop() {
			dotSink += kernels.DotF32Q8(x, y.q8)
		}
	case "f32":
		for b.Loop() {
			dotSink += kernels.DotF32(x, y.f32)
		}
	}
	reportFlops(b, float64(2*n))
}
