// Command weighted generates asm/weighted_arm64.s: the attention output
// dst[d] = Σⱼ w[j]·v[j*stride+d] over fp16 value rows on NEON, in the passes and blocks
// of rows of gen/amd64/weighted: up to maxVectors accumulators (V16–V31) of dst
// columns per pass, each row widened with FCVTL/FCVTL2 and added with one VFMLA per
// vector, the last vector of a row at dim−4 overlapping the one before when dim is not
// a multiple of 4. Rows narrower than four columns go one column at a time with
// FMADDS, also fused, so every output is the same chain of fused multiply-adds over j
// in order as on amd64. The rows lie stride ≥ dim halves apart (one KV head of a
// token-major cache, read where it lies); the stride moves only the row pointers, so
// the bits are those of the same rows packed.
//
// WeightedSumRowsBF16NEON is the same code over bfloat16 rows, widened with SHLL
// instead of FCVTL, WeightedSumRowsF32NEON over float32 rows, loaded as they are, and
// WeightedSumRowsQ8NEON (q8.go) the same chains over q8_0 rows.
package main

import (
	"fmt"

	. "github.com/kvsimd/kvsimd/gen/neon"
)

const (
	maxVectors = 16
	blockRows  = 64 // rows per block when dst takes several passes
)

// Registers that hold the arguments and the pass state.
const (
	dst     = "R0"
	dim     = "R1"
	wBlock  = "R2" // w[j0], the block's first weight
	n       = "R3" // rows from the block on
	vBlock  = "R4" // v[j0*stride], the block's first row
	stride  = "R5" // stride·2, bytes from one row of v to the next
	col     = "R6" // first column of the pass
	cols    = "R7" // columns of the pass
	k       = "R8" // vectors of the pass
	lastCol = "R9" // column of the pass's last vector
	per     = "R10"
	row     = "R11" // v[j*stride+col]
	last    = "R12" // v[j*stride+lastCol]
	weight  = "R13" // w[j]
	left    = "R14" // rows to go
	walk    = "R15"
	lastDst = "R19"
	height  = "R20" // rows per block
	count   = "R21" // rows of this block
	rest    = "R22"

	weightV = 15 // w[j] in every lane
	accV    = 16 // first accumulator
)

func main() {
	f := NewFile("arm64/weighted")
	weighted(f, halves)
	weighted(f, bf16)
	weightedQ8(f)
	weightedRows(f, halves)
	weightedRows(f, bf16)
	weightedRowsQ8(f)
	weighted(f, f32)
	weightedRows(f, f32)
	f.Write()
}

// A widening turns the elements of a row into float32: halves (FCVTL), bfloat16s
// (SHLL), or float32 values, loaded as they are.
type widening int

const (
	halves widening = iota
	bf16
	f32
)

// name is the format's part of a function's name, and vType its Go slice type.
func (w widening) name() string { return [...]string{"", "BF16", "F32"}[w] }

func (w widening) vType() string {
	if w == f32 {
		return "[]float32"
	}
	return "[]uint16"
}

// log2Size is the shift from elements to bytes.
func (w widening) log2Size() int {
	if w == f32 {
		return 2
	}
	return 1
}

// low widens the low four elements of n into d, high the high four.
func (w widening) low(n, d V) Inst {
	if w == bf16 {
		return SHLL4S(d, n)
	}
	return FCVTL(d, n)
}

func (w widening) high(n, d V) Inst {
	if w == bf16 {
		return SHLL24S(d, n)
	}
	return FCVTL2(d, n)
}

// load loads m = 1, 2 or 4 vectors of the row at walk into wide…wide+m−1 as float32,
// post-incrementing walk, through raw and raw+1 where they need widening; last loads
// one vector without the increment.
func (w widening) load(f *File, walk string, raw, wide V, m int, last bool) {
	f.W(w.loadRaw(f, walk, raw, wide, m, last)...)
}

