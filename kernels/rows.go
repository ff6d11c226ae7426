package kernels

import (
	"encoding/binary"
	"math"
)

// keyRows is a matrix of keys or values in one cache format, rows stride elements
// apart, read one value at a time for the float64 settling of non-finite results: the
// paths that every format shares, so that the float64 answer is the same whichever
// format held the values.
type keyRows interface {
	// at is value d of row j, widened exactly.
	at(j, d int) float64
}

// The largest magnitude of a finite value in each format: fp16's 65504, bfloat16's
// and float32's, and q8_0's 127 times the largest fp16 scale.
const (
	maxF16  = 65504
	maxBF16 = math.MaxFloat32
	maxF32  = math.MaxFloat32
	maxQ8   = 127 * 65504
)

type rowsF16 struct {
	b      []uint16
	stride int
}

func (r rowsF16) at(j, d int) float64 { return float64(halfFloat32(r.b[j*r.stride+d])) }

type rowsBF16 struct {
	b      []uint16
	stride int
}

func (r rowsBF16) at(j, d int) float64 { return float64(bf16Float32(r.b[j*r.stride+d])) }

type rowsF32 struct {
	f      []float32
	stride int
}

func (r rowsF32) at(j, d int) float64 { return float64(r.f[j*r.stride+d]) }

// rowsQ8 holds q8_0 blocks as bytes, rows stride blocks apart.
type rowsQ8 struct {
	b      []byte
	stride int
}

func (r rowsQ8) at(j, d int) float64 {
	o := (j*r.stride + d/32) * q8BlockSize
	return float64(q8Value(r.b[o:o+q8BlockSize], d%32))
}

// bf16Float32 widens one bfloat16 bit pattern exactly.
func bf16Float32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// q8BlockSize is the bytes of a q8_0 block: its fp16 scale, then 32 int8 quants.
const q8BlockSize = 34

// q8Scale is a q8_0 block's scale d, widened; the block holds it in the machine's byte
// order, as q8.Block.D does.
func q8Scale(block []byte) float32 { return halfFloat32(binary.NativeEndian.Uint16(block)) }

// q8Value is value i of a q8_0 block, q_i·d: exact in float32, as |q_i| ≤ 127 and d has
// 11 significant bits.
func q8Value(block []byte, i int) float32 { return float32(int8(block[2+i])) * q8Scale(block) }

// settleRow is float32(scale·Σ_d q[d]·row j of keys), summed in float64 in the order of
// d and rounded once: the settled value of a non-finite score or dot product.
func settleRow[K keyRows](q []float32, keys K, j int, scale float32) float32 {
	var w float64
	for d, x := range q {
		w += float64(x) * keys.at(j, d)
	}
	return float32(float64(scale) * w)
}

// settleDot returns s, a variant's float32 dot product of a with the one row of b, if
// it is finite, and else its settled value (see DotF32F16).
func settleDot[K keyRows](s float32, a []float32, b K) float32 {
	if s-s == 0 {
		return s
	}
	return settleRow(a, b, 0, 1)
}

// settleWeightedSumRows settles every output that is NaN or ±Inf (see WeightedSumRows):
// rows holds the value rows as they were summed.
func settleWeightedSumRows[K keyRows](dst, w []float32, rows K) {
	if s := sumOf.Call(dst); s-s == 0 { // a float64 sum of floats is finite iff they all are
		return
	}
	for d, s := range dst {
		if s-s == 0 {
			continue
		}
		var t float64
		for j, p := range w {
			t += float64(p) * rows.at(j, d)
		}
		dst[d] = float32(t)
	}
}
