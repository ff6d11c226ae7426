package kernels_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/kvsimd/kvsimd/kernels"
	"github.com/stretchr/testify/require"
)

func TestUse(t *testing.T) {
	defer kernels.Use(kernels.Active())
	for _, v := range kernels.Variants() {
		require.NoError(t, kernels.Use(v))
		require.Equal(t, v, kernels.Active())
	}
	err := kernels.Use("avx1024")
	require.ErrorContains(t, err, "kernels.Use")
	require.ErrorContains(t, err, strings.Join(kernels.Variants(), ", "))
}

// TestStartupEnv re-runs this test binary with KVSIMD_ISA set, and checks from its
// output which variant start-up chose and what it reported.
func TestStartupEnv(t *testing.T) {
	if os.Getenv("KVSIMD_REPORT") == "1" {
		fmt.Printf("active=%s err=%v\n", kernels.Active(), kernels.EnvError())
		return
	}
	best := kernels.Variants()[0]
	run := func(env string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStartupEnv$")
		cmd.Env = append(os.Environ(), "KVSIMD_REPORT=1", "KVSIMD_ISA="+env)
		out, err := cmd.CombinedOutput()
		if errors.Is(err, syscall.ENOEXEC) {
			t.Skip("cannot re-execute the test binary (running under qemu-user without binfmt)")
		}
		require.NoError(t, err, string(out))
		return string(out)
	}
	for _, tc := range []struct{ env, active, err string }{
		{"generic", "generic", "<nil>"},
		{best, best, "<nil>"},
		{"", best, "<nil>"},
		{"sse9", best, `KVSIMD_ISA="sse9" ignored, using "` + best + `": variant "sse9": unknown variant`},
	} {
		require.Contains(t, run(tc.env), "active="+tc.active+" err="+tc.err, "KVSIMD_ISA=%q", tc.env)
	}
	for _, v := range []string{"avx512", "avx2", "neon"} {
		if slices.Contains(kernels.Variants(), v) {
			continue
		}
		out := run(v)
		require.Contains(t, out, "active="+best+" err=KVSIMD_ISA=", "unsupported %s falls back", v)
		require.Contains(t, out, "not supported by this CPU or build")
	}
}
