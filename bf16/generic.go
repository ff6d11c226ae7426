package bf16

import "math"

// toFloat32Generic widens: a bfloat16 is the high half of its float32.
func toFloat32Generic(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, b := range src {
		dst[i] = math.Float32frombits(uint32(b) << 16)
	}
}

// fromFloat32Generic narrows with singleToBF16Bits.
func fromFloat32Generic(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, f := range src {
		dst[i] = singleToBF16Bits(math.Float32bits(f))
	}
}

// singleToBF16Bits is the narrowing every variant computes. Adding 0x7fff plus the
// lowest kept bit rounds the 16 dropped bits to nearest, ties to even: a tie carries
// into the kept bits only when they are odd. The carry may run into the exponent (up to
// Inf from the largest finite values), which is the right answer, and subnormals need
// no case of their own. NaNs would carry into the sign or become Inf, so they are
// quieted instead (bit 6 of the result, the top mantissa bit).
func singleToBF16Bits(u uint32) uint16 {
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x0040
	}
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}
