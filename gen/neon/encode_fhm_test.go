package neon

import (
	"os/exec"
	"strings"
	"testing"
)

// TestFHMEncodingsMatchLLVM is TestEncodingsMatchLLVM for the FEAT_FHM encoders, which
// llvm-mc assembles only with +fp16fml: every example, and every register in every
// field of both.
func TestFHMEncodingsMatchLLVM(t *testing.T) {
	mc, err := exec.LookPath("llvm-mc")
	if err != nil {
		t.Skip("llvm-mc not installed (Debian package llvm)")
	}
	insts := FHMExamples()
	for r := V(0); r < 32; r++ {
		insts = append(insts, FMLAL(r, (r+7)%32, 31-r), FMLAL2(31-r, r, (r+13)%32))
	}
	matchLLVM(t, mc, "+neon,+fullfp16,+fp16fml", insts)
}

// TestFHMNeedsTheFeature checks that llvm-mc rejects the FEAT_FHM instructions without
// +fp16fml: they are not part of the NEON baseline, which is why FHMExamples is apart
// and why the dot products run them only when internal/dispatch found the feature.
func TestFHMNeedsTheFeature(t *testing.T) {
	mc, err := exec.LookPath("llvm-mc")
	if err != nil {
		t.Skip("llvm-mc not installed (Debian package llvm)")
	}
	for _, in := range FHMExamples() {
		cmd := exec.Command(mc, "-triple=aarch64", "-mattr=+neon,+fullfp16", "-show-encoding")
		cmd.Stdin = strings.NewReader(in.Text + "\n")
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("%s: llvm-mc assembled it without +fp16fml:\n%s", in.Text, out)
		}
	}
}
