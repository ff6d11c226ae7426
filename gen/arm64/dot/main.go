// Command dot generates asm/dot_arm64.s: fp16/fp32 dot products (FCVTL widening and
// VFMLA accumulation, or FMLAL on halves where the CPU has FEAT_FHM) and the score
// block Q·Kᵀ (scores.go: the row and block kernels; panels.go: the panel kernel), and
// their twins over bfloat16 and q8_0 keys (formats.go).
package main

import (
	"fmt"

	. "github.com/kvsimd/kvsimd/gen/neon"
)

func main() {
	f := NewFile("arm64/dot")
	for _, d := range [][2]operand{{operandF16, operandF16}, {operandF32, operandF16}, {operandF32, operandF32}} {
		dotEntry(f, d[0], d[1])
	}
	f.Data("q8lanes", q8Lanes)
	for _, fm := range formats {
		if fm != formatF16 && fm != formatF32 { // a float32 key's dot is DotF32
			dotFormat(f, fm)
		}
		scores(f, fm)
		scoresBlocks(f, fm)
		scoresPanels(f, fm)
	}
	f.Write()
}

// An operand describes how one side of a dot product is stored.
type operand struct {
	name  string // in the function name: DotF32F16
	goTyp string // Go element type
	size  int    // bytes per element
	f16   bool   // 16-bit elements, widened: halves, or bfloat16s if bf16
	bf16  bool
}

var (
	operandF16  = operand{"F16", "uint16", 2, true, false}
	operandBF16 = operand{"BF16", "uint16", 2, true, true}
	operandF32  = operand{"F32", "float32", 4, false, false}
)

// load16 loads sixteen elements from ptr, post-incremented, into the four float32
// vectors dst..dst+3; halves land in raw..raw+1 first and are widened.
func (o operand) load16(f *File, ptr string, dst, raw V) {
	if !o.f16 {
		f.I("VLD1.P 64(%s), [V%d.S4, V%d.S4, V%d.S4, V%d.S4]", ptr, dst, dst+1, dst+2, dst+3)
		return
	}
	f.I("VLD1.P 32(%s), [V%d.H8, V%d.H8]", ptr, raw, raw+1)
	if o.bf16 {
		f.W(SHLL4S(dst, raw), SHLL24S(dst+1, raw), SHLL4S(dst+2, raw+1), SHLL24S(dst+3, raw+1))
		return
	}
	f.W(FCVTL(dst, raw), FCVTL2(dst+1, raw), FCVTL(dst+2, raw+1), FCVTL2(dst+3, raw+1))
}

// load4 loads four elements from ptr, post-incremented, as float32 into dst.
func (o operand) load4(f *File, ptr string, dst V) {
	if !o.f16 {
		f.I("VLD1.P 16(%s), [V%d.S4]", ptr, dst)
		return
	}
	f.I("VLD1.P 8(%s), [V%d.H4]", ptr, dst)
	o.format().widen(f, dst)
}

// format is the key format of a 16-bit operand.
func (o operand) format() format {
	if o.bf16 {
		return formatBF16
	}
	return formatF16
}

// load1 loads one element from ptr, post-incremented, as float32 into Fdst; a scalar
// write clears the rest of the vector register.
func (o operand) load1(f *File, ptr string, dst V) {
	if !o.f16 {
		f.I("FMOVS.P 4(%s), F%d", ptr, dst)
		return
	}
	o.format().widen1(f, ptr, dst, "R15")
}

// dotName is the name of the dot product of a and b: DotF32F16.
func dotName(a, b operand) string {
	if a == b {
		return "Dot" + a.name
	}
	return "Dot" + a.name + b.name
}

// The values of the entries' sel argument that select a NEON body: the numbers of
// internal/dispatch's Variant, which asm/dot.go names and a test in package kernels
// holds to them. The neon variant is numbered isaNEONFHM on a CPU with FEAT_FHM and
// isaNEON on one without; only DotF16 has a body of its own for FHM (dotF16Bodies),
// the other entries run their one body for both numbers.
const (
	isaNEON    = 3
	isaNEONFHM = 4
)

