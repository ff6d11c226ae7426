package kernels

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/internal/varianttest"
)

// BenchmarkTopKDesign measures the designs TopK chose between, at SnapKV's largest
// shape, on uniform and on ascending input (the worst case of a heap): a bounded
// min-heap over every element, a radix select over every element (TopK's fallback),
// and sample-filter-select with each tested variant active, its filter passed in.
func BenchmarkTopKDesign(b *testing.B) {
	const n, k = 131072, 2048
	r := rand.New(rand.NewPCG(1, 1))
	for _, in := range []topkInput{topkInputs[0], topkInputs[4]} {
		xs := make([][]float32, 4)
		for i := range xs {
			xs[i] = in.gen(r, n)
		}
		dst := make([]int32, k)
		var s topkScratch
		run := func(name string, body func(x []float32)) {
			b.Run(in.name+"/"+name, func(b *testing.B) {
				i := 0
				for b.Loop() {
					body(xs[i%len(xs)])
					i++
				}
			})
		}
		run("heap", func(x []float32) { topkHeap(dst, x) })
		run("radix", func(x []float32) { s.exact(dst, x) })
		varianttest.Each(b, func(v string) {
			filter := topkFilter.For(v)
			run("sampled-"+v, func(x []float32) { s.sampled(dst, x, filter) })
		})
	}
}

// TestTopKHeap checks the heap alternative, so that BenchmarkTopKDesign compares exact
// results only.
func TestTopKHeap(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, in := range topkInputs {
		x := in.gen(r, 5000)
		ranks := topkRanks(x)
		for _, k := range []int{1, 100, 2500, 4999} {
			got := make([]int32, k)
			topkHeap(got, x)
			checkTopK(t, "heap "+in.name, x, ranks, k, got)
		}
	}
}

// topkHeap keeps the best len(dst) so far in a min-heap of rank keys and indices.
func topkHeap(dst []int32, x []float32) {
	h := keyHeap{keys: make([]uint32, 0, len(dst)), idx: dst[:0]}
	for i, v := range x {
		key := topkKey(v)
		switch {
		case len(h.idx) < len(dst):
			heap.Push(&h, keyIndex{key, int32(i)})
		case key > h.keys[0]:
			h.keys[0], h.idx[0] = key, int32(i)
			heap.Fix(&h, 0)
		}
	}
	slices.Sort(dst)
}

type keyIndex struct {
	key uint32
	idx int32
}

// keyHeap is a min-heap by key, and among equal keys the higher index first out.
type keyHeap struct {
	keys []uint32
	idx  []int32
}

func (h *keyHeap) Len() int { return len(h.keys) }
func (h *keyHeap) Less(i, j int) bool {
	return h.keys[i] < h.keys[j] || h.keys[i] == h.keys[j] && h.idx[i] > h.idx[j]
}
func (h *keyHeap) Swap(i, j int) {
	h.keys[i], h.keys[j] = h.keys[j], h.keys[i]
	h.idx[i], h.idx[j] = h.idx[j], h.idx[i]
}
func (h *keyHeap) Push(v any) {
	p := v.(keyIndex)
	h.keys, h.idx = append(h.keys, p.key), append(h.idx, p.idx)
}
func (h *keyHeap) Pop() any { panic("TopK's heap only replaces its minimum") }

// BenchmarkTopKSmallK measures small budgets on long rows, the common case of eviction,
// on the distributions that decide the threshold's luck: k ∈ {1, 10, 100} at n = 2¹⁷ and
// 2²³. Each also reports scratch-B, the scratch bytes one call on an empty scratch
// leaves behind (its peak: the buffers only grow).
func BenchmarkTopKSmallK(b *testing.B) {
	dists := []struct {
		name string
		gen  func(r *rand.Rand, n int) []float32
	}{
		{"uniform", func(r *rand.Rand, n int) []float32 { return fill(n, func(int) float32 { return r.Float32() }) }},
		{"gaussian", func(r *rand.Rand, n int) []float32 {
			return fill(n, func(int) float32 { return float32(r.NormFloat64()) })
		}},
		{"sorted", func(r *rand.Rand, n int) []float32 { return fill(n, func(i int) float32 { return float32(i) }) }},
		{"reverse", func(r *rand.Rand, n int) []float32 { return fill(n, func(i int) float32 { return float32(n - i) }) }},
		{"equal", func(r *rand.Rand, n int) []float32 { return fill(n, func(int) float32 { return 0.5 }) }},
	}
	for _, n := range []int{1 << 17, 1 << 23} {
		for _, d := range dists {
			x := d.gen(rand.New(rand.NewPCG(uint64(n), 3)), n)
			for _, k := range []int{1, 10, 100} {
				b.Run(fmt.Sprintf("n=%d/%s/k=%d", n, d.name, k), func(b *testing.B) {
					dst := make([]int32, k)
					var fresh topkScratch
					fresh.topK(dst, x, topkFilter.Call)
					for b.Loop() {
						TopK(dst, x, k)
					}
					b.ReportMetric(float64(fresh.bytes()), "scratch-B")
				})
			}
		}
	}
}

// BenchmarkTopKFilter measures each variant's filter alone at the fractions of x that
// pass it: 0.05% (a small k), 3% and 6% (the first threshold at 2048 of 128k and 512
// of 16k lets about 2k through), 15% and 50% (large budgets on short rows). Eight
// inputs are cycled, so that the branch predictor cannot learn one, at TopK's block
// length, 2048 (64 KiB for the eight: in L2), and at 131072 (4 MiB: from L3).
func BenchmarkTopKFilter(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{2048, 131072} {
		xs := make([][]float32, 8)
		for i := range xs {
			xs[i] = fill(n, func(int) float32 { return r.Float32() })
		}
		idx := make([]int32, n)
		for _, pass := range []float64{0.0005, 0.03, 0.06, 0.15, 0.5} {
			lo := float32(1 - pass)
			varianttest.Each(b, func(v string) {
				filter := topkFilter.For(v)
				b.Run(fmt.Sprintf("n=%d/pass=%g/%s", n, pass, v), func(b *testing.B) {
					b.SetBytes(int64(4 * n))
					i := 0
					for b.Loop() {
						filter(idx, xs[i%len(xs)], lo, 0)
						i++
					}
				})
			})
		}
	}
}
