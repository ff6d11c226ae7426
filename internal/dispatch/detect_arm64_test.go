//go:build arm64 && !purego && !noasm

package dispatch

import (
	"os"
	"testing"

	"github.com/klauspost/cpuid/v2"
	"github.com/stretchr/testify/require"
)

// TestNeonNumberFollowsFHM checks that neon is numbered NEONFHM exactly when cpuid
// reports FEAT_FHM, and, when KVSIMD_EXPECT_FHM is set (to 1, or 0 for a CPU without
// it: QEMU_CPU=cortex-a53), that cpuid reports what the (emulated) CPU has, so that a
// missed feature cannot quietly leave DotF16's FMLAL body untested.
func TestNeonNumberFollowsFHM(t *testing.T) {
	fhm := cpuid.CPU.Supports(cpuid.ASIMD, cpuid.FHM)
	want := NEON
	if fhm {
		want = NEONFHM
	}
	require.Equal(t, want, Number("neon"))
	if Active() == "neon" {
		require.Equal(t, want, ActiveVariant)
	}
	switch os.Getenv("KVSIMD_EXPECT_FHM") {
	case "1":
		require.True(t, fhm, "KVSIMD_EXPECT_FHM=1, but cpuid reports no FEAT_FHM")
	case "0":
		require.False(t, fhm, "KVSIMD_EXPECT_FHM=0, but cpuid reports FEAT_FHM")
	}
}
