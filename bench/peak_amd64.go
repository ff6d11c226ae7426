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
		peakFMA, peakWidth = asm.PeakFMAAVX512, 512
		readLoop = asm.ReadBandwidthAVX512
	case slices.Contains(v, "avx2"):
		peakFMA, peakWidth = asm.PeakFMAAVX2, 256
		readLoop = asm.ReadBandwidthAVX2
	}
}
