package main

import (
	"fmt"

	. "github.com/kvsimd/kvsimd/gen/neon"
)

// The block kernel keeps lanes = keys, where amd64's panel kernel keeps lanes =
// queries: NEON multiplies a vector by one lane of another (FMLA by element), so a
// query needs no broadcast, and each accumulator holds four consecutive scores of one
// query row, stored as they are into the query-major dst, with no transposition
// of the output and no horizontal sums. The keys are transposed instead, once per
// block of blockKeys while they are widened, into scratch[d·blockKeys + j]; every
// query row then reads them from L1. A tile is blockRows query rows × blockKeys keys:
// 16 accumulators V16–V31 (row r, keys 4v..4v+3 in V16+4r+v), the query rows' next
// four elements in V0–V3 and one step's keys in V4–V7; four steps over d are 64
// FMLAs for 4 query loads and 4 key loads (4 vectors each). V15 holds scale.
// The keys lie stride ≥ dim halves apart (one KV head of a token-major cache, scored
// where it lies); only the widening reads them, so the stride moves only its
// pointers, and the tiles, and the bits, are those of the same keys packed.
const (
	blockKeys = 16
	blockRows = 4

	bDstCol    = "R19" // dst[j0], the current block's column in row 0
	bKeys      = "R20" // first key row of the block
	bKeysLeft  = "R21"
	bQStride   = "R22" // dim·4
	bKStride   = "R8"  // stride·2
	bScratch   = "R23"
	bDstStride = "R24" // n·4
	bDim       = "R25"
	bRowsLeft  = "R26"
	bQueries   = "R9"  // first query row of the tile
	bDstTile   = "R10" // dst[i0*n+j0]
	bValid     = "R12" // keys in this block: blockKeys, or fewer in the last one
)

func bAcc(r, v int) V { return V(16 + 4*r + v) }

// scoresBlocks writes ScoresBlocksNEON (and its formats' twins): for each block of
// blockKeys keys, widen and transpose it into scratch, then run every group of
// blockRows query rows (then 2, then 1) against it.
func scoresBlocks(f *File, fm format) {
	name := fm.fn("ScoresBlocks")
	f.Func(name, fmt.Sprintf("(dst []float32, q []float32, k []%s, scratch []float32, rows int, n int, dim int, stride int, scale float32)", fm.goTyp), 132,
		fmt.Sprintf("%s sets dst[i*n+j] = scale·(q[i*dim:][:dim] · k[j*stride:][:dim]) for rows ≥ 1 query rows, n ≥ 1 keys, dim ≥ 1 and stride ≥ dim%s; scratch holds %d·dim floats.", name, fm.shapeDoc(), blockKeys))
	f.I("MOVD dst_base+0(FP), %s", bDstCol)
	f.I("MOVD k_base+48(FP), %s", bKeys)
	f.I("MOVD scratch_base+72(FP), %s", bScratch)
	f.I("MOVD n+104(FP), %s", bKeysLeft)
	f.I("LSL $2, %s, %s", bKeysLeft, bDstStride)
	f.I("MOVD dim+112(FP), %s", bDim)
	f.I("LSL $2, %s, %s", bDim, bQStride)
	f.I("MOVD stride+120(FP), %s", bKStride)
	fm.strideBytes(f, bKStride, "R11")
	if fm.q8 {
		loadQ8Lanes(f, 12, "R11") // for the widening, which leaves V12 alone
	}
	f.I("FMOVS scale+128(FP), F15")
	f.I("VDUP V15.S[0], V15.S4")
	f.Label("blocks")
	f.I("CBZ %s, blocksdone", bKeysLeft)
	f.I("MOVD $%d, %s", blockKeys, bValid)
	f.I("CMP $%d, %s", blockKeys, bKeysLeft)
	f.I("CSEL LT, %s, %s, %s", bKeysLeft, bValid, bValid)
	widenBlock(f, fm)
	f.I("MOVD q_base+24(FP), %s", bQueries)
	f.I("MOVD %s, %s", bDstCol, bDstTile)
	f.I("MOVD rows+96(FP), %s", bRowsLeft)
	for nr := blockRows; nr >= 1; nr /= 2 {
		top, done := fmt.Sprintf("brows%d", nr), fmt.Sprintf("brows%ddone", nr)
		f.Label(top)
		f.I("CMP $%d, %s", nr, bRowsLeft)
		f.I("BLT %s", done)
		blockTile(f, nr)
		f.I("MOVD $%d, R11", nr)
		f.I("MADD %s, %s, R11, %s", bQStride, bQueries, bQueries)
		f.I("MADD %s, %s, R11, %s", bDstStride, bDstTile, bDstTile)
		f.I("SUB $%d, %s", nr, bRowsLeft)
		if nr == blockRows {
			f.I("B %s", top) // after this loop fewer than blockRows rows remain, so
		} // each smaller size runs at most once.
		f.Label(done)
	}
	f.I("MOVD $%d, R11", blockKeys)
	f.I("MADD %s, %s, R11, %s", bKStride, bKeys, bKeys) // keys += blockKeys·stride halves
	f.I("ADD $%d, %s", 4*blockKeys, bDstCol)
	f.I("SUB %s, %s", bValid, bKeysLeft)
	f.I("B blocks")
	f.Label("blocksdone")
	f.I("RET")
}

