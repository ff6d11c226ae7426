package kernels

import (
	"math"

	"github.com/kvsimd/kvsimd/internal/halftable"
)

// The generic kernels do not widen an element at a time through x448 (a call and a
// branchy conversion per element, 5× a plain float32 loop). Where a widened row serves
// several uses (a key row for every query row of a score block, a value row for every
// output row of the fused attention) they widen it, or a chunk of widenChunk elements
// of it, into a float32 buffer on the stack and run float32 loops over the buffer;
// where it serves one (the dot products, the weighted sum of one output row) they
// widen each element in registers as they use it (generic_inline.go). fp16 is widened
// by table lookup. The widening is a switch over the format, not a function value: a
// stack buffer passed to an indirect call escapes to the heap, and the kernels do not
// allocate.

// widenChunk is the elements widened at a time: a whole row at head dims up to 256,
// 1 KiB of stack per buffer. A multiple of 32, so a chunk of a q8_0 row is whole blocks,
// and of 4, so the partial sums of partialDots see the same elements at any chunking.
const widenChunk = 256

// halfTable is every half widened, the table fp16's generic ToFloat32 reads too.
var halfTable = halftable.Table

// widenHalves widens fp16 bit patterns exactly.
func widenHalves(dst []float32, src []uint16, table *[1 << 16]float32) {
	src = src[:len(dst)]
	for i, h := range src {
		dst[i] = table[h]
	}
}

// widenBF16 widens bfloat16 bit patterns exactly: each is the high half of its float32.
func widenBF16(dst []float32, src []uint16) {
	src = src[:len(dst)]
	for i, h := range src {
		dst[i] = math.Float32frombits(uint32(h) << 16)
	}
}

// widenQ8 widens the len(dst)/32 q8_0 blocks at the start of src, each value q·d.
func widenQ8(dst []float32, src []byte) {
	for b := 0; b < len(dst); b += 32 {
		block := src[b/32*q8BlockSize:][:q8BlockSize]
		d := q8Scale(block)
		out := dst[b : b+32 : b+32]
		for i, q := range block[2:q8BlockSize] {
			out[i] = int8Float32[q] * d
		}
	}
}

// cacheRows are the rows of a K or V cache in one of the four formats: halves or
// bfloat16 bit patterns in h or float32 values in f, with a stride in elements, or
// q8_0 bytes in b with a stride in blocks.
type cacheRows struct {
	format rowFormat
	h      []uint16
	f      []float32
	b      []byte
	stride int
	table  *[1 << 16]float32 // fp16 only
}

type rowFormat uint8

const (
	formatF16 rowFormat = iota
	formatBF16
	formatQ8
	formatF32
)

func halfRows(v []uint16, stride int) cacheRows {
	return cacheRows{format: formatF16, h: v, stride: stride, table: halfTable()}
}

func bf16Rows(v []uint16, stride int) cacheRows {
	return cacheRows{format: formatBF16, h: v, stride: stride}
}

func q8Rows(v []byte, stride int) cacheRows { return cacheRows{format: formatQ8, b: v, stride: stride} }

func f32Rows(v []float32, stride int) cacheRows {
	return cacheRows{format: formatF32, f: v, stride: stride}
}

// widen widens elements [d0, d0+len(dst)) of row j into dst; for q8_0, d0 and len(dst)
// are multiples of 32.
func (r cacheRows) widen(dst []float32, j, d0 int) {
	switch r.format {
	case formatF16:
		widenHalves(dst, r.h[j*r.stride+d0:][:len(dst)], r.table)
	case formatBF16:
		widenBF16(dst, r.h[j*r.stride+d0:][:len(dst)])
	case formatF32:
		copy(dst, r.f[j*r.stride+d0:][:len(dst)])
	default:
		widenQ8(dst, r.b[(j*r.stride+d0/32)*q8BlockSize:])
	}
}

