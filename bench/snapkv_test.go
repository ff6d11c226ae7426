package main

import (
	"testing"

	"github.com/kvsimd/kvsimd/kernels"
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
func BenchmarkSnapKVScores(b *testing.B) { eachSIMDVariant(b, snapkvLens, benchLayerScores) }

func BenchmarkSnapKVSelectC1024(b *testing.B) {
	eachSIMDVariant(b, snapkvLens, func(b *testing.B, n int) { benchLayerSelect(b, n, 1024) })
}

func BenchmarkSnapKVSelectC2048(b *testing.B) {
	eachSIMDVariant(b, snapkvLens, func(b *testing.B, n int) { benchLayerSelect(b, n, 2048) })
}

// BenchmarkSnapKVRatio times Select against its Scores calls in alternation.
func BenchmarkSnapKVRatio(b *testing.B) {
	eachSIMDVariant(b, snapkvLens, func(b *testing.B, n int) { benchLayerRatio(b, n, 1024) })
}
