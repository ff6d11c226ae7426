package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/kernels"
)

// SnapKV's gather: the kept rows (budget 1024 or 2048) of one KV head's 16384-row
// prompt, at head dims 64 and 128. src is 2 or 4 MiB, so it comes from L3 or DRAM.
var (
	gatherSrcRows = 16384
	gatherDims    = []int{64, 128}
	gatherSizes   = []int{1024, 2048}
)

// gatherArrays is how many different heads a benchmark cycles through, so that src is
// not one warm array.
const gatherArrays = 4

func init() {
	const dim, k = 128, 2048
	sections = append(sections, section{fmt.Sprintf("GatherRows %d of %d dim=%d", k, gatherSrcRows, dim), "row", k,
		func(b *testing.B) { benchGatherRows(b, k, dim) }})
}

// gatherInputs returns gatherArrays source heads and, for each, k distinct ascending
// row indices drawn uniformly, the shape of a SnapKV selection.
func gatherInputs(k, dim int) (srcs [][]fp16.Float16, idxs [][]int32) {
	r := rand.New(rand.NewPCG(uint64(k), uint64(dim)))
	for i := range gatherArrays {
		srcs = append(srcs, randomHalves(gatherSrcRows*dim, uint64(10+i)))
		perm := r.Perm(gatherSrcRows)[:k]
		idx := make([]int32, k)
		for j, p := range perm {
			idx[j] = int32(p)
		}
		slices.Sort(idx)
		idxs = append(idxs, idx)
	}
	return srcs, idxs
}

func benchGatherRows(b *testing.B, k, dim int) {
	benchGather(b, k, dim, func(dst, src []fp16.Float16, idx []int32) { kernels.GatherRows(dst, src, idx, dim) })
}

// benchGatherContiguous is the floor no gather can beat: one copy of as many bytes, the
// first k rows of the same sources (the same amount of each source stays cached as the
// gather's rows do).
func benchGatherContiguous(b *testing.B, k, dim int) {
	benchGather(b, k, dim, func(dst, src []fp16.Float16, _ []int32) { copy(dst, src[:k*dim]) })
}

// benchGather times gather over the sources and indices of gatherInputs.
func benchGather(b *testing.B, k, dim int, gather func(dst, src []fp16.Float16, idx []int32)) {
	srcs, idxs := gatherInputs(k, dim)
	dst := make([]fp16.Float16, k*dim)
	b.SetBytes(int64(2 * k * dim))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		gather(dst, srcs[i%gatherArrays], idxs[i%gatherArrays])
		i++
	}
}
