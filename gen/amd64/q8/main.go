// Command q8 generates asm/q8_amd64.s: ggml's q8_0 quantization and dequantization,
// one 32-value block per iteration, in four ymm (AVX2) or two zmm (AVX-512) vectors.
//
// Quantize is bit for bit ggml's quantize_row_q8_0_ref as package q8's doc states it;
// the comments below say how each step reproduces the C.
package main

import (
	"fmt"
	"math"

	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

const (
	blockLen  = 32 // values per block, ggml's QK8_0
	blockSize = 34 // bytes per block: the half scale, then 32 int8 quants
)

func main() {
	Header()
	for _, isa := range Both {
		quantize(isa)
		dequantize(isa)
	}
	Generate()
}

var consts = map[string]Mem{}

// splat is a float32 constant in memory for VBROADCASTSS, or a table of words.
func words(name string, ws ...uint32) Mem {
	if m, ok := consts[name]; ok {
		return m
	}
	m := GLOBL("q8"+name, RODATA|NOPTR)
	for i, w := range ws {
		DATA(4*i, U32(w))
	}
	consts[name] = m
	return m
}

func f32(v float32) uint32 { return math.Float32bits(v) }

// quantize writes one block per iteration. Per block:
//
//   - amax: ggml's running MAX(amax, fabsf(x)) is amax > |x| ? amax : |x|, which is
//     VMAXSS(|x|, amax) exactly (MAXSS returns its second source when either is NaN).
//     Without NaN in the block, max is associative and the tree of VMAXPS over the
//     block's vectors gives the same value; a block with a NaN (one VCMPPS unordered
//     test per vector pair) takes the chain of 32 VMAXSS in the C's order instead.
//     A NaN amax becomes the canonical quiet NaN, so that VCVTPS2PH gives D = 0x7e00,
//     what GGML_FP32_TO_FP16 gives for every NaN.
//   - d = amax/127 and id = 1/d with VDIVSS, as the C divides; id = 0 where d == 0
//     (an unordered-or-not-equal compare, true for NaN as C's "d ?" is).
//   - D = VCVTPS2PH with rounding immediate 0: nearest even, subnormals kept, overflow
//     to Inf, whatever MXCSR says.
//   - q = roundf(x·id): with t = trunc(y) and y = x·id (VMULPS, one rounding as in the
//     C), roundf(y) is t + sign(y) where |y − t| ≥ 0.5 and t elsewhere. Both steps are
//     exact: for |y| < 2²³, y − t is y's fractional part, whose bits are among y's own
//     (no rounding), and t ± 1 is an integer below 2²⁴; for |y| ≥ 2²³ y is an integer,
//     so t = y and the fraction is 0. Adding 0.5 and truncating instead would round
//     0.49999997 up (the sum rounds to 1). For ±Inf the fraction is NaN, the compare
//     false, and t = ±Inf stays; NaN stays NaN.
//   - int8: VCVTTPS2DQ truncates the (integral) r to int32, giving 0x80000000 for NaN,
//     ±Inf and |r| ≥ 2³¹ as x86's scalar CVTTSS2SI does, and the low byte of each lane
//     is kept (a mask and unsigned packs on AVX2, VPMOVDB on AVX-512), as the C's
//     conversion compiles to on x86.
func quantize(isa ISA) {
	name := "Q8Quantize" + isa.Suffix
	TEXT(name, NOSPLIT, "func(dst []byte, src []float32)")
	Pragma("noescape")
	Doc(name + " quantizes len(src)/32 blocks of src into dst[:34*(len(src)/32)] as ggml's quantize_row_q8_0_ref.")
	dst := Mem{Base: Load(Param("dst").Base(), GP64())}
	src := Mem{Base: Load(Param("src").Base(), GP64())}
	n := Load(Param("src").Len(), GP64())
	SHRQ(U8(5), n)

	nv := blockLen / isa.Lanes
	absMask, half, one := isa.Vec(), isa.Vec(), isa.Vec()
	VBROADCASTSS(words("abs", 0x7fffffff), absMask)
	VBROADCASTSS(words("half", f32(0.5)), half)
	VBROADCASTSS(words("one", f32(1)), one)
	c127 := XMM()
	VMOVSS(words("c127", f32(127)), c127)

	id := fmt.Sprintf("_%s", isa.Suffix)
	top, slow, haveMax, done := "block"+id, "chain"+id, "scale"+id, "done"+id
	Label(top)
	TESTQ(n, n)
	JZ(LabelRef(done))

	v := make([]reg.VecVirtual, nv)
	for i := range v {
		v[i] = isa.Vec()
		VMOVUPS(src.Offset(i*isa.Bytes()), v[i])
	}
	// Any NaN in the block?
	if isa.Lanes == 16 {
		k := K()
		VCMPPS(U8(3), v[1], v[0], k) // unordered
		KORTESTW(k, k)
	} else {
		m0, m1 := isa.Vec(), isa.Vec()
		VCMPPS(U8(3), v[1], v[0], m0)
		VCMPPS(U8(3), v[3], v[2], m1)
		VORPS(m1, m0, m0)
		VTESTPS(m0, m0)
	}
	JNZ(LabelRef(slow))

	// Tree of maxima of |x|.
	amax := XMM()
	{
		a := make([]reg.VecVirtual, nv)
		for i := range a {
			a[i] = isa.Vec()
			VANDPS(absMask, v[i], a[i])
		}
		for len(a) > 1 {
			VMAXPS(a[1], a[0], a[0])
			if len(a) == 4 {
				VMAXPS(a[3], a[2], a[2])
				VMAXPS(a[2], a[0], a[0])
			}
			a = a[:1]
		}
		m := a[0]
		if isa.Lanes == 16 {
			y := YMM()
			VEXTRACTF64X4(U8(1), m, y)
			VMAXPS(y, m.AsY(), y)
			VEXTRACTF32X4(U8(1), y, amax)
			VMAXPS(amax, y.AsX(), amax)
		} else {
			VEXTRACTF128(U8(1), m, amax)
			VMAXPS(amax, m.AsX(), amax)
		}
		t := XMM()
		VPERMILPS(U8(0x4e), amax, t)
		VMAXPS(t, amax, amax)
		VPERMILPS(U8(0xb1), amax, t)
		VMAXPS(t, amax, amax)
	}
	Label(haveMax)

	// d, id and D.
	d, inv, nz := XMM(), XMM(), XMM()
	VDIVSS(c127, amax, d)
	VDIVSS(d, one.AsX(), inv)
	VXORPS(nz, nz, nz)
	VCMPSS(U8(4), nz, d, nz) // d != 0, or NaN
	VANDPS(nz, inv, inv)
	h, bits := XMM(), GP32()
	VCVTPS2PH(U8(0), d, h)
	VMOVD(h, bits)
	MOVW(bits.As16(), dst)
	idv := isa.Vec()
	VBROADCASTSS(inv, idv)

	// q = int8(roundf(x·id)).
	for i := range v {
		y, t, f, s := isa.Vec(), isa.Vec(), isa.Vec(), isa.Vec()
		VMULPS(idv, v[i], y)
		VANDNPS(y, absMask, s) // sign(y)
		VORPS(one, s, s)       // ±1
		if isa.Lanes == 16 {
			VRNDSCALEPS(U8(3), y, t) // trunc
			VSUBPS(t, y, f)
			VANDPS(absMask, f, f)
			k := K()
			VCMPPS(U8(13), half, f, k) // |y − t| ≥ 0.5 (false for NaN)
			VADDPS(s, t, k, t)
		} else {
			VROUNDPS(U8(3), y, t) // trunc
			VSUBPS(t, y, f)
			VANDPS(absMask, f, f)
			VCMPPS(U8(13), half, f, f) // |y − t| ≥ 0.5 (false for NaN)
			VANDPS(f, s, s)
			VADDPS(s, t, t)
		}
		VCVTTPS2DQ(t, v[i])
	}
	if isa.Lanes == 16 {
		for i := range v {
			VPMOVDB(v[i], dst.Offset(2+16*i))
		}
	} else {
		// Low bytes of 32 int32 lanes, in order: mask to 0..255 so that the unsigned
		// packs do not saturate, pack within 128-bit lanes, and put the dwords back in
		// order with VPERMD.
		lo := isa.Vec()
		VPBROADCASTD(words("lowByte", 0xff), lo)
		for i := range v {
			VPAND(lo, v[i], v[i])
		}
		VPACKUSDW(v[1], v[0], v[0])
		VPACKUSDW(v[3], v[2], v[2])
		VPACKUSWB(v[2], v[0], v[0])
		perm := isa.Vec()
		VMOVDQU(words("perm", 0, 4, 1, 5, 2, 6, 3, 7), perm)
		VPERMD(v[0], perm, v[0])
		VMOVDQU(v[0], dst.Offset(2))
	}
	ADDQ(U32(4*blockLen), src.Base)
	ADDQ(U32(blockSize), dst.Base)
	DECQ(n)
	JMP(LabelRef(top))

	// A block with a NaN: ggml's chain in order, then the canonical NaN for a NaN amax.
	Label(slow)
	{
		t := XMM()
		VXORPS(amax, amax, amax)
		for j := 0; j < blockLen; j++ {
			VMOVSS(src.Offset(4*j), t)
			VANDPS(absMask.AsX(), t, t)
			VMAXSS(t, amax, amax) // amax > |x| ? amax : |x|
		}
		VUCOMISS(amax, amax)
		JPC(LabelRef(haveMax)) // ordered
		VMOVSS(words("qnan", 0x7fc00000), amax)
		JMP(LabelRef(haveMax))
	}

	Label(done)
	VZEROUPPER()
	RET()
}

// dequantize widens each block's D with VCVTPH2PS and multiplies the sign-extended,
// converted quants by it: q·D is exact (8 by 11 significant bits).
func dequantize(isa ISA) {
	name := "Q8Dequantize" + isa.Suffix
	TEXT(name, NOSPLIT, "func(dst []float32, src []byte)")
	Pragma("noescape")
	Doc(name + " writes the values of len(dst)/32 q8_0 blocks of src into dst.")
	dst := Mem{Base: Load(Param("dst").Base(), GP64())}
	src := Mem{Base: Load(Param("src").Base(), GP64())}
	n := Load(Param("dst").Len(), GP64())
	SHRQ(U8(5), n)

	id := fmt.Sprintf("_%s", isa.Suffix)
	top, done := "deq"+id, "deqdone"+id
	Label(top)
	TESTQ(n, n)
	JZ(LabelRef(done))
	h, x, d := GP32(), XMM(), isa.Vec()
	MOVWLZX(src, h)
	VMOVD(h, x)
	VCVTPH2PS(x, x)
	VBROADCASTSS(x, d)
	for i := 0; i < blockLen/isa.Lanes; i++ {
		q := isa.Vec()
		VPMOVSXBD(src.Offset(2+isa.Lanes*i), q)
		VCVTDQ2PS(q, q)
		VMULPS(d, q, q)
		VMOVUPS(q, dst.Offset(i*isa.Bytes()))
	}
	ADDQ(U32(blockSize), src.Base)
	ADDQ(U32(4*blockLen), dst.Base)
	DECQ(n)
	JMP(LabelRef(top))
	Label(done)
	VZEROUPPER()
	RET()
}
