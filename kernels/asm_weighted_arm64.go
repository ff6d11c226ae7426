//go:build !purego && !noasm

package kernels

import "github.com/kvsimd/kvsimd/asm"

func init() {
	weightedSumRows.Add("neon", asm.WeightedSumRowsNEON)
}