// dotEntry writes DotF16 and its kin: the NEON body, run when sel selects it and the
// lengths agree (asm/dot.go: sel is a variant's number exactly when they do);
// otherwise, or when the body's result is not finite, a jump to the Go continuation,
// which takes the same arguments. The arguments and the body in the entry are those of
// amd64 (gen/amd64/dot), where a frame of seven words cost 0.5 ns of a call's 5.8 at
// n = 128 against these four, and a jump between functions 0.7 ns of its 6.
func dotEntry(f *File, a, b operand) {
	name := dotName(a, b)
	f.Func(name, fmt.Sprintf("(a *%s, b *%s, n int, sel int64) float32", a.goTyp, b.goTyp), 36,
		name+" returns the dot product of a[:n] and b[:n], accumulated in float32, with the NEON body when sel selects it (asm/dot.go), else as its Go continuation does, which takes the same arguments.")
	// The operands first: the body's first loads wait for them, the branch on sel
	// does not (it is predicted), and a jump to the continuation leaves the frame as
	// it was.
	f.I("MOVD a+0(FP), R0")
	f.I("MOVD b+8(FP), R1")
	f.I("MOVD sel+24(FP), R3")
	switch {
	case a.f16 && b.f16:
		dotF16Bodies(f)
	case a.f16 || b.f16:
		f.I("SUB $%d, R3, R4", isaNEON)
		f.I("CMP $%d, R4", isaNEONFHM-isaNEON)
		f.I("BHI continue") // sel is neither number, unsigned: below isaNEON wraps
		dot(f, a, b, true)
	default:
		f.I("SUB $%d, R3, R4", isaNEON)
		f.I("CMP $%d, R4", isaNEONFHM-isaNEON)
		f.I("BHI continue")
		dotWide(f, f32Mul{}, "")
	}
	f.Label("continue")
	f.I("JMP ·continue%s(SB)", name)
}

// dotF16Bodies writes DotF16's two bodies: FMLAL/FMLAL2 for isaNEONFHM, first so that
// it falls through, and FCVTL+FMLA for isaNEON. They share one layout (dotWide):
// element i of the whole steps goes to lane i mod 4 of the same accumulator in both,
// in the same order, and each FMLAL lane computes acc + aᵢ·bᵢ with one rounding, as
// FMLA does on the widened halves (whose product float32 holds exactly); so the two
// give the same bits, which kernels' TestDotF16FHMBits checks.
func dotF16Bodies(f *File) {
	f.I("CMP $%d, R3", isaNEONFHM)
	f.I("BNE notfhm")
	dotWide(f, fmlalMul{}, "fhm")
	f.Label("notfhm")
	f.I("CMP $%d, R3", isaNEON)
	f.I("BNE continue")
	dotWide(f, f16Mul{}, "cvt")
}

// A multiplier is how one of dotWide's bodies multiplies its operands into the
// accumulators: whole steps of 4·accs elements, chunks of sixteen into accumulators
// 4c..4c+3, and quads of four into one accumulator. Each call loads its elements from
// R0 and R1, post-incremented, and multiplies element i of what it loads into lane
// i mod 4 of accumulator i/4 of those it is given.
type multiplier interface {
	accs() int            // accumulators V16.., 4·accs() elements a step
	step(f *File)         // one whole step into every accumulator
	chunk16(f *File, c V) // sixteen elements into accumulators 4c..4c+3
	quad(f *File, acc V)  // four elements into accumulator acc
	a() operand
	b() operand
}

// f32Mul is DotF32's: eight accumulators, 32 floats a step, loaded a pair of vectors
// (LDP) of each operand before their two FMLAs. Eight chains of FMLA (latency 4 on
// Neoverse V1, 2 with V2's accumulator forwarding, in llvm-mca's models) keep the
// loads, three vectors a cycle, the bound; four, as before, left V1 bound by the
// chains (1.45× the C reference at n = 1024, a model estimate).
type f32Mul struct{}

