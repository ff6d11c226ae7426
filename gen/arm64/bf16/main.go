// Command bf16 generates asm/bf16_arm64.s: bulk bfloat16⇄single conversion with
// ARMv8.0 integer ASIMD only, sixteen elements per iteration, then four, then one.
//
// Every instruction is one Go's assembler knows, so the file has no WORDs and needs no
// new encoder in package neon. Armv8.6's BFCVTN is not used: it is optional (FEAT_BF16;
// ARMv8.0 cores such as the Cortex-A53 lack it) and would need run-time detection and
// this code as its fallback anyway.
package main

import . "github.com/kvsimd/kvsimd/gen/neon"

func main() {
	f := NewFile("arm64/bf16")
	toFloat32(f)
	fromFloat32(f)
	f.Write()
}

// toFloat32 widens by interleaving a zero register below each bfloat16: ZIP1/ZIP2 of
// (zero, src) as halfwords put src[i] in the high half of word i, which is src[i]<<16.
func toFloat32(f *File) {
	f.Func("BF16ToFloat32NEON", "(dst []float32, src []uint16)", 48,
		"BF16ToFloat32NEON widens len(src) bfloat16s into dst[:len(src)]: each one's bits shifted left 16.")
	f.I("MOVD dst_base+0(FP), R0")
	f.I("MOVD src_base+24(FP), R1")
	f.I("MOVD src_len+32(FP), R2")
	f.I("VEOR V31.B16, V31.B16, V31.B16")
	f.Label("loop16")
	f.I("CMP $16, R2")
	f.I("BLT loop4")
	f.I("VLD1.P 32(R1), [V0.H8, V1.H8]")
	f.I("VZIP1 V0.H8, V31.H8, V2.H8")
	f.I("VZIP2 V0.H8, V31.H8, V3.H8")
	f.I("VZIP1 V1.H8, V31.H8, V4.H8")
	f.I("VZIP2 V1.H8, V31.H8, V5.H8")
	f.I("VST1.P [V2.S4, V3.S4, V4.S4, V5.S4], 64(R0)")
	f.I("SUB $16, R2")
	f.I("B loop16")
	f.Label("loop4")
	f.I("CMP $4, R2")
	f.I("BLT tail")
	f.I("VLD1.P 8(R1), [V0.H4]")
	f.I("VZIP1 V0.H8, V31.H8, V2.H8")
	f.I("VST1.P [V2.S4], 16(R0)")
	f.I("SUB $4, R2")
	f.I("B loop4")
	f.Label("tail")
	f.I("CBZ R2, done")
	f.I("MOVHU.P 2(R1), R3")
	f.I("LSLW $16, R3, R3")
	f.I("MOVW.P R3, 4(R0)")
	f.I("SUB $1, R2")
	f.I("B tail")
	f.Label("done")
	f.I("RET")
}

// Constant registers of fromFloat32.
const (
	one   = "V24" // 1 in each word
	bias  = "V25" // 0x7fff in each word
	abs   = "V26" // 0x7fffffff in each word
	nan   = "V27" // 0x7f800001 in each word: the smallest NaN's magnitude
	quiet = "V28" // 0x0040 in each halfword
)

// round leaves in word lanes t the rounded sum u + 0x7fff + ((u>>16)&1), whose high
// halfword is the result for a non-NaN u, and in a all ones where u is a NaN:
// min(|u|, 0x7f800001) = 0x7f800001 exactly when |u| is above Inf's bits. ASIMD has
// unsigned compares, but Go's assembler knows only CMEQ and CMTST of them.
func round(f *File, u, t, a int) {
	f.I("VUSHR $16, V%d.S4, V%d.S4", u, t)
	f.I("VAND %s.B16, V%d.B16, V%d.B16", one, t, t)
	f.I("VADD V%d.S4, V%d.S4, V%d.S4", u, t, t)
	f.I("VADD %s.S4, V%d.S4, V%d.S4", bias, t, t)
	f.I("VAND %s.B16, V%d.B16, V%d.B16", abs, u, a)
	f.I("VUMIN %s.S4, V%d.S4, V%d.S4", nan, a, a)
	f.I("VCMEQ %s.S4, V%d.S4, V%d.S4", nan, a, a)
}

