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

// Constant registers of ExpSumNEON: the same exponential as the amd64 generator's
// expScaled, whose comments explain the constants.
const (
	vMax, vNegMax, vErrLo, vErrHi, vClampLo = 16, 17, 18, 19, 20
	vLog2e, vMagic, vLn2hi, vLn2lo          = 21, 22, 23, 24
	vC7                                     = 25 // c7..c2 in V25..V30, 1 in V31
	vOne                                    = 31
)

// expScaled sets V4 to 2²⁴·e^(V0−max) lanewise, using V1..V6.
func expScaled(f *File) {
	f.W(
		FSUB4S(1, 0, vMax), // d = x − m
		FSUB4S(2, 1, 0),    // 2Sum(x, −m): z = d − x
		FSUB4S(3, 1, 2),    //              e = d − z
		FSUB4S(3, 0, 3),    //              e = x − e
		FSUB4S(2, vNegMax, 2),
		FADD4S(3, 3, 2), //                 e += −m − z
		// FMAXNM/FMINNM return the number when e is NaN (d = −Inf).
		FMAXNM4S(3, 3, vErrLo), FMINNM4S(3, 3, vErrHi),
		FMAXNM4S(1, 1, vClampLo),
	)
	f.I("VMOV V%d.B16, V5.B16", vMagic)
	f.I("VFMLA V1.S4, V%d.S4, V5.S4", vLog2e) // v = magic + d·log₂e, rounded to an integer
	f.W(FSUB4S(2, 5, vMagic))                 // k
	f.I("VFMLS V2.S4, V%d.S4, V1.S4", vLn2hi) // r = d − k·ln2hi (exact)
	f.I("VFMLS V2.S4, V%d.S4, V1.S4", vLn2lo) //     − k·ln2lo
	f.W(FADD4S(1, 1, 3))                      //     + e
	f.I("VMOV V%d.B16, V4.B16", vC7+1)
	f.I("VFMLA V1.S4, V%d.S4, V4.S4", vC7) // p = c6 + r·c7
	p, q := 4, 6
	for c := vC7 + 2; c <= vOne+1; c++ {
		f.I("VMOV V%d.B16, V%d.B16", min(c, vOne), q)
		f.I("VFMLA V1.S4, V%d.S4, V%d.S4", p, q) // p = c + r·p
		p, q = q, p
	}
	f.I("VSHL $23, V5.S4, V5.S4") // 2^(k+24)
	f.W(FMUL4S(4, V(p), 5))
}

// expSumKernel is the amd64 ExpSum: x[i] = 2²⁴·e^(x[i]−max), returning the sum, each
// value widened to float64 before it is added.
func expSumKernel(f *File) {
	f.Func("ExpSumNEON", "(x []float32, max float32) float64", 40,
		"ExpSumNEON replaces each x[i] by 2²⁴·exp(x[i]−max) and returns their float64 sum. max must be finite, no element may exceed it and none may be NaN.")
	f.I("MOVD x_base+0(FP), R0")
	f.I("MOVD x_len+8(FP), R1")
	f.I("FMOVS max+24(FP), F%d", vMax)
	f.I("FNEGS F%d, F%d", vMax, vNegMax)
	f.I("VDUP V%d.S[0], V%d.S4", vMax, vMax)
	f.I("VDUP V%d.S[0], V%d.S4", vNegMax, vNegMax)
	splat(f, vErrLo, -0x1p-10)
	splat(f, vErrHi, 0x1p-10)
	splat(f, vClampLo, -104)
	splat(f, vLog2e, math.Log2E)
	splat(f, vMagic, 0x1.8p23+151)
	splat(f, vLn2hi, 0.693359375)
	splat(f, vLn2lo, math.Ln2-0.693359375)
	for i, c := range []float32{1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1} {
		splat(f, vC7+i, c)
	}
	for _, v := range []int{13, 14, 15} {
		f.I("VEOR V%d.B16, V%d.B16, V%d.B16", v, v, v)
	}
	vector := func() {
		expScaled(f)
		f.I("VST1.P [V4.S4], 16(R0)")
		f.W(FCVTL2D(6, 4), FCVTL22D(7, 4), FADD2D(14, 14, 6), FADD2D(15, 15, 7))
	}
	loops(f, func() {
		for range 4 {
			f.I("VLD1 (R0), [V0.S4]")
			vector()
		}
	}, func() {
		f.I("VLD1 (R0), [V0.S4]")
		vector()
	}, func() {
		f.I("FMOVS (R0), F0") // the other lanes are zero, and harmless
		expScaled(f)
		f.I("FMOVS.P F4, 4(R0)")
		f.I("FCVTSD F4, F4")
		f.I("FADDD F4, F13, F13")
	})
	f.W(FADD2D(14, 14, 15), FADDP2D(14, 14))
	f.I("FADDD F13, F14, F14")
	f.I("FMOVD F14, ret+32(FP)")
	f.I("RET")
}