// widenBlock widens the block's keys into scratch transposed, four keys (one group)
// at a time: four elements of each of the four keys make a 4×4 block, transposed with
// TRN1/TRN2 into one vector per element. In the last block, the keys past valid
// repeat its last key, so that nothing past k is read; their scores are not stored.
// q8_0 keys have no dim mod 4 elements; the scales of their blocks go to lane 0 of
// V16–V19 (the accumulators, free while a block is widened) as each block starts.
func widenBlock(f *File, fm format) {
	f.I("// Widen and transpose the key block: scratch[d·%d + j] = k_j[d].", blockKeys)
	f.I("SUB $1, %s, R15", bValid)
	f.I("MOVD ZR, R13") // first key of the group
	f.I("MOVD %s, R1", bScratch)
	f.Label("bgroup")
	for j := range 4 {
		f.I("ADD $%d, R13, R14", j)
		f.I("CMP R15, R14")
		f.I("CSEL GT, R15, R14, R14") // the last valid key for those past it
		f.I("MADD %s, %s, R14, R%d", bKStride, bKeys, 4+j)
	}
	f.I("MOVD R1, R3")
	f.I("MOVD $%d, R9", 4*blockKeys) // scratch row stride (a post-increment of one vector must be in a register)
	f.I("AND $-4, %s, R2", bDim)
	f.Label("bwiden")
	f.I("CBZ R2, bwidentail")
	switch {
	case fm.q8:
		f.I("TST $%d, R2", q8Values-1)
		f.I("BNE bquants")
		for j := range 4 {
			loadScale(f, fmt.Sprintf("R%d", 4+j), V(16+j), "R11")
		}
		f.Label("bquants")
		for j := range 4 {
			q8Load4(f, fmt.Sprintf("R%d", 4+j), V(8+j), V(16+j), 12, 0)
		}
	case fm == formatBF16:
		for j := range 4 {
			f.I("VLD1.P 8(R%d), [V%d.H4]", 4+j, 8+j)
		}
		f.W(SHLL4S(8, 8), SHLL4S(9, 9), SHLL4S(10, 10), SHLL4S(11, 11))
	case fm.f32:
		for j := range 4 {
			f.I("VLD1.P 16(R%d), [V%d.S4]", 4+j, 8+j)
		}
	default:
		for j := range 4 {
			f.I("VLD1.P 8(R%d), [V%d.H4]", 4+j, 8+j)
		}
		f.W(FCVTL(8, 8), FCVTL(9, 9), FCVTL(10, 10), FCVTL(11, 11))
	}
	// V0 = (a0 b0 a2 b2), V1 = (a1 b1 a3 b3), V2 and V3 the same for keys c, d; then
	// V4..V7 = element 0..3 of the four keys.
	f.I("VTRN1 V9.S4, V8.S4, V0.S4")
	f.I("VTRN2 V9.S4, V8.S4, V1.S4")
	f.I("VTRN1 V11.S4, V10.S4, V2.S4")
	f.I("VTRN2 V11.S4, V10.S4, V3.S4")
	f.I("VTRN1 V2.D2, V0.D2, V4.D2")
	f.I("VTRN1 V3.D2, V1.D2, V5.D2")
	f.I("VTRN2 V2.D2, V0.D2, V6.D2")
	f.I("VTRN2 V3.D2, V1.D2, V7.D2")
	for u := range 4 {
		f.I("VST1.P [V%d.S4], (R3)(R9)", 4+u)
	}
	f.I("SUB $4, R2")
	f.I("B bwiden")
	f.Label("bwidentail")
	if !fm.q8 {
		f.I("AND $3, %s, R2", bDim)
		f.Label("bwidentail1")
		f.I("CBZ R2, bgroupdone")
		for j := range 4 {
			fm.widen1(f, fmt.Sprintf("R%d", 4+j), 8, "R11")
			f.I("FMOVS F8, %d(R3)", 4*j)
		}
		f.I("ADD $%d, R3", 4*blockKeys)
		f.I("SUB $1, R2")
		f.I("B bwidentail1")
	}
	f.Label("bgroupdone")
	f.I("ADD $16, R1") // the next group's lanes
	f.I("ADD $4, R13")
	f.I("CMP $%d, R13", blockKeys)
	f.I("BLT bgroup")
}

