//go:build !purego && !noasm

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/q8"
)

// TestScoresPanelsFormats runs the bf16, q8_0 and float32 panel kernels on their own, at every
// key count up to three key blocks, and holds them to the fp16 panel kernels' bits on
// keys that both formats hold, contiguous and strided: Scores reaches the panels only
// from 128 keys on, so the partial blocks and tiles of a short block (the widening of
// fewer keys than a tile) are otherwise met at one remainder each.
func TestScoresPanelsFormats(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 30))
	rowCounts := []int{1, 5, 31, 32, 33}
	if testing.Short() {
		rowCounts = []int{5, 33}
	}
	for _, isa := range panelISAs() {
		avx512 := isa.variant == "avx512"
		for _, c := range []struct {
			name string
			per  int
			dims []int
			keys func(h []uint16, n, w, stride int) amd64Keys // w, stride: elements or blocks
		}{
			{"bf16", 1, []int{1, 7, 64, 128, 256}, func(h []uint16, n, w, stride int) amd64Keys {
				k := spreadElems(bf16Format.fromHalves(h), n, w, stride, bf16Format.gap)
				return amd64Keys{format: keysBF16, bits: bf16.Bits(k)}
			}},
			{"q8_0", 32, []int{32, 64, 96, 128, 256}, func(h []uint16, n, w, stride int) amd64Keys {
				k := spreadElems(q8Format.fromHalves(h), n, w, stride, q8Format.gap)
				return amd64Keys{format: keysQ8, blocks: q8.Bytes(k)}
			}},
			{"f32", 1, []int{1, 7, 64, 128, 256}, func(h []uint16, n, w, stride int) amd64Keys {
				k := spreadElems(f32Format.fromHalves(h), n, w, stride, f32Format.gap)
				return amd64Keys{format: keysF32, floats: k}
			}},
		} {
			for _, dim := range c.dims {
				if !panelFits(dim, isa.group, isa.blockKeys) {
					continue
				}
				for _, rows := range rowCounts {
					for n := 1; n <= 3*isa.blockKeys+1; n++ {
						what := fmt.Sprintf("%s %s: rows %d, n %d, dim %d", isa.variant, c.name, rows, n, dim)
						q := randomF32(r, rows*dim)
						h := q8Format.halvesFor(r, n*dim) // q·2⁻⁷: bfloat16 holds them too
						want := make([]float32, rows*n)
						scoresPanels(avx512, want, q, h, rows, n, dim, dim, 0.5)
						w := dim / c.per
						for _, stride := range []int{w, w + 1 + r.IntN(w+2)} {
							dst, intact := guarded(t, make([]float32, rows*n), 1)
							scoresPanelsOf(avx512, c.keys(h, n, w, stride), dst, q, rows, n, dim, stride, 0.5)
							intact()
							for e := range dst {
								if !sameFloatBits(dst[e], want[e]) {
									t.Fatalf("%s, stride %d: entry %d = %v, fp16 keys give %v", what, stride*c.per, e, dst[e], want[e])
								}
							}
						}
					}
				}
			}
		}
	}
}