// narrow writes to halfword lanes r the results of the words u0 (low four) and u1
// (high four), given round's t and a for each: UZP2 takes the high halfwords (the
// rounded results, and u>>16 for the quieted NaNs), UZP1 the low halfwords of the
// masks, and BIT inserts the NaN results under the mask. q and m are scratch.
func narrow(f *File, u0, u1, t0, t1, a0, a1, r, q, m int) {
	f.I("VUZP2 V%d.H8, V%d.H8, V%d.H8", t1, t0, r)
	f.I("VUZP2 V%d.H8, V%d.H8, V%d.H8", u1, u0, q)
	f.I("VORR %s.B16, V%d.B16, V%d.B16", quiet, q, q)
	f.I("VUZP1 V%d.H8, V%d.H8, V%d.H8", a1, a0, m)
	f.I("VBIT V%d.B16, V%d.B16, V%d.B16", m, q, r)
}

// fromFloat32 narrows with package bf16's formula: (u + 0x7fff + ((u>>16)&1)) >> 16, or
// u>>16 | 0x0040 where u is a NaN.
func fromFloat32(f *File) {
	f.Func("BF16FromFloat32NEON", "(dst []uint16, src []float32)", 48,
		"BF16FromFloat32NEON narrows len(src) singles into dst[:len(src)] as bfloat16s, rounding to nearest even with subnormals kept and NaNs quieted.")
	f.I("MOVD dst_base+0(FP), R0")
	f.I("MOVD src_base+24(FP), R1")
	f.I("MOVD src_len+32(FP), R2")
	for _, c := range []struct {
		v, arr string
		x      uint32
	}{{one, "S4", 1}, {bias, "S4", 0x7fff}, {abs, "S4", 0x7fffffff}, {nan, "S4", 0x7f800001}, {quiet, "H8", 0x40}} {
		f.I("MOVW $0x%x, R3", c.x)
		f.I("VDUP R3, %s.%s", c.v, c.arr)
	}
	f.I("MOVW $0x7f800000, R7")
	f.Label("loop16")
	f.I("CMP $16, R2")
	f.I("BLT loop4")
	f.I("VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4]")
	for i := range 4 {
		round(f, i, 4+i, 8+i)
	}
	narrow(f, 0, 1, 4, 5, 8, 9, 16, 18, 20)
	narrow(f, 2, 3, 6, 7, 10, 11, 17, 19, 21)
	f.I("VST1.P [V16.H8, V17.H8], 32(R0)")
	f.I("SUB $16, R2")
	f.I("B loop16")
	f.Label("loop4")
	f.I("CMP $4, R2")
	f.I("BLT tail")
	f.I("VLD1.P 16(R1), [V0.S4]")
	round(f, 0, 4, 8)
	narrow(f, 0, 0, 4, 4, 8, 8, 16, 18, 20) // the low four halfwords are V0's
	f.I("VST1.P [V16.H4], 8(R0)")
	f.I("SUB $4, R2")
	f.I("B loop4")
	f.Label("tail")
	f.I("CBZ R2, done")
	f.I("MOVWU.P 4(R1), R3")
	f.I("LSRW $16, R3, R4")
	f.I("ANDW $1, R4, R4")
	f.I("ADDW R3, R4, R4")
	f.I("ADDW $0x7fff, R4, R4")
	f.I("LSRW $16, R4, R4") // the rounded result
	f.I("LSRW $16, R3, R5")
	f.I("ORRW $0x40, R5, R5") // the NaN result
	f.I("ANDW $0x7fffffff, R3, R6")
	f.I("CMPW R7, R6")
	f.I("CSELW HI, R5, R4, R4") // |u| above Inf's bits: a NaN
	f.I("MOVH.P R4, 2(R0)")
	f.I("SUB $1, R2")
	f.I("B tail")
	f.Label("done")
	f.I("RET")
}
