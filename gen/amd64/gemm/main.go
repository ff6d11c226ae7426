// Command gemm generates asm/gemm_amd64.s: the float32 products of row-major matrices
// C[i][j] += Σₚ A[i][p]·B[p][j] (GemmAdd) and C[i][j] = s·Σₚ A[i][p]·B[p][j]
// (GemmScaled), for AVX2 and AVX-512 from one body, the core of the causal attention's
// tiles (P·V against the values, and the scaled Q·Kᵀ against the keys transposed).
//
// A micro-tile holds rows × 2 vectors of C in accumulators (AVX2 6 × 16, AVX-512
// 12 × 32: 12 and 24 of the register file) and runs down p: two vector loads of B's
// row p, one broadcast of A[i][p] per row, a fused multiply-add per accumulator. The
// tiles go column block by column block, the rows inside: a column block of B, k·2
// vectors, stays in L1 while every row of A passes over it. Each entry is one chain of
// fused multiply-adds over p in order, started from C's value (GemmAdd) or 0
// (GemmScaled, then one multiply by s), whatever tile, column block or row tail it
// falls in, so the bits do not depend on m or n. GemmScaled's are those of GemmAdd into
// zeros followed by a multiply of each entry by s.
package main

import (
	"fmt"

	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// tileRows is the rows of a full micro-tile: with two vectors a row, AVX2 takes 12 of
// its 16 registers for accumulators, AVX-512 24 of its 32, leaving room for B's two
// vectors and the broadcast.
func tileRows(isa ISA) int {
	if isa.Lanes == 16 {
		return 12
	}
	return 6
}

func main() {
	Header()
	for _, isa := range Both {
		gemm(isa, false)
	}
	for _, isa := range Both {
		gemm(isa, true)
	}
	Generate()
}

// gemm writes GemmAdd{AVX2,AVX512}, or GemmScaled{AVX2,AVX512} if scaled.
func gemm(isa ISA, scaled bool) {
	if scaled {
		name := "GemmScaled" + isa.Suffix
		TEXT(name, NOSPLIT, "func(c, a, b []float32, m, n, k, lda, ldb, ldc int, s float32)")
		Pragma("noescape")
		Doc(name+" sets C to s·A·B: c[i*ldc+j] = s·Σₚ a[i*lda+p]·b[p*ldb+j] for i < m, j < n, p < k,",
			"each sum one chain of fused multiply-adds over p in order from 0, then one multiply by s.",
			fmt.Sprintf("n must be a multiple of %d, m, k ≥ 0, and the slices must hold what the strides reach;", isa.Lanes),
			"nothing is checked.")
	} else {
		name := "GemmAdd" + isa.Suffix
		TEXT(name, NOSPLIT, "func(c, a, b []float32, m, n, k, lda, ldb, ldc int)")
		Pragma("noescape")
		Doc(name+" adds A·B to C: c[i*ldc+j] += Σₚ a[i*lda+p]·b[p*ldb+j] for i < m, j < n, p < k, each",
			fmt.Sprintf("entry one chain of fused multiply-adds over p in order. n must be a multiple of %d, m, k ≥ 0,", isa.Lanes),
			"and the slices must hold what the strides reach; nothing is checked.")
	}
	mr := tileRows(isa)
	vb := isa.Bytes()
	cBase := Load(Param("c").Base(), GP64())
	aBase := Load(Param("a").Base(), GP64())
	bBase := Load(Param("b").Base(), GP64())
	lda, ldb, ldc := Load(Param("lda"), GP64()), Load(Param("ldb"), GP64()), Load(Param("ldc"), GP64())
	SHLQ(U8(2), lda) // in bytes
	SHLQ(U8(2), ldb)
	SHLQ(U8(2), ldc)
	// Locals: what the loops restart from.
	mLoc, nLeft, colB, colC := AllocLocal(8), AllocLocal(8), AllocLocal(8), AllocLocal(8)
	kLoc, aLoc := AllocLocal(8), AllocLocal(8)
	MOVQ(aBase, aLoc)
	t := Load(Param("m"), GP64())
	MOVQ(t, mLoc)
	t = Load(Param("k"), GP64())
	MOVQ(t, kLoc)
	t = Load(Param("n"), GP64())
	MOVQ(t, nLeft)
	MOVQ(bBase, colB)
	MOVQ(cBase, colC)

	colTop, colDone := label(isa, "col"), label(isa, "coldone")
	Label(colTop)
	// A column block of two vectors, or one at the end.
	n := GP64()
	MOVQ(nLeft, n)
	CMPQ(n, U32(0))
	JE(LabelRef(colDone))
	one := label(isa, "onevec")
	next := label(isa, "colnext")
	CMPQ(n, U32(2*isa.Lanes))
	JB(LabelRef(one))
	rowsLoop(isa, mr, 2, scaled, aLoc, colB, colC, lda, ldb, ldc, mLoc, kLoc)
	MOVQ(U32(2*vb), n)
	JMP(LabelRef(next))
	Label(one)
	rowsLoop(isa, mr, 1, scaled, aLoc, colB, colC, lda, ldb, ldc, mLoc, kLoc)
	MOVQ(U32(vb), n)
	Label(next)
	// Advance the column block by n bytes.
	t2 := GP64()
	MOVQ(colB, t2)
	ADDQ(n, t2)
	MOVQ(t2, colB)
	MOVQ(colC, t2)
	ADDQ(n, t2)
	MOVQ(t2, colC)
	SHRQ(U8(2), n) // in floats
	MOVQ(nLeft, t2)
	SUBQ(n, t2)
	MOVQ(t2, nLeft)
	JMP(LabelRef(colTop))
	Label(colDone)
	VZEROUPPER()
	RET()
}

var labels int

func label(isa ISA, what string) string {
	labels++
	return fmt.Sprintf("%s%s_%d", what, isa.Suffix, labels)
}

// rowsLoop runs the micro-tiles of one column block of nv vectors down the m rows:
// full tiles of mr rows, then one tile of the rows left.
func rowsLoop(isa ISA, mr, nv int, scaled bool, aBase Mem, colB, colC, lda, ldb, ldc Op, mLoc, kLoc Mem) {
	a, c := GP64(), GP64()
	left := GP64()
	MOVQ(aBase, a)
	MOVQ(colC, c)
	MOVQ(mLoc, left)
	top, tail := label(isa, "rows"), label(isa, "rowtail")
	done := label(isa, "rowsdone")
	Label(top)
	CMPQ(left, U32(mr))
	JB(LabelRef(tail))
	microTile(isa, mr, nv, scaled, a, colB, c, lda, ldb, ldc, kLoc)
	// Down mr rows of A and C.
	for range mr {
		ADDQ(lda, a)
		ADDQ(ldc, c)
	}
	SUBQ(U32(mr), left)
	JMP(LabelRef(top))
	Label(tail)
	// 1 … mr−1 rows left: a tile of that many.
	for r := mr - 1; r >= 1; r-- {
		skip := label(isa, "tail")
		CMPQ(left, U32(r))
		JNE(LabelRef(skip))
		microTile(isa, r, nv, scaled, a, colB, c, lda, ldb, ldc, kLoc)
		JMP(LabelRef(done))
		Label(skip)
	}
	Label(done)
}

// microTile adds rows × nv vectors of A·B to C at c (rows ldc bytes apart), or sets
// them to s·A·B if scaled, A's rows from a (lda bytes apart), B's column block from
// colB (rows ldb bytes apart).
func microTile(isa ISA, rows, nv int, scaled bool, a reg.GPVirtual, colB Op, c reg.GPVirtual, lda, ldb, ldc Op, kLoc Mem) {
	vb := isa.Bytes()
	acc := make([][]reg.VecVirtual, rows)
	// Row r of C or A lies at base[r/3] + (r%3)·stride: bases every third row.
	cRow := rowBases(c, ldc, rows)
	for r := range rows {
		acc[r] = make([]reg.VecVirtual, nv)
		for v := range nv {
			acc[r][v] = isa.Vec()
			if scaled {
				VXORPS(acc[r][v], acc[r][v], acc[r][v])
			} else {
				VMOVUPS(rowMem(cRow, ldc, r).Offset(v*vb), acc[r][v])
			}
		}
	}
	ap := rowBases(a, lda, rows) // advanced by 4 bytes a step
	b := GP64()
	MOVQ(colB, b)
	k := GP64()
	MOVQ(kLoc, k)
	top, done := label(isa, "k"), label(isa, "kdone")
	TESTQ(k, k)
	JZ(LabelRef(done))
	Label(top)
	bv := make([]reg.VecVirtual, nv)
	for v := range nv {
		bv[v] = isa.Vec()
		VMOVUPS(Mem{Base: b}.Offset(v*vb), bv[v])
	}
	for r := range rows {
		x := isa.Vec()
		VBROADCASTSS(rowMem(ap, lda, r), x)
		for v := range nv {
			VFMADD231PS(bv[v], x, acc[r][v])
		}
	}
	for _, p := range ap {
		ADDQ(U8(4), p)
	}
	ADDQ(ldb, b)
	DECQ(k)
	JNZ(LabelRef(top))
	Label(done)
	cRow = rowBases(c, ldc, rows) // again: kept through the loop, they would take registers it needs
	var s reg.VecVirtual
	if scaled { // broadcast now, from the argument: through the loop it would take a register
		s = isa.Vec()
		VBROADCASTSS(ParamAddr("s"), s)
	}
	for r := range rows {
		for v := range nv {
			if scaled {
				VMULPS(s, acc[r][v], acc[r][v])
			}
			VMOVUPS(acc[r][v], rowMem(cRow, ldc, r).Offset(v*vb))
		}
	}
}

// rowBases returns registers holding base + 3i·stride for each third row of rows.
func rowBases(base reg.GPVirtual, stride Op, rows int) []reg.GPVirtual {
	var bases []reg.GPVirtual
	for r := 0; r < rows; r += 3 {
		p := GP64()
		if r == 0 {
			MOVQ(base, p)
		} else {
			MOVQ(bases[len(bases)-1], p)
			for range 3 {
				ADDQ(stride, p)
			}
		}
		bases = append(bases, p)
	}
	return bases
}

// rowMem is row r's address: its third's base plus 0, 1 or 2 strides (a register).
func rowMem(bases []reg.GPVirtual, stride Op, r int) Mem {
	m := Mem{Base: bases[r/3]}
	if s := r % 3; s > 0 {
		m.Index, m.Scale = stride.(reg.Register), uint8(s)
	}
	return m
}
