//go:build !purego && !noasm

package q8

import "github.com/kvsimd/kvsimd/asm"

func init() {
	quantize.Add("neon", quantizeNEON)
	dequantize.Add("neon", asm.Q8DequantizeNEON)
}

// quantizeNEON runs the NEON body, which stops at a block that holds a NaN, and
// quantizes each such block in Go: ggml's running MAX makes its amax depend on where
// the NaNs lie, which a tree of vector maxima does not follow.
func quantizeNEON(dst []byte, src []float32) {
	for len(src) >= BlockLen {
		n := asm.Q8QuantizeNEON(dst, src)
		src, dst = src[BlockLen*n:], dst[BlockSize*n:]
		if len(src) >= BlockLen {
			quantizeGeneric(dst[:BlockSize], src[:BlockLen])
			src, dst = src[BlockLen:], dst[BlockSize:]
		}
	}
}
