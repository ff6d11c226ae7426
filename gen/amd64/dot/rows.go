package main

import (
	"fmt"
	"math/bits"

	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The row kernel holds query rows in registers: a tile is tileRows query rows against
// tileKeys(isa) keys, tileRows·tileKeys vector accumulators of lanewise partial sums
// plus tileKeys widened key vectors and one query vector: all 16 of the AVX2 registers
// (4 × 3), 21 of AVX-512's 32 (4 × 4). Each key vector is widened once per tile and
// used tileRows times; each query vector is loaded once and used tileKeys times, so an
// AVX2 tile issues 7 loads per 12 FMAs and an AVX-512 tile 8 per 16, and ends in one
// horizontal sum per score. It serves blocks of a few queries, which would leave most
// lanes of a panel (panels.go) empty, and dims too large for panels; decode attention
// (kernels.Attend) scores a KV head's G query heads with it.
const tileRows = 4

// tileKeys is the keys of a whole tile. AVX-512's 4 × 4 tile reduces its 16
// accumulators into one vector of 16 sums (reduceTile), where the 4 × 3 tile's
// reduction (reduceLanes, after folding each ZMM onto a YMM) cost about as much as its
// FMAs: 4 query rows scored 1,024 fp16 keys of dim 128 (in L2) in 10.4 ns a key with
// 4 × 3 tiles and in 6.6 with 4 × 4 (Zen 5), against 4.6 for the FMAs alone.
func tileKeys(isa ISA) int {
	if isa.Lanes == 16 {
		return 4
	}
	return 3
}

// rowsFrame is the state of the loops around the tiles. It lives in the stack frame
// so that the tiles, where all the time goes, have every register to themselves.
type rowsFrame struct {
	isa       ISA
	keys      Mem         // next key row
	keysLeft  Mem         // keys not yet scored
	dstCol    Mem         // dst[j0]: column of the current key tile in row 0
	queries   Mem         // first query row of the current tile
	dstTile   Mem         // dst[i0*n+j0]
	rowsLeft  Mem         // query rows not yet scored against the current key tile
	qStride   Mem         // dim·4
	kStride   Mem         // stride·2 (q8_0: stride·34)
	dstStride Mem         // n·4
	ahead     Mem         // row of ahead beside the next key, or 0
	prefetch  RowPrefetch // a key's (and a row of ahead's) lines

	key operand // the keys' format
	// table: k and ahead are tables of row addresses, one per key (the paged
	// attention's rows, which lie in pages anywhere), rather than rows stride apart.
	table bool
	// AVX2's largest q8_0 tile: each key's block scale as a float32, broadcast from
	// here at each use (the tile has no register left to keep them in).
	scales []Mem
}

// scoresRows writes ScoresRows{AVX2,AVX512}: for each tile of tileKeys(isa) keys, for each
// group of tileRows queries (then 2, then 1), one tile; then single keys the same way.
// The key tile stays in L1 across all query groups, and the queries (rows·dim·4 bytes)
// stay in L1 or L2 across all key tiles, so K streams through once. The keys are
// halves, bfloat16s or q8_0 blocks (key); every format gives the same operations on
// the widened values, in the same order.
//
// With table set it writes Scores{,BF16,Q8,F32}RowsTable{AVX2,AVX512}, which read key j
// (and row j of ahead) at the address k[j] (ahead[j]): the same tiles, the same
// operations in the same order, so a score has the same bits as from the stride form.
func scoresRows(isa ISA, key operand, table bool) {
	name := "Scores" + key.format() + "Rows" + isa.Suffix
	rowsType, strideParam := "[]"+key.goTyp, " stride int,"
	if table {
		name = "Scores" + key.format() + "RowsTable" + isa.Suffix
		rowsType, strideParam = "[]uintptr", ""
	}
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst []float32, q []float32, k %s, ahead %s, rows int, n int, dim int,%s scale float32)", rowsType, rowsType, strideParam))
	Pragma("noescape")
	// One Doc call: each replaces the one before.
	var doc []string
	switch {
	case table && key.kind == kindQ8:
		doc = []string{name + " sets dst[i*n+j] = scale·(q[i*dim:][:dim] · key j) for rows ≥ 1 query rows,",
			"n ≥ 1 keys and dim ≥ 32 a multiple of 32, key j being the dim/32 q8_0 blocks at the",
			"address k[j]."}
	case table:
		doc = []string{name + " sets dst[i*n+j] = scale·(q[i*dim:][:dim] · key j) for rows ≥ 1 query rows,",
			"n ≥ 1 keys and dim ≥ 1, key j being the dim " + key.goTyp + "s at the address k[j]."}
	case key.kind == kindQ8:
		doc = []string{name + " sets dst[i*n+j] = scale·(q[i*dim:][:dim] · key j) for rows ≥ 1 query rows,",
			"n ≥ 1 keys and dim ≥ 32 a multiple of 32, key j being the dim/32 q8_0 blocks",
			"k[34*j*stride:], stride ≥ dim/32 counted in blocks."}
	default:
		doc = []string{name + " sets dst[i*n+j] = scale·(q[i*dim:][:dim] · k[j*stride:][:dim]) for rows ≥ 1",
			"query rows, n ≥ 1 keys, dim ≥ 1 and stride ≥ dim."}
	}
	if table {
		doc = append(doc, "Where ahead is not empty (n entries), it prefetches the row of a key's length at",
			"ahead[j] as it scores key j: the decode attention's values, which it reads next.",
			"The rows must stay reachable from Go pointers for the call: k holds bare addresses.")
	} else {
		doc = append(doc, "Where ahead is not empty, it prefetches row j of ahead (ahead[j*stride:], as key j",
			"lies in k) as it scores key j: the decode attention's values, which it reads next.")
	}
	Doc(doc...)
	f := rowsFrame{isa: isa, key: key, table: table}
	for _, m := range []*Mem{&f.keys, &f.keysLeft, &f.dstCol, &f.queries, &f.dstTile, &f.rowsLeft, &f.qStride, &f.kStride, &f.dstStride, &f.ahead} {
		*m = AllocLocal(8)
	}
	if key.kind == kindQ8 && isa.Lanes == 8 {
		for range tileKeys(isa) {
			f.scales = append(f.scales, AllocLocal(8)) // 4 used: frames come in words
		}
	}
	t := Load(Param("k").Base(), GP64())
	MOVQ(t, f.keys)
	t = Load(Param("n"), GP64())
	MOVQ(t, f.keysLeft)
	SHLQ(U8(2), t)
	MOVQ(t, f.dstStride)
	t = Load(Param("dst").Base(), GP64())
	MOVQ(t, f.dstCol)
	if table {
		MOVQ(U32(8), f.kStride) // a table entry
	} else {
		t = Load(Param("stride"), GP64())
		keyStride(key, t)
		MOVQ(t, f.kStride)
	}
	t = Load(Param("dim"), GP64())
	f.prefetch = NewRowPrefetch(key.lastOffset(t))
	SHLQ(U8(2), t)
	MOVQ(t, f.qStride)
	t = Load(Param("ahead").Base(), GP64())
	MOVQ(t, f.ahead)

	for _, keys := range []int{tileKeys(isa), 1} {
		top, done := label("keys", isa), label("keysdone", isa)
		Label(top)
		CMPQ(f.keysLeft, U8(keys))
		JB(LabelRef(done))
		f.prefetchAhead(keys)
		f.queryPass(keys)
		t := GP64()
		MOVQ(f.kStride, t)
		IMUL3Q(U8(keys), t, t)
		ADDQ(t, f.keys)
		ADDQ(U8(4*keys), f.dstCol)
		SUBQ(U8(keys), f.keysLeft)
		JMP(LabelRef(top))
		Label(done)
	}
	VZEROUPPER()
	RET()
}

