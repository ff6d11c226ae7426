//go:build !purego && !noasm

package main

import (
	"slices"

	"github.com/kvsimd/kvsimd/asm"
	"github.com/kvsimd/kvsimd/kernels"
)

func init() {
	switch v := kernels.Variants(); {
	case slices.Contains(v, "avx512"):
		peakRead = asm.PeakReadAVX512
	case slices.Contains(v, "avx2"):
		peakRead = asm.PeakReadAVX2
	}
}
