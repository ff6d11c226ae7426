// Command softmax generates asm/softmax_arm64.s: the three passes of Softmax (Max,
// ExpSum, Scale) and the reductions Sum and Add, on NEON.
package main

import (
	"math"

	. "github.com/kvsimd/kvsimd/gen/neon"
)

func main() {
	f := NewFile("arm64/softmax")
	maxKernel(f)
	sumKernel(f)
	addKernel(f)
	scaleKernel(f)
	expSumKernel(f)
	f.Write()
}

// splat sets every lane of v to the float32 c.
func splat(f *File, v int, c float32) {
	f.I("MOVW $0x%08x, R2", math.Float32bits(c))
	f.I("VDUP R2, V%d.S4", v)
}

// loops emits the usual loop shape: 16 elements, then 4, then one at
// a time; n is in R1 and each body advances its own pointers.
func loops(f *File, body16, body4, body1 func()) {
	f.Label("loop16")
	f.I("CMP $16, R1")
	f.I("BLT loop4")
	body16()
	f.I("SUB $16, R1")
	f.I("B loop16")
	f.Label("loop4")
	f.I("CMP $4, R1")
	f.I("BLT tail")
	body4()
	f.I("SUB $4, R1")
	f.I("B loop4")
	f.Label("tail")
	f.I("CBZ R1, done")
	body1()
	f.I("SUB $1, R1")
	f.I("B tail")
	f.Label("done")
}

// maxKernel relies on FMAX, FMAXV and scalar FMAX propagating NaNs, so unlike AVX it
// needs no separate NaN detector.
func maxKernel(f *File) {
	f.Func("MaxNEON", "(x []float32) float32", 28,
		"MaxNEON returns the largest element of x, NaN if x holds one, −Inf if x is empty.")
	f.I("MOVD x_base+0(FP), R0")
	f.I("MOVD x_len+8(FP), R1")
	splat(f, 0, float32(math.Inf(-1)))
	for v := 1; v <= 3; v++ {
		f.I("VMOV V0.B16, V%d.B16", v)
	}
	f.I("VMOV V0.B16, V8.B16")
	loops(f, func() {
		f.I("VLD1.P 64(R0), [V4.S4, V5.S4, V6.S4, V7.S4]")
		f.W(FMAX4S(0, 0, 4), FMAX4S(1, 1, 5), FMAX4S(2, 2, 6), FMAX4S(3, 3, 7))
	}, func() {
		f.I("VLD1.P 16(R0), [V4.S4]")
		f.W(FMAX4S(0, 0, 4))
	}, func() {
		f.I("FMOVS.P 4(R0), F4")
		f.I("FMAXS F4, F8, F8")
	})
	f.W(FMAX4S(0, 0, 1), FMAX4S(2, 2, 3), FMAX4S(0, 0, 2), FMAXV4S(0, 0))
	f.I("FMAXS F8, F0, F0")
	f.I("FMOVS F0, ret+24(FP)")
	f.I("RET")
}

// sumKernel widens every element to float64 before adding.
func sumKernel(f *File) {
	f.Func("SumNEON", "(x []float32) float64", 32,
		"SumNEON returns the float64 sum of the elements of x.")
	f.I("MOVD x_base+0(FP), R0")
	f.I("MOVD x_len+8(FP), R1")
	for v := 0; v <= 3; v++ {
		f.I("VEOR V%d.B16, V%d.B16, V%d.B16", v, v, v)
	}
	f.I("VEOR V10.B16, V10.B16, V10.B16")
	widenAdd := func(src V, acc V) {
		f.W(FCVTL2D(8, src), FCVTL22D(9, src), FADD2D(acc, acc, 8), FADD2D(acc+1, acc+1, 9))
	}
	loops(f, func() {
		f.I("VLD1.P 64(R0), [V4.S4, V5.S4, V6.S4, V7.S4]")
		widenAdd(4, 0)
		widenAdd(5, 2)
		widenAdd(6, 0)
		widenAdd(7, 2)
	}, func() {
		f.I("VLD1.P 16(R0), [V4.S4]")
		widenAdd(4, 0)
	}, func() {
		f.I("FMOVS.P 4(R0), F4")
		f.I("FCVTSD F4, F4")
		f.I("FADDD F4, F10, F10")
	})
	f.W(FADD2D(0, 0, 1), FADD2D(2, 2, 3), FADD2D(0, 0, 2), FADDP2D(0, 0))
	f.I("FADDD F10, F0, F0")
	f.I("FMOVD F0, ret+24(FP)")
	f.I("RET")
}

