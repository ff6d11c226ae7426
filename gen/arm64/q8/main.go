// Command q8 generates asm/q8_arm64.s: ggml's q8_0 quantization and dequantization with
// ARMv8.0 Advanced SIMD, one 32-value block (eight vectors) per iteration.
//
// Quantize is bit for bit ggml's quantize_row_q8_0_ref as package q8's doc states it.
// The body quantizes the blocks without a NaN and stops at the first block that holds
// one, returning the number of blocks done; package q8 quantizes that block in Go
// (ggml's order-dependent NaN handling) and calls the body again for the rest.
package main

import . "github.com/kvsimd/kvsimd/gen/neon"

func main() {
	f := NewFile("arm64/q8")
	quantize(f)
	dequantize(f)
	f.Write()
}

// quantize, per block:
//
//   - amax: FABS, then a tree of FMAX and FMAXV. FMAX gives NaN when either lane is
//     NaN, so the tree is NaN exactly when the block holds a NaN, and that ends the
//     call (the block is rewound); without NaN, max is associative and the tree is
//     ggml's max.
//   - d = amax/127 and id = 1/d with FDIVS, as the C divides; id = 0 when d is +0
//     (amax is never negative or NaN here, so d is +0 exactly when its bits are 0).
//   - D = FCVT to half, rounding as FPCR says: nearest even in Go programs, no flush to
//     zero, overflow to Inf.
//   - q: y = x·id (FMUL, one rounding as in the C), then FCVTAS, which is roundf
//     and the conversion to int32 in one step: ties away from zero, NaN to 0, and
//     saturation outside int32. Saturation differs from the low byte that package q8
//     keeps only for y ≥ 2³¹ (INT32_MAX, low byte 0xff, where every such integer has
//     low byte 0), so lanes with y ≥ 2³¹ (+Inf included; false for NaN) are cleared;
//     at −2³¹ and below, INT32_MIN's low byte is 0 as it should be. UZP1 twice keeps
//     the low byte of each lane, in order.
func quantize(f *File) {
	f.Func("Q8QuantizeNEON", "(dst []byte, src []float32) (n int)", 56,
		"Q8QuantizeNEON quantizes blocks of 32 values of src into dst, 34 bytes each, as ggml's quantize_row_q8_0_ref, up to len(src)/32 blocks or the first block that holds a NaN, which it leaves alone; it returns the number of blocks done.")
	f.I("MOVD dst_base+0(FP), R0")
	f.I("MOVD src_base+24(FP), R1")
	f.I("MOVD src_len+32(FP), R2")
	f.I("LSR $5, R2")
	f.I("MOVD R2, R7")          // blocks in all
	f.I("MOVW $0x42fe0000, R3") // 127.0
	f.I("FMOVS R3, F30")
	f.I("FMOVS $1.0, F29")
	f.I("MOVW $0x4f000000, R3") // 2³¹
	f.I("VDUP R3, V28.S4")
	f.Label("block")
	f.I("CBZ R2, done")
	f.I("VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4]")
	f.I("VLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4]")
	for i := V(0); i < 8; i++ {
		f.W(FABS4S(16+i, i))
	}
	f.W(FMAX4S(16, 16, 17), FMAX4S(18, 18, 19), FMAX4S(20, 20, 21), FMAX4S(22, 22, 23),
		FMAX4S(16, 16, 18), FMAX4S(20, 20, 22), FMAX4S(16, 16, 20), FMAXV4S(16, 16))
	f.I("FCMPS F16, F16")
	f.I("BVS nan")             // unordered: the block holds a NaN
	f.I("FDIVS F30, F16, F17") // d = amax / 127
	f.I("FMOVS F17, R3")
	f.I("CBZW R3, zero")
	f.I("FDIVS F17, F29, F18") // id = 1 / d
	f.I("B scale")
	f.Label("zero")
	f.I("FMOVS R3, F18") // id = 0
	f.Label("scale")
	f.W(FCVTHS(19, 17))
	f.I("FMOVS F19, R4")
	f.I("MOVH R4, (R0)")
	f.I("VDUP V18.S[0], V24.S4")
	for i := V(0); i < 8; i++ {
		f.W(FMUL4S(i, i, 24), FCVTAS4S(16+i, i), FCMGE4S(i, i, 28), BIC16B(16+i, 16+i, i))
	}
	f.W(UZP18H(0, 16, 17), UZP18H(1, 18, 19), UZP18H(2, 20, 21), UZP18H(3, 22, 23),
		UZP116B(0, 0, 1), UZP116B(1, 2, 3))
	f.I("ADD $2, R0, R5")
	f.I("VST1 [V0.B16, V1.B16], (R5)")
	f.I("ADD $34, R0")
	f.I("SUB $1, R2")
	f.I("B block")
	f.Label("nan")
	f.I("SUB $128, R1") // leave the block to the caller
	f.Label("done")
	f.I("SUB R2, R7")
	f.I("MOVD R7, n+48(FP)")
	f.I("RET")
}

// dequantize widens D with FCVT and multiplies the sign-extended, converted quants by
// it; q·D is exact (8 by 11 significant bits).
func dequantize(f *File) {
	f.Func("Q8DequantizeNEON", "(dst []float32, src []byte)", 48,
		"Q8DequantizeNEON writes the values of len(dst)/32 q8_0 blocks of src into dst.")
	f.I("MOVD dst_base+0(FP), R0")
	f.I("MOVD dst_len+8(FP), R2")
	f.I("MOVD src_base+24(FP), R1")
	f.I("LSR $5, R2")
	f.Label("block")
	f.I("CBZ R2, done")
	f.I("MOVHU (R1), R3")
	f.I("FMOVS R3, F16")
	f.W(FCVTSH(16, 16))
	f.I("VDUP V16.S[0], V16.S4")
	f.I("ADD $2, R1, R5")
	f.I("VLD1 (R5), [V0.B16, V1.B16]")
	f.W(SXTL8H(2, 0), SXTL28H(3, 0), SXTL8H(4, 1), SXTL28H(5, 1))
	for i := V(0); i < 4; i++ {
		f.W(SXTL4S(6+2*i, 2+i), SXTL24S(7+2*i, 2+i))
	}
	for i := V(6); i < 14; i++ {
		f.W(SCVTF4S(i, i), FMUL4S(i, i, 16))
	}
	f.I("VST1.P [V6.S4, V7.S4, V8.S4, V9.S4], 64(R0)")
	f.I("VST1.P [V10.S4, V11.S4, V12.S4, V13.S4], 64(R0)")
	f.I("ADD $34, R1")
	f.I("SUB $1, R2")
	f.I("B block")
	f.Label("done")
	f.I("RET")
}
