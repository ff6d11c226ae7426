package main

import (
	"fmt"

	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The panel kernel keeps lanes = queries: the caller transposes the query block once
// into panels of groupVectors·Lanes queries ([group][dim][queries]), the kernel widens
// each block of keys once into a float32 scratch, and every step over d loads one
// panel row (groupVectors vectors) and broadcasts one element per key of a tile:
// groupVectors·keys FMAs for groupVectors+keys loads, with no horizontal sums at all.
//
// The accumulators come out as key columns (key-major), but dst is query-major. A
// tile's columns go to a small key-major stage in L1, in whole vectors; once a block
// of keys is staged, it is transposed Lanes×Lanes and written to dst in whole vectors,
// one per query and Lanes keys. Writing each tile's columns into the query rows
// directly instead costs 32 short stores per tile into rows n floats apart, which at n
// a power of two share one L1 set and evict each other between tiles (the previous
// kernel: S = 16384 ran 1.37× slower than S = 16400).
//
// Written in a row, those 32 whole-vector stores still fall in one L1 set at n a
// multiple of 1024, and on Zen 5 the cliff was still there (52–54 % of the FMA peak
// against 81–84 % at n + 16): the kernels spread them over the next tiles (spreads).
//
// The stores are ordinary ones, even for blocks far larger than the L2: non-temporal
// stores were tried (blocks over 1 MiB, or rows a power of two apart) and gave nothing
// on Zen 1, while on a Sapphire Rapids Xeon they made 32×128·S blocks 1.15× (AVX-512)
// to 1.9× (AVX2, whose 32-byte stores fill half lines) slower at every S from 4096 to
// 131072, power of two or not.
const groupVectors = 2

// panelKeys is the key tile: AVX-512 takes 2·8 accumulators, AVX2 2·6 of its 16
// registers (with two query vectors and the broadcast). Eight keys on AVX-512 make a
// block of two tiles for one 16×16 transposition, and leave enough general-purpose
// registers for the general-dim kernel's key row pointers.
func panelKeys(isa ISA) int {
	if isa.Lanes == 16 {
		return 8
	}
	return 6
}

// blockKeys is how many keys are widened, staged and written out at once: a multiple
// of the tile and of Lanes. kernels/asm_dot_amd64.go sizes scratch and stage by it.
func blockKeys(isa ISA) int {
	if isa.Lanes == 16 {
		return 16
	}
	return 24
}

// unrollWiden is how many vectors of keys one widening iteration converts: the
// widening is the kernel's main cost besides the FMAs, so its loop overhead counts.
const unrollWiden = 4

// prefetchDistance is how far ahead of the widening contiguous keys are prefetched, in
// bytes: two to five tiles at the usual head dims, enough to hide DRAM latency when K
// streams.
const prefetchDistance = 4096

// prefetchKeys is how many keys ahead the widening prefetches: prefetchDistance's worth
// of contiguous keys at the fixed dims, and dim 128's count at the others. Counted in
// keys, not bytes, the distance holds in time whatever the stride between keys.
// So q8_0 keys, of about half fp16's bytes, take the same count as fp16's: a key
// takes a tile the same time whatever its format.
func prefetchKeys(dim int) int {
	if dim == 0 {
		dim = 128
	}
	return prefetchDistance / (2 * dim)
}

// unrollD is how many steps over d one loop iteration takes.
const unrollD = 4

// panelsFrame is the state of the loops around the tiles, in the stack frame like the
// row kernel's.
type panelsFrame struct {
	isa   ISA
	dim   int // 0: read at run time
	group int // queries per panel
	tile  int // keys per tile
	block int // keys per block

	keys      Mem // first key row of the block
	keysLeft  Mem
	valid     Mem // keys of this block: block, or fewer in the last one
	dstCol    Mem // dst[j0]
	panel     Mem // current query panel
	dstTile   Mem // dst[g·group·n + j0]
	rowsLeft  Mem // valid queries from the current panel on
	dstStride Mem // n·4

	// The spread flush (spreads): the transposed block waits in the stage's second
	// half, pendLeft rows of it from pendSrc on, to go to dst row by row from pendRow
	// on, one row per step of the next tiles' loop.
	pendSrc, pendRow, pendLeft Mem

	key operand // the keys' format
}

// spreads reports whether the kernel spreads its flush over the next tiles (every one
// does; spreadFlushes = false restores the burst, to compare). The stores of one flush
// go to the panel's rows, n floats apart; at n a multiple of 1024 every one of them
// falls in one set of the L1 (and, at n a multiple of 16384, of the L2), and the
// group·block/Lanes write misses of one flush in a row, more than the set's 12 ways,
// evicted each other's lines before their stores could commit: S = 4096 ran at 52–54 %
// of the FMA peak on a Zen 5 core against 81–84 % at S + 16 (AVX-512). One row per step
// of the tile loop, 16 to 32 cycles of FMAs apart on AVX-512, leaves only a few of them
// in the set at a time. The tile loops have at least as many steps per block as a
// panel has rows from dim 64 on (AVX2: from dim 16); the rows left go out at the next
// flush.
func (f panelsFrame) spreads() bool { return spreadFlushes }

const spreadFlushes = true

// copyRow copies one waiting row of the spread flush, block floats, from src to row.
func (f panelsFrame) copyRow(src, row reg.Register) {
	for c := 0; c < f.block; c += f.isa.Lanes {
		x := f.isa.Vec()
		VMOVUPS(Mem{Base: src, Disp: 4 * c}, x)
		VMOVUPS(x, Mem{Base: row, Disp: 4 * c})
	}
}

// drainOneInMemory writes one waiting row of the spread flush to dst, if any is left,
// with the state in the frame: the general-dim tile loop holds a pointer per key row
// and has no registers to spare for it. Its loop steps unrollD elements of d at a
// time, dim/unrollD steps per tile: at dims below 64 some rows wait for the flush.
func (f panelsFrame) drainOneInMemory() {
	Comment("One waiting row of the last flush to dst (the state in the frame).")
	skip := label("pendnone", f.isa)
	CMPQ(f.pendLeft, U8(0))
	JE(LabelRef(skip))
	src, row := GP64(), GP64()
	MOVQ(f.pendSrc, src)
	MOVQ(f.pendRow, row)
	f.copyRow(src, row)
	ADDQ(U8(4*f.block), f.pendSrc)
	MOVQ(f.dstStride, row)
	ADDQ(row, f.pendRow)
	DECQ(f.pendLeft)
	Label(skip)
}

// stageFloats is the stage the kernel needs: the key-major block, and for a spread
// flush the transposed one behind it.
func (f panelsFrame) stageFloats() int {
	if f.spreads() {
		return 2 * f.block * f.group
	}
	return f.block * f.group
}

// scoresPanels writes Scores{,BF16,Q8}Panels{,64,128}{AVX2,AVX512}: for each block of
// keys, widen it into scratch and run it against every query panel, tile by tile into
// the stage, then write the stage out. Only the widening depends on the keys' format
// (key): the tiles read float32 keys from scratch whatever it is.
func scoresPanels(isa ISA, dim int, key operand) {
	name := "Scores" + key.format() + "Panels" + isa.Suffix
	what := "any dim ≥ 1"
	if key.kind == kindQ8 {
		what = "any dim ≥ 32 that is a multiple of 32"
	}
	if dim != 0 {
		name = fmt.Sprintf("Scores%sPanels%d%s", key.format(), dim, isa.Suffix)
		what = fmt.Sprintf("dim = %d", dim)
	}
	f := panelsFrame{isa: isa, key: key, dim: dim, group: groupVectors * isa.Lanes, tile: panelKeys(isa), block: blockKeys(isa)}
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst []float32, panels []float32, k []%s, scratch []float32, stage []float32, rows int, n int, dim int, stride int, scale float32)", key.goTyp))
	Pragma("noescape")
	if key.kind == kindQ8 {
		Doc(name+" sets dst[i*n+j] = scale·(q_i · key j) for rows ≥ 1 queries, n ≥ 1 keys,",
			what+", key j being the dim/32 q8_0 blocks k[34*j*stride:], stride ≥ dim/32",
			"counted in blocks.",
			fmt.Sprintf("The queries come transposed in panels of %d: q_i[d] = panels[(i/%d·dim + d)·%d + i%%%d], with", f.group, f.group, f.group, f.group),
			fmt.Sprintf("the lanes past rows zero; scratch holds at least %d·dim floats and stage %d.", f.block, f.stageFloats()))
	} else {
		Doc(name+" sets dst[i*n+j] = scale·(q_i · k[j*stride:][:dim]) for rows ≥ 1 queries, n ≥ 1 keys,",
			what+" and stride ≥ dim.",
			fmt.Sprintf("The queries come transposed in panels of %d: q_i[d] = panels[(i/%d·dim + d)·%d + i%%%d], with", f.group, f.group, f.group, f.group),
			fmt.Sprintf("the lanes past rows zero; scratch holds at least %d·dim floats and stage %d.", f.block, f.stageFloats()))
	}
	for _, m := range []*Mem{&f.keys, &f.keysLeft, &f.valid, &f.dstCol, &f.panel, &f.dstTile, &f.rowsLeft, &f.dstStride} {
		*m = AllocLocal(8)
	}
	if f.spreads() {
		for _, m := range []*Mem{&f.pendSrc, &f.pendRow, &f.pendLeft} {
			*m = AllocLocal(8)
		}
		MOVQ(U32(0), f.pendLeft)
	}
	t := Load(Param("k").Base(), GP64())
	MOVQ(t, f.keys)
	t = Load(Param("n"), GP64())
	MOVQ(t, f.keysLeft)
	SHLQ(U8(2), t)
	MOVQ(t, f.dstStride)
	t = Load(Param("dst").Base(), GP64())
	MOVQ(t, f.dstCol)

	top, done := label("blocks", isa), label("blocksdone", isa)
	Label(top)
	valid := GP64()
	MOVQ(f.keysLeft, valid)
	TESTQ(valid, valid)
	JZ(LabelRef(done))
	Comment("The last block may have fewer keys: the rest of scratch holds earlier keys (or",
		"zeros), whose scores are computed and never written out.")
	full := GP64()
	MOVQ(U32(f.block), full)
	CMPQ(valid, full)
	CMOVQHI(full, valid)
	MOVQ(valid, f.valid)
	f.panelPass()
	t = Load(Param("stride"), GP64())
	if blockStride := key.strideBytes() * f.block; blockStride < 128 {
		IMUL3Q(U8(blockStride), t, t)
	} else {
		IMUL3Q(U32(blockStride), t, t)
	}
	ADDQ(t, f.keys)
	ADDQ(U8(4*f.block), f.dstCol)
	t = GP64()
	MOVQ(f.valid, t)
	SUBQ(t, f.keysLeft)
	JMP(LabelRef(top))
	Label(done)
	if f.spreads() {
		f.drain()
	}
	VZEROUPPER()
	RET()
}

