//go:build !purego && !noasm

package asm

import "github.com/kvsimd/kvsimd/internal/dispatch"

// f16ZMMMin is the shortest DotF16 that the AVX-512 body runs with its own 16-lane
// conversions; shorter ones go to the AVX2 body. The entry compares n with it in
// memory, a load that the comparison carries: DotF16 at n = 1024 took the same time
// on Zen 5 as with the immediate before (unmeasured on the Xeon). It depends on the
// CPU family, chosen at start-up (f16ZMMMinOf).
var f16ZMMMin = f16ZMMMinOf(dispatch.AMDFamily())

// f16ZMMMinOf is f16ZMMMin on a CPU of that AMD family (0: not AMD). Each FMA of two
// fp16 vectors takes two VCVTPH2PS. On Sapphire Rapids the 16-lane ones cost a call
// about 1 ns more than the 8-lane ones at n ≤ 512 (n = 128: 9.2 against 8.5 ns through
// a function value, n = 512: 27.8 against 27.1), level at n = 768 and 1.4 % less at
// 1024: 768 there, and on every CPU not measured. On a Zen 5 core (family 0x1A) the
// 16-lane body is the faster at every n: 4.79 against 6.06 ns at n = 128, 7.79 against
// 10.50 at 256, equal at 1024 (shared machine, 6 interleaved rounds, benchstat).
// Zen 4 (0x19) has not been measured.
func f16ZMMMinOf(amdFamily int) int {
	if amdFamily >= 0x1a {
		return 0
	}
	return 768
}
