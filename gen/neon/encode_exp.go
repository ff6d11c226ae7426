package neon

import "fmt"

// The instructions of ExpSumNEON's exponential (gen/arm64/softmax) that the Go
// assembler lacks, and SCVTF4S, which its earlier table exponential used and q8's
// dequantizing body still does.

// elem sets the lane fields H:L of a by-element instruction on 32-bit lanes, i in 0..3.
func elem(w uint32, i int) uint32 { return w | uint32(i&1)<<21 | uint32(i>>1&1)<<11 }

// FMLSElem4S multiplies n by lane i of m and subtracts from d: fmls vd.4s, vn.4s, vm.s[i].
func FMLSElem4S(d, n, m V, i int) Inst {
	return Inst{elem(rd_rn_rm(0x4f805000, d, n, m), i), fmt.Sprintf("fmls v%d.4s, v%d.4s, v%d.s[%d]", d, n, m, i)}
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

// SCVTF4S converts signed 32-bit integers to float32: scvtf vd.4s, vn.4s.
func SCVTF4S(d, n V) Inst {
	return Inst{rd_rn(0x4e21d800, d, n), fmt.Sprintf("scvtf v%d.4s, v%d.4s", d, n)}
}

func init() {
	examples = append(examples,
		FMLSElem4S(2, 17, 31, 0), FMLSElem4S(30, 1, 8, 3),
		MLAElem4S(4, 13, 29, 2), MLAElem4S(27, 6, 0, 1), MLAElem4S(31, 31, 31, 3),
		FMIN4S(12, 25, 3), FMINV4S(19, 10), SCVTF4S(28, 15),
	)
}