// drain writes out the rows of the spread flush still waiting.
func (f panelsFrame) drain() {
	Comment("Write out the rows of the last flush still waiting.")
	left := GP64()
	MOVQ(f.pendLeft, left)
	done := label("draindone", f.isa)
	TESTQ(left, left)
	JZ(LabelRef(done))
	src, row := GP64(), GP64()
	MOVQ(f.pendSrc, src)
	MOVQ(f.pendRow, row)
	top := label("drain", f.isa)
	Label(top)
	f.copyRow(src, row)
	ADDQ(U8(4*f.block), src)
	ADDQ(f.dstStride, row)
	DECQ(left)
	JNZ(LabelRef(top))
	MOVQ(U32(0), f.pendLeft)
	Label(done)
}

// widenTile converts the keys first..first+tile−1 of the block that are valid into
// scratch, key by key: key j, dim elements at k[j*stride:] (q8_0: the dim/32 blocks
// from block j*stride on), to scratch[j*dim:] as float32, so that the tiles read a
// block's keys as one dense run whatever the stride and format. Each key prefetches
// the one prefetchKeys ahead of it along the rows, line by line. Widening
// costs the AVX2 kernel about 8% of its time on Zen 1 (32 queries × dim 128), its ymm
// stores being the bottleneck; done tile by tile, each burst of conversions overlaps
// the FMAs of the tile before it in the out-of-order window, which measured 1.5–2%
// faster there than widening the whole block at once (benchstat, 12 interleaved runs).
func (f panelsFrame) widenTile(first int) {
	isa := f.isa
	Commentf("Widen keys %d–%d of the block.", first, first+f.tile-1)
	// count = clamp(valid − first, 0, tile)
	count := GP64()
	if first > 0 {
		zero := GP64()
		XORQ(zero, zero) // before the SUBQ, whose flags the CMOV reads
		MOVQ(f.valid, count)
		SUBQ(U8(first), count)
		CMOVQLT(zero, count)
	} else {
		MOVQ(f.valid, count) // valid ≥ 1
	}
	tile := GP64()
	MOVQ(U32(f.tile), tile)
	CMPQ(count, tile)
	CMOVQGT(tile, count)
	key := GP64()
	MOVQ(f.keys, key)
	kStride := Load(Param("stride"), GP64())
	keyStride(f.key, kStride) // bytes from one key to the next
	if first > 0 {
		t := GP64()
		IMUL3Q(U8(first), kStride, t)
		ADDQ(t, key)
	}
	ahead := GP64() // bytes from a key to the one it prefetches
	IMUL3Q(U8(prefetchKeys(f.dim)), kStride, ahead)
	dst := Mem{Base: Load(Param("scratch").Base(), GP64())}
	var dim reg.Register
	if f.dim != 0 {
		if first > 0 {
			ADDQ(U32(4*first*f.dim), dst.Base)
		}
	} else {
		dim = Load(Param("dim"), GP64())
		if first > 0 {
			t := GP64()
			IMUL3Q(U32(4*first), dim, t) // bytes of the floats before the tile
			ADDQ(t, dst.Base)
		}
	}
	top, done := label("widen", isa), label("widendone", isa)
	Label(top)
	TESTQ(count, count)
	JZ(LabelRef(done))
	if f.dim != 0 {
		// A fast path's key is dim/Lanes whole vectors, unrolled.
		src := Mem{Base: key}
		var d reg.VecVirtual // the current q8_0 block's scale
		for u := range f.dim / isa.Lanes {
			var v reg.VecVirtual
			if e := u * isa.Lanes; f.key.kind == kindQ8 {
				block := src.Offset(f.key.bytes(e - e%blockLen))
				if e%blockLen == 0 {
					d = q8Scale(isa, block)
				}
				v = q8Vector(isa, block.Offset(2+e%blockLen), d)
			} else {
				v = f.key.vector(isa, src.Offset(u*f.key.size*isa.Lanes))
			}
			VMOVUPS(v, dst.Offset(u*4*isa.Lanes))
		}
		// Its lines, and the last element's, which starts one more line when the
		// key is not aligned to one.
		ahead := Mem{Base: key, Index: ahead, Scale: 1}
		for line := 0; line < f.key.bytes(f.dim); line += 64 {
			PREFETCHT0(ahead.Offset(line))
		}
		PREFETCHT0(ahead.Offset(f.key.bytes(f.dim) - f.key.size))
		ADDQ(U32(4*f.dim), dst.Base)
	} else {
		f.widenKey(key, ahead, dst.Base, dim)
	}
	ADDQ(kStride, key)
	DECQ(count)
	JMP(LabelRef(top))
	Label(done)
}

