package main

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/q8"
)

// BenchmarkGeneric measures the pure-Go kernels (the generic variant: KVSIMD_ISA=generic,
// -tags purego, wasm, riscv64) against a naive float32 loop over the same data widened
// to float32 beforehand (one accumulator, index order: what an engine writes by hand),
// and against avx2 where the CPU has it. Sub-benchmarks are kernel/shape/impl=…, so
//
//	go test ./bench -run '^$' -bench Generic -count 10 -cpu 1 > gen.txt
//	benchstat -col /impl gen.txt
//
// gives the table generic ÷ naive and generic ÷ avx2 (issue 44 wants generic ≤ 1.0×
// naive). The decode shapes are 4 query rows (a GQA group), dim 128, 2048 keys, and
// Attend over 8 KV heads of 4 query heads each.
func BenchmarkGeneric(b *testing.B) {
	const dim, n, rows, heads = 128, 2048, 4, 8
	impls := []string{"generic"}
	if slices.Contains(kernels.Variants(), "avx2") {
		impls = append(impls, "avx2")
	}
	start := kernels.Active()
	defer kernels.Use(start)
	run := func(name string, naive func(), kernel func()) {
		b.Run(name+"/impl=naive", func(b *testing.B) {
			for b.Loop() {
				naive()
			}
		})
		for _, v := range impls {
			must(kernels.Use(v))
			b.Run(name+"/impl="+v, func(b *testing.B) {
				for b.Loop() {
					kernel()
				}
			})
		}
		must(kernels.Use(start))
	}

	for _, size := range []int{128, 2048} {
		x, y := randomFloats(size, 1), randomFloats(size, 2)
		h, g := make([]fp16.Float16, size), make([]fp16.Float16, size)
		fp16.FromFloat32(h, x)
		fp16.FromFloat32(g, y)
		xw, yw := widenedF16(h), widenedF16(g)
		bb := make([]bf16.BFloat16, size)
		bf16.FromFloat32(bb, y)
		bw := make([]float32, size)
		bf16.ToFloat32(bw, bb)
		qb := make([]q8.Block, size/q8.BlockLen)
		q8.Quantize(qb, y)
		qw := make([]float32, size)
		q8.Dequantize(qw, qb)
		s := fmt.Sprintf("n=%d", size)
		run("DotF16/"+s, func() { dotSink += naiveDot(xw, yw) }, func() { dotSink += kernels.DotF16(h, g) })
		run("DotF32F16/"+s, func() { dotSink += naiveDot(x, yw) }, func() { dotSink += kernels.DotF32F16(x, g) })
		run("DotF32BF16/"+s, func() { dotSink += naiveDot(x, bw) }, func() { dotSink += kernels.DotF32BF16(x, bb) })
		run("DotF32Q8/"+s, func() { dotSink += naiveDot(x, qw) }, func() { dotSink += kernels.DotF32Q8(x, qb) })
	}

	q := randomFloats(rows*dim, 3)
	kv := randomFloats(n*dim, 4)
	k16 := make([]fp16.Float16, n*dim)
	fp16.FromFloat32(k16, kv)
	kbf := make([]bf16.BFloat16, n*dim)
	bf16.FromFloat32(kbf, kv)
	kq8 := make([]q8.Block, n*dim/q8.BlockLen)
	q8.Quantize(kq8, kv)
	kw16, kwbf, kwq8 := widenedF16(k16), make([]float32, n*dim), make([]float32, n*dim)
	bf16.ToFloat32(kwbf, kbf)
	q8.Dequantize(kwq8, kq8)
	dst := make([]float32, rows*n)
	scale := float32(1 / math.Sqrt(dim))
	shape := fmt.Sprintf("rows=%d/dim=%d/n=%d", rows, dim, n)
	run("Scores/fp16/"+shape, func() { naiveScores(dst, q, kw16, rows, n, dim, scale) },
		func() { kernels.Scores(dst, q, k16, rows, n, dim, scale) })
	run("Scores/bf16/"+shape, func() { naiveScores(dst, q, kwbf, rows, n, dim, scale) },
		func() { kernels.ScoresBF16(dst, q, kbf, rows, n, dim, scale) })
	run("Scores/q8_0/"+shape, func() { naiveScores(dst, q, kwq8, rows, n, dim, scale) },
		func() { kernels.ScoresQ8(dst, q, kq8, rows, n, dim, scale) })
	run("Scores/f32/"+shape, func() { naiveScores(dst, q, kv, rows, n, dim, scale) },
		func() { kernels.ScoresF32(dst, q, kv, rows, n, dim, scale) })

	w := attentionWeightsOf(n)
	out := make([]float32, dim)
	wshape := fmt.Sprintf("dim=%d/n=%d", dim, n)
	run("WeightedSumRows/fp16/"+wshape, func() { naiveWeighted(out, w, kw16) },
		func() { kernels.WeightedSumRows(out, w, k16) })
	run("WeightedSumRows/bf16/"+wshape, func() { naiveWeighted(out, w, kwbf) },
		func() { kernels.WeightedSumRowsBF16(out, w, kbf) })
	run("WeightedSumRows/q8_0/"+wshape, func() { naiveWeighted(out, w, kwq8) },
		func() { kernels.WeightedSumRowsQ8(out, w, kq8) })
	run("WeightedSumRows/f32/"+wshape, func() { naiveWeighted(out, w, kv) },
		func() { kernels.WeightedSumRowsF32(out, w, kv) })

	// Attend: one decode step of a layer, head-major, each KV head's 4 query heads.
	qa := randomFloats(heads*rows*dim, 5)
	ka, va := randomFloats(heads*n*dim, 6), randomFloats(heads*n*dim, 7)
	kh, vh := make([]fp16.Float16, len(ka)), make([]fp16.Float16, len(va))
	fp16.FromFloat32(kh, ka)
	fp16.FromFloat32(vh, va)
	kaw, vaw := widenedF16(kh), widenedF16(vh)
	outA := make([]float32, heads*rows*dim)
	scores := make([]float32, rows*n)
	naiveLayer := func(k, v []float32) {
		for hd := range heads {
			naiveAttend(outA[hd*rows*dim:][:rows*dim], qa[hd*rows*dim:][:rows*dim],
				k[hd*n*dim:][:n*dim], v[hd*n*dim:][:n*dim], scores, rows, n, dim, scale)
		}
	}
	attendShape := fmt.Sprintf("Hkv=%d/G=%d/dim=%d/n=%d", heads, rows, dim, n)
	run("Attend/fp16/"+attendShape, func() { naiveLayer(kaw, vaw) }, func() {
		for hd := range heads {
			kernels.Attend(outA[hd*rows*dim:][:rows*dim], qa[hd*rows*dim:][:rows*dim],
				kh[hd*n*dim:][:n*dim], vh[hd*n*dim:][:n*dim], rows, n, dim, scale)
		}
	})
	run("Attend/f32/"+attendShape, func() { naiveLayer(ka, va) }, func() {
		for hd := range heads {
			kernels.AttendF32(outA[hd*rows*dim:][:rows*dim], qa[hd*rows*dim:][:rows*dim],
				ka[hd*n*dim:][:n*dim], va[hd*n*dim:][:n*dim], rows, n, dim, scale)
		}
	})
}

