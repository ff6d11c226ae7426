package main

import (
	"fmt"

	. "github.com/kvsimd/kvsimd/gen/neon"
)

// The panel kernel keeps lanes = queries, as amd64's does (gen/amd64/dot/panels.go):
// it transposes its query rows once into a panel in scratch, panel[d·4qv + i] = q_i[d]
// (qv vectors of four queries per element), and then sweeps the keys a tile of kt at a
// time. Each key is widened in registers four elements at a time and multiplied by
// element (FMLA by element), its lane u against the panel's qv vectors of element d+u,
// into the tile's qv·kt accumulators, which hold four queries of one key each. So the
// keys are never transposed or stored: a key element costs half an FCVTL (two µops for
// four elements) per panel, where the block kernel (scores.go) widens every key once
// but transposes it and stores it to scratch, a µop and a quarter per element. For the
// 32 queries of a full panel that is the difference between 6 % and 16 % of the FMLAs
// (llvm-mca's Neoverse V2 model puts the block kernel at 1.12× the C reference of
// neonmca, which is built this way); for many more rows the block kernel's one
// widening wins, and kernels/asm_dot_arm64.go sends those to it.
//
// The accumulators come out as key columns, and dst is query-major: the tile is
// scaled and transposed (4×4 with TRN1/TRN2, or ZIP1/ZIP2 for two keys) into rows of
// kt scores at the end of the tile, a cost per tile, not per element.
//
// Each score is one lane's chain of fused multiply-adds over d in order from +0, then
// scaled: the arithmetic of the block kernel, so the two give the same bits.
//
// Shapes: qv·kt = 16 accumulators V16–V31 (12 for one query vector, 16 again in its
// wide tile), enough chains to keep four FMLA pipes busy at Neoverse V1's latency of 4;
// shapes of one or two query vectors run their steps key by key (keyMajorSteps). A
// query vector more halves the FCVTLs per FMLA, so the caller gives the kernel 32 rows
// when dim allows (4qv·dim ≤ panelFloats), else 16, 8, or the last one to four, whose
// missing rows repeat the last one and are not stored.
type panelShape struct{ qv, kt, ring int }

var panelShapes = []panelShape{{8, 2, 0}, {4, 4, 0}, {2, 8, 0}, {1, 12, 0}}

// wideTile is the one-query-vector shape's tile of sixteen keys, which fp16 and bf16
// sweep while sixteen keys are left and dim is a multiple of four: a decode block of 256
// keys is sixteen of them, where tiles of twelve waste eight keys' work on the last. Its
// sixteen accumulators leave room for eight keys' registers, a ring that keys j and
// j+8 share (keyMajorSteps), and for eight key pointers: key j+8 is read at key j's
// pointer plus 8·stride, so the tile needs sixteen keys in k (the last, partial tile is
// swept as {1, 12}).
var wideTile = panelShape{1, 16, 8}

// panelFloats is the scratch the caller provides for the panel; the partial last tile
// of keys is staged after it, in panelStage floats (kernels/asm_dot_arm64.go sizes
// scratch by both).
const (
	panelFloats = 4096
	panelStage  = 64
)

const (
	pDstCol    = "R19" // dst[j0], the tile's column in row 0
	pKeys      = "R20" // first key of the tile
	pKeysLeft  = "R21"
	pKStride   = "R22" // stride·2
	pDstStride = "R23" // n·4
	pDim       = "R24"
	pRows      = "R25"
	pScratch   = "R26" // the panel
	pPanel     = "R9"  // the panel's next vectors
	pSteps     = "R10" // steps of four elements (then single elements) left
	pValid     = "R16" // keys in this tile: kt, or fewer in the last one
	pRow       = "R17" // dst row (or stage row) being stored
)

func (s panelShape) acc(v, j int) V { return V(16 + v*s.kt + j) }

// keyReg holds key j's four widened elements; the keys (or the ring) take the top of
// V0–V15.
func (s panelShape) keyReg(j int) V { return V(16 - s.ringKeys() + j%s.ringKeys()) }

