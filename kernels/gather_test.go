package kernels

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/internal/varianttest"
)

// halfGuard is the fp16 bit pattern written around every GatherRows output: a NaN
// with a payload that no test input uses, so any stray write shows.
const halfGuard = Float16(0x7e5a)

// guardedHalves returns an n-element slice at offset off inside a buffer whose other
// elements are halfGuard, and a function that fails the test if one of them changed.
func guardedHalves(t *testing.T, n, off int) ([]Float16, func()) {
	t.Helper()
	buf := make([]Float16, off+n+4)
	for i := range buf {
		buf[i] = halfGuard
	}
	return buf[off : off+n : off+n], func() {
		t.Helper()
		for i, v := range buf {
			if (i < off || i >= off+n) && v != halfGuard {
				t.Fatalf("guard at %d of a %d-element slice at offset %d overwritten: %#04x", i-off, n, off, uint16(v))
			}
		}
	}
}

// randomHalves draws every bit pattern with equal probability, NaN payloads,
// infinities, subnormals and signed zeros included, but never halfGuard.
func randomHalves(r *rand.Rand, n int) []Float16 {
	h := make([]Float16, n)
	for i := range h {
		for h[i] = Float16(r.Uint32()); h[i] == halfGuard; h[i] = Float16(r.Uint32()) {
		}
	}
	return h
}

// checkGather runs GatherRows with variant v active into a guarded dst at offset off
// and compares every element bit for bit with the reference loop, element by element.
func checkGather(t *testing.T, v string, src []Float16, idx []int32, dim, off int) {
	t.Helper()
	dst, intact := guardedHalves(t, len(idx)*dim, off)
	GatherRows(dst, src, idx, dim)
	intact()
	for i, r := range idx {
		for d := 0; d < dim; d++ {
			if got, want := dst[i*dim+d], src[int(r)*dim+d]; got != want {
				t.Fatalf("%s dim=%d rows=%d: dst[%d][%d] = %#04x, src[%d][%d] = %#04x", v, dim, len(idx), i, d, uint16(got), r, d, uint16(want))
			}
		}
	}
}

func TestGatherRowsLengths(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	varianttest.Each(t, func(v string) {
		for _, dim := range []int{1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 256} {
			for _, srcRows := range []int{1, 2, 5, 37} {
				// src starts at offset 0..3 of its buffer, so rows are not aligned.
				srcOff := (dim + srcRows) % 4
				src := randomHalves(r, srcOff+srcRows*dim)[srcOff:]
				for n := 0; n <= 40; n++ {
					idx := make([]int32, n)
					for i := range idx {
						idx[i] = int32(r.IntN(srcRows)) // unsorted, with repeats
					}
					checkGather(t, v, src, idx, dim, 1+(n+dim)%3)
				}
			}
		}
		// A cache-sized gather, ascending as snapkv uses it: every 8th of 16384 rows.
		src := randomHalves(r, 16384*128)
		idx := make([]int32, 2048)
		for i := range idx {
			idx[i] = int32(8*i + r.IntN(8))
		}
		checkGather(t, v, src, idx, 128, 2)
	})
}

// TestGatherRowsSpecials gathers rows made only of the patterns a conversion would
// disturb: signalling and quiet NaNs with payloads of both signs, infinities, signed
// zeros, the smallest subnormals and the largest finite values.
func TestGatherRowsSpecials(t *testing.T) {
	specials := []Float16{0x7c01, 0x7dff, 0x7e00, 0x7fff, 0xfc01, 0xfe01, 0xffff, 0x7c00, 0xfc00,
		0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x7bff, 0xfbff}
	const dim = 5
	src := make([]Float16, len(specials)*dim)
	for i := range src {
		src[i] = specials[(i*7)%len(specials)]
	}
	// Every row once backwards, then every row twice forwards.
	var idx []int32
	for r := len(specials) - 1; r >= 0; r-- {
		idx = append(idx, int32(r))
	}
	for r := range 2 * len(specials) {
		idx = append(idx, int32(r/2))
	}
	varianttest.Each(t, func(v string) {
		checkGather(t, v, src, idx, dim, 3)
	})
}

func TestGatherRowsPanics(t *testing.T) {
	src := make([]Float16, 4*8) // 4 rows of 8
	for name, f := range map[string]func(){
		"dim 0":          func() { GatherRows(nil, src, nil, 0) },
		"dim -8":         func() { GatherRows(nil, src, nil, -8) },
		"dst short":      func() { GatherRows(make([]Float16, 15), src, []int32{0, 1}, 8) },
		"dst long":       func() { GatherRows(make([]Float16, 17), src, []int32{0, 1}, 8) },
		"src ragged":     func() { GatherRows(make([]Float16, 8), src[:31], []int32{0}, 8) },
		"index -1":       func() { GatherRows(make([]Float16, 16), src, []int32{0, -1}, 8) },
		"index past end": func() { GatherRows(make([]Float16, 16), src, []int32{4, 0}, 8) },
		"empty src":      func() { GatherRows(make([]Float16, 8), nil, []int32{0}, 8) },
		"overflow":       func() { GatherRows(nil, nil, make([]int32, 3), math.MaxInt/2) },
	} {
		func() {
			defer func() {
				// Its own message, not a runtime bounds error from inside the copy.
				if msg, _ := recover().(string); !strings.HasPrefix(msg, "kernels.GatherRows: ") {
					t.Errorf("%s: panic %q, want kernels.GatherRows' own", name, msg)
				}
			}()
			f()
		}()
	}
}

// TestGatherRowsPanicsBeforeWriting: a bad index anywhere leaves dst untouched.
func TestGatherRowsPanicsBeforeWriting(t *testing.T) {
	src := randomHalves(rand.New(rand.NewPCG(23, 24)), 4*8)
	dst, intact := guardedHalves(t, 3*8, 0) // filled with halfGuard
	func() {
		defer func() { _ = recover() }()
		GatherRows(dst, src, []int32{0, 1, 9}, 8)
	}()
	intact()
	for i, v := range dst {
		if v != halfGuard {
			t.Fatalf("dst[%d] written before the panic: %#04x", i, uint16(v))
		}
	}
}

func TestGatherRowsAllocs(t *testing.T) {
	src, dst := make([]Float16, 1024*64), make([]Float16, 256*64)
	idx := make([]int32, 256)
	for i := range idx {
		idx[i] = int32(4 * i)
	}
	varianttest.Each(t, func(v string) {
		if a := testing.AllocsPerRun(10, func() { GatherRows(dst, src, idx, 64) }); a != 0 {
			t.Fatalf("%s: GatherRows allocates %v times", v, a)
		}
	})
}
