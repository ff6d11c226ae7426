package bf16

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/stretchr/testify/require"
)

// The references here are computed independently of the bit trick every variant uses:
// widening decodes the fields into a float64, and narrowing rounds the float64 value
// of the float32 to 8 significant bits (or, below 2⁻¹²⁶, to a multiple of 2⁻¹³³) with
// math.RoundToEven.

// refWiden decodes b's sign, exponent and mantissa fields. NaNs have no value to
// compare, so for them it returns the only bits that keep sign and payload.
func refWiden(b uint16) uint32 {
	sign, exp, man := b>>15, int(b>>7)&0xff, float64(b&0x7f)
	var v float64
	switch {
	case exp == 0xff && man != 0:
		return uint32(b) << 16
	case exp == 0xff:
		v = math.Inf(1)
	case exp == 0:
		v = math.Ldexp(man, -133) // subnormal: man·2⁻¹³³
	default:
		v = math.Ldexp(128+man, exp-134) // 1.man · 2^(exp-127)
	}
	if sign == 1 {
		v = -v
	}
	return math.Float32bits(float32(v))
}

// refNarrow rounds f to the nearest bfloat16, ties to even, in float64 arithmetic.
func refNarrow(f float32) uint16 {
	u := math.Float32bits(f)
	if math.IsNaN(float64(f)) {
		return uint16(u>>16) | 0x0040 // quieted, sign and top payload bits kept
	}
	sign := uint16(u>>16) & 0x8000
	a := math.Abs(float64(f))
	if math.IsInf(a, 0) {
		return sign | 0x7f80
	}
	var r float64
	if a < 0x1p-126 {
		r = math.RoundToEven(a*0x1p133) * 0x1p-133 // exact: f has at most 24 bits
	} else {
		frac, exp := math.Frexp(a) // a = frac·2^exp, frac in [0.5, 1)
		r = math.Ldexp(math.RoundToEven(frac*256), exp-8)
	}
	if r >= 0x1p128 {
		return sign | 0x7f80 // past the largest finite bfloat16
	}
	return sign | uint16(math.Float32bits(float32(r))>>16) // r has ≤ 8 significant bits: exact
}

func TestToFloat32AllValues(t *testing.T) {
	src := make([]uint16, 1<<16)
	for i := range src {
		src[i] = uint16(i)
	}
	varianttest.Each(t, func(v string) {
		dst := make([]float32, len(src))
		toFloat32.For(v)(dst, src)
		for i, b := range src {
			if got, want := math.Float32bits(dst[i]), refWiden(b); got != want {
				t.Fatalf("%s: %#04x widened to %#08x, want %#08x", v, b, got, want)
			}
			if got := math.Float32bits(BFloat16(b).Float32()); got != refWiden(b) {
				t.Fatalf("BFloat16(%#04x).Float32() = %#08x, want %#08x", b, got, refWiden(b))
			}
		}
	})
}

// TestReference checks refNarrow itself on values whose answers are known by hand.
func TestReference(t *testing.T) {
	for _, c := range []struct {
		u    uint32
		want uint16
	}{
		{0x3f808000, 0x3f80}, {0x3f818000, 0x3f82}, {0x3f808001, 0x3f81}, // ties to even, down and up
		{0x00008000, 0x0000}, {0x00018000, 0x0002}, {0x007f8000, 0x0080}, // subnormal ties, into the smallest normal
		{0x7f7f7fff, 0x7f7f}, {0x7f7f8000, 0x7f80}, {0xff7fffff, 0xff80}, // largest finite, overflow
		{0x7f800001, 0x7fc0}, {0xffa12345, 0xffe1}, {0x80000000, 0x8000},
	} {
		if got := refNarrow(math.Float32frombits(c.u)); got != c.want {
			t.Errorf("refNarrow(%#08x) = %#04x, want %#04x", c.u, got, c.want)
		}
	}
}

// edgeFloats crosses every float32 exponent and both signs with kept mantissas at
// both ends and dropped halves that sit just below, at and above the tie, at zero and
// at the top: ties to even and to odd, subnormals (exponent 0) from the smallest to
// the largest and their halfway cases, values that round up into the next binade or
// to Inf (exponent 254), and at exponent 255 Inf and NaNs, quiet and signalling, with
// payload bits only in the kept part, only in the dropped part, or both.
func edgeFloats() []float32 {
	var fs []float32
	for exp := uint32(0); exp < 256; exp++ {
		for _, kept := range []uint32{0, 1, 0x2a, 0x3f, 0x40, 0x41, 0x7e, 0x7f} {
			for _, dropped := range []uint32{0, 1, 0x7fff, 0x8000, 0x8001, 0xffff} {
				u := exp<<23 | kept<<16 | dropped
				fs = append(fs, math.Float32frombits(u), math.Float32frombits(u|0x80000000))
			}
		}
	}
	return fs
}

