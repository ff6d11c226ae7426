package fuzz

import (
	"math"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/x448/float16"
)

// The format targets read their keys or values, by format%3, as bfloat16 (0), as q8_0
// blocks of 34 bytes (1, dims a multiple of 32) or as float32 (2, 4 bytes a value),
// and check every variant against the float64 bound and the strided forms against the
// contiguous ones.

// formatRows is n rows of dim values in one format, as the fuzzer gave them.
type formatRows struct {
	bf []bf16.BFloat16
	q  []q8.Block
	f  []float32
}

// isQ8 and isF32 pick the format from the fuzzer's byte; neither is bfloat16.
func isQ8(format uint8) bool  { return format%3 == 1 }
func isF32(format uint8) bool { return format%3 == 2 }

// formatDim maps the fuzzer's byte to a dim the format takes.
func formatDim(format, dim uint8) int {
	if isQ8(format) {
		return q8.BlockLen * (1 + int(dim)%5)
	}
	return 1 + int(dim)%130
}

// readRows reads up to maxRows rows of dim values from data, and how many it read.
func readRows(format uint8, data []byte, dim, maxRows int) (formatRows, int) {
	if isQ8(format) {
		per := dim / q8.BlockLen * q8.BlockSize
		n := min(len(data)/per, maxRows)
		b := make([]byte, n*per) // Go's allocation: 2-byte aligned, as FromBytes needs
		copy(b, data)
		return formatRows{q: q8.FromBytes(b)}, n
	}
	if isF32(format) {
		n := min(len(data)/(4*dim), maxRows)
		return formatRows{f: float32s(data[:4*n*dim])}, n
	}
	n := min(len(data)/(2*dim), maxRows)
	return formatRows{bf: bf16.FromBits(uint16s(data[:2*n*dim]))}, n
}

// value is value i of the rows, widened exactly.
func (r formatRows) value(i int) float64 {
	if r.q != nil {
		b := r.q[i/q8.BlockLen]
		return float64(float32(b.Q[i%q8.BlockLen]) * b.D.Float32())
	}
	if r.f != nil {
		return float64(r.f[i])
	}
	return float64(r.bf[i].Float32())
}

// repeat extends the rows of dim values to n by repeating them.
func (r formatRows) repeat(given, n, dim int) formatRows {
	if r.q != nil {
		w := dim / q8.BlockLen
		for j := given; j < n; j++ {
			r.q = append(r.q, r.q[j%given*w:][:w]...)
		}
		return r
	}
	for j := given; j < n; j++ {
		if r.f != nil {
			r.f = append(r.f, r.f[j%given*dim:][:dim]...)
		} else {
			r.bf = append(r.bf, r.bf[j%given*dim:][:dim]...)
		}
	}
	return r
}

// spread lays the n rows out stride values apart (a multiple of 32 for q8_0), with
// elements that widen to NaN between them.
func (r formatRows) spread(n, dim, stride int) formatRows {
	if n == 0 {
		return formatRows{}
	}
	if r.q != nil {
		w, ws := dim/q8.BlockLen, stride/q8.BlockLen
		out := make([]q8.Block, (n-1)*ws+w)
		for i := range out {
			out[i].D = float16.Frombits(0x7e00) // NaN
		}
		for j := range n {
			copy(out[j*ws:], r.q[j*w:(j+1)*w])
		}
		return formatRows{q: out}
	}
	if r.f != nil {
		out := make([]float32, (n-1)*stride+dim)
		for i := range out {
			out[i] = math.Float32frombits(0x7fc00000)
		}
		for j := range n {
			copy(out[j*stride:], r.f[j*dim:(j+1)*dim])
		}
		return formatRows{f: out}
	}
	out := make([]bf16.BFloat16, (n-1)*stride+dim)
	for i := range out {
		out[i] = 0x7fc0
	}
	for j := range n {
		copy(out[j*stride:], r.bf[j*dim:(j+1)*dim])
	}
	return formatRows{bf: out}
}

// formatStride is strideOf for the format: q8_0 strides are whole blocks.
func formatStride(format uint8, dim int, gap uint8) int {
	if isQ8(format) {
		return dim + q8.BlockLen*(int(gap)%3)
	}
	return strideOf(dim, gap)
}