// widenKey converts the dim elements at key into the floats at dst, and moves dst past
// them: unrollWiden vectors at a time, then single vectors, then single elements
// (q8_0: block by block). It prefetches the key ahead bytes on, line by line, and its
// last element.
func (f panelsFrame) widenKey(key, ahead, dst, dim reg.Register) {
	isa := f.isa
	src, left := Mem{Base: GP64()}, GP64()
	MOVQ(key, src.Base)
	MOVQ(dim, left)
	pf := GP64()
	LEAQ(Mem{Base: key, Index: ahead, Scale: 1}, pf)
	PrefetchSpan(pf, f.key.lastOffset(dim))
	if f.key.kind == kindQ8 {
		f.widenBlocks(src, left, dst)
		return
	}
	for _, unroll := range []int{unrollWiden, 1} {
		top, done := label("widenvec", isa), label("widenvecdone", isa)
		Label(top)
		CMPQ(left, U8(unroll*isa.Lanes))
		JB(LabelRef(done))
		for u := range unroll {
			v := f.key.vector(isa, src.Offset(u*f.key.size*isa.Lanes))
			VMOVUPS(v, Mem{Base: dst, Disp: u * 4 * isa.Lanes})
		}
		if step := unroll * f.key.size * isa.Lanes; step < 256 {
			ADDQ(U8(step), src.Base)
		} else {
			ADDQ(U32(step), src.Base)
		}
		ADDQ(U32(unroll*4*isa.Lanes), dst)
		SUBQ(U8(unroll*isa.Lanes), left)
		JMP(LabelRef(top))
		Label(done)
	}
	top, done := label("widentail", isa), label("widentaildone", isa)
	Label(top)
	TESTQ(left, left)
	JZ(LabelRef(done))
	VMOVSS(f.key.scalar(src), Mem{Base: dst})
	ADDQ(U8(f.key.size), src.Base)
	ADDQ(U8(4), dst)
	DECQ(left)
	JMP(LabelRef(top))
	Label(done)
}

