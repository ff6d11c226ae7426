package varianttest

import (
	"runtime"
	"sync"
	"testing"

	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/stretchr/testify/require"
)

// TestEach checks that Each runs the check once per tested variant, in dispatch's
// order, with that variant active, and restores the variant active before, from the
// best one and from generic.
func TestEach(t *testing.T) {
	defer dispatch.Use(dispatch.Active())
	for _, start := range []string{dispatch.Variants()[0], dispatch.Generic} {
		require.NoError(t, dispatch.Use(start))
		var seen []string
		Each(t, func(v string) {
			require.Equal(t, v, dispatch.Active())
			seen = append(seen, v)
		})
		require.Equal(t, dispatch.Tested(), seen)
		require.Equal(t, start, dispatch.Active())
	}
}

// TestEachHonoursTestedVariants: KVSIMD_TEST_VARIANTS narrows the variants checked.
func TestEachHonoursTestedVariants(t *testing.T) {
	t.Setenv("KVSIMD_TEST_VARIANTS", dispatch.Generic)
	var seen []string
	Each(t, func(v string) { seen = append(seen, v) })
	require.Equal(t, []string{dispatch.Generic}, seen)
}

// TestEachRestoresAfterFailure stops a check the way t.Fatal does (runtime.Goexit) in
// the first variant, from generic: generic is active again all the same.
func TestEachRestoresAfterFailure(t *testing.T) {
	defer dispatch.Use(dispatch.Active())
	require.NoError(t, dispatch.Use(dispatch.Generic))
	var wg sync.WaitGroup
	calls := 0
	wg.Go(func() {
		Each(t, func(string) {
			calls++
			runtime.Goexit()
		})
	})
	wg.Wait()
	require.Equal(t, 1, calls)
	require.Equal(t, dispatch.Generic, dispatch.Active())
}

// TestRun checks that Run runs each check in a subtest named after its variant, with
// that variant active.
func TestRun(t *testing.T) {
	start := dispatch.Active()
	var seen []string
	Run(t, func(t *testing.T, v string) {
		require.Equal(t, "TestRun/"+v, t.Name())
		require.Equal(t, v, dispatch.Active())
		seen = append(seen, v)
	})
	require.Equal(t, dispatch.Tested(), seen)
	require.Equal(t, start, dispatch.Active())
}
