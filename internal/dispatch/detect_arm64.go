//go:build arm64 && !purego && !noasm

package dispatch

import "github.com/klauspost/cpuid/v2"

func detect() []string {
	if cpuid.CPU.Supports(needs["neon"]...) {
		return []string{"neon"}
	}
	return nil
}

// neonNumber is neon's number: NEONFHM when the CPU has FEAT_FHM, which cpuid reads
// from the kernel's HWCAP_ASIMDFHM on Linux and hw.optional.arm.FEAT_FHM on macOS.
func neonNumber() Variant {
	if cpuid.CPU.Supports(cpuid.ASIMD, cpuid.FHM) {
		return NEONFHM
	}
	return NEON
}
