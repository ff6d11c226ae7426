package main

import (
	"fmt"
	"testing"

	"github.com/kvsimd/kvsimd/aligned"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/kernels"
)

// offsetRow is the length of the rows BenchmarkOffset runs: a 128k-key vote row.
const offsetRow = 131072

// BenchmarkOffset runs the row kernels on rows that start 0 and 3 floats past a 64-byte
// boundary, as the rows of a [W][L] block do when L is not a multiple of 16: the SIMD
// variants start their vector bodies on a boundary of the row they store to (or read,
// for Max and TopK), so the two offsets should run level. The dot products are the
// exception: their sums do not depend on where a and b lie, so they take their loads
// as they come, and a zmm load that is not 64-byte aligned splits a cache line (DotF32
// runs on the first 1024 floats of the row).
func BenchmarkOffset(b *testing.B) {
	top := make([]int32, 2048)
	for _, k := range []struct {
		name string
		run  func(x, y []float32, h []fp16.Float16)
	}{
		{"ToFloat32", func(x, _ []float32, h []fp16.Float16) { fp16.ToFloat32(x, h) }},
		{"Max", func(x, _ []float32, _ []fp16.Float16) { kernels.Max(x) }},
		{"Softmax", func(x, y []float32, _ []fp16.Float16) { copy(x, y); kernels.Softmax(x) }},
		{"Add", func(x, y []float32, _ []fp16.Float16) { kernels.Add(x, y) }},
		{"AvgPool1D", func(x, y []float32, _ []fp16.Float16) { kernels.AvgPool1D(x, y, 5) }},
		{"TopK", func(x, _ []float32, _ []fp16.Float16) { kernels.TopK(top, x, len(top)) }},
		{"DotF32", func(x, y []float32, _ []fp16.Float16) { kernels.DotF32(x[:1024], y[:1024]) }},
	} {
		b.Run(k.name, func(b *testing.B) {
			eachVariant(b, []int{offsetRow}, func(b *testing.B, n int) {
				y := offsetFloats(n, 0)
				copy(y, attentionLogits(n, 11))
				h := aligned.Make[fp16.Float16](n)
				fp16.FromFloat32(h, y)
				for _, off := range []int{0, 3} {
					x := offsetFloats(n, off)
					copy(x, y)
					b.Run(fmt.Sprintf("off=%d", off), func(b *testing.B) {
						for b.Loop() {
							k.run(x, y, h)
						}
					})
				}
			})
		})
	}
}

// offsetFloats returns n floats starting off floats past a 64-byte boundary.
func offsetFloats(n, off int) []float32 {
	return aligned.Make[float32](n + off)[off : off+n : off+n]
}
