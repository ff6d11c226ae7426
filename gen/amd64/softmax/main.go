// Command softmax generates asm/softmax_amd64.s: the three passes of Softmax (Max,
// ExpSum, Scale), AddSoftmax's last pass (ScaleAdd) and the reductions Sum and Add, for
// AVX2 and AVX-512 from one body each, but for the exponential: a table one on AVX-512
// (tableExp), its constants in registers, and a table-free one on AVX2 (freeExp), most
// of its constants in memory, since sixteen registers do not hold them all.
package main

import (
	"fmt"
	"math"

	"github.com/kvsimd/kvsimd/gen/internal/expfree"
	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// unroll is the number of vectors per iteration of the memory-bound loops (Max, Sum,
// Add, Scale, ScaleAdd): enough independent accumulators to hide the add latency.
const unroll = 4

func main() {
	Header()
	for _, isa := range Both {
		maxKernel(isa, true)
		sumKernel(isa)
		addKernel(isa)
		scaleKernel(isa)
	}
	for _, isa := range Both {
		maxKernel(isa, false)
	}
	expSumTable(exp256)
	expSumTable(exp512)
	// Last, so that the older kernels' text (labels included) stays as it was.
	for _, isa := range Both {
		scaleAddKernel(isa)
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
// +Inf<<1 are equal to it). Integer ops keep AVX2 and AVX-512 identical. Without
// detectNaN it writes MaxMin, a VMAXPS and a VMINPS per vector, for Softmax, whose
// ExpSum turns any NaN into a NaN sum and runs without per-element range checks when
// the minimum shows that no element needs them.
func maxKernel(isa ISA, detectNaN bool) {
	name := "Max" + isa.Suffix
	if detectNaN {
		TEXT(name, NOSPLIT, "func(x []float32) (max float32, nan bool)")
		Pragma("noescape")
		Doc(name+" returns the largest element of x (-Inf if x is empty, ignoring NaNs) and whether x holds a NaN.",
			"The sign of a zero maximum is unspecified.")
	} else {
		name = "MaxMin" + isa.Suffix
		TEXT(name, NOSPLIT, "func(x []float32) (max float32, min float32)")
		Pragma("noescape")
		Doc(name+" returns the largest and the smallest element of x (-Inf and +Inf if x is empty)",
			"if x holds no NaN; otherwise its results are unspecified. The sign of a zero result is unspecified.")
	}
	x := Mem{Base: Load(Param("x").Base(), GP64())}
	n := Load(Param("x").Len(), GP64())
	negInf := splat("negInf", float32(math.Inf(-1)))
	posInf := splat("posInf", float32(math.Inf(1)))
	// aux holds the NaN detector with detectNaN, else the minimum.
	var acc, aux [unroll]reg.VecVirtual
	for u := range acc {
		acc[u], aux[u] = isa.Vec(), isa.Vec()
		VMOVUPS(negInf, acc[u])
		if detectNaN {
			VPSLLD(U8(1), acc[u], aux[u])
		} else {
			VMOVUPS(posInf, aux[u])
		}
	}
	sacc, saux := XMM(), XMM()
	VMOVUPS(negInf, sacc)
	if detectNaN {
		VPSLLD(U8(1), sacc, saux)
	} else {
		VMOVUPS(posInf, saux)
	}

	Loop(isa, n, unroll, func(k int) {
		for u := 0; u < k; u++ {
			t := isa.Vec()
			VMOVUPS(x.Offset(u*isa.Bytes()), t)
			VMAXPS(t, acc[u], acc[u])
			if !detectNaN {
				VMINPS(t, aux[u], aux[u])
				continue
			}
			VPSLLD(U8(1), t, t)
			VPMAXUD(t, aux[u], aux[u])
		}
		ADDQ(U32(k*isa.Bytes()), x.Base)
	}, func() {
		t := XMM()
		VMOVSS(x, t)
		VMAXSS(t, sacc, sacc)
		if detectNaN {
			VPSLLD(U8(1), t, t)
			VPMAXUD(t, saux, saux)
		} else {
			VMINSS(t, saux, saux)
		}
		ADDQ(U8(4), x.Base)
	})
	for u := 1; u < unroll; u++ {
		VMAXPS(acc[u], acc[0], acc[0])
		if detectNaN {
			VPMAXUD(aux[u], aux[0], aux[0])
		} else {
			VMINPS(aux[u], aux[0], aux[0])
		}
	}
	// reduce folds v's lanes and the scalar s into v's low lane with op.
	reduce := func(v, s reg.VecVirtual, op func(a, b, d Op)) reg.Register {
		m := fold(isa, v, op)
		op(s, m, m)
		t := XMM()
		VMOVHLPS(m, m, t)
		op(t, m, m)
		VPSHUFD(U8(1), m, t)
		op(t, m, m)
		return m
	}
	Store(reduce(acc[0], sacc, func(a, b, d Op) { VMAXPS(a, b, d) }), ReturnIndex(0))
	if !detectNaN {
		Store(reduce(aux[0], saux, func(a, b, d Op) { VMINPS(a, b, d) }), ReturnIndex(1))
	} else {
		t := XMM()
		b := fold(isa, aux[0], func(a, b, d Op) { VPMAXUD(a, b, d) })
		VPMAXUD(saux, b, b)
		VPSHUFD(U8(0x0e), b, t)
		VPMAXUD(t, b, b)
		VPSHUFD(U8(1), b, t)
		VPMAXUD(t, b, b)
		bits, flag := GP32(), GP8()
		MOVD(b, bits)
		CMPL(bits, U32(0xff000000))
		SETHI(flag)
		Store(flag, ReturnIndex(1))
	}
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

// scaleAddKernel is AddSoftmax's last pass: Scale and Add in one, the product rounded
// before the add (VMULPS then VADDPS, not an FMA), so that its bits are Scale's
// followed by Add's. The add takes the product first where Add takes dst first; that
// only decides which payload a NaN + NaN keeps, and AddSoftmax's products (2²⁴·e^(x−m)
// times 1/sum) are never NaN.
func scaleAddKernel(isa ISA) {
	name := "ScaleAdd" + isa.Suffix
	TEXT(name, NOSPLIT, "func(dst []float32, x []float32, s float32)")
	Pragma("noescape")
	Doc(name + " adds x[i]·s, rounded, to dst[i] for every i < len(x).")
	dst := Mem{Base: Load(Param("dst").Base(), GP64())}
	x := Mem{Base: Load(Param("x").Base(), GP64())}
	n := Load(Param("x").Len(), GP64())
	ss := Load(Param("s"), XMM())
	s := isa.Vec()
	VBROADCASTSS(ss, s)
	Loop(isa, n, unroll, func(k int) {
		for u := 0; u < k; u++ {
			t := isa.Vec()
			VMULPS(x.Offset(u*isa.Bytes()), s, t)
			VADDPS(dst.Offset(u*isa.Bytes()), t, t)
			VMOVUPS(t, dst.Offset(u*isa.Bytes()))
		}
		ADDQ(U32(k*isa.Bytes()), x.Base)
		ADDQ(U32(k*isa.Bytes()), dst.Base)
	}, func() {
		t := XMM()
		VMULSS(x, ss, t)
		VADDSS(dst, t, t)
		VMOVSS(t, dst)
		ADDQ(U8(4), x.Base)
		ADDQ(U8(4), dst.Base)
	})
	VZEROUPPER()
	RET()
}

// Constants of the exponential (see tableExp).
var (
	clampLo = float32(-104) // e^−104 < 2⁻¹⁵⁰: below it every output rounds to 0
	log2e   = float32(math.Log2E)
	ln2hi   = float32(0.693359375)
	ln2lo   = float32(math.Ln2 - 0.693359375)
	// errBound clamps the 2Sum error term on AVX2: for d ≥ −104 it is below 2⁻¹⁸; past the
	// clamp (or for d = −Inf, where it is NaN) it must not move r far enough to matter.
	errBound = float32(0x1p-10)
)

// The table exponential (AVX-512's; AVX2 has freeExp), 2²⁴·e^d for d = x − m ≤ 0,
// reduces by ln2/L, L = 16 table entries (VPERMPS on zmm): kq = round_L(d·log₂e) (to a
// multiple of 1/L by the magic-number trick, whose low mantissa bits are then
// j = L·kq mod L), r = d − kq·ln2 (two FMAs, |r| ≤ ln2/2L), and
//
//	2²⁴·e^d = 2^⌊kq⌋ · T[j]·e^r,   T[j] = 2²⁴·2^(j/L) = Thi[j] + Tlo[j],
//
// with e^r = 1 + r·q(r), q = 1 + r/2 + r²/6 (truncation below 2⁻²⁶·⁶ relative),
// T[j]·e^r = Thi + (Thi·r + Tlo)·q (the Tlo·(q−1) this adds is below 2⁻³⁰ relative),
// scaled by 2^⌊kq⌋ with VSCALEFPS. Every rounding but the last FMA acts on a term below
// 0.05 of the result (|Thi·r| ≤ 0.044·Thi): r's (one, at |r|, when the two parts of
// kq·ln2 are taken from d and from e side by side) moves it by 0.044u, q's (Horner: one
// at 1) by 0.044u per unit of q's error. So the exponential is within 1.3·2⁻²⁴ relative
// of 2²⁴·e^d: 1 from the last rounding, 0.16 truncation, the rest below 0.14. (AVX2 ran
// it with L = 8, a degree-4 q, VPERMPS on ymm and 2^k built in the exponent field, until
// freeExp replaced it.)
//
// On both ISAs d = x − m is rounded; its error e (up to 2⁻¹⁸ for |d| ≤ 104, a 32-ulp
// error if ignored) is recovered exactly and added to r. For 0 ≤ m ≤ 2¹² and x ≥ −m, |x| ≤ |m|
// and Fast2Sum(−m, x) gives it in two operations; a group of vectors with any other
// element (x < −m, −Inf, or every element of a row whose max is outside [0, 2¹²]) takes
// the general path, 2Sum in five. d is clamped at −104 (e^−104·2²⁴ < 2⁻¹²⁶: such
// outputs round to 0 after the 1/sum, −Inf included); on the general path the error is
// then dropped (AVX-512: masked; AVX2: clamped to ±2⁻¹⁰, which also turns the NaN of
// −Inf−(−Inf) into a bound). On the AVX-512 fast path |d| ≤ 2¹³ needs no clamp: d < −104
// gives 2^⌊kq⌋ ≤ 2⁻¹⁵¹ and an output that rounds to 0.
var fastMax = float32(0x1p12)

// tableExp is one ISA's instance of the table exponential.
type tableExp struct {
	isa     ISA
	entries int     // L
	magic   float32 // 1.5·2^(23−log₂L)
	scale   float64 // the tables hold scale·2^(j/L)
	free    bool    // AVX2: no table, the exponential of freeExp
}

var (
	exp512 = tableExp{isa: AVX512, entries: 16, magic: 0x1.8p19, scale: 0x1p24}
	exp256 = tableExp{isa: AVX2, free: true}
)

// expConsts are the exponential's constants: registers on AVX-512, memory on AVX2
// except m, the two tables and clampLo.
type expConsts struct {
	m, lim                                                     reg.VecVirtual
	clampLo, log2e, magic, ln2hi, ln2lo, c3, c2, one, thi, tlo Op
	free                                                       map[string]Op // freeExp's, by name
}

func (t tableExp) consts(m, lim reg.VecVirtual) expConsts {
	c := expConsts{m: m, lim: lim}
	if t.free {
		// The clamp's bound in a register, so that the clamp can return a NaN d (VMAXPS
		// returns its memory operand); every other constant is a memory operand.
		r := t.isa.Vec()
		VMOVUPS(splat("clampLo", clampLo), r)
		c.clampLo = r
		c.free = map[string]Op{}
		for _, k := range freeConsts {
			c.free[k.name] = splat(k.name, k.v)
		}
		for _, name := range freeInRegs {
			r := t.isa.Vec()
			VMOVUPS(c.free[name], r)
			c.free[name] = r
		}
		return c
	}
	for _, k := range []struct {
		op Op
		to *Op
	}{
		{splat("clampLo", clampLo), &c.clampLo}, {splat("log2e", log2e), &c.log2e},
		{splat(fmt.Sprintf("magic%d", t.entries), t.magic), &c.magic},
		{splat("ln2hi", ln2hi), &c.ln2hi}, {splat("ln2lo", ln2lo), &c.ln2lo},
		{splat("c3", 1.0/6), &c.c3}, {splat("c2", 0.5), &c.c2}, {splat("one", 1), &c.one},
		{t.table("Hi", func(v float64) float32 { return float32(v) }), &c.thi},
		{t.table("Lo", func(v float64) float32 { return float32(v - float64(float32(v))) }), &c.tlo},
	} {
		r := t.isa.Vec()
		VMOVUPS(k.op, r)
		*k.to = r
	}
	return c
}

// table is the L-entry table part(scale·2^(j/L)).
func (t tableExp) table(name string, part func(float64) float32) Mem {
	m := GLOBL(fmt.Sprintf("exp%d%s", t.entries, name), RODATA|NOPTR)
	for j := 0; j < t.entries; j++ {
		DATA(4*j, U32(math.Float32bits(part(t.scale*math.Exp2(float64(j)/float64(t.entries))))))
	}
	return m
}

// exp returns 2²⁴·e^(x−m) for each register of xs, issuing each step for all of them
// before the next. general selects the 2Sum path; otherwise the caller guarantees
// 0 ≤ m ≤ 2¹² and every x ≥ −m.
//
// clamp (AVX2's fast path) keeps d ≥ −104 with a VMAXPS; without it the caller
// guarantees that already (every fl(x − m) ≥ −103), so that leaving it out changes no bits.
func (t tableExp) exp(c expConsts, xs []reg.VecVirtual, general, clamp bool) []reg.VecVirtual {
	if t.free {
		return freeExp(t.isa, c, xs, general, clamp)
	}
	regs, each := stepsOf(t.isa, len(xs))
	d, e := splitDiff(c, xs, general, regs, each)
	var keep []reg.OpmaskVirtual
	if general {
		keep = make([]reg.OpmaskVirtual, len(xs))
		each(func(i int) {
			keep[i] = K()
			VCMPPS(U8(0x1d), c.clampLo, d[i], keep[i]) // d ≥ −104 (false for NaN)
		})
		// VMAXPS returns its second source, d, when d is NaN: NaNs reach the sum.
		each(func(i int) { VMAXPS(d[i], c.clampLo, d[i]) })
	}
	v, kq := regs(), regs()
	each(func(i int) { VMOVUPS(c.magic, v[i]) })
	each(func(i int) { VFMADD231PS(c.log2e, d[i], v[i]) }) // v = magic + round_L(d·log₂e)
	each(func(i int) { VSUBPS(c.magic, v[i], kq[i]) })
	each(func(i int) { VFNMADD231PS(c.ln2hi, kq[i], d[i]) }) // r = d − kq·ln2hi (exact)
	if general {
		each(func(i int) { VFNMADD231PS(c.ln2lo, kq[i], d[i]) }) //     − kq·ln2lo
		each(func(i int) { VADDPS(e[i], d[i], keep[i], d[i]) })  //     + e, where d was not clamped
	} else {
		// (d − kq·ln2hi) + (e − kq·ln2lo): the second term is tiny, and its FMA runs beside
		// the first, a chain one FMA shorter than subtracting kq·ln2lo from d before adding e.
		// (The masked general path above keeps kq·ln2lo on d, where the clamp relies on it.)
		each(func(i int) { VFNMADD231PS(c.ln2lo, kq[i], e[i]) }) // e − kq·ln2lo
		each(func(i int) { VADDPS(e[i], d[i], d[i]) })           // r
	}
	r, q := d, e
	each(func(i int) { VMOVUPS(c.c3, q[i]) })
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

// stepsOf gives an exponential over n registers its two helpers: regs allocates a
// register for each, and each issues a step for all of them before the next.
func stepsOf(isa ISA, n int) (regs func() []reg.VecVirtual, each func(step func(i int))) {
	regs = func() []reg.VecVirtual {
		r := make([]reg.VecVirtual, n)
		for i := range r {
			r[i] = isa.Vec()
		}
		return r
	}
	each = func(step func(i int)) {
		for i := 0; i < n; i++ {
			step(i)
		}
	}
	return regs, each
}

// splitDiff returns d = fl(x − m) and its rounding error e, both exponentials' first
// steps: by 2Sum (general) or, where the caller guarantees 0 ≤ m ≤ 2¹² and x ≥ −m, by
// Fast2Sum (see tableExp).
func splitDiff(c expConsts, xs []reg.VecVirtual, general bool, regs func() []reg.VecVirtual, each func(step func(i int))) (d, e []reg.VecVirtual) {
	d, e = regs(), regs()
	each(func(i int) { VSUBPS(c.m, xs[i], d[i]) }) // d = x − m
	if !general {
		each(func(i int) { VADDPS(c.m, d[i], e[i]) })   // Fast2Sum(−m, x): z = d + m
		each(func(i int) { VSUBPS(e[i], xs[i], e[i]) }) //                  e = x − z
		return d, e
	}
	z := regs()
	each(func(i int) { VSUBPS(xs[i], d[i], z[i]) }) // 2Sum(x, −m): z = d − x
	each(func(i int) { VSUBPS(z[i], d[i], e[i]) })  //              e = d − z
	each(func(i int) { VSUBPS(e[i], xs[i], e[i]) }) //              e = x − e (error of x)
	each(func(i int) { VADDPS(c.m, z[i], z[i]) })   //              z = z + m (−error of −m)
	each(func(i int) { VSUBPS(z[i], e[i], e[i]) })
	return d, e
}

// freeExp is AVX2's exponential, 2²⁴·e^d for d = x − m ≤ 0, without a table: NEON's
// (gen/arm64/softmax, ExpSumNEON) step for step, with its polynomial, but for the clamp
// and the last step. The table cost AVX2 two VPERMPS, a table FMA and an exponent mask
// per vector: this body has 17 vector operations per vector on the FP pipes (but for
// the load, the store and the sum) against 21. M and log₂e are kept in registers (all
// sixteen are then taken): they are the operands of the chain from d to n, where a
// memory operand puts its load on the chain in llvm-mca's Zen 3 model.
//
//   - d = x − m, its rounding error e recovered exactly (Fast2Sum or 2Sum, see
//     tableExp), d clamped at −104 as before (the general path also clamps e to ±2⁻¹⁰).
//   - z = fl(M + d·log₂e), M = 1.5·2²³ + 151: an integer, 151 + N above 1.5·2²³ with
//     N = round(d·log₂e) ∈ [−150, 0]; n = z − M = N exactly.
//   - r = (d − n·ln2hi) + (e − n·ln2lo), within 0.32u of x − m − N·ln2, |r| ≤ 0.3467;
//     t = r + r²·P(r), P of degree 4 by Estrin: NEON's operations on NEON's float32
//     coefficients (poly), so its bounds hold.
//   - 2²⁴·e^d = fl(s + t·s), s = 2^(N+24): z's bits shifted left 23 (the low nine bits,
//     151 + N ∈ [1, 151], land in the exponent field: s is normal). One FMA rounds
//     s·(1 + t) once; for a normal result that is s·fl(1 + t) exactly (s is a power of
//     two), NEON's p = fl(1 + t) scaled by its integer add, in one operation where NEON
//     takes two. (M's low bits, 151 here and 24 on NEON, differ in parity: a d·log₂e
//     exactly halfway between integers may round to the other N, an equally valid
//     reduction, |r| ≤ ln2/2 either way.) Only N = −150 (d < −103.6) can give a
//     subnormal result, rounded once, by at most 2⁻¹⁵⁰: its output, times 1/sum ≤ 2⁻²⁴,
//     is off by 2⁻¹⁷⁴, inside the bound's 2⁻¹⁴⁷ for subnormal outputs. The clamped
//     d = −104 gives N = −150, r ≈ −0.028 (e moves it by 2⁻¹⁰ at most), a result below
//     0.98·2⁻¹²⁶ and, times 1/sum ≤ 2⁻²⁴ (the max element gives exactly 2²⁴, so
//     sum ≥ 2²⁴), an output below 2⁻¹⁵⁰ that rounds to exactly 0, as x − m ≤ −104 must.
//
// Each exponential is therefore within NEON's 1.65u of 2²⁴·e^(x−m) (gen/arm64/softmax
// derives it; its TestExponential emulates these steps, 1.41u at worst over 2²¹ pairs),
// against the table's 1.3u. With float32 sums of eight (3u) Softmax would carry
// 2·1.65u + 3u + 2u = 8.3u, past its 8u = 2⁻²¹; so expSumTable sums AVX2's exponentials
// in float32 by fours (each term rounded at most twice: 2u) before the float64 sum,
// NEON's 2·1.65u + 2u + 2u = 7.3u < 8u. A NaN d stays NaN through the clamp and every
// FMA (NaN·s + s is NaN whatever s's bits). llvm-mca (loopmca -cpu znver3), cycles per
// eight-vector iteration with the clamp / without it: 76.2 / 75.1 with the table, 66.0
// / 63.8 with this body, still above its resource bound (44 / 40, the FP load pipes).
func freeExp(isa ISA, c expConsts, xs []reg.VecVirtual, general, clamp bool) []reg.VecVirtual {
	regs, each := stepsOf(isa, len(xs))
	d, e := splitDiff(c, xs, general, regs, each)
	if general {
		// VMAXPS/VMINPS return their memory operand when e is NaN, and their second
		// source, d, when d is NaN: NaNs reach the sum.
		each(func(i int) { VMAXPS(splat("errLo", -errBound), e[i], e[i]) })
		each(func(i int) { VMINPS(splat("errHi", errBound), e[i], e[i]) })
		each(func(i int) { VMAXPS(d[i], c.clampLo, d[i]) })
	} else if clamp {
		each(func(i int) { VMAXPS(d[i], c.clampLo, d[i]) }) // a NaN d stays NaN
	}
	k := c.free
	z, nn := regs(), regs()
	each(func(i int) {
		if _, ok := k["magicFree"].(reg.VecVirtual); ok {
			VMOVAPS(k["magicFree"], z[i])
		} else {
			VMOVUPS(k["magicFree"], z[i])
		}
	})
	each(func(i int) { VFMADD231PS(k["log2e"], d[i], z[i]) })   // z = M + d·log₂e: 151 + N in the low bits
	each(func(i int) { VSUBPS(k["magicFree"], z[i], nn[i]) })   // n = N as a float
	each(func(i int) { VFNMADD231PS(k["ln2hi"], nn[i], d[i]) }) // d − n·ln2hi (exact)
	each(func(i int) { VFNMADD231PS(k["ln2lo"], nn[i], e[i]) }) // e − n·ln2lo
	each(func(i int) { VADDPS(e[i], d[i], d[i]) })              // r
	r, r2, a, b := d, nn, e, regs()
	each(func(i int) { VMULPS(r[i], r[i], r2[i]) })
	each(func(i int) { VMOVUPS(k["c4free"], b[i]) })
	each(func(i int) { VMOVUPS(k["c2free"], a[i]) })
	each(func(i int) { VFMADD231PS(k["c5free"], r[i], b[i]) })  // c4 + c5·r
	each(func(i int) { VFMADD231PS(k["c3free"], r[i], a[i]) })  // c2 + c3·r
	each(func(i int) { VFMADD231PS(k["c6free"], r2[i], b[i]) }) // c4 + c5·r + c6·r²
	each(func(i int) { VFMADD231PS(b[i], r2[i], a[i]) })        // P
	each(func(i int) { VFMADD213PS(r[i], r2[i], a[i]) })        // t = r + r²·P
	each(func(i int) { VPSLLD(U8(23), z[i], z[i]) })            // s = 2^(N+24)
	each(func(i int) { VFMADD213PS(z[i], z[i], a[i]) })         // s + t·s
	return a
}

// freeConsts are freeExp's constants; those named in freeInRegs are kept in registers.
var (
	freeConsts = []struct {
		name string
		v    float32
	}{
		{"magicFree", math.Float32frombits(0x4b400000 + 151)}, {"log2e", log2e}, {"ln2hi", ln2hi}, {"ln2lo", ln2lo},
		{"c2free", poly[0]}, {"c3free", poly[1]}, {"c4free", poly[2]}, {"c5free", poly[3]}, {"c6free", poly[4]},
	}
	freeInRegs = []string{"magicFree", "log2e"}
)

// poly is the fit both table-free exponentials use (TestPolynomial checks it).
var poly = expfree.Poly

// expSumTable writes ExpSum{AVX2,AVX512} on their exponentials (tableExp.exp): eight vectors per
// iteration (then four, then one), which take the fast path unless an element is below
// −m (or the row's max is outside [0, 2¹²]). When the caller's min shows no element
// below −m, no vector is checked (the minimum comes from the max pass, whose loads it
// shares, and the check cost the exp pass one compare per vector on its busiest ports:
// AVX-512 on a Sapphire Rapids Xeon, n = 4096…131072, −4…−7 % without it); otherwise
// each group is, the four at once on AVX2 and each pair on AVX-512. On AVX-512 the
// eight exponentials are summed in float32 as a tree of depth three and the sum widened
// to float64: every term is rounded at most three times before the float64 sum
// (relative error ≤ 3·2⁻²⁴; with the table's 1.3u kernels.Softmax's bound allows it), at
// 1.5 vector operations per vector (2 with four per iteration: −2…−4 % on the same
// Xeon). AVX2's exponentials (1.65u) leave room for two roundings only: each group of
// four is a tree of depth two, widened on its own (2 operations per vector).
func expSumTable(t tableExp) {
	isa := t.isa
	avx512 := isa.Lanes == 16
	name := "ExpSum" + isa.Suffix
	TEXT(name, NOSPLIT, "func(x []float32, max float32, min float32) float64")
	Pragma("noescape")
	nan := "a NaN element makes the sum NaN."
	Doc(name+" replaces each x[i] by 2²⁴·exp(x[i]−max) and returns their sum, accumulated in float64",
		fmt.Sprintf("from float32 sums of %s. len(x) must be a multiple of %d, max finite and no smaller", map[bool]string{false: "four", true: "eight"}[avx512], isa.Lanes),
		"than any element and, if x holds no NaN, min no larger than any element (−Inf when unknown);",
		nan)
	x := Mem{Base: Load(Param("x").Base(), GP64())}
	n := Load(Param("x").Len(), GP64())
	m, lim := isa.Vec(), isa.Vec()
	VBROADCASTSS(ParamAddr("max"), m)
	// lim: elements below it take the general path; all of them unless 0 ≤ m ≤ 2¹².
	VXORPS(splat("signBit", math.Float32frombits(0x80000000)), m, lim)
	if avx512 {
		outside := K()
		VCMPPS(U8(0x1d), splat("zero", 0), m, outside) // m ≥ 0
		VCMPPS(U8(0x12), splat("fastMax", fastMax), m, outside, outside)
		KNOTW(outside, outside)
		VMOVUPS(splat("posInf", float32(math.Inf(1))), outside, lim)
	} else {
		in, le := YMM(), YMM()
		VCMPPS(U8(0x1d), splat("zero", 0), m, in)          // m ≥ 0
		VCMPPS(U8(0x12), splat("fastMax", fastMax), m, le) // m ≤ 2¹²
		VANDPS(le, in, in)
		inf := YMM()
		VMOVUPS(splat("posInf", float32(math.Inf(1))), inf)
		VBLENDVPS(in, lim, inf, lim) // lim = in ? −m : +Inf
	}
	c := t.consts(m, lim)
	acc := []reg.VecVirtual{isa.Vec(), isa.Vec()}
	for _, a := range acc {
		VXORPS(a, a, a)
	}
	flush := func(s reg.VecVirtual) {
		h, lo, hi := isa.Vec(), isa.Vec(), isa.Vec()
		highHalf(isa, s, isa.Half(h))
		VCVTPS2PD(isa.Half(s), lo)
		VCVTPS2PD(isa.Half(h), hi)
		VADDPD(lo, acc[0], acc[0])
		VADDPD(hi, acc[1], acc[1])
	}
	// unclamped is set while the loops for rows whose min shows every d ≥ −103 are
	// written (AVX2 only): their fast path needs no clamp.
	unclamped := false
	// block computes the exponentials of vectors [first, first+count) of the iteration,
	// general or not, stores them and returns their float32 sum.
	block := func(first, count int, general bool) reg.VecVirtual {
		var ys []reg.VecVirtual
		group := 1
		if avx512 {
			group = 2
		}
		for g := first; g < first+count; g += group {
			xs := make([]reg.VecVirtual, group)
			for u := range xs {
				xs[u] = loadVec(isa, x.Offset((g+u)*isa.Bytes()))
			}
			for u, y := range t.exp(c, xs, general, !unclamped) {
				VMOVUPS(y, x.Offset((g+u)*isa.Bytes()))
				ys = append(ys, y)
			}
		}
		for len(ys) > 1 { // a tree: each term rounded once per level
			for i := 0; i+1 < len(ys); i += 2 {
				VADDPS(ys[i+1], ys[i], ys[i])
			}
			var next []reg.VecVirtual
			for i := 0; i < len(ys); i += 2 {
				next = append(next, ys[i])
			}
			ys = next
		}
		return ys[0]
	}
	// checked runs block on count vectors, on the fast path unless one is below lim.
	checked := func(first, count int) reg.VecVirtual {
		slow, join := label("expslow", isa), label("expjoin", isa)
		if avx512 {
			below := []reg.OpmaskVirtual{K(), K()}
			for u := range below {
				VCMPPS(U8(0x0e), x.Offset((first+u)*isa.Bytes()), lim, below[u]) // lim > x
			}
			KORTESTW(below[0], below[1])
		} else {
			var any reg.VecVirtual
			for u := 0; u < count; u++ {
				b := YMM()
				VCMPPS(U8(0x0e), x.Offset((first+u)*isa.Bytes()), lim, b) // lim > x
				if any == nil {
					any = b
				} else {
					VORPS(b, any, any)
				}
			}
			VTESTPS(any, any)
		}
		sum := isa.Vec()
		JNZ(LabelRef(slow))
		VMOVUPS(block(first, count, false), sum)
		JMP(LabelRef(join))
		Label(slow)
		VMOVUPS(block(first, count, true), sum)
		Label(join)
		return sum
	}
	// loops runs eight vectors per iteration while eight remain, then four, each group
	// of vectors checked or not; their float32 sums form one tree per iteration.
	group := 4 // vectors per check
	if avx512 {
		group = 2
	}
	tail, done := label("exp1", isa), label("expdone", isa)
	loops := func(check bool) {
		for _, vectors := range []int{8, 4} {
			top, next := label(fmt.Sprintf("exp%d", vectors), isa), label(fmt.Sprintf("exp%ddone", vectors), isa)
			Label(top)
			CMPQ(n, U32(vectors*isa.Lanes))
			JB(LabelRef(next))
			var sums []reg.VecVirtual
			for first := 0; first < vectors; first += group {
				if check {
					sums = append(sums, checked(first, group))
				} else {
					sums = append(sums, block(first, group, false))
				}
			}
			for len(sums) > 1 && !t.free {
				var up []reg.VecVirtual
				for i := 0; i < len(sums); i += 2 {
					VADDPS(sums[i+1], sums[i], sums[i])
					up = append(up, sums[i])
				}
				sums = up
			}
			for _, s := range sums {
				flush(s)
			}
			ADDQ(U32(vectors*isa.Bytes()), x.Base)
			SUBQ(U32(vectors*isa.Lanes), n)
			JMP(LabelRef(top))
			Label(next)
		}
	}
	// When min shows every element at or above lim, no group needs its check. (A NaN
	// element takes the fast path either way: its exponential is NaN.)
	lo, checkEach := XMM(), label("expchecked", isa)
	VMOVSS(ParamAddr("min"), lo)
	VUCOMISS(lim.AsX(), lo)
	JB(LabelRef(checkEach)) // min < lim, or min is NaN
	var free string
	if !avx512 {
		// The clamp is one of the ~23 operations per vector of AVX2's fast path (and a
		// link of its dependency chain); when fl(min − m) ≥ −103, every fl(x − m) is
		// too (rounding is monotonic), and the clamp would leave d as it is: rows of
		// attention logits and of probabilities (a softmax run again) take these loops.
		unclampedLabels = true
		free = label("expunclamped", isa)
		unclampedLabels = false
		VSUBSS(m.AsX(), lo, lo)
		VUCOMISS(splat("clampFree", -103), lo)
		JAE(LabelRef(free))
	}
	loops(false)
	JMP(LabelRef(tail))
	Label(checkEach)
	loops(true)
	if !avx512 {
		JMP(LabelRef(tail))
		Label(free)
		unclamped, unclampedLabels = true, true
		loops(false)
		unclamped, unclampedLabels = false, false
	}

	Label(tail)
	TESTQ(n, n)
	JZ(LabelRef(done))
	y := t.exp(c, []reg.VecVirtual{loadVec(isa, x)}, true, true)[0]
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

func loadVec(isa ISA, m Mem) reg.VecVirtual {
	v := isa.Vec()
	VMOVUPS(m, v)
	return v
}

var labels, freeLabels int

// label names a new label. The unclamped loops count theirs apart, so that adding
// them left the other labels' names (which asm's tests refer to) as they were.
func label(what string, isa ISA) string {
	if unclampedLabels {
		freeLabels++
		return fmt.Sprintf("%sfree%s_%d", what, isa.Suffix, freeLabels)
	}
	labels++
	return fmt.Sprintf("%s%s_%d", what, isa.Suffix, labels)
}

var unclampedLabels bool