// prefetchAhead prefetches the keys prefetchKeys(0) on from the next keys keys, and the
// rows of ahead beside those next keys if ahead is not nil, and moves ahead on past
// them. The tile's loads take its keys a vector of each in turn, which the hardware
// prefetchers do not follow: 4 query rows scored fp16 keys of dim 128 streaming from
// memory at 22 ns a key without the prefetch of their own, 11–12 with it, 6.6 from L2
// (Zen 5).
func (f rowsFrame) prefetchAhead(keys int) {
	own, skip := label("owndone", f.isa), label("aheaddone", f.isa)
	p := GP64()
	CMPQ(f.keysLeft, U8(keys+prefetchKeys(0)))
	JB(LabelRef(own))
	MOVQ(f.kStride, p)
	IMUL3Q(U8(prefetchKeys(0)), p, p)
	ADDQ(f.keys, p)
	f.prefetchRows(p, keys)
	Label(own)
	MOVQ(f.ahead, p)
	TESTQ(p, p)
	JZ(LabelRef(skip))
	f.prefetchRows(p, keys)
	ADDQ(f.kStride, p)
	MOVQ(p, f.ahead)
	Label(skip)
}

// prefetchRows prefetches count rows from p on, kStride apart, leaving p at the last;
// in a table kernel p is the first row's entry, and it is left at the last's.
func (f rowsFrame) prefetchRows(p reg.GPVirtual, count int) {
	if f.table {
		f.prefetch.TableRows(p, count)
		return
	}
	f.prefetch.Rows(p, count, f.kStride)
}

