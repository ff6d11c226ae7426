//go:build !purego && !noasm

package bf16

import "github.com/kvsimd/kvsimd/asm"

func init() {
	toFloat32.Add("avx2", asm.BF16ToFloat32AVX2)
	toFloat32.Add("avx512", asm.BF16ToFloat32AVX512)
	fromFloat32.Add("avx2", asm.BF16FromFloat32AVX2)
	fromFloat32.Add("avx512", asm.BF16FromFloat32AVX512)
}