// loadRaw emits load's loads and returns its widenings, one per vector in order
// (none for float32), for the caller to place.
func (w widening) loadRaw(f *File, walk string, raw, wide V, m int, last bool) []Inst {
	if w == f32 {
		regs := ""
		for i := range m {
			if i > 0 {
				regs += ", "
			}
			regs += fmt.Sprintf("V%d.S4", wide+V(i))
		}
		if last {
			f.I("VLD1 (%s), [%s]", walk, regs)
		} else {
			f.I("VLD1.P %d(%s), [%s]", 16*m, walk, regs)
		}
		return nil
	}
	switch {
	case last:
		f.I("VLD1 (%s), [V%d.H4]", walk, raw)
		return []Inst{w.low(raw, wide)}
	case m == 4:
		f.I("VLD1.P 32(%s), [V%d.H8, V%d.H8]", walk, raw, raw+1)
		return []Inst{w.low(raw, wide), w.high(raw, wide+1), w.low(raw+1, wide+2), w.high(raw+1, wide+3)}
	case m == 2:
		f.I("VLD1.P 16(%s), [V%d.H8]", walk, raw)
		return []Inst{w.low(raw, wide), w.high(raw, wide+1)}
	default:
		f.I("VLD1.P 8(%s), [V%d.H4]", walk, raw)
		return []Inst{w.low(raw, wide)}
	}
}

// groupOf is the vectors of the next group of a row's loads when left remain: 4, 2 or 1.
func groupOf(left int) int {
	switch {
	case left >= 4:
		return 4
	case left >= 2:
		return 2
	}
	return 1
}

// scalar loads the element at row as float32 into F0; tmp is a scratch register.
func (w widening) scalar(f *File, row, tmp string) {
	switch w {
	case f32:
		f.I("FMOVS (%s), F0", row)
	case bf16:
		f.I("MOVHU (%s), %s", row, tmp)
		f.I("LSLW $16, %s, %s", tmp, tmp)
		f.I("FMOVS %s, F0", tmp)
	default:
		f.I("MOVHU (%s), %s", row, tmp)
		f.I("FMOVS %s, F0", tmp)
		f.W(FCVTSH(0, 0))
	}
}