func addKernel(f *File) {
	f.Func("AddNEON", "(dst []float32, src []float32)", 48,
		"AddNEON adds src[i] to dst[i] for every i < len(src).")
	f.I("MOVD dst_base+0(FP), R0")
	f.I("MOVD src_base+24(FP), R3")
	f.I("MOVD src_len+32(FP), R1")
	loops(f, func() {
		f.I("VLD1 (R0), [V0.S4, V1.S4, V2.S4, V3.S4]")
		f.I("VLD1.P 64(R3), [V4.S4, V5.S4, V6.S4, V7.S4]")
		f.W(FADD4S(0, 0, 4), FADD4S(1, 1, 5), FADD4S(2, 2, 6), FADD4S(3, 3, 7))
		f.I("VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R0)")
	}, func() {
		f.I("VLD1 (R0), [V0.S4]")
		f.I("VLD1.P 16(R3), [V4.S4]")
		f.W(FADD4S(0, 0, 4))
		f.I("VST1.P [V0.S4], 16(R0)")
	}, func() {
		f.I("FMOVS (R0), F0")
		f.I("FMOVS.P 4(R3), F4")
		f.I("FADDS F4, F0, F0")
		f.I("FMOVS.P F0, 4(R0)")
	})
	f.I("RET")
}

func scaleKernel(f *File) {
	f.Func("ScaleNEON", "(x []float32, s float32)", 28,
		"ScaleNEON multiplies every element of x by s.")
	f.I("MOVD x_base+0(FP), R0")
	f.I("MOVD x_len+8(FP), R1")
	f.I("FMOVS s+24(FP), F16")
	f.I("VDUP V16.S[0], V16.S4")
	loops(f, func() {
		f.I("VLD1 (R0), [V0.S4, V1.S4, V2.S4, V3.S4]")
		f.W(FMUL4S(0, 0, 16), FMUL4S(1, 1, 16), FMUL4S(2, 2, 16), FMUL4S(3, 3, 16))
		f.I("VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R0)")
	}, func() {
		f.I("VLD1 (R0), [V0.S4]")
		f.W(FMUL4S(0, 0, 16))
		f.I("VST1.P [V0.S4], 16(R0)")
	}, func() {
		f.I("FMOVS (R0), F0")
		f.I("FMULS F16, F0, F0")
		f.I("FMOVS.P F0, 4(R0)")
	})
	f.I("RET")
}

// ExpSumNEON is the AVX-512 ExpSum (gen/amd64/softmax) on NEON: the same table
// exponential, 2²⁴·e^d = 2^k · T[j]·e^r for d = x − m, with L = 16 entries of
// T[j] = 2²⁴·2^(j/16) = Thi[j] + Tlo[j] in registers and looked up with TBL, the same
// polynomial q = 1 + r/2 + r²/6 and combination Thi + (Thi·r + Tlo)·q in the same order
// of roundings, the same two paths (Fast2Sum when every element of the group lies in
// [lim, m], 2Sum otherwise), and the same float32 sum of four before the float64 sum.
// The error bound derived there (each exponential within 1.2·2⁻²⁴ of 2²⁴·e^d, the sum
// of four rounding each term at most twice) therefore holds here; what differs is how
// the steps are built from ARMv8.0 ASIMD:
//
//   - kq: N = FCVTNS(d·16·log₂e), the nearest integer (the product rounded first, so
//     |r| ≤ 1.0003·ln2/32 rather than ln2/32: the truncation of q grows by 0.2%), and
//     K = SCVTF(N) = 16·kq; r = d − K·(ln2hi/16) − K·(ln2lo/16) + e, the first step exact
//     as on amd64 (K·ln2hi/16 has at most 21 significant bits).
//   - T[j]: j = N & 15 and the byte indices 4j, 4j+1, 4j+2, 4j+3 of each lane
//     (j·0x04040404 + 0x03020100), two four-register TBLs.
//   - 2^k (no VSCALEFPS): the integer add of k·2²³ = (N &^ 15)·2¹⁹ to the result's bit
//     pattern, exact while the result stays normal. T[j]·e^r lies in
//     [2^(24−1/32), 2^(25−1/32)], exponent field 150 or 151, so k ≥ −149 suffices:
//     d ≥ −103 gives N ≥ −2378 and k = ⌊N/16⌋ ≥ −149 (a margin: the field first
//     wraps, into a NaN, at N = −2416, d ≈ −104.66, where the tests also put
//     elements). Below the cut-off d < −103 (−Inf included) the general path sets
//     the exponential to exactly 0 (an AND with FCMGE's mask); the output
//     it stands for is below e⁻¹⁰³ < 2⁻¹⁴⁸·⁵, inside the bound's 2⁻¹⁴⁷ for subnormal
//     outputs. The fast path needs no mask: its lim = max(−m, m − 103) (exact for
//     0 ≤ m < 2²⁴; lim = m above, lim > 0 > every x for m < 0) makes Fast2Sum valid
//     and d ≥ −103.
//
// Instructions per element of the innermost loop of ExpSum: every instruction its fast
// path executes in one iteration (conditional branches off the loop not taken, jumps
// followed), counted in the generated asm/softmax_*.s, then without the loop control
// (the count and pointer updates and the loop's own compare and branches). The old
// body's row is from asm/softmax_arm64.s at 1df93be; TestInstructionTable recomputes
// the others.
//
//	variant            elements   per iteration   per element   without loop control
//	neon, old body        16           152            9.50          148    9.25
//	neon, this body       16           105            6.56          103    6.44
//	avx512               128           169            1.32          164    1.28
//	avx2                  64           217            3.39          212    3.31
//
// Per vector (of four lanes) this body takes 22 instructions for the exponential where
// AVX-512 takes 17 (per vector of sixteen): the TBL index bytes (AND, DUP, MLA), the BIC
// that separates k from j, and one more DUP (FMLA only accumulates) make the difference;
// the other steps take as many instructions as on AVX-512.
const (
	vM    = 16 // m in every lane
	vMask = 17 // 15 in every lane
	vF    = 18 // float lanes: 16·log₂e, ln2hi/16, ln2lo/16, 1/6
	vG    = 19 // float lanes: lim, 1/2, 1, cut-off −103
	vI    = 20 // integer lanes: 0x04040404, 2¹⁹, 0x03020100
	vHi   = 24 // Thi in V24..V27
	vLo   = 28 // Tlo in V28..V31
	// float64 sums: two of vectors, one of the scalar tail
	vAcc0, vAcc1, vAccS = 21, 22, 23
)

