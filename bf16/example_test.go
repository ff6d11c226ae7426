package bf16_test

import (
	"fmt"
	"math"

	"github.com/kvsimd/kvsimd/bf16"
)

// An engine narrows a row of keys into its bfloat16 cache and widens it back before
// the dot products: 1 and 0.5 survive exactly, π loses all but 8 significant bits, a
// tie goes to the even neighbour, and 3.4e38 (past the largest finite bfloat16,
// 3.3895e38) becomes Inf.
func ExampleFromFloat32() {
	keys := []float32{1, 0.5, math.Pi, math.Float32frombits(0x3f808000), 3.4e38}
	cache := make([]bf16.BFloat16, len(keys))
	bf16.FromFloat32(cache, keys)
	back := make([]float32, len(keys))
	bf16.ToFloat32(back, cache)
	for i := range keys {
		fmt.Printf("%-12g %#04x %g\n", keys[i], uint16(cache[i]), back[i])
	}
	// Output:
	// 1            0x3f80 1
	// 0.5          0x3f00 0.5
	// 3.1415927    0x4049 3.140625
	// 1.0039062    0x3f80 1
	// 3.4e+38      0x7f80 +Inf
}