// weighted writes WeightedSumRowsNEON, or, for bf16, WeightedSumRowsBF16NEON.
func weighted(f *File, wd widening) {
	name := "WeightedSumRows" + wd.name() + "NEON"
	f.Func(name, "(dst []float32, w []float32, v "+wd.vType()+", stride int)", 80,
		name+" sets dst[d] = Σⱼ w[j]·v[j*stride+d], one fused multiply-add per term in order of j, for len(dst) ≥ 1 and stride ≥ len(dst); len(v) must be at least (len(w)−1)·stride + len(dst).")
	f.I("MOVD dst_base+0(FP), %s", dst)
	f.I("MOVD dst_len+8(FP), %s", dim)
	f.I("MOVD w_base+24(FP), %s", wBlock)
	f.I("MOVD w_len+32(FP), %s", n)
	f.I("MOVD v_base+48(FP), %s", vBlock)
	f.I("MOVD stride+72(FP), %s", stride)
	f.I("LSL $%d, %s, %s", wd.log2Size(), stride, stride)
	f.I("CMP $4, %s", dim)
	f.I("BLT narrow")

	f.I("// vectors = ⌈dim/4⌉ (in %s) in passes = ⌈vectors/%d⌉ (%s) of per = ⌈vectors/passes⌉.", cols, maxVectors, k)
	passesAndPer(f, fmt.Sprintf("$%d", maxVectors))

	f.I("// One pass takes all rows as one block; several take blocks of %d.", blockRows)
	f.I("MOVD %s, %s", n, height)
	f.I("CMP $1, %s", k)
	f.I("BEQ zero")
	f.I("MOVD $%d, %s", blockRows, height)

	f.I("// Zero dst: the passes add to it.")
	f.Label("zero")
	f.I("VEOR V0.B16, V0.B16, V0.B16")
	f.I("MOVD %s, %s", dst, walk)
	f.I("SUB $4, %s, %s", dim, rest)
	f.Label("zeroloop")
	f.I("VST1.P [V0.S4], 16(%s)", walk)
	f.I("SUBS $4, %s, %s", rest, rest)
	f.I("BGT zeroloop")
	f.I("ADD %s<<2, %s, %s", dim, dst, walk)
	f.I("SUB $16, %s", walk)
	f.I("VST1 [V0.S4], (%s)", walk)

	f.Label("block")
	f.I("CBZ %s, done", n)
	f.I("CMP %s, %s", height, n)
	f.I("CSEL LO, %s, %s, %s", n, height, count) // count = min(height, n)

	f.I("// Each pass takes min(per, dim−col) columns, one vector fewer if that would leave")
	f.I("// the next pass less than one; k = ⌈columns/4⌉ vectors.")
	f.I("MOVD ZR, %s", col)
	f.Label("pass")
	f.I("CMP %s, %s", dim, col)
	f.I("BHS blocknext")
	f.I("SUB %s, %s, %s", col, dim, cols)
	f.I("CMP %s, %s", per, cols)
	f.I("CSEL HI, %s, %s, %s", per, cols, cols)
	f.I("SUB %s, %s, %s", col, dim, rest)
	f.I("SUB %s, %s, %s", cols, rest, rest)
	f.I("SUB $1, %s", rest)
	f.I("CMP $3, %s", rest) // rest−1 < 3 unsigned: 0 < rest < 4
	f.I("BHS whole")
	f.I("SUB $4, %s", cols)
	f.Label("whole")
	f.I("ADD $3, %s, %s", cols, k)
	f.I("LSR $2, %s, %s", k, k)
	f.I("ADD %s, %s, %s", col, cols, lastCol)
	f.I("SUB $4, %s", lastCol)
	for kk := 1; kk <= maxVectors; kk++ {
		f.I("CMP $%d, %s", kk, k)
		f.I("BEQ pass%d", kk)
	}
	for kk := 1; kk <= maxVectors; kk++ {
		pass(f, wd, kk)
		f.I("B passnext")
	}
	f.Label("passnext")
	f.I("ADD $4, %s, %s", lastCol, col)
	f.I("B pass")

	f.Label("blocknext")
	f.I("MADD %s, %s, %s, %s", stride, vBlock, count, vBlock) // vBlock += count·stride
	f.I("ADD %s<<2, %s, %s", count, wBlock, wBlock)
	f.I("SUB %s, %s", count, n)
	f.I("B block")

	f.Label("narrow")
	f.I("MOVD %s, %s", n, count)
	scalarColumns(f, wd)
	f.Label("done")
	f.I("RET")
}

// rows writes the loop over the block's rows around body, which finds row j's halves
// at row (and last) and its weight at weight; the caller sets row to the first.
func rows(f *File, id string, body func()) {
	f.I("MOVD %s, %s", wBlock, weight)
	f.I("MOVD %s, %s", count, left)
	f.I("CBZ %s, rowdone%s", left, id)
	f.Label("row" + id)
	body()
	f.I("ADD %s, %s", stride, row)
	f.I("SUBS $1, %s, %s", left, left)
	f.I("BNE row%s", id)
	f.Label("rowdone" + id)
}

// pass adds the block's rows to k vectors of columns of dst, at col, col+4, …, and the
// last at lastCol, held in V16… .
func pass(f *File, wd widening, kk int) {
	id := fmt.Sprint(kk)
	f.Label("pass" + id)
	accs(f, "VLD1.P", kk)
	f.I("ADD %s<<%d, %s, %s", col, wd.log2Size(), vBlock, row)
	f.I("SUB %s, %s, %s", col, lastCol, last)
	f.I("LSL $%d, %s, %s", wd.log2Size(), last, last) // last − row in bytes
	rows(f, id, func() {
		f.I("FMOVS.P 4(%s), F%d", weight, weightV)
		f.I("VDUP V%d.S[0], V%d.S4", weightV, weightV)
		// The first k−1 vectors are contiguous: load them in groups of up to four
		// (two registers of halves), alternating registers between groups.
		f.I("MOVD %s, %s", row, walk)
		u := 0
		for group := 0; u < kk-1; group++ {
			raw, wide := V(2*(group%2)), V(4+4*(group%2))
			m := groupOf(kk - 1 - u)
			wd.load(f, walk, raw, wide, m, false)
			fmla(f, wide, u, m)
			u += m
		}
		f.I("ADD %s, %s, %s", last, row, walk)
		wd.load(f, walk, 12, 13, 1, true)
		fmla(f, 13, kk-1, 1)
	})
	accs(f, "VST1.P", kk)
}