// specialFloats are the edge classes named one by one, so a failure reads plainly.
var specialFloats = []uint32{
	0x00000000, 0x80000000, // ±0
	0x00000001, 0x80000001, 0x00008000, 0x00008001, 0x00018000, // smallest subnormals, ties to 0 and to 2·2⁻¹³³
	0x007fffff, 0x807f8000, 0x007f7fff, // largest subnormal, ties into the smallest normal
	0x3f800000, 0x3f808000, 0x3f818000, 0xbf80ffff, // 1, ties down and up, just under 2
	0x7f7f7fff, 0x7f7f8000, 0x7f7fffff, 0xff7f8000, // largest finite bf16, overflow ties, ±MaxFloat32
	0x7f800000, 0xff800000, // ±Inf
	0x7fc00000, 0xffc00000, 0x7fc00001, 0x7fffffff, 0xffffffff, // quiet NaNs
	0x7f800001, 0xff800001, 0x7fa00000, 0xffbfffff, 0x7f810000, 0x7f80ffff, // signalling NaNs
}

func randomFloats(n int) []float32 {
	r := rand.New(rand.NewPCG(7, 11))
	fs := make([]float32, n)
	for i := range fs {
		if i%2 == 0 {
			fs[i] = math.Float32frombits(r.Uint32()) // every class, NaNs included
		} else {
			fs[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(60)-30))) // activations' range
		}
	}
	return fs
}

func checkFromFloat32(t *testing.T, variant string, src []float32) {
	t.Helper()
	dst := make([]uint16, len(src))
	fromFloat32.For(variant)(dst, src)
	for i, f := range src {
		if want := refNarrow(f); dst[i] != want {
			t.Fatalf("%s: %#08x narrowed to %#04x, want %#04x", variant, math.Float32bits(f), dst[i], want)
		}
	}
}

func TestFromFloat32EdgeClasses(t *testing.T) {
	special := make([]float32, len(specialFloats))
	for i, u := range specialFloats {
		special[i] = math.Float32frombits(u)
	}
	edges := edgeFloats()
	varianttest.Each(t, func(v string) {
		checkFromFloat32(t, v, special)
		checkFromFloat32(t, v, edges)
	})
}

func TestFromFloat32Random(t *testing.T) {
	n := 1 << 20
	if testing.Short() {
		n = 1 << 16
	}
	src := randomFloats(n)
	varianttest.Each(t, func(v string) {
		checkFromFloat32(t, v, src)
	})
}

// TestFromFloat32Exhaustive narrows all 2³² floats on every variant against refNarrow.
// It runs only when KVSIMD_EXHAUSTIVE=1: on the shared 2-vCPU Zen 5 it was written
// on, 44 s (avx512) to 72 s (avx2) a variant, 2 min 50 s for the three (the reference
// dominates). Under qemu-user expect hours; KVSIMD_TEST_VARIANTS=neon spares generic.
func TestFromFloat32Exhaustive(t *testing.T) {
	if os.Getenv("KVSIMD_EXHAUSTIVE") != "1" {
		t.Skip("set KVSIMD_EXHAUSTIVE=1 to narrow all 2³² floats")
	}
	const chunk = 1 << 20
	varianttest.Each(t, func(v string) {
		start := time.Now()
		var wg sync.WaitGroup
		next := make(chan uint32)
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				src, dst := make([]float32, chunk), make([]uint16, chunk)
				for base := range next {
					for i := range src {
						src[i] = math.Float32frombits(base + uint32(i))
					}
					fromFloat32.For(v)(dst, src)
					for i, f := range src {
						if want := refNarrow(f); dst[i] != want {
							t.Errorf("%s: %#08x narrowed to %#04x, want %#04x", v, math.Float32bits(f), dst[i], want)
							return
						}
					}
				}
			})
		}
		for base := uint64(0); base < 1<<32; base += chunk {
			next <- uint32(base)
		}
		close(next)
		wg.Wait()
		t.Logf("%s: all 2³² floats in %v", v, time.Since(start).Round(time.Second))
	})
}

