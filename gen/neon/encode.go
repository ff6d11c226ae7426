// Package neon encodes the AArch64 Advanced SIMD instructions that Go's arm64 assembler
// does not know, and writes arm64 assembly files that use them as WORD directives, each
// with its mnemonic in a comment so the file stays reviewable.
//
// Every encoder here is checked against llvm-mc by this package's test.
package neon

import "fmt"

// Inst is one encoded instruction and the assembly text it stands for.
type Inst struct {
	Word uint32
	Text string // llvm-mc syntax, e.g. "fcvtl v0.4s, v1.4h"
}

// V is a vector register number, 0..31.
type V uint32

func rd_rn(base uint32, d, n V) uint32 { return base | uint32(n&31)<<5 | uint32(d&31) }

func rd_rn_rm(base uint32, d, n, m V) uint32 { return rd_rn(base, d, n) | uint32(m&31)<<16 }

// FCVTL widens the low four halves of n into d: fcvtl vd.4s, vn.4h.
func FCVTL(d, n V) Inst {
	return Inst{rd_rn(0x0e217800, d, n), fmt.Sprintf("fcvtl v%d.4s, v%d.4h", d, n)}
}

// FCVTL2 widens the high four halves of n into d: fcvtl2 vd.4s, vn.8h.
func FCVTL2(d, n V) Inst {
	return Inst{rd_rn(0x4e217800, d, n), fmt.Sprintf("fcvtl2 v%d.4s, v%d.8h", d, n)}
}

// FCVTN narrows n into the low four halves of d, zeroing the high ones: fcvtn vd.4h, vn.4s.
func FCVTN(d, n V) Inst {
	return Inst{rd_rn(0x0e216800, d, n), fmt.Sprintf("fcvtn v%d.4h, v%d.4s", d, n)}
}

// FCVTN2 narrows n into the high four halves of d, keeping the low ones: fcvtn2 vd.8h, vn.4s.
func FCVTN2(d, n V) Inst {
	return Inst{rd_rn(0x4e216800, d, n), fmt.Sprintf("fcvtn2 v%d.8h, v%d.4s", d, n)}
}

// FCVTSH widens the scalar half hn into sd: fcvt sd, hn.
func FCVTSH(d, n V) Inst {
	return Inst{rd_rn(0x1ee24000, d, n), fmt.Sprintf("fcvt s%d, h%d", d, n)}
}

// FCVTHS narrows the scalar single sn into hd, rounding per FPCR (nearest even in Go
// programs): fcvt hd, sn.
func FCVTHS(d, n V) Inst {
	return Inst{rd_rn(0x1e23c000, d, n), fmt.Sprintf("fcvt h%d, s%d", d, n)}
}

// FADD4S adds lanewise: fadd vd.4s, vn.4s, vm.4s.
func FADD4S(d, n, m V) Inst {
	return Inst{rd_rn_rm(0x4e20d400, d, n, m), fmt.Sprintf("fadd v%d.4s, v%d.4s, v%d.4s", d, n, m)}
}

// FMUL4S multiplies lanewise: fmul vd.4s, vn.4s, vm.4s.
func FMUL4S(d, n, m V) Inst {
	return Inst{rd_rn_rm(0x6e20dc00, d, n, m), fmt.Sprintf("fmul v%d.4s, v%d.4s, v%d.4s", d, n, m)}
}

// FMAX4S takes the lanewise maximum, NaN if either lane is NaN: fmax vd.4s, vn.4s, vm.4s.
func FMAX4S(d, n, m V) Inst {
	return Inst{rd_rn_rm(0x4e20f400, d, n, m), fmt.Sprintf("fmax v%d.4s, v%d.4s, v%d.4s", d, n, m)}
}

// FADDP4S adds adjacent pairs of the concatenation n:m: faddp vd.4s, vn.4s, vm.4s.
func FADDP4S(d, n, m V) Inst {
	return Inst{rd_rn_rm(0x6e20d400, d, n, m), fmt.Sprintf("faddp v%d.4s, v%d.4s, v%d.4s", d, n, m)}
}

// FADDP2S adds the two lanes of n into the scalar sd: faddp sd, vn.2s.
func FADDP2S(d, n V) Inst {
	return Inst{rd_rn(0x7e30d800, d, n), fmt.Sprintf("faddp s%d, v%d.2s", d, n)}
}

// examples holds one instance of every encoder with distinct registers: the catalogue
// that the llvm-mc test checks. Each file of encoders adds its own in an init function.
var examples []Inst

// Examples returns the catalogue of every encoder.
func Examples() []Inst { return append([]Inst(nil), examples...) }

func init() {
	examples = append(examples,
		FCVTL(0, 1), FCVTL2(31, 17), FCVTN(2, 3), FCVTN2(30, 5),
		FCVTSH(4, 9), FCVTHS(7, 28),
		FADD4S(1, 2, 3), FMUL4S(29, 14, 7), FMAX4S(8, 16, 24), FADDP4S(3, 19, 31), FADDP2S(6, 21),
	)
}
