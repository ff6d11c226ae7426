//go:build !purego && !noasm

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/asm"
	"github.com/x448/float16"
)

// TestScoresPanelsNEONBits checks that the panel kernel (asm.ScoresPanelsNEON, in the
// row chunks scoresNEON gives it) and the block kernel (asm.ScoresBlocksNEON, which
// took every block before the panel kernel came) give the same bits: each score is one
// lane's chain of fused multiply-adds over d in order in both. Every row count of a
// panel and its remainders, key counts around each tile and block, dims with and
// without a tail, contiguous and strided keys, random and special values.
func TestScoresPanelsNEONBits(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 4))
	dims := []int{1, 3, 4, 5, 8, 13, 64, 128, 136, 256, 264, 512}
	rowCounts := []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 20, 24, 28, 31, 32, 33, 40, 47, 63}
	keyCounts := []int{1, 2, 3, 4, 5, 11, 12, 13, 16, 17, 25, 33}
	if testing.Short() {
		dims, rowCounts, keyCounts = []int{3, 64, 264}, []int{1, 3, 8, 13, 32, 40}, []int{1, 5, 12, 13, 16, 33}
	}
	for _, dim := range dims {
		for _, rows := range rowCounts {
			for _, n := range keyCounts {
				q, k := randomF32(r, rows*dim), randomF16(r, n*dim)
				if r.IntN(4) == 0 {
					// One special value in one query row and one key.
					s := scoresSpecials[r.IntN(len(scoresSpecials))]
					i, j, d := r.IntN(rows), r.IntN(n), r.IntN(dim)
					q[i*dim+d], k[j*dim+d] = s.q, uint16(float16.Fromfloat32(s.k))
				}
				stride := dim
				if r.IntN(2) == 0 {
					stride = dim + 1 + r.IntN(9)
				}
				checkPanelsBits(t, q, spreadRows(k, n, dim, stride), rows, n, dim, stride, float32(r.NormFloat64()))
			}
		}
	}
}

func checkPanelsBits(t *testing.T, q []float32, k []uint16, rows, n, dim, stride int, scale float32) {
	t.Helper()
	want := make([]float32, rows*n)
	var blocks [blockKeysNEON * maxBlockDimNEON]float32
	asm.ScoresBlocksNEON(want, q, k, blocks[:blockKeysNEON*dim], rows, n, dim, stride, scale)
	buf := make([]float32, rows*n+2*dotPad)
	for i := range buf {
		buf[i] = dotSentry
	}
	got := buf[dotPad : dotPad+rows*n]
	var scratch [panelFloatsNEON + panelStageNEON]float32
	for i := range scratch {
		scratch[i] = float32(math.NaN()) // nothing may read the scratch before writing it
	}
	what := fmt.Sprintf("rows=%d n=%d dim=%d stride=%d", rows, n, dim, stride)
	for r0 := 0; r0 < rows; {
		c := panelRowsNEON(rows-r0, dim)
		if !(c == 4 || c == 8 || c == 16 || c == 32 || c == rows-r0 && c < 4) || c > rows-r0 || max(c, 4)*dim > panelFloatsNEON {
			t.Fatalf("%s: panelRowsNEON(%d, %d) = %d", what, rows-r0, dim, c)
		}
		asm.ScoresPanelsNEON(got[r0*n:(r0+c)*n], q[r0*dim:(r0+c)*dim], k, scratch[:], c, n, dim, stride, scale)
		r0 += c
	}
	for i, x := range buf {
		if (i < dotPad || i >= dotPad+rows*n) && x != dotSentry {
			t.Fatalf("%s: wrote %v at %d outside dst", what, x, i-dotPad)
		}
	}
	for e := range want {
		if math.Float32bits(got[e]) != math.Float32bits(want[e]) {
			t.Fatalf("%s: dst[%d*n+%d]: panels %v (%#08x), blocks %v (%#08x)", what, e/n, e%n,
				got[e], math.Float32bits(got[e]), want[e], math.Float32bits(want[e]))
		}
	}
}
