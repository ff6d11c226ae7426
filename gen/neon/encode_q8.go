package neon

import "fmt"

// The instructions of the q8_0 kernels (gen/arm64/q8) that the Go assembler lacks. All
// are ARMv8.0 Advanced SIMD.

// FABS4S takes the lanewise absolute value (clears the sign bit, also of a NaN):
// fabs vd.4s, vn.4s.
func FABS4S(d, n V) Inst {
	return Inst{rd_rn(0x4ea0f800, d, n), fmt.Sprintf("fabs v%d.4s, v%d.4s", d, n)}
}

// FCVTAS4S converts to signed 32-bit integers, rounding to nearest with ties away from
// zero (C's roundf) and saturating, NaN to 0: fcvtas vd.4s, vn.4s.
func FCVTAS4S(d, n V) Inst {
	return Inst{rd_rn(0x4e21c800, d, n), fmt.Sprintf("fcvtas v%d.4s, v%d.4s", d, n)}
}

// BIC16B clears in n the bits set in m: bic vd.16b, vn.16b, vm.16b (d = n &^ m).
func BIC16B(d, n, m V) Inst {
	return Inst{rd_rn_rm(0x4e601c00, d, n, m), fmt.Sprintf("bic v%d.16b, v%d.16b, v%d.16b", d, n, m)}
}

// UZP18H takes the even-numbered 16-bit lanes of the concatenation n:m, on 32-bit
// lanes their low halves: uzp1 vd.8h, vn.8h, vm.8h.
func UZP18H(d, n, m V) Inst {
	return Inst{rd_rn_rm(0x4e401800, d, n, m), fmt.Sprintf("uzp1 v%d.8h, v%d.8h, v%d.8h", d, n, m)}
}

// UZP116B takes the even-numbered bytes of the concatenation n:m, on 16-bit lanes their
// low bytes: uzp1 vd.16b, vn.16b, vm.16b.
func UZP116B(d, n, m V) Inst {
	return Inst{rd_rn_rm(0x4e001800, d, n, m), fmt.Sprintf("uzp1 v%d.16b, v%d.16b, v%d.16b", d, n, m)}
}

// SXTL8H sign-extends the low eight bytes of n to 16 bits: sxtl vd.8h, vn.8b.
func SXTL8H(d, n V) Inst {
	return Inst{rd_rn(0x0f08a400, d, n), fmt.Sprintf("sxtl v%d.8h, v%d.8b", d, n)}
}

// SXTL28H sign-extends the high eight bytes of n to 16 bits: sxtl2 vd.8h, vn.16b.
func SXTL28H(d, n V) Inst {
	return Inst{rd_rn(0x4f08a400, d, n), fmt.Sprintf("sxtl2 v%d.8h, v%d.16b", d, n)}
}

// SXTL4S sign-extends the low four 16-bit lanes of n to 32 bits: sxtl vd.4s, vn.4h.
func SXTL4S(d, n V) Inst {
	return Inst{rd_rn(0x0f10a400, d, n), fmt.Sprintf("sxtl v%d.4s, v%d.4h", d, n)}
}

// SXTL24S sign-extends the high four 16-bit lanes of n to 32 bits: sxtl2 vd.4s, vn.8h.
func SXTL24S(d, n V) Inst {
	return Inst{rd_rn(0x4f10a400, d, n), fmt.Sprintf("sxtl2 v%d.4s, v%d.8h", d, n)}
}

// q8Examples are the q8 encoders, one instance each with distinct registers.
func q8Examples() []Inst {
	return []Inst{
		FABS4S(3, 28), FCVTAS4S(30, 1), BIC16B(7, 19, 26), UZP18H(12, 5, 31), UZP116B(0, 22, 9),
		SXTL8H(17, 2), SXTL28H(4, 29), SXTL4S(25, 8), SXTL24S(11, 14),
	}
}

func init() {
	examples = append(examples, q8Examples()...)
}
