package main

import (
	"fmt"

	. "github.com/kvsimd/kvsimd/gen/neon"
)

// WeightedSumRowsAddQ8NEON has WeightedSumRowsAddNEON's chains over q8_0 rows, as
// WeightedSumRowsQ8NEON has WeightedSumRowsNEON's: v_j[d] = q·d is exact in float32, so
// however it is formed the chains are the same. A pass takes 16/rows vectors of each
// row, in whole halves of blocks (16 columns, 4 vectors): two blocks for one row (one
// for the last pass when dim/32 is odd), one block for two rows, half a block for three
// or four. Each block or half of a row is widened once for all rows: its scale with
// FCVT, its quants sign-extended twice in place (SXTL), converted (SCVTF) and
// multiplied by the scale (FMUL).
const (
	qoff    = "R7" // half passes: bytes from a block's start to the half's quants, 2 or 18
	q8Scale = 8    // the block's d in lane 0
)

func weightedRowsQ8(f *File) {
	f.Func("WeightedSumRowsAddQ8NEON", "(dst []float32, w []float32, v []byte, rows, n, stride int)", 96,
		"WeightedSumRowsAddQ8NEON"+fmt.Sprintf(addDoc, attendPitch, "v_j[d]",
			"v holds q8_0 blocks, v_j the dim/32 from block j*stride on (v_j[d] = q·scale of its block). It needs dim a positive multiple of 32, n ≥ 0 and stride ≥ dim/32 blocks, and len(v) ≥ 34·((n−1)·stride + dim/32) for n ≥ 1; with n = 0 it reads and writes nothing."))
	f.I("MOVD dst_base+0(FP), %s", dst)
	f.I("MOVD dst_len+8(FP), %s", dim)
	f.I("MOVD w_base+24(FP), %s", wBlock)
	f.I("MOVD v_base+48(FP), %s", vBlock)
	f.I("MOVD rows+72(FP), %s", nRows)
	f.I("MOVD n+80(FP), %s", n)
	f.I("MOVD stride+88(FP), %s", stride)
	f.I("CBZ %s, done", n)
	f.I("MOVD $%d, %s", q8Block, walk)
	f.I("MUL %s, %s, %s", walk, stride, stride) // bytes from one row to the next
	f.I("UDIV %s, %s, %s", nRows, dim, dim)
	f.I("LSL $2, %s, %s", dim, pitch)

	f.I("// One pass (dim ≤ 64/rows columns) takes all rows as one block; several take blocks of %d.", blockRows)
	f.I("MOVD %s, %s", n, height)
	f.I("MOVD $64, %s", rest)
	f.I("UDIV %s, %s, %s", nRows, rest, rest)
	f.I("CMP %s, %s", rest, dim)
	f.I("BLS block")
	f.I("MOVD $%d, %s", blockRows, height)

	f.Label("block")
	f.I("CBZ %s, done", n)
	f.I("CMP %s, %s", height, n)
	f.I("CSEL LO, %s, %s, %s", n, height, count) // count = min(height, n)
	f.I("MOVD ZR, %s", col)
	f.Label("pass")
	f.I("CMP %s, %s", dim, col)
	f.I("BHS blocknext")
	f.I("LSR $5, %s, %s", col, rest)
	f.I("MOVD $%d, %s", q8Block, qoff)
	f.I("MADD %s, %s, %s, %s", qoff, vBlock, rest, passV) // passV = v[j0·stride] + 34·col/32
	f.I("CMP $2, %s", nRows)
	f.I("BLT rows1")
	f.I("BEQ rows2")
	f.I("AND $16, %s, %s", col, qoff)
	f.I("ADD $2, %s", qoff)
	f.I("CMP $3, %s", nRows)
	f.I("BEQ rows3")
	passRowsQ8(f, 4, 1)
	f.I("ADD $16, %s", col)
	f.I("B pass")
	f.Label("rows3")
	passRowsQ8(f, 3, 1)
	f.I("ADD $16, %s", col)
	f.I("B pass")
	f.Label("rows2")
	passRowsQ8(f, 2, 2)
	f.I("ADD $32, %s", col)
	f.I("B pass")
	f.Label("rows1")
	f.I("SUB %s, %s, %s", col, dim, rest)
	f.I("CMP $64, %s", rest)
	f.I("BLT pass1_2")
	passRowsQ8(f, 1, 4)
	f.I("ADD $64, %s", col)
	f.I("B pass")
	f.Label("pass1_2")
	passRowsQ8(f, 1, 2)
	f.I("ADD $32, %s", col)
	f.I("B pass")

	f.Label("blocknext")
	f.I("MADD %s, %s, %s, %s", stride, vBlock, count, vBlock) // vBlock += count·stride
	f.I("ADD %s<<2, %s, %s", count, wBlock, wBlock)
	f.I("SUB %s, %s", count, n)
	f.I("B block")
	f.Label("done")
	f.I("RET")
}

