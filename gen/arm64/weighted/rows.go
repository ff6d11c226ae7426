package main

import (
	"fmt"

	. "github.com/kvsimd/kvsimd/gen/neon"
)

// WeightedSumRowsAddNEON and WeightedSumRowsAddBF16NEON are the inner step of the
// fused decode attention: for rows (1–4) query rows at once they add to each output row
// i, dst[i*dim:][:dim], its own weighted sum Σⱼ w[i*attendPitch+j]·v[j*stride+d], so
// each value row is read and widened once for all the rows. The passes, blocks of rows
// and the overlapping last vector are WeightedSumRowsNEON's, with rows×k ≤ 16
// accumulators (k ≤ 16/rows vectors of columns per pass): each widened vector is added
// to the rows' accumulators with one by-element FMLA each, by lane 0 of the row's
// weight, loaded by a scalar load (no DUP); passes of up to four vectors widen the next
// value row among this row's FMLAs (pipeRows). An accumulator starts from dst's value
// and takes one fused multiply-add per row j in order, so every output is the chain
// WeightedSumRowsNEON computes from +0, started from dst instead. Rows narrower than
// four columns go one output at a time with FMADDS.
const (
	attendPitch = 256 // float32s from one row's weights to the next row's in w

	nRows    = "R23" // rows of dst
	pitch    = "R24" // dim·4, bytes from one row of dst to the next
	maxK     = "R25" // 16/rows, the most vectors a pass may take
	accRow   = "R26" // dst[i*dim+col], row i's first accumulator
	wRow     = "R25" // narrow: w[i*attendPitch], row i's weights
	dstRow   = "R26" // narrow: dst[i*dim]
	rowsLeft = "R7"  // narrow: rows of dst to go
	weightR0 = 12    // row i's weight in lane 0 of V12+i
)

// addDoc is the contract that the Add functions' doc comments share.
const addDoc = " adds to dst[i*dim+d], for i < rows and d < dim = len(dst)/rows, Σⱼ w[i*%[1]d+j]·%[2]s over j < n, one fused multiply-add per term in order of j starting from dst's value, for 1 ≤ rows ≤ 4 and len(dst) a multiple of rows; the weights of the rows lie AttendPitch = %[1]d float32s apart, so len(w) must be at least (rows−1)·%[1]d + n. %[3]s"