// Constants of the exponential, the amd64 ones where they are the same.
var (
	log2e16 = float32(16 * math.Log2E)
	ln2hi   = float32(0.693359375)
	ln2lo   = float32(math.Ln2 - 0.693359375)
	cutOff  = float32(-103)
)

func f32(v float32) uint32 { return math.Float32bits(v) }

// consts is the memory image of V17..V20 and the tables V24..V31, in load order.
func consts() []uint32 {
	w := []uint32{15, 15, 15, 15,
		f32(log2e16), f32(ln2hi / 16), f32(ln2lo / 16), f32(1.0 / 6),
		0, f32(0.5), f32(1), f32(cutOff), // lane 0: lim, set at run time
		0x04040404, 1 << 19, 0x03020100, 0,
	}
	for _, lo := range []bool{false, true} {
		for j := 0; j < 16; j++ {
			v := 0x1p24 * math.Exp2(float64(j)/16)
			if lo {
				v -= float64(float32(v))
			}
			w = append(w, f32(float32(v)))
		}
	}
	return w
}

// pool hands out the scratch registers V4..V15; exp panics if a schedule needs more.
type pool struct{ free []V }

func newPool() *pool {
	p := &pool{}
	for v := V(15); v >= 4; v-- {
		p.free = append(p.free, v)
	}
	return p
}

func (p *pool) get() V {
	if len(p.free) == 0 {
		panic("softmax: out of scratch vector registers")
	}
	v := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	return v
}

func (p *pool) put(vs ...V) { p.free = append(p.free, vs...) }

