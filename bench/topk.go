package main

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/kernels"
)

// topkSizes are SnapKV's shapes: the budget k kept of n pooled scores.
var topkSizes = []int{16384, 131072}

// topkBudget is k for each of topkSizes.
var topkBudget = map[int]int{16384: 512, 131072: 2048}

// topkArrays is how many different inputs a benchmark cycles through, so that neither
// the branch predictor nor the caches learn one input.
const topkArrays = 4

func init() {
	for _, d := range []struct {
		name string
		gen  func(r *rand.Rand, n int) []float32
	}{{"uniform", uniformScores}, {"skewed", skewedScores}, {"plateau", plateauScores}, {"few-huge", fewHugeScores}} {
		for _, n := range topkSizes {
			sections = append(sections, section{fmt.Sprintf("TopK %s k=%d n=%d", d.name, topkBudget[n], n), "elem", n,
				func(b *testing.B) { benchTopK(b, n, d.gen) }})
		}
	}
}

// uniformScores are independent uniform values in [0, 1).
func uniformScores(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = r.Float32()
	}
	return x
}

// skewedScores look like attention: exp of normal logits, a few large, most tiny.
func skewedScores(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(math.Exp(3 * r.NormFloat64()))
	}
	return x
}

// plateauScores collapse the uniform values ranked from 1% to 1% + 10⁴/n onto the
// lowest of them: 10⁴ equal values (more than half of n=16384) around the k-th largest,
// where the sampled threshold lands.
func plateauScores(r *rand.Rand, n int) []float32 {
	x := uniformScores(r, n)
	lo := float32(0.99) - 10000/float32(n)
	for i, v := range x {
		if v >= lo && v < 0.99 {
			x[i] = lo
		}
	}
	return x
}

// fewHugeScores are all equal but for five huge values: the sample sees only the
// plateau.
func fewHugeScores(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = 1
	}
	for range 5 {
		x[r.IntN(n)] = 1e30
	}
	return x
}

func topkInputs(n int, gen func(r *rand.Rand, n int) []float32) [][]float32 {
	r := rand.New(rand.NewPCG(uint64(n), 5))
	xs := make([][]float32, topkArrays)
	for i := range xs {
		xs[i] = gen(r, n)
	}
	return xs
}

func benchTopK(b *testing.B, n int, gen func(r *rand.Rand, n int) []float32) {
	xs, k := topkInputs(n, gen), topkBudget[n]
	dst := make([]int32, 0, k)
	b.SetBytes(int64(4 * n))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		dst = kernels.TopK(dst, xs[i%topkArrays], k)
		i++
	}
}

// benchTopKSort is the baseline the target is measured against: sort every
// index by value, take k, sort those by index.
func benchTopKSort(b *testing.B, n int, gen func(r *rand.Rand, n int) []float32) {
	xs, k := topkInputs(n, gen), topkBudget[n]
	order := make([]int32, n)
	b.SetBytes(int64(4 * n))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		x := xs[i%topkArrays]
		for j := range order {
			order[j] = int32(j)
		}
		slices.SortFunc(order, func(p, q int32) int { return cmp.Or(cmp.Compare(x[q], x[p]), cmp.Compare(p, q)) })
		slices.Sort(order[:k])
		i++
	}
}
