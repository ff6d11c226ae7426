//go:build !purego && !noasm

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/asm"
	"github.com/x448/float16"
)

// The NEON bodies of the bf16 and q8_0 kernels are their fp16 twins' code with the
// keys or values widened by their format (gen/arm64/dot/formats.go,
// gen/arm64/weighted). These tests hold them to that: over keys and values exactly
// representable in fp16 and in the format, every kernel (the row, block and panel
// kernels of Scores each, through the choice scoresNEON makes, and each directly)
// gives the fp16 kernel's bits, at every shape around their tiles, blocks and passes,
// with the gaps of strided keys poisoned with NaN.

// twinValues returns n values exactly representable in fp16, in bfloat16, and as q8_0
// values q·d with d = 2^e, e the value's block's exponent (one per 32 values, so that
// a body that takes the wrong block's scale is caught); also their halves, bfloat16s
// and blocks.
func twinValues(r *rand.Rand, n int) (h, b []uint16, q []byte) {
	h, b = make([]uint16, n), make([]uint16, n)
	q = make([]byte, (n+31)/32*q8BlockSize)
	for i := range n {
		blk := q[i/32*q8BlockSize:]
		if i%32 == 0 {
			e := -10 + r.IntN(9)
			d := float16.Fromfloat32(float32(math.Ldexp(1, e)))
			blk[0], blk[1] = byte(d), byte(d>>8)
		}
		d := float16.Frombits(uint16(blk[0]) | uint16(blk[1])<<8).Float32()
		qi := int8(r.IntN(255) - 127)
		blk[2+i%32] = byte(qi)
		v := float32(qi) * d
		h[i] = uint16(float16.Fromfloat32(v))
		b[i] = uint16(math.Float32bits(v) >> 16)
		if float16.Frombits(h[i]).Float32() != v || math.Float32frombits(uint32(b[i])<<16) != v {
			panic(fmt.Sprint("not a twin value: ", v))
		}
	}
	return h, b, q
}

// spread16 puts n rows of dim 16-bit elements stride apart, the gaps filled with nan.
func spread16(x []uint16, n, dim, stride int, nan uint16) []uint16 {
	out := make([]uint16, (n-1)*stride+dim)
	for i := range out {
		out[i] = nan
	}
	for j := range n {
		copy(out[j*stride:], x[j*dim:(j+1)*dim])
	}
	return out
}

// spreadQ8 puts n rows of dim/32 q8_0 blocks stride values apart, the gaps filled
// with blocks whose scale is a NaN.
func spreadQ8(x []byte, n, dim, stride int) []byte {
	bpr, stride := dim/32, stride/32
	out := make([]byte, ((n-1)*stride+bpr)*q8BlockSize)
	for i := 0; i < len(out); i += q8BlockSize {
		out[i], out[i+1] = 0x00, 0x7e
	}
	for j := range n {
		copy(out[j*stride*q8BlockSize:], x[j*bpr*q8BlockSize:(j+1)*bpr*q8BlockSize])
	}
	return out
}

// sameOr checks got against the row kernel's fp16 bits, rowWant, and returns want
// for the caller's check of the block and panel kernels' bits.
func sameOr(t *testing.T, got, rowWant, want []float32) []float32 {
	t.Helper()
	sameBitsFP16(t, "row", got, rowWant)
	return want
}

func sameBitsFP16(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for e := range want {
		if math.Float32bits(got[e]) != math.Float32bits(want[e]) {
			t.Fatalf("%s: [%d]: %v (%#08x), fp16 %v (%#08x)", what, e, got[e], math.Float32bits(got[e]), want[e], math.Float32bits(want[e]))
		}
	}
}

// guardedDst returns a dst of n floats with sentries around it, and a check of them.
func guardedDst(t *testing.T, n int) ([]float32, func(string)) {
	buf := make([]float32, n+2*dotPad)
	for i := range buf {
		buf[i] = dotSentry
	}
	return buf[dotPad : dotPad+n], func(what string) {
		t.Helper()
		for i, x := range buf {
			if (i < dotPad || i >= dotPad+n) && x != dotSentry {
				t.Fatalf("%s: wrote %v at %d outside dst", what, x, i-dotPad)
			}
		}
	}
}