func (f32Mul) accs() int  { return 8 }
func (f32Mul) a() operand { return operandF32 }
func (f32Mul) b() operand { return operandF32 }
func (f32Mul) step(f *File) {
	for p := range 4 {
		f.I("FLDPQ %d(R0), (F%d, F%d)", 32*p, 2*p, 2*p+1)
		f.I("FLDPQ %d(R1), (F%d, F%d)", 32*p, 8+2*p, 9+2*p)
		for i := 2 * p; i < 2*p+2; i++ {
			f.I("VFMLA V%d.S4, V%d.S4, V%d.S4", 8+i, i, 16+i)
		}
	}
	f.I("ADD $128, R0")
	f.I("ADD $128, R1")
}
func (f32Mul) chunk16(f *File, c V) {
	f.I("VLD1.P 64(R0), [V0.S4, V1.S4, V2.S4, V3.S4]")
	f.I("VLD1.P 64(R1), [V8.S4, V9.S4, V10.S4, V11.S4]")
	for i := range V(4) {
		f.I("VFMLA V%d.S4, V%d.S4, V%d.S4", 8+i, i, 16+4*c+i)
	}
}
func (f32Mul) quad(f *File, acc V) {
	f.I("VLD1.P 16(R0), [V0.S4]")
	f.I("VLD1.P 16(R1), [V8.S4]")
	f.I("VFMLA V8.S4, V0.S4, V%d.S4", acc)
}

// f16Mul is DotF16's conversion body, for CPUs without FEAT_FHM: sixteen halves of
// each operand widened with FCVTL/FCVTL2, then FMLA, four times a step. Its bound is
// the widening (FCVTL issues once a cycle on Neoverse V1/V2), not the accumulators;
// it has fmlalMul's sixteen so that the two bodies give the same bits.
type f16Mul struct{}

func (f16Mul) accs() int  { return 16 }
func (f16Mul) a() operand { return operandF16 }
func (f16Mul) b() operand { return operandF16 }
func (m f16Mul) step(f *File) {
	for c := range V(4) {
		m.chunk16(f, c)
	}
}
func (f16Mul) chunk16(f *File, c V) {
	operandF16.load16(f, "R0", 0, 8)
	operandF16.load16(f, "R1", 4, 10)
	for i := range V(4) {
		f.I("VFMLA V%d.S4, V%d.S4, V%d.S4", 4+i, i, 16+4*c+i)
	}
}
func (f16Mul) quad(f *File, acc V) {
	operandF16.load4(f, "R0", 0)
	operandF16.load4(f, "R1", 4)
	f.I("VFMLA V4.S4, V0.S4, V%d.S4", acc)
}

// fmlalMul is DotF16's FEAT_FHM body: FMLAL multiplies the low four halves of a
// register pair into an accumulator, FMLAL2 the high four, so 64 halves of each
// operand (V0–V7, V8–V15, loaded a pair of vectors of each at a time) feed sixteen
// accumulators a step with no widening. Sixteen chains of FMLAL (latency 5 on
// Neoverse V1) keep the loads the bound on V1 as on V2.
type fmlalMul struct{}

func (fmlalMul) accs() int  { return 16 }
func (fmlalMul) a() operand { return operandF16 }
func (fmlalMul) b() operand { return operandF16 }
func (fmlalMul) step(f *File) {
	for p := range V(4) {
		f.I("FLDPQ %d(R0), (F%d, F%d)", 32*p, 2*p, 2*p+1)
		f.I("FLDPQ %d(R1), (F%d, F%d)", 32*p, 8+2*p, 9+2*p)
		for k := 2 * p; k < 2*p+2; k++ {
			f.W(FMLAL(16+2*k, k, 8+k), FMLAL2(17+2*k, k, 8+k))
		}
	}
	f.I("ADD $128, R0")
	f.I("ADD $128, R1")
}
func (fmlalMul) chunk16(f *File, c V) {
	f.I("VLD1.P 32(R0), [V0.H8, V1.H8]")
	f.I("VLD1.P 32(R1), [V8.H8, V9.H8]")
	a := 16 + 4*c
	f.W(FMLAL(a, 0, 8), FMLAL2(a+1, 0, 8), FMLAL(a+2, 1, 9), FMLAL2(a+3, 1, 9))
}
func (fmlalMul) quad(f *File, acc V) {
	f.I("VLD1.P 8(R0), [V0.H4]")
	f.I("VLD1.P 8(R1), [V8.H4]")
	f.W(FMLAL(acc, 0, 8))
}

