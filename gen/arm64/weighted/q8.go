package main

import (
	"fmt"

	. "github.com/kvsimd/kvsimd/gen/neon"
)

// WeightedSumRowsQ8NEON has WeightedSumRowsNEON's chains over q8_0 rows: every output
// dst[d] is the fused multiply-adds of w[j]·v_j[d] over j in order from 0, where v_j[d]
// is q·d of its block, exact in float32, so rows whose values equal fp16 rows' give
// WeightedSumRowsNEON's bits. Only the partition of the columns differs, which changes
// no chain: dim is a multiple of 32, so a pass takes two blocks (64 columns, sixteen
// accumulators) or the last one, and each block of a row is widened whole: its scale
// d with FCVT, its 32 quants sign-extended twice (SXTL), converted (SCVTF) and
// multiplied by d (FMUL), then added with one VFMLA per vector.
const (
	q8Block      = 34 // bytes of a q8_0 block
	q8PassBlocks = 2
	passV        = "R12" // v[j0*stride + col/32 blocks], the pass's first row
	scaleTmp     = "R10"
	scaleV       = 14 // the block's d in lane 0
)

func weightedQ8(f *File) {
	f.Func("WeightedSumRowsQ8NEON", "(dst []float32, w []float32, v []byte, stride int)", 80,
		"WeightedSumRowsQ8NEON sets dst[d] = Σⱼ w[j]·v_j[d], one fused multiply-add per term in order of j, where v holds q8_0 blocks, v_j the len(dst)/32 from block j*stride on, for len(dst) a positive multiple of 32 and stride ≥ len(dst)/32 blocks; len(v) must be at least 34·((len(w)−1)·stride + len(dst)/32).")
	f.I("MOVD dst_base+0(FP), %s", dst)
	f.I("MOVD dst_len+8(FP), %s", dim)
	f.I("MOVD w_base+24(FP), %s", wBlock)
	f.I("MOVD w_len+32(FP), %s", n)
	f.I("MOVD v_base+48(FP), %s", vBlock)
	f.I("MOVD stride+72(FP), %s", stride)
	f.I("MOVD $%d, %s", q8Block, walk)
	f.I("MUL %s, %s, %s", walk, stride, stride) // bytes from one row to the next

	f.I("// One pass takes all rows as one block; several take blocks of %d.", blockRows)
	f.I("MOVD %s, %s", n, height)
	f.I("CMP $%d, %s", 32*q8PassBlocks, dim)
	f.I("BLS zero")
	f.I("MOVD $%d, %s", blockRows, height)

	f.I("// Zero dst: the passes add to it.")
	f.Label("zero")
	for v := range 4 {
		f.I("VEOR V%d.B16, V%d.B16, V%d.B16", v, v, v)
	}
	f.I("MOVD %s, %s", dst, walk)
	f.I("MOVD %s, %s", dim, rest)
	f.Label("zeroloop")
	f.I("VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(%s)", walk)
	f.I("VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(%s)", walk)
	f.I("SUBS $32, %s", rest)
	f.I("BNE zeroloop")

	f.Label("block")
	f.I("CBZ %s, done", n)
	f.I("CMP %s, %s", height, n)
	f.I("CSEL LO, %s, %s, %s", n, height, count) // count = min(height, n)
	f.I("MOVD ZR, %s", col)
	f.I("MOVD %s, %s", vBlock, passV)
	f.Label("pass")
	f.I("CMP %s, %s", dim, col)
	f.I("BHS blocknext")
	f.I("SUB %s, %s, %s", col, dim, cols)
	f.I("CMP $%d, %s", 32*q8PassBlocks, cols)
	f.I("BLT pass1")
	for _, nb := range []int{q8PassBlocks, 1} {
		if nb == 1 {
			f.Label("pass1")
		}
		q8Pass(f, nb)
		f.I("ADD $%d, %s", 32*nb, col)
		f.I("ADD $%d, %s", q8Block*nb, passV)
		f.I("B pass")
	}

	f.Label("blocknext")
	f.I("MADD %s, %s, %s, %s", stride, vBlock, count, vBlock) // vBlock += count·stride
	f.I("ADD %s<<2, %s, %s", count, wBlock, wBlock)
	f.I("SUB %s, %s", count, n)
	f.I("B block")
	f.Label("done")
	f.I("RET")
}

// q8Pass adds the block's rows to the nb·32 columns of dst from col on, in nb·8
// accumulators V16… .
func q8Pass(f *File, nb int) {
	id := fmt.Sprint(nb)
	q8Accs(f, "VLD1.P", nb)
	f.I("MOVD %s, %s", passV, row)
	rows(f, "q"+id, func() {
		f.I("FMOVS.P 4(%s), F%d", weight, weightV)
		f.I("VDUP V%d.S[0], V%d.S4", weightV, weightV)
		f.I("MOVD %s, %s", row, walk)
		for b := range nb {
			f.I("MOVHU.P 2(%s), %s", walk, scaleTmp)
			f.I("FMOVS %s, F%d", scaleTmp, scaleV)
			f.W(FCVTSH(scaleV, scaleV))
			f.I("VLD1.P 32(%s), [V0.B16, V1.B16]", walk)
			f.W(SXTL8H(2, 0), SXTL28H(3, 0), SXTL8H(4, 1), SXTL28H(5, 1))
			for h := range V(4) {
				f.W(SXTL4S(6+2*h, 2+h), SXTL24S(7+2*h, 2+h))
			}
			for i := range V(8) {
				f.W(SCVTF4S(6+i, 6+i))
			}
			for i := range V(8) {
				f.W(FMULElem4S(6+i, 6+i, scaleV, 0))
			}
			for i := range 8 {
				f.I("VFMLA V%d.S4, V%d.S4, V%d.S4", weightV, 6+i, accV+8*b+i)
			}
		}
	})
	q8Accs(f, "VST1.P", nb)
}

// q8Accs loads (VLD1.P) or stores (VST1.P) the pass's nb·8 accumulators from or to
// dst at col.
func q8Accs(f *File, op string, nb int) {
	f.I("ADD %s<<2, %s, %s", col, dst, walk)
	for g := range 2 * nb {
		a := accV + 4*g
		regs := fmt.Sprintf("V%d.S4, V%d.S4, V%d.S4, V%d.S4", a, a+1, a+2, a+3)
		if op == "VLD1.P" {
			f.I("VLD1.P 64(%s), [%s]", walk, regs)
		} else {
			f.I("VST1.P [%s], 64(%s)", regs, walk)
		}
	}
}