// partialDots are the four partial sums of every generic dot product: element i of a
// row goes to sum i%4 (the last len%4 elements to sum 0), and the result is
// (s₀+s₁)+(s₂+s₃). Four independent additions per step keep the loop off the latency
// of one float32 add, and the order is the same for every format and chunking, so the
// bf16 and q8_0 twins give the fp16 kernels' bits for equal values, as the package
// doc promises. Each partial sum adds at most ⌈n/4⌉+1 terms, well inside DotF16's
// bound of 2·n·2⁻²⁴·Σ|aᵢbᵢ|.
type partialDots [4]float32

// add accumulates a·b; only the last chunk of a row may have a length that is not a
// multiple of 4.
func (s partialDots) add(a, b []float32) partialDots {
	s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
	b = b[:len(a)]
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x, y := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return partialDots{s0, s1, s2, s3}
}

func (s partialDots) sum() float32 { return (s[0] + s[1]) + (s[2] + s[3]) }

// scoresWidened is the generic score block: each key row is widened once and dotted
// with every query row, with the operations of cacheRows.dot, so an entry has the bits of the
// format's generic dot product times scale.
func scoresWidened(dst, q []float32, rows, n, dim int, scale float32, cache cacheRows) {
	if dim > widenChunk {
		for i := range rows {
			qi := q[i*dim : (i+1)*dim]
			for j := range n {
				dst[i*n+j] = scale * cache.dot(qi, j)
			}
		}
		return
	}
	var buf [widenChunk]float32
	k := buf[:dim]
	for j := range n {
		cache.widen(k, j, 0)
		for i := range rows {
			dst[i*n+j] = scale * partialDots{}.add(q[i*dim:(i+1)*dim], k).sum()
		}
	}
}

// weightedAddWidened adds Σⱼ w[i*wStride+j]·vⱼ over j < n, in order of j, to each of
// the rows outputs dst[i*dim:(i+1)*dim], each term's product rounded before it is
// added (unless the compiler fuses them, as it would in the reference loop). The value
// rows are widened four at a time, a chunk of widenChunk columns at once, and each
// chunk serves every output row; an output is loaded and stored once per four rows.
func weightedAddWidened(dst, w []float32, wStride, rows, n, dim int, cache cacheRows) {
	if rows == 1 {
		weightedSumInline(dst[:dim], w[:n], cache)
		return
	}
	var bufs [4][widenChunk]float32
	for d0 := 0; d0 < dim; d0 += widenChunk {
		c := min(widenChunk, dim-d0)
		b0, b1, b2, b3 := bufs[0][:c], bufs[1][:c], bufs[2][:c], bufs[3][:c]
		j := 0
		for ; j+4 <= n; j += 4 {
			cache.widen(b0, j, d0)
			cache.widen(b1, j+1, d0)
			cache.widen(b2, j+2, d0)
			cache.widen(b3, j+3, d0)
			for i := range rows {
				p := w[i*wStride+j:][:4]
				addRows4(dst[i*dim+d0:][:c], p[0], p[1], p[2], p[3], b0, b1, b2, b3)
			}
		}
		for ; j < n; j++ {
			cache.widen(b0, j, d0)
			for i := range rows {
				addRow(dst[i*dim+d0:][:c], w[i*wStride+j], b0)
			}
		}
	}
}

// addRows4 adds p0·v0, p1·v1, p2·v2 and p3·v3 to acc, in that order.
func addRows4(acc []float32, p0, p1, p2, p3 float32, v0, v1, v2, v3 []float32) {
	v0, v1, v2, v3 = v0[:len(acc)], v1[:len(acc)], v2[:len(acc)], v3[:len(acc)]
	for d, x := range acc {
		x += p0 * v0[d]
		x += p1 * v1[d]
		x += p2 * v2[d]
		x += p3 * v3[d]
		acc[d] = x
	}
}

// addRow adds p·v to acc.
func addRow(acc []float32, p float32, v []float32) {
	v = v[:len(acc)]
	for d, x := range v {
		acc[d] += p * x
	}
}