// keyPointers returns the addresses of a tile's keys from k on: rows kStride apart, or
// the rows a table's entries give.
func (f rowsFrame) keyPointers(k reg.GPVirtual, keys int) []reg.GPVirtual {
	if !f.table {
		return rowPointers(k, f.kStride, keys)
	}
	p := make([]reg.GPVirtual, keys)
	for j := keys - 1; j >= 0; j-- { // k last: it becomes the first key's address
		p[j] = k
		if j > 0 {
			p[j] = GP64()
		}
		MOVQ(Mem{Base: k, Disp: 8 * j}, p[j])
	}
	return p
}

// queryPass scores every query row against the current tile of keys.
func (f rowsFrame) queryPass(keys int) {
	t := Load(Param("q").Base(), GP64())
	MOVQ(t, f.queries)
	MOVQ(f.dstCol, t)
	MOVQ(t, f.dstTile)
	t = Load(Param("rows"), GP64())
	MOVQ(t, f.rowsLeft)
	rows := tileRows
	for rows >= 1 {
		top, done := label("rows", f.isa), label("rowsdone", f.isa)
		Label(top)
		CMPQ(f.rowsLeft, U8(rows))
		JB(LabelRef(done))
		f.tile(rows, keys)
		for _, m := range []struct{ stride, ptr Mem }{{f.qStride, f.queries}, {f.dstStride, f.dstTile}} {
			t := GP64()
			MOVQ(m.stride, t)
			IMUL3Q(U8(rows), t, t)
			ADDQ(t, m.ptr)
		}
		SUBQ(U8(rows), f.rowsLeft)
		if rows == tileRows {
			JMP(LabelRef(top)) // fewer than tileRows rows remain after this loop, so
		} // each smaller size runs at most once.
		Label(done)
		rows /= 2
	}
}

// tile computes rows×keys dot products: accumulators acc[r][j] hold lanewise partial
// sums of query r times key j, reduced and scaled at the end.
func (f rowsFrame) tile(rows, keys int) {
	isa := f.isa
	Commentf("Tile of %d query rows × %d keys.", rows, keys)
	q, k := GP64(), GP64()
	MOVQ(f.queries, q)
	MOVQ(f.keys, k)
	acc := make([][]reg.VecVirtual, rows)
	for r := range acc {
		acc[r] = make([]reg.VecVirtual, keys)
		for j := range acc[r] {
			acc[r][j] = isa.Vec()
			VXORPS(acc[r][j], acc[r][j], acc[r][j])
		}
	}
	if f.key.kind == kindQ8 {
		f.accumulateQ8(q, k, acc)
	} else {
		f.accumulate(q, k, acc)
	}
	f.store(acc)
}

