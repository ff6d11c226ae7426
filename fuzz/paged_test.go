package fuzz

import (
	"fmt"
	"math"
	"testing"

	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/q8"
)

// pagesOf splits n packed rows of dim values (per values to an element) into pages of
// pageRows rows, each an allocation of its own, the last one cut to its rows.
func pagesOf[E any](x []E, n, dim, per, pageRows int) [][]E {
	de := dim / per
	var pages [][]E
	for j := 0; j < n; j += pageRows {
		r := min(pageRows, n-j)
		pages = append(pages, append([]E(nil), x[j*de:(j+r)*de]...))
	}
	return pages
}

// attendPaged runs the format's paged attention over the rows cut into pages.
func attendPaged(format int, out, q []float32, k, v attendRows, rows, n, dim, pageRows int, scale float32) {
	switch format {
	case 0:
		kernels.AttendPaged(out, q, pagesOf(k.h, n, dim, 1, pageRows), pagesOf(v.h, n, dim, 1, pageRows), rows, n, dim, pageRows, scale)
	case 1:
		kernels.AttendPagedBF16(out, q, pagesOf(k.bf, n, dim, 1, pageRows), pagesOf(v.bf, n, dim, 1, pageRows), rows, n, dim, pageRows, scale)
	case 3:
		kernels.AttendPagedF32(out, q, pagesOf(k.f, n, dim, 1, pageRows), pagesOf(v.f, n, dim, 1, pageRows), rows, n, dim, pageRows, scale)
	default:
		kernels.AttendPagedQ8(out, q, pagesOf(k.q, n, dim, q8.BlockLen, pageRows), pagesOf(v.q, n, dim, q8.BlockLen, pageRows),
			rows, n, dim, pageRows, scale)
	}
}

// partialPaged runs the format's AttendPartialPaged over the rows cut into pages.
func partialPaged(format int, st *kernels.AttendState, q []float32, k, v attendRows, n, dim, pageRows int, scale float32) {
	switch format {
	case 0:
		kernels.AttendPartialPaged(st, q, pagesOf(k.h, n, dim, 1, pageRows), pagesOf(v.h, n, dim, 1, pageRows), n, pageRows, scale)
	case 1:
		kernels.AttendPartialPagedBF16(st, q, pagesOf(k.bf, n, dim, 1, pageRows), pagesOf(v.bf, n, dim, 1, pageRows), n, pageRows, scale)
	case 3:
		kernels.AttendPartialPagedF32(st, q, pagesOf(k.f, n, dim, 1, pageRows), pagesOf(v.f, n, dim, 1, pageRows), n, pageRows, scale)
	default:
		kernels.AttendPartialPagedQ8(st, q, pagesOf(k.q, n, dim, q8.BlockLen, pageRows), pagesOf(v.q, n, dim, q8.BlockLen, pageRows),
			n, pageRows, scale)
	}
}

// FuzzAttendPaged takes the format (format%4: fp16, bf16, q8_0, float32), the query
// rows (1 to 16), dim and the page size (1 to 300 rows) from its first arguments, and
// from data the keys, values and queries, as many rows as fit the cap (with the top
// bit of rows, the keys repeated past a block of 256). Every variant's paged attention
// is held to the contiguous kernel's bits on the same variant, and AttendPartialPaged
// to AttendPartial's state.
func FuzzAttendPaged(f *testing.F) {
	seed := make([]byte, 0, 6000)
	for i := range 6000 {
		seed = append(seed, byte(i*37+11))
	}
	// Past a block of 256 keys (the top bit of rows repeats them): small dims, so that
	// the repeated keys reach attendKeys within attendMaxProducts.
	f.Add(uint8(0), uint8(0x80), uint8(31), uint16(15), float32(0.125), seed)
	f.Add(uint8(0), uint8(0x83), uint8(15), uint16(99), float32(0.25), seed)
	f.Add(uint8(1), uint8(0x81), uint8(15), uint16(5), float32(0.5), seed)
	f.Add(uint8(2), uint8(0x80), uint8(0), uint16(63), float32(0.125), seed)
	f.Add(uint8(0), uint8(0x80), uint8(63), uint16(255), float32(-1), seed)
	// Many query rows, the gathered blocks' path, and wider rows.
	f.Add(uint8(0), uint8(0x8f), uint8(7), uint16(15), float32(0.5), seed)
	f.Add(uint8(1), uint8(11), uint8(63), uint16(1), float32(0.125), seed)
	f.Add(uint8(2), uint8(3), uint8(3), uint16(4), float32(math.Inf(1)), seed)
	f.Add(uint8(3), uint8(0x81), uint8(15), uint16(5), float32(0.5), seed)
	f.Add(uint8(3), uint8(11), uint8(63), uint16(1), float32(0.125), seed)
	f.Fuzz(checkAttendPaged)
}

func checkAttendPaged(t *testing.T, format, rows, dim uint8, pages uint16, scale float32, data []byte) {
	fm := int(format % 4)
	d := attendDim(fm, dim)
	g := 1 + int(rows&0x7f)%16
	pageRows := 1 + int(pages)%300
	rowBytes := attendRowBytes(fm, d)
	if len(data) < 4*g*d || len(data) > 2*scoresMaxBytes {
		return
	}
	given := min(len(data)/(2*rowBytes+4*g*d), attendMaxProducts/(g*d))
	n := given
	k := readAttendRows(fm, data, d, given)
	v := readAttendRows(fm, data[given*rowBytes:], d, given)
	if rows&0x80 != 0 && given > 0 {
		n = max(given, min(attendKeys, 4*attendMaxProducts/(g*d)))
		k, v = k.repeat(given, n, d), v.repeat(given, n, d)
	}
	q := float32s(data[2*given*rowBytes:][:4*g*d])
	want, got := make([]float32, g*d), make([]float32, g*d)
	varianttest.Each(t, func(variant string) {
		what := fmt.Sprintf("%s: format %d rows=%d n=%d dim=%d pageRows=%d scale=%v", variant, fm, g, n, d, pageRows, scale)
		attend(fm, want, q, k, v, g, n, d, d, scale)
		attendPaged(fm, got, q, k, v, g, n, d, pageRows, scale)
		for e := range got {
			if !sameBits(got[e], want[e]) {
				t.Fatalf("%s: out[%d] = %v, contiguous gives %v", what, e, got[e], want[e])
			}
		}
		var st, sp kernels.AttendState
		st.Reset(g, d)
		sp.Reset(g, d)
		partial(fm, &st, q, k, v, n, d, scale)
		partialPaged(fm, &sp, q, k, v, n, d, pageRows, scale)
		st.Finish(want)
		sp.Finish(got)
		for e := range got {
			if !sameBits(got[e], want[e]) {
				t.Fatalf("%s: partial: out[%d] = %v, contiguous gives %v", what, e, got[e], want[e])
			}
		}
	})
}