// FuzzScoresFormats is FuzzScores with bfloat16, q8_0 or float32 keys.
func FuzzScoresFormats(f *testing.F) {
	seed := make([]byte, 0, 400)
	for i := range 400 {
		seed = append(seed, byte(i*37+11))
	}
	f.Add(uint8(0), uint8(2), uint8(3), uint8(5), float32(0.5), seed)
	f.Add(uint8(1), uint8(0x81), uint8(0), uint8(1), float32(-2), seed)
	f.Add(uint8(2), uint8(2), uint8(3), uint8(5), float32(0.5), seed)
	f.Add(uint8(2), uint8(0x81), uint8(0), uint8(9), float32(-0.25), seed)
	f.Fuzz(func(t *testing.T, format, rows, dim, gap uint8, scale float32, data []byte) {
		if len(data) > scoresMaxBytes {
			return
		}
		d := formatDim(format, dim)
		r := min(1+int(rows)%64, len(data)/(4*d), scoresMaxProducts/d)
		q := float32s(data[:4*r*d])
		maxKeys := scoresMaxProducts / max(r*d, 1)
		k, given := readRows(format, data[4*r*d:], d, maxKeys)
		n := given
		if rows&0x80 != 0 && given > 0 {
			n = max(given, min(panelKeys, maxKeys))
			k = k.repeat(given, n, d)
		}
		if s := float64(scale); scale == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
			scale = 1
		}
		want := make([]oracle.DotExpectation, r*n)
		for i := range r {
			for j := range n {
				want[i*n+j] = oracle.ExpectDot(d, oracle.SingleAt(q[i*d:(i+1)*d]), func(e int) float64 { return k.value(j*d + e) }, float64(scale))
			}
		}
		stride := formatStride(format, d, gap)
		sk := k.spread(n, d, stride)
		dst, strided := make([]float32, r*n), make([]float32, r*n)
		varianttest.Each(t, func(v string) {
			switch {
			case isQ8(format):
				kernels.ScoresQ8(dst, q, k.q, r, n, d, scale)
				kernels.ScoresStridedQ8(strided, q, sk.q, r, n, d, stride, scale)
			case isF32(format):
				kernels.ScoresF32(dst, q, k.f, r, n, d, scale)
				kernels.ScoresStridedF32(strided, q, sk.f, r, n, d, stride, scale)
			default:
				kernels.ScoresBF16(dst, q, k.bf, r, n, d, scale)
				kernels.ScoresStridedBF16(strided, q, sk.bf, r, n, d, stride, scale)
			}
			for e, got := range dst {
				if err := want[e].CheckSettled(got); err != nil {
					t.Fatalf("%s: format %d rows=%d n=%d dim=%d: dst[%d*n+%d]: %v", v, format%3, r, n, d, e/n, e%n, err)
				}
				if !sameBits(strided[e], got) {
					t.Fatalf("%s: format %d stride=%d: dst[%d*n+%d] = %v, contiguous gives %v", v, format%3, stride, e/n, e%n, strided[e], got)
				}
			}
		})
	})
}

// FuzzWeightedSumRowsFormats is FuzzWeightedSumRows with bfloat16, q8_0 or float32
// values: the first float32s are the weights, one per row that follows.
func FuzzWeightedSumRowsFormats(f *testing.F) {
	seed := make([]byte, 0, 300)
	for i := range 300 {
		seed = append(seed, byte(i*53+7))
	}
	f.Add(uint8(0), uint8(4), uint8(3), seed)
	f.Add(uint8(1), uint8(0), uint8(1), seed)
	f.Add(uint8(2), uint8(4), uint8(3), seed)
	f.Fuzz(func(t *testing.T, format, dim, gap uint8, data []byte) {
		if len(data) > scoresMaxBytes {
			return
		}
		d := formatDim(format, dim)
		rowBytes := 2 * d
		switch {
		case isQ8(format):
			rowBytes = d / q8.BlockLen * q8.BlockSize
		case isF32(format):
			rowBytes = 4 * d
		}
		n := len(data) / (4 + rowBytes)
		w := float32s(data[:4*n])
		v, _ := readRows(format, data[4*n:], d, n)
		stride := formatStride(format, d, gap)
		sv := v.spread(n, d, stride)
		dst, strided := make([]float32, d), make([]float32, d)
		varianttest.Each(t, func(variant string) {
			switch {
			case isQ8(format):
				kernels.WeightedSumRowsQ8(dst, w, v.q)
				kernels.WeightedSumRowsStridedQ8(strided, w, sv.q, stride)
			case isF32(format):
				kernels.WeightedSumRowsF32(dst, w, v.f)
				kernels.WeightedSumRowsStridedF32(strided, w, sv.f, stride)
			default:
				kernels.WeightedSumRowsBF16(dst, w, v.bf)
				kernels.WeightedSumRowsStridedBF16(strided, w, sv.bf, stride)
			}
			for c, got := range dst {
				want := oracle.ExpectDot(n, oracle.SingleAt(w), func(j int) float64 { return v.value(j*d + c) }, 1)
				if err := want.CheckSettled(got); err != nil {
					t.Fatalf("%s: format %d n=%d dim=%d: output %d: %v", variant, format%3, n, d, c, err)
				}
				if !sameBits(strided[c], got) {
					t.Fatalf("%s: format %d stride=%d: output %d = %v, contiguous gives %v", variant, format%3, stride, c, strided[c], got)
				}
			}
		})
	})
}

// FuzzDotFormats reads a float32 and a value of the format from each part of data; a
// float32 key's dot product is DotF32.
func FuzzDotFormats(f *testing.F) {
	seed := make([]byte, 0, 200)
	for i := range 200 {
		seed = append(seed, byte(i*29+3))
	}
	f.Add(uint8(0), seed)
	f.Add(uint8(1), seed)
	f.Add(uint8(2), seed)
	f.Fuzz(func(t *testing.T, format uint8, data []byte) {
		var b formatRows
		var n int
		switch {
		case isQ8(format):
			blocks := len(data) / (4*q8.BlockLen + q8.BlockSize)
			n = q8.BlockLen * blocks
			b, _ = readRows(format, data[4*n:], q8.BlockLen, blocks)
		case isF32(format):
			n = len(data) / 8
			b, _ = readRows(format, data[4*n:], 1, n)
		default:
			n = len(data) / 6
			b, _ = readRows(format, data[4*n:], 1, n)
		}
		a := float32s(data[:4*n])
		want := oracle.ExpectDot(n, oracle.SingleAt(a), b.value, 1)
		varianttest.Each(t, func(v string) {
			var got float32
			switch {
			case isQ8(format):
				got = kernels.DotF32Q8(a, b.q)
			case isF32(format):
				got = kernels.DotF32(a, b.f)
			default:
				got = kernels.DotF32BF16(a, b.bf)
			}
			if err := want.CheckSettled(got); err != nil {
				t.Fatalf("%s: format %d n=%d: %v", v, format%3, n, err)
			}
		})
	})
}