func TestScoresFormatsNEONBits(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 2))
	dims := []int{1, 3, 5, 32, 64, 96, 136, 160, 256, 264, 512, 544}
	rowCounts := []int{1, 2, 3, 5, 8, 9, 17, 32, 33, 40, 65, 70}
	keyCounts := []int{1, 2, 3, 4, 5, 12, 13, 17, 33}
	if testing.Short() {
		dims, rowCounts, keyCounts = []int{3, 64, 96, 264, 544}, []int{1, 3, 8, 13, 32, 40, 70}, []int{1, 5, 12, 13, 17, 33}
	}
	for _, dim := range dims {
		for _, rows := range rowCounts {
			for _, n := range keyCounts {
				q := randomF32(r, rows*dim)
				h, b, k8 := twinValues(r, n*dim)
				stride := dim
				if r.IntN(2) == 0 {
					stride = dim + 32*(1+r.IntN(3))
				}
				scale := float32(r.NormFloat64())
				what := fmt.Sprintf("rows=%d n=%d dim=%d stride=%d", rows, n, dim, stride)
				want := make([]float32, rows*n)
				scoresNEON(want, q, spread16(h, n, dim, stride, nanHalf), rows, n, dim, stride, scale)
				got, check := guardedDst(t, rows*n)
				scoresBF16NEON(got, q, spread16(b, n, dim, stride, 0x7fc0), rows, n, dim, stride, scale)
				check("bf16 " + what)
				sameBitsFP16(t, "bf16 "+what, got, want)
				got, check = guardedDst(t, rows*n)
				scoresF32NEON(got, q, spreadElems(f32Format.fromHalves(h), n, dim, stride, f32Format.gap), rows, n, dim, stride, scale)
				check("f32 " + what)
				sameBitsFP16(t, "f32 "+what, got, want)
				if dim%32 != 0 {
					continue
				}
				got, check = guardedDst(t, rows*n)
				scoresQ8NEON(got, q, spreadQ8(k8, n, dim, stride), rows, n, dim, stride/32, scale)
				check("q8 " + what)
				sameBitsFP16(t, "q8 "+what, got, want)
			}
		}
	}
}

// TestScoresFormatsNEONKernels runs each of the three score kernels of each format
// directly, at shapes where scoresNEON would not choose it.
func TestScoresFormatsNEONKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 3))
	for _, dim := range []int{32, 64, 96, 128, 256} {
		for _, rows := range []int{1, 3, 4, 8, 16, 32} {
			for _, n := range []int{1, 3, 4, 5, 12, 13, 17} {
				q := randomF32(r, rows*dim)
				h, b, k8 := twinValues(r, n*dim)
				stride := dim + 32
				scale := float32(r.NormFloat64())
				kh, kb, kq := spread16(h, n, dim, stride, nanHalf), spread16(b, n, dim, stride, 0x7fc0), spreadQ8(k8, n, dim, stride)
				kf := spreadElems(f32Format.fromHalves(h), n, dim, stride, f32Format.gap)
				what := fmt.Sprintf("rows=%d n=%d dim=%d", rows, n, dim)
				rowWant := make([]float32, rows*n)
				asm.ScoresNEON(rowWant, q, kh, rows, n, dim, stride, scale)
				want := make([]float32, rows*n) // the block and panel kernels' bits
				asm.ScoresBlocksNEON(want, q, kh, make([]float32, blockKeysNEON*dim), rows, n, dim, stride, scale)
				for _, run := range []struct {
					name string
					f    func(dst []float32)
				}{
					{"row bf16", func(dst []float32) {
						asm.ScoresBF16NEON(dst, q, kb, rows, n, dim, stride, scale)
						copy(dst, sameOr(t, dst, rowWant, want))
					}},
					{"row q8", func(dst []float32) {
						asm.ScoresQ8NEON(dst, q, kq, rows, n, dim, stride/32, scale)
						copy(dst, sameOr(t, dst, rowWant, want))
					}},
					{"row f32", func(dst []float32) {
						asm.ScoresF32NEON(dst, q, kf, rows, n, dim, stride, scale)
						copy(dst, sameOr(t, dst, rowWant, want))
					}},
					{"blocks f32", func(dst []float32) {
						s := make([]float32, blockKeysNEON*dim)
						asm.ScoresBlocksF32NEON(dst, q, kf, s, rows, n, dim, stride, scale)
					}},
					{"panels f32", func(dst []float32) {
						if max(rows, 4)*dim > panelFloatsNEON {
							copy(dst, want)
							return
						}
						s := make([]float32, panelFloatsNEON+panelStageNEON)
						asm.ScoresPanelsF32NEON(dst, q, kf, s, rows, n, dim, stride, scale)
					}},
					{"blocks bf16", func(dst []float32) {
						s := make([]float32, blockKeysNEON*dim)
						asm.ScoresBlocksBF16NEON(dst, q, kb, s, rows, n, dim, stride, scale)
					}},
					{"blocks q8", func(dst []float32) {
						s := make([]float32, blockKeysNEON*dim)
						asm.ScoresBlocksQ8NEON(dst, q, kq, s, rows, n, dim, stride/32, scale)
					}},
					{"panels bf16", func(dst []float32) {
						if max(rows, 4)*dim > panelFloatsNEON {
							copy(dst, want)
							return
						}
						s := make([]float32, panelFloatsNEON+panelStageNEON)
						asm.ScoresPanelsBF16NEON(dst, q, kb, s, rows, n, dim, stride, scale)
					}},
					{"panels q8", func(dst []float32) {
						if max(rows, 4)*dim > panelFloatsNEON {
							copy(dst, want)
							return
						}
						s := make([]float32, panelFloatsNEON+panelStageNEON+panelScalesNEON)
						for i := range s {
							s[i] = float32(math.NaN())
						}
						asm.ScoresPanelsQ8NEON(dst, q, kq, s, rows, n, dim, stride/32, scale)
					}},
				} {
					got, check := guardedDst(t, rows*n)
					run.f(got)
					check(run.name + " " + what)
					sameBitsFP16(t, run.name+" "+what, got, want)
				}
			}
		}
	}
}

