package dispatch

import (
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVariantsEndInGenericAndStartBest(t *testing.T) {
	vs := Variants()
	require.Equal(t, Generic, vs[len(vs)-1])
	if EnvErr == nil && !envSet() {
		require.Equal(t, vs[0], Active())
	}
}

func envSet() bool { _, ok := lookupEnv(); return ok }

// TestExpectedVariant lets CI insist that the variant its (emulated) CPU has is
// detected, so that cpuid missing a feature cannot quietly leave every test on generic.
func TestExpectedVariant(t *testing.T) {
	want := os.Getenv("KVSIMD_EXPECT_VARIANT")
	if want == "" {
		t.Skip("KVSIMD_EXPECT_VARIANT not set")
	}
	require.Contains(t, Variants(), want)
}

func TestUseSwitchesEveryFuncWithFallback(t *testing.T) {
	defer Use(Active())
	type fn func() string
	plain := New[fn](func() string { return Generic })
	withBest := New[fn](func() string { return Generic })
	for _, v := range Variants() {
		withBest.Add(v, func() string { return v })
	}
	for _, v := range Variants() {
		require.NoError(t, Use(v))
		require.Equal(t, v, Active())
		require.Equal(t, Generic, plain.Call(), "a Func with no body for %s runs generic", v)
		require.Equal(t, v, withBest.Call())
		require.Equal(t, v, withBest.For(v)())
		require.Equal(t, variantNumbers[v], ActiveVariant)
	}
}

func TestCallFallsBack(t *testing.T) {
	type fn func() string
	f := &Func[fn]{impls: map[string]fn{Generic: func() string { return Generic }}}
	f.impls["avx2"] = func() string { return "avx2" }
	f.selectVariant("avx512")
	require.Equal(t, "avx2", f.Call(), "an avx512 Func without an avx512 body runs its avx2 one")
	f.selectVariant("neon")
	require.Equal(t, Generic, f.Call())
}

func TestEveryVariantHasANumber(t *testing.T) {
	seen := map[Variant]bool{}
	for v := range fallback {
		n, ok := variantNumbers[v]
		require.True(t, ok, v)
		require.False(t, seen[n], "%s shares its number", v)
		seen[n] = true
	}
}

func TestFallbackChain(t *testing.T) {
	type fn func() string
	f := &Func[fn]{impls: map[string]fn{Generic: func() string { return Generic }}}
	f.impls["avx2"] = func() string { return "avx2" }
	require.Equal(t, "avx2", f.For("avx512")(), "avx512 falls back to avx2")
	require.Equal(t, Generic, f.For("neon")())
}

func TestUseRejects(t *testing.T) {
	before := Active()
	err := Use("sse9")
	require.ErrorContains(t, err, `"sse9": unknown variant; usable: `)
	require.ErrorContains(t, err, Generic)
	for v := range fallback {
		if !slices.Contains(Variants(), v) {
			require.ErrorContains(t, Use(v), "not supported by this CPU or build")
		}
	}
	require.Equal(t, before, Active(), "a failed Use changes nothing")
}

func TestAddUnknownVariantPanics(t *testing.T) {
	type fn func()
	f := New[fn](func() {})
	require.Panics(t, func() { f.Add("sse9", func() {}) })
}

func TestTestedNarrowsToNamedVariants(t *testing.T) {
	t.Setenv("KVSIMD_TEST_VARIANTS", "")
	require.Equal(t, Variants(), Tested())
	t.Setenv("KVSIMD_TEST_VARIANTS", "generic,sse9")
	require.Equal(t, []string{Generic}, Tested())
}

// TestNumbers checks Number: each variant's number, neon's one of its two, and
// GenericVariant for unknown names.
func TestNumbers(t *testing.T) {
	require.Equal(t, GenericVariant, Number(Generic))
	require.Equal(t, AVX2, Number("avx2"))
	require.Equal(t, AVX512, Number("avx512"))
	require.Contains(t, []Variant{NEON, NEONFHM}, Number("neon"))
	require.Equal(t, GenericVariant, Number("sse9"))
}
