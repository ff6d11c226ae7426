package fuzz

import (
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/internal/varianttest"

	"github.com/kvsimd/kvsimd/kernels"
)

// FuzzGatherRows checks every variant against GatherRows' reference loop, bit for bit
// over every fp16 pattern. Indices are read as int16, so some fall outside src: then
// GatherRows must panic with its own message and leave dst untouched.
func FuzzGatherRows(f *testing.F) {
	f.Add([]byte{0x01, 0x7c, 0x00, 0x80, 0xff, 0xff, 0x01, 0x00, 0x00, 0x7e, 0x00, 0x3c}, []byte{0x02, 0x00, 0x00, 0x00, 0x01, 0x00}, uint8(1))
	f.Add([]byte{0x00, 0x3c, 0x00, 0xbc}, []byte{0xff, 0xff}, uint8(0))
	f.Fuzz(func(t *testing.T, data, rawIdx []byte, dim8 uint8) {
		dim := int(dim8%64) + 1
		halves := uint16s(data)
		src := make([]kernels.Float16, len(halves)/dim*dim)
		for i := range src {
			src[i] = kernels.Float16(halves[i])
		}
		rows := len(src) / dim
		idx := make([]int32, len(rawIdx)/2)
		inRange := true
		for i := range idx {
			idx[i] = int32(int16(uint16(rawIdx[2*i]) | uint16(rawIdx[2*i+1])<<8))
			inRange = inRange && idx[i] >= 0 && int(idx[i]) < rows
		}
		const untouched = kernels.Float16(0x7e5a)
		dst := make([]kernels.Float16, len(idx)*dim)
		varianttest.Each(t, func(v string) {
			for i := range dst {
				dst[i] = untouched
			}
			msg, panicked := gatherPanics(dst, src, idx, dim)
			if !inRange {
				if !strings.HasPrefix(msg, "kernels.GatherRows: ") {
					t.Fatalf("%s: idx %v of %d rows: panic %q, want GatherRows' own", v, idx, rows, msg)
				}
				for i, h := range dst {
					if h != untouched {
						t.Fatalf("%s: dst[%d] written before the panic", v, i)
					}
				}
				return
			}
			if panicked {
				t.Fatalf("%s: idx %v of %d rows: unexpected panic %q", v, idx, rows, msg)
			}
			for i, r := range idx {
				for d := 0; d < dim; d++ {
					if dst[i*dim+d] != src[int(r)*dim+d] {
						t.Fatalf("%s dim=%d: dst[%d][%d] = %#04x, src[%d][%d] = %#04x", v, dim, i, d, uint16(dst[i*dim+d]), r, d, uint16(src[int(r)*dim+d]))
					}
				}
			}
		})
	})
}

// gatherPanics calls GatherRows and reports whether it panicked, and with what.
func gatherPanics(dst, src []kernels.Float16, idx []int32, dim int) (msg string, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			msg, _ = r.(string)
			panicked = true
		}
	}()
	kernels.GatherRows(dst, src, idx, dim)
	return "", false
}
