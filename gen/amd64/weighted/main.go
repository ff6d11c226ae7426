// Command weighted generates asm/weighted_amd64.s: the attention output
// dst[d] = Σⱼ w[j]·v[j*stride+d] over value rows stride ≥ dim elements apart, for
// AVX2 and AVX-512 from one body, with the values in fp16, bfloat16 or ggml's q8_0
// blocks. The formats differ only in how a pass widens a row's elements to float32,
// which is exact in each; the fused multiply-adds are the same, in the same order, so
// for equal widened values every format gives the fp16 body's bits.
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
//
// A q8_0 row is dim/32 blocks of 34 bytes (an fp16 scale d, then 32 int8 quants q),
// stride blocks apart, and dim is a multiple of 32. Its passes take whole blocks, so
// that a block's vectors share one widened d, and no vector overlaps another; the
// widened value q·d (VCVTDQ2PS, then VMULPS) is exact, 8 by 11 significant bits.
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

// accumulators is the most accumulator vectors of one pass for each of rows rows of
// dst: maxVectors shared among them, within the register file less the rows'
// broadcast weights, the widened vector and q8_0's scale or bfloat16's AVX2 shuffle.
func accumulators(isa ISA, fm format, rows int) int {
	file := 2 * isa.Lanes // 16 ymm, 32 zmm
	spare := 1            // the widened vector
	if fm.unit != 0 || (fm.name == bf16.name && isa.Lanes == 8) {
		spare = 2 // and q8_0's scale, or the bfloat16 shuffle on AVX2
	}
	n := min(maxVectors[isa.Suffix]/rows, (file-rows-spare)/rows)
	if fm.unit != 0 { // whole q8_0 blocks
		per := blockLen / isa.Lanes
		n -= n % per
	}
	return n
}

func main() {
	Header()
	// fp16 first: its functions, labels and registers stay as they were before the
	// other formats came, and the fused attention's came after them all.
	for _, fm := range []format{fp16, bf16, q8} {
		for _, isa := range Both {
			weighted(isa, fm)
		}
	}
	for _, fm := range []format{fp16, bf16, q8} {
		for _, isa := range Both {
			weightedAdd(isa, fm, false)
		}
	}
	// float32 came last of all, leaving the others' labels as they were.
	for _, isa := range Both {
		weighted(isa, f32)
		weightedAdd(isa, f32, false)
	}
	// The forms over tables of row addresses (the paged attention's) came last.
	for _, fm := range []format{fp16, bf16, q8, f32} {
		for _, isa := range Both {
			weightedAdd(isa, fm, true)
		}
	}
	Generate()
}

// format is how the value rows are stored.
type format struct {
	name   string                // after WeightedSumRows in the function names
	vType  string                // the Go type of v
	value  string                // v's element at row j, column d, in the doc
	unit   int                   // columns a pass takes together, or 0: one vector's
	size   int                   // bytes per value, for the formats of whole elements
	stride func(r reg.GPVirtual) // the stride from elements (blocks) to bytes
	// widener sets up what widening needs before a pass's row loop and returns
	// widen, which loads the Lanes elements at m into x as float32, exactly.
	widener func(isa ISA) (widen func(m Mem, x reg.VecVirtual))
	// widenMasked widens the elements of h, loaded with zeroing masked lanes, into x.
	widenMasked func(h, x reg.VecVirtual)
	// widenScalar widens the element at m into the low lane of x.
	widenScalar func(m Mem, x reg.VecVirtual)
}

// lastByte returns the offset of the last byte of a row of dim values.
func (fm format) lastByte(dim reg.GPVirtual) reg.GPVirtual {
	last := GP64()
	if fm.size == 2 {
		LEAQ(Mem{Base: dim, Index: dim, Scale: 1, Disp: -1}, last)
		return last
	}
	if fm.unit == 0 { // float32
		MOVQ(dim, last)
		SHLQ(U8(bits.TrailingZeros(uint(fm.size))), last)
		DECQ(last)
		return last
	}
	MOVQ(dim, last)
	SHRQ(U8(5), last)
	IMUL3Q(U8(blockSize), last, last)
	DECQ(last)
	return last
}

