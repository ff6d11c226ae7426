package main

import (
	"fmt"

	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The panel kernel keeps lanes = queries: the caller transposes the query block once
// into panels of groupVectors·Lanes queries ([group][dim][queries]), the
// kernel widens each tile of keys once into a float32 scratch, and every step over d
// loads one panel row (groupVectors vectors) and broadcasts one element per key:
// groupVectors·keys FMAs for groupVectors+keys loads, with no horizontal sums at all.
// The accumulators come out as key columns and are transposed in registers, four keys
// (or two, or one) per 128-bit lane, into contiguous runs of a dst row.
const groupVectors = 2

// panelKeys is the key tile: AVX2 has 16 vector registers for 2·6 accumulators, two
// query vectors and the broadcast. Measured against the row kernel's horizontal sums
// on AVX2, rows = 32, dim = 128: 75–80% of the FMA peak instead of 50–60%. AVX-512 has 32, but a tile also needs a pointer per
// key row in scratch, and ten keys are what the general-purpose registers allow.
func panelKeys(isa ISA) int {
	if isa.Lanes == 16 {
		return 10
	}
	return 6
}

// unrollWiden is how many vectors of keys one widening iteration converts: the
// widening is the kernel's main cost besides the FMAs, so its loop overhead counts.
const unrollWiden = 4

// prefetchDistance is how far ahead of the widening the keys are prefetched, in bytes:
// two to five tiles at the usual head dims, enough to hide DRAM latency when K streams.
const prefetchDistance = 4096

// unrollD is how many steps over d one loop iteration takes.
const unrollD = 4

// panelsFrame is the state of the loops around the tiles, in the stack frame like the
// row kernel's.
type panelsFrame struct {
	isa   ISA
	dim   int // 0: read at run time
	group int // queries per panel

	keys      Mem // next key row (fp16)
	keysLeft  Mem
	dstCol    Mem // dst[j0]
	panel     Mem // current query panel
	dstTile   Mem // dst[g·group·n + j0]
	rowsLeft  Mem // valid queries from the current panel on
	dstStride Mem // n·4
}

// scoresPanels writes ScoresPanels{,64,128}{AVX2,AVX512}: for each tile of keys (then
// single keys), widen it into scratch and run it against every query panel.
func scoresPanels(isa ISA, dim int) {
	name := "ScoresPanels" + isa.Suffix
	what := "any dim ≥ 1"
	if dim != 0 {
		name = fmt.Sprintf("ScoresPanels%d%s", dim, isa.Suffix)
		what = fmt.Sprintf("dim = %d", dim)
	}
	f := panelsFrame{isa: isa, dim: dim, group: groupVectors * isa.Lanes}
	TEXT(name, NOSPLIT, "func(dst []float32, panels []float32, k []uint16, scratch []float32, rows int, n int, dim int, scale float32)")
	Pragma("noescape")
	Doc(name+" sets dst[i*n+j] = scale·(q_i · k[j*dim:][:dim]) for rows ≥ 1 queries, n ≥ 1 keys and "+what+".",
		fmt.Sprintf("The queries come transposed in panels of %d: q_i[d] = panels[(i/%d·dim + d)·%d + i%%%d], with", f.group, f.group, f.group, f.group),
		fmt.Sprintf("the lanes past rows zero; scratch holds at least %d·dim floats.", panelKeys(isa)))
	for _, m := range []*Mem{&f.keys, &f.keysLeft, &f.dstCol, &f.panel, &f.dstTile, &f.rowsLeft, &f.dstStride} {
		*m = AllocLocal(8)
	}
	t := Load(Param("k").Base(), GP64())
	MOVQ(t, f.keys)
	t = Load(Param("n"), GP64())
	MOVQ(t, f.keysLeft)
	SHLQ(U8(2), t)
	MOVQ(t, f.dstStride)
	t = Load(Param("dst").Base(), GP64())
	MOVQ(t, f.dstCol)

	for _, keys := range []int{panelKeys(isa), 1} {
		top, done := label("keys", isa), label("keysdone", isa)
		Label(top)
		CMPQ(f.keysLeft, U8(keys))
		JB(LabelRef(done))
		f.widenKeys(keys)
		f.panelPass(keys)
		t := Load(Param("dim"), GP64())
		IMUL3Q(U8(2*keys), t, t)
		ADDQ(t, f.keys)
		ADDQ(U8(4*keys), f.dstCol)
		SUBQ(U8(keys), f.keysLeft)
		JMP(LabelRef(top))
		Label(done)
	}
	VZEROUPPER()
	RET()
}

// widenKeys converts the keys·dim halves of the key tile into scratch.
func (f panelsFrame) widenKeys(keys int) {
	isa := f.isa
	src := Mem{Base: GP64()}
	MOVQ(f.keys, src.Base)
	dst := Mem{Base: Load(Param("scratch").Base(), GP64())}
	count := Load(Param("dim"), GP64())
	if keys > 1 {
		IMUL3Q(U8(keys), count, count)
	}
	Comment("Widen the key tile into scratch, prefetching the keys a few tiles ahead.")
	for _, unroll := range []int{unrollWiden, 1} {
		top, done := label("widen", isa), label("widendone", isa)
		Label(top)
		CMPQ(count, U8(unroll*isa.Lanes))
		JB(LabelRef(done))
		for u := range unroll {
			v := isa.Vec()
			VCVTPH2PS(src.Offset(u*2*isa.Lanes), v)
			VMOVUPS(v, dst.Offset(u*4*isa.Lanes))
		}
		if unroll > 1 {
			for line := 0; line < unroll*2*isa.Lanes; line += 64 {
				PREFETCHT0(src.Offset(prefetchDistance + line))
			}
		}
		ADDQ(U8(unroll*2*isa.Lanes), src.Base)
		ADDQ(U32(unroll*4*isa.Lanes), dst.Base)
		SUBQ(U8(unroll*isa.Lanes), count)
		JMP(LabelRef(top))
		Label(done)
	}
	top, done := label("widentail", isa), label("widentaildone", isa)
	Label(top)
	TESTQ(count, count)
	JZ(LabelRef(done))
	VMOVSS(operandF16.scalar(src), dst)
	ADDQ(U8(2), src.Base)
	ADDQ(U8(4), dst.Base)
	DECQ(count)
	JMP(LabelRef(top))
	Label(done)
}

// panelPass runs the key tile against every query panel.
func (f panelsFrame) panelPass(keys int) {
	isa := f.isa
	t := Load(Param("panels").Base(), GP64())
	MOVQ(t, f.panel)
	MOVQ(f.dstCol, t)
	MOVQ(t, f.dstTile)
	t = Load(Param("rows"), GP64())
	MOVQ(t, f.rowsLeft)
	top, done := label("panels", isa), label("panelsdone", isa)
	Label(top)
	CMPQ(f.rowsLeft, U8(0))
	JLE(LabelRef(done))
	f.tile(keys)
	t = Load(Param("dim"), GP64())
	IMUL3Q(U32(4*f.group), t, t)
	ADDQ(t, f.panel)
	MOVQ(f.dstStride, t)
	IMUL3Q(U32(f.group), t, t)
	ADDQ(t, f.dstTile)
	SUBQ(U32(f.group), f.rowsLeft)
	JMP(LabelRef(top))
	Label(done)
}

// tile accumulates one panel against the key tile: acc[v][j] holds queries
// v·Lanes..v·Lanes+Lanes-1 against key j.
func (f panelsFrame) tile(keys int) {
	isa := f.isa
	Commentf("Tile of %d queries × %d keys.", f.group, keys)
	panel := GP64()
	MOVQ(f.panel, panel)
	scratch := GP64()
	Load(Param("scratch").Base(), scratch)
	kRows := []reg.GPVirtual{scratch}
	if keys > 1 {
		stride := Load(Param("dim"), GP64())
		SHLQ(U8(2), stride)
		for len(kRows) < keys {
			next := GP64()
			LEAQ(Mem{Base: kRows[len(kRows)-1], Index: stride, Scale: 1}, next)
			kRows = append(kRows, next)
		}
	}
	acc := make([][]reg.VecVirtual, groupVectors)
	for v := range acc {
		acc[v] = make([]reg.VecVirtual, keys)
		for j := range acc[v] {
			acc[v][j] = isa.Vec()
			VXORPS(acc[v][j], acc[v][j], acc[v][j])
		}
	}
	d := GP64()
	XORQ(d, d)
	// step multiplies panel row u of this iteration by element d+u of every key.
	step := func(u int) {
		q := make([]reg.VecVirtual, groupVectors)
		for v := range q {
			q[v] = isa.Vec()
			VMOVUPS(Mem{Base: panel, Disp: 4 * (u*f.group + v*isa.Lanes)}, q[v])
		}
		for j := range keys {
			b := isa.Vec()
			VBROADCASTSS(Mem{Base: kRows[j], Index: d, Scale: 4, Disp: 4 * u}, b)
			for v := range q {
				VFMADD231PS(b, q[v], acc[v][j])
			}
		}
	}
	var dim reg.Register
	if f.dim == 0 {
		dim = Load(Param("dim"), GP64())
	}
	for _, unroll := range []int{unrollD, 1} {
		if f.dim != 0 && unroll == 1 {
			break // the fast paths' dims are multiples of unrollD
		}
		top, done := label("d", isa), label("ddone", isa)
		Label(top)
		if f.dim != 0 {
			CMPQ(d, U32(f.dim))
			JAE(LabelRef(done))
		} else {
			end := GP64()
			LEAQ(Mem{Base: d, Disp: unroll}, end)
			CMPQ(end, dim)
			JA(LabelRef(done))
		}
		for u := range unroll {
			step(u)
		}
		ADDQ(U32(unroll*4*f.group), panel)
		ADDQ(U8(unroll), d)
		JMP(LabelRef(top))
		Label(done)
	}
	f.store(acc)
}

// store scales the accumulators and writes them to dst, row by row, stopping at the
// last valid query of the panel.
func (f panelsFrame) store(acc [][]reg.VecVirtual) {
	isa := f.isa
	keys := len(acc[0])
	scale := isa.Vec()
	VBROADCASTSS(paramAddr("scale"), scale)
	for _, row := range acc {
		for _, a := range row {
			VMULPS(scale, a, a)
		}
	}
	// Transpose each vector's key columns into runs per query: groups of four keys
	// become quads (one query's four scores in a 128-bit lane), pairs become pairs,
	// and a single key stays as it is.
	type run struct {
		key   int              // first key of the run
		width int              // 4, 2 or 1 keys
		regs  []reg.VecVirtual // per query index within a 128-bit lane: the register holding it
	}
	runs := make([][]run, len(acc))
	for v, cols := range acc {
		for j := 0; j < keys; {
			switch {
			case keys-j >= 4:
				t := make([]reg.VecVirtual, 4)
				for i, unpack := range []func(...Op){VUNPCKLPS, VUNPCKHPS, VUNPCKLPS, VUNPCKHPS} {
					t[i] = isa.Vec()
					unpack(cols[j+1+i/2*2], cols[j+i/2*2], t[i])
				}
				// t0 = (k0,k1) of queries 0,1; t1 = of 2,3; t2, t3 the same for k2,k3.
				u := make([]reg.VecVirtual, 4)
				for i := range u {
					u[i] = isa.Vec()
					imm := U8(0x44)
					if i%2 == 1 {
						imm = 0xee
					}
					VSHUFPS(imm, t[2+i/2], t[i/2], u[i])
				}
				runs[v] = append(runs[v], run{j, 4, u})
				j += 4
			case keys-j >= 2:
				lo, hi := isa.Vec(), isa.Vec()
				VUNPCKLPS(cols[j+1], cols[j], lo)
				VUNPCKHPS(cols[j+1], cols[j], hi)
				runs[v] = append(runs[v], run{j, 2, []reg.VecVirtual{lo, lo, hi, hi}})
				j += 2
			default:
				c := cols[j]
				runs[v] = append(runs[v], run{j, 1, []reg.VecVirtual{c, c, c, c}})
				j++
			}
		}
	}
	dst := GP64()
	MOVQ(f.dstTile, dst)
	left := GP64()
	MOVQ(f.rowsLeft, left)
	done := label("stored", isa)
	for r := range f.group {
		v, p := r/isa.Lanes, r%isa.Lanes
		lane, i := p/4, p%4
		for _, rn := range runs[v] {
			x := extractLane(isa, rn.regs[i], lane)
			m := Mem{Base: dst, Disp: 4 * rn.key}
			switch {
			case rn.width == 4:
				VMOVUPS(x, m)
			case rn.width == 2 && i%2 == 0:
				VMOVLPS(x, m)
			case rn.width == 2:
				VMOVHPS(x, m)
			case i == 0:
				VMOVSS(x, m)
			default:
				VEXTRACTPS(U8(i), x, m)
			}
		}
		if r < f.group-1 {
			DECQ(left)
			JZ(LabelRef(done))
			ADDQ(f.dstStride, dst)
		}
	}
	Label(done)
}

// extractLane returns 128-bit lane l of v as an XMM register.
func extractLane(isa ISA, v reg.VecVirtual, l int) reg.Register {
	if l == 0 {
		return v.AsX()
	}
	x := XMM()
	if isa.Lanes == 16 {
		VEXTRACTF32X4(U8(l), v, x)
	} else {
		VEXTRACTF128(U8(l), v, x)
	}
	return x
}
