package neon

import (
	"fmt"
	"os/exec"
	"regexp"
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
	var src strings.Builder
	for _, in := range insts {
		src.WriteString(in.Text + "\n")
	}
	cmd := exec.Command(mc, "-triple=aarch64", "-mattr=+neon,+fullfp16,+fp16fml", "-show-encoding")
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