// widenBlocks is widenKey's loop for q8_0 keys, whose left elements at src are whole
// blocks: one block per iteration, its scale widened once.
func (f panelsFrame) widenBlocks(src Mem, left, dst reg.Register) {
	isa := f.isa
	top, done := label("widenblock", isa), label("widenblockdone", isa)
	Label(top)
	TESTQ(left, left)
	JZ(LabelRef(done))
	d := q8Scale(isa, src)
	for u := range blockLen / isa.Lanes {
		v := q8Vector(isa, src.Offset(2+u*isa.Lanes), d)
		VMOVUPS(v, Mem{Base: dst, Disp: u * 4 * isa.Lanes})
	}
	ADDQ(U8(blockBytes), src.Base)
	ADDQ(U32(4*blockLen), dst)
	SUBQ(U8(blockLen), left)
	JMP(LabelRef(top))
	Label(done)
}

// panelPass runs the key block against every query panel: its tiles into the stage,
// then the stage out to dst. The first panel widens each tile's keys into scratch
// right before running the tile (widenTile); the other panels reuse them.
func (f panelsFrame) panelPass() {
	isa := f.isa
	t := Load(Param("panels").Base(), GP64())
	MOVQ(t, f.panel)
	MOVQ(f.dstCol, t)
	MOVQ(t, f.dstTile)
	t = Load(Param("rows"), GP64())
	MOVQ(t, f.rowsLeft)
	Comment("The first panel widens each tile's keys right before running it.")
	top, done := label("panels", isa), label("panelsdone", isa)
	for first := 0; first < f.block; first += f.tile {
		f.widenTile(first)
		f.tileKeys(first)
	}
	f.flush()
	f.nextPanel()
	JLE(LabelRef(done))
	Label(top)
	for first := 0; first < f.block; first += f.tile {
		f.tileKeys(first)
	}
	f.flush()
	f.nextPanel()
	JG(LabelRef(top))
	Label(done)
}

