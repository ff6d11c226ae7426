package neon

import (
	"os/exec"
	"testing"
)

// TestFormatEncodingsMatchLLVM checks the bf16 and q8_0 widening encoders, every
// register in every field, against llvm-mc with ARMv8.0's Advanced SIMD alone (no
// +fullfp16): the bf16 and q8_0 bodies must run on a Cortex-A53.
func TestFormatEncodingsMatchLLVM(t *testing.T) {
	mc, err := exec.LookPath("llvm-mc")
	if err != nil {
		t.Skip("llvm-mc not installed (Debian package llvm)")
	}
	insts := formatExamples()
	for r := V(0); r < 32; r++ {
		insts = append(insts, SHLL4S(r, 31-r), SHLL24S(31-r, (r+9)%32), FMULElem4S(r, (r+5)%32, 31-r, int(r%4)),
			SCVTFFixed4S((r+3)%32, r, 1+int(r)))
	}
	matchLLVM(t, mc, "+neon", insts)
}