// ringKeys is how many keys have registers: the tile's, or its ring's.
func (s panelShape) ringKeys() int {
	if s.ring > 0 {
		return s.ring
	}
	return s.kt
}

// wideOffset holds the wide tile's 8·stride − 8 bytes: from key j's pointer, advanced
// past the step, to key j+8's elements of the step.
const wideOffset = "R11"

// panelReg holds query vector v of element d+u of the step (V0–V7, loaded four
// vectors at a time).
func (s panelShape) panelReg(u, v int) V { return V((u*s.qv + v) % 8) }

// keyPtr is the register that walks key j of the tile.
func keyPtr(j int) string {
	if j < 8 {
		return fmt.Sprintf("R%d", j)
	}
	return fmt.Sprintf("R%d", 11+j-8) // R11–R14
}

func (s panelShape) label(l string) string {
	if s.ring > 0 {
		return fmt.Sprintf("w%d%s", s.qv, l)
	}
	return fmt.Sprintf("p%d%s", s.qv, l)
}

// scoresPanels writes ScoresPanelsNEON (and its formats' twins): the shape by rows,
// then the panel, then the tiles of keys.
func scoresPanels(f *File, fm format) {
	name := fm.fn("ScoresPanels")
	scratch := panelFloats + panelStage
	if fm.q8 {
		scratch += panelScales
	}
	f.Func(name, fmt.Sprintf("(dst []float32, q []float32, k []%s, scratch []float32, rows int, n int, dim int, stride int, scale float32)", fm.goTyp), 132,
		fmt.Sprintf("%s sets dst[i*n+j] = scale·(q[i*dim:][:dim] · k[j*stride:][:dim]) for rows = 8, 16 or 32, or 1 ≤ rows ≤ 4, n ≥ 1 keys, dim ≥ 1 with rows·dim ≤ %d (rows counted as 4 when fewer), and stride ≥ dim%s; scratch holds %d floats.", name, panelFloats, fm.shapeDoc(), scratch))
	f.I("MOVD dst_base+0(FP), %s", pDstCol)
	f.I("MOVD k_base+48(FP), %s", pKeys)
	f.I("MOVD scratch_base+72(FP), %s", pScratch)
	f.I("MOVD rows+96(FP), %s", pRows)
	f.I("MOVD n+104(FP), %s", pKeysLeft)
	f.I("LSL $2, %s, %s", pKeysLeft, pDstStride)
	f.I("MOVD dim+112(FP), %s", pDim)
	f.I("MOVD stride+120(FP), %s", pKStride)
	fm.strideBytes(f, pKStride, "R8")
	if fm.q8 {
		// q8Lanes after the scales, for each step to load with them.
		loadQ8Lanes(f, 0, "R8")
		f.I("MOVD $%d, R8", 4*(panelFloats+panelStage)+16*q8LanesVector)
		f.I("ADD %s, R8", pScratch)
		f.I("VST1 [V0.S4], (R8)")
	}
	for _, s := range panelShapes[:len(panelShapes)-1] {
		f.I("CMP $%d, %s", 2*s.qv, pRows) // rows > 4qv/2: this shape
		f.I("BGT %s", s.label(""))
	}
	for i := len(panelShapes) - 1; i >= 0; i-- {
		s := panelShapes[i]
		f.Label(s.label(""))
		s.panel(f)
		if s.qv == wideTile.qv && s.keyMajor(fm) && !fm.f32 {
			wideTile.wideTiles(f, fm, s.label("tiles"))
		}
		s.tiles(f, fm)
		f.I("RET")
	}
}