// nextPanel moves on to the next query panel and its rows of dst, and counts its rows
// off rowsLeft: the flags say whether any are left.
func (f panelsFrame) nextPanel() {
	t := Load(Param("dim"), GP64())
	IMUL3Q(U32(4*f.group), t, t)
	ADDQ(t, f.panel)
	MOVQ(f.dstStride, t)
	IMUL3Q(U32(f.group), t, t)
	ADDQ(t, f.dstTile)
	SUBQ(U32(f.group), f.rowsLeft)
}

// tileKeys accumulates one panel against keys first..first+tile-1 of the block:
// acc[v][j] holds queries v·Lanes..v·Lanes+Lanes-1 against key first+j. The scaled
// accumulators go to the stage as its key rows first+j, group floats each.
func (f panelsFrame) tileKeys(first int) {
	isa := f.isa
	keys := f.tile
	Commentf("Tile of %d queries × keys %d–%d of the block.", f.group, first, first+keys-1)
	panel := GP64()
	MOVQ(f.panel, panel)
	scratch := GP64()
	Load(Param("scratch").Base(), scratch)
	d := GP64()
	XORQ(d, d)
	// key returns the address of element d+u of key first+j: one base register and a
	// displacement at a fixed dim, a pointer per key row otherwise.
	var key func(j, u int) Mem
	if f.dim != 0 {
		key = func(j, u int) Mem {
			return Mem{Base: scratch, Index: d, Scale: 4, Disp: 4 * ((first+j)*f.dim + u)}
		}
	} else {
		stride := Load(Param("dim"), GP64())
		SHLQ(U8(2), stride)
		if first > 0 {
			t := GP64()
			IMUL3Q(U8(first), stride, t)
			ADDQ(t, scratch)
		}
		kRows := []reg.GPVirtual{scratch}
		for len(kRows) < keys {
			next := GP64()
			LEAQ(Mem{Base: kRows[len(kRows)-1], Index: stride, Scale: 1}, next)
			kRows = append(kRows, next)
		}
		key = func(j, u int) Mem { return Mem{Base: kRows[j], Index: d, Scale: 4, Disp: 4 * u} }
	}
	acc := make([][]reg.VecVirtual, groupVectors)
	for v := range acc {
		acc[v] = make([]reg.VecVirtual, keys)
		for j := range acc[v] {
			acc[v][j] = isa.Vec()
			VXORPS(acc[v][j], acc[v][j], acc[v][j])
		}
	}
	// step multiplies panel row u of this iteration by element d+u of every key.
	step := func(u int) {
		q := make([]reg.VecVirtual, groupVectors)
		for v := range q {
			q[v] = isa.Vec()
			VMOVUPS(Mem{Base: panel, Disp: 4 * (u*f.group + v*isa.Lanes)}, q[v])
		}
		for j := range keys {
			b := isa.Vec()
			VBROADCASTSS(key(j, u), b)
			for v := range q {
				VFMADD231PS(b, q[v], acc[v][j])
			}
		}
	}
	if f.dim != 0 {
		var pendSrc, pendRow, pendLeft reg.GPVirtual
		if f.spreads() {
			pendSrc, pendRow, pendLeft = GP64(), GP64(), GP64()
			MOVQ(f.pendSrc, pendSrc)
			MOVQ(f.pendRow, pendRow)
			MOVQ(f.pendLeft, pendLeft)
		}
		// The fast paths' dims are multiples of unrollD: no test before the first step.
		top := label("d", isa)
		Label(top)
		for u := range unrollD {
			step(u)
		}
		if f.spreads() {
			Comment("One waiting row of the last flush to dst.")
			skip := label("pendnone", isa)
			TESTQ(pendLeft, pendLeft)
			JZ(LabelRef(skip))
			f.copyRow(pendSrc, pendRow)
			ADDQ(U8(4*f.block), pendSrc)
			ADDQ(f.dstStride, pendRow)
			DECQ(pendLeft)
			Label(skip)
		}
		ADDQ(U32(unrollD*4*f.group), panel)
		ADDQ(U8(unrollD), d)
		CMPQ(d, U32(f.dim))
		JB(LabelRef(top))
		if f.spreads() {
			MOVQ(pendSrc, f.pendSrc)
			MOVQ(pendRow, f.pendRow)
			MOVQ(pendLeft, f.pendLeft)
		}
	} else {
		dim := Load(Param("dim"), GP64())
		for _, unroll := range []int{unrollD, 1} {
			top, done := label("d", isa), label("ddone", isa)
			Label(top)
			end := GP64()
			LEAQ(Mem{Base: d, Disp: unroll}, end)
			CMPQ(end, dim)
			JA(LabelRef(done))
			for u := range unroll {
				step(u)
			}
			if f.spreads() && unroll == unrollD {
				f.drainOneInMemory()
			}
			ADDQ(U32(unroll*4*f.group), panel)
			ADDQ(U8(unroll), d)
			JMP(LabelRef(top))
			Label(done)
		}
	}
	scale := isa.Vec()
	VBROADCASTSS(ParamAddr("scale"), scale)
	stage := Mem{Base: Load(Param("stage").Base(), GP64())}
	for v, cols := range acc {
		for j, a := range cols {
			VMULPS(scale, a, a)
			VMOVUPS(a, stage.Offset(4*((first+j)*f.group+v*isa.Lanes)))
		}
	}
}

