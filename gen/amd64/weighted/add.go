package main

import (
	"fmt"

	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// attendPitch is the float32s between the weight rows of WeightedSumRowsAdd: the fused
// attention's block of keys (kernels.attendBlock), whose weights it lays out
// [rows][attendPitch], so that a row's weight is a fixed displacement from row 0's.
const attendPitch = 256

// maxAddRows is the most rows of dst a pass of WeightedSumRowsAdd holds. On AVX-512 all
// four, so that each value is widened once for all of them: at dim 128 that takes two
// passes of half a row, over blocks of blockRows rows of v, the second reading its
// half rows from L1. Against two groups of two rows, each pass a whole row and the
// second group widening each value again, the fused attention took 9 % less time at
// 2,048 rows per head in every format, q8_0 12 % less at 16,384, the rest within the
// noise (Zen 5, G = 4, 10 alternating runs, geomean −6 %; with blocks of 1,024 keys
// two groups had been the faster, 2.7–3.0 against 3.1–3.5 ms at 16,384 rows). AVX2's
// sixteen registers would leave four rows two vectors each, eight passes at dim 128:
// it keeps two rows a pass.
func maxAddRows(isa ISA, fm format) int {
	if isa.Lanes == 16 {
		return 4
	}
	return 2
}

// weightedAdd generates WeightedSumRowsAdd{,BF16,Q8}{AVX2,AVX512}, the fused attention's
// step: the sums of weighted rows of weighted(), for 1 to 4 rows of weights and of dst
// at once, added to dst's values. Each row of v is widened once for all rows of dst
// (when rows exceed maxAddRows, once per group of rows, the second from L1), and
// every output is the chain of fused multiply-adds over j in order that
// WeightedSumRows computes, starting from dst's value instead of 0.
//
// With table set it writes WeightedSumRowsAdd{,BF16,Q8,F32}Table{AVX2,AVX512}, which read
// row j of v (and of ahead) at the address v[j] (ahead[j]): the paged attention's rows,
// which lie in pages anywhere. The passes, blocks and fused multiply-adds are the same,
// so every output has the same bits as from the stride form.
func weightedAdd(isa ISA, fm format, table bool) {
	name, rowsType, strideParam := "WeightedSumRowsAdd"+fm.name+isa.Suffix, fm.vType, ", stride"
	if table {
		name, rowsType, strideParam = "WeightedSumRowsAdd"+fm.name+"Table"+isa.Suffix, "[]uintptr", ""
	}
	TEXT(name, NOSPLIT, "func(dst []float32, w []float32, v "+rowsType+", ahead "+rowsType+", rows, n"+strideParam+" int)")
	Pragma("noescape")
	doc := []string{fmt.Sprintf("%s adds to dst[i*dim+d], for i < rows and d < dim = len(dst)/rows,", name),
		fmt.Sprintf("Σⱼ w[i*%d+j]·%s over j < n, one fused multiply-add per term in order of j", attendPitch, fm.value),
		"from dst's value, for 1 ≤ rows ≤ 4 and n ≥ 0; the rows of v are as in " + "WeightedSumRows" + fm.name + isa.Suffix + "."}
	if table {
		doc = append(doc, "Here row j is the one at the address v[j]. The rows must stay reachable from Go",
			"pointers for the call: v holds bare addresses. Where ahead is not empty (n entries),",
			"the row of a value's length at ahead[j] is prefetched as the first rows of dst take",
			"row j (in their first pass): the fused attention's next block of keys.")
	} else {
		doc = append(doc, "Where ahead is not empty, its rows, laid out as v's, are prefetched, row j as the first",
			"rows of dst take row j of v (in their first pass): the fused attention's next block of keys.")
	}
	Doc(doc...)
	rows := load(Param("rows"))
	dim := GP64()
	Comment("dim = len(dst)/rows")
	Load(Param("dst").Len(), reg.RAX)
	XORQ(reg.RDX, reg.RDX)
	DIVQ(rows)
	MOVQ(reg.RAX, dim)
	dimSize := AllocLocal(8)
	t := GP64()
	MOVQ(dim, t)
	SHLQ(U8(2), t)
	MOVQ(t, dimSize)
	if table {
		Comment("&ahead[n] (0: no ahead), and a row's last byte.")
	} else {
		Comment("The bytes from v to ahead (0: no ahead), and a row's last byte.")
	}
	aheadFrom := AllocLocal(8)
	t = load(Param("ahead").Base())
	noAhead := label("noahead", isa)
	TESTQ(t, t)
	JZ(LabelRef(noAhead))
	if table {
		LEAQ(Mem{Base: t, Index: load(Param("n")), Scale: 8}, t)
	} else {
		SUBQ(load(Param("v").Base()), t)
	}
	Label(noAhead)
	MOVQ(t, aheadFrom)
	aheadRows := NewRowPrefetch(fm.lastByte(dim))
	entries := make([]string, 5)
	for r := 1; r <= 4; r++ {
		entries[r] = label(fmt.Sprintf("rows%d_", r), isa)
		CMPQ(rows, U8(r))
		JE(LabelRef(entries[r]))
	}
	done := label("done", isa)
	JMP(LabelRef(done))
	for r := 1; r <= 4; r++ {
		Label(entries[r])
		for first := 0; first < r; first += maxAddRows(isa, fm) {
			group := min(maxAddRows(isa, fm), r-first)
			next := done
			if first+group < r {
				next = label("group", isa)
			}
			f := frame{isa: isa, fm: fm, rows: group, add: true, table: table, dimSize: dimSize, aheadFrom: aheadFrom, aheadRows: aheadRows}
			f.dst = load(Param("dst").Base())
			for range first {
				ADDQ(dimSize, f.dst)
			}
			f.wEnd = load(Param("w").Base())
			f.j0 = load(Param("n"))
			LEAQ(Mem{Base: f.wEnd, Index: f.j0, Scale: 4, Disp: first * attendPitch * 4}, f.wEnd)
			NEGQ(f.j0)
			f.block = load(Param("v").Base())
			if table {
				LEAQ(Mem{Base: f.block, Index: load(Param("n")), Scale: 8}, f.block) // &v[n]
			} else {
				f.stride = load(Param("stride"))
				fm.stride(f.stride)
			}
			f.prefetch = first == 0
			f.sums(dim, label("height", isa), next)
			if next != done {
				Label(next)
			}
		}
	}
	Label(done)
	VZEROUPPER()
	RET()
}

// row is f for row i of dst and of the weights alone, for the narrow columns.
func (f frame) row(i int) frame {
	if i == 0 {
		return f
	}
	g := f
	g.rows = 1
	g.prefetch = false // row 0 prefetches
	g.dst, g.wEnd = GP64(), GP64()
	MOVQ(f.dst, g.dst)
	for range i {
		ADDQ(f.dimSize, g.dst)
	}
	LEAQ(Mem{Base: f.wEnd, Disp: i * attendPitch * 4}, g.wEnd)
	return g
}
