package fuzz

import (
	"fmt"
	"math"
	"testing"

	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/q8"
)

// attendCausal runs the format's causal attention: q and out head-major
// ([rows][m][dim]) with packed rows (qStride 0), or token-major qStride apart with
// rows kvStride values apart.
func attendCausal(format int, out, q []float32, k, v attendRows, rows, m, n, dim, qStride, kvStride int, scale float32) {
	switch {
	case format == 0 && qStride == 0:
		kernels.AttendCausal(out, q, k.h, v.h, rows, m, n, dim, scale)
	case format == 0:
		kernels.AttendCausalStrided(out, q, k.h, v.h, rows, m, n, dim, qStride, kvStride, scale)
	case format == 1 && qStride == 0:
		kernels.AttendCausalBF16(out, q, k.bf, v.bf, rows, m, n, dim, scale)
	case format == 1:
		kernels.AttendCausalStridedBF16(out, q, k.bf, v.bf, rows, m, n, dim, qStride, kvStride, scale)
	case format == 3 && qStride == 0:
		kernels.AttendCausalF32(out, q, k.f, v.f, rows, m, n, dim, scale)
	case format == 3:
		kernels.AttendCausalStridedF32(out, q, k.f, v.f, rows, m, n, dim, qStride, kvStride, scale)
	case qStride == 0:
		kernels.AttendCausalQ8(out, q, k.q, v.q, rows, m, n, dim, scale)
	default:
		kernels.AttendCausalStridedQ8(out, q, k.q, v.q, rows, m, n, dim, qStride, kvStride, scale)
	}
}

// FuzzAttendCausal takes the format (format%4: fp16, bf16, q8_0, float32), the query
// rows per position (1 to 8), dim, the queries' share of the positions (m) and a
// stride gap from its first arguments, and from data the queries, then n key rows and
// n value rows in the format, as many as fit the cap (with the top bit of rows, the
// keys repeated past a block of 256). Every variant's AttendCausal is held, row by
// row, to Attend's composition over the row's visible keys on the same variant (NaN
// where it is NaN, the same Inf where it is ±Inf) and, where that is finite, to the
// float64 bound of its doc; and the token-major strided form to the contiguous bits.
func FuzzAttendCausal(f *testing.F) {
	seed := make([]byte, 0, 1600)
	for i := range 1600 {
		seed = append(seed, byte(i*29+5))
	}
	f.Add(uint8(0), uint8(4), uint8(15), uint8(255), uint8(3), float32(0.25), seed)
	f.Add(uint8(0), uint8(0x81), uint8(3), uint8(40), uint8(0), float32(0.5), seed)
	f.Add(uint8(1), uint8(2), uint8(7), uint8(128), uint8(9), float32(-1), seed)
	f.Add(uint8(2), uint8(3), uint8(0), uint8(200), uint8(1), float32(0.125), seed)
	f.Add(uint8(2), uint8(0x82), uint8(1), uint8(9), uint8(2), float32(math.Inf(-1)), seed)
	f.Add(uint8(3), uint8(2), uint8(7), uint8(128), uint8(9), float32(-1), seed)
	f.Add(uint8(3), uint8(0x81), uint8(3), uint8(40), uint8(0), float32(0.5), seed)
	f.Fuzz(checkAttendCausal)
}

// checkAttendCausal is FuzzAttendCausal's body.

func checkAttendCausal(t *testing.T, format, rows, dim, share, gap uint8, scale float32, data []byte) {
	if len(data) > 2*scoresMaxBytes {
		return
	}
	fm := int(format % 4)
	d := attendDim(fm, dim)
	g := 1 + int(rows&0x7f)%8
	rowBytes := attendRowBytes(fm, d)
	given := min(len(data)/(2*rowBytes+4*g*d), attendMaxProducts/(g*d))
	n := given
	k := readAttendRows(fm, data, d, given)
	v := readAttendRows(fm, data[given*rowBytes:], d, given)
	if rows&0x80 != 0 && given > 0 {
		n = max(given, min(attendKeys, 4*attendMaxProducts/(g*d)))
		k, v = k.repeat(given, n, d), v.repeat(given, n, d)
	}
	m := min(n, int(share)*n/255+1, given) // the queries must fit in data
	if n == 0 {
		m = 0
	}
	q := float32s(data[2*given*rowBytes:][:4*g*m*d])
	qStride := g*d + int(gap)%5
	kvStride := strideOf(d, gap)
	if fm == 2 {
		kvStride = d + q8.BlockLen*(int(gap)%3)
	}
	tq := make([]float32, max(0, (m-1)*qStride+g*d))
	for r := range g {
		for i := range m {
			copy(tq[i*qStride+r*d:][:d], q[(r*m+i)*d:][:d])
		}
	}
	sk, sv := k.spread(n, d, kvStride), v.spread(n, d, kvStride)
	got, comp, tout := make([]float32, g*m*d), make([]float32, g*m*d), make([]float32, len(tq))
	varianttest.Each(t, func(variant string) {
		what := fmt.Sprintf("%s: format %d rows=%d m=%d n=%d dim=%d scale=%v", variant, fm, g, m, n, d, scale)
		attendCausal(fm, got, q, k, v, g, m, n, d, 0, d, scale)
		attendCausal(fm, tout, tq, sk, sv, g, m, n, d, qStride, kvStride, scale)
		for r := range g {
			for i := range m {
				p := n - m + i
				qr := q[(r*m+i)*d:][:d]
				kr, vr := k.part(0, p+1, d, d), v.part(0, p+1, d, d)
				compose(fm, comp[:d], qr, kr, vr, 1, p+1, d, scale)
				extra := 4 * 0x1p-24
				if fm == 2 {
					extra += float64(p+1) * 0x1p-24
				}
				want := oracle.Attend(qr, func(j, e int) float64 { return k.value(j*d + e) },
					func(j, e int) float64 { return v.value(j*d + e) }, 1, p+1, d, scale, extra)[0]
				for e := range d {
					o, c := got[(r*m+i)*d+e], comp[e]
					switch {
					case c != c:
						if o == o {
							t.Fatalf("%s: g %d, i %d, out[%d] = %v, the composition gives NaN", what, r, i, e, o)
						}
					case c-c != 0:
						if o != c {
							t.Fatalf("%s: g %d, i %d, out[%d] = %v, the composition gives %v", what, r, i, e, o, c)
						}
					default:
						if err := want.Check(e, o); err != nil {
							t.Fatalf("%s: g %d, i %d, out[%d]: %v (the composition gives %v)", what, r, i, e, err, c)
						}
					}
					if s := tout[i*qStride+r*d+e]; !sameBits(s, o) {
						t.Fatalf("%s: strided: g %d, i %d, out[%d] = %v, contiguous gives %v", what, r, i, e, s, o)
					}
				}
			}
		}
	})
}
