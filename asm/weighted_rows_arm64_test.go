//go:build !purego && !noasm

package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"
)

// The multi-row accumulating weighted sums are checked exactly, bit for bit, against
// a Go loop of the chains they promise: dst[i*dim+d] ← fma32(w[i*256+j], v_j[d], ·)
// for j in order from dst's value. Go has no float32 fused multiply-add, and neither
// float32(a*b+c) nor float32(math.FMA(a, b, c)) in float64 is one (the second rounds
// twice), so fma32 rounds the float64 sum to odd first: the float32 product is exact in
// float64 (48 bits), TwoSum gives the sum's exact error, and a sum rounded to odd at 53
// bits rounds to float32 (24 bits ≤ 53−2) as the exact sum would (Boldo & Melquiond,
// "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to
// odd", IEEE TC 2008). The values stay finite, so the emulation needs no special cases;
// -0 sums come out of float64's addition with float32's signs. That the loop is the
// hardware's chain is also checked directly: with rows = 1 and dst zeroed, every
// function's bits equal its single-row WeightedSumRows*NEON's on the same row.

// fma32 returns a·b + c rounded once to float32 (nearest even), for finite results.
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b) // exact
	s := p + float64(c)
	bb := s - p
	e := (p - (s - bb)) + (float64(c) - bb) // s + e = p + c exactly
	if e != 0 && math.Float64bits(s)&1 == 0 {
		if e > 0 {
			s = math.Nextafter(s, math.Inf(1))
		} else {
			s = math.Nextafter(s, math.Inf(-1))
		}
	}
	return float32(s)
}

func TestFMA32(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	// a·b = −64 + 2⁻⁴⁰, so a·b + c = 2³⁰ + 64 + 2⁻⁴⁰, just above the midpoint of
	// 2³⁰ and 2³⁰+128 (float32's neighbours): it rounds up. In float64 it is 2³⁰ + 64,
	// the midpoint, which float32 then rounds to even, 2³⁰.
	a, b, c := float32(-8*(1+0x1p-23)), float32(8*(1-0x1p-23)), float32(0x1p30+128)
	if got, want := fma32(a, b, c), float32(0x1p30+128); got != want {
		t.Fatalf("fma32 = %v, want %v", got, want)
	}
	if twice := float32(math.FMA(float64(a), float64(b), float64(c))); twice != 0x1p30 {
		t.Fatalf("math.FMA rounded to float32 = %v, the example is no longer a double rounding", twice)
	}
	if got := fma32(1, negZero, negZero); math.Float32bits(got) != 0x80000000 {
		t.Fatalf("fma32(1, −0, −0) = %v, want −0", got)
	}
	if got := fma32(1, negZero, 0); math.Float32bits(got) != 0 {
		t.Fatalf("fma32(1, −0, +0) = %v, want +0", got)
	}
}

// attendPitch is the generator's (gen/arm64/weighted): the float32s between the rows
// of the weights, kernels.attendBlock.
const attendPitch = 256

// rowsFormat is one of the three value formats: its kernels, a generator of n rows of
// dim values stride apart (gaps poisoned with NaN), and element d of row j as float32.
type rowsFormat struct {
	name   string
	dims   []int
	add    func(dst, w []float32, rows, n, stride int)
	single func(dst, w []float32, stride int)
	value  func(j, d int) float32
	fill   func(r *rand.Rand, n, dim, stride int) // sets the rows the three use
}

func formats() []*rowsFormat {
	var dims16, dimsQ8 []int
	for d := 1; d <= 70; d++ {
		dims16 = append(dims16, d)
	}
	dims16 = append(dims16, 128)
	for d := 32; d <= 256; d += 32 {
		dimsQ8 = append(dimsQ8, d)
	}

	var h []uint16
	var hStride int
	fp16 := &rowsFormat{name: "fp16", dims: dims16,
		add:    func(dst, w []float32, rows, n, stride int) { WeightedSumRowsAddNEON(dst, w, h, rows, n, stride) },
		single: func(dst, w []float32, stride int) { WeightedSumRowsNEON(dst, w, h, stride) },
		value:  func(j, d int) float32 { return float16.Frombits(h[j*hStride+d]).Float32() },
		fill: func(r *rand.Rand, n, dim, stride int) {
			h, hStride = spread(n, dim, stride, 0x7e00, func() uint16 {
				return uint16(float16.Fromfloat32(float32(r.NormFloat64() * 4)))
			})
		},
	}

	var b []uint16
	var bStride int
	bf16 := &rowsFormat{name: "bf16", dims: dims16,
		add:    func(dst, w []float32, rows, n, stride int) { WeightedSumRowsAddBF16NEON(dst, w, b, rows, n, stride) },
		single: func(dst, w []float32, stride int) { WeightedSumRowsBF16NEON(dst, w, b, stride) },
		value:  func(j, d int) float32 { return math.Float32frombits(uint32(b[j*bStride+d]) << 16) },
		fill: func(r *rand.Rand, n, dim, stride int) {
			b, bStride = spread(n, dim, stride, 0x7fc0, func() uint16 {
				return uint16(math.Float32bits(float32(r.NormFloat64()*4)) >> 16)
			})
		},
	}

	// q8: stride in blocks, as the kernels take it; a gap block's scale is NaN.
	var q []byte
	var qStride int
	q8 := &rowsFormat{name: "q8_0", dims: dimsQ8,
		add:    func(dst, w []float32, rows, n, stride int) { WeightedSumRowsAddQ8NEON(dst, w, q, rows, n, stride) },
		single: func(dst, w []float32, stride int) { WeightedSumRowsQ8NEON(dst, w, q, stride) },
		value: func(j, d int) float32 {
			blk := q[34*(j*qStride+d/32):]
			scale := float16.Frombits(uint16(blk[0]) | uint16(blk[1])<<8).Float32()
			return float32(int8(blk[2+d%32])) * scale // exact: 8 by 11 bits
		},
		fill: func(r *rand.Rand, n, dim, stride int) {
			qStride = stride
			q = make([]byte, 34*max(0, (n-1)*stride+dim/32))
			for blk := 0; blk < len(q); blk += 34 {
				q[blk], q[blk+1] = 0x00, 0x7e // NaN: a gap block
			}
			for j := range n {
				for c := range dim / 32 {
					blk := q[34*(j*stride+c):][:34]
					s := uint16(float16.Fromfloat32(float32(math.Ldexp(1+r.Float64(), -8+r.IntN(6)))))
					blk[0], blk[1] = byte(s), byte(s>>8)
					for i := range 32 {
						blk[2+i] = byte(r.IntN(256))
					}
				}
			}
		},
	}
	return []*rowsFormat{fp16, bf16, q8}
}

