//go:build amd64 && !purego && !noasm

package dispatch

import "github.com/klauspost/cpuid/v2"

func detect() []string {
	var vs []string
	for _, v := range []string{"avx512", "avx2"} { // best first
		if cpuid.CPU.Supports(needs[v]...) {
			vs = append(vs, v)
		}
	}
	return vs
}

// neonNumber is neon's number, which this build cannot run.
func neonNumber() Variant { return NEON }
