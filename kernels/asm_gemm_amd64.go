//go:build !purego && !noasm

package kernels

import "github.com/kvsimd/kvsimd/asm"

func init() {
	gemmAdd.Add("avx2", asm.GemmAddAVX2)
	gemmAdd.Add("avx512", asm.GemmAddAVX512)
	gemmScaled.Add("avx2", asm.GemmScaledAVX2)
	gemmScaled.Add("avx512", asm.GemmScaledAVX512)
}
