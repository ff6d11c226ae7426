// Command softmax generates asm/softmax_amd64.s: the three passes of Softmax (Max,
// ExpSum, Scale) and the reductions Sum and Add, for AVX2 and AVX-512 from one body.
package main

import (
	"math"

	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// unroll is the number of vectors per iteration of the memory-bound loops (Max, Sum,
// Add, Scale): enough independent accumulators to hide the add latency.
const unroll = 4

// expUnroll is the number of vectors whose exponentials are interleaved. Each keeps
// four registers live; with max, −max, two sums and the widening temporaries, two fit
// AVX2's sixteen. (Three do not: avo then allocates Y16+, which needs an EVEX encoding
// that AVX2-only CPUs fault on.) AVX-512 uses the same count so that its code is the
// code the AVX2 tests run.
const expUnroll = 2

func main() {
	Header()
	for _, isa := range Both {
		maxKernel(isa)
		sumKernel(isa)
		addKernel(isa)
		scaleKernel(isa)
		expSumKernel(isa)
	}
	Generate()
}

// tables holds one 64-byte table of 16 copies per constant, so that AVX2 and AVX-512
// both take it as a full-width memory operand.
var tables = map[string]Mem{}

func splat(name string, v float32) Mem {
	if m, ok := tables[name]; ok {
		return m
	}
	m := GLOBL(name, RODATA|NOPTR)
	for i := 0; i < 16; i++ {
		DATA(4*i, U32(math.Float32bits(v)))
	}
	tables[name] = m
	return m
}

// highHalf extracts the upper half of v into the half-width register h.
func highHalf(isa ISA, v reg.VecVirtual, h reg.Register) {
	if isa.Lanes == 16 {
		VEXTRACTF64X4(U8(1), v, h)
	} else {
		VEXTRACTF128(U8(1), v, h)
	}
}

// fold reduces v to its lowest 128 bits with op, halving the width each step.
func fold(isa ISA, v reg.VecVirtual, op func(a, b, dst Op)) reg.Register {
	y := v
	if isa.Lanes == 16 {
		h := YMM()
		VEXTRACTF64X4(U8(1), v, h)
		op(h, v.AsY(), h)
		y = h
	}
	x := XMM()
	VEXTRACTF128(U8(1), y, x)
	op(x, y.AsX(), x)
	return x
}

// maxKernel keeps the float maximum with VMAXPS and, because VMAXPS drops a NaN in
// one operand order or the other, a separate NaN detector: the largest bit pattern
// shifted left by one (sign dropped); only NaNs exceed 0xff000000 (-Inf<<1 and
// +Inf<<1 are equal to it). Integer ops keep AVX2 and AVX-512 identical.
func maxKernel(isa ISA) {
	name := "Max" + isa.Suffix
	TEXT(name, NOSPLIT, "func(x []float32) (max float32, nan bool)")
	Pragma("noescape")
	Doc(name+" returns the largest element of x (-Inf if x is empty, ignoring NaNs) and whether x holds a NaN.",
		"The sign of a zero maximum is unspecified.")
	x := Mem{Base: Load(Param("x").Base(), GP64())}
	n := Load(Param("x").Len(), GP64())
	negInf := splat("negInf", float32(math.Inf(-1)))
	var acc, nan [unroll]reg.VecVirtual
	for u := range acc {
		acc[u], nan[u] = isa.Vec(), isa.Vec()
		VMOVUPS(negInf, acc[u])
		VPSLLD(U8(1), acc[u], nan[u])
	}
	sacc, snan := XMM(), XMM()
	VMOVUPS(negInf, sacc)
	VPSLLD(U8(1), sacc, snan)

	Loop(isa, n, unroll, func(k int) {
		for u := 0; u < k; u++ {
			t := isa.Vec()
			VMOVUPS(x.Offset(u*isa.Bytes()), t)
			VMAXPS(t, acc[u], acc[u])
			VPSLLD(U8(1), t, t)
			VPMAXUD(t, nan[u], nan[u])
		}
		ADDQ(U32(k*isa.Bytes()), x.Base)
	}, func() {
		t := XMM()
		VMOVSS(x, t)
		VMAXSS(t, sacc, sacc)
		VPSLLD(U8(1), t, t)
		VPMAXUD(t, snan, snan)
		ADDQ(U8(4), x.Base)
	})
	for u := 1; u < unroll; u++ {
		VMAXPS(acc[u], acc[0], acc[0])
		VPMAXUD(nan[u], nan[0], nan[0])
	}
	m := fold(isa, acc[0], func(a, b, d Op) { VMAXPS(a, b, d) })
	VMAXPS(sacc, m, m)
	t := XMM()
	VMOVHLPS(m, m, t)
	VMAXPS(t, m, m)
	VPSHUFD(U8(1), m, t)
	VMAXSS(t, m, m)
	Store(m, ReturnIndex(0))

	b := fold(isa, nan[0], func(a, b, d Op) { VPMAXUD(a, b, d) })
	VPMAXUD(snan, b, b)
	VPSHUFD(U8(0x0e), b, t)
	VPMAXUD(t, b, b)
	VPSHUFD(U8(1), b, t)
	VPMAXUD(t, b, b)
	bits, flag := GP32(), GP8()
	MOVD(b, bits)
	CMPL(bits, U32(0xff000000))
	SETHI(flag)
	Store(flag, ReturnIndex(1))
	VZEROUPPER()
	RET()
}

// sumKernel widens every element to float64 before adding (VCVTPS2PD straight from
// memory), so the only float32 rounding is the caller's final one.
func sumKernel(isa ISA) {
	name := "Sum" + isa.Suffix
	TEXT(name, NOSPLIT, "func(x []float32) float64")
	Pragma("noescape")
	Doc(name + " returns the float64 sum of the elements of x.")
	x := Mem{Base: Load(Param("x").Base(), GP64())}
	n := Load(Param("x").Len(), GP64())
	zero := splat("zero", 0)
	var acc [unroll]reg.VecVirtual
	for u := range acc {
		acc[u] = isa.Vec()
		VMOVUPS(zero, acc[u])
	}
	sacc := XMM()
	VMOVUPS(zero, sacc)
	Loop(isa, n, unroll, func(k int) {
		for u := 0; u < k; u++ {
			for h := 0; h < 2; h++ {
				t := isa.Vec()
				VCVTPS2PD(x.Offset(u*isa.Bytes()+h*isa.Bytes()/2), t)
				a := acc[(2*u+h)%unroll]
				VADDPD(t, a, a)
			}
		}
		ADDQ(U32(k*isa.Bytes()), x.Base)
	}, func() {
		t := XMM()
		VCVTSS2SD(x, t, t)
		VADDSD(t, sacc, sacc)
		ADDQ(U8(4), x.Base)
	})
	Store(reduceSum(isa, acc[:], sacc), ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// reduceSum adds the float64 vectors acc and the scalar sacc into one float64.
func reduceSum(isa ISA, acc []reg.VecVirtual, sacc reg.VecVirtual) reg.Register {
	for u := 1; u < len(acc); u++ {
		VADDPD(acc[u], acc[0], acc[0])
	}
	s := fold(isa, acc[0], func(a, b, d Op) { VADDPD(a, b, d) })
	t := XMM()
	VUNPCKHPD(s, s, t)
	VADDSD(t, s, s)
	VADDSD(sacc, s, s)
	return s
}

func addKernel(isa ISA) {
	name := "Add" + isa.Suffix
	TEXT(name, NOSPLIT, "func(dst []float32, src []float32)")
	Pragma("noescape")
	Doc(name + " adds src[i] to dst[i] for every i < len(src).")
	dst := Mem{Base: Load(Param("dst").Base(), GP64())}
	src := Mem{Base: Load(Param("src").Base(), GP64())}
	n := Load(Param("src").Len(), GP64())
	Loop(isa, n, unroll, func(k int) {
		for u := 0; u < k; u++ {
			t := isa.Vec()
			VMOVUPS(dst.Offset(u*isa.Bytes()), t)
			VADDPS(src.Offset(u*isa.Bytes()), t, t)
			VMOVUPS(t, dst.Offset(u*isa.Bytes()))
		}
		ADDQ(U32(k*isa.Bytes()), src.Base)
		ADDQ(U32(k*isa.Bytes()), dst.Base)
	}, func() {
		t := XMM()
		VMOVSS(dst, t)
		VADDSS(src, t, t)
		VMOVSS(t, dst)
		ADDQ(U8(4), src.Base)
		ADDQ(U8(4), dst.Base)
	})
	VZEROUPPER()
	RET()
}

func scaleKernel(isa ISA) {
	name := "Scale" + isa.Suffix
	TEXT(name, NOSPLIT, "func(x []float32, s float32)")
	Pragma("noescape")
	Doc(name + " multiplies every element of x by s.")
	x := Mem{Base: Load(Param("x").Base(), GP64())}
	n := Load(Param("x").Len(), GP64())
	ss := Load(Param("s"), XMM())
	s := isa.Vec()
	VBROADCASTSS(ss, s)
	Loop(isa, n, unroll, func(k int) {
		for u := 0; u < k; u++ {
			t := isa.Vec()
			VMULPS(x.Offset(u*isa.Bytes()), s, t)
			VMOVUPS(t, x.Offset(u*isa.Bytes()))
		}
		ADDQ(U32(k*isa.Bytes()), x.Base)
	}, func() {
		t := XMM()
		VMULSS(x, ss, t)
		VMOVSS(t, x)
		ADDQ(U8(4), x.Base)
	})
	VZEROUPPER()
	RET()
}

// The exponential, e^d for d = x − max ≤ 0, scaled by 2²⁴ (see expSumKernel):
// k = round(d·log₂e) by the magic-number trick, r = d − k·ln2 in two Cody–Waite steps
// (ln2hi has 9 significant bits, so k·ln2hi is exact), e^r by its degree-7 Taylor
// polynomial (truncation below 2⁻²⁷ on |r| ≤ ln2/2), and 2^(k+24) built in the exponent
// field from the low bits of the magic sum.
var (
	clampLo = float32(-104) // e^−104 < 2⁻¹⁵⁰: below it every output rounds to 0
	log2e   = float32(math.Log2E)
	// magic = 1.5·2²³ + 151: adding it rounds to an integer and leaves k+151 in the
	// low mantissa bits, which shifted left by 23 are the exponent field of 2^(k+24).
	magic = float32(0x1.8p23 + 151)
	ln2hi = float32(0.693359375)
	ln2lo = float32(math.Ln2 - 0.693359375)
	// errBound clamps the 2Sum error term: for d ≥ −104 it is below 2⁻¹⁸; past the clamp
	// (or for d = −Inf, where it is NaN) it must not move r far enough to matter.
	errBound = float32(0x1p-10)
)

// expScaled writes 2²⁴·e^(x−m) for each register of xs to new registers; fresh
// allocates registers of their width. Each step is issued for all of xs before the
// next, so the long dependency chains of the registers overlap. x − m is rounded, so
// 2Sum recovers its error e (|e| ≤ ulp(d)/2 can be 2⁻¹⁸, a 16-ulp error of e^d if
// ignored) and adds it to the reduced argument.
func expScaled(xs []reg.VecVirtual, m, negm reg.Register, fresh func() reg.VecVirtual) []reg.VecVirtual {
	n := len(xs)
	regs := func() []reg.VecVirtual {
		r := make([]reg.VecVirtual, n)
		for i := range r {
			r[i] = fresh()
		}
		return r
	}
	d, z, e, v, p := regs(), regs(), regs(), regs(), regs()
	each := func(step func(i int)) {
		for i := 0; i < n; i++ {
			step(i)
		}
	}
	each(func(i int) { VSUBPS(m, xs[i], d[i]) })    // d = x − m
	each(func(i int) { VSUBPS(xs[i], d[i], z[i]) }) // 2Sum(x, −m): z = d − x
	each(func(i int) { VSUBPS(z[i], d[i], e[i]) })  //              e = d − z
	each(func(i int) { VSUBPS(e[i], xs[i], e[i]) }) //              e = x − e (error of x)
	each(func(i int) { VSUBPS(z[i], negm, z[i]) })  //              z = −m − z (error of −m)
	each(func(i int) { VADDPS(z[i], e[i], e[i]) })
	// VMAXPS/VMINPS return their memory operand when e is NaN.
	each(func(i int) { VMAXPS(splat("errLo", -errBound), e[i], e[i]) })
	each(func(i int) { VMINPS(splat("errHi", errBound), e[i], e[i]) })
	each(func(i int) { VMAXPS(splat("clampLo", clampLo), d[i], d[i]) }) // −Inf and far tails: d = −104

	mg := splat("magic", magic)
	each(func(i int) { VMOVUPS(mg, v[i]) })
	each(func(i int) { VFMADD231PS(splat("log2e", log2e), d[i], v[i]) }) // v = magic + round(d·log₂e)
	k := z
	each(func(i int) { VSUBPS(mg, v[i], k[i]) })
	each(func(i int) { VFNMADD231PS(splat("ln2hi", ln2hi), k[i], d[i]) }) // r = d − k·ln2hi (exact)
	each(func(i int) { VFNMADD231PS(splat("ln2lo", ln2lo), k[i], d[i]) }) //     − k·ln2lo
	each(func(i int) { VADDPS(e[i], d[i], d[i]) })                        //     + e
	r := d

	each(func(i int) { VMOVUPS(splat("c6", 1.0/720), p[i]) })
	each(func(i int) { VFMADD231PS(splat("c7", 1.0/5040), r[i], p[i]) })
	for _, c := range []struct {
		name string
		v    float32
	}{{"c5", 1.0 / 120}, {"c4", 1.0 / 24}, {"c3", 1.0 / 6}, {"c2", 0.5}, {"one", 1}, {"one", 1}} {
		each(func(i int) { VFMADD213PS(splat(c.name, c.v), r[i], p[i]) }) // p = p·r + c
	}
	each(func(i int) { VPSLLD(U8(23), v[i], v[i]) }) // 2^(k+24)
	each(func(i int) { VMULPS(v[i], p[i], p[i]) })
	return p
}

// expSumKernel replaces x[i] by 2²⁴·e^(x[i]−max) and returns their float64 sum. The
// 2²⁴ factor keeps every kept value normal (k ≥ −150), so outputs that end up
// subnormal are rounded once, by the caller's final multiply with 1/sum. The expUnroll
// vectors of an iteration are added in float32 (positive values ≤ 2²⁴, one rounding)
// and then widened to float64.
// The caller guarantees max is finite and every element is ≤ max, no NaN.
func expSumKernel(isa ISA) {
	name := "ExpSum" + isa.Suffix
	TEXT(name, NOSPLIT, "func(x []float32, max float32) float64")
	Pragma("noescape")
	Doc(name+" replaces each x[i] by 2²⁴·exp(x[i]−max) and returns their float64 sum.",
		"max must be finite, no element may exceed it and none may be NaN.")
	x := Mem{Base: Load(Param("x").Base(), GP64())}
	n := Load(Param("x").Len(), GP64())
	ms := Load(Param("max"), XMM())
	m, negm := isa.Vec(), isa.Vec()
	VBROADCASTSS(ms, m)
	VMULPS(splat("minusOne", -1), m, negm)
	zero := splat("zero", 0)
	acc := []reg.VecVirtual{isa.Vec(), isa.Vec()}
	for _, a := range acc {
		VMOVUPS(zero, a)
	}
	sacc := XMM()
	VMOVUPS(zero, sacc)

	Loop(isa, n, expUnroll, func(k int) {
		xs := make([]reg.VecVirtual, k)
		for u := range xs {
			xs[u] = isa.Vec()
			VMOVUPS(x.Offset(u*isa.Bytes()), xs[u])
		}
		ys := expScaled(xs, m, negm, isa.Vec)
		for u, y := range ys {
			VMOVUPS(y, x.Offset(u*isa.Bytes()))
		}
		for _, y := range ys[1:] {
			VADDPS(y, ys[0], ys[0])
		}
		lo, hi := isa.Vec(), isa.Vec()
		h := isa.Vec()
		highHalf(isa, ys[0], isa.Half(h))
		VCVTPS2PD(isa.Half(ys[0]), lo)
		VCVTPS2PD(isa.Half(h), hi)
		VADDPD(lo, acc[0], acc[0])
		VADDPD(hi, acc[1], acc[1])
		ADDQ(U32(k*isa.Bytes()), x.Base)
	}, func() {
		t := XMM()
		VMOVSS(x, t)
		y := expScaled([]reg.VecVirtual{t}, m.AsX(), negm.AsX(), XMM)[0]
		VMOVSS(y, x)
		VCVTSS2SD(y, y, y)
		VADDSD(y, sacc, sacc)
		ADDQ(U8(4), x.Base)
	})
	Store(reduceSum(isa, acc, sacc), ReturnIndex(0))
	VZEROUPPER()
	RET()
}