// panel transposes the 4qv query rows into scratch, four rows by four elements at a
// time (TRN1/TRN2), the last dim mod 4 elements one at a time. Rows past rows (one
// query vector of fewer than four) repeat the last one.
func (s panelShape) panel(f *File) {
	f.I("// The panel: scratch[d·%d + i] = q_i[d].", 4*s.qv)
	f.I("MOVD q_base+24(FP), R8")
	f.I("LSL $2, %s, R17", pDim) // a query row's bytes
	f.I("SUB $1, %s, R13", pRows)
	f.I("MOVD ZR, R15")           // the group's first row
	f.I("MOVD %s, R16", pScratch) // the group's first lane
	f.I("MOVD $%d, R12", 16*s.qv) // a panel row's bytes
	f.Label(s.label("group"))
	for l := range 4 {
		f.I("ADD $%d, R15, R14", l)
		f.I("CMP R13, R14")
		f.I("CSEL GT, R13, R14, R14")
		f.I("MADD R17, R8, R14, R%d", l)
	}
	f.I("MOVD R16, %s", pPanel)
	f.I("LSR $2, %s, %s", pDim, pSteps)
	f.I("CBZ %s, %s", pSteps, s.label("grouptail"))
	f.Label(s.label("groupsteps"))
	for l := range 4 {
		f.I("VLD1.P 16(R%d), [V%d.S4]", l, l)
	}
	// V4 = (r0d0 r1d0 r0d2 r1d2), V5 = (r0d1 r1d1 r0d3 r1d3), V6, V7 the same for rows
	// 2 and 3; then element u of the four rows.
	f.I("VTRN1 V1.S4, V0.S4, V4.S4")
	f.I("VTRN2 V1.S4, V0.S4, V5.S4")
	f.I("VTRN1 V3.S4, V2.S4, V6.S4")
	f.I("VTRN2 V3.S4, V2.S4, V7.S4")
	f.I("VTRN1 V6.D2, V4.D2, V0.D2")
	f.I("VTRN1 V7.D2, V5.D2, V1.D2")
	f.I("VTRN2 V6.D2, V4.D2, V2.D2")
	f.I("VTRN2 V7.D2, V5.D2, V3.D2")
	for u := range 4 {
		f.I("VST1.P [V%d.S4], (%s)(R12)", u, pPanel)
	}
	f.I("SUBS $1, %s", pSteps)
	f.I("BNE %s", s.label("groupsteps"))
	f.Label(s.label("grouptail"))
	f.I("AND $3, %s, %s", pDim, pSteps)
	f.I("CBZ %s, %s", pSteps, s.label("groupdone"))
	f.Label(s.label("grouptail1"))
	for l := range 4 {
		f.I("FMOVS.P 4(R%d), F%d", l, l)
		f.I("FMOVS F%d, %d(%s)", l, 4*l, pPanel)
	}
	f.I("ADD R12, %s", pPanel)
	f.I("SUBS $1, %s", pSteps)
	f.I("BNE %s", s.label("grouptail1"))
	f.Label(s.label("groupdone"))
	f.I("ADD $4, R15")
	f.I("ADD $16, R16")
	f.I("CMP $%d, R15", 4*s.qv)
	f.I("BLT %s", s.label("group"))
}