var (
	fp16 = format{
		vType: "[]uint16", value: "v[j*stride+d]", size: 2,
		stride: func(r reg.GPVirtual) { SHLQ(U8(1), r) },
		widener: func(ISA) func(m Mem, x reg.VecVirtual) {
			return func(m Mem, x reg.VecVirtual) { VCVTPH2PS(m, x) }
		},
		widenMasked: func(h, x reg.VecVirtual) {
			VCVTPH2PS(h, x)
		},
		widenScalar: func(m Mem, x reg.VecVirtual) {
			h := GP32()
			MOVWLZX(m, h)
			VMOVD(h, x)
			VCVTPH2PS(x, x)
		},
	}
	// bfloat16 is the high half of a float32: zero-extend to dwords, shift up.
	bf16 = format{
		name: "BF16", vType: "[]uint16", value: "bf16(v[j*stride+d])", size: 2,
		stride:  func(r reg.GPVirtual) { SHLQ(U8(1), r) },
		widener: bf16Widener,

		widenMasked: func(h, x reg.VecVirtual) {
			VPMOVZXWD(h, x)
			VPSLLD(U8(16), x, x)
		},
		widenScalar: func(m Mem, x reg.VecVirtual) {
			h := GP32()
			MOVWLZX(m, h)
			SHLL(U8(16), h)
			VMOVD(h, x)
		},
	}
	// float32 values need no widening: a plain load.
	f32 = format{
		name: "F32", vType: "[]float32", value: "v[j*stride+d]", size: 4,
		stride: func(r reg.GPVirtual) { SHLQ(U8(2), r) },
		widener: func(ISA) func(m Mem, x reg.VecVirtual) {
			return func(m Mem, x reg.VecVirtual) { VMOVUPS(m, x) }
		},
		widenScalar: func(m Mem, x reg.VecVirtual) { VMOVSS(m, x) },
	}
	q8 = format{
		name: "Q8", vType: "[]byte", value: "q8(v, j*stride*32+d)", unit: blockLen,
		stride: func(r reg.GPVirtual) { IMUL3Q(U8(blockSize), r, r) },
	}
)

var bf16Spread *Mem

// bf16Widener widens with VPMOVZXWD and VPSLLD on AVX-512. On AVX2 it takes one
// shuffle instead of two operations: VBROADCASTI128 loads the 8 halves into both
// 128-bit lanes (a load alone), and VPSHUFB puts halves 0–3 of the low lane and 4–7
// of the high lane into the high halves of the dwords, zeroing the low halves. At
// dim 128 on Zen 5 (a shared machine, best of many calls), bf16 took 1.47× fp16's time
// on AVX2 with VPMOVZXWD and VPSLLD, and takes 1.20× with this; on AVX-512 the two
// already take 1.00×.
func bf16Widener(isa ISA) func(m Mem, x reg.VecVirtual) {
	if isa.Lanes == 16 {
		return func(m Mem, x reg.VecVirtual) {
			VPMOVZXWD(m, x)
			VPSLLD(U8(16), x, x)
		}
	}
	if bf16Spread == nil {
		// Dword i takes half i: bytes 2i and 2i+1 of its lane's copy (VPSHUFB indexes
		// within the lane), above two zeros (index bit 7 set).
		m := GLOBL("bf16spread", RODATA|NOPTR)
		for i := 0; i < 8; i++ {
			DATA(4*i, U32(0x8080|(2*i)<<16|(2*i+1)<<24))
		}
		bf16Spread = &m
	}
	mask := YMM()
	VMOVDQU(*bf16Spread, mask)
	return func(m Mem, x reg.VecVirtual) {
		VBROADCASTI128(m, x)
		VPSHUFB(mask, x, x)
	}
}

const (
	blockLen  = 32 // values per q8_0 block
	blockSize = 34 // bytes per q8_0 block: the half scale, then 32 int8 quants
)

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

