// Command softmax generates asm/softmax_amd64.s: the three passes of Softmax (Max,
// ExpSum, Scale) and the reductions Sum and Add, for AVX2 and AVX-512 from one body.
package main

import (
	"fmt"
	"math"

	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// unroll is the number of vectors per iteration of the memory-bound loops (Max, Sum,
// Add, Scale): enough independent accumulators to hide the add latency.
const unroll = 4

// expUnroll is the number of vectors whose exponentials are interleaved in the AVX2
// body. Each keeps four registers live; with max, −max, two sums and the widening
// temporaries, two fit AVX2's sixteen. (Three do not: avo then allocates Y16+, which
// needs an EVEX encoding that AVX2-only CPUs fault on.) AVX-512 has a body of its own,
// expSumAVX512, with its constants in registers.
const expUnroll = 2

func main() {
	Header()
	for _, isa := range Both {
		maxKernel(isa)
		sumKernel(isa)
		addKernel(isa)
		scaleKernel(isa)
	}
	expSumKernel(AVX2)
	maxNoNaNKernel(AVX512)
	expSumAVX512()
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

// maxNoNaNKernel is Max without the NaN detector, for Softmax on AVX-512, whose ExpSum
// turns any NaN into a NaN sum: a plain VMAXPS per vector.
func maxNoNaNKernel(isa ISA) {
	name := "MaxNoNaN" + isa.Suffix
	TEXT(name, NOSPLIT, "func(x []float32) float32")
	Pragma("noescape")
	Doc(name+" returns the largest element of x (-Inf if x is empty) if x holds no NaN;",
		"otherwise its result is unspecified. The sign of a zero maximum is unspecified.")
	x := Mem{Base: Load(Param("x").Base(), GP64())}
	n := Load(Param("x").Len(), GP64())
	negInf := splat("negInf", float32(math.Inf(-1)))
	var acc [unroll]reg.VecVirtual
	for u := range acc {
		acc[u] = isa.Vec()
		VMOVUPS(negInf, acc[u])
	}
	sacc := XMM()
	VMOVUPS(negInf, sacc)
	Loop(isa, n, unroll, func(k int) {
		for u := 0; u < k; u++ {
			VMAXPS(x.Offset(u*isa.Bytes()), acc[u], acc[u])
		}
		ADDQ(U32(k*isa.Bytes()), x.Base)
	}, func() {
		VMAXSS(x, sacc, sacc)
		ADDQ(U8(4), x.Base)
	})
	for u := 1; u < unroll; u++ {
		VMAXPS(acc[u], acc[0], acc[0])
	}
	m := fold(isa, acc[0], func(a, b, d Op) { VMAXPS(a, b, d) })
	VMAXPS(sacc, m, m)
	t := XMM()
	VMOVHLPS(m, m, t)
	VMAXPS(t, m, m)
	VPSHUFD(U8(1), m, t)
	VMAXSS(t, m, m)
	Store(m, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// The AVX-512 exponential, 2²⁴·e^d for d = x − m ≤ 0, keeps every constant in a register
// and reduces by a sixteenth of ln2: kq = round₁₆(d·log₂e) (to a multiple of 1/16 by
// the magic-number trick, whose low four mantissa bits are then j = 16·kq mod 16),
// r = d − kq·ln2 (two FMAs; |r| ≤ ln2/32), and
//
//	2²⁴·e^d = 2^⌊kq⌋ · T[j]·e^r,   T[j] = 2²⁴·2^(j/16) = Thi[j] + Tlo[j],
//
// with T[j] from two 16-entry VPERMPS tables, e^r = 1 + r·q(r), q(r) = 1 + r/2 + r²/6
// (truncation ≤ r⁴/24 < 2⁻²⁶·⁶), T[j]·e^r = Thi + (Thi·r + Tlo)·q (the Tlo·(q−1) it adds
// is below 2⁻³¹ relative) and 2^⌊kq⌋ by VSCALEFPS. Every rounding but the last add
// Thi + … acts on a term below 0.03 of the result, so the exponential is within
// 1.2·2⁻²⁴ relative of 2²⁴·e^d (1 from the last rounding, 0.16 truncation, the rest
// below 0.04).
//
// d = x − m is rounded; its error e (up to 2⁻¹⁸ for |d| ≤ 104, a 32-ulp error if
// ignored) is recovered exactly and added to r. For 0 ≤ m ≤ 2¹² and x ≥ −m, |x| ≤ |m|
// and Fast2Sum(−m, x) gives it in two operations; a pair of vectors with any other
// element (x < −m, −Inf, or every element of a row whose max is outside [0, 2¹²]) takes
// the general path: 2Sum in five, d clamped at −104 (e^−104·2²⁴ < 2⁻¹²⁶: its outputs
// round to 0 after the 1/sum, −Inf included) and e added only where d was not clamped.
// On the fast path |d| ≤ 2¹³, so no clamp is needed: d < −104 gives 2^⌊kq⌋ ≤ 2⁻¹⁵¹
// and an output that rounds to 0.
var (
	magic16 = float32(0x1.8p19) // ulp 2⁻⁴: adding it rounds to a multiple of 1/16
	fastMax = float32(0x1p12)
)

// expConsts are the registers the AVX-512 exponential keeps its constants in.
type expConsts struct {
	m, negm, clampLo, log2e, magic, ln2hi, ln2lo, c3, c2, one, thi, tlo reg.VecVirtual
}

func loadExpConsts(m, negm reg.VecVirtual) expConsts {
	c := expConsts{m: m, negm: negm}
	for _, k := range []struct {
		r *reg.VecVirtual
		n string
		v float32
	}{
		{&c.clampLo, "clampLo", clampLo}, {&c.log2e, "log2e", log2e}, {&c.magic, "magic16", magic16},
		{&c.ln2hi, "ln2hi", ln2hi}, {&c.ln2lo, "ln2lo", ln2lo}, {&c.c3, "c3", 1.0 / 6}, {&c.c2, "c2", 0.5}, {&c.one, "one", 1},
	} {
		*k.r = ZMM()
		VMOVUPS(splat(k.n, k.v), *k.r)
	}
	c.thi, c.tlo = ZMM(), ZMM()
	VMOVUPS(expTable("expHi", func(t float64) float32 { return float32(t) }), c.thi)
	VMOVUPS(expTable("expLo", func(t float64) float32 { return float32(t - float64(float32(t))) }), c.tlo)
	return c
}

// expTable is the 16-entry table part(2²⁴·2^(j/16)).
func expTable(name string, part func(float64) float32) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for j := 0; j < 16; j++ {
		DATA(4*j, U32(math.Float32bits(part(0x1p24*math.Exp2(float64(j)/16)))))
	}
	return m
}

// exp512 returns 2²⁴·e^(x−m) for each register of xs, issuing each step for all of them
// before the next. general selects the 2Sum path with the clamp; otherwise the caller
// guarantees 0 ≤ m ≤ 2¹² and every x ≥ −m.
func exp512(c expConsts, xs []reg.VecVirtual, general bool) []reg.VecVirtual {
	n := len(xs)
	regs := func() []reg.VecVirtual {
		r := make([]reg.VecVirtual, n)
		for i := range r {
			r[i] = ZMM()
		}
		return r
	}
	each := func(step func(i int)) {
		for i := 0; i < n; i++ {
			step(i)
		}
	}
	d, e := regs(), regs()
	each(func(i int) { VSUBPS(c.m, xs[i], d[i]) }) // d = x − m
	var keep []reg.OpmaskVirtual
	if general {
		z := regs()
		each(func(i int) { VSUBPS(xs[i], d[i], z[i]) })  // 2Sum(x, −m): z = d − x
		each(func(i int) { VSUBPS(z[i], d[i], e[i]) })   //              e = d − z
		each(func(i int) { VSUBPS(e[i], xs[i], e[i]) })  //              e = x − e (error of x)
		each(func(i int) { VSUBPS(z[i], c.negm, z[i]) }) //             z = −m − z (error of −m)
		each(func(i int) { VADDPS(z[i], e[i], e[i]) })
		keep = make([]reg.OpmaskVirtual, n)
		each(func(i int) {
			keep[i] = K()
			VCMPPS(U8(0x1d), c.clampLo, d[i], keep[i]) // d ≥ −104 (false for NaN)
		})
		// VMAXPS returns its second source, d, when d is NaN: NaNs reach the sum.
		each(func(i int) { VMAXPS(d[i], c.clampLo, d[i]) })
	} else {
		z := e
		each(func(i int) { VADDPS(c.m, d[i], z[i]) })   // Fast2Sum(−m, x): z = d + m
		each(func(i int) { VSUBPS(z[i], xs[i], e[i]) }) //                  e = x − z
	}
	v, kq := regs(), regs()
	each(func(i int) { VMOVAPS(c.magic, v[i]) })
	each(func(i int) { VFMADD231PS(c.log2e, d[i], v[i]) }) // v = magic + round₁₆(d·log₂e)
	each(func(i int) { VSUBPS(c.magic, v[i], kq[i]) })
	each(func(i int) { VFNMADD231PS(c.ln2hi, kq[i], d[i]) }) // r = d − kq·ln2hi
	each(func(i int) { VFNMADD231PS(c.ln2lo, kq[i], d[i]) }) //     − kq·ln2lo
	if general {
		each(func(i int) { VADDPS(e[i], d[i], keep[i], d[i]) }) // + e, where d was not clamped
	} else {
		each(func(i int) { VADDPS(e[i], d[i], d[i]) }) // + e
	}
	r, q := d, e
	each(func(i int) { VMOVAPS(c.c3, q[i]) })
	each(func(i int) { VFMADD213PS(c.c2, r[i], q[i]) })  // q = r/6 + 1/2
	each(func(i int) { VFMADD213PS(c.one, r[i], q[i]) }) // q = q·r + 1
	hi, lo := regs(), regs()
	each(func(i int) { VPERMPS(c.thi, v[i], hi[i]) })
	each(func(i int) { VPERMPS(c.tlo, v[i], lo[i]) })
	each(func(i int) { VFMADD231PS(hi[i], r[i], lo[i]) }) // lo = Thi·r + Tlo
	each(func(i int) { VFMADD213PS(hi[i], q[i], lo[i]) }) // lo = lo·q + Thi
	each(func(i int) { VSCALEFPS(kq[i], lo[i], lo[i]) })  // · 2^⌊kq⌋
	return lo
}

// expSumAVX512 writes ExpSumAVX512, ExpSum's AVX-512 body: four vectors per iteration,
// in two pairs that each take the fast path unless an element is below −m (or the row's
// max is outside [0, 2¹²]). The four are summed in float32 as a tree of depth two and
// the sum widened to float64: every term is rounded at most twice before the float64
// sum (relative error ≤ 2·2⁻²⁴), at 1.25 vector operations per vector rather than 3.
func expSumAVX512() {
	isa := AVX512
	name := "ExpSum" + isa.Suffix
	TEXT(name, NOSPLIT, "func(x []float32, max float32) float64")
	Pragma("noescape")
	Doc(name+" replaces each x[i] by 2²⁴·exp(x[i]−max) and returns their sum, accumulated in float64",
		"from float32 sums of four. len(x) must be a multiple of 16 and max finite and no smaller than",
		"any element; a NaN element makes the sum NaN.")
	x := Mem{Base: Load(Param("x").Base(), GP64())}
	n := Load(Param("x").Len(), GP64())
	m, negm, lim := ZMM(), ZMM(), ZMM()
	VBROADCASTSS(paramAddr("max"), m)
	VXORPS(splat("signBit", math.Float32frombits(0x80000000)), m, negm)
	// lim: elements below it take the general path; all of them unless 0 ≤ m ≤ 2¹².
	VMOVAPS(negm, lim)
	outside := K()
	VCMPPS(U8(0x1d), splat("zero", 0), m, outside) // m ≥ 0
	VCMPPS(U8(0x12), splat("fastMax", fastMax), m, outside, outside)
	KNOTW(outside, outside)
	VMOVUPS(splat("posInf", float32(math.Inf(1))), outside, lim)
	c := loadExpConsts(m, negm)
	acc := []reg.VecVirtual{ZMM(), ZMM()}
	for _, a := range acc {
		VXORPS(a, a, a)
	}
	flush := func(t reg.VecVirtual) {
		h, lo, hi := YMM(), ZMM(), ZMM()
		VEXTRACTF64X4(U8(1), t, h)
		VCVTPS2PD(t.AsY(), lo)
		VCVTPS2PD(h, hi)
		VADDPD(lo, acc[0], acc[0])
		VADDPD(hi, acc[1], acc[1])
	}
	top, tail, done := "exp4_"+isa.Suffix, "exp1_"+isa.Suffix, "expdone_"+isa.Suffix
	Label(top)
	CMPQ(n, U32(4*isa.Lanes))
	JB(LabelRef(tail))
	var pair [2]reg.VecVirtual
	for h := range pair {
		xs := []reg.VecVirtual{ZMM(), ZMM()}
		below := []reg.OpmaskVirtual{K(), K()}
		for u := range xs {
			VMOVUPS(x.Offset((2*h+u)*isa.Bytes()), xs[u])
			VCMPPS(U8(0x01), lim, xs[u], below[u]) // x < lim
		}
		pair[h] = ZMM()
		slow, join := fmt.Sprintf("expslow%d_%s", h, isa.Suffix), fmt.Sprintf("expjoin%d_%s", h, isa.Suffix)
		KORTESTW(below[0], below[1])
		JNZ(LabelRef(slow))
		for _, general := range []bool{false, true} {
			if general {
				Label(slow)
			}
			ys := exp512(c, xs, general)
			for u, y := range ys {
				VMOVUPS(y, x.Offset((2*h+u)*isa.Bytes()))
			}
			VADDPS(ys[1], ys[0], pair[h])
			if !general {
				JMP(LabelRef(join))
			}
		}
		Label(join)
	}
	VADDPS(pair[1], pair[0], pair[0])
	flush(pair[0])
	ADDQ(U32(4*isa.Bytes()), x.Base)
	SUBQ(U32(4*isa.Lanes), n)
	JMP(LabelRef(top))

	Label(tail)
	TESTQ(n, n)
	JZ(LabelRef(done))
	t := ZMM()
	VMOVUPS(x, t)
	y := exp512(c, []reg.VecVirtual{t}, true)[0]
	VMOVUPS(y, x)
	flush(y)
	ADDQ(U32(isa.Bytes()), x.Base)
	SUBQ(U32(isa.Lanes), n)
	JMP(LabelRef(tail))

	Label(done)
	VADDPD(acc[1], acc[0], acc[0])
	s := fold(isa, acc[0], func(a, b, d Op) { VADDPD(a, b, d) })
	u := XMM()
	VUNPCKHPD(s, s, u)
	VADDSD(u, s, s)
	Store(s, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// paramAddr is the stack slot of a parameter, for VEX/EVEX loads of floats (avo's Load
// uses legacy-SSE MOVSS, which costs a state transition with dirty upper halves).
func paramAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}
