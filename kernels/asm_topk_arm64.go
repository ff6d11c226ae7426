//go:build !purego && !noasm

package kernels

import "github.com/kvsimd/kvsimd/asm"

func init() {
	topkFilter.Add("neon", asm.TopKFilterNEON)
}