// lineUnits is the most vectors of a pass of WeightedSumRowsAdd over rows stride apart
// (not packed, not a table's): the most that are whole 64-byte lines of a row, where
// maxUnits would end a pass inside a line (fp16 and bfloat16 on AVX2: six vectors, 96
// bytes). Such rows do not stay in L1 from one pass to the next (token-major rows a
// power of two apart fall into a few of its sets), so each pass fetches its lines
// again, and a line two passes share twice. Packed rows stay in L1, and there the
// fewer passes of maxUnits are faster (docs/performance.md).
func (f frame) lineUnits(maxUnits int) int {
	if !f.add || f.table || f.fm.unit != 0 {
		return maxUnits
	}
	perLine := 64 / (f.isa.Lanes * f.fm.size) // 1 to 4: a vector is 16 to 64 bytes
	if maxUnits%perLine == 0 {
		return maxUnits
	}
	return maxUnits - maxUnits%perLine
}

// frame is what a pass needs: the block of rows and the pass's columns.
type frame struct {
	isa     ISA
	fm      format
	rows    int           // weight rows, each adding its sums into its own row of dst
	add     bool          // add to dst's values instead of zeroing it first
	table   bool          // v holds row addresses: block is &v[n], and stride is unused
	dimSize Mem           // a local holding dim·4, the bytes between rows of dst (rows > 1)
	dst     reg.GPVirtual // &dst[0]
	wEnd    reg.GPVirtual // &w[n]
	stride  reg.GPVirtual // bytes from one row of v to the next
	block   reg.GPVirtual // &v[j0*stride], the block's first row
	j0, j1  reg.GPVirtual // the block's rows as indexes from the end of w: j0−n … j1−n
	col     reg.GPVirtual // first column of the pass
	lastCol reg.GPVirtual // column of the pass's last vector (q8_0: block)
	// WeightedSumRowsAdd's rows to prefetch, where prefetch is set (its first group of
	// rows): aheadFrom holds the bytes from v to them (a table kernel: &ahead[n]; 0:
	// none), aheadRows their length. Row j of ahead is prefetched as the group takes
	// row j of v, in each of its passes (one at the usual dims).
	aheadFrom Mem
	aheadRows RowPrefetch
	prefetch  bool
}

func weighted(isa ISA, fm format) {
	name := "WeightedSumRows" + fm.name + isa.Suffix
	TEXT(name, NOSPLIT, "func(dst []float32, w []float32, v "+fm.vType+", stride int)")
	Pragma("noescape")
	if fm.unit == 0 {
		Doc(name+" sets dst[d] = Σⱼ w[j]·"+fm.value+", one fused multiply-add per term in",
			"order of j, for len(dst) ≥ 1 and stride ≥ len(dst): row j is v[j*stride:][:len(dst)].")
	} else {
		Doc(name+" sets dst[d] = Σⱼ w[j]·"+fm.value+", one fused multiply-add per term in",
			"order of j, for len(dst) a multiple of 32 and stride ≥ len(dst)/32: row j is the",
			"q8_0 blocks v[34*j*stride:][:34*len(dst)/32], and q8(v, i) is the value of quant i.")
	}
	f := frame{isa: isa, fm: fm, rows: 1}
	f.dst = load(Param("dst").Base())
	dim := load(Param("dst").Len())
	f.wEnd = load(Param("w").Base())
	f.j0 = load(Param("w").Len())
	LEAQ(Mem{Base: f.wEnd, Index: f.j0, Scale: 4}, f.wEnd)
	NEGQ(f.j0)
	f.block = load(Param("v").Base())
	f.stride = load(Param("stride"))
	fm.stride(f.stride)
	done := label("done", isa)
	f.sums(dim, "height"+name, done)
	Label(done)
	VZEROUPPER()
	RET()
}