// dotWide writes a body with m.accs() accumulators V16.. (8 or 16): whole steps of
// 4·accs elements, element i into lane i mod 4 of accumulator (i mod 4·accs)/4; then
// of the rest, chunks of sixteen into accumulators 0–3, 4–7, 8–11 (as a step would)
// and quads into the last four accumulators but one, each at most once, so that no
// remainder lengthens a chain by more than one; the accumulators are added in a tree
// (i + accs/2, then halving), then pairwise, and the last n mod 4 products are added
// to the sum one at a time. Labels are prefixed with p.
func dotWide(f *File, m multiplier, p string) {
	accs := m.accs()
	stepLen := 4 * accs
	f.I("MOVD n+16(FP), R2")
	for v := 16; v < 16+accs; v++ {
		f.I("VEOR V%d.B16, V%d.B16, V%d.B16", v, v, v)
	}
	f.I("SUBS $%d, R2", stepLen) // R2 = elements left after the next step
	f.I("BLT %srest", p)
	f.Label(p + "step")
	m.step(f)
	f.I("SUBS $%d, R2", stepLen)
	f.I("BGE %sstep", p)
	f.Label(p + "rest")
	f.I("ADD $%d, R2", stepLen) // n mod stepLen
	for c := range V(accs/4 - 1) {
		f.I("CMP $%d, R2", 16*(c+1))
		f.I("BLT %squads", p)
		m.chunk16(f, c)
	}
	f.Label(p + "quads")
	f.I("AND $15, R2, R3")
	for k := range V(3) {
		f.I("CMP $%d, R3", 4*(k+1))
		f.I("BLT %sreduce", p)
		m.quad(f, V(16+accs-4)+k)
	}
	f.Label(p + "reduce")
	var red []Inst
	for s := accs / 2; s >= 1; s /= 2 {
		for i := range s {
			red = append(red, FADD4S(V(16+i), V(16+i), V(16+i+s)))
		}
	}
	f.W(append(red, FADDP4S(16, 16, 16), FADDP2S(16, 16))...)
	f.I("AND $3, R2")
	tail(f, m.a(), m.b(), p, true)
}

// tail adds the last R2 products to F16 one at a time, and returns the sum, or, in an
// entry with a float32 operand, goes to its continue if it is not finite.
func tail(f *File, a, b operand, p string, entry bool) {
	f.Label(p + "tail")
	f.I("CBZ R2, %sdone", p)
	a.load1(f, "R0", 0)
	b.load1(f, "R1", 1)
	f.I("FMADDS F1, F16, F0, F16") // F16 += F0·F1
	f.I("SUB $1, R2")
	f.I("B %stail", p)
	f.Label(p + "done")
	if !entry {
		f.I("FMOVS F16, ret+48(FP)")
		f.I("RET")
		return
	}
	if !a.f16 {
		// NaN and ±Inf have an exponent of all ones: the bits shifted left by one are
		// then at least 0xff000000 (one compare, where masking takes two).
		f.I("FMOVS F16, R3")
		f.I("MOVW $0xff000000, R4")
		f.I("CMPW R3<<1, R4")
		f.I("BLS continue")
	}
	f.I("FMOVS F16, ret+32(FP)")
	f.I("RET")
}

// dot writes DotF32F16's NEON body: four accumulators V16–V19 over sixteen elements,
// then one over four, a pairwise reduction, and the scalar tail added to the sum. Its
// bound is the widening of b (FCVTL issues once a cycle on Neoverse V1/V2), which more
// accumulators would not lift, so it keeps the order, and the bits, it has always had.
// A float32 operand makes the result overflowable, so in an entry a result that is not
// finite goes to its continue, to be settled in Go; DotF32BF16NEON, not an entry (entry
// false), returns it and has R2 = n set.
func dot(f *File, a, b operand, entry bool) {
	if entry {
		f.I("MOVD n+16(FP), R2")
	}
	for v := 16; v < 20; v++ {
		f.I("VEOR V%d.B16, V%d.B16, V%d.B16", v, v, v)
	}
	f.Label("loop16")
	f.I("CMP $16, R2")
	f.I("BLT loop4")
	a.load16(f, "R0", 0, 8)
	b.load16(f, "R1", 4, 10)
	for i := V(0); i < 4; i++ {
		f.I("VFMLA V%d.S4, V%d.S4, V%d.S4", 4+i, i, 16+i)
	}
	f.I("SUB $16, R2")
	f.I("B loop16")
	f.Label("loop4")
	f.I("CMP $4, R2")
	f.I("BLT reduce")
	a.load4(f, "R0", 0)
	b.load4(f, "R1", 4)
	f.I("VFMLA V4.S4, V0.S4, V16.S4")
	f.I("SUB $4, R2")
	f.I("B loop4")
	f.Label("reduce")
	f.W(FADD4S(16, 16, 17), FADD4S(18, 18, 19), FADD4S(16, 16, 18), FADDP4S(16, 16, 16), FADDP2S(16, 16))
	tail(f, a, b, "", entry)
}

