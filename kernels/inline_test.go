package kernels

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvsimd/kvsimd/internal/longtest"
)

// TestDotsInline checks that the compiler inlines the exported dot products, so that a
// caller calls the assembly entry directly: one more Go frame would cost a short dot
// product more than a tenth of its time (asm/dot.go), and nothing else would notice,
// as the results stay the same. It asks the go command that runs the tests, in every
// build configuration the module supports, for the compiler's decisions: those of
// other GOARCHes with KVSIMD_LONG=1 only (internal/longtest), as CI runs it.
func TestDotsInline(t *testing.T) {
	if _, err := os.Stat("dot.go"); errors.Is(err, fs.ErrNotExist) {
		t.Skip("no source tree beside the test binary (an emulator's guest runs it alone)")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	for _, c := range []struct{ goarch, tags string }{
		{"amd64", ""}, {"arm64", ""}, {"amd64", "purego"}, {"386", ""}, {"wasm", ""},
	} {
		if c.goarch != runtime.GOARCH && !longtest.Enabled() {
			continue // another GOARCH's standard library: over a minute on a cold build cache
		}
		cmd := exec.Command(gobin, "build", "-tags", c.tags, "-gcflags", "-m", ".")
		cmd.Env = append(os.Environ(), "GOARCH="+c.goarch, "GOOS=linux", "CGO_ENABLED=0")
		if c.goarch == "wasm" {
			cmd.Env = append(cmd.Env, "GOOS=js")
		}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		for _, name := range []string{"DotF16", "DotF32F16", "DotF32"} {
			require.Regexp(t, regexp.MustCompile(`(?m)^(\S*/)?dot\.go:\d+:\d+: can inline `+name+`( |$)`), string(out),
				"GOARCH=%s tags %q: the compiler does not inline %s", c.goarch, c.tags, name)
		}
	}
}
