//go:build !purego && !noasm

package kernels

import "github.com/kvsimd/kvsimd/asm"

func init() {
	topkFilter.Add("avx2", asm.TopKFilterAVX2)
	topkFilter.Add("avx512", asm.TopKFilterAVX512)
	topkKeep.Add("avx2", asm.TopKKeepAVX2)
	topkKeep.Add("avx512", asm.TopKKeepAVX512)
}
