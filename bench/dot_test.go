package main

import (
	"fmt"
	"testing"
)

func BenchmarkDotF16(b *testing.B)    { eachVariant(b, dotSizes, benchDotF16) }
func BenchmarkDotF32F16(b *testing.B) { eachVariant(b, dotSizes, benchDotF32F16) }
func BenchmarkDotF32(b *testing.B)    { eachVariant(b, dotSizes, benchDotF32) }

// BenchmarkScores runs the sub-benchmarks dim=D/variant/n=N at scoresRows query rows.
func BenchmarkScores(b *testing.B) {
	for _, dim := range scoresDims {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			eachVariant(b, scoresSizes, func(b *testing.B, n int) { benchScores(b, scoresRows, n, dim) })
		})
	}
}

// BenchmarkScoresStrided is BenchmarkScores on one KV head of a token-major cache
// (scoresKVHeads heads), scored where it lies: dim=D/variant/n=N, beside Scores' own.
func BenchmarkScoresStrided(b *testing.B) {
	for _, dim := range scoresDims {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			eachVariant(b, scoresSizes, func(b *testing.B, n int) { benchScoresStrided(b, scoresRows, n, dim, scoresKVHeads) })
		})
	}
}
