package dispatch

import "github.com/klauspost/cpuid/v2"

// AMDFamily returns the CPU's family if AMD made it (0x19 for Zen 3 and 4, 0x1A for
// Zen 5), and 0 otherwise. Where one body is faster on one CPU family and another on
// another, package asm picks by it (asm/dot_cpu_amd64.go) and says why.
func AMDFamily() int {
	if cpuid.CPU.VendorID != cpuid.AMD {
		return 0
	}
	return cpuid.CPU.Family
}

// L3Bytes returns the size of the CPU's L3 as cpuid reads it, or 32 MiB where it
// reads none (some hypervisors hide it), as bench/bandwidth.go assumes.
func L3Bytes() int {
	if l3 := cpuid.CPU.Cache.L3; l3 > 0 {
		return l3
	}
	return 32 << 20
}