// tiles sweeps the keys a tile at a time. In the last tile, the keys past valid repeat
// its last key, so that nothing past k is read; their scores are not stored.
func (s panelShape) tiles(f *File, fm format) {
	f.Label(s.label("tiles"))
	f.I("CBZ %s, %s", pKeysLeft, s.label("done"))
	f.I("MOVD $%d, %s", s.kt, pValid)
	f.I("CMP $%d, %s", s.kt, pKeysLeft)
	f.I("CSEL LT, %s, %s, %s", pKeysLeft, pValid, pValid)
	f.I("SUB $1, %s, R15", pValid)
	f.I("MOVD %s, %s", pKeys, keyPtr(0))
	for j := 1; j < s.kt; j++ {
		f.I("MOVD $%d, R8", j)
		f.I("CMP R15, R8")
		f.I("CSEL GT, R15, R8, R8") // the last valid key for those past it
		f.I("MADD %s, %s, R8, %s", pKStride, pKeys, keyPtr(j))
	}
	for v := range s.qv {
		for j := range s.kt {
			a := s.acc(v, j)
			f.I("VEOR V%d.B16, V%d.B16, V%d.B16", a, a, a)
		}
	}
	f.I("MOVD %s, %s", pScratch, pPanel)
	f.I("LSR $2, %s, %s", pDim, pSteps)
	f.I("CBZ %s, %s", pSteps, s.label("tail"))
	if fm.q8 {
		f.I("MOVD $%d, R8", 4*(panelFloats+panelStage))
		f.I("ADD %s, R8", pScratch) // the tile's scales
	}
	if s.keyMajor(fm) {
		s.keyMajorSteps(f, fm)
	} else {
		f.Label(s.label("steps"))
		if fm.q8 {
			s.q8Keys(f)
		} else {
			for j := range s.kt {
				fm.loadKey(f, keyPtr(j), s.keyReg(j))
			}
		}
		for u := range 4 {
			if u*s.qv%4 == 0 {
				s.loadPanel(f, s.panelReg(u, 0), max(s.qv, 4))
			}
			s.fmlas(f, u, u)
		}
		f.I("SUBS $1, %s", pSteps)
		f.I("BNE %s", s.label("steps"))
	}
	f.Label(s.label("tail"))
	if !fm.q8 { // q8_0's dim is a multiple of 32
		f.I("AND $3, %s, %s", pDim, pSteps)
		f.I("CBZ %s, %s", pSteps, s.label("store"))
		f.Label(s.label("tail1"))
		for j := range s.kt {
			fm.widen1(f, keyPtr(j), s.keyReg(j), "R15")
		}
		s.loadPanel(f, 0, s.qv)
		s.fmlas(f, 0, 0)
		f.I("SUBS $1, %s", pSteps)
		f.I("BNE %s", s.label("tail1"))
	}

	f.Label(s.label("store"))
	f.I("FMOVS scale+128(FP), F0")
	f.I("VDUP V0.S[0], V0.S4")
	for v := range s.qv {
		for j := range s.kt {
			a := s.acc(v, j)
			f.W(FMUL4S(a, a, 0))
		}
	}
	f.I("CMP $%d, %s", s.kt, pValid)
	f.I("BLT %s", s.label("partial"))
	f.I("MOVD %s, %s", pDstCol, pRow)
	s.store(f, pDstStride)
	f.I("B %s", s.label("next"))

	// The last tile, of fewer keys: staged after the panel, kt floats a row, then
	// copied to dst up to valid.
	f.Label(s.label("partial"))
	f.I("LSL $%d, %s, R8", 2+log2(4*s.qv), pDim) // the panel's bytes
	f.I("ADD %s, R8", pScratch)
	f.I("MOVD R8, %s", pRow)
	f.I("MOVD $%d, R12", 4*s.kt)
	s.store(f, "R12")
	f.I("MOVD %s, %s", pDstCol, pRow)
	if s.qv == 1 {
		f.I("MOVD %s, R13", pRows)
	} else {
		f.I("MOVD $%d, R13", 4*s.qv)
	}
	f.Label(s.label("copyrow"))
	f.I("MOVD R8, R14")
	f.I("MOVD %s, R12", pRow)
	f.I("MOVD %s, R15", pValid)
	f.Label(s.label("copy"))
	f.I("FMOVS.P 4(R14), F0")
	f.I("FMOVS.P F0, 4(R12)")
	f.I("SUBS $1, R15")
	f.I("BNE %s", s.label("copy"))
	f.I("ADD $%d, R8", 4*s.kt)
	f.I("ADD %s, %s", pDstStride, pRow)
	f.I("SUBS $1, R13")
	f.I("BNE %s", s.label("copyrow"))

	f.Label(s.label("next"))
	f.I("MOVD $%d, R8", s.kt)
	f.I("MADD %s, %s, R8, %s", pKStride, pKeys, pKeys) // keys += kt·stride halves
	f.I("ADD $%d, %s", 4*s.kt, pDstCol)
	f.I("SUB %s, %s", pValid, pKeysLeft)
	f.I("B %s", s.label("tiles"))
	f.Label(s.label("done"))
}

