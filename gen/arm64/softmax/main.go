// Command softmax generates asm/softmax_arm64.s: the three passes of Softmax (MaxMin,
// ExpSum, Scale), AddSoftmax's last pass (ScaleAdd) and the reductions Max, Sum and
// Add, on NEON.
package main

import (
	"math"

	"github.com/kvsimd/kvsimd/gen/internal/expfree"
	. "github.com/kvsimd/kvsimd/gen/neon"
)

func main() {
	f := NewFile("arm64/softmax")
	maxKernel(f)
	maxMinKernel(f)
	sumKernel(f)
	addKernel(f)
	scaleKernel(f)
	expSumKernel(f)
	scaleAddKernel(f)
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
// needs no separate NaN detector. Its main loop keeps eight accumulators (V0–V3,
// V16–V19) and takes 32 elements an iteration: with four, each FMAX waited on the one
// before it into the same register (latency 2) and the loop ran at half the load pipes'
// rate (Neoverse V2 model: 1.48× the C reference at n = 4096, neonmca).
func maxKernel(f *File) {
	f.Func("MaxNEON", "(x []float32) float32", 28,
		"MaxNEON returns the largest element of x, NaN if x holds one, −Inf if x is empty.")
	f.I("MOVD x_base+0(FP), R0")
	f.I("MOVD x_len+8(FP), R1")
	splat(f, 0, float32(math.Inf(-1)))
	for _, v := range []int{1, 2, 3, 16, 17, 18, 19} {
		f.I("VMOV V0.B16, V%d.B16", v)
	}
	f.I("VMOV V0.B16, V8.B16")
	f.Label("loop32")
	f.I("CMP $32, R1")
	f.I("BLT loop16")
	f.I("VLD1.P 64(R0), [V4.S4, V5.S4, V6.S4, V7.S4]")
	f.I("VLD1.P 64(R0), [V20.S4, V21.S4, V22.S4, V23.S4]")
	f.W(FMAX4S(0, 0, 4), FMAX4S(1, 1, 5), FMAX4S(2, 2, 6), FMAX4S(3, 3, 7))
	f.W(FMAX4S(16, 16, 20), FMAX4S(17, 17, 21), FMAX4S(18, 18, 22), FMAX4S(19, 19, 23))
	f.I("SUB $32, R1")
	f.I("B loop32")
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
	f.W(FMAX4S(0, 0, 16), FMAX4S(1, 1, 17), FMAX4S(2, 2, 18), FMAX4S(3, 3, 19))
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

// scaleKernel loads and stores pairs of vectors (LDP, STP: llvm-mca's Neoverse V2 model
// takes one address µop for a pair where ST1 of four registers takes four).
func scaleKernel(f *File) {
	f.Func("ScaleNEON", "(x []float32, s float32)", 28,
		"ScaleNEON multiplies every element of x by s.")
	f.I("MOVD x_base+0(FP), R0")
	f.I("MOVD x_len+8(FP), R1")
	f.I("FMOVS s+24(FP), F16")
	f.I("VDUP V16.S[0], V16.S4")
	f.I("SUBS $16, R1, R1")
	f.I("BLT vectors")
	f.Label("loop16")
	f.I("FLDPQ (R0), (F0, F1)")
	f.I("FLDPQ 32(R0), (F2, F3)")
	f.W(FMUL4S(0, 0, 16), FMUL4S(1, 1, 16), FMUL4S(2, 2, 16), FMUL4S(3, 3, 16))
	f.I("FSTPQ.P (F0, F1), 32(R0)")
	f.I("FSTPQ.P (F2, F3), 32(R0)")
	f.I("SUBS $16, R1, R1")
	f.I("BGE loop16")
	f.Label("vectors")
	f.I("ADDS $12, R1, R1") // R1 = n − 4
	f.I("BLT tail")
	f.Label("loop4")
	f.I("VLD1 (R0), [V0.S4]")
	f.W(FMUL4S(0, 0, 16))
	f.I("VST1.P [V0.S4], 16(R0)")
	f.I("SUBS $4, R1, R1")
	f.I("BGE loop4")
	f.Label("tail")
	f.I("ADDS $4, R1, R1")
	f.I("BEQ done")
	f.Label("loop1")
	f.I("FMOVS (R0), F0")
	f.I("FMULS F16, F0, F0")
	f.I("FMOVS.P F0, 4(R0)")
	f.I("SUBS $1, R1, R1")
	f.I("BNE loop1")
	f.Label("done")
	f.I("RET")
}

// scaleAddKernel is AddSoftmax's last pass: Scale's loop with dst loaded beside x and
// the product added to it, FMUL then FADD (not FMLA, which would round once), so that
// its bits are ScaleNEON's followed by AddNEON's; the FADD takes dst first, as
// AddNEON's.
func scaleAddKernel(f *File) {
	f.Func("ScaleAddNEON", "(dst []float32, x []float32, s float32)", 52,
		"ScaleAddNEON adds x[i]·s, rounded, to dst[i] for every i < len(x).")
	f.I("MOVD dst_base+0(FP), R0")
	f.I("MOVD x_base+24(FP), R3")
	f.I("MOVD x_len+32(FP), R1")
	f.I("FMOVS s+48(FP), F16")
	f.I("VDUP V16.S[0], V16.S4")
	f.I("SUBS $16, R1, R1")
	f.I("BLT vectors")
	f.Label("loop16")
	f.I("FLDPQ.P 32(R3), (F4, F5)")
	f.I("FLDPQ.P 32(R3), (F6, F7)")
	f.I("FLDPQ (R0), (F0, F1)")
	f.I("FLDPQ 32(R0), (F2, F3)")
	f.W(FMUL4S(4, 4, 16), FMUL4S(5, 5, 16), FMUL4S(6, 6, 16), FMUL4S(7, 7, 16))
	f.W(FADD4S(0, 0, 4), FADD4S(1, 1, 5), FADD4S(2, 2, 6), FADD4S(3, 3, 7))
	f.I("FSTPQ.P (F0, F1), 32(R0)")
	f.I("FSTPQ.P (F2, F3), 32(R0)")
	f.I("SUBS $16, R1, R1")
	f.I("BGE loop16")
	f.Label("vectors")
	f.I("ADDS $12, R1, R1") // R1 = n − 4
	f.I("BLT tail")
	f.Label("loop4")
	f.I("VLD1 (R0), [V0.S4]")
	f.I("VLD1.P 16(R3), [V4.S4]")
	f.W(FMUL4S(4, 4, 16), FADD4S(0, 0, 4))
	f.I("VST1.P [V0.S4], 16(R0)")
	f.I("SUBS $4, R1, R1")
	f.I("BGE loop4")
	f.Label("tail")
	f.I("ADDS $4, R1, R1")
	f.I("BEQ done")
	f.Label("loop1")
	f.I("FMOVS (R0), F0")
	f.I("FMOVS.P 4(R3), F4")
	f.I("FMULS F16, F4, F4")
	f.I("FADDS F4, F0, F0")
	f.I("FMOVS.P F0, 4(R0)")
	f.I("SUBS $1, R1, R1")
	f.I("BNE loop1")
	f.Label("done")
	f.I("RET")
}

// maxMinKernel keeps eight accumulators for each of the maximum and the minimum: the
// sixteen FMAX and FMIN of an iteration take four cycles of the four vector pipes, so
// each chain (two cycles an operation) has room to spare. FMAX, FMIN and their
// reductions propagate NaNs.
func maxMinKernel(f *File) {
	f.Func("MaxMinNEON", "(x []float32) (max float32, min float32)", 32,
		"MaxMinNEON returns the largest and the smallest element of x, both NaN if x holds a NaN, −Inf and +Inf if x is empty.")
	f.I("MOVD x_base+0(FP), R0")
	f.I("MOVD x_len+8(FP), R1")
	splat(f, 0, float32(math.Inf(-1)))
	splat(f, 8, float32(math.Inf(1)))
	for a := 1; a < 8; a++ {
		f.I("VMOV V0.B16, V%d.B16", a)
		f.I("VMOV V8.B16, V%d.B16", 8+a)
	}
	f.I("VMOV V0.B16, V24.B16")
	f.I("VMOV V8.B16, V25.B16")
	f.I("SUBS $32, R1, R1")
	f.I("BLT vectors")
	f.Label("loop32")
	f.I("VLD1.P 64(R0), [V16.S4, V17.S4, V18.S4, V19.S4]")
	f.I("VLD1.P 64(R0), [V20.S4, V21.S4, V22.S4, V23.S4]")
	for a := V(0); a < 8; a++ {
		f.W(FMAX4S(a, a, 16+a), FMIN4S(8+a, 8+a, 16+a))
	}
	f.I("SUBS $32, R1, R1")
	f.I("BGE loop32")
	f.Label("vectors")
	f.I("ADDS $28, R1, R1") // R1 = n − 4
	f.I("BLT tail")
	f.Label("loop4")
	f.I("VLD1.P 16(R0), [V16.S4]")
	f.W(FMAX4S(0, 0, 16), FMIN4S(8, 8, 16))
	f.I("SUBS $4, R1, R1")
	f.I("BGE loop4")
	f.Label("tail")
	f.I("ADDS $4, R1, R1")
	f.I("BEQ done")
	f.Label("loop1")
	f.I("FMOVS.P 4(R0), F16")
	f.I("FMAXS F16, F24, F24")
	f.I("FMINS F16, F25, F25")
	f.I("SUBS $1, R1, R1")
	f.I("BNE loop1")
	f.Label("done")
	for _, s := range []V{4, 2, 1} {
		for a := V(0); a < s; a++ {
			f.W(FMAX4S(a, a, a+s), FMIN4S(8+a, 8+a, 8+a+s))
		}
	}
	f.W(FMAXV4S(0, 0), FMINV4S(8, 8))
	f.I("FMAXS F24, F0, F0")
	f.I("FMINS F25, F8, F8")
	f.I("FMOVS F0, max+24(FP)")
	f.I("FMOVS F8, min+28(FP)")
	f.I("RET")
}

// ExpSumNEON computes 2²⁴·e^d, d = x − m, without a table: the reduction by ln2 of
// the AVX bodies (gen/amd64/softmax) with L = 1, and a polynomial of degree 6 for e^r
// on |r| ≤ ln2/2. On NEON a table costs more than the degree it saves: a TBL needs its
// index bytes built per lane (AND, DUP, MLA for the 2^(j/16) table of the previous
// body), a four-register TBL is three µops (llvm-mca's Neoverse V2 and V1 models) and
// FCVTNS/SCVTF, which rounded d·16·log₂e, two each on half the vector pipes; that body
// took 28 vector-pipe µops per vector against 16 here. The steps, per vector:
//
//   - d = x − m, and its rounding error e recovered exactly: Fast2Sum when every
//     element of the group lies in [lim, m] (two operations), 2Sum otherwise (five), as
//     on amd64.
//   - z = fl(M + d·log₂e) with M = 1.5·2²³ + 24 (one FMLA onto M loaded from memory):
//     an integer, 24 + N above 1.5·2²³ with N = round(d·log₂e) (log₂e as a float32:
//     |N − d·log₂e| ≤ 1/2 + 2⁻¹⁸ for |d| ≤ 104); n = z − M exactly.
//   - r = (d − n·ln2hi) + (e − n·ln2lo), ln2hi = 355/512: the first step is exact (n·ln2hi
//     has at most 17 significant bits; the difference is below 1/2 and a multiple of
//     2⁻²⁵ when n ≠ 0), the second rounds below 2⁻³⁰, the sum rounds once (≤ 2⁻²⁶), and
//     the float32 ln2lo misses ln2 − ln2hi by 2⁻³⁷ (≤ 2⁻²⁹·⁸ at |n| ≤ 150): r is within
//     0.32u of x − m − n·ln2 (u = 2⁻²⁴), and |r| ≤ 0.3467 = R.
//   - p = 1 + (r + r²·P(r)), P(r) = (c2 + c3·r) + r²·((c4 + c5·r) + r²·c6), Estrin
//     with FMLA by element; the two addends c2 and c4 are loaded from memory rather than
//     copied (a load µop on a load pipe instead of a MOV on a vector pipe, as is M).
//     The float32 coefficients (consts) are a minimax fit of the relative error of
//     1 + r + r²·P against e^r on |r| ≤ R, 0.062u (TestPolynomial, gen/internal/expfree);
//     with c1 = 1 fixed, degree 5 would leave 1.76u.
//   - 2²⁴·e^d = 2^(N+24)·p: the integer add of (z's bits)·2²³ = (N + 24)·2²³ mod 2³² to
//     p's bits (one MLA by element; M's low nine bits are 24), exact while the result
//     stays normal: p ∈ [2^−½, 2^½] has the exponent field 126 or 127, so N ≥ −149
//     suffices, which d ≥ −103 gives. Below the cut-off d < −103 (−Inf included) the
//     general path sets the exponential to exactly 0 (an AND with FCMGE's mask); the
//     output it stands for is below e⁻¹⁰³ < 2⁻¹⁴⁸·⁵, inside the bound's 2⁻¹⁴⁷ for
//     subnormal outputs. The fast path needs no mask: its lim = max(−m, m − 103)
//     (exact for 0 ≤ m < 2²⁴; lim = m above, lim > 0 > every x for m < 0) makes
//     Fast2Sum valid and d ≥ −103.
//
// Error of one exponential, to first order: the reduction 0.32u and the truncation
// 0.062u; the product r²·A′ carries the roundings of r² and of Estrin's sums, about 2u
// of a term below R²·0.56 < 0.068, so 0.14u of p; t = r + r²·A′ rounds by at most 2⁻²⁶
// (2⁻²⁷ below |t| = 1/4), p = 1 + t by 2⁻²⁴ (2⁻²⁵ below 1). For r ≥ 0 (p ≥ 1) that is
// at most 1u + 0.125u (|t| < 1/4) or 0.8u + 0.2u (p ≥ 1.25); for r < 0 (p > 0.707) at
// most 0.71u + 0.35u + 0.2u for the last roundings and the product: 1.65u in all with
// the reduction and truncation. (An exact emulation of these steps over 10⁷ random
// pairs x ≤ m gave 1.41u.) Each output of Softmax therefore carries 2·1.65u from the
// exponentials, 2u from the float32 sums of four vectors (each term rounded at most
// twice before the float64 sum), and 2u from 1/s and the scaling: 7.3u < 8u = 2⁻²¹.
//
// Vector-pipe µops per vector of the fast path: 16 for the exponential (3 loads on the
// load pipes beside them), 1 for the store's data, 1.75 for the sum of four (three
// FADDs, two FCVTLs, two FADDs in float64 per four vectors): 18.75, where the C
// reference (neonmca's cref/kern_neon.c: degree 5, d's rounding error ignored, a clamp
// on every vector, a float32 running sum) takes about 20. MaxMinNEON finds the row's
// minimum in the max pass, at no cost on that model (the pass is bound by its FMAX
// chains or its vector pipes, not its loads), and a row whose minimum is at least lim
// runs without a check per group (loop16); other rows check each group of four
// vectors (FMIN, FMINV: 1.25 µops a vector) and take the general path for a group
// with an element below lim (check16). llvm-mca model estimates of one Softmax call at
// n = 4096 (neonmca, Neoverse V2): 9485 cycles with the table body, 5891 with this one
// (C 6198); ExpSum alone 8306 → 4850 (C's exp loop 5169), bound by the vector pipes.
//
// Instructions per element of the innermost loop of ExpSum: every instruction its fast
// path executes in one iteration (conditional branches off the loop not taken, jumps
// followed), counted in the generated asm/softmax_*.s, then without the loop control
// (the count and pointer updates and the loop's own compare and branches). The old
// bodies' rows are from asm/softmax_arm64.s at 1df93be and at 1018e91 and, for avx2's
// table body, asm/softmax_amd64.s at 9c077b1; TestInstructionTable recomputes the others.
//
//	variant            elements   per iteration   per element   without loop control
//	neon, first body      16           152            9.50          148    9.25
//	neon, table body      16           105            6.56          103    6.44
//	neon, this body       16            88            5.50           86    5.38
//	avx512               128           169            1.32          164    1.28
//	avx2, table body      64           217            3.39          212    3.31
//	avx2                  64           197            3.08          192    3.00
const (
	vM     = 16 // m in every lane
	vC1    = 17 // float lanes: log₂e, ln2hi, ln2lo, c3
	vC2    = 18 // lanes: c5, c6, 2²³ (an integer), unused
	vMagic = 19 // M in every lane
	vOne   = 20 // 1 in every lane
	vCut   = 21 // the cut-off −103 in every lane
	// float64 sums: two of vectors, one of the scalar tail
	vAcc0, vAcc1, vAccS = 22, 23, 24
	vLim                = 25 // lim, in lane 0
)

// The memory image of the constants, offsets from expconsts<>: C1, C2, then 16-byte
// splats that are loaded into registers (M, 1, the cut-off) or, per vector, as FMLA
// addends (M again, c2, c4).
const (
	offMagic = 32
	offC2    = 48
	offC4    = 64
	offOne   = 80
	offCut   = 96
)

// Constants of the exponential, the amd64 ones where they are the same.
var (
	log2e  = float32(math.Log2E)
	ln2hi  = float32(0.693359375)
	ln2lo  = float32(math.Ln2 - 0.693359375)
	cutOff = float32(-103)
	// magic is 1.5·2²³ + 24: z = fl(magic + d·log₂e) holds 24 + N in its low bits.
	magic = math.Float32frombits(0x4b400000 + 24)
	// poly and polyRange: the fit both table-free exponentials use.
	poly      = expfree.Poly
	polyRange = expfree.PolyRange
)

func f32(v float32) uint32 { return math.Float32bits(v) }

func splat4(v float32) []uint32 { return []uint32{f32(v), f32(v), f32(v), f32(v)} }

// consts is the memory image at expconsts<>.
func consts() []uint32 {
	w := []uint32{
		f32(log2e), f32(ln2hi), f32(ln2lo), f32(poly[1]),
		f32(poly[3]), f32(poly[4]), 1 << 23, 0,
	}
	for _, v := range []float32{magic, poly[0], poly[2], 1, cutOff} {
		w = append(w, splat4(v)...)
	}
	return w
}

// pool hands out the scratch registers V4…V15 and V26…V31; exp panics if a schedule
// needs more.
type pool struct{ free []V }

func newPool() *pool {
	p := &pool{}
	for v := V(31); v >= 26; v-- {
		p.free = append(p.free, v)
	}
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
// all of them before the next; R2 points at expconsts<>. Without general the caller
// guarantees lim ≤ x ≤ m.
func exp(f *File, p *pool, xs []V, general bool) {
	n := len(xs)
	vs := func() []V { return make([]V, n) }
	each := func(step func(i int)) {
		for i := 0; i < n; i++ {
			step(i)
		}
	}
	load := func(v V, off int) { f.I("FMOVQ %d(R2), F%d", off, v) }
	d, e, mask := vs(), vs(), vs()
	each(func(i int) { d[i] = p.get(); f.W(FSUB4S(d[i], xs[i], vM)) }) // d = x − m
	if general {
		z := vs()
		each(func(i int) { z[i], e[i] = p.get(), p.get(); f.W(FSUB4S(z[i], d[i], xs[i])) }) // 2Sum(x, −m): z = d − x
		each(func(i int) { f.W(FSUB4S(e[i], d[i], z[i])) })                                 //              e = d − z
		each(func(i int) { f.W(FSUB4S(e[i], xs[i], e[i])) })                                //              e = x − e (error of x)
		each(func(i int) { f.W(FADD4S(z[i], z[i], vM)) })                                   //              z = z + m (−error of −m)
		each(func(i int) { f.W(FSUB4S(e[i], e[i], z[i])); p.put(z[i]) })
		each(func(i int) { mask[i] = p.get(); f.W(FCMGE4S(mask[i], d[i], vCut)) }) // d ≥ −103 (false for −Inf)
	} else {
		each(func(i int) { e[i] = p.get(); f.W(FADD4S(e[i], d[i], vM)) }) // Fast2Sum(−m, x): z = d + m
		each(func(i int) { f.W(FSUB4S(e[i], xs[i], e[i])) })              //                  e = x − z
	}
	z, nn := vs(), vs()
	each(func(i int) { z[i] = p.get(); load(z[i], offMagic) })
	each(func(i int) { f.W(FMLAElem4S(z[i], d[i], vC1, 0)) })                // z = M + d·log₂e: 24 + N in the low bits
	each(func(i int) { nn[i] = p.get(); f.W(FSUB4S(nn[i], z[i], vMagic)) })  // n = N as a float
	each(func(i int) { f.W(FMLSElem4S(d[i], nn[i], vC1, 1)) })               // d − n·ln2hi (exact)
	each(func(i int) { f.W(FMLSElem4S(e[i], nn[i], vC1, 2)); p.put(nn[i]) }) // e − n·ln2lo
	each(func(i int) { f.W(FADD4S(d[i], d[i], e[i])); p.put(e[i]) })         // r
	r, r2, a, b := d, vs(), vs(), vs()
	each(func(i int) { r2[i] = p.get(); f.W(FMUL4S(r2[i], r[i], r[i])) })
	each(func(i int) { b[i] = p.get(); load(b[i], offC4) })
	each(func(i int) { a[i] = p.get(); load(a[i], offC2) })
	each(func(i int) { f.W(FMLAElem4S(b[i], r[i], vC2, 0)) })                                        // c4 + c5·r
	each(func(i int) { f.W(FMLAElem4S(a[i], r[i], vC1, 3)) })                                        // c2 + c3·r
	each(func(i int) { f.W(FMLAElem4S(b[i], r2[i], vC2, 1)) })                                       // c4 + c5·r + c6·r²
	each(func(i int) { f.I("VFMLA V%d.S4, V%d.S4, V%d.S4", r2[i], b[i], a[i]); p.put(b[i]) })        // P
	each(func(i int) { f.I("VFMLA V%d.S4, V%d.S4, V%d.S4", r2[i], a[i], r[i]); p.put(a[i], r2[i]) }) // t = r + r²·P
	each(func(i int) { f.W(FADD4S(xs[i], r[i], vOne)); p.put(r[i]) })                                // p = 1 + t
	each(func(i int) { f.W(MLAElem4S(xs[i], z[i], vC2, 2)); p.put(z[i]) })                           // · 2^(N+24)
	if general {
		each(func(i int) { f.I("VAND V%d.B16, V%d.B16, V%d.B16", mask[i], xs[i], xs[i]); p.put(mask[i]) })
	}
}

// expSumKernel writes ExpSumNEON: sixteen elements per iteration in V0…V3, computed as
// two pairs of interleaved chains (the scratch registers hold two), then single vectors
// and single elements on the general path. A row whose minimum is at least lim runs
// loop16, every group on the fast path; any other row check16, where a group takes the
// fast path unless its minimum (FMINV against lane 0 of V25) is below lim.
func expSumKernel(f *File) {
	f.Func("ExpSumNEON", "(x []float32, max float32, min float32) float64", 40,
		"ExpSumNEON replaces each x[i] by 2²⁴·exp(x[i]−max) and returns their sum, accumulated in float64 from float32 sums of four vectors. Elements more than 103 below max give exactly 0. max must be finite, no element may exceed it and none may be NaN, and min must be at most every element (−Inf when unknown).")
	f.I("MOVD x_base+0(FP), R0")
	f.I("MOVD x_len+8(FP), R1")
	f.I("MOVD R0, R3") // the store pointer
	f.I("MOVD $expconsts<>(SB), R2")
	f.I("VLD1 (R2), [V%d.S4, V%d.S4, V%d.S4]", vC1, vC2, vMagic)
	f.I("FMOVQ %d(R2), F%d", offOne, vOne)
	f.I("FMOVQ %d(R2), F%d", offCut, vCut)
	// lim = m ≥ 2²⁴ ? m : max(−m, m − 103), in lane 0 of V25.
	f.I("FMOVS max+24(FP), F%d", vM)
	f.I("FNEGS F%d, F4", vM)
	f.I("MOVW $0x%08x, R4", f32(-cutOff))
	f.I("FMOVS R4, F5")
	f.I("FSUBS F5, F%d, F5", vM)
	f.I("FMAXS F4, F5, F5")
	f.I("MOVW $0x%08x, R4", f32(0x1p24))
	f.I("FMOVS R4, F6")
	f.I("FCMPS F6, F%d", vM)
	f.I("FCSELS GE, F%d, F5, F%d", vM, vLim)
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
	// sum16 stores the four vectors and adds them into the float64 sums: a tree, each
	// term rounded at most twice in float32.
	sum16 := func() {
		f.I("FSTPQ.P (F0, F1), 32(R3)")
		f.I("FSTPQ.P (F2, F3), 32(R3)")
		f.W(FADD4S(0, 0, 1), FADD4S(2, 2, 3), FADD4S(0, 0, 2))
		widenAdd(0)
	}

	f.I("SUBS $16, R1, R1")
	f.I("BLT vectors")
	f.I("FMOVS min+28(FP), F4")
	f.I("FCMPS F%d, F4", vLim) // min < lim, or unordered
	f.I("BLT check16")
	f.Label("loop16")
	f.I("VLD1.P 64(R0), [V0.S4, V1.S4, V2.S4, V3.S4]")
	four(false)
	sum16()
	f.I("SUBS $16, R1, R1")
	f.I("BGE loop16")
	f.I("B vectors")

	f.Label("check16")
	f.I("VLD1.P 64(R0), [V0.S4, V1.S4, V2.S4, V3.S4]")
	a, b := p.get(), p.get()
	f.W(FMIN4S(a, 0, 1), FMIN4S(b, 2, 3), FMIN4S(a, a, b), FMINV4S(a, a))
	f.I("FCMPS F%d, F%d", vLim, a) // min < lim, or unordered
	p.put(a, b)
	f.I("BLT general16")
	four(false)
	f.Label("checked16")
	sum16()
	f.I("SUBS $16, R1, R1")
	f.I("BGE check16")
	f.I("B vectors")
	f.Label("general16")
	four(true)
	f.I("B checked16")

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
