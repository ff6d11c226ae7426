package fuzz

import (
	"cmp"
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/kernels"
)

// FuzzTopK checks every variant against a sort with TopK's ranking. The fuzzed values
// are repeated out to length n, so that a few bytes also make long inputs with many
// ties, the threshold's hardest case.
func FuzzTopK(f *testing.F) {
	f.Add([]byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0xc0, 0x7f, 0x00, 0x00, 0x80, 0xff, 0x00, 0x00, 0x00, 0x80}, uint16(0), 2)
	f.Add([]byte{0x00, 0x00, 0x80, 0x3f, 0x01, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x80, 0x7f}, uint16(5000), 1700)
	f.Fuzz(func(t *testing.T, data []byte, n uint16, k int) {
		values := float32s(data)
		x := values
		if len(values) > 0 && int(n) > len(values) {
			x = make([]float32, n)
			for i := range x {
				x[i] = values[i%len(values)]
			}
		}
		want := topkSorted(x, k)
		dst := make([]int32, 0, len(x))
		eachVariant(t, func(v string) {
			got := kernels.TopK(dst, x, k)
			if !slices.Equal(got, want) {
				t.Fatalf("%s: TopK(n=%d, k=%d) = %v, sort gives %v", v, len(x), k, head(got), head(want))
			}
		})
	})
}

// topkSorted is TopK's reference: stable-sort the indices best first with cmp.Compare
// (NaN last, −0 equal to +0, ties keeping index order), take k, sort them by index.
func topkSorted(x []float32, k int) []int32 {
	order := make([]int32, len(x))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(i, j int32) int { return cmp.Compare(x[j], x[i]) })
	return slices.Sorted(slices.Values(order[:min(max(k, 0), len(x))]))
}

// head shortens a long result for a failure message.
func head(s []int32) []int32 { return s[:min(len(s), 20)] }
