package dispatch

import (
	"slices"

	"github.com/klauspost/cpuid/v2"
)

// needs lists, for each SIMD variant, every CPU feature its assembly uses beyond its
// architecture's baseline (on amd64 x86-64's SSE2 and CMOV): on amd64 the features
// avo names on the "Requires:" line of each of the variant's functions in
// asm/*_amd64.s, and for avx512 also avx2's, whose bodies it falls back to. A CPU, or a
// hypervisor's CPU model, that lacks one of them does not get the variant, rather than
// a SIGILL. TestNeedsCoverTheAssembly holds the amd64 lists to the generated files.
var needs = map[string][]cpuid.FeatureID{
	"avx512": {cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512DQ, cpuid.AVX512VL,
		cpuid.AVX, cpuid.AVX2, cpuid.FMA3, cpuid.F16C, cpuid.POPCNT, cpuid.BMI1},
	"avx2": {cpuid.AVX, cpuid.AVX2, cpuid.FMA3, cpuid.F16C, cpuid.POPCNT, cpuid.BMI1},
	// ASIMD (with FCVTL/FCVTN) is mandatory in ARMv8.0-A; cpuid still confirms it
	// because some sandboxes hide the feature registers.
	"neon": {cpuid.ASIMD},
}

// Needs returns the CPU features the variant's assembly needs: none for generic or an
// unknown name. It holds in every build, purego included, so that a report can say
// what this CPU lacks.
func Needs(variant string) []cpuid.FeatureID { return slices.Clone(needs[variant]) }