// accumulate runs the tile's dot products: first the dim mod Lanes tail elements one
// at a time in the low lanes (scalar VEX operations zero the upper lanes, which are
// still zero here), then whole vectors.
func (f rowsFrame) accumulate(q, k reg.GPVirtual, acc [][]reg.VecVirtual) {
	isa := f.isa
	rows, keys := len(acc), len(acc[0])
	qRows, kRows := rowPointers(q, f.qStride, rows), f.keyPointers(k, keys)
	dim := Load(Param("dim"), GP64())
	body := GP64()
	MOVQ(dim, body)
	ANDQ(I32(-isa.Lanes), body)

	Comment("Tail elements [body, dim), one at a time.")
	i := GP64()
	MOVQ(body, i)
	top, done := label("tail", isa), label("taildone", isa)
	Label(top)
	CMPQ(i, dim)
	JAE(LabelRef(done))
	kx := make([]reg.VecVirtual, keys)
	for j := range kx {
		kx[j] = f.key.scalar(Mem{Base: kRows[j], Index: i, Scale: uint8(f.key.size)})
	}
	for r := range rows {
		qx := operandF32.scalar(Mem{Base: qRows[r], Index: i, Scale: 4})
		for j := range keys {
			VFMADD231SS(kx[j], qx, acc[r][j].AsX())
		}
	}
	INCQ(i)
	JMP(LabelRef(top))
	Label(done)

	Comment("Whole vectors [0, body).")
	XORQ(i, i)
	top, done = label("body", isa), label("bodydone", isa)
	Label(top)
	CMPQ(i, body)
	JAE(LabelRef(done))
	kv := make([]reg.VecVirtual, keys)
	for j := range kv {
		kv[j] = f.key.vector(isa, Mem{Base: kRows[j], Index: i, Scale: uint8(f.key.size)})
	}
	for r := range rows {
		qv := operandF32.vector(isa, Mem{Base: qRows[r], Index: i, Scale: 4})
		for j := range keys {
			VFMADD231PS(kv[j], qv, acc[r][j])
		}
	}
	ADDQ(U8(isa.Lanes), i)
	JMP(LabelRef(top))
	Label(done)
}

// accumulateQ8 is accumulate for q8_0 keys, whose dim is a multiple of 32 and so has
// no tail: one block per iteration, its scales widened once per key, then its vectors
// in order, so that every accumulator takes the same FMAs in the same order as in
// accumulate. The scales are kept in registers, except in AVX2's largest tile, which
// takes all 16 registers: there each is kept in the frame as one float32 and broadcast
// by VBROADCASTSS, a load without a shuffle, into a register of its own right before
// its VMULPS (the tile's 12 accumulators and 3 keys leave one). Kept as whole vectors,
// a memory operand of the VMULPS, they cost the 1-row tile 2.25× fp16's time against
// 1.4× in registers (Zen 5, shared machine).
func (f rowsFrame) accumulateQ8(q, k reg.GPVirtual, acc [][]reg.VecVirtual) {
	isa := f.isa
	rows, keys := len(acc), len(acc[0])
	qRows, kRows := rowPointers(q, f.qStride, rows), f.keyPointers(k, keys)
	dim := Load(Param("dim"), GP64())

	Comment("Whole blocks [0, dim).")
	i, block := GP64(), GP64() // the block's first element, and its offset in a key
	XORQ(i, i)
	XORQ(block, block)
	top, done := label("blocks", isa), label("blocksdone", isa)
	Label(top)
	CMPQ(i, dim)
	JAE(LabelRef(done))
	d := make([]Op, keys)
	// The scales stay in registers where the tile leaves enough for them: every tile
	// but AVX2's largest (the accumulators, keys, scales and a query vector).
	inFrame := rows*keys+2*keys+1 > 16 && isa.Lanes == 8
	for j := range d {
		if inFrame {
			x := operandF16.scalar(Mem{Base: kRows[j], Index: block, Scale: 1})
			VMOVSS(x, f.scales[j])
		} else {
			d[j] = q8Scale(isa, Mem{Base: kRows[j], Index: block, Scale: 1})
		}
	}
	kv := make([]reg.VecVirtual, keys)
	for v := range blockLen / isa.Lanes {
		for j := range kv {
			quants := Mem{Base: kRows[j], Index: block, Scale: 1, Disp: 2 + v*isa.Lanes}
			if inFrame {
				s := isa.Vec()
				VBROADCASTSS(f.scales[j], s)
				kv[j] = q8Vector(isa, quants, s)
			} else {
				kv[j] = q8Vector(isa, quants, d[j])
			}
		}
		for r := range rows {
			qv := operandF32.vector(isa, Mem{Base: qRows[r], Index: i, Scale: 4, Disp: v * isa.Bytes()})
			for j := range keys {
				VFMADD231PS(kv[j], qv, acc[r][j])
			}
		}
	}
	ADDQ(U8(blockLen), i)
	ADDQ(U8(blockBytes), block)
	JMP(LabelRef(top))
	Label(done)
}

