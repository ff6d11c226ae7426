package snapkv

import (
	"testing"

	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/kernels"
)

// EachVariant runs check with every tested kernel variant active, for the tests of
// both this package and snapkv_test.
func EachVariant(t *testing.T, check func(variant string)) {
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