func widenedF16(h []fp16.Float16) []float32 {
	f := make([]float32, len(h))
	fp16.ToFloat32(f, h)
	return f
}

// attentionWeightsOf returns the softmax of n attention logits.
func attentionWeightsOf(n int) []float32 {
	w := attentionLogits(n, 8)
	naiveSoftmax(w)
	return w
}

// The naive loops: float32, one accumulator, index order, over pre-widened data.

func naiveDot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func naiveScores(dst, q, k []float32, rows, n, dim int, scale float32) {
	for i := range rows {
		for j := range n {
			dst[i*n+j] = scale * naiveDot(q[i*dim:(i+1)*dim], k[j*dim:(j+1)*dim])
		}
	}
}

func naiveWeighted(dst, w, v []float32) {
	dim := len(dst)
	clear(dst)
	for j, p := range w {
		row := v[j*dim : (j+1)*dim]
		for d := range dst {
			dst[d] += p * row[d]
		}
	}
}

func naiveSoftmax(x []float32) {
	m := float32(math.Inf(-1))
	for _, v := range x {
		m = max(m, v)
	}
	var s float32
	for i, v := range x {
		e := float32(math.Exp(float64(v - m)))
		x[i] = e
		s += e
	}
	for i := range x {
		x[i] /= s
	}
}

func naiveAttend(out, q, k, v, scores []float32, rows, n, dim int, scale float32) {
	naiveScores(scores, q, k, rows, n, dim, scale)
	for i := range rows {
		naiveSoftmax(scores[i*n : (i+1)*n])
		naiveWeighted(out[i*dim:(i+1)*dim], scores[i*n:(i+1)*n], v)
	}
}
