// Package racetest owns the check, for tests built with -race, that the race detector
// sees what assembly reads: the race it provokes must be reported even though no Go
// code touches the memory. Only tests import it.
package racetest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

const childEnv = "KVSIMD_RACE_CHILD"

// ExpectReported runs the test named test again in a child process, where it calls
// provoke, and fails unless the race detector reports a race there. provoke must race
// a Go write with a kernel's read of the same memory, so that only the kernel's race
// annotations can make the detector see it. Call it first in the test:
//
//	func TestRaceDetectorSeesAssembly(t *testing.T) {
//		racetest.ExpectReported(t, "TestRaceDetectorSeesAssembly", func() { … })
//	}
func ExpectReported(t *testing.T, test string, provoke func()) {
	t.Helper()
	if os.Getenv(childEnv) == "1" {
		provoke()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "DATA RACE") {
		t.Fatalf("no race reported:\n%s", out)
	}
}