// keyStride turns a stride t in elements (q8_0: blocks) into bytes.
func keyStride(key operand, t reg.Register) {
	if key.kind == kindQ8 {
		IMUL3Q(U8(key.strideBytes()), t, t)
	} else {
		SHLQ(U8(bits.TrailingZeros(uint(key.size))), t)
	}
}

// rowPointers returns count pointers base, base+stride, base+2·stride, ...
func rowPointers(base reg.GPVirtual, stride Mem, count int) []reg.GPVirtual {
	p := []reg.GPVirtual{base}
	if count == 1 {
		return p
	}
	s := GP64()
	MOVQ(stride, s)
	for len(p) < count {
		next := GP64()
		LEAQ(Mem{Base: p[len(p)-1], Index: s, Scale: 1}, next)
		p = append(p, next)
	}
	return p
}

// store reduces every accumulator to its sum, scales, and writes dst[r*n + j] of the
// tile: sums come out eight at a time in one YMM register, in row-major order, or
// for AVX-512's whole tile all sixteen in one ZMM register, a row per 128-bit lane.
func (f rowsFrame) store(acc [][]reg.VecVirtual) {
	isa := f.isa
	rows, keys := len(acc), len(acc[0])
	if isa.Lanes == 16 && rows == 4 && keys == 4 {
		sums := reduceTile(acc)
		scale := ZMM()
		VBROADCASTSS(ParamAddr("scale"), scale)
		VMULPS(scale, sums, sums)
		dst := GP64()
		MOVQ(f.dstTile, dst)
		rowPtr := rowPointers(dst, f.dstStride, rows)
		VMOVUPS(sums.AsX(), Mem{Base: rowPtr[0]})
		for r := 1; r < rows; r++ {
			VEXTRACTF32X4(U8(r), sums, Mem{Base: rowPtr[r]})
		}
		return
	}
	var flat []reg.VecVirtual
	for _, row := range acc {
		for _, a := range row {
			flat = append(flat, toYMM(isa, a))
		}
	}
	scale := YMM()
	VBROADCASTSS(ParamAddr("scale"), scale)
	dst := GP64()
	MOVQ(f.dstTile, dst)
	rowPtr := rowPointers(dst, f.dstStride, rows)
	for first := 0; first < len(flat); first += 8 {
		group := flat[first:min(first+8, len(flat))]
		sums := reduceLanes(group)
		if sums.Size() == 16 {
			VMULPS(scale.AsX(), sums, sums)
		} else {
			VMULPS(scale, sums, sums)
		}
		var hi reg.VecVirtual
		for e := range group {
			at := first + e
			m := Mem{Base: rowPtr[at/keys], Disp: 4 * (at % keys)}
			x := sums.AsX()
			if e >= 4 {
				if hi == nil {
					hi = XMM()
					VEXTRACTF128(U8(1), sums, hi)
				}
				x = hi
			}
			if e%4 == 0 {
				VMOVSS(x, m)
			} else {
				VEXTRACTPS(U8(e%4), x, m)
			}
		}
	}
}

