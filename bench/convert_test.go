package main

import "testing"

func BenchmarkToFloat32(b *testing.B)   { eachVariant(b, convertSizes, benchToFloat32) }
func BenchmarkFromFloat32(b *testing.B) { eachVariant(b, convertSizes, benchFromFloat32) }

// streamingSize is 64 Mi elements: 128 MiB of halves, past any L3, so that these
// kernels stream from DRAM (the "streaming sizes"; the C reference times the
// same n).
const streamingSize = 64 << 20

// BenchmarkStreaming runs DotF16 and ToFloat32 at streamingSize: kernel/variant/n=N.
func BenchmarkStreaming(b *testing.B) {
	b.Run("DotF16", func(b *testing.B) { eachVariant(b, []int{streamingSize}, benchDotF16) })
	b.Run("ToFloat32", func(b *testing.B) { eachVariant(b, []int{streamingSize}, benchToFloat32) })
}
