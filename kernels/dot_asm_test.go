//go:build (amd64 || arm64) && !purego && !noasm

package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/asm"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/dotcont"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/stretchr/testify/require"
)

// TestDotEntries checks the wiring between the dot products' assembly entries and the
// variants: the entries number the variants as dispatch does, every variant with a body
// runs it without the Go continuation, and the continuation runs for the generic
// variant, for results that are not finite (which it settles) and for mismatched
// lengths (which panic there).
func TestDotEntries(t *testing.T) {
	require.EqualValues(t, dispatch.AVX2, asm.ISAAVX2)
	require.EqualValues(t, dispatch.AVX512, asm.ISAAVX512)
	require.EqualValues(t, dispatch.NEON, asm.ISANEON)

	var continued []string
	f16, f32f16, f32 := dotcont.F16, dotcont.F32F16, dotcont.F32
	dotcont.F16 = func(a, b *uint16, n int, sel int64) float32 {
		continued = append(continued, "DotF16")
		return f16(a, b, n, sel)
	}
	dotcont.F32F16 = func(a *float32, b *uint16, n int, sel int64) float32 {
		continued = append(continued, "DotF32F16")
		return f32f16(a, b, n, sel)
	}
	dotcont.F32 = func(a, b *float32, n int, sel int64) float32 {
		continued = append(continued, "DotF32")
		return f32(a, b, n, sel)
	}
	defer func() { dotcont.F16, dotcont.F32F16, dotcont.F32 = f16, f32f16, f32 }()

	// 2¹²⁰·2¹⁰ overflows float32 in every variant's order; float64 sums it exactly.
	huge, ones := []float32{0x1p120, 0x1p120}, []float32{1024, 1024}
	onesF16 := make([]Float16, 2)
	fp16.FromFloat32(onesF16, ones)
	r := rand.New(rand.NewPCG(17, 17))
	a16, a32 := toHalves(randomF16(r, 37)), randomF32(r, 37)
	varianttest.Each(t, func(v string) {
		want := []string(nil)
		if v == dispatch.Generic {
			want = []string{"DotF16", "DotF32F16", "DotF32"}
		}
		continued = nil
		DotF16(a16, a16)
		DotF32F16(a32, a16)
		DotF32(a32, a32)
		require.Equal(t, want, continued, "%s: finite results", v)

		continued = nil
		require.Equal(t, float32(math.Inf(1)), DotF32F16(huge, onesF16), v)
		require.Equal(t, float32(math.Inf(1)), DotF32(huge, ones), v)
		require.Equal(t, []string{"DotF32F16", "DotF32"}, continued, "%s: results that overflow", v)

		continued = nil
		require.Panics(t, func() { DotF16(a16, a16[1:]) }, v)
		require.Panics(t, func() { DotF32F16(a32[1:], a16) }, v)
		require.Panics(t, func() { DotF32(a32, a32[:3]) }, v)
		require.Equal(t, []string{"DotF16", "DotF32F16", "DotF32"}, continued, "%s: mismatched lengths", v)
	})
}
