//go:build !purego && !noasm

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/kvsimd/kvsimd/asm"
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/dotcont"
	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/stretchr/testify/require"
)

// The neon variant has two numbers, asm.ISANEONFHM on a CPU with FEAT_FHM and
// asm.ISANEON without (asm/dot.go). The tests that run every variant run the number of
// this CPU; these run both bodies of DotF16 side by side where the CPU can (FMLAL needs
// FHM: qemu's default CPU has it, QEMU_CPU=cortex-a53 has not), and both numbers
// through the other entries everywhere.

// fhm reports whether this CPU runs DotF16's FMLAL body, and skips t if not.
func fhm(t *testing.T) {
	t.Helper()
	if dispatch.Number("neon") != dispatch.NEONFHM {
		t.Skip("no FEAT_FHM on this CPU: DotF16's FMLAL body cannot run (its conversion body runs in every other test)")
	}
}

func TestDotNEONNumbers(t *testing.T) {
	require.EqualValues(t, dispatch.NEON, asm.ISANEON)
	require.EqualValues(t, dispatch.NEONFHM, asm.ISANEONFHM)
	require.EqualValues(t, dispatch.Number("neon"), neonISA)
	if dispatch.Active() == "neon" {
		require.EqualValues(t, neonISA, dispatch.ActiveVariant)
	}
}

// isSignaling reports whether the half h is a signalling NaN.
func isSignaling(h uint16) bool { return h&0x7c00 == 0x7c00 && h&0x3ff != 0 && h&0x200 == 0 }

// checkDotF16Bodies runs DotF16's two NEON bodies on a and b and requires the same
// bits, NaNs included, unless an input is a signalling NaN: then both must be NaN (the
// conversion quiets it before FMLA sees it, FMLAL gives it priority over a quiet NaN,
// so the payloads may differ). Both must also meet DotF16's bound.
func checkDotF16Bodies(t *testing.T, what string, a, b []uint16) {
	t.Helper()
	cvt := dotF16ISA(a, b, asm.ISANEON)
	fml := dotF16ISA(a, b, asm.ISANEONFHM)
	want := oracle.ExpectDot(len(a), oracle.HalfAt(a), oracle.HalfAt(b), 1)
	for _, got := range []float32{cvt, fml} {
		if err := want.CheckSettled(got); err != nil {
			t.Fatalf("%s n=%d: %v (FCVTL body %v, FMLAL body %v)", what, len(a), err, cvt, fml)
		}
	}
	if slices.ContainsFunc(a, isSignaling) || slices.ContainsFunc(b, isSignaling) {
		if cvt == cvt || fml == fml {
			t.Fatalf("%s n=%d: FCVTL body %v, FMLAL body %v, want both NaN", what, len(a), cvt, fml)
		}
		return
	}
	if math.Float32bits(cvt) != math.Float32bits(fml) {
		t.Fatalf("%s n=%d: FCVTL body %v (%#08x), FMLAL body %v (%#08x)", what, len(a), cvt, math.Float32bits(cvt), fml, math.Float32bits(fml))
	}
}

// TestDotF16FHMBits checks that DotF16's FMLAL body gives the bits of its FCVTL+FMLA
// body: at every length to 300 and past the 64-element steps, at every offset into
// NaN padding, on random values, and with special values at every position.
func TestDotF16FHMBits(t *testing.T) {
	fhm(t)
	r := rand.New(rand.NewPCG(26, 1))
	lengths := []int{1023, 1024, 1025, 4096 + 63, 65536 + 7}
	for n := 0; n <= 300; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		a, b := randomF16(r, n), randomF16(r, n)
		for _, off := range dotOffsets {
			checkDotF16Bodies(t, fmt.Sprintf("random, offset %d", off), padF16(a, off), padF16(b, 3-off))
		}
	}
	specials := []uint16{
		0x0000, 0x8000, // ±0
		0x0001, 0x8001, 0x03ff, 0x83ff, // smallest and largest subnormals
		0x0400, 0x3c00, 0xbc00, 0x7bff, 0xfbff, // smallest normal, ±1, ±65504
		0x7c00, 0xfc00, // ±Inf
		0x7e00, 0xfe00, 0x7e01, 0x7fff, 0xffc3, // quiet NaNs with payloads
		0x7c01, 0x7d00, 0xfdff, // signalling NaNs
	}
	for _, n := range []int{1, 3, 4, 5, 15, 16, 17, 63, 64, 65, 79, 80, 127, 128, 129, 200} {
		step := max(1, n/64)
		for _, s := range specials {
			for pos := 0; pos < n; pos += step {
				a, b := randomF16(r, n), randomF16(r, n)
				a[pos] = s
				checkDotF16Bodies(t, fmt.Sprintf("%#04x at %d of a", s, pos), a, b)
				b[(pos*7+3)%n] = specials[(pos+int(s))%len(specials)]
				checkDotF16Bodies(t, fmt.Sprintf("%#04x at %d of a, %#04x at %d of b", s, pos, b[(pos*7+3)%n], (pos*7+3)%n), a, b)
			}
		}
	}
	// Every pair of the specials, and every subnormal half against 1 and against the
	// largest subnormal, whose products are float32 subnormals.
	for _, x := range specials {
		for _, y := range specials {
			a, b := randomF16(r, 67), randomF16(r, 67)
			a[5], b[5], a[66], b[66] = x, y, y, x
			checkDotF16Bodies(t, fmt.Sprintf("%#04x·%#04x", x, y), a, b)
		}
	}
	sub := make([]uint16, 0x800)
	ones, small := make([]uint16, len(sub)), make([]uint16, len(sub))
	for i := range sub {
		sub[i] = uint16(i) ^ uint16(i&1)<<15
		ones[i], small[i] = 0x3c00, 0x03ff
	}
	checkDotF16Bodies(t, "subnormals·1", sub, ones)
	checkDotF16Bodies(t, "subnormals·subnormal", sub, small)
}