// flush writes the staged block to the panel's rows of dst: each Lanes keys × Lanes
// queries of the stage are transposed (loadTransposed on AVX2, transpose on AVX-512)
// and stored as one vector per query row; the valid mod Lanes keys at the end of the
// last block are copied one by one. Rows past rowsLeft are not written.
func (f panelsFrame) flush() {
	isa := f.isa
	L := isa.Lanes
	if f.spreads() {
		f.drain()
	}
	Comment("Write the stage out: Lanes keys of every query row at a time.")
	stage := GP64()
	Load(Param("stage").Base(), stage)
	top, tail, done := label("flush", isa), label("flushtail", isa), label("flushdone", isa)
	if f.spreads() {
		f.spreadFlush(stage, done)
	}
	dstChunk := GP64()
	MOVQ(f.dstTile, dstChunk)
	validLeft := GP64()
	MOVQ(f.valid, validLeft)
	Label(top)
	CMPQ(validLeft, U8(L))
	JB(LabelRef(tail))
	row, left := GP64(), GP64()
	MOVQ(dstChunk, row)
	MOVQ(f.rowsLeft, left)
	chunkDone := label("chunkdone", isa)
	for v := range groupVectors {
		out := f.stageRows(Mem{Base: stage, Disp: 4 * v * L})
		for i, x := range out {
			VMOVUPS(x, Mem{Base: row})
			if v == groupVectors-1 && i == L-1 {
				break
			}
			DECQ(left)
			JZ(LabelRef(chunkDone))
			ADDQ(f.dstStride, row)
		}
	}
	Label(chunkDone)
	ADDQ(U32(4*L*f.group), stage)
	ADDQ(U8(4*L), dstChunk)
	SUBQ(U8(L), validLeft)
	JMP(LabelRef(top))

	Label(tail)
	TESTQ(validLeft, validLeft)
	JZ(LabelRef(done))
	Comment("The last keys of the last block: stage[e·group + r] to dst row r, key e.")
	MOVQ(dstChunk, row)
	MOVQ(f.rowsLeft, left)
	r := GP64()
	XORQ(r, r)
	rowTop := label("tailrow", isa)
	Label(rowTop)
	e := GP64()
	XORQ(e, e)
	src := GP64()
	LEAQ(Mem{Base: stage, Index: r, Scale: 4}, src)
	elemTop := label("tailkey", isa)
	Label(elemTop)
	x := GP32()
	MOVL(Mem{Base: src}, x)
	MOVL(x, Mem{Base: row, Index: e, Scale: 4})
	ADDQ(U32(4*f.group), src)
	INCQ(e)
	CMPQ(e, validLeft)
	JB(LabelRef(elemTop))
	ADDQ(f.dstStride, row)
	INCQ(r)
	CMPQ(r, U8(f.group))
	JAE(LabelRef(done))
	DECQ(left)
	JNZ(LabelRef(rowTop))
	Label(done)
}