// TestLengthsAndGuards runs every length up to a few unrolled vector widths at every
// start offset in a guarded buffer: the elements outside dst must survive and every
// element inside must be converted.
func TestLengthsAndGuards(t *testing.T) {
	const guard = 8
	bfs := make([]uint16, 300+4)
	singles := make([]float32, len(bfs))
	edges := edgeFloats()
	for i := range bfs {
		bfs[i] = uint16(uint64(i) * 2654435761 >> 7)
		singles[i] = edges[(i*7919)%len(edges)] // ties, subnormals, NaNs mixed in every vector
	}
	varianttest.Each(t, func(v string) {
		for n := 0; n <= 300; n++ {
			for off := 0; off < 4; off++ {
				wide := make([]float32, n+2*guard)
				for i := range wide {
					wide[i] = -7.5
				}
				toFloat32.For(v)(wide[guard:guard+n], bfs[off:off+n])
				narrow := make([]uint16, n+2*guard)
				for i := range narrow {
					narrow[i] = 0xdead
				}
				fromFloat32.For(v)(narrow[guard:guard+n], singles[off:off+n])
				for i := range wide {
					inside := i >= guard && i < guard+n
					wantW, wantN := math.Float32bits(-7.5), uint16(0xdead)
					if inside {
						wantW = refWiden(bfs[off+i-guard])
						wantN = refNarrow(singles[off+i-guard])
					}
					if math.Float32bits(wide[i]) != wantW || narrow[i] != wantN {
						t.Fatalf("%s n=%d off=%d: index %d (guard %d) got %#08x/%#04x, want %#08x/%#04x",
							v, n, off, i, guard, math.Float32bits(wide[i]), narrow[i], wantW, wantN)
					}
				}
			}
		}
	})
}

func TestMismatchedLengthsPanic(t *testing.T) {
	require.PanicsWithValue(t, "bf16.ToFloat32: len(dst) = 3, len(src) = 4, want equal lengths", func() {
		ToFloat32(make([]float32, 3), make([]BFloat16, 4))
	})
	require.PanicsWithValue(t, "bf16.FromFloat32: len(dst) = 5, len(src) = 2, want equal lengths", func() {
		FromFloat32(make([]BFloat16, 5), make([]float32, 2))
	})
}

// TestExported runs the exported functions, which the other tests reach through
// their Funcs, and the slice views.
func TestExported(t *testing.T) {
	src := randomFloats(1000)
	varianttest.Run(t, func(t *testing.T, v string) {
		narrow := make([]BFloat16, len(src))
		FromFloat32(narrow, src)
		wide := make([]float32, len(src))
		ToFloat32(wide, narrow)
		for i, f := range src {
			require.Equal(t, refNarrow(f), uint16(narrow[i]), "%s: %#08x", v, math.Float32bits(f))
			require.Equal(t, refWiden(uint16(narrow[i])), math.Float32bits(wide[i]), "%s: %#04x", v, narrow[i])
		}
	})
	raw := []uint16{1, 2, 3}
	views := FromBits(raw)
	views[1] = 0x3f80
	require.Equal(t, uint16(0x3f80), raw[1])
	require.Equal(t, &raw[0], &Bits(views)[0])
	require.Len(t, Bits(views), 3)
	require.Equal(t, float32(1), views[1].Float32())
}

func TestNoAllocations(t *testing.T) {
	src, dst := make([]BFloat16, 1000), make([]float32, 1000)
	back := make([]BFloat16, 1000)
	varianttest.Run(t, func(t *testing.T, v string) {
		allocs := testing.AllocsPerRun(10, func() {
			ToFloat32(dst, src)
			FromFloat32(back, dst)
		})
		require.Zero(t, allocs, fmt.Sprintf("%s allocates", v))
	})
}

// TestFollowsUse checks that the conversions switch with every other kernel: Use lives
// in package dispatch, which bf16 registers with, and which Each calls.
func TestFollowsUse(t *testing.T) {
	defer dispatch.Use(dispatch.Active())
	varianttest.Each(t, func(v string) {
		require.Equal(t, reflect.ValueOf(toFloat32.For(v)).Pointer(), reflect.ValueOf(toFloat32.Call).Pointer(), v)
		require.Equal(t, reflect.ValueOf(fromFloat32.For(v)).Pointer(), reflect.ValueOf(fromFloat32.Call).Pointer(), v)
	})
	require.NoError(t, dispatch.Use(dispatch.Generic))
	require.Equal(t, reflect.ValueOf(toFloat32Generic).Pointer(), reflect.ValueOf(toFloat32.Call).Pointer())
	require.Equal(t, reflect.ValueOf(fromFloat32Generic).Pointer(), reflect.ValueOf(fromFloat32.Call).Pointer())
}

// TestVariantsRegistered checks that every variant this CPU and build run has its own
// implementation of both conversions, rather than falling back to generic.
func TestVariantsRegistered(t *testing.T) {
	for _, v := range dispatch.Variants() {
		if v == dispatch.Generic || !asmBuilt {
			continue
		}
		require.NotEqual(t, reflect.ValueOf(toFloat32Generic).Pointer(), reflect.ValueOf(toFloat32.For(v)).Pointer(), v)
		require.NotEqual(t, reflect.ValueOf(fromFloat32Generic).Pointer(), reflect.ValueOf(fromFloat32.For(v)).Pointer(), v)
	}
}