// TestDotNEONNumbersSelectTheBodies checks that each entry runs a NEON body, not its
// continuation, for both of neon's numbers (DotF16's FMLAL body only where the CPU has
// FHM), with the same bits, and that with lengths that differ both numbers reach the
// continuation's panic, which names the lengths.
func TestDotNEONNumbersSelectTheBodies(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 2))
	a16, b16, a32, b32 := randomF16(r, 133), randomF16(r, 133), randomF32(r, 133), randomF32(r, 133)
	numbers := []uint8{asm.ISANEON, asm.ISANEONFHM}
	restore := withoutContinuations(t)
	for _, isa := range numbers {
		if isa == asm.ISANEONFHM && dispatch.Number("neon") == dispatch.NEONFHM {
			require.Equal(t, dotF16ISA(a16, b16, asm.ISANEON), dotF16ISA(a16, b16, isa))
		}
		require.Equal(t, dotF32F16ISA(a32, b16, asm.ISANEON), dotF32F16ISA(a32, b16, isa))
		require.Equal(t, dotF32ISA(a32, b32, asm.ISANEON), dotF32ISA(a32, b32, isa))
	}
	restore()
	for _, isa := range numbers {
		require.PanicsWithError(t, "kernels.DotF16: len(a) = 133, len(b) = 132, want len(a) = len(b)", func() { dotF16ISA(a16, b16[1:], isa) })
		require.PanicsWithError(t, "kernels.DotF32F16: len(a) = 132, len(b) = 133, want len(a) = len(b)", func() { dotF32F16ISA(a32[1:], b16, isa) })
		require.PanicsWithError(t, "kernels.DotF32: len(a) = 133, len(b) = 0, want len(a) = len(b)", func() { dotF32ISA(a32, b32[:0], isa) })
		// A length that differs by a multiple of 256 must not reach a body either:
		// sel's low byte is the number then.
		long := make([]float32, 133+256)
		require.PanicsWithError(t, "kernels.DotF32: len(a) = 133, len(b) = 389, want len(a) = len(b)", func() { dotF32ISA(a32, long, isa) })
		longH := make([]uint16, 133+256)
		require.PanicsWithError(t, "kernels.DotF16: len(a) = 133, len(b) = 389, want len(a) = len(b)", func() { dotF16ISA(a16, longH, isa) })
	}
	// The numbers beside neon's reach the continuation too, with equal lengths: it
	// takes them for a SIMD body's result that was not finite and settles it in float64.
	for _, isa := range []uint8{asm.ISANEON - 1, asm.ISANEONFHM + 1, 255} {
		calls := 0
		f32 := dotcont.F32
		dotcont.F32 = func(a, b *float32, n int, sel int64) float32 { calls++; return f32(a, b, n, sel) }
		got := asm.DotF32(unsafe.SliceData(a32), unsafe.SliceData(b32), len(a32), asm.Select(isa, len(a32), len(b32)))
		dotcont.F32 = f32
		require.Equal(t, 1, calls, "isa %d", isa)
		require.Equal(t, sumF32(a32, b32), got, "isa %d", isa)
	}
}

// withoutContinuations makes every dot continuation fail t until the returned function
// restores them.
func withoutContinuations(t *testing.T) (restore func()) {
	f16, f32f16, f32 := dotcont.F16, dotcont.F32F16, dotcont.F32
	dotcont.F16 = func(*uint16, *uint16, int, int64) float32 { t.Error("DotF16 continued"); return 0 }
	dotcont.F32F16 = func(*float32, *uint16, int, int64) float32 { t.Error("DotF32F16 continued"); return 0 }
	dotcont.F32 = func(*float32, *float32, int, int64) float32 { t.Error("DotF32 continued"); return 0 }
	return func() { dotcont.F16, dotcont.F32F16, dotcont.F32 = f16, f32f16, f32 }
}
