// Package varianttest owns the loop that tests outside package kernels use to run a
// check once per kernel variant: every variant dispatch.Tested names, made active in
// turn, and the start-up choice restored afterwards.
package varianttest

import (
	"testing"

	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/kernels"
)

// Each calls check once per tested variant, with that variant active.
func Each(t testing.TB, check func(variant string)) {
	t.Helper()
	start := kernels.Active()
	defer kernels.Use(start)
	for _, v := range dispatch.Tested() {
		if err := kernels.Use(v); err != nil {
			t.Fatal(err)
		}
		check(v)
	}
}
