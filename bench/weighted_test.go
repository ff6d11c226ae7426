package main

import (
	"fmt"
	"testing"
)

// BenchmarkWeightedSumRows runs the sub-benchmarks dim=D/variant/n=N.
func BenchmarkWeightedSumRows(b *testing.B) {
	for _, dim := range weightedDims {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			eachVariant(b, weightedSizes, func(b *testing.B, n int) { benchWeightedSumRows(b, n, dim) })
		})
	}
}
