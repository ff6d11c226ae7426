package main

import (
	"fmt"

	. "github.com/kvsimd/kvsimd/gen/neon"
)

// The key formats of the score kernels and of the dot products with a float32 operand:
// fp16 and bfloat16 elements, and ggml's q8_0 blocks (34 bytes: an fp16 scale d, then
// 32 int8 quants q, whose values are q·d). Each kernel is written once over the format:
// only the widening of a key element differs, never the order of the fused
// multiply-adds, so for keys whose widened values are equal every format gives the
// fp16 kernel's bits. Every widening is exact: a half and a bfloat16 are floats with
// fewer bits, and q·d (|q| ≤ 127, 7 bits, and d's 11 significant bits) fits float32's
// 24. The bf16 and q8_0 widenings (SHLL; SXTL, SCVTF and FMUL) are ARMv8.0 Advanced
// SIMD, as FCVTL is.
type format struct {
	name  string // in the kernels' names: ScoresBF16NEON, and "" for fp16
	goTyp string // Go element type of the keys' slice
	q8    bool   // q8_0 blocks: dim is a multiple of 32, strides count blocks
	f32   bool   // float32 keys, loaded as they are
}

var (
	formatF16  = format{"", "uint16", false, false}
	formatBF16 = format{"BF16", "uint16", false, false}
	formatQ8   = format{"Q8", "byte", true, false}
	formatF32  = format{"F32", "float32", false, true}
	formats    = []format{formatF16, formatBF16, formatQ8, formatF32}
)

const (
	q8Block  = 34 // bytes of a q8_0 block
	q8Values = 32 // values of a q8_0 block
)

// fn names a kernel of the format: fn("Scores") is ScoresBF16NEON.
func (fm format) fn(base string) string { return base + fm.name + "NEON" }

// strideBytes turns the key stride in reg, in elements (in blocks for q8_0), into
// bytes; tmp is scratch.
func (fm format) strideBytes(f *File, reg, tmp string) {
	if fm.q8 {
		f.I("MOVD $%d, %s", q8Block, tmp)
		f.I("MUL %s, %s, %s", tmp, reg, reg)
		return
	}
	if fm.f32 {
		f.I("LSL $2, %s, %s", reg, reg)
		return
	}
	f.I("LSL $1, %s, %s", reg, reg)
}

// load4 loads the next four elements from ptr, post-incremented, as float32 into vd.
func (fm format) load4(f *File, ptr string, d V) {
	if fm.f32 {
		f.I("VLD1.P 16(%s), [V%d.S4]", ptr, d)
		return
	}
	f.I("VLD1.P 8(%s), [V%d.H4]", ptr, d)
	fm.widen(f, d)
}

// loadKey is load4 for the panels' keys, whose 16-bit elements come by a scalar 64-bit
// load (FMOVD) into the low half.
func (fm format) loadKey(f *File, ptr string, d V) {
	if fm.f32 {
		fm.load4(f, ptr, d)
		return
	}
	f.I("FMOVD.P 8(%s), F%d", ptr, d)
	fm.widen(f, d)
}

// widen widens the four 16-bit elements in the low half of vd in place into float32.
func (fm format) widen(f *File, d V) { fm.widenFrom(f, d, d) }

// widenFrom widens the four 16-bit elements in the low half of vn into vd.
func (fm format) widenFrom(f *File, d, n V) {
	if fm == formatBF16 {
		f.W(SHLL4S(d, n))
		return
	}
	f.W(FCVTL(d, n))
}

// widen1 loads one 16-bit element from ptr, post-incremented, as float32 into Fd;
// tmp is a scratch general register.
func (fm format) widen1(f *File, ptr string, d V, tmp string) {
	if fm.f32 {
		f.I("FMOVS.P 4(%s), F%d", ptr, d)
		return
	}
	f.I("MOVHU.P 2(%s), %s", ptr, tmp)
	if fm == formatBF16 {
		f.I("LSLW $16, %s, %s", tmp, tmp)
		f.I("FMOVS %s, F%d", tmp, d)
		return
	}
	f.I("FMOVS %s, F%d", tmp, d)
	f.W(FCVTSH(d, d))
}

// loadScale loads a q8_0 block's scale d from ptr, post-incremented past it, as
// float32 into lane 0 of vd (the rest zeroed); tmp is a scratch general register.
func loadScale(f *File, ptr string, d V, tmp string) {
	f.I("MOVHU.P 2(%s), %s", ptr, tmp)
	f.I("FMOVS %s, F%d", tmp, d)
	f.W(FCVTSH(d, d))
}

