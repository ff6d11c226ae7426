//go:build !purego && !noasm

package kernels

import "github.com/kvsimd/kvsimd/asm"

func init() {
	dotF16.Add("neon", asm.DotF16NEON)
	dotF32F16.Add("neon", asm.DotF32F16NEON)
	dotF32.Add("neon", asm.DotF32NEON)
	scores.Add("neon", asm.ScoresNEON)
}
