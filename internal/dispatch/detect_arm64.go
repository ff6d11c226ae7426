//go:build arm64 && !purego && !noasm

package dispatch

import "github.com/klauspost/cpuid/v2"

func detect() []string {
	if cpuid.CPU.Supports(needs["neon"]...) {
		return []string{"neon"}
	}
	return nil
}