// sums emits the passes over the blocks of rows that add f.rows weighted sums into
// dst (after zeroing it, unless f.add), then jumps to done.
func (f frame) sums(dim reg.GPVirtual, heightLabel, done string) {
	isa, fm := f.isa, f.fm
	// unit is the columns the passes are cut into: one vector's, or a q8_0 block's.
	unit := fm.unit
	if unit == 0 {
		unit = isa.Lanes
	}
	unitLog := uint64(bits.TrailingZeros(uint(unit)))
	maxUnits := accumulators(isa, fm, f.rows) * isa.Lanes / unit

	narrow := label("narrow", isa)
	if fm.unit == 0 {
		CMPQ(dim, U8(isa.Lanes))
		JB(LabelRef(narrow))
		Comment("vectors = ⌈dim/Lanes⌉ in passes = ⌈vectors/maxVectors⌉ of per = ⌈vectors/passes⌉.")
	} else {
		Commentf("vectors = dim/32 blocks in passes = ⌈vectors/%d⌉ of per = ⌈vectors/passes⌉.", maxUnits)
	}
	vectors, passes, per, t := GP64(), GP64(), GP64(), GP64()
	LEAQ(Mem{Base: dim, Disp: unit - 1}, vectors)
	SHRQ(U8(unitLog), vectors)
	XORQ(passes, passes)
	var limit Op = U8(maxUnits)
	if lines := f.lineUnits(maxUnits); lines < maxUnits {
		Commentf("Rows stride apart take passes of %d vectors, whole lines of each row.", lines)
		l, rowBytes := GP64(), GP64()
		MOVQ(U32(maxUnits), l)
		MOVQ(dim, rowBytes)
		fm.stride(rowBytes)
		CMPQ(f.stride, rowBytes)
		MOVQ(U32(lines), t)
		CMOVQNE(t, l)
		limit = l
	}
	MOVQ(vectors, t)
	top := label("passes", isa)
	Label(top)
	INCQ(passes)
	SUBQ(limit, t)
	JG(LabelRef(top))
	XORQ(per, per)
	XORQ(t, t)
	top = label("per", isa)
	Label(top)
	INCQ(per)
	ADDQ(passes, t)
	CMPQ(t, vectors)
	JB(LabelRef(top))
	SHLQ(U8(unitLog), per) // now in columns

	Comment("One pass takes all rows as one block; several take blocks of blockRows.")
	height := AllocLocal(8)
	MOVQ(f.j0, t)
	NEGQ(t)
	CMPQ(passes, U8(1))
	JE(LabelRef(heightLabel))
	MOVQ(U32(blockRows), t)
	Label(heightLabel)
	MOVQ(t, height)

	if !f.add {
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
	}

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

	if fm.unit == 0 {
		Comment("Each pass takes min(per, dim−col) columns, one vector fewer if that would leave")
		Comment("the next pass less than one; k = ⌈columns/Lanes⌉ vectors.")
	} else {
		Comment("Each pass takes min(per, dim−col) columns, k = columns/32 blocks.")
	}
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
	if fm.unit == 0 {
		MOVQ(dim, rest)
		SUBQ(f.col, rest)
		SUBQ(cols, rest)
		DECQ(rest) // rest−1 < Lanes−1 unsigned: 0 < rest < Lanes
		LEAQ(Mem{Base: cols, Disp: -isa.Lanes}, k)
		CMPQ(rest, U8(isa.Lanes-1))
		CMOVQCS(k, cols)
	}
	LEAQ(Mem{Base: cols, Disp: unit - 1}, k)
	SHRQ(U8(unitLog), k)
	LEAQ(Mem{Base: f.col, Index: cols, Scale: 1, Disp: -unit}, f.lastCol)
	entries := make([]string, maxUnits+1)
	for kk := 1; kk < len(entries); kk++ {
		entries[kk] = label(fmt.Sprintf("k%d_", kk), isa)
		CMPQ(k, U8(kk))
		JE(LabelRef(entries[kk]))
	}
	for kk := 1; kk < len(entries); kk++ {
		Label(entries[kk])
		if fm.unit == 0 {
			f.pass(kk)
		} else {
			f.passQ8(kk)
		}
		JMP(LabelRef(passNext))
	}
	Label(passNext)
	LEAQ(Mem{Base: f.lastCol, Disp: unit}, f.col)
	JMP(LabelRef(passTop))

	Label(blockNext)
	if !f.table {
		MOVQ(f.j1, t)
		SUBQ(f.j0, t)
		IMULQ(f.stride, t)
		ADDQ(t, f.block)
	}
	MOVQ(f.j1, f.j0)
	JMP(LabelRef(blockTop))

	if fm.unit == 0 {
		Label(narrow)
		zeroJ := GP64()
		XORQ(zeroJ, zeroJ)
		f.j1 = zeroJ
		for i := range f.rows {
			g := f.row(i)
			if isa.Lanes == 16 {
				g.maskedVector(dim)
			} else {
				g.scalarColumns(dim)
			}
		}
		if f.add {
			JMP(LabelRef(done))
		}
	}
}

