//go:build amd64 && !purego && !noasm

package dispatch

import (
	"bufio"
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/cpuid/v2"
	"github.com/stretchr/testify/require"
)

// x86-64's baseline, which every amd64 CPU has: avo names these too, but no variant
// needs to check them.
var baseline = []string{"CMOV", "MMX+", "SSE", "SSE2"}

// avoNames maps avo's names of features to cpuid's where they differ.
var avoNames = map[string]string{"BMI": "BMI1"}

// TestNeedsCoverTheAssembly reads every function's "Requires:" line in the generated
// asm/*_amd64.s and checks that the variant its name ends in (AVX2 or AVX512) lists
// every feature named there, so that detect never installs code the CPU cannot run.
// A function that belongs to no variant holds the bodies of several, each run only
// when its variant is active (the dot products' entries): avx512, which needs all
// that avx2 does, must list what it needs.
func TestNeedsCoverTheAssembly(t *testing.T) {
	const dir = "../../asm"
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		t.Skip("no source tree beside the test binary (an emulator's guest runs it alone)")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*_amd64.s"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	text := regexp.MustCompile(`^TEXT ·(\w+?)(AVX2|AVX512)\(SB\)`)
	functions := 0
	for _, name := range files {
		f, err := os.Open(name)
		require.NoError(t, err)
		var requires []string
		lines := bufio.NewScanner(f)
		for lines.Scan() {
			line := lines.Text()
			if r, ok := strings.CutPrefix(line, "// Requires: "); ok {
				requires = strings.Split(r, ", ")
				continue
			}
			if !strings.HasPrefix(line, "TEXT ") {
				continue
			}
			m := text.FindStringSubmatch(line)
			if m == nil {
				m = []string{line, strings.TrimPrefix(line, "TEXT "), "AVX512"}
			}
			variant := strings.ToLower(m[2])
			for _, feature := range requires {
				if slices.Contains(baseline, feature) {
					continue
				}
				id := cpuid.ParseFeature(cmp.Or(avoNames[feature], feature))
				require.NotEqual(t, cpuid.UNKNOWN, id, "%s: %s requires %s, which cpuid does not know", name, m[1]+m[2], feature)
				require.Contains(t, needs[variant], id, "%s: %s requires %s, which the %s variant does not check", name, m[1]+m[2], feature, variant)
			}
			requires = nil
			functions++
		}
		require.NoError(t, lines.Err())
		f.Close()
	}
	require.Greater(t, functions, 0)
}

// TestAVX512NeedsAVX2 checks that avx512 asks for everything avx2 does: it runs the
// avx2 body of every kernel that has no avx512 one.
func TestAVX512NeedsAVX2(t *testing.T) {
	for _, f := range needs["avx2"] {
		require.Contains(t, needs["avx512"], f)
	}
}