// exp replaces each register of xs, holding x, by 2²⁴·e^(x−m), issuing each step for
// all of them before the next. Without general the caller guarantees lim ≤ x ≤ m.
func exp(f *File, p *pool, xs []V, general bool) {
	n := len(xs)
	vs := func() []V { return make([]V, n) }
	each := func(step func(i int)) {
		for i := 0; i < n; i++ {
			step(i)
		}
	}
	d, e, mask := vs(), vs(), vs()
	each(func(i int) { d[i] = p.get(); f.W(FSUB4S(d[i], xs[i], vM)) }) // d = x − m
	if general {
		z := vs()
		each(func(i int) { z[i], e[i] = p.get(), p.get(); f.W(FSUB4S(z[i], d[i], xs[i])) }) // 2Sum(x, −m): z = d − x
		each(func(i int) { f.W(FSUB4S(e[i], d[i], z[i])) })                                 //              e = d − z
		each(func(i int) { f.W(FSUB4S(e[i], xs[i], e[i])) })                                //              e = x − e (error of x)
		each(func(i int) { f.W(FADD4S(z[i], z[i], vM)) })                                   //              z = z + m (−error of −m)
		each(func(i int) { f.W(FSUB4S(e[i], e[i], z[i])); p.put(z[i]) })
		cut := p.get()
		f.I("VDUP V%d.S[3], V%d.S4", vG, cut)
		each(func(i int) { mask[i] = p.get(); f.W(FCMGE4S(mask[i], d[i], cut)) }) // d ≥ −103 (false for −Inf)
		p.put(cut)
	} else {
		each(func(i int) { e[i] = p.get(); f.W(FADD4S(e[i], d[i], vM)) }) // Fast2Sum(−m, x): z = d + m
		each(func(i int) { f.W(FSUB4S(e[i], xs[i], e[i])) })              //                  e = x − z
	}
	nn, k := vs(), vs()
	each(func(i int) { nn[i] = p.get(); f.W(FMULElem4S(nn[i], d[i], vF, 0)) }) // d·16·log₂e
	each(func(i int) { f.W(FCVTNS4S(nn[i], nn[i])) })                          // N = 16·kq, an integer
	each(func(i int) { k[i] = p.get(); f.W(SCVTF4S(k[i], nn[i])) })            // K = N as a float
	each(func(i int) { f.W(FMLSElem4S(d[i], k[i], vF, 1)) })                   // r = d − K·ln2hi/16 (exact)
	each(func(i int) { f.W(FMLSElem4S(d[i], k[i], vF, 2)); p.put(k[i]) })      //     − K·ln2lo/16
	each(func(i int) { f.W(FADD4S(d[i], d[i], e[i])); p.put(e[i]) })           //     + e
	r := d
	jj, idx := vs(), vs()
	each(func(i int) { jj[i] = p.get(); f.I("VAND V%d.B16, V%d.B16, V%d.B16", vMask, nn[i], jj[i]) }) // j
	each(func(i int) { f.W(BICImm4S(nn[i], 15)) })                                                    // 16·k
	each(func(i int) { idx[i] = p.get(); f.I("VDUP V%d.S[2], V%d.S4", vI, idx[i]) })
	each(func(i int) { f.W(MLAElem4S(idx[i], jj[i], vI, 0)); p.put(jj[i]) }) // bytes 4j..4j+3 of T[j]
	t, q := vs(), vs()
	each(func(i int) { t[i] = p.get(); f.I("VDUP V%d.S[1], V%d.S4", vG, t[i]) })
	each(func(i int) { f.W(FMLAElem4S(t[i], r[i], vF, 3)) }) // t = 1/2 + r/6
	each(func(i int) { q[i] = p.get(); f.I("VDUP V%d.S[2], V%d.S4", vG, q[i]) })
	each(func(i int) { f.I("VFMLA V%d.S4, V%d.S4, V%d.S4", t[i], r[i], q[i]); p.put(t[i]) }) // q = 1 + r·t
	hi, lo := xs, vs()
	each(func(i int) {
		f.I("VTBL V%d.B16, [V%d.B16, V%d.B16, V%d.B16, V%d.B16], V%d.B16", idx[i], vHi, vHi+1, vHi+2, vHi+3, hi[i])
	})
	each(func(i int) {
		lo[i] = p.get()
		f.I("VTBL V%d.B16, [V%d.B16, V%d.B16, V%d.B16, V%d.B16], V%d.B16", idx[i], vLo, vLo+1, vLo+2, vLo+3, lo[i])
		p.put(idx[i])
	})
	each(func(i int) { f.I("VFMLA V%d.S4, V%d.S4, V%d.S4", hi[i], r[i], lo[i]); p.put(r[i]) })        // lo = Tlo + Thi·r
	each(func(i int) { f.I("VFMLA V%d.S4, V%d.S4, V%d.S4", q[i], lo[i], hi[i]); p.put(lo[i], q[i]) }) // hi = Thi + lo·q
	each(func(i int) { f.W(MLAElem4S(hi[i], nn[i], vI, 1)); p.put(nn[i]) })                           // · 2^k, in the exponent field
	if general {
		each(func(i int) { f.I("VAND V%d.B16, V%d.B16, V%d.B16", mask[i], hi[i], hi[i]); p.put(mask[i]) })
	}
}

