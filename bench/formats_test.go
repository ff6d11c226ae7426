package main

import (
	"fmt"
	"testing"
)

// The format benchmarks name the cache format kv=F before the variant, so that
// benchstat -col /kv sets the formats side by side on the same variant and size.

// BenchmarkScoresFormats runs dim=D/kv=F/variant/n=N at scoresRows query rows.
func BenchmarkScoresFormats(b *testing.B) {
	for _, dim := range scoresDims {
		for _, f := range cacheFormats {
			b.Run(fmt.Sprintf("dim=%d/kv=%s", dim, f), func(b *testing.B) {
				eachVariant(b, scoresSizes, func(b *testing.B, n int) { benchScoresFormat(b, f, scoresRows, n, dim) })
			})
		}
	}
}

// BenchmarkWeightedSumRowsFormats runs dim=D/kv=F/variant/n=N.
func BenchmarkWeightedSumRowsFormats(b *testing.B) {
	for _, dim := range weightedDims {
		for _, f := range cacheFormats {
			b.Run(fmt.Sprintf("dim=%d/kv=%s", dim, f), func(b *testing.B) {
				eachVariant(b, weightedSizes, func(b *testing.B, n int) { benchWeightedSumRowsFormat(b, f, n, dim) })
			})
		}
	}
}

// BenchmarkDotFormats runs kv=F/variant/n=N over the dot sizes that q8_0 blocks fill.
func BenchmarkDotFormats(b *testing.B) {
	for _, f := range cacheFormats {
		b.Run("kv="+f, func(b *testing.B) { eachVariant(b, dotSizes, func(b *testing.B, n int) { benchDotFormat(b, f, n) }) })
	}
}