// Registers of the score loops. A tile of up to tileRows×tileKeys takes the
// accumulators V16–V31 (row r, key j in V16+4r+j), the widened keys V4–V7 and the
// query vectors V0–V3; V8–V14 are scratch and V15 holds scale in every lane.
const (
	tileRows = 4
	tileKeys = 4

	dstCol    = "R19" // dst[j0], the current key tile's column in row 0
	keys      = "R20" // first key row of the tile
	keysLeft  = "R21"
	qStride   = "R22" // dim·4
	kStride   = "R23" // stride·2
	dstStride = "R24" // n·4
	dim       = "R25"
	rowsLeft  = "R26"
	queries   = "R9"  // first query row of the tile
	dstTile   = "R10" // dst[i0*n+j0]
	left      = "R8"  // elements of the dot products not yet done
	scaleV    = 15
)

func qRow(r int) string { return fmt.Sprintf("R%d", r) }   // R0–R3
func kRow(j int) string { return fmt.Sprintf("R%d", 4+j) } // R4–R7
func accV(r, j int) V   { return V(16 + 4*r + j) }

// scores writes ScoresNEON (and its formats' twins): for each tile of four keys (then
// single keys), each group of four query rows (then two, then one) is one tile; the key
// tile stays in L1 across all query groups. Keys lie stride ≥ dim elements apart (one
// KV head of a token-major cache, scored where it lies); the stride moves only the key
// pointers, so the bits are those of the same keys packed.
func scores(f *File, fm format) {
	name := fm.fn("Scores")
	f.Func(name, fmt.Sprintf("(dst []float32, q []float32, k []%s, rows int, n int, dim int, stride int, scale float32)", fm.goTyp), 108,
		name+" sets dst[i*n+j] = scale·(q[i*dim:][:dim] · k[j*stride:][:dim]) for rows ≥ 1 query rows, n ≥ 1 keys, dim ≥ 1 and stride ≥ dim"+fm.shapeDoc()+".")
	f.I("MOVD dst_base+0(FP), %s", dstCol)
	f.I("MOVD k_base+48(FP), %s", keys)
	f.I("MOVD n+80(FP), %s", keysLeft)
	f.I("LSL $2, %s, %s", keysLeft, dstStride)
	f.I("MOVD dim+88(FP), %s", dim)
	f.I("MOVD stride+96(FP), %s", kStride)
	fm.strideBytes(f, kStride, "R11")
	if fm.q8 {
		loadQ8Lanes(f, 12, "R11")
	}
	f.I("LSL $2, %s, %s", dim, qStride)
	f.I("FMOVS scale+104(FP), F%d", scaleV)
	f.I("VDUP V%d.S[0], V%d.S4", scaleV, scaleV)
	for _, nk := range []int{tileKeys, 1} {
		top, done := fmt.Sprintf("keys%d", nk), fmt.Sprintf("keys%ddone", nk)
		f.Label(top)
		f.I("CMP $%d, %s", nk, keysLeft)
		f.I("BLT %s", done)
		queryPass(f, fm, nk)
		f.I("MOVD $%d, R11", nk)
		f.I("MADD %s, %s, R11, %s", kStride, keys, keys) // keys += nk·kStride
		f.I("ADD $%d, %s", 4*nk, dstCol)
		f.I("SUB $%d, %s", nk, keysLeft)
		f.I("B %s", top)
		f.Label(done)
	}
	f.I("RET")
}

// queryPass scores every query row against the current tile of nk keys.
func queryPass(f *File, fm format, nk int) {
	f.I("MOVD q_base+24(FP), %s", queries)
	f.I("MOVD %s, %s", dstCol, dstTile)
	f.I("MOVD rows+72(FP), %s", rowsLeft)
	for nr := tileRows; nr >= 1; nr /= 2 {
		top, done := fmt.Sprintf("rows%d_keys%d", nr, nk), fmt.Sprintf("rows%d_keys%d_done", nr, nk)
		f.Label(top)
		f.I("CMP $%d, %s", nr, rowsLeft)
		f.I("BLT %s", done)
		tile(f, fm, nr, nk)
		f.I("MOVD $%d, R11", nr)
		f.I("MADD %s, %s, R11, %s", qStride, queries, queries)
		f.I("MADD %s, %s, R11, %s", dstStride, dstTile, dstTile)
		f.I("SUB $%d, %s", nr, rowsLeft)
		if nr == tileRows {
			f.I("B %s", top) // after this loop fewer than tileRows rows remain, so
		} // each smaller size runs at most once.
		f.Label(done)
	}
}

