//go:build !purego && !noasm

package main

import (
	"slices"

	"github.com/kvsimd/kvsimd/asm"
	"github.com/kvsimd/kvsimd/kernels"
)

// init picks the read loop of the widest vectors: a build without AVX2 keeps none.
func init() {
	v := kernels.Variants()
	if slices.Contains(v, "avx2") {
		peakRead = asm.PeakReadAVX2
	}
	if slices.Contains(v, "avx512") {
		peakRead = asm.PeakReadAVX512
	}
}
