//go:build race

package bf16

import (
	"testing"

	"github.com/kvsimd/kvsimd/internal/racetest"
)

// TestRaceDetectorSeesAssembly writes a slice from one goroutine while ToFloat32 reads
// it in another and expects the race detector to report it: proof that the annotations
// reach the detector even when assembly does the reading.
func TestRaceDetectorSeesAssembly(t *testing.T) {
	racetest.ExpectReported(t, "TestRaceDetectorSeesAssembly", func() {
		src, dst := make([]BFloat16, 64), make([]float32, 64)
		done := make(chan bool)
		go func() { src[5] = 1; done <- true }()
		ToFloat32(dst, src)
		<-done
	})
}
