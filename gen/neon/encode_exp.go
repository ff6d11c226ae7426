package neon

import "fmt"

// The instructions of ExpSumNEON's exponential (gen/arm64/softmax) that the Go
// assembler lacks. FMULElem4S, FCVTNS4S, SCVTF4S and BICImm4S served its earlier table
// exponential (f2cfd56); they stay, checked like the others, for bodies that need them.

// elem sets the lane fields H:L of a by-element instruction on 32-bit lanes, i in 0..3.
func elem(w uint32, i int) uint32 { return w | uint32(i&1)<<21 | uint32(i>>1&1)<<11 }

// FMLSElem4S multiplies n by lane i of m and subtracts from d: fmls vd.4s, vn.4s, vm.s[i].
func FMLSElem4S(d, n, m V, i int) Inst {
	return Inst{elem(rd_rn_rm(0x4f805000, d, n, m), i), fmt.Sprintf("fmls v%d.4s, v%d.4s, v%d.s[%d]", d, n, m, i)}
}

// FMULElem4S multiplies n by lane i of m: fmul vd.4s, vn.4s, vm.s[i].
func FMULElem4S(d, n, m V, i int) Inst {
	return Inst{elem(rd_rn_rm(0x4f809000, d, n, m), i), fmt.Sprintf("fmul v%d.4s, v%d.4s, v%d.s[%d]", d, n, m, i)}
}

// MLAElem4S multiplies the 32-bit integers of n by lane i of m and adds into d, modulo
// 2³²: mla vd.4s, vn.4s, vm.s[i].
func MLAElem4S(d, n, m V, i int) Inst {
	return Inst{elem(rd_rn_rm(0x6f800000, d, n, m), i), fmt.Sprintf("mla v%d.4s, v%d.4s, v%d.s[%d]", d, n, m, i)}
}

// FMIN4S takes the lanewise minimum, NaN if either lane is NaN: fmin vd.4s, vn.4s, vm.4s.
func FMIN4S(d, n, m V) Inst {
	return Inst{rd_rn_rm(0x4ea0f400, d, n, m), fmt.Sprintf("fmin v%d.4s, v%d.4s, v%d.4s", d, n, m)}
}

// FMINV4S reduces the four lanes of n to their minimum in sd, NaN if any lane is NaN:
// fminv sd, vn.4s.
func FMINV4S(d, n V) Inst {
	return Inst{rd_rn(0x6eb0f800, d, n), fmt.Sprintf("fminv s%d, v%d.4s", d, n)}
}

// FCVTNS4S converts to signed 32-bit integers, rounding to nearest with ties to even and
// saturating: fcvtns vd.4s, vn.4s.
func FCVTNS4S(d, n V) Inst {
	return Inst{rd_rn(0x4e21a800, d, n), fmt.Sprintf("fcvtns v%d.4s, v%d.4s", d, n)}
}

// SCVTF4S converts signed 32-bit integers to float32: scvtf vd.4s, vn.4s.
func SCVTF4S(d, n V) Inst {
	return Inst{rd_rn(0x4e21d800, d, n), fmt.Sprintf("scvtf v%d.4s, v%d.4s", d, n)}
}

// BICImm4S clears, in each 32-bit lane of d, the bits set in imm (an 8-bit value shifted
// left by 0, 8, 16 or 24): bic vd.4s, #imm8, lsl #shift.
func BICImm4S(d V, imm uint32) Inst {
	shift := 0
	for imm > 0xff && imm&0xff == 0 && shift < 24 {
		imm >>= 8
		shift += 8
	}
	if imm > 0xff {
		panic(fmt.Sprintf("BICImm4S: %#x is not an 8-bit value shifted by a multiple of 8", imm))
	}
	w := 0x6f001400 | uint32(shift/8)<<13 | (imm>>5&7)<<16 | (imm&31)<<5 | uint32(d&31)
	return Inst{w, fmt.Sprintf("bic v%d.4s, #%d, lsl #%d", d, imm, shift)}
}

func init() {
	examples = append(examples,
		FMLSElem4S(2, 17, 31, 0), FMLSElem4S(30, 1, 8, 3), FMULElem4S(9, 26, 3, 1), FMULElem4S(0, 31, 20, 2),
		MLAElem4S(4, 13, 29, 2), MLAElem4S(27, 6, 0, 1), MLAElem4S(31, 31, 31, 3),
		FMIN4S(12, 25, 3), FMINV4S(19, 10), FCVTNS4S(7, 22), SCVTF4S(28, 15),
		BICImm4S(3, 15), BICImm4S(29, 0xf0<<8), BICImm4S(16, 0x78<<16), BICImm4S(31, 0x81<<24),
	)
}
