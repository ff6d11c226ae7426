//go:build amd64 && !purego && !noasm

package dispatch

import "github.com/klauspost/cpuid/v2"

func detect() []string {
	c := cpuid.CPU
	var vs []string
	if c.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL, cpuid.AVX2, cpuid.FMA3, cpuid.F16C) {
		vs = append(vs, "avx512")
	}
	if c.Supports(cpuid.AVX2, cpuid.FMA3, cpuid.F16C) {
		vs = append(vs, "avx2")
	}
	return vs
}
