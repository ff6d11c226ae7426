package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The generic kernels' order, held bit for bit against test-only loops written from
// their docs: the dot products sum element i into partial sum i%4 (a tail of len%4
// into sum 0) and return (s₀+s₁)+(s₂+s₃); a score is scale times that dot product; a
// weighted sum adds w[j]·vⱼ in order of j. The same values in fp16, bf16 and q8_0 give
// the same bits (the package doc's promise for each variant), and every path is
// reached: rows widened whole, in chunks (dim > widenChunk), in registers, with and
// without a tail of rows.

// genericFormatRows holds the same small values (multiples of 1/4 of magnitude ≤ 31/4,
// exact in every format; the float32 queries and weights make the sums round) as fp16, bf16 and q8_0 rows with a stride in values.
type genericFormatRows struct {
	f32      []float32
	h, b     []uint16
	q        []byte
	n, dim   int
	stride   int // values
	strideQ8 int // blocks
}

func newGenericRows(r *rand.Rand, n, dim, stride int) genericFormatRows {
	g := genericFormatRows{n: n, dim: dim, stride: stride, strideQ8: stride / 32}
	g.f32 = make([]float32, n*stride)
	for i := range g.f32 {
		g.f32[i] = float32(r.IntN(63)-31) / 4
	}
	g.h = halvesOf(g.f32)
	g.b = make([]uint16, len(g.f32))
	for i, x := range g.f32 {
		g.b[i] = uint16(math.Float32bits(x) >> 16)
	}
	if stride%32 == 0 {
		g.q = make([]byte, len(g.f32)/32*q8BlockSize)
		for blk := range len(g.f32) / 32 {
			out := g.q[blk*q8BlockSize:]
			binary.NativeEndian.PutUint16(out, 0x3400) // d = 1/4
			for i := range 32 {
				out[2+i] = byte(int8(4 * g.f32[blk*32+i]))
			}
		}
	}
	return g
}

func partialOrderDot(a, b []float32) float32 {
	var s [4]float32
	for i := range a {
		if i >= len(a)/4*4 {
			s[0] += a[i] * b[i]
		} else {
			s[i%4] += a[i] * b[i]
		}
	}
	return (s[0] + s[1]) + (s[2] + s[3])
}

func TestGenericOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(44, 4))
	dims := []int{1, 2, 3, 5, 7, 8, 31, 32, 64, 96, 128, 255, 256, 257, 300, 512, 544}
	for _, dim := range dims {
		for _, n := range []int{0, 1, 3, 4, 5, 9} {
			stride := dim + 32 - dim%32
			if dim%32 == 0 {
				stride = dim
			}
			g := newGenericRows(r, n, dim, stride)
			const rows = 3
			q := make([]float32, rows*dim)
			for i := range q {
				q[i] = float32(r.NormFloat64())
			}
			name := fmt.Sprintf("dim=%d n=%d", dim, n)
			// Dot products against the first row (n ≥ 1).
			if n > 0 {
				want := partialOrderDot(q[:dim], g.f32[:dim])
				check := func(what string, got float32) {
					t.Helper()
					if math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("%s %s: %v, partial-sum order gives %v", what, name, got, want)
					}
				}
				check("dotF32F16Generic", dotF32F16Generic(q[:dim], g.h[:dim]))
				check("dotF32BF16Generic", dotF32BF16Generic(q[:dim], g.b[:dim]))
				check("dotF32Generic", dotF32Generic(q[:dim], g.f32[:dim]))
				if dim%32 == 0 {
					check("dotF32Q8Generic", dotF32Q8Generic(q[:dim], g.q))
				}
				want = partialOrderDot(g.f32[:dim], g.f32[:dim])
				check("dotF16Generic", dotF16Generic(g.h[:dim], g.h[:dim]))
			}
			// Score blocks: scale times the dot product of each pair.
			const scale = 0.375
			want := make([]float32, rows*n)
			for i := range rows {
				for j := range n {
					want[i*n+j] = scale * partialOrderDot(q[i*dim:(i+1)*dim], g.f32[j*stride:][:dim])
				}
			}
			got := make([]float32, rows*n)
			same := func(what string, want []float32) {
				t.Helper()
				for e := range want {
					if math.Float32bits(got[e]) != math.Float32bits(want[e]) {
						t.Fatalf("%s %s: [%d] = %v, want %v", what, name, e, got[e], want[e])
					}
				}
			}
			scoresGeneric(got, q, g.h, rows, n, dim, stride, scale)
			same("scoresGeneric", want)
			scoresBF16Generic(got, q, g.b, rows, n, dim, stride, scale)
			same("scoresBF16Generic", want)
			if dim%32 == 0 {
				scoresQ8Generic(got, q, g.q, rows, n, dim, g.strideQ8, scale)
				same("scoresQ8Generic", want)
			}
			// Weighted sums, one output row and rows of them, in order of j.
			w := make([]float32, rows*attendBlock)
			for i := range w {
				w[i] = float32(r.ExpFloat64())
			}
			init := make([]float32, rows*dim)
			for i := range init {
				init[i] = float32(r.NormFloat64())
			}
			wantW := append([]float32(nil), init...)
			for i := range rows {
				for j := range n {
					for d := range dim {
						wantW[i*dim+d] += w[i*attendBlock+j] * g.f32[j*stride+d]
					}
				}
			}
			got = make([]float32, rows*dim)
			for _, k := range []struct {
				what string
				run  func(dst []float32, rows int)
				ok   bool
			}{
				{"weightedSumRowsAddGeneric", func(dst []float32, rows int) {
					weightedSumRowsAddGeneric(dst, w, g.h, nil, rows, n, stride)
				}, true},
				{"weightedSumRowsAddBF16Generic", func(dst []float32, rows int) {
					weightedSumRowsAddBF16Generic(dst, w, g.b, nil, rows, n, stride)
				}, true},
				{"weightedSumRowsAddQ8Generic", func(dst []float32, rows int) {
					weightedSumRowsAddQ8Generic(dst, w, g.q, nil, rows, n, g.strideQ8)
				}, dim%32 == 0},
			} {
				if !k.ok {
					continue
				}
				copy(got, init)
				k.run(got, rows)
				same(k.what, wantW)
				copy(got, init)
				k.run(got[:dim], 1) // one row: widened in registers
				same(k.what+" one row", wantW[:dim])
			}
			// WeightedSumRows: row 0's weights from zero.
			dst := make([]float32, dim)
			want0 := make([]float32, dim)
			for j := range n {
				for d := range dim {
					want0[d] += w[j] * g.f32[j*stride+d]
				}
			}
			got = dst
			weightedSumRowsGeneric(dst, w[:n], g.h, stride)
			same("weightedSumRowsGeneric", want0)
			weightedSumRowsBF16Generic(dst, w[:n], g.b, stride)
			same("weightedSumRowsBF16Generic", want0)
			if dim%32 == 0 {
				weightedSumRowsQ8Generic(dst, w[:n], g.q, g.strideQ8)
				same("weightedSumRowsQ8Generic", want0)
			}
			got = make([]float32, rows*dim)
		}
	}
}
