package fuzz

import (
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/internal/varianttest"

	"github.com/kvsimd/kvsimd/kernels"
)

// FuzzGatherRows checks every variant against the reference loops of GatherRows, on
// the whole rows of data, and of GatherRowsStrided, on all of data as rows
// strideOf(dim, gap) apart, bit for bit over every fp16 pattern. Indices are read as
// int16, so some fall outside src: then the kernel must panic with its own message and
// leave dst untouched.
func FuzzGatherRows(f *testing.F) {
	f.Add([]byte{0x01, 0x7c, 0x00, 0x80, 0xff, 0xff, 0x01, 0x00, 0x00, 0x7e, 0x00, 0x3c}, []byte{0x02, 0x00, 0x00, 0x00, 0x01, 0x00}, uint8(1), uint8(0))
	f.Add([]byte{0x00, 0x3c, 0x00, 0xbc}, []byte{0xff, 0xff}, uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, data, rawIdx []byte, dim8, gap uint8) {
		dim := int(dim8%64) + 1
		stride := strideOf(dim, gap)
		all := uint16s(data)
		src := make([]kernels.Float16, len(all))
		for i := range src {
			src[i] = kernels.Float16(all[i])
		}
		idx := make([]int32, len(rawIdx)/2)
		for i := range idx {
			idx[i] = int32(int16(uint16(rawIdx[2*i]) | uint16(rawIdx[2*i+1])<<8))
		}
		whole := src[:len(src)/dim*dim]
		stridedRows := 0
		if len(src) >= dim {
			stridedRows = (len(src)-dim)/stride + 1
		}
		dst := make([]kernels.Float16, len(idx)*dim)
		varianttest.Each(t, func(v string) {
			checkGather(t, v, "GatherRows", dst, whole, idx, len(whole)/dim, dim, dim, func() {
				kernels.GatherRows(dst, whole, idx, dim)
			})
			checkGather(t, v, "GatherRowsStrided", dst, src, idx, stridedRows, dim, stride, func() {
				kernels.GatherRowsStrided(dst, src, idx, dim, stride)
			})
		})
	})
}

// checkGather runs gather, the kernel named kernel, on dst, which it first fills with
// a pattern of its own, and checks the result: idx's rows of src, rows of them stride
// apart, or, with an index outside them, the kernel's own panic and dst untouched.
func checkGather(t *testing.T, v, kernel string, dst, src []kernels.Float16, idx []int32, rows, dim, stride int, gather func()) {
	t.Helper()
	const untouched = kernels.Float16(0x7e5a)
	for i := range dst {
		dst[i] = untouched
	}
	inRange := true
	for _, r := range idx {
		inRange = inRange && r >= 0 && int(r) < rows
	}
	msg, panicked := panics(gather)
	if !inRange {
		if !strings.HasPrefix(msg, "kernels."+kernel+": ") {
			t.Fatalf("%s: %s idx %v of %d rows: panic %q, want its own", v, kernel, idx, rows, msg)
		}
		for i, h := range dst {
			if h != untouched {
				t.Fatalf("%s: %s: dst[%d] written before the panic", v, kernel, i)
			}
		}
		return
	}
	if panicked {
		t.Fatalf("%s: %s idx %v of %d rows: unexpected panic %q", v, kernel, idx, rows, msg)
	}
	for i, r := range idx {
		for d := 0; d < dim; d++ {
			if got, want := dst[i*dim+d], src[int(r)*stride+d]; got != want {
				t.Fatalf("%s: %s dim=%d stride=%d: dst[%d][%d] = %#04x, src row %d = %#04x", v, kernel, dim, stride, i, d, uint16(got), r, uint16(want))
			}
		}
	}
}

// panics calls f and reports whether it panicked, and with what.
func panics(f func()) (msg string, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			msg, _ = r.(string)
			panicked = true
		}
	}()
	f()
	return "", false
}
