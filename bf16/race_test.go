//go:build race

package bf16

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestRaceDetectorSeesAssembly writes a slice from one goroutine while ToFloat32 reads
// it in another, in a child process, and expects the race detector to report it: proof
// that the annotations reach the detector even when assembly does the reading.
func TestRaceDetectorSeesAssembly(t *testing.T) {
	if os.Getenv("KVSIMD_RACE_CHILD") == "1" {
		src, dst := make([]BFloat16, 64), make([]float32, 64)
		done := make(chan bool)
		go func() { src[5] = 1; done <- true }()
		ToFloat32(dst, src)
		<-done
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRaceDetectorSeesAssembly$")
	cmd.Env = append(os.Environ(), "KVSIMD_RACE_CHILD=1")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "DATA RACE") {
		t.Fatalf("no race reported:\n%s", out)
	}
}
