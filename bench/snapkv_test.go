package main

import (
	"fmt"
	"testing"

	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/snapkv"
)

// eachSIMDVariant is eachVariant without generic, whose layer takes seconds to minutes
// (its Scores alone is ~3 s at L = 4096): these benchmarks compare Select with the
// Scores calls of the same variant, not variants with each other.
func eachSIMDVariant(b *testing.B, sizes []int, body func(b *testing.B, n int)) {
	eachVariant(b, sizes, func(b *testing.B, n int) {
		if kernels.Active() == "generic" {
			b.Skip("generic: seconds per layer; compare Select with Scores on a SIMD variant")
		}
		body(b, n)
	})
}

// BenchmarkSnapKVScores and BenchmarkSnapKVSelect* run at the same shapes in one
// process; the target is Select ≤ 1.3× Scores.
func BenchmarkSnapKVScores(b *testing.B) {
	eachSIMDVariant(b, snapkvLens, func(b *testing.B, n int) { benchLayerScores(b, n, snapkv.HeadMajor) })
}

// BenchmarkSnapKVScoresTokenMajor is BenchmarkSnapKVScores on the same keys
// token-major: every KV head scored where it lies, the same bytes as head-major.
func BenchmarkSnapKVScoresTokenMajor(b *testing.B) {
	eachSIMDVariant(b, snapkvLens, func(b *testing.B, n int) { benchLayerScores(b, n, snapkv.TokenMajor) })
}

func BenchmarkSnapKVSelectC1024(b *testing.B) {
	eachSIMDVariant(b, snapkvLens, func(b *testing.B, n int) { benchLayerSelect(b, n, 1024, snapkv.HeadMajor) })
}

func BenchmarkSnapKVSelectC2048(b *testing.B) {
	eachSIMDVariant(b, snapkvLens, func(b *testing.B, n int) { benchLayerSelect(b, n, 2048, snapkv.HeadMajor) })
}

// BenchmarkSnapKVSelectTokenMajorC2048 is BenchmarkSnapKVSelectC2048 on the same data
// token-major, as most CPU engines keep a layer's cache: K is scored where it lies.
func BenchmarkSnapKVSelectTokenMajorC2048(b *testing.B) {
	eachSIMDVariant(b, snapkvLens, func(b *testing.B, n int) { benchLayerSelect(b, n, 2048, snapkv.TokenMajor) })
}

// BenchmarkSelectOneCall and BenchmarkSelectorReused select the same layer (L = 16384,
// C = 2048) by the one-call Select, whose workspace comes from a pool, and by a reused
// Selector, on the active variant: the one-call form should cost what the Selector
// costs and allocate only its result.
func BenchmarkSelectOneCall(b *testing.B) { benchSelectForms(b, false) }

func BenchmarkSelectorReused(b *testing.B) { benchSelectForms(b, true) }

func benchSelectForms(b *testing.B, reused bool) {
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) { benchSelectForm(b, 16384, 2048, workers, reused) })
	}
}

// BenchmarkSnapKVRatio times Select against its Scores calls in alternation.
func BenchmarkSnapKVRatio(b *testing.B) {
	eachSIMDVariant(b, snapkvLens, func(b *testing.B, n int) { benchLayerRatio(b, n, 1024) })
}
