package fp16

import (
	"math"

	"github.com/kvsimd/kvsimd/internal/halftable"
)

// toFloat32Generic widens by table lookup (internal/halftable, which the generic
// kernels share). Measured on 32768 Gaussian halves: the 256 KiB table takes 0.65
// ns/elem, branch-free bit arithmetic (a float multiply by 2¹¹² that also normalises
// subnormals) 1.3–2 ns, a branchy rebias 3 ns, x448's Float32 2.6 ns.
func toFloat32Generic(dst []float32, src []uint16) {
	table := halftable.Table()
	dst = dst[:len(src)]
	for i, h := range src {
		dst[i] = table[h]
	}
}

// fromFloat32Generic narrows with integer arithmetic and round-to-nearest-even.
func fromFloat32Generic(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, f := range src {
		dst[i] = singleToHalfBits(math.Float32bits(f))
	}
}

// singleToHalfBits is the reference narrowing. Inf stays Inf; NaN becomes a quiet NaN
// with the top 9 payload bits; finite values round to nearest, ties to even, with
// results past 65504 going to ±Inf and tiny ones to subnormals or ±0.
func singleToHalfBits(u uint32) uint16 {
	sign := uint16(u>>16) & 0x8000
	abs := u & 0x7fffffff
	switch {
	case abs >= 0x7f800000: // Inf or NaN
		if abs == 0x7f800000 {
			return sign | 0x7c00
		}
		return sign | 0x7e00 | uint16(abs>>13)&0x3ff
	case abs >= 0x477ff000: // rounds to ≥ 65520: overflow
		return sign | 0x7c00
	case abs >= 0x38800000: // normal half (≥ 2⁻¹⁴)
		// Rebias, then round the 13 dropped bits to nearest even; a carry out of the
		// mantissa correctly bumps the exponent.
		v := abs - 0x38000000
		v += 0xfff + (v>>13)&1
		return sign | uint16(v>>13)
	case abs > 0x33000000: // subnormal half or rounds up to the smallest one
		man := abs&0x7fffff | 0x800000
		shift := 126 - abs>>23 // 14..24 dropped bits: value = man·2^(e-150), unit 2⁻²⁴
		v := man >> shift
		rem := man & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || rem == half && v&1 == 1 {
			v++
		}
		return sign | uint16(v)
	default: // ≤ 2⁻²⁵ rounds to zero (2⁻²⁵ exactly is a tie to even zero)
		return sign
	}
}
