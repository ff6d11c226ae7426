package main

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/kernels"
)

// softmaxSizes are one attention row at 4k, 32k and 128k context.
var softmaxSizes = []int{4096, 32768, 131072}

// poolSizes is the vote row of a 128k prompt.
var poolSizes = []int{131072}

func init() {
	const long = 131072
	for _, d := range []struct {
		name string
		body func(b *testing.B, n int)
	}{{"Softmax", benchSoftmax}, {"AddSoftmax", benchAddSoftmax}, {"Max", benchMax}, {"Sum", benchSum}, {"Add", benchAdd}} {
		for _, n := range softmaxSizes {
			sections = append(sections, section{fmt.Sprintf("%s n=%d", d.name, n), "elem", n, func(b *testing.B) { d.body(b, n) }})
		}
	}
	for _, k := range []int{5, 7} {
		sections = append(sections,
			section{fmt.Sprintf("AvgPool1D k=%d n=%d", k, long), "elem", long, func(b *testing.B) { benchAvgPool1D(b, long, k) }},
			section{fmt.Sprintf("MaxPool1D k=%d n=%d", k, long), "elem", long, func(b *testing.B) { benchMaxPool1D(b, long, k) }},
		)
	}
}

// attentionLogits returns scores of the spread a scaled q·k row has.
func attentionLogits(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 3))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(3 * r.NormFloat64())
	}
	return x
}

// benchSoftmax normalises the same row over and over: after the first call it holds
// probabilities, which cost every variant the same as logits (no data-dependent paths).
func benchSoftmax(b *testing.B, n int) {
	x := attentionLogits(n, 1)
	b.SetBytes(int64(4 * n))
	b.ReportAllocs()
	for b.Loop() {
		kernels.Softmax(x)
	}
}

// benchAddSoftmax adds the softmax of a row of logits into a vote row. AddSoftmax
// leaves x holding its exponentials (up to 2²⁴), whose softmax would take the
// exponential's general path, not the logits' fast one: each op first copies the
// logits back into x, as a new score row would be, so the figure includes that copy
// (4n bytes more read and written, in cache). benchSoftmaxThenAdd is the same op
// unfused, copy included, for comparison.
func benchAddSoftmax(b *testing.B, n int) {
	logits, x, votes := attentionLogits(n, 1), make([]float32, n), make([]float32, n)
	b.SetBytes(int64(4 * n))
	b.ReportAllocs()
	for b.Loop() {
		copy(x, logits)
		kernels.AddSoftmax(votes, x)
	}
}

func benchSoftmaxThenAdd(b *testing.B, n int) {
	logits, x, votes := attentionLogits(n, 1), make([]float32, n), make([]float32, n)
	b.SetBytes(int64(4 * n))
	b.ReportAllocs()
	for b.Loop() {
		copy(x, logits)
		kernels.Softmax(x)
		kernels.Add(votes, x)
	}
}

//lint:ignore U1000 a benchmark sink: written so the benchmarked calls are kept, never meant to be read
var reduceSink float32

func benchMax(b *testing.B, n int) {
	x := attentionLogits(n, 2)
	b.SetBytes(int64(4 * n))
	b.ReportAllocs()
	for b.Loop() {
		reduceSink = kernels.Max(x)
	}
}

func benchSum(b *testing.B, n int) {
	x := attentionLogits(n, 3)
	b.SetBytes(int64(4 * n))
	b.ReportAllocs()
	for b.Loop() {
		reduceSink = kernels.Sum(x)
	}
}

func benchAdd(b *testing.B, n int) {
	dst, src := attentionLogits(n, 4), attentionLogits(n, 5)
	b.SetBytes(int64(4 * n))
	b.ReportAllocs()
	for b.Loop() {
		kernels.Add(dst, src)
	}
}

// benchAvgPool1D and benchMaxPool1D count GB/s as the bytes of src read (4n per op),
// as the other row kernels do, and report it against the process's L2 read bandwidth
// (%L2) and against copy(dst, src) of the same n in the same process (%copy). The op
// also writes 4n bytes of dst: at n = 131072 src and dst together are 1 MiB, all of
// this CPU's L2, so each pass streams partly from L3, and even copy reaches only about
// 30 % of the L2 read bandwidth there (about 50 % at n = 65536, measured on the Zen 5
// host): %copy says how near the kernel is to what the memory system allows.
func benchAvgPool1D(b *testing.B, n, kernel int) {
	src, dst := attentionLogits(n, 6), make([]float32, n)
	b.SetBytes(int64(4 * n))
	b.ReportAllocs()
	for b.Loop() {
		kernels.AvgPool1D(dst, src, kernel)
	}
	reportL2(b, float64(4*n))
	reportCopy(b, n)
}

func benchMaxPool1D(b *testing.B, n, kernel int) {
	src, dst := attentionLogits(n, 7), make([]float32, n)
	b.SetBytes(int64(4 * n))
	b.ReportAllocs()
	for b.Loop() {
		kernels.MaxPool1D(dst, src, kernel)
	}
	reportL2(b, float64(4*n))
	reportCopy(b, n)
}
