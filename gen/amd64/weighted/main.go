// Command weighted generates asm/weighted_amd64.s: the attention output
// dst[d] = Σⱼ w[j]·v[j*stride+d] over fp16 value rows stride ≥ dim halves apart, for
// AVX2 and AVX-512 from one body.
//
// dst is held in registers: its columns are cut into as few passes as fit maxVectors
// accumulators each, and a pass runs down the rows, broadcasting w[j], widening the
// row's halves and adding one fused multiply-add per vector. With several passes the
// rows go in blocks of blockRows, each pass taking up the sums it left in dst for the
// block before (a store and a load, exact), so V streams from memory once. Every
// output is the chain of fused multiply-adds over j in order, whatever the pass, block
// and lane, and the variants agree bit for bit.
//
// A row whose width is not a multiple of the vector takes its last vector at dim−Lanes,
// overlapping the one before: the overlapped lanes compute the same chains again and
// store the same bits, so no lane is masked and nothing outside the row is read. Rows
// narrower than one vector take a masked vector on AVX-512 and scalar columns on AVX2.
package main

import (
	"fmt"
	"math/bits"

	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/gotypes"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// maxVectors is the most accumulators of one pass: the register file less the
// broadcast weight and a widened row vector or two. Fewer would do for throughput
// (two FMA ports × 4 cycles' latency is 8 chains); more mean fewer passes.
var maxVectors = map[string]int{AVX2.Suffix: 12, AVX512.Suffix: 24}

func main() {
	Header()
	for _, isa := range Both {
		weighted(isa)
	}
	Generate()
}

var labels int

func label(what string, isa ISA) string {
	labels++
	return fmt.Sprintf("%s%s_%d", what, isa.Suffix, labels)
}

// blockRows is the height of a block of rows when dst takes several passes: each pass
// runs over the block and leaves its sums in dst for the next block, so a block's
// rows (16 KiB at dim 128) are read from memory by the first pass and from L1 by the
// others, rather than every pass streaming the whole of V with a stride.
const blockRows = 64

// frame is what a pass needs: the block of rows and the pass's columns.
type frame struct {
	isa     ISA
	dst     reg.GPVirtual // &dst[0]
	wEnd    reg.GPVirtual // &w[n]
	stride  reg.GPVirtual // stride·2, bytes from one row of v to the next
	block   reg.GPVirtual // &v[j0*stride], the block's first row
	j0, j1  reg.GPVirtual // the block's rows as indexes from the end of w: j0−n … j1−n
	col     reg.GPVirtual // first column of the pass
	lastCol reg.GPVirtual // column of the pass's last vector
}

func weighted(isa ISA) {
	name := "WeightedSumRows" + isa.Suffix
	TEXT(name, NOSPLIT, "func(dst []float32, w []float32, v []uint16, stride int)")
	Pragma("noescape")
	Doc(name+" sets dst[d] = Σⱼ w[j]·v[j*stride+d], one fused multiply-add per term in",
		"order of j, for len(dst) ≥ 1 and stride ≥ len(dst): row j is v[j*stride:][:len(dst)].")
	lanesLog := uint64(bits.TrailingZeros(uint(isa.Lanes)))
	f := frame{isa: isa}
	f.dst = load(Param("dst").Base())
	dim := load(Param("dst").Len())
	f.wEnd = load(Param("w").Base())
	f.j0 = load(Param("w").Len())
	LEAQ(Mem{Base: f.wEnd, Index: f.j0, Scale: 4}, f.wEnd)
	NEGQ(f.j0)
	f.block = load(Param("v").Base())
	f.stride = load(Param("stride"))
	SHLQ(U8(1), f.stride)
	done := label("done", isa)

	narrow := label("narrow", isa)
	CMPQ(dim, U8(isa.Lanes))
	JB(LabelRef(narrow))

	Comment("vectors = ⌈dim/Lanes⌉ in passes = ⌈vectors/maxVectors⌉ of per = ⌈vectors/passes⌉.")
	vectors, passes, per, t := GP64(), GP64(), GP64(), GP64()
	LEAQ(Mem{Base: dim, Disp: isa.Lanes - 1}, vectors)
	SHRQ(U8(lanesLog), vectors)
	XORQ(passes, passes)
	MOVQ(vectors, t)
	top := label("passes", isa)
	Label(top)
	INCQ(passes)
	SUBQ(U8(maxVectors[isa.Suffix]), t)
	JG(LabelRef(top))
	XORQ(per, per)
	XORQ(t, t)
	top = label("per", isa)
	Label(top)
	INCQ(per)
	ADDQ(passes, t)
	CMPQ(t, vectors)
	JB(LabelRef(top))
	SHLQ(U8(lanesLog), per) // now in columns

	Comment("One pass takes all rows as one block; several take blocks of blockRows.")
	height := AllocLocal(8)
	MOVQ(f.j0, t)
	NEGQ(t)
	CMPQ(passes, U8(1))
	JE(LabelRef("height" + name))
	MOVQ(U32(blockRows), t)
	Label("height" + name)
	MOVQ(t, height)

	Comment("Zero dst: the passes add to it.")
	zero := isa.Vec()
	VXORPS(zero, zero, zero)
	XORQ(t, t)
	top = label("zero", isa)
	Label(top)
	VMOVUPS(zero, Mem{Base: f.dst, Index: t, Scale: 4})
	ADDQ(U8(isa.Lanes), t)
	LEAQ(Mem{Base: t, Disp: isa.Lanes}, vectors)
	CMPQ(vectors, dim)
	JBE(LabelRef(top))
	VMOVUPS(zero, Mem{Base: f.dst, Index: dim, Scale: 4, Disp: -isa.Bytes()})

	blockTop, blockNext := label("block", isa), label("blocknext", isa)
	Label(blockTop)
	TESTQ(f.j0, f.j0)
	JZ(LabelRef(done))
	f.j1 = GP64()
	MOVQ(height, f.j1)
	ADDQ(f.j0, f.j1)
	XORQ(t, t)
	CMPQ(f.j1, t)
	CMOVQGT(t, f.j1) // j1 = min(j0 + height, 0)

	Comment("Each pass takes min(per, dim−col) columns, one vector fewer if that would leave")
	Comment("the next pass less than one; k = ⌈columns/Lanes⌉ vectors.")
	f.col, f.lastCol = GP64(), GP64()
	XORQ(f.col, f.col)
	passTop, passNext := label("pass", isa), label("passnext", isa)
	Label(passTop)
	CMPQ(f.col, dim)
	JAE(LabelRef(blockNext))
	cols, k, rest := GP64(), GP64(), GP64()
	MOVQ(dim, cols)
	SUBQ(f.col, cols)
	CMPQ(cols, per)
	CMOVQHI(per, cols)
	MOVQ(dim, rest)
	SUBQ(f.col, rest)
	SUBQ(cols, rest)
	DECQ(rest) // rest−1 < Lanes−1 unsigned: 0 < rest < Lanes
	LEAQ(Mem{Base: cols, Disp: -isa.Lanes}, k)
	CMPQ(rest, U8(isa.Lanes-1))
	CMOVQCS(k, cols)
	LEAQ(Mem{Base: cols, Disp: isa.Lanes - 1}, k)
	SHRQ(U8(lanesLog), k)
	LEAQ(Mem{Base: f.col, Index: cols, Scale: 1, Disp: -isa.Lanes}, f.lastCol)
	entries := make([]string, maxVectors[isa.Suffix]+1)
	for kk := 1; kk < len(entries); kk++ {
		entries[kk] = label(fmt.Sprintf("k%d_", kk), isa)
		CMPQ(k, U8(kk))
		JE(LabelRef(entries[kk]))
	}
	for kk := 1; kk < len(entries); kk++ {
		Label(entries[kk])
		f.pass(kk)
		JMP(LabelRef(passNext))
	}
	Label(passNext)
	LEAQ(Mem{Base: f.lastCol, Disp: isa.Lanes}, f.col)
	JMP(LabelRef(passTop))

	Label(blockNext)
	MOVQ(f.j1, t)
	SUBQ(f.j0, t)
	IMULQ(f.stride, t)
	ADDQ(t, f.block)
	MOVQ(f.j1, f.j0)
	JMP(LabelRef(blockTop))

	Label(narrow)
	zeroJ := GP64()
	XORQ(zeroJ, zeroJ)
	f.j1 = zeroJ
	if isa.Lanes == 16 {
		f.maskedVector(dim)
	} else {
		f.scalarColumns(dim)
	}
	Label(done)
	VZEROUPPER()
	RET()
}

func load(c gotypes.Component) reg.GPVirtual {
	r := GP64()
	Load(c, r)
	return r
}

// rows runs body once per row j of the block, with row pointing at v[j*stride] and
// weight at w[j].
func (f frame) rows(body func(row reg.GPVirtual, weight Mem)) {
	row, j := GP64(), GP64()
	MOVQ(f.block, row)
	MOVQ(f.j0, j)
	top, done := label("row", f.isa), label("rowdone", f.isa)
	CMPQ(j, f.j1)
	JGE(LabelRef(done))
	Label(top)
	body(row, Mem{Base: f.wEnd, Index: j, Scale: 4})
	ADDQ(f.stride, row)
	INCQ(j)
	CMPQ(j, f.j1)
	JL(LabelRef(top))
	Label(done)
}

// pass adds the block's rows to k vectors of columns of dst, at col, col+Lanes, …, and
// the last at lastCol, held in registers. Lanes where the last vector overlaps the one
// before hold the same sums in both.
func (f frame) pass(k int) {
	isa := f.isa
	Commentf("Pass of %d vectors.", k)
	acc := make([]reg.VecVirtual, k)
	at := func(base reg.GPVirtual, size, u int) Mem {
		if u == k-1 {
			return Mem{Base: base, Index: f.lastCol, Scale: uint8(size)}
		}
		return Mem{Base: base, Index: f.col, Scale: uint8(size), Disp: u * isa.Lanes * size}
	}
	for u := range acc {
		acc[u] = isa.Vec()
		VMOVUPS(at(f.dst, 4, u), acc[u])
	}
	f.rows(func(row reg.GPVirtual, weight Mem) {
		b := isa.Vec()
		VBROADCASTSS(weight, b)
		for u := range acc {
			x := isa.Vec()
			VCVTPH2PS(at(row, 2, u), x)
			VFMADD231PS(x, b, acc[u])
		}
	})
	for u := range acc {
		VMOVUPS(acc[u], at(f.dst, 4, u))
	}
}

// maskedVector serves dim < 16 on AVX-512: one vector whose lanes past dim are masked
// off in every load and store (masked-off elements are not accessed).
func (f frame) maskedVector(dim reg.GPVirtual) {
	Comment("dim < Lanes: one masked vector.")
	m, i, mask := GP32(), GP64(), K()
	XORL(m, m)
	MOVQ(dim, i)
	top := label("mask", f.isa)
	Label(top) // m = 2m+1, dim times: the low dim bits set
	LEAL(Mem{Base: m, Index: m, Scale: 1, Disp: 1}, m)
	DECQ(i)
	JNZ(LabelRef(top))
	KMOVW(m, mask)
	acc := f.isa.Vec()
	VXORPS(acc, acc, acc)
	f.rows(func(row reg.GPVirtual, weight Mem) {
		b, h, x := f.isa.Vec(), YMM(), f.isa.Vec()
		VBROADCASTSS(weight, b)
		VMOVDQU16_Z(Mem{Base: row}, mask, h)
		VCVTPH2PS(h, x)
		VFMADD231PS(x, b, acc)
	})
	VMOVUPS(acc, mask, Mem{Base: f.dst})
}

// scalarColumns serves dim < 8 on AVX2: one column at a time, in the low lane.
func (f frame) scalarColumns(dim reg.GPVirtual) {
	Comment("dim < Lanes: one column at a time.")
	c := GP64()
	XORQ(c, c)
	top, done := label("column", f.isa), label("columndone", f.isa)
	Label(top)
	CMPQ(c, dim)
	JAE(LabelRef(done))
	acc := XMM()
	VXORPS(acc, acc, acc)
	f.rows(func(row reg.GPVirtual, weight Mem) {
		h, x := GP32(), XMM()
		MOVWLZX(Mem{Base: row, Index: c, Scale: 2}, h)
		VMOVD(h, x)
		VCVTPH2PS(x, x)
		VFMADD231SS(weight, x, acc)
	})
	VMOVSS(acc, Mem{Base: f.dst, Index: c, Scale: 4})
	INCQ(c)
	JMP(LabelRef(top))
	Label(done)
}
