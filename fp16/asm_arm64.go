//go:build !purego && !noasm

package fp16

import "github.com/kvsimd/kvsimd/asm"

func init() {
	toFloat32.Add("neon", asm.ToFloat32NEON)
	fromFloat32.Add("neon", asm.FromFloat32NEON)
}
