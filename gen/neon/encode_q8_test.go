package neon

import (
	"os/exec"
	"testing"
)

// TestQ8EncodingsMatchLLVM checks the q8 encoders, every register in every field, and
// the other encoders the q8 kernels use, against llvm-mc with ARMv8.0's Advanced SIMD
// alone (no +fullfp16): the q8 bodies must run on a Cortex-A53.
func TestQ8EncodingsMatchLLVM(t *testing.T) {
	mc, err := exec.LookPath("llvm-mc")
	if err != nil {
		t.Skip("llvm-mc not installed (Debian package llvm)")
	}
	insts := q8Examples()
	insts = append(insts, FMUL4S(1, 2, 3), FMAX4S(4, 5, 6), FMAXV4S(7, 8), FCMGE4S(9, 10, 11),
		FCVTHS(12, 13), FCVTSH(14, 15), SCVTF4S(16, 17))
	for r := V(0); r < 32; r++ {
		insts = append(insts,
			FABS4S(r, 31-r), FCVTAS4S(31-r, r), BIC16B(r, (r+7)%32, 31-r), UZP18H((r+3)%32, r, (r+11)%32),
			UZP116B(31-r, (r+5)%32, r), SXTL8H(r, (r+1)%32), SXTL28H((r+2)%32, r), SXTL4S(r, 31-r), SXTL24S(31-r, r))
	}
	matchLLVM(t, mc, "+neon", insts)
}