// keyMajor reports whether the steps run key by key: shapes of one or two query
// vectors, whose panel vectors for all four elements of a step fit in V0–V7, and keys
// that widen without the panel's registers (q8_0 borrows them).
func (s panelShape) keyMajor(fm format) bool { return s.qv <= 2 && !fm.q8 }

// keyMajorSteps runs the steps key by key, software-pipelined: each key takes its
// 4qv FMLAs of the step and is then loaded and widened for the next step, so the
// widenings come one per 4qv FMLAs rather than in a run before them (on Neoverse
// FCVTL shares two of the four vector pipes with the FMLAs, and a run of twelve left
// them waiting on it). The first step's keys are widened before the loop, and the
// last step leaves it for its FMLAs alone, so no key element past dim is read. Each
// accumulator takes its FMLAs in the same order as the element-by-element steps.
//
// With a ring (the wide tile), key j's register then takes key j+8 of the same step,
// and key j+8's takes key j of the next.
func (s panelShape) keyMajorSteps(f *File, fm format) {
	for j := range s.ringKeys() {
		fm.loadKey(f, keyPtr(j), s.keyReg(j))
	}
	f.I("SUBS $1, %s", pSteps)
	f.I("BEQ %s", s.label("last"))
	f.Label(s.label("steps"))
	s.keyMajorStep(f, fm, true)
	f.I("SUBS $1, %s", pSteps)
	f.I("BNE %s", s.label("steps"))
	f.Label(s.label("last"))
	s.keyMajorStep(f, fm, false)
}

// keyMajorStep is one step of keyMajorSteps; more says whether a step follows. The
// wide tile loads each key's next elements raw into V4–V7, three keys before it
// widens them, so the load's latency does not wait in the ring's eight keys.
func (s panelShape) keyMajorStep(f *File, fm format, more bool) {
	s.loadPanel(f, 0, 4*s.qv)
	lead := 0
	if s.ring > 0 {
		lead = 3
	}
	for j := range s.kt {
		if lead == 0 {
			s.keyFMLAs(f, j)
			s.loadNext(f, fm, j, more, false)
			continue
		}
		for i := range s.kt {
			if max(i-lead, 0) == j {
				s.loadNext(f, fm, i, more, true)
			}
		}
		s.keyFMLAs(f, j)
		if n, ok := s.next(j, more); ok {
			fm.widenFrom(f, s.keyReg(j), leadReg(n.key))
		}
	}
}

// leadReg holds the raw elements of key j's successor in the wide tile.
func leadReg(j int) V { return V(4 + j%4) }

// keyNext is a key that follows another in its register.
type keyNext struct {
	key      int
	sameStep bool
}

// next is what follows key j in its register: key j+ring of this step (read at key j's
// pointer plus wideOffset), or key j+ring−kt of the next step, if more steps follow.
func (s panelShape) next(j int, more bool) (keyNext, bool) {
	r := s.ringKeys()
	if j+r < s.kt {
		return keyNext{j + r, true}, true
	}
	return keyNext{j + r - s.kt, false}, more
}

// loadNext loads what follows key j: widened into its register, or raw into leadReg
// (the ring's keys, the only ones that follow in the same step).
func (s panelShape) loadNext(f *File, fm format, j int, more, raw bool) {
	n, ok := s.next(j, more)
	switch {
	case !ok:
	case !raw:
		fm.loadKey(f, keyPtr(n.key), s.keyReg(j))
	case n.sameStep:
		f.I("FMOVD (%s)(%s), F%d", keyPtr(j), wideOffset, leadReg(n.key))
	default:
		f.I("FMOVD.P 8(%s), F%d", keyPtr(n.key), leadReg(n.key))
	}
}