func load(c gotypes.Component) reg.GPVirtual {
	r := GP64()
	Load(c, r)
	return r
}

// rowsOfV runs body once per row j of the block, with row pointing at v[j*stride] (a
// table kernel: at the address v[j]) and weight at w[j].
func (f frame) rowsOfV(body func(row reg.GPVirtual, weight Mem)) {
	row, j := GP64(), GP64()
	if !f.table {
		MOVQ(f.block, row)
	}
	MOVQ(f.j0, j)
	top, done := label("row", f.isa), label("rowdone", f.isa)
	CMPQ(j, f.j1)
	JGE(LabelRef(done))
	Label(top)
	if f.table {
		MOVQ(Mem{Base: f.block, Index: j, Scale: 8}, row)
	}
	if f.prefetch {
		skip := label("aheaddone", f.isa)
		if f.col != nil { // the first pass prefetches; the others would repeat it
			TESTQ(f.col, f.col)
			JNZ(LabelRef(skip))
		}
		p := GP64()
		MOVQ(f.aheadFrom, p)
		TESTQ(p, p)
		JZ(LabelRef(skip))
		if f.table {
			MOVQ(Mem{Base: p, Index: j, Scale: 8}, p)
		} else {
			ADDQ(row, p)
		}
		f.aheadRows.Rows(p, 1, nil)
		Label(skip)
	}
	body(row, Mem{Base: f.wEnd, Index: j, Scale: 4})
	if !f.table {
		ADDQ(f.stride, row)
	}
	INCQ(j)
	CMPQ(j, f.j1)
	JL(LabelRef(top))
	Label(done)
}

// pass adds the block's rows to k vectors of columns of each of f.rows rows of dst, at
// col, col+Lanes, …, and the last at lastCol, held in registers. Lanes where the last
// vector overlaps the one before hold the same sums in both. Each row of v is widened
// once for all rows of dst.
func (f frame) pass(k int) {
	isa := f.isa
	if f.rows == 1 {
		Commentf("Pass of %d vectors.", k)
	} else {
		Commentf("Pass of %d vectors for each of %d rows.", k, f.rows)
	}
	at := func(base reg.GPVirtual, size, u int) Mem {
		if u == k-1 {
			return Mem{Base: base, Index: f.lastCol, Scale: uint8(size)}
		}
		return Mem{Base: base, Index: f.col, Scale: uint8(size), Disp: u * isa.Lanes * size}
	}
	acc := f.accumulators(k, func(dst reg.GPVirtual, u int) Mem { return at(dst, 4, u) })
	widen := f.fm.widener(isa)
	f.rowsOfV(func(row reg.GPVirtual, weight Mem) {
		b := f.broadcasts(weight)
		for u := range k {
			x := isa.Vec()
			widen(at(row, f.fm.size, u), x)
			for i := range f.rows {
				VFMADD231PS(x, b[i], acc[i][u])
			}
		}
	})
	f.store(acc, func(dst reg.GPVirtual, u int) Mem { return at(dst, 4, u) })
}

// accumulators loads k vectors of each of f.rows rows of dst, at(dst row, u).
func (f frame) accumulators(k int, at func(dst reg.GPVirtual, u int) Mem) [][]reg.VecVirtual {
	acc := make([][]reg.VecVirtual, f.rows)
	f.dstRows(func(i int, dst reg.GPVirtual) {
		acc[i] = make([]reg.VecVirtual, k)
		for u := range acc[i] {
			acc[i][u] = f.isa.Vec()
			VMOVUPS(at(dst, u), acc[i][u])
		}
	})
	return acc
}

// store stores the accumulators back to dst.
func (f frame) store(acc [][]reg.VecVirtual, at func(dst reg.GPVirtual, u int) Mem) {
	f.dstRows(func(i int, dst reg.GPVirtual) {
		for u := range acc[i] {
			VMOVUPS(acc[i][u], at(dst, u))
		}
	})
}

