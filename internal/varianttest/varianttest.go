// Package varianttest owns the loop that tests use to run a check once per kernel
// variant: every variant dispatch.Tested names (all this CPU and build run, or those of
// them KVSIMD_TEST_VARIANTS lists), made active in turn, and the variant active before
// restored afterwards, even when the check fails.
//
// It imports only internal/dispatch, whose Use switches every kernel at once, fp16's
// conversions included, so that the tests inside packages kernels and fp16 use it as
// well as those above them.
//
// A check may call a variant's implementation directly (a Func's For) or the exported
// kernel: with the variant active, both run the same code, and so do the kernels an
// implementation calls in turn.
package varianttest

import (
	"testing"

	"github.com/kvsimd/kvsimd/internal/dispatch"
)

// Each calls check once per tested variant, with that variant active. A check names
// the variant in its failures.
func Each(t testing.TB, check func(variant string)) {
	t.Helper()
	defer dispatch.Use(dispatch.Active())
	for _, v := range dispatch.Tested() {
		if err := dispatch.Use(v); err != nil {
			t.Fatal(err)
		}
		check(v)
	}
}

// Run is Each with a subtest per variant, named after it: a failure stops that
// variant's check only, and -run can pick variants (TestX/avx2).
func Run(t *testing.T, check func(t *testing.T, variant string)) {
	t.Helper()
	Each(t, func(v string) {
		t.Run(v, func(t *testing.T) { check(t, v) })
	})
}