// accs loads (VLD1.P) or stores (VST1.P) the pass's kk accumulators from or to dst.
func accs(f *File, op string, kk int) {
	f.I("ADD %s<<2, %s, %s", col, dst, walk)
	for u := 0; u < kk-1; {
		m := min(4, kk-1-u)
		regs := ""
		for i := range m {
			if i > 0 {
				regs += ", "
			}
			regs += fmt.Sprintf("V%d.S4", accV+u+i)
		}
		if op == "VLD1.P" {
			f.I("VLD1.P %d(%s), [%s]", 16*m, walk, regs)
		} else {
			f.I("VST1.P [%s], %d(%s)", regs, 16*m, walk)
		}
		u += m
	}
	f.I("ADD %s<<2, %s, %s", lastCol, dst, lastDst)
	if op == "VLD1.P" {
		f.I("VLD1 (%s), [V%d.S4]", lastDst, accV+kk-1)
	} else {
		f.I("VST1 [V%d.S4], (%s)", accV+kk-1, lastDst)
	}
}

// fmla adds m widened vectors from wide on times the weight into the accumulators of
// vectors u, u+1, ….
func fmla(f *File, wide V, u, m int) {
	for i := range m {
		f.I("VFMLA V%d.S4, V%d.S4, V%d.S4", weightV, wide+V(i), accV+u+i)
	}
}

// scalarColumns serves dim < 4, all rows in one block: one column at a time in F16,
// widened with FCVT (or a shift, for bf16).
func scalarColumns(f *File, wd widening) {
	f.I("MOVD ZR, %s", col)
	f.Label("column")
	f.I("CMP %s, %s", dim, col)
	f.I("BHS done")
	f.I("VEOR V16.B16, V16.B16, V16.B16")
	f.I("ADD %s<<%d, %s, %s", col, wd.log2Size(), vBlock, row)
	rows(f, "s", func() {
		wd.scalar(f, row, walk)
		f.I("FMOVS.P 4(%s), F1", weight)
		f.I("FMADDS F1, F16, F0, F16") // F16 += F0·F1
	})
	f.I("ADD %s<<2, %s, %s", col, dst, walk)
	f.I("FMOVS F16, (%s)", walk)
	f.I("ADD $1, %s", col)
	f.I("B column")
}

// passesAndPer sets cols to ⌈dim/4⌉ vectors, k to the passes ⌈cols/maxK⌉ and per to the
// columns of a pass, 4·⌈cols/k⌉; maxK is an immediate ("$16") or a register.
func passesAndPer(f *File, maxK string) {
	f.I("ADD $3, %s, %s", dim, cols)
	f.I("LSR $2, %s, %s", cols, cols)
	f.I("MOVD ZR, %s", k)
	f.I("MOVD %s, %s", cols, lastCol)
	f.Label("passes")
	f.I("ADD $1, %s", k)
	f.I("SUBS %s, %s, %s", maxK, lastCol, lastCol)
	f.I("BGT passes")
	f.I("MOVD ZR, %s", per)
	f.I("MOVD ZR, %s", lastCol)
	f.Label("per")
	f.I("ADD $1, %s", per)
	f.I("ADD %s, %s", k, lastCol)
	f.I("CMP %s, %s", cols, lastCol)
	f.I("BLO per")
	f.I("LSL $2, %s, %s", per, per) // now in columns
}