// weightedRows writes WeightedSumRowsAddNEON, or, for bf16, WeightedSumRowsAddBF16NEON.
func weightedRows(f *File, wd widening) {
	name := "WeightedSumRowsAdd" + wd.name() + "NEON"
	f.Func(name, "(dst []float32, w []float32, v "+wd.vType()+", rows, n, stride int)", 96,
		name+fmt.Sprintf(addDoc, attendPitch, "v[j*stride+d]", "It needs dim ≥ 1, n ≥ 0 and stride ≥ dim, and len(v) ≥ (n−1)·stride + dim for n ≥ 1; with n = 0 it reads and writes nothing."))
	f.I("MOVD dst_base+0(FP), %s", dst)
	f.I("MOVD dst_len+8(FP), %s", dim)
	f.I("MOVD w_base+24(FP), %s", wBlock)
	f.I("MOVD v_base+48(FP), %s", vBlock)
	f.I("MOVD rows+72(FP), %s", nRows)
	f.I("MOVD n+80(FP), %s", n)
	f.I("MOVD stride+88(FP), %s", stride)
	f.I("CBZ %s, done", n)
	f.I("LSL $%d, %s, %s", wd.log2Size(), stride, stride)
	f.I("UDIV %s, %s, %s", nRows, dim, dim)
	f.I("LSL $2, %s, %s", dim, pitch)
	f.I("CMP $4, %s", dim)
	f.I("BLT narrow")

	f.I("// vectors = ⌈dim/4⌉ (in %s) in passes = ⌈vectors/maxK⌉ (%s) of per = ⌈vectors/passes⌉,", cols, k)
	f.I("// maxK = %d/rows (in %s).", maxVectors, maxK)
	f.I("MOVD $%d, %s", maxVectors, maxK)
	f.I("UDIV %s, %s, %s", nRows, maxK, maxK)
	passesAndPer(f, maxK)

	f.I("// One pass takes all rows as one block; several take blocks of %d.", blockRows)
	f.I("MOVD %s, %s", n, height)
	f.I("CMP $1, %s", k)
	f.I("BEQ block")
	f.I("MOVD $%d, %s", blockRows, height)

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
	f.I("CMP $2, %s", nRows)
	f.I("BLT rows1")
	f.I("BEQ rows2")
	f.I("CMP $3, %s", nRows)
	f.I("BEQ rows3")
	for r := 4; r >= 1; r-- {
		if r < 4 {
			f.Label(fmt.Sprintf("rows%d", r))
		}
		for kk := 1; kk <= maxVectors/r; kk++ {
			f.I("CMP $%d, %s", kk, k)
			f.I("BEQ pass%d_%d", r, kk)
		}
	}
	for r := 1; r <= 4; r++ {
		for kk := 1; kk <= maxVectors/r; kk++ {
			passRows(f, wd, r, kk)
			f.I("B passnext")
		}
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
	narrowRows(f, wd)
	f.Label("done")
	f.I("RET")
}

// acc is the accumulator of vector u of row i in a pass of kk vectors.
func acc(i, kk, u int) V { return V(accV + i*kk + u) }

// passRows adds the block's rows to kk vectors of columns of each of the r rows of dst,
// at col, col+4, …, and the last at lastCol; row i's are in acc(i, kk, ·).
func passRows(f *File, wd widening, r, kk int) {
	id := fmt.Sprintf("%d_%d", r, kk)
	f.Label("pass" + id)
	rowAccs(f, "VLD1.P", r, kk)
	f.I("ADD %s<<%d, %s, %s", col, wd.log2Size(), vBlock, row)
	f.I("SUB %s, %s, %s", col, lastCol, last)
	f.I("LSL $%d, %s, %s", wd.log2Size(), last, last) // last − row in bytes
	if kk <= pipeMax {
		pipeRows(f, wd, r, kk, id)
		rowAccs(f, "VST1.P", r, kk)
		return
	}
	rows(f, id, func() {
		rowWeights(f, r)
		// The first kk−1 vectors are contiguous: load them in groups of up to four
		// (two registers of halves), alternating registers between groups, and the
		// last vector as one more group.
		f.I("MOVD %s, %s", row, walk)
		u, group := 0, 0
		for ; u < kk-1; group++ {
			raw, wide := V(2*(group%2)), V(4+4*(group%2))
			m := groupOf(kk - 1 - u)
			wd.load(f, walk, raw, wide, m, false)
			fmlaRows(f, r, kk, wide, u, m)
			u += m
		}
		raw, wide := V(2*(group%2)), V(4+4*(group%2))
		f.I("ADD %s, %s, %s", last, row, walk)
		wd.load(f, walk, raw, wide, 1, true)
		fmlaRows(f, r, kk, wide, kk-1, 1)
	})
	rowAccs(f, "VST1.P", r, kk)
}

// pipeMax is the widest pass that pipeRows takes: two rows of widened vectors, V4–V7
// and V8–V11.
const pipeMax = 4

// pipeRows is the loop over the block's rows for a pass of kk ≤ pipeMax vectors,
// software-pipelined: row j+1 is loaded and widened while row j's FMLAs run, vector
// u's widening placed just before the FMLAs of row j's vector u (float32 rows are only
// loaded ahead). FCVTL and SHLL issue on only half the vector pipes that FMLA may use:
// in the plain loop a row's widenings come after the previous row's FMLAs and queue
// behind them for those pipes; spread among the FMLAs, they share the pipes with them.
// Rows alternate between the two sets of widened vectors, so the loop is unrolled
// twice. The first row is loaded and widened before the loop, and the block's last row
// (left reaching 0) leaves the loop for its FMLAs alone, so no row at or past the
// block's end is read. Each accumulator still takes one FMLA per row in order of j.
func pipeRows(f *File, wd widening, r, kk int, id string) {
	sets := [2]V{4, 8}
	f.I("MOVD %s, %s", wBlock, weight)
	f.I("MOVD %s, %s", count, left)
	f.I("CBZ %s, rowdone%s", left, id)
	f.W(loadRow(f, wd, kk, sets[0])...)
	for s, set := range sets {
		f.Label(fmt.Sprintf("row%s%c", id, 'a'+s))
		rowWeights(f, r)
		f.I("SUBS $1, %s, %s", left, left)
		f.I("BEQ rowlast%s%c", id, 'a'+s)
		f.I("ADD %s, %s", stride, row)
		widen := loadRow(f, wd, kk, sets[1-s])
		for u := range kk {
			if u < len(widen) {
				f.W(widen[u])
			}
			fmlaRows(f, r, kk, set+V(u), u, 1)
		}
	}
	f.I("B row%sa", id)
	for s, set := range sets {
		f.Label(fmt.Sprintf("rowlast%s%c", id, 'a'+s))
		fmlaRows(f, r, kk, set, 0, kk)
		if s == 0 {
			f.I("B rowdone%s", id)
		}
	}
	f.Label("rowdone" + id)
}

// loadRow loads the kk ≤ pipeMax vectors of the row at row (the last at row+last) into
// V0… and returns their widenings into wide…wide+kk−1, one per vector in order (none
// for float32, loaded straight into wide…).
func loadRow(f *File, wd widening, kk int, wide V) []Inst {
	var widen []Inst
	raw := V(0)
	if kk > 1 {
		f.I("MOVD %s, %s", row, walk)
	}
	for u := 0; u < kk-1; {
		m := groupOf(kk - 1 - u)
		widen = append(widen, wd.loadRaw(f, walk, raw, wide+V(u), m, false)...)
		raw += V(max(1, m/2))
		u += m
	}
	f.I("ADD %s, %s, %s", last, row, walk)
	return append(widen, wd.loadRaw(f, walk, raw, wide+V(kk-1), 1, true)...)
}

// rowWeights loads row j's weights of the r rows, w[i*attendPitch+j], into lane 0 of
// V12+i, and steps the weight pointer to j+1.
func rowWeights(f *File, r int) {
	for i := 1; i < r; i++ {
		f.I("FMOVS %d(%s), F%d", 4*attendPitch*i, weight, weightR0+i)
	}
	f.I("FMOVS.P 4(%s), F%d", weight, weightR0)
}

// fmlaRows adds m widened vectors from wide on, times each row's weight, into the
// accumulators of vectors u, u+1, … of every row.
func fmlaRows(f *File, r, kk int, wide V, u, m int) {
	for i := range r {
		for x := range m {
			f.W(FMLAElem4S(acc(i, kk, u+x), wide+V(x), V(weightR0+i), 0))
		}
	}
}

// rowAccs loads (VLD1.P) or stores (VST1.P) the pass's kk accumulators of each of the
// r rows from or to dst.
func rowAccs(f *File, op string, r, kk int) {
	f.I("ADD %s<<2, %s, %s", col, dst, accRow)
	f.I("ADD %s<<2, %s, %s", lastCol, dst, lastDst)
	for i := range r {
		if i > 0 {
			f.I("ADD %s, %s", pitch, accRow)
			f.I("ADD %s, %s", pitch, lastDst)
		}
		f.I("MOVD %s, %s", accRow, walk)
		for u := 0; u < kk-1; {
			m := min(4, kk-1-u)
			regs := ""
			for x := range m {
				if x > 0 {
					regs += ", "
				}
				regs += fmt.Sprintf("V%d.S4", acc(i, kk, u+x))
			}
			if op == "VLD1.P" {
				f.I("VLD1.P %d(%s), [%s]", 16*m, walk, regs)
			} else {
				f.I("VST1.P [%s], %d(%s)", regs, 16*m, walk)
			}
			u += m
		}
		if op == "VLD1.P" {
			f.I("VLD1 (%s), [V%d.S4]", lastDst, acc(i, kk, kk-1))
		} else {
			f.I("VST1 [V%d.S4], (%s)", acc(i, kk, kk-1), lastDst)
		}
	}
}

// narrowRows serves dim < 4: one output at a time, row by row, in F16, each value
// widened with FCVT (or a shift, for bf16).
func narrowRows(f *File, wd widening) {
	f.I("MOVD %s, %s", dst, dstRow)
	f.I("MOVD %s, %s", wBlock, wRow)
	f.I("MOVD %s, %s", nRows, rowsLeft)
	f.Label("narrowrow")
	f.I("MOVD ZR, %s", col)
	f.Label("column")
	f.I("CMP %s, %s", dim, col)
	f.I("BHS narrownext")
	f.I("ADD %s<<2, %s, %s", col, dstRow, lastDst)
	f.I("FMOVS (%s), F16", lastDst)
	f.I("ADD %s<<%d, %s, %s", col, wd.log2Size(), vBlock, row)
	f.I("MOVD %s, %s", wRow, weight)
	f.I("MOVD %s, %s", n, left)
	f.Label("narrowterm")
	wd.scalar(f, row, walk)
	f.I("FMOVS.P 4(%s), F1", weight)
	f.I("FMADDS F1, F16, F0, F16") // F16 += F0·F1
	f.I("ADD %s, %s", stride, row)
	f.I("SUBS $1, %s, %s", left, left)
	f.I("BNE narrowterm")
	f.I("FMOVS F16, (%s)", lastDst)
	f.I("ADD $1, %s", col)
	f.I("B column")
	f.Label("narrownext")
	f.I("ADD %s, %s", pitch, dstRow)
	f.I("ADD $%d, %s", 4*attendPitch, wRow)
	f.I("SUBS $1, %s, %s", rowsLeft, rowsLeft)
	f.I("BNE narrowrow")
}
