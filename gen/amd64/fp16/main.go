// Command fp16 generates asm/fp16_amd64.s: bulk half⇄single conversion with F16C.
package main

import (
	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// unroll is the number of vectors converted per loop iteration. All conversions of an
// iteration are issued before its stores, in distinct registers. At n = 32768 (an
// L2-bound stream) 8 beat 4 by about 10% "on Zen with AVX2" when this was written (the
// Zen was not recorded), so AVX-512 keeps 8; on Zen 1, an AVX2-only CPU and so one
// whose default variant this is, 4 beat 8 by 4–5% (benchstat, 10 interleaved runs: at
// n = 64, 1024 and 32768), and 16, or each store right after its conversion, was slower.
func unroll(isa ISA) int {
	if isa.Lanes == 8 {
		return 4
	}
	return 8
}

func main() {
	Header()
	for _, isa := range Both {
		toFloat32(isa, false)
		fromFloat32(isa)
	}
	toFloat32(AVX512, true)
	Generate()
}

// toFloat32 widens: VCVTPH2PS loads Lanes halves straight from memory. With stream it
// stores with non-temporal stores (VMOVNTPS, a whole line per zmm store), for a dst too
// large for the caches: the lines go to memory without being read first. dst must then
// be 64-byte aligned, and an SFENCE orders the stores before the return, as ordinary
// stores would be.
func toFloat32(isa ISA, stream bool) {
	name, store := "ToFloat32"+isa.Suffix, func(v, m Op) { VMOVUPS(v, m) }
	doc := []string{name + " widens len(src) halves into dst[:len(src)] with F16C."}
	if stream {
		name, store = "ToFloat32Stream"+isa.Suffix, func(v, m Op) { VMOVNTPS(v, m) }
		doc = []string{name + " widens len(src) halves into dst[:len(src)] with F16C, storing whole",
			"vectors with non-temporal stores: dst must be 64-byte aligned."}
	}
	TEXT(name, NOSPLIT, "func(dst []float32, src []uint16)")
	Pragma("noescape")
	Doc(doc...)
	dst := Mem{Base: Load(Param("dst").Base(), GP64())}
	src := Mem{Base: Load(Param("src").Base(), GP64())}
	n := Load(Param("src").Len(), GP64())

	Loop(isa, n, unroll(isa), func(k int) {
		vs := make([]VecVirtual, k)
		for u := range vs {
			vs[u] = isa.Vec()
			VCVTPH2PS(src.Offset(u*2*isa.Lanes), vs[u])
		}
		for u, v := range vs {
			store(v, dst.Offset(u*isa.Bytes()))
		}
		ADDQ(U32(k*2*isa.Lanes), src.Base)
		ADDQ(U32(k*isa.Bytes()), dst.Base)
	}, func() {
		h, x := GP32(), XMM()
		MOVWLZX(src, h)
		VMOVD(h, x)
		VCVTPH2PS(x, x)
		VMOVSS(x, dst)
		ADDQ(U8(2), src.Base)
		ADDQ(U8(4), dst.Base)
	})
	if stream {
		SFENCE()
	}
	VZEROUPPER()
	RET()
}

// fromFloat32 narrows with rounding-control immediate 0: round to nearest even,
// regardless of MXCSR. Conversion goes to a register and then to memory, because the
// memory form of VCVTPS2PH is microcoded on Zen.
func fromFloat32(isa ISA) {
	name := "FromFloat32" + isa.Suffix
	TEXT(name, NOSPLIT, "func(dst []uint16, src []float32)")
	Pragma("noescape")
	Doc(name + " narrows len(src) singles into dst[:len(src)] with F16C, rounding to nearest even.")
	dst := Mem{Base: Load(Param("dst").Base(), GP64())}
	src := Mem{Base: Load(Param("src").Base(), GP64())}
	n := Load(Param("src").Len(), GP64())

	Loop(isa, n, unroll(isa), func(k int) {
		vs := make([]VecVirtual, k)
		for u := range vs {
			vs[u] = isa.Vec()
			VMOVUPS(src.Offset(u*isa.Bytes()), vs[u])
			VCVTPS2PH(U8(0), vs[u], isa.Half(vs[u]))
		}
		for u, v := range vs {
			VMOVDQU(isa.Half(v), dst.Offset(u*2*isa.Lanes))
		}
		ADDQ(U32(k*isa.Bytes()), src.Base)
		ADDQ(U32(k*2*isa.Lanes), dst.Base)
	}, func() {
		x, h := XMM(), GP32()
		VMOVSS(src, x)
		VCVTPS2PH(U8(0), x, x)
		VMOVD(x, h)
		MOVW(h.As16(), dst)
		ADDQ(U8(4), src.Base)
		ADDQ(U8(2), dst.Base)
	})
	VZEROUPPER()
	RET()
}