// passRowsQ8 adds the block's rows to halves·16 columns of each of the r rows of dst
// from col on, in acc(i, 4·halves, ·): whole blocks from passV, or (halves 1) the half
// of the block at passV whose quants start qoff bytes in.
func passRowsQ8(f *File, r, halves int) {
	kk := 4 * halves
	id := fmt.Sprintf("%d_%d", r, halves)
	f.I("ADD $%d, %s, %s", 4*(kk-1), col, lastCol) // the last vector, contiguous here
	rowAccs(f, "VLD1.P", r, kk)
	f.I("MOVD %s, %s", passV, row)
	rows(f, "q"+id, func() {
		rowWeights(f, r)
		f.I("MOVD %s, %s", row, walk)
		if halves == 1 {
			f.I("MOVHU (%s), %s", walk, scaleTmp)
			f.I("ADD %s, %s", qoff, walk)
			f.I("VLD1 (%s), [V0.B16]", walk)
			f.I("FMOVS %s, F%d", scaleTmp, q8Scale)
			f.W(FCVTSH(q8Scale, q8Scale))
			vs := []V{0, 4, 2, 5}
			f.W(SXTL28H(2, 0), SXTL8H(0, 0))
			f.W(SXTL24S(4, 0), SXTL4S(0, 0), SXTL24S(5, 2), SXTL4S(2, 2))
			dequant(f, r, kk, vs, 0)
			return
		}
		for b := range halves / 2 {
			f.I("MOVHU.P 2(%s), %s", walk, scaleTmp)
			f.I("VLD1.P 32(%s), [V0.B16, V1.B16]", walk)
			f.I("FMOVS %s, F%d", scaleTmp, q8Scale)
			f.W(FCVTSH(q8Scale, q8Scale))
			// Columns 0–15 are in V0, 16–31 in V1; as halves 0–7 V0, 8–15 V2,
			// 16–23 V1, 24–31 V3; as singles in the order of vs.
			vs := []V{0, 4, 2, 5, 1, 6, 3, 7}
			f.W(SXTL28H(2, 0), SXTL8H(0, 0), SXTL28H(3, 1), SXTL8H(1, 1))
			f.W(SXTL24S(4, 0), SXTL4S(0, 0), SXTL24S(5, 2), SXTL4S(2, 2))
			f.W(SXTL24S(6, 1), SXTL4S(1, 1), SXTL24S(7, 3), SXTL4S(3, 3))
			dequant(f, r, kk, vs, 8*b)
		}
	})
	rowAccs(f, "VST1.P", r, kk)
}

// dequant turns the sign-extended quants in vs, vectors u, u+1, … of the pass, into
// values (SCVTF, times the scale) and adds them times each row's weight.
func dequant(f *File, r, kk int, vs []V, u int) {
	for _, x := range vs {
		f.W(SCVTF4S(x, x))
	}
	for _, x := range vs {
		f.W(FMULElem4S(x, x, q8Scale, 0))
	}
	for i := range r {
		for x, v := range vs {
			f.W(FMLAElem4S(acc(i, kk, u+x), v, V(weightR0+i), 0))
		}
	}
}
