//go:build !purego && !noasm

package fp16

import "github.com/kvsimd/kvsimd/asm"

func init() {
	toFloat32.Add("avx2", asm.ToFloat32AVX2)
	toFloat32.Add("avx512", asm.ToFloat32AVX512)
	fromFloat32.Add("avx2", asm.FromFloat32AVX2)
	fromFloat32.Add("avx512", asm.FromFloat32AVX512)
}
