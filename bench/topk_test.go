package main

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// eachTopK runs body for every variant and size, then the sort baseline under the
// pseudo-variant "sort", so that benchstat -col /variant shows it as one more column.
func eachTopK(b *testing.B, gen func(r *rand.Rand, n int) []float32) {
	eachVariant(b, topkSizes, func(b *testing.B, n int) { benchTopK(b, n, gen) })
	for _, n := range topkSizes {
		b.Run(fmt.Sprintf("sort/n=%d", n), func(b *testing.B) { benchTopKSort(b, n, gen) })
	}
}

func BenchmarkTopK(b *testing.B)        { eachTopK(b, uniformScores) }
func BenchmarkTopKSkewed(b *testing.B)  { eachTopK(b, skewedScores) }
func BenchmarkTopKPlateau(b *testing.B) { eachTopK(b, plateauScores) }
func BenchmarkTopKFewHuge(b *testing.B) { eachTopK(b, fewHugeScores) }