// reduceTile returns the sums of the 4 × 4 tile's ZMM accumulators in one ZMM
// register, row r's four keys in its 128-bit lane r, each added in reduceLanes'
// order after toYMM's fold, so that a score has the same bits in every tile: lanes i
// and i+8, then neighbours, then pairs of them, then the two halves of the YMM. Each
// round halves the registers by adding two shuffles of a pair: 45 instructions,
// where folding each accumulator and reducing them eight at a time takes 50.
func reduceTile(acc [][]reg.VecVirtual) reg.VecVirtual {
	// pair adds the shuffles lo and hi (imm) of a and b.
	pair := func(shuffle func(imm, b, a, d Op), lo, hi uint8, a, b reg.VecVirtual) reg.VecVirtual {
		l, h := ZMM(), ZMM()
		shuffle(U8(lo), b, a, l)
		shuffle(U8(hi), b, a, h)
		VADDPS(h, l, l)
		return l
	}
	shuff64 := func(imm, b, a, d Op) { VSHUFF64X2(imm, b, a, d) }
	shufps := func(imm, b, a, d Op) { VSHUFPS(imm, b, a, d) }
	shuff32 := func(imm, b, a, d Op) { VSHUFF32X4(imm, b, a, d) }
	// Lanes i and i+8 of rows 0 and 1 (then 2 and 3) of key j: s[j] holds row 0's
	// eight partial sums in its low half, row 1's in its high half.
	var s []reg.VecVirtual
	for _, r := range []int{0, 2} {
		for j := range 4 {
			s = append(s, pair(shuff64, 0x44, 0xee, acc[r][j], acc[r+1][j]))
		}
	}
	// Neighbours, within each 128-bit lane: [a0+a1, a2+a3, b0+b1, b2+b3].
	var v []reg.VecVirtual
	for i := 0; i < len(s); i += 2 {
		v = append(v, pair(shufps, 0x88, 0xdd, s[i], s[i+1]))
	}
	// Pairs of neighbours: lane l of w[0] holds the four lane-l sums of s[0..3].
	w := []reg.VecVirtual{pair(shufps, 0x88, 0xdd, v[0], v[1]), pair(shufps, 0x88, 0xdd, v[2], v[3])}
	// The halves: lanes 0+1 and 2+3 of each, rows 0 and 1 from w[0], 2 and 3 from w[1].
	return pair(shuff32, 0x88, 0xdd, w[0], w[1])
}

// reduceLanes returns a register (XMM for up to four inputs, else YMM) whose lane i is the sum of the lanes of vs[i],
// for up to eight YMM registers: two rounds of VHADDPS leave each 128-bit half holding
// four partial sums, and the halves are then added crosswise. Missing inputs are
// stood in for by the last one; their lanes are not used.
func reduceLanes(vs []reg.VecVirtual) reg.VecVirtual {
	in := make([]reg.VecVirtual, 8)
	for i := range in {
		in[i] = vs[min(i, len(vs)-1)]
	}
	hadd := func(a, b reg.VecVirtual) reg.VecVirtual {
		d := YMM()
		VHADDPS(b, a, d)
		return d
	}
	lo := hadd(hadd(in[0], in[1]), hadd(in[2], in[3]))
	if len(vs) <= 4 {
		x := XMM()
		VEXTRACTF128(U8(1), lo, x)
		VADDPS(lo.AsX(), x, x)
		return x
	}
	hi := hadd(hadd(in[4], in[5]), hadd(in[6], in[7]))
	a, b := YMM(), YMM()
	VPERM2F128(U8(0x20), hi, lo, a) // low halves: sums of lanes 0–3
	VPERM2F128(U8(0x31), hi, lo, b) // high halves: sums of lanes 4–7
	VADDPS(b, a, a)
	return a
}
