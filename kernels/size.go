package kernels

import (
	"math"
	"math/bits"
)

// mulSize returns a·b for sizes a, b ≥ 0 and whether it fits an int. The wrappers
// check every product of sizes with it before comparing lengths: a product that wraps
// could match a short slice, and the assembly would then run past it.
func mulSize(a, b int) (int, bool) {
	hi, lo := bits.Mul(uint(a), uint(b))
	return int(lo), hi == 0 && lo <= math.MaxInt
}
