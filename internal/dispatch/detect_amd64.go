//go:build amd64 && !purego && !noasm

package dispatch

import "github.com/klauspost/cpuid/v2"

// needs lists, for each amd64 variant, every CPU feature its assembly uses beyond the
// x86-64 baseline (SSE2, CMOV): the features avo names on the "Requires:" line of each
// of the variant's functions in asm/*_amd64.s, and for avx512 also avx2's, whose
// bodies it falls back to. A CPU, or a hypervisor's CPU model, that lacks one of them
// does not get the variant, rather than a SIGILL. TestNeedsCoverTheAssembly holds the
// lists to the generated files.
var needs = map[string][]cpuid.FeatureID{
	"avx512": {cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512DQ, cpuid.AVX512VL,
		cpuid.AVX, cpuid.AVX2, cpuid.FMA3, cpuid.F16C, cpuid.POPCNT, cpuid.BMI1},
	"avx2": {cpuid.AVX, cpuid.AVX2, cpuid.FMA3, cpuid.F16C, cpuid.POPCNT, cpuid.BMI1},
}

func detect() []string {
	var vs []string
	for _, v := range []string{"avx512", "avx2"} { // best first
		if cpuid.CPU.Supports(needs[v]...) {
			vs = append(vs, v)
		}
	}
	return vs
}
