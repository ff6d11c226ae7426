// Command bf16 generates asm/bf16_amd64.s: bulk bfloat16⇄single conversion in integer
// arithmetic, for AVX2 (ymm) and AVX-512 (zmm).
//
// Narrowing computes package bf16's reference formula lane by lane: (u + 0x7fff +
// ((u>>16)&1)) >> 16, or u>>16 | 0x0040 where u is a NaN. It does not use AVX512_BF16's
// VCVTNEPS2BF16, although that rounds the same way and quiets NaNs the same way: it
// treats subnormal inputs as zero whatever MXCSR says (Intel SDM, "VCVTNEPS2BF16"), so it
// differs from the reference on every nonzero float below 2⁻¹²⁶ in magnitude that does
// not round to zero. On the Zen 5 this was written on it gave 0x0000 for 0x00018000
// (the reference: 0x0002) and for 0x007fffff (0x0080, the smallest normal), and 0x8000
// for 0x807f8000 (0x8080), while agreeing on ties, overflow and NaNs. Patching those
// lanes back would cost about as much as the integer formula, which also runs on every
// AVX2 and AVX-512 CPU rather than only those with AVX512_BF16.
package main

import (
	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// unroll is the number of vectors converted per loop iteration, an even number so that
// AVX2 packs its narrowed vectors in pairs. It was not measured: the machine this was
// written on was shared and loaded, and no speed target was set.
const unroll = 4

func main() {
	Header()
	for _, isa := range Both {
		toFloat32(isa)
		fromFloat32(isa)
	}
	Generate()
}

// toFloat32 widens: VPMOVZXWD loads Lanes bfloat16s zero-extended into dwords, and a
// shift left by 16 makes them the floats' bits.
func toFloat32(isa ISA) {
	name := "BF16ToFloat32" + isa.Suffix
	TEXT(name, NOSPLIT, "func(dst []float32, src []uint16)")
	Pragma("noescape")
	Doc(name + " widens len(src) bfloat16s into dst[:len(src)]: each one's bits shifted left 16.")
	dst := Mem{Base: Load(Param("dst").Base(), GP64())}
	src := Mem{Base: Load(Param("src").Base(), GP64())}
	n := Load(Param("src").Len(), GP64())

	Loop(isa, n, unroll, func(k int) {
		vs := make([]reg.VecVirtual, k)
		for u := range vs {
			vs[u] = isa.Vec()
			VPMOVZXWD(src.Offset(u*2*isa.Lanes), vs[u])
			VPSLLD(U8(16), vs[u], vs[u])
		}
		for u, v := range vs {
			storeVec(isa, v, dst.Offset(u*isa.Bytes()))
		}
		ADDQ(U32(k*2*isa.Lanes), src.Base)
		ADDQ(U32(k*isa.Bytes()), dst.Base)
	}, func() {
		h := GP32()
		MOVWLZX(src, h)
		SHLL(U8(16), h)
		MOVL(h, dst)
		ADDQ(U8(2), src.Base)
		ADDQ(U8(4), dst.Base)
	})
	VZEROUPPER()
	RET()
}

// storeVec stores a whole vector: VMOVDQU32 for zmm, VMOVDQU for ymm.
func storeVec(isa ISA, v reg.VecVirtual, m Mem) {
	if isa.Lanes == 16 {
		VMOVDQU32(v, m)
	} else {
		VMOVDQU(v, m)
	}
}

// broadcast returns a vector with c in every dword lane, set from a general register.
func broadcast(isa ISA, c uint32) reg.VecVirtual {
	g, v := GP32(), isa.Vec()
	MOVL(U32(c), g)
	VMOVD(g, v.AsX())
	VPBROADCASTD(v.AsX(), v)
	return v
}

// constants are the narrowing's operands, broadcast once per call.
type constants struct {
	one, bias, abs, inf, quiet reg.VecVirtual
}

// fromFloat32 narrows with package bf16's formula (see the package comment here).
// AVX2 has no unsigned compare or mask registers: the NaN test is a signed compare of
// |u| (below 2³¹, so signed order is unsigned order) with Inf's bits, and VPBLENDVB
// picks the quieted NaN; the dwords, each below 2¹⁶, are then packed in pairs of
// vectors with VPACKUSDW, whose per-128-bit-lane order VPERMQ restores. AVX-512
// compares into a mask register, merges the quieted NaNs under it, and truncates each
// vector's dwords to words with VPMOVDW.
func fromFloat32(isa ISA) {
	name := "BF16FromFloat32" + isa.Suffix
	TEXT(name, NOSPLIT, "func(dst []uint16, src []float32)")
	Pragma("noescape")
	Doc(name + " narrows len(src) singles into dst[:len(src)] as bfloat16s, rounding to nearest even with subnormals kept and NaNs quieted.")
	dst := Mem{Base: Load(Param("dst").Base(), GP64())}
	src := Mem{Base: Load(Param("src").Base(), GP64())}
	n := Load(Param("src").Len(), GP64())
	c := constants{
		one:   broadcast(isa, 1),
		bias:  broadcast(isa, 0x7fff),
		abs:   broadcast(isa, 0x7fffffff),
		inf:   broadcast(isa, 0x7f800000),
		quiet: broadcast(isa, 0x0040),
	}

	Loop(isa, n, unroll, func(k int) {
		if isa.Lanes == 16 {
			for u := range k {
				r := narrowAVX512(c, src.Offset(u*isa.Bytes()))
				VMOVDQU(r.AsY(), dst.Offset(u*2*isa.Lanes))
			}
		} else if k == 1 {
			r := narrowAVX2(c, src)
			hi := XMM()
			VEXTRACTI128(U8(1), r, hi)
			VPACKUSDW(hi, r.AsX(), hi)
			VMOVDQU(hi, dst)
		} else {
			for p := 0; p < k; p += 2 {
				r0 := narrowAVX2(c, src.Offset(p*isa.Bytes()))
				r1 := narrowAVX2(c, src.Offset((p+1)*isa.Bytes()))
				// Per 128-bit lane: r0's four words, r1's four; VPERMQ puts the
				// quadwords back in order r0 low, r0 high, r1 low, r1 high.
				VPACKUSDW(r1, r0, r0)
				VPERMQ(U8(0xd8), r0, r0)
				VMOVDQU(r0, dst.Offset(p*2*isa.Lanes))
			}
		}
		ADDQ(U32(k*isa.Bytes()), src.Base)
		ADDQ(U32(k*2*isa.Lanes), dst.Base)
	}, func() {
		u, r, q := GP32(), GP32(), GP32()
		MOVL(src, u)
		MOVL(u, r)
		SHRL(U8(16), r)
		MOVL(r, q)
		ANDL(U8(1), r)
		ADDL(u, r)
		ADDL(U32(0x7fff), r)
		SHRL(U8(16), r)
		ORL(U8(0x40), q)
		ANDL(U32(0x7fffffff), u)
		CMPL(u, U32(0x7f800000))
		CMOVLHI(q, r) // |u| above Inf's bits: a NaN
		MOVW(r.As16(), dst)
		ADDQ(U8(4), src.Base)
		ADDQ(U8(2), dst.Base)
	})
	VZEROUPPER()
	RET()
}

// narrowAVX2 returns the eight narrowed values of the floats at m, one per dword.
func narrowAVX2(c constants, m Mem) reg.VecVirtual {
	v, t, q, a := YMM(), YMM(), YMM(), YMM()
	VMOVDQU(m, v)
	VPSRLD(U8(16), v, t)
	VPOR(c.quiet, t, q) // the NaN result
	VPAND(c.one, t, t)
	VPADDD(v, t, t)
	VPADDD(c.bias, t, t)
	VPSRLD(U8(16), t, t) // the rounded result
	VPAND(c.abs, v, a)
	VPCMPGTD(c.inf, a, a) // |u| > Inf's bits: a NaN
	VPBLENDVB(a, q, t, t)
	return t
}

// narrowAVX512 returns the sixteen narrowed values of the floats at m, as words in the
// low half of the register.
func narrowAVX512(c constants, m Mem) reg.VecVirtual {
	v, t, a, r := ZMM(), ZMM(), ZMM(), ZMM()
	nan := K()
	VMOVDQU32(m, v)
	VPSRLD(U8(16), v, t)
	VPANDD(c.abs, v, a)
	VPCMPUD(U8(6), c.inf, a, nan) // 6: not less or equal; |u| > Inf's bits: a NaN
	VPANDD(c.one, t, r)
	VPADDD(v, r, r)
	VPADDD(c.bias, r, r)
	VPSRLD(U8(16), r, r)      // the rounded result
	VPORD(c.quiet, t, nan, r) // merged under the mask: NaN lanes get u>>16 | 0x40
	VPMOVDW(r, r.AsY())
	return r
}
