package asm

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAVX2FunctionsUseOnlyVEXRegisters reads the generated amd64 assembly (here, and the
// report's own peak and bandwidth loops in ../bench) and fails if
// code meant for AVX2 machines names a register only EVEX can encode (X/Y16–31, zmm,
// mask registers): a function whose name ends in AVX2, or the AVX2 body of a dot
// product's entry, from its "// Body: AVX2" comment on (gen/amd64/dot). avo allocates
// those registers silently when a body needs more than 16 vectors, and the result
// faults only at run time, on AVX2-only CPUs, which the kernels' tests on an AVX-512
// machine never see. It lives beside the files it reads, in the main module, so that
// go test ./... runs it and its cached result follows them: go test tracks only the
// files of the test's own module, and from the generator's module it kept a pass after
// a regeneration that broke it.
func TestAVX2FunctionsUseOnlyVEXRegisters(t *testing.T) {
	files, err := filepath.Glob("*_amd64.s")
	bench, benchErr := filepath.Glob("../bench/*_amd64.s")
	if err != nil || benchErr != nil || len(files) == 0 || len(bench) == 0 {
		t.Fatalf("no generated amd64 assembly found here (%d files) or in ../bench (%d): %v %v", len(files), len(bench), err, benchErr)
	}
	files = append(files, bench...)
	evexOnly := regexp.MustCompile(`\b([XY](1[6-9]|2[0-9]|3[01])|Z[0-9]+|K[1-7])\b`)
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, fn := range strings.Split(string(src), "\nTEXT ")[1:] {
			name, _, _ := strings.Cut(fn, "(SB)")
			avx2 := strings.HasSuffix(name, "AVX2")
			for i, line := range strings.Split(fn, "\n") {
				if body, ok := strings.CutPrefix(strings.TrimSpace(line), "// Body: "); ok {
					avx2 = body == "AVX2"
				}
				if code, _, _ := strings.Cut(line, "//"); avx2 && evexOnly.MatchString(code) {
					t.Errorf("%s: %s line %d uses an EVEX-only register: %s", filepath.Base(file), name, i, strings.TrimSpace(line))
				}
			}
		}
	}
}
