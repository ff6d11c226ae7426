package neon

import "fmt"

// The instructions that widen bfloat16 and q8_0 elements in the dot products, scores
// and weighted sums of those formats (gen/arm64/dot, gen/arm64/weighted) that the Go
// assembler lacks. All are ARMv8.0 Advanced SIMD: the bf16 and q8_0 bodies need no
// FP16 feature.

// SHLL4S widens the low four 16-bit lanes of n into 32-bit lanes shifted left 16 (a
// bfloat16's float32 bits): shll vd.4s, vn.4h, #16. Go's assembler takes VUSHLL only
// with shifts below 16; a shift of the element's width is this other instruction.
func SHLL4S(d, n V) Inst {
	return Inst{rd_rn(0x2e613800, d, n), fmt.Sprintf("shll v%d.4s, v%d.4h, #16", d, n)}
}

// SHLL24S is SHLL4S on the high four 16-bit lanes of n: shll2 vd.4s, vn.8h, #16.
func SHLL24S(d, n V) Inst {
	return Inst{rd_rn(0x6e613800, d, n), fmt.Sprintf("shll2 v%d.4s, v%d.8h, #16", d, n)}
}

// FMULElem4S multiplies n by lane i (0..3) of m: fmul vd.4s, vn.4s, vm.s[i].
func FMULElem4S(d, n, m V, i int) Inst {
	return Inst{elem(rd_rn_rm(0x4f809000, d, n, m), i), fmt.Sprintf("fmul v%d.4s, v%d.4s, v%d.s[%d]", d, n, m, i)}
}

// SCVTFFixed4S converts signed 32-bit fixed-point numbers with fbits (1..32) fraction
// bits to float32, n / 2^fbits: scvtf vd.4s, vn.4s, #fbits. With fbits 24 it turns
// a q8_0 quant placed in a lane's top byte (by TBL) into its value.
func SCVTFFixed4S(d, n V, fbits int) Inst {
	return Inst{rd_rn(0x4f00e400|uint32(64-fbits)<<16, d, n), fmt.Sprintf("scvtf v%d.4s, v%d.4s, #%d", d, n, fbits)}
}

// formatExamples are the encoders of this file, one instance each with distinct
// registers and every lane.
func formatExamples() []Inst {
	return []Inst{
		SHLL4S(1, 30), SHLL24S(29, 2), SCVTFFixed4S(7, 21, 24), SCVTFFixed4S(30, 3, 1), SCVTFFixed4S(0, 31, 32),
		FMULElem4S(3, 17, 31, 0), FMULElem4S(28, 4, 9, 1), FMULElem4S(5, 26, 0, 2), FMULElem4S(31, 31, 31, 3),
	}
}

func init() {
	examples = append(examples, formatExamples()...)
}