// dstRows calls body with each row of dst's address: f.dst, then dim·4 bytes on.
func (f frame) dstRows(body func(i int, dst reg.GPVirtual)) {
	if f.rows == 1 {
		body(0, f.dst)
		return
	}
	dst := GP64()
	MOVQ(f.dst, dst)
	for i := range f.rows {
		if i > 0 {
			ADDQ(f.dimSize, dst)
		}
		body(i, dst)
	}
}

// broadcasts broadcasts each row's weight for the row of v at weight (row 0's).
func (f frame) broadcasts(weight Mem) []reg.VecVirtual {
	b := make([]reg.VecVirtual, f.rows)
	for i := range b {
		b[i] = f.isa.Vec()
		VBROADCASTSS(weight.Offset(i*attendPitch*4), b[i])
	}
	return b
}

// passQ8 adds the block's rows to k q8_0 blocks of columns of dst, at col, col+32, …,
// held in registers. Per row and block, d is widened once and broadcast; each vector
// of quants is sign-extended, converted and multiplied by d, exactly. d is widened with
// the three halves after it (8 bytes, inside the block): VCVTPH2PS from memory, then
// VBROADCASTSS, took 3–4 % less time than VPBROADCASTW and a VCVTPH2PS of the whole
// vector. Widening d costs a fifth of the time on AVX-512 (1.63 of fp16's time, and
// 1.31 with d's widening left out), but each d is widened once already.
func (f frame) passQ8(k int) {
	isa := f.isa
	if f.rows == 1 {
		Commentf("Pass of %d q8_0 blocks.", k)
	} else {
		Commentf("Pass of %d q8_0 blocks for each of %d rows.", k, f.rows)
	}
	per := blockLen / isa.Lanes
	at := func(dst reg.GPVirtual, u int) Mem {
		return Mem{Base: dst, Index: f.col, Scale: 4, Disp: u * isa.Bytes()}
	}
	acc := f.accumulators(k*per, at)
	Comment("off = col/32·34, the pass's first block in a row.")
	off := GP64()
	MOVQ(f.col, off)
	SHRQ(U8(4), off)
	ADDQ(f.col, off)
	f.rowsOfV(func(row reg.GPVirtual, weight Mem) {
		b := f.broadcasts(weight)
		for i := 0; i < k; i++ {
			block := Mem{Base: row, Index: off, Scale: 1, Disp: i * blockSize}
			d := isa.Vec()
			VCVTPH2PS(block, d.AsX())
			VBROADCASTSS(d.AsX(), d)
			for u := 0; u < per; u++ {
				x := isa.Vec()
				VPMOVSXBD(block.Offset(2+u*isa.Lanes), x)
				VCVTDQ2PS(x, x)
				VMULPS(d, x, x)
				for r := range f.rows {
					VFMADD231PS(x, b[r], acc[r][i*per+u])
				}
			}
		}
	})
	f.store(acc, at)
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
	if f.add {
		VMOVUPS_Z(Mem{Base: f.dst}, mask, acc)
	} else {
		VXORPS(acc, acc, acc)
	}
	f.rowsOfV(func(row reg.GPVirtual, weight Mem) {
		b, h, x := f.isa.Vec(), YMM(), f.isa.Vec()
		VBROADCASTSS(weight, b)
		if f.fm.widenMasked == nil { // float32: the values themselves
			VMOVUPS_Z(Mem{Base: row}, mask, x)
		} else {
			VMOVDQU16_Z(Mem{Base: row}, mask, h)
			f.fm.widenMasked(h, x)
		}
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
	if f.add {
		VMOVSS(Mem{Base: f.dst, Index: c, Scale: 4}, acc)
	} else {
		VXORPS(acc, acc, acc)
	}
	f.rowsOfV(func(row reg.GPVirtual, weight Mem) {
		x := XMM()
		f.fm.widenScalar(Mem{Base: row, Index: c, Scale: uint8(f.fm.size)}, x)
		VFMADD231SS(weight, x, acc)
	})
	VMOVSS(acc, Mem{Base: f.dst, Index: c, Scale: 4})
	INCQ(c)
	JMP(LabelRef(top))
	Label(done)
}