// tile computes nr×nk dot products: first dim mod 4 elements one at a time in the low
// lanes (the scalar writes zero the rest, which is still zero), then four at a time;
// then each row's accumulators are reduced pairwise, scaled and stored. q8_0 keys
// have no such elements (dim is a multiple of 32); their scales are loaded into lane 0
// of V8–V11 as each block starts, and V12 holds q8Lanes.
func tile(f *File, fm format, nr, nk int) {
	id := fmt.Sprintf("%dx%d", nr, nk)
	f.I("// Tile of %d query rows × %d keys.", nr, nk)
	f.I("MOVD %s, %s", queries, qRow(0))
	for r := 1; r < nr; r++ {
		f.I("ADD %s, %s, %s", qStride, qRow(r-1), qRow(r))
	}
	f.I("MOVD %s, %s", keys, kRow(0))
	for j := 1; j < nk; j++ {
		f.I("ADD %s, %s, %s", kStride, kRow(j-1), kRow(j))
	}
	for r := range nr {
		for j := range nk {
			v := accV(r, j)
			f.I("VEOR V%d.B16, V%d.B16, V%d.B16", v, v, v)
		}
	}
	if !fm.q8 {
		tileHead(f, fm, nr, nk, id)
	}
	f.I("AND $-4, %s, %s", dim, left)
	f.Label("loop" + id)
	f.I("CBZ %s, reduce%s", left, id)
	if fm.q8 {
		f.I("TST $%d, %s", q8Values-1, left)
		f.I("BNE quants%s", id)
		for j := range nk {
			loadScale(f, kRow(j), V(8+j), "R15")
		}
		f.Label("quants" + id)
		for j := range nk {
			q8Load4(f, kRow(j), V(4+j), V(8+j), 12, 0)
		}
	} else {
		for j := range nk {
			fm.load4(f, kRow(j), V(4+j))
		}
	}
	for r := range nr {
		operandF32.load4(f, qRow(r), V(r))
	}
	for r := range nr {
		for j := range nk {
			f.I("VFMLA V%d.S4, V%d.S4, V%d.S4", 4+j, r, accV(r, j))
		}
	}
	f.I("SUB $4, %s", left)
	f.I("B loop%s", id)
	tileReduce(f, nr, nk, id)
}

// tileHead writes the tile's first dim mod 4 elements, one at a time.
func tileHead(f *File, fm format, nr, nk int, id string) {
	f.I("AND $3, %s, %s", dim, left)
	f.Label("head" + id)
	f.I("CBZ %s, body%s", left, id)
	for j := range nk {
		fm.widen1(f, kRow(j), V(4+j), "R15")
	}
	for r := range nr {
		operandF32.load1(f, qRow(r), 0)
		for j := range nk {
			a := accV(r, j)
			f.I("FMADDS F%d, F%d, F0, F%d", 4+j, a, a)
		}
	}
	f.I("SUB $1, %s", left)
	f.I("B head%s", id)
	f.Label("body" + id)
}

// tileReduce reduces each row's accumulators pairwise, scales and stores them.
func tileReduce(f *File, nr, nk int, id string) {
	f.Label("reduce" + id)
	f.I("MOVD %s, R11", dstTile)
	for r := range nr {
		if nk == tileKeys {
			// Three rounds of pairwise adds leave the row's four sums in key order.
			f.W(FADDP4S(8, accV(r, 0), accV(r, 1)), FADDP4S(9, accV(r, 2), accV(r, 3)),
				FADDP4S(8, 8, 9), FMUL4S(8, 8, scaleV))
			f.I("VST1 [V8.S4], (R11)")
		} else {
			f.W(FADDP4S(8, accV(r, 0), accV(r, 0)), FADDP2S(8, 8))
			f.I("FMULS F%d, F8, F8", scaleV)
			f.I("FMOVS F8, (R11)")
		}
		if r < nr-1 {
			f.I("ADD %s, R11", dstStride)
		}
	}
}
