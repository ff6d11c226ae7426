package main

import (
	"fmt"
	"testing"
)

// BenchmarkGatherRows runs dim=D/variant/n=K (K rows of gatherSrcRows), then the
// contiguous copy of as many bytes as the pseudo-variant "contiguous", so that
// benchstat -col /variant shows it as one more column.
func BenchmarkGatherRows(b *testing.B) {
	for _, dim := range gatherDims {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			eachVariant(b, gatherSizes, func(b *testing.B, k int) { benchGatherRows(b, k, dim) })
			for _, k := range gatherSizes {
				b.Run(fmt.Sprintf("contiguous/n=%d", k), func(b *testing.B) { benchGatherContiguous(b, k, dim) })
			}
		})
	}
}