// expSumKernel writes ExpSumNEON. Sixteen elements per iteration in V0..V3, the fast
// path unless their minimum is below lim (FMINV against lane 0 of V19), computed as
// two pairs of interleaved chains (the scratch registers hold two); then single
// vectors and single elements on the general path.
func expSumKernel(f *File) {
	f.Func("ExpSumNEON", "(x []float32, max float32) float64", 40,
		"ExpSumNEON replaces each x[i] by 2²⁴·exp(x[i]−max) and returns their sum, accumulated in float64 from float32 sums of four vectors. Elements more than 103 below max give exactly 0. max must be finite, no element may exceed it and none may be NaN.")
	f.I("MOVD x_base+0(FP), R0")
	f.I("MOVD x_len+8(FP), R1")
	f.I("MOVD R0, R3") // the store pointer
	f.I("MOVD $expconsts<>(SB), R2")
	f.I("VLD1.P 64(R2), [V%d.S4, V%d.S4, V%d.S4, V%d.S4]", vMask, vF, vG, vI)
	f.I("VLD1.P 64(R2), [V%d.S4, V%d.S4, V%d.S4, V%d.S4]", vHi, vHi+1, vHi+2, vHi+3)
	f.I("VLD1 (R2), [V%d.S4, V%d.S4, V%d.S4, V%d.S4]", vLo, vLo+1, vLo+2, vLo+3)
	// lim = m ≥ 2²⁴ ? m : max(−m, m − 103), into lane 0 of V19.
	f.I("FMOVS max+24(FP), F%d", vM)
	f.I("FNEGS F%d, F4", vM)
	f.I("MOVW $0x%08x, R4", f32(-cutOff))
	f.I("FMOVS R4, F5")
	f.I("FSUBS F5, F%d, F5", vM)
	f.I("FMAXS F4, F5, F5")
	f.I("MOVW $0x%08x, R4", f32(0x1p24))
	f.I("FMOVS R4, F6")
	f.I("FCMPS F6, F%d", vM)
	f.I("FCSELS GE, F%d, F5, F5", vM)
	f.I("VMOV V5.S[0], V%d.S[0]", vG)
	f.I("VDUP V%d.S[0], V%d.S4", vM, vM)
	for _, v := range []int{vAcc0, vAcc1, vAccS} {
		f.I("VEOR V%d.B16, V%d.B16, V%d.B16", v, v, v)
	}
	p := newPool()
	widenAdd := func(s V) {
		a, b := p.get(), p.get()
		f.W(FCVTL2D(a, s), FCVTL22D(b, s), FADD2D(vAcc0, vAcc0, a), FADD2D(vAcc1, vAcc1, b))
		p.put(a, b)
	}
	four := func(general bool) {
		exp(f, p, []V{0, 1}, general)
		exp(f, p, []V{2, 3}, general)
	}

	f.I("SUBS $16, R1, R1")
	f.I("BLT vectors")
	f.Label("loop16")
	f.I("VLD1.P 64(R0), [V0.S4, V1.S4, V2.S4, V3.S4]")
	a, b := p.get(), p.get()
	f.W(FMIN4S(a, 0, 1), FMIN4S(b, 2, 3), FMIN4S(a, a, b), FMINV4S(a, a))
	f.I("FCMPS F%d, F%d", vG, a) // min < lim, or unordered
	p.put(a, b)
	f.I("BLT general16")
	four(false)
	f.Label("sum16")
	f.I("VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R3)")
	// A tree: each term rounded at most twice in float32 before the float64 sum.
	f.W(FADD4S(0, 0, 1), FADD4S(2, 2, 3), FADD4S(0, 0, 2))
	widenAdd(0)
	f.I("SUBS $16, R1, R1")
	f.I("BGE loop16")
	f.I("B vectors")
	f.Label("general16")
	four(true)
	f.I("B sum16")

	f.Label("vectors")
	f.I("ADDS $12, R1, R1") // R1 = n − 4
	f.I("BLT tail")
	f.Label("loop4")
	f.I("VLD1.P 16(R0), [V0.S4]")
	exp(f, p, []V{0}, true)
	f.I("VST1.P [V0.S4], 16(R3)")
	widenAdd(0)
	f.I("SUBS $4, R1, R1")
	f.I("BGE loop4")
	f.Label("tail")
	f.I("ADDS $4, R1, R1")
	f.I("BEQ done")
	f.Label("loop1")
	f.I("FMOVS.P 4(R0), F0") // the other lanes are zero, and harmless
	exp(f, p, []V{0}, true)
	f.I("FMOVS.P F0, 4(R3)")
	f.I("FCVTSD F0, F0")
	f.I("FADDD F0, F%d, F%d", vAccS, vAccS)
	f.I("SUBS $1, R1, R1")
	f.I("BNE loop1")
	f.Label("done")
	f.W(FADD2D(vAcc0, vAcc0, vAcc1), FADDP2D(vAcc0, vAcc0))
	f.I("FADDD F%d, F%d, F%d", vAccS, vAcc0, vAcc0)
	f.I("FMOVD F%d, ret+32(FP)", vAcc0)
	f.I("RET")
	f.Data("expconsts", consts())
}
