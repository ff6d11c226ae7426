//go:build !purego && !noasm

package main

import (
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/asm"
	"github.com/kvsimd/kvsimd/kernels"
)

// dotViaValue is a package variable, so that the compiler cannot turn the call through
// it into a direct one.
var dotViaValue = func(a, b []float32) float32 {
	return asm.DotF32(&a[0], &b[0], len(a), asm.Select(asm.ISAAVX512, len(a), len(b)))
}

// BenchmarkDotCall shows where a short dot product's nanoseconds go, at n = 128 on
// avx512: "asm" calls the assembly entry directly (the floor for a Go call),
// "funcvalue" through a function value, as a dispatch table would (one more Go frame
// between the caller and the assembly), and "kernel" is kernels.DotF32, which inlines
// into this loop down to the same direct call as "asm".
func BenchmarkDotCall(b *testing.B) {
	if !slices.Contains(kernels.Variants(), "avx512") {
		b.Skip("no avx512 on this CPU")
	}
	start := kernels.Active()
	defer kernels.Use(start)
	must(kernels.Use("avx512"))
	x, y := randomFloats(128, 7), randomFloats(128, 8)
	b.Run("asm", func(b *testing.B) {
		for b.Loop() {
			dotSink += asm.DotF32(&x[0], &y[0], len(x), asm.Select(asm.ISAAVX512, len(x), len(y)))
		}
	})
	b.Run("funcvalue", func(b *testing.B) {
		for b.Loop() {
			dotSink += dotViaValue(x, y)
		}
	})
	b.Run("kernel", func(b *testing.B) {
		for b.Loop() {
			dotSink += kernels.DotF32(x, y)
		}
	})
}
