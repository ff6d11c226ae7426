// Command fp16 generates asm/fp16_arm64.s: bulk half⇄single conversion with
// FCVTL/FCVTL2 and FCVTN/FCVTN2, sixteen elements per iteration, then four, then one.
package main

import . "github.com/kvsimd/kvsimd/gen/neon"

func main() {
	f := NewFile("arm64/fp16")
	toFloat32(f)
	fromFloat32(f)
	f.Write()
}

func toFloat32(f *File) {
	f.Func("ToFloat32NEON", "(dst []float32, src []uint16)", 48,
		"ToFloat32NEON widens len(src) halves into dst[:len(src)] with FCVTL.")
	f.I("MOVD dst_base+0(FP), R0")
	f.I("MOVD src_base+24(FP), R1")
	f.I("MOVD src_len+32(FP), R2")
	f.Label("loop16")
	f.I("CMP $16, R2")
	f.I("BLT loop4")
	f.I("VLD1.P 32(R1), [V0.H8, V1.H8]")
	f.W(FCVTL(2, 0), FCVTL2(3, 0), FCVTL(4, 1), FCVTL2(5, 1))
	f.I("VST1.P [V2.S4, V3.S4, V4.S4, V5.S4], 64(R0)")
	f.I("SUB $16, R2")
	f.I("B loop16")
	f.Label("loop4")
	f.I("CMP $4, R2")
	f.I("BLT tail")
	f.I("VLD1.P 8(R1), [V0.H4]")
	f.W(FCVTL(2, 0))
	f.I("VST1.P [V2.S4], 16(R0)")
	f.I("SUB $4, R2")
	f.I("B loop4")
	f.Label("tail")
	f.I("CBZ R2, done")
	f.I("MOVHU.P 2(R1), R3")
	f.I("FMOVS R3, F0")
	f.W(FCVTSH(0, 0))
	f.I("FMOVS.P F0, 4(R0)")
	f.I("SUB $1, R2")
	f.I("B tail")
	f.Label("done")
	f.I("RET")
}

// fromFloat32 rounds as FPCR says; Go programs run with the reset value, round to
// nearest even, and no flush to zero.
func fromFloat32(f *File) {
	f.Func("FromFloat32NEON", "(dst []uint16, src []float32)", 48,
		"FromFloat32NEON narrows len(src) singles into dst[:len(src)] with FCVTN, rounding to nearest even.")
	f.I("MOVD dst_base+0(FP), R0")
	f.I("MOVD src_base+24(FP), R1")
	f.I("MOVD src_len+32(FP), R2")
	f.Label("loop16")
	f.I("CMP $16, R2")
	f.I("BLT loop4")
	f.I("VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4]")
	f.W(FCVTN(4, 0), FCVTN2(4, 1), FCVTN(5, 2), FCVTN2(5, 3))
	f.I("VST1.P [V4.H8, V5.H8], 32(R0)")
	f.I("SUB $16, R2")
	f.I("B loop16")
	f.Label("loop4")
	f.I("CMP $4, R2")
	f.I("BLT tail")
	f.I("VLD1.P 16(R1), [V0.S4]")
	f.W(FCVTN(4, 0))
	f.I("VST1.P [V4.H4], 8(R0)")
	f.I("SUB $4, R2")
	f.I("B loop4")
	f.Label("tail")
	f.I("CBZ R2, done")
	f.I("FMOVS.P 4(R1), F0")
	f.W(FCVTHS(0, 0))
	f.I("FMOVS F0, R3")
	f.I("MOVH.P R3, 2(R0)")
	f.I("SUB $1, R2")
	f.I("B tail")
	f.Label("done")
	f.I("RET")
}
