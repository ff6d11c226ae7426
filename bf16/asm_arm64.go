//go:build !purego && !noasm

package bf16

import "github.com/kvsimd/kvsimd/asm"

func init() {
	toFloat32.Add("neon", asm.BF16ToFloat32NEON)
	fromFloat32.Add("neon", asm.BF16FromFloat32NEON)
}
