package neon

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestEncodingsMatchLLVM assembles every encoder's text with llvm-mc and compares the
// bytes. CI installs llvm; elsewhere the test is skipped when llvm-mc is missing.
func TestEncodingsMatchLLVM(t *testing.T) {
	mc, err := exec.LookPath("llvm-mc")
	if err != nil {
		t.Skip("llvm-mc not installed (Debian package llvm)")
	}
	insts := Examples()
	// Every register in every field position, through one encoder per shape.
	for r := V(0); r < 32; r++ {
		insts = append(insts, FCVTL(r, 31-r), FADD4S(r, (r+7)%32, 31-r), FADDP2S(31-r, r))
	}
	matchLLVM(t, mc, "+neon,+fullfp16", insts)
}

// matchLLVM assembles the instructions' text with llvm-mc (mc) for the given
// -mattr features and fails for each whose Word differs from llvm-mc's encoding.
func matchLLVM(t *testing.T, mc, mattr string, insts []Inst) {
	t.Helper()
	var src strings.Builder
	for _, in := range insts {
		src.WriteString(in.Text + "\n")
	}
	cmd := exec.Command(mc, "-triple=aarch64", "-mattr="+mattr, "-show-encoding")
	cmd.Stdin = strings.NewReader(src.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("llvm-mc: %v\n%s", err, out)
	}
	enc := regexp.MustCompile(`encoding: \[0x(..),0x(..),0x(..),0x(..)\]`).FindAllStringSubmatch(string(out), -1)
	if len(enc) != len(insts) {
		t.Fatalf("llvm-mc gave %d encodings for %d instructions:\n%s", len(enc), len(insts), out)
	}
	for i, in := range insts {
		want := enc[i][4] + enc[i][3] + enc[i][2] + enc[i][1]
		if got := fmt.Sprintf("%08x", in.Word); got != want {
			t.Errorf("%s: encoded %s, llvm-mc says %s", in.Text, got, want)
		}
	}
}
