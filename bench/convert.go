package main

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/aligned"
	"github.com/kvsimd/kvsimd/fp16"
)

// convertSizes spans one L1-resident row to a DRAM-sized block.
var convertSizes = []int{64, 1024, 32768, 1 << 20}

func init() {
	for _, n := range convertSizes {
		sections = append(sections, section{fmt.Sprintf("ToFloat32 n=%d", n), "elem", n, func(b *testing.B) { benchToFloat32(b, n) }})
	}
	for _, n := range convertSizes {
		sections = append(sections, section{fmt.Sprintf("FromFloat32 n=%d", n), "elem", n, func(b *testing.B) { benchFromFloat32(b, n) }})
	}
}

// randomHalves returns finite halves of attention-key magnitude.
func randomHalves(n int, seed uint64) []fp16.Float16 {
	r := rand.New(rand.NewPCG(seed, 1))
	f := make([]float32, n)
	for i := range f {
		f[i] = float32(r.NormFloat64())
	}
	h := aligned.Make[fp16.Float16](n)
	fp16.FromFloat32(h, f)
	return h
}

func benchToFloat32(b *testing.B, n int) {
	src, dst := randomHalves(n, 1), make([]float32, n)
	b.SetBytes(int64(n * 2))
	b.ReportAllocs()
	for b.Loop() {
		fp16.ToFloat32(dst, src)
	}
}

func benchFromFloat32(b *testing.B, n int) {
	src, dst := make([]float32, n), make([]fp16.Float16, n)
	fp16.ToFloat32(src, randomHalves(n, 2))
	b.SetBytes(int64(n * 4))
	b.ReportAllocs()
	for b.Loop() {
		fp16.FromFloat32(dst, src)
	}
}