// blockTile computes nr query rows against the key block: the dim mod 4 elements
// after the whole steps of four come one at a time, from lane 0 of a scalar load.
// Each row is scaled and stored whole, or lane by lane up to valid in the last block.
func blockTile(f *File, nr int) {
	id := fmt.Sprint(nr)
	f.I("// Tile of %d query rows × %d keys.", nr, blockKeys)
	f.I("MOVD %s, R0", bQueries)
	for r := 1; r < nr; r++ {
		f.I("ADD %s, R%d, R%d", bQStride, r-1, r)
	}
	for r := range nr {
		for v := range 4 {
			a := bAcc(r, v)
			f.I("VEOR V%d.B16, V%d.B16, V%d.B16", a, a, a)
		}
	}
	f.I("MOVD %s, R4", bScratch) // R4–R7 hold key pointers only while a block is widened
	f.I("AND $-4, %s, R13", bDim)
	f.Label("bsteps" + id)
	f.I("CBZ R13, bstepsdone%s", id)
	for r := range nr {
		f.I("VLD1.P 16(R%d), [V%d.S4]", r, r)
	}
	for u := range 4 {
		f.I("VLD1.P %d(R4), [V4.S4, V5.S4, V6.S4, V7.S4]", 4*blockKeys)
		for r := range nr {
			for v := range 4 {
				f.W(FMLAElem4S(bAcc(r, v), V(4+v), V(r), u))
			}
		}
	}
	f.I("SUB $4, R13")
	f.I("B bsteps%s", id)
	f.Label("bstepsdone" + id)
	f.I("AND $3, %s, R13", bDim)
	f.Label("bstep" + id)
	f.I("CBZ R13, bstore%s", id)
	for r := range nr {
		f.I("FMOVS.P 4(R%d), F%d", r, r)
	}
	f.I("VLD1.P %d(R4), [V4.S4, V5.S4, V6.S4, V7.S4]", 4*blockKeys)
	for r := range nr {
		for v := range 4 {
			f.W(FMLAElem4S(bAcc(r, v), V(4+v), V(r), 0))
		}
	}
	f.I("SUB $1, R13")
	f.I("B bstep%s", id)

	f.Label("bstore" + id)
	for r := range nr {
		for v := range 4 {
			a := bAcc(r, v)
			f.W(FMUL4S(a, a, 15))
		}
	}
	f.I("MOVD %s, R11", bDstTile)
	f.I("CMP $%d, %s", blockKeys, bValid)
	f.I("BLT bpartial%s", id)
	for r := range nr {
		a := bAcc(r, 0)
		f.I("VST1 [V%d.S4, V%d.S4, V%d.S4, V%d.S4], (R11)", a, a+1, a+2, a+3)
		if r < nr-1 {
			f.I("ADD %s, R11", bDstStride)
		}
	}
	f.I("B btiledone%s", id)
	f.Label("bpartial" + id)
	for r := range nr {
		rowDone := fmt.Sprintf("bpartialrow%s_%d", id, r)
		f.I("MOVD R11, R14")
		for e := range blockKeys - 1 {
			f.I("VST1.P V%d.S[%d], 4(R14)", bAcc(r, e/4), e%4)
			f.I("CMP $%d, %s", e+1, bValid)
			f.I("BEQ %s", rowDone)
		}
		f.Label(rowDone)
		f.I("ADD %s, R11", bDstStride)
	}
	f.Label("btiledone" + id)
}