// stageRows loads the Lanes keys × Lanes queries of the key-major stage at block (key
// k's queries group floats after key k−1's) as one vector per query row: loadTransposed
// on AVX2, whole rows and transpose on AVX-512.
func (f panelsFrame) stageRows(block Mem) []reg.VecVirtual {
	isa := f.isa
	if isa.Lanes == 8 {
		return loadTransposed(isa, block, f.group)
	}
	in := make([]reg.VecVirtual, isa.Lanes)
	for k := range in {
		in[k] = isa.Vec()
		VMOVUPS(block.Offset(4*k*f.group), in[k])
	}
	return transpose(isa, in)
}

// spreadFlush transposes a full block of the stage at stage into the stage's second
// half, block floats per query row, and leaves it waiting there for the next tiles
// (spreads); a last block of fewer keys falls through to flush's loop and tail.
func (f panelsFrame) spreadFlush(stage reg.GPVirtual, done string) {
	isa := f.isa
	L := isa.Lanes
	partial := label("flushpartial", isa)
	CMPQ(f.valid, U8(f.block))
	JB(LabelRef(partial))
	out := Mem{Base: stage, Disp: 4 * f.block * f.group} // row r: out[r·block:][:block]
	for c := 0; c < f.block; c += L {
		for v := range groupVectors {
			rows := f.stageRows(Mem{Base: stage, Disp: 4 * (c*f.group + v*L)})
			for i, x := range rows {
				VMOVUPS(x, out.Offset(4*((v*L+i)*f.block+c)))
			}
		}
	}
	t := GP64()
	LEAQ(out, t)
	MOVQ(t, f.pendSrc)
	MOVQ(f.dstTile, t)
	MOVQ(t, f.pendRow)
	left, group := GP64(), GP64()
	MOVQ(f.rowsLeft, left)
	MOVQ(U32(f.group), group)
	CMPQ(left, group)
	CMOVQGT(group, left)
	MOVQ(left, f.pendLeft)
	JMP(LabelRef(done))
	Label(partial)
}