// wideTiles sweeps wide tiles while sixteen keys are left, then goes on at the shape's
// own tiles (rest) for the others.
func (s panelShape) wideTiles(f *File, fm format, rest string) {
	f.I("TST $3, %s", pDim)
	f.I("BNE %s", rest)
	f.Label(s.label("tiles"))
	f.I("CMP $%d, %s", s.kt, pKeysLeft)
	f.I("BLT %s", rest)
	f.I("MOVD %s, %s", pKeys, keyPtr(0))
	for j := 1; j < s.ring; j++ {
		f.I("ADD %s, %s, %s", pKStride, keyPtr(j-1), keyPtr(j))
	}
	f.I("LSL $3, %s, %s", pKStride, wideOffset)
	f.I("SUB $8, %s", wideOffset)
	for j := range s.kt {
		a := s.acc(0, j)
		f.I("VEOR V%d.B16, V%d.B16, V%d.B16", a, a, a)
	}
	f.I("MOVD %s, %s", pScratch, pPanel)
	f.I("LSR $2, %s, %s", pDim, pSteps)
	s.keyMajorSteps(f, fm)
	f.I("FMOVS scale+128(FP), F0")
	f.I("VDUP V0.S[0], V0.S4")
	for j := range s.kt {
		a := s.acc(0, j)
		f.W(FMUL4S(a, a, 0))
	}
	// Each four keys' accumulators, transposed, are four rows' next four scores.
	done := s.label("stored")
	for b := range s.kt / 4 {
		transpose4(f, s.acc(0, 4*b), func(l int) int { return l })
		f.I("ADD $%d, %s, %s", 16*b, pDstCol, pRow)
		for l := range 4 {
			if l > 0 {
				f.I("CMP $%d, %s", l, pRows)
				f.I("BLE %s", fmt.Sprintf("%s%d", done, b))
			}
			f.I("VST1 [V%d.S4], (%s)", l, pRow)
			f.I("ADD %s, %s", pDstStride, pRow)
		}
		f.Label(fmt.Sprintf("%s%d", done, b))
	}
	f.I("ADD $%d, %s", 4*s.kt, pDstCol)
	f.I("ADD %s<<%d, %s", pKStride, log2(s.kt), pKeys) // keys += kt·stride
	f.I("SUB $%d, %s", s.kt, pKeysLeft)
	f.I("B %s", s.label("tiles"))
}

// keyFMLAs multiplies the step's panel vectors by key j's four lanes.
func (s panelShape) keyFMLAs(f *File, j int) {
	for u := range 4 {
		for v := range s.qv {
			f.W(FMLAElem4S(s.acc(v, j), s.panelReg(u, v), s.keyReg(j), u))
		}
	}
}

// loadPanel loads count query vectors of the panel into V(first)...
func (s panelShape) loadPanel(f *File, first V, count int) {
	for ; count >= 4; count -= 4 {
		f.I("VLD1.P 64(%s), [V%d.S4, V%d.S4, V%d.S4, V%d.S4]", pPanel, first, first+1, first+2, first+3)
		first += 4
	}
	switch count {
	case 2:
		f.I("VLD1.P 32(%s), [V%d.S4, V%d.S4]", pPanel, first, first+1)
	case 1:
		f.I("VLD1.P 16(%s), [V%d.S4]", pPanel, first)
	}
}

// fmlas multiplies the panel's vectors of step element u by lane lane of every key.
func (s panelShape) fmlas(f *File, u, lane int) {
	for v := range s.qv {
		for j := range s.kt {
			f.W(FMLAElem4S(s.acc(v, j), s.panelReg(u, v), s.keyReg(j), lane))
		}
	}
}

