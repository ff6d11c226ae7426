package fuzz

import (
	"math"
	"testing"

	"github.com/kvsimd/kvsimd/internal/varianttest"

	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/x448/float16"
)

// panelKeys is enough keys for every variant's long-prompt kernel (the amd64 panels
// start at 128).
const panelKeys = 130

func halves(u []uint16) []kernels.Float16 {
	h := make([]kernels.Float16, len(u))
	for i, x := range u {
		h[i] = float16.Frombits(x)
	}
	return h
}

// strideOf is the row stride a fuzz target reads from gap: dim plus 0 to dim+7, so that
// both contiguous rows and gaps wider than a row occur at every dim.
func strideOf(dim int, gap uint8) int { return dim + int(gap)%(dim+8) }

// spread lays the n rows of dim halves in x out stride ≥ dim apart, NaN between them,
// the last row ending the slice (as the strided kernels allow): a kernel that reads a
// gap makes a NaN where the reference has none, or other bits than the rows' own.
func spread(x []kernels.Float16, n, dim, stride int) []kernels.Float16 {
	if n == 0 {
		return nil
	}
	out := make([]kernels.Float16, (n-1)*stride+dim)
	for i := range out {
		out[i] = float16.Frombits(0x7e00)
	}
	for j := range n {
		copy(out[j*stride:j*stride+dim], x[j*dim:(j+1)*dim])
	}
	return out
}

// sameBits reports whether a and b have the same bits, NaNs of any payload counting as
// one.
func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// FuzzDotF16 takes the first half of the words as a and the second as b.
func FuzzDotF16(f *testing.F) {
	f.Add([]byte{0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00, 0xff, 0x7b, 0x00, 0x3c, 0x00, 0x3c, 0x00, 0x04, 0xff, 0x7b})
	f.Fuzz(func(t *testing.T, data []byte) {
		u := uint16s(data)
		a, b := u[:len(u)/2], u[len(u)/2:len(u)/2*2]
		ha, hb := halves(a), halves(b)
		varianttest.Each(t, func(v string) {
			if err := oracle.ExpectDot(len(a), oracle.HalfAt(a), oracle.HalfAt(b), 1).CheckSettled(kernels.DotF16(ha, hb)); err != nil {
				t.Fatalf("%s: DotF16 of %d halves: %v", v, len(a), err)
			}
		})
	})
}

// FuzzDotF32F16 reads a float32 and a half from every six bytes.
func FuzzDotF32F16(f *testing.F) {
	f.Add([]byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x3c, 0xff, 0xff, 0x7f, 0x7f, 0x00, 0x40, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		n := len(data) / 6
		a, b := float32s(data[:4*n]), uint16s(data[4*n:6*n])
		hb := halves(b)
		varianttest.Each(t, func(v string) {
			if err := oracle.ExpectDot(n, oracle.SingleAt(a), oracle.HalfAt(b), 1).CheckSettled(kernels.DotF32F16(a, hb)); err != nil {
				t.Fatalf("%s: DotF32F16 of %d elements: %v", v, n, err)
			}
			if err := oracle.ExpectDot(n, oracle.SingleAt(a), oracle.SingleAt(a), 1).CheckSettled(kernels.DotF32(a, a)); err != nil {
				t.Fatalf("%s: DotF32 of %d elements: %v", v, n, err)
			}
		})
	})
}

// scoresMaxProducts caps rows·n·dim of a fuzzed score block, so that FuzzScores runs a
// million times in two minutes, minimizing included. Blocks this small reach every
// row kernel at every dim, and the panel kernels (from 128 keys) at dims up to 2; the
// panel kernels at larger dims are the table tests'.
// Longer data than scoresMaxBytes is passed over, so that no input the fuzzer keeps,
// and must minimize, is much longer than what the target reads.
const scoresMaxProducts, scoresMaxBytes = 1 << 12, 1 << 12

// FuzzScores takes the shape from its first arguments and the values from data:
// rows·dim float32 queries, then as many whole fp16 key rows as remain, up to
// scoresMaxProducts. With the top bit of rows set, the key rows repeat until there are
// enough (panelKeys) for the kernels that serve long prompts, within the same cap.
// Every variant's Scores is held to the float64 reference, and its ScoresStrided, on
// the same keys spread strideOf(dim, gap) apart, to Scores' bits.
func FuzzScores(f *testing.F) {
	f.Add(uint8(2), uint8(3), uint8(5), float32(0.5), []byte{
		0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0xc0,
		0x00, 0x00, 0xc0, 0x7f, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x80, 0x3f,
		0x00, 0x3c, 0x00, 0x3c, 0x00, 0xbc, 0x00, 0x7c, 0x00, 0x00, 0x00, 0x3c})
	f.Fuzz(func(t *testing.T, rows, dim, gap uint8, scale float32, data []byte) {
		if len(data) > scoresMaxBytes {
			return
		}
		d := 1 + int(dim)%130
		r := min(1+int(rows)%64, len(data)/(4*d), scoresMaxProducts/d)
		q := float32s(data[:4*r*d])
		k := uint16s(data[4*r*d:])
		maxKeys := scoresMaxProducts / max(r*d, 1)
		n := min(len(k)/d, maxKeys)
		k = k[:n*d]
		for given := n; rows&0x80 != 0 && given > 0 && n < min(panelKeys, maxKeys); n++ {
			j := n % given
			k = append(k, k[j*d:(j+1)*d]...)
		}
		if s := float64(scale); scale == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
			scale = 1 // a zero or non-finite scale only multiplies; the dots are the point
		}
		hk := halves(k)
		want := make([]oracle.DotExpectation, r*n)
		for i := range r {
			for j := range n {
				want[i*n+j] = oracle.ExpectDot(d, oracle.SingleAt(q[i*d:(i+1)*d]), oracle.HalfAt(k[j*d:(j+1)*d]), float64(scale))
			}
		}
		stride := strideOf(d, gap)
		sk := spread(hk, n, d, stride)
		dst, strided := make([]float32, r*n), make([]float32, r*n)
		varianttest.Each(t, func(v string) {
			kernels.Scores(dst, q, hk, r, n, d, scale)
			for e, got := range dst {
				if err := want[e].CheckSettled(got); err != nil {
					t.Fatalf("%s: Scores rows=%d n=%d dim=%d: dst[%d*n+%d]: %v", v, r, n, d, e/n, e%n, err)
				}
			}
			kernels.ScoresStrided(strided, q, sk, r, n, d, stride, scale)
			for e, got := range strided {
				if !sameBits(got, dst[e]) {
					t.Fatalf("%s: ScoresStrided rows=%d n=%d dim=%d stride=%d: dst[%d*n+%d] = %v, Scores gives %v", v, r, n, d, stride, e/n, e%n, got, dst[e])
				}
			}
		})
	})
}
