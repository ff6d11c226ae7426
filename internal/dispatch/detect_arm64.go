//go:build arm64 && !purego && !noasm

package dispatch

import "github.com/klauspost/cpuid/v2"

func detect() []string {
	// ASIMD (with FCVTL/FCVTN) is mandatory in ARMv8.0-A; cpuid still confirms it
	// because some sandboxes hide the feature registers.
	if cpuid.CPU.Supports(cpuid.ASIMD) {
		return []string{"neon"}
	}
	return nil
}