// store writes the tile's scaled accumulators as rows of kt scores from pRow on, stride
// bytes apart: for each query vector, each four keys transposed into four rows (or two
// keys zipped into pairs). With one query vector, rows past rows are not written.
func (s panelShape) store(f *File, stride string) {
	done := s.label("stored" + stride)
	for v := range s.qv {
		if s.kt == 2 {
			a0, a1 := s.acc(v, 0), s.acc(v, 1)
			f.I("VZIP1 V%d.S4, V%d.S4, V0.S4", a1, a0) // (q0k0 q0k1 q1k0 q1k1)
			f.I("VZIP2 V%d.S4, V%d.S4, V1.S4", a1, a0) // (q2k0 q2k1 q3k0 q3k1)
			for l := range 4 {
				if l%2 == 0 {
					f.I("FMOVD F%d, (%s)", l/2, pRow)
				} else {
					f.I("VST1 V%d.D[1], (%s)", l/2, pRow)
				}
				f.I("ADD %s, %s", stride, pRow)
			}
			continue
		}
		nb := s.kt / 4
		for b := range nb {
			transpose4(f, s.acc(v, 4*b), func(l int) int { return l*nb + b })
		}
		for l := range 4 {
			if s.qv == 1 && l > 0 {
				f.I("CMP $%d, %s", l, pRows)
				f.I("BLE %s", done)
			}
			regs := ""
			for b := range nb {
				if b > 0 {
					regs += ", "
				}
				regs += fmt.Sprintf("V%d.S4", l*nb+b)
			}
			f.I("VST1 [%s], (%s)", regs, pRow)
			f.I("ADD %s, %s", stride, pRow)
		}
	}
	if s.qv == 1 {
		f.Label(done)
	}
}

// transpose4 transposes the four accumulators from a, four keys of four queries, into
// V(out(l)), query l's four scores, by way of V12–V15.
func transpose4(f *File, a V, out func(l int) int) {
	f.I("VTRN1 V%d.S4, V%d.S4, V12.S4", a+1, a)
	f.I("VTRN2 V%d.S4, V%d.S4, V13.S4", a+1, a)
	f.I("VTRN1 V%d.S4, V%d.S4, V14.S4", a+3, a+2)
	f.I("VTRN2 V%d.S4, V%d.S4, V15.S4", a+3, a+2)
	f.I("VTRN1 V14.D2, V12.D2, V%d.D2", out(0))
	f.I("VTRN1 V15.D2, V13.D2, V%d.D2", out(1))
	f.I("VTRN2 V14.D2, V12.D2, V%d.D2", out(2))
	f.I("VTRN2 V15.D2, V13.D2, V%d.D2", out(3))
}

func log2(x int) int {
	n := 0
	for ; x > 1; x >>= 1 {
		n++
	}
	return n
}

// panelScales is the scratch, after the panel and its stage, that holds the float32
// scales of a tile's q8_0 keys for the block being swept: the steps need every
// register of the shapes with qv·kt = 16 accumulators but the panel's V0–V7, which
// are free only while a step widens its keys.
const panelScales = 16

// q8LanesVector is where q8Lanes lies in the scales' scratch, in vectors, and the
// register a step loads it into.
const q8LanesVector = 3

// q8Keys widens a step's four quants of each key of the tile in place: as a block
// starts (every eighth step, when the steps left are a multiple of eight), its scales
// are widened into the scales' scratch at R8, which each step reloads into V0–V2,
// four keys' scales a vector, and q8Lanes after them into V3, before the panel's loads
// take those registers.
func (s panelShape) q8Keys(f *File) {
	f.I("TST $%d, %s", q8Values/4-1, pSteps)
	f.I("BNE %s", s.label("quants"))
	for j := range s.kt {
		loadScale(f, keyPtr(j), 0, "R17")
		f.I("FMOVS F0, %d(R8)", 4*j)
	}
	f.Label(s.label("quants"))
	f.I("VLD1 (R8), [V0.S4, V1.S4, V2.S4, V3.S4]")
	for j := range s.kt {
		q8Load4(f, keyPtr(j), s.keyReg(j), V(j/4), q8LanesVector, j%4)
	}
}