// spread returns n rows of dim elements from next, stride apart, the gaps nan.
func spread(n, dim, stride int, nan uint16, next func() uint16) ([]uint16, int) {
	x := make([]uint16, max(0, (n-1)*stride+dim))
	for i := range x {
		x[i] = nan
	}
	for j := range n {
		for d := range dim {
			x[j*stride+d] = next()
		}
	}
	return x, stride
}

const rowsGuard = 8

var rowsSentry = float32(-12345.5)

func TestWeightedSumRowsAddNEON(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 4))
	ns := []int{0, 1, 2, 3, 4, 5, 7, 8, 16, 17, 31, 63, 64, 65, 100, 127, 128, 129, 130}
	if testing.Short() {
		ns = []int{0, 1, 3, 17, 64, 65, 130}
	}
	for _, ft := range formats() {
		for _, dim := range ft.dims {
			for rows := 1; rows <= 4; rows++ {
				for _, n := range ns {
					stride := dim
					if ft.name == "q8_0" {
						stride = dim/32 + r.IntN(3)
					} else if r.IntN(4) != 0 {
						stride = dim + 1 + r.IntN(9)
					}
					ft.fill(r, n, dim, stride)
					checkRowsAdd(t, r, ft, rows, n, dim, stride)
				}
			}
		}
	}
}

// checkRowsAdd runs one call on guarded dst with random initial values and weights
// whose unread slots (j ≥ n of each row) are NaN, and compares it with the chains.
func checkRowsAdd(t *testing.T, r *rand.Rand, ft *rowsFormat, rows, n, dim, stride int) {
	t.Helper()
	what := fmt.Sprintf("%s rows=%d n=%d dim=%d stride=%d", ft.name, rows, n, dim, stride)
	w := make([]float32, (rows-1)*attendPitch+n)
	for i := range w {
		if i%attendPitch < n {
			w[i] = float32(r.Float64())
			if r.IntN(8) == 0 {
				w[i] = -w[i]
			}
		} else {
			w[i] = float32(math.NaN())
		}
	}
	buf := make([]float32, rows*dim+2*rowsGuard)
	for i := range buf {
		buf[i] = rowsSentry
	}
	dst := buf[rowsGuard : rowsGuard+rows*dim]
	for i := range dst {
		switch r.IntN(10) {
		case 0:
			dst[i] = float32(math.Copysign(0, -1))
		case 1:
			dst[i] = 0
		default:
			dst[i] = float32(r.NormFloat64() * 16)
		}
	}
	want := make([]float32, len(dst))
	for i := range rows {
		for d := range dim {
			s := dst[i*dim+d]
			for j := range n {
				s = fma32(w[i*attendPitch+j], ft.value(j, d), s)
			}
			want[i*dim+d] = s
		}
	}
	ft.add(dst, w, rows, n, stride)
	for i, x := range buf {
		if (i < rowsGuard || i >= rowsGuard+len(dst)) && math.Float32bits(x) != math.Float32bits(rowsSentry) {
			t.Fatalf("%s: wrote %v at %d outside dst", what, x, i-rowsGuard)
		}
	}
	for e := range want {
		if math.Float32bits(dst[e]) != math.Float32bits(want[e]) {
			t.Fatalf("%s: dst[%d] (row %d, column %d) = %v (%#08x), want %v (%#08x)", what, e, e/dim, e%dim,
				dst[e], math.Float32bits(dst[e]), want[e], math.Float32bits(want[e]))
		}
	}

	// The loop is the hardware's chain: one row from +0 gives the single-row kernel's bits.
	if rows != 1 || n == 0 {
		return
	}
	for i := range dst {
		dst[i] = 0
	}
	ft.add(dst, w, 1, n, stride)
	single := make([]float32, dim)
	ft.single(single, w, stride)
	for d := range single {
		if math.Float32bits(dst[d]) != math.Float32bits(single[d]) {
			t.Fatalf("%s from +0: dst[%d] = %v (%#08x), single-row kernel %v (%#08x)", what, d,
				dst[d], math.Float32bits(dst[d]), single[d], math.Float32bits(single[d]))
		}
	}
}