func TestDotFormatsNEONBits(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 4))
	for n := range 300 {
		a := randomF32(r, n)
		h, b, k8 := twinValues(r, n)
		want := dotF32F16ISA(a, h, neonISA)
		if got := asm.DotF32BF16NEON(a, b); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("n=%d: bf16 %v, fp16 %v", n, got, want)
		}
		if n%32 != 0 {
			continue
		}
		if got := asm.DotF32Q8NEON(a, k8); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("n=%d: q8 %v, fp16 %v", n, got, want)
		}
	}
}

func TestWeightedSumRowsFormatsNEONBits(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 5))
	for _, dim := range []int{1, 2, 3, 4, 5, 31, 32, 33, 64, 96, 128, 160, 192, 256, 320, 512} {
		for _, n := range []int{0, 1, 2, 3, 17, 63, 64, 65, 130} {
			w := randomF32(r, n)
			h, b, k8 := twinValues(r, max(n, 1)*dim)
			stride := dim
			if r.IntN(2) == 0 {
				stride = dim + 32*(1+r.IntN(2))
			}
			what := fmt.Sprintf("n=%d dim=%d stride=%d", n, dim, stride)
			want := make([]float32, dim)
			nn := max(n, 1)
			asm.WeightedSumRowsNEON(want, w, spread16(h, nn, dim, stride, nanHalf), stride)
			got, check := guardedDst(t, dim)
			asm.WeightedSumRowsBF16NEON(got, w, spread16(b, nn, dim, stride, 0x7fc0), stride)
			check("bf16 " + what)
			sameBitsFP16(t, "bf16 "+what, got, want)
			got, check = guardedDst(t, dim)
			asm.WeightedSumRowsF32NEON(got, w, spreadElems(f32Format.fromHalves(h), nn, dim, stride, f32Format.gap), stride)
			check("f32 " + what)
			sameBitsFP16(t, "f32 "+what, got, want)
			if dim%32 != 0 {
				continue
			}
			got, check = guardedDst(t, dim)
			asm.WeightedSumRowsQ8NEON(got, w, spreadQ8(k8, nn, dim, stride), stride/32)
			check("q8 " + what)
			sameBitsFP16(t, "q8 "+what, got, want)
		}
	}
}