// q8Load4 loads four quants from ptr, post-incremented, and widens them into vd as
// float32 values q·d, with d lane lane of vector scale: TBL with the index vector idx
// (q8Lanes) puts quant i in the top byte of lane i, q·2²⁴ as an integer, which SCVTF
// with 24 fraction bits turns into q, then multiplied (exactly) by d. Three operations
// where sign-extending twice and converting take four: in the panel kernel, where the
// keys are widened once per panel, that was a tenth of the step (llvm-mca's Neoverse
// V2 model, an estimate).
func q8Load4(f *File, ptr string, d, scale, idx V, lane int) {
	f.I("FMOVS.P 4(%s), F%d", ptr, d)
	f.I("VTBL V%d.B16, [V%d.B16], V%d.B16", idx, d, d)
	f.W(SCVTFFixed4S(d, d, 24), FMULElem4S(d, d, scale, lane))
}

// q8Lanes is the TBL index of q8Load4: byte 3 of lane i is i, the others are out of
// range, which TBL reads as zero.
var q8Lanes = []uint32{0x00ffffff, 0x01ffffff, 0x02ffffff, 0x03ffffff}

// loadQ8Lanes loads q8Lanes into vd; tmp is a scratch general register.
func loadQ8Lanes(f *File, d V, tmp string) {
	f.I("MOVD $q8lanes<>(SB), %s", tmp)
	f.I("VLD1 (%s), [V%d.S4]", tmp, d)
}

// q8Widen16 widens the sixteen quants in raw into the four float32 vectors d..d+3,
// scaled by lane 0 of scale; mid and mid+1 are scratch.
func q8Widen16(f *File, raw, mid, d, scale V) {
	f.W(SXTL8H(mid, raw), SXTL28H(mid+1, raw),
		SXTL4S(d, mid), SXTL24S(d+1, mid), SXTL4S(d+2, mid+1), SXTL24S(d+3, mid+1))
	for i := range V(4) {
		f.W(SCVTF4S(d+i, d+i))
	}
	for i := range V(4) {
		f.W(FMULElem4S(d+i, d+i, scale, 0))
	}
}

// dotFormat writes DotF32BF16NEON or DotF32Q8NEON: DotF32F16's NEON body (dot) with b
// widened by its format. Unlike the entries, they are plain functions registered with
// the neon variant, and return a result that is not finite as it is: their callers
// settle it.
func dotFormat(f *File, fm format) {
	name := "DotF32" + fm.name + "NEON"
	f.Func(name, fmt.Sprintf("(a []float32, b []%s) float32", fm.goTyp), 52,
		fmt.Sprintf("%s returns the dot product of a and b (%s), accumulated in float32 in DotF32F16's order; len(b) must be %s.", name, map[bool]string{false: "bfloat16 bits", true: "the bytes of len(a)/32 q8_0 blocks"}[fm.q8], map[bool]string{false: "len(a)", true: "34·len(a)/32"}[fm.q8]))
	f.I("MOVD a_base+0(FP), R0")
	f.I("MOVD b_base+24(FP), R1")
	f.I("MOVD a_len+8(FP), R2")
	if !fm.q8 {
		dot(f, operandF32, operandBF16, false)
		return
	}
	// dot's loop of sixteen over whole blocks: its loop of four and its tail never run
	// for a multiple of 32.
	for v := 16; v < 20; v++ {
		f.I("VEOR V%d.B16, V%d.B16, V%d.B16", v, v, v)
	}
	f.I("LSR $5, R2")
	f.Label("block")
	f.I("CBZ R2, reduce")
	loadScale(f, "R1", 12, "R15")
	for range 2 {
		f.I("VLD1.P 16(R1), [V10.B16]")
		q8Widen16(f, 10, 8, 4, 12)
		operandF32.load16(f, "R0", 0, 0)
		for i := V(0); i < 4; i++ {
			f.I("VFMLA V%d.S4, V%d.S4, V%d.S4", 4+i, i, 16+i)
		}
	}
	f.I("SUB $1, R2")
	f.I("B block")
	f.Label("reduce")
	f.W(FADD4S(16, 16, 17), FADD4S(18, 18, 19), FADD4S(16, 16, 18), FADDP4S(16, 16, 16), FADDP2S(16, 16))
	f.I("FMOVS F16, ret+48(FP)")
	f.I("RET")
}

// shapeDoc is the condition on the shapes that a format adds to a kernel's doc.
func (fm format) shapeDoc() string {
	if fm.q8 {
		return " (dim a multiple of 32, stride counted in blocks)"
	}
	return ""
}