// loadTransposed returns the 8×8 block of the stage at block (eight rows of stride
// floats) transposed, on AVX2: out[q] holds element q of every row. The loads move the
// 128-bit lanes: register in[k] of column half c holds columns 4c..4c+3 of row k in its
// low lane and of row k+4 in its high lane (a VBROADCASTF128 and a VINSERTF128 from
// memory), so only the 4×4 transpositions within the lanes are left to shuffles. That
// replaces the eight VPERM2F128 of a register transpose, which Zen 1 splits into eight
// µops each, by inserts that ride on the loads.
func loadTransposed(isa ISA, block Mem, stride int) []reg.VecVirtual {
	out := make([]reg.VecVirtual, 0, 8)
	for c := range 2 {
		in := make([]reg.VecVirtual, 4)
		for k := range in {
			in[k] = isa.Vec()
			// A full write: a load into the X half would leave the register's upper
			// half live, as far as avo's allocator can tell, back to the function's start.
			VBROADCASTF128(block.Offset(4*(k*stride+4*c)), in[k])
			VINSERTF128(U8(1), block.Offset(4*((k+4)*stride+4*c)), in[k], in[k])
		}
		// out[4c+e]: element 4c+e of rows 0..3 (low lane) and 4..7 (high lane).
		out = append(out, transposeLanes(isa, in)...)
	}
	return out
}

// transposeLanes transposes, within each 128-bit lane, the 4×4 blocks of the rows in
// (four at a time): out[4g+e], lane l, is element 4l+e of in[4g..4g+3], lane l.
// 32-bit interleaves make 2×2 blocks, 64-bit shuffles 4×4.
func transposeLanes(isa ISA, in []reg.VecVirtual) []reg.VecVirtual {
	n := len(in)
	// t[4g+0..3]: (r0,r1) low, (r0,r1) high, (r2,r3) low, (r2,r3) high of rows 4g..4g+3.
	t := make([]reg.VecVirtual, n)
	for p := 0; p < n; p += 2 {
		t[p], t[p+1] = isa.Vec(), isa.Vec()
		VUNPCKLPS(in[p+1], in[p], t[p])
		VUNPCKHPS(in[p+1], in[p], t[p+1])
	}
	out := make([]reg.VecVirtual, n)
	for g := 0; g < n; g += 4 {
		for e := range 4 {
			out[g+e] = isa.Vec()
			imm := U8(0x44)
			if e%2 == 1 {
				imm = 0xee
			}
			VSHUFPS(imm, t[g+2+e/2], t[g+e/2], out[g+e])
		}
	}
	return out
}

// transpose returns the columns of the 16×16 matrix whose rows are in, on AVX-512:
// the 4×4 blocks within the 128-bit lanes (transposeLanes), then the four lanes across
// registers in two VSHUFF32X4 rounds.
func transpose(isa ISA, in []reg.VecVirtual) []reg.VecVirtual {
	// u[4g+e], 128-bit lane l: element 4l+e of rows 4g..4g+3.
	u := transposeLanes(isa, in)
	out := make([]reg.VecVirtual, len(in))
	for e := range 4 {
		a0, a1, b0, b1 := isa.Vec(), isa.Vec(), isa.Vec(), isa.Vec()
		VSHUFF32X4(U8(0x44), u[4+e], u[e], a0) // lanes 0,1 of u[e], then of u[4+e]
		VSHUFF32X4(U8(0xee), u[4+e], u[e], a1) // lanes 2,3
		VSHUFF32X4(U8(0x44), u[12+e], u[8+e], b0)
		VSHUFF32X4(U8(0xee), u[12+e], u[8+e], b1)
		for l, src := range [][2]reg.VecVirtual{{a0, b0}, {a0, b0}, {a1, b1}, {a1, b1}} {
			out[4*l+e] = isa.Vec()
			imm := U8(0x88) // lanes 0 and 2 of each source: lane 0 (or 2) of every u
			if l%2 == 1 {
				imm = 0xdd
			}
			VSHUFF32X4(imm, src[1], src[0], out[4*l+e])
		}
	}
	return out
}
