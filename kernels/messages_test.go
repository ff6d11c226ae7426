package kernels

import (
	"fmt"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/kvsimd/kvsimd/q8"
)

// TestPanicMessages holds the kernels' panics to their rule: each names the value it
// got and the one it wanted, in the units the caller passed (q8_0 lengths in blocks,
// dim and stride in values), with the same text on every variant, since the checks run
// in Go before any assembly.
func TestPanicMessages(t *testing.T) {
	f := make([]float32, 8192)
	h := make([]Float16, 8192)
	b := make([]bf16.BFloat16, 8192)
	blocks := make([]q8.Block, 64)
	cases := []struct {
		want string
		call func()
	}{
		// rows and n swapped: 4 queries against 100 keys of dim 64, called as rows 100, n 4.
		{"kernels.Scores: len(q) = 256, want rows·dim = 100·64 = 6400",
			func() { Scores(f[:400], f[:256], h[:6400], 100, 4, 64, 1) }},
		{"kernels.Scores: len(dst) = 399, want rows·n = 4·100 = 400",
			func() { Scores(f[:399], f[:256], h[:6400], 4, 100, 64, 1) }},
		{"kernels.Scores: len(k) = 6399, want n·dim = 100·64 = 6400",
			func() { Scores(f[:400], f[:256], h[:6399], 4, 100, 64, 1) }},
		{"kernels.Scores: rows = -1, n = 4, dim = 64, want rows, n ≥ 0 and dim ≥ 1",
			func() { Scores(f[:0], f[:0], h[:256], -1, 4, 64, 1) }},
		{"kernels.ScoresBF16: len(k) = 64, want n·dim = 2·64 = 128",
			func() { ScoresBF16(f[:2], f[:64], b[:64], 1, 2, 64, 1) }},
		{"kernels.ScoresQ8: len(k) = 10 blocks, want n·dim/32 = 4·64/32 = 8",
			func() { ScoresQ8(f[:4], f[:64], blocks[:10], 1, 4, 64, 1) }},
		{"kernels.ScoresQ8: rows = 1, n = 4, dim = 48, want rows, n ≥ 0 and dim ≥ 1, dim a multiple of 32",
			func() { ScoresQ8(f[:4], f[:48], blocks[:6], 1, 4, 48, 1) }},
		{"kernels.ScoresStrided: len(k) = 1000, want ≥ ((n−1)·stride + dim) = (3·512 + 64) = 1600",
			func() { ScoresStrided(f[:4], f[:64], h[:1000], 1, 4, 64, 512, 1) }},
		{"kernels.ScoresStrided: rows = 1, n = 4, dim = 64, stride = 32, want rows, n ≥ 0 and 1 ≤ dim ≤ stride",
			func() { ScoresStrided(f[:4], f[:64], h[:1000], 1, 4, 64, 32, 1) }},
		{"kernels.ScoresStridedQ8: len(k) = 40 blocks, want ≥ ((n−1)·stride + dim)/32 = (3·512 + 64)/32 = 50",
			func() { ScoresStridedQ8(f[:4], f[:64], blocks[:40], 1, 4, 64, 512, 1) }},
		{"kernels.ScoresStridedQ8: rows = 1, n = 4, dim = 64, stride = 80, want rows, n ≥ 0 and 1 ≤ dim ≤ stride, dim and stride multiples of 32",
			func() { ScoresStridedQ8(f[:4], f[:64], blocks[:40], 1, 4, 64, 80, 1) }},
		{"kernels.WeightedSumRows: len(v) = 250, want len(w)·len(dst) = 4·64 = 256",
			func() { WeightedSumRows(f[:64], f[:4], h[:250]) }},
		{"kernels.WeightedSumRows: len(dst) = 0, want ≥ 1",
			func() { WeightedSumRows(f[:0], f[:4], h[:250]) }},
		{"kernels.WeightedSumRowsQ8: len(v) = 4 blocks, want len(w)·len(dst)/32 = 4·64/32 = 8",
			func() { WeightedSumRowsQ8(f[:64], f[:4], blocks[:4]) }},
		{"kernels.WeightedSumRowsQ8: len(dst) = 16, want ≥ 1, a multiple of 32",
			func() { WeightedSumRowsQ8(f[:16], f[:4], blocks[:4]) }},
		{"kernels.WeightedSumRowsStridedBF16: len(v) = 100, want ≥ ((len(w)−1)·stride + len(dst)) = (3·128 + 64) = 448",
			func() { WeightedSumRowsStridedBF16(f[:64], f[:4], b[:100], 128) }},
		{"kernels.WeightedSumRowsStridedQ8: len(dst) = 64, stride = 48, want 1 ≤ len(dst) ≤ stride, both multiples of 32",
			func() { WeightedSumRowsStridedQ8(f[:64], f[:4], blocks[:8], 48) }},
		{"kernels.GatherRows: len(dst) = 100, want len(idx)·dim = 2·64 = 128",
			func() { GatherRows(h[:100], h[:640], []int32{0, 1}, 64) }},
		{"kernels.GatherRows: len(src) = 650, want a multiple of dim = 64",
			func() { GatherRows(h[:128], h[:650], []int32{0, 1}, 64) }},
		{"kernels.GatherRowsQ8: len(dst) = 1 blocks, want len(idx)·dim/32 = 1·64/32 = 2",
			func() { GatherRowsQ8(blocks[:1], blocks[:8], []int32{0}, 64) }},
		{"kernels.GatherRowsQ8: len(src) = 7 blocks, want a multiple of dim/32 = 64/32 = 2",
			func() { GatherRowsQ8(blocks[:2], blocks[:7], []int32{0}, 64) }},
		{"kernels.GatherRowsQ8: dim = 16, want ≥ 1, a multiple of 32",
			func() { GatherRowsQ8(blocks[:1], blocks[:8], []int32{0}, 16) }},
		{"kernels.GatherRowsStridedQ8: dim = 64, stride = 48, want 1 ≤ dim ≤ stride, both multiples of 32",
			func() { GatherRowsStridedQ8(blocks[:2], blocks[:8], []int32{0}, 64, 48) }},
		{"kernels.GatherRowsStridedBF16: idx[1] = 3 outside the 3 rows of src",
			func() { GatherRowsStridedBF16(b[:4], b[:10], []int32{0, 3}, 2, 4) }},
		{"kernels.DotF32Q8: len(a) = 33, len(b) = 1 blocks, want len(a) = 32·len(b) = 32",
			func() { DotF32Q8(f[:33], blocks[:1]) }},
		{"kernels.DotF32BF16: len(a) = 3, len(b) = 4, want len(a) = len(b)",
			func() { DotF32BF16(f[:3], b[:4]) }},
		{"kernels.AddSoftmax: len(dst) = 3, len(x) = 4, want equal lengths",
			func() { AddSoftmax(f[:3], f[:4]) }},
		{"kernels.MaxPool1D: len(dst) = 3, len(src) = 4, want equal lengths",
			func() { MaxPool1D(f[:3], f[:4], 3) }},
	}
	varianttest.Each(t, func(v string) {
		for _, c := range cases {
			if got := panicText(c.call); got != c.want {
				t.Errorf("%s: panicked with %q\n\twant %q", v, got, c.want)
			}
		}
	})
}

// panicText is the text of what call panics with ("" if it returns): a string as it
// is, an error's message.
func panicText(call func()) (text string) {
	defer func() {
		if r := recover(); r != nil {
			text = fmt.Sprint(r)
		}
	}()
	call()
	return ""
}
