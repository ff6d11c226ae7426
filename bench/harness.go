package main

import (
	"fmt"
	"testing"

	"github.com/kvsimd/kvsimd/kernels"
)

// eachVariant runs body as the sub-benchmarks variant/n=N, for every variant this CPU
// runs and every size, so benchstat compares variants within one run.
func eachVariant(b *testing.B, sizes []int, body func(b *testing.B, n int)) {
	start := kernels.Active()
	defer kernels.Use(start)
	for _, v := range kernels.Variants() {
		must(kernels.Use(v))
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/n=%d", v, n), func(b *testing.B) { body(b, n) })
		}
	}
}
