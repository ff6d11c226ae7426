//go:build (amd64 || arm64) && !purego && !noasm

package kernels

import (
	"unsafe"

	"github.com/kvsimd/kvsimd/asm"
)

// dotF16ISA and its kin run the dot product's variant that isa numbers, through the
// same entry as the exported functions (dot.go): the SIMD variants register them with
// their numbers.

func dotF16ISA(a, b []uint16, isa uint8) float32 {
	return asm.DotF16(unsafe.SliceData(a), unsafe.SliceData(b), len(a), asm.Select(isa, len(a), len(b)))
}

func dotF32F16ISA(a []float32, b []uint16, isa uint8) float32 {
	return asm.DotF32F16(unsafe.SliceData(a), unsafe.SliceData(b), len(a), asm.Select(isa, len(a), len(b)))
}

func dotF32ISA(a, b []float32, isa uint8) float32 {
	return asm.DotF32(unsafe.SliceData(a), unsafe.SliceData(b), len(a), asm.Select(isa, len(a), len(b)))
}
