//go:build !purego && !noasm

package q8

import "github.com/kvsimd/kvsimd/asm"

func init() {
	quantize.Add("avx2", asm.Q8QuantizeAVX2)
	quantize.Add("avx512", asm.Q8QuantizeAVX512)
	dequantize.Add("avx2", asm.Q8DequantizeAVX2)
	dequantize.Add("avx512", asm.Q8DequantizeAVX512)
}
