package fp16

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"sync"
	"testing"

	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"
)

// The oracle everywhere is x448/float16 itself, one element at a time.

func TestToFloat32AllHalves(t *testing.T) {
	src := make([]uint16, 1<<16)
	for i := range src {
		src[i] = uint16(i)
	}
	varianttest.Each(t, func(v string) {
		dst := make([]float32, len(src))
		toFloat32.For(v)(dst, src)
		for i, h := range src {
			want := math.Float32bits(float16.Frombits(h).Float32())
			if got := math.Float32bits(dst[i]); got != want {
				t.Fatalf("%s: %#04x widened to %#08x, x448 gives %#08x", v, h, got, want)
			}
		}
	})
}

// halfBoundaries returns, for every finite half h ≥ 0 and its negation, the float32
// value of h, the midpoint to the next half up (a tie), and the floats one ulp either
// side of that midpoint: every rounding decision FromFloat32 can make.
func halfBoundaries() []float32 {
	var fs []float32
	for h := uint16(0); h < 0x7c00; h++ {
		lo := float64(float16.Frombits(h).Float32())
		var hi float64
		if h == 0x7bff {
			hi = 65536 // the next "half" up is the overflow threshold's other side
		} else {
			hi = float64(float16.Frombits(h + 1).Float32())
		}
		mid := float32((lo + hi) / 2) // exact: halves have 11 significant bits
		for _, f := range []float32{float32(lo), mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, math.MaxFloat32)} {
			fs = append(fs, f, -f)
		}
	}
	return fs
}

// specialFloats are the edge classes named one by one, so a failure reads plainly.
var specialFloats = []uint32{
	0x00000000, 0x80000000, // ±0
	0x00000001, 0x807fffff, // float32 subnormals: round to ±0
	0x33000000, 0x33000001, 0x33800000, 0x33c00000, // 2⁻²⁵ (tie to 0), above it, 2⁻²⁴, 1.5·2⁻²⁴ (tie to even 2·2⁻²⁴)
	0x387fc000, 0x387fe000, 0x387ff000, 0x38800000, // largest subnormal half, ties into the smallest normal
	0x3f800000, 0x3f801000, 0x3f803000, // 1, 1+2⁻¹¹ (tie down), 1+3·2⁻¹¹ (tie up)
	0x477fe000, 0x477fefff, 0x477ff000, 0x477fffff, 0x47800000, // 65504, just below overflow, overflow ties and beyond
	0x7f7fffff, 0xff7fffff, // ±MaxFloat32
	0x7f800000, 0xff800000, // ±Inf
	0x7fc00000, 0xffc00000, 0x7fc00001, 0x7fffffff, // quiet NaNs, payload below and at the top
	0x7f800001, 0x7fa00000, 0xffbfffff, 0x7f802000, // signalling NaNs with payloads (quieted, payload kept)
}

func randomFloats(n int) []float32 {
	r := rand.New(rand.NewPCG(7, 11))
	fs := make([]float32, n)
	for i := range fs {
		if i%2 == 0 {
			fs[i] = math.Float32frombits(r.Uint32()) // every class, NaNs included
		} else {
			fs[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(40)-25))) // the half range
		}
	}
	return fs
}

func checkFromFloat32(t *testing.T, variant string, src []float32) {
	t.Helper()
	dst := make([]uint16, len(src))
	fromFloat32.For(variant)(dst, src)
	for i, f := range src {
		if want := uint16(float16.Fromfloat32(f)); dst[i] != want {
			t.Fatalf("%s: %#08x narrowed to %#04x, x448 gives %#04x", variant, math.Float32bits(f), dst[i], want)
		}
	}
}

func TestFromFloat32EdgeClasses(t *testing.T) {
	special := make([]float32, len(specialFloats))
	for i, u := range specialFloats {
		special[i] = math.Float32frombits(u)
	}
	varianttest.Each(t, func(v string) {
		checkFromFloat32(t, v, special)
		checkFromFloat32(t, v, halfBoundaries())
	})
}

func TestFromFloat32Random(t *testing.T) {
	src := randomFloats(1 << 20)
	varianttest.Each(t, func(v string) {
		checkFromFloat32(t, v, src)
	})
}

// TestFromFloat32Exhaustive narrows all 2³² floats on every variant. It takes minutes,
// so it runs only when KVSIMD_EXHAUSTIVE=1.
func TestFromFloat32Exhaustive(t *testing.T) {
	if os.Getenv("KVSIMD_EXHAUSTIVE") != "1" {
		t.Skip("set KVSIMD_EXHAUSTIVE=1 to narrow all 2³² floats")
	}
	const chunk = 1 << 20
	varianttest.Each(t, func(v string) {
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
						if want := uint16(float16.Fromfloat32(f)); dst[i] != want {
							t.Errorf("%s: %#08x narrowed to %#04x, x448 gives %#04x", v, math.Float32bits(f), dst[i], want)
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
	})
}

// TestLengthsAndGuards runs every length up to a few unrolled vector widths at every
// start offset in a guarded buffer: the elements outside dst must survive and every
// element inside must be converted.
func TestLengthsAndGuards(t *testing.T) {
	const guard = 8
	halves := make([]uint16, 300+4)
	singles := make([]float32, len(halves))
	for i := range halves {
		halves[i] = uint16(uint64(i)*2654435761>>7) | 0x3000 // varied finite values
		singles[i] = float16.Frombits(halves[i]).Float32()*1.0001 + 1e-9
	}
	varianttest.Each(t, func(v string) {
		for n := 0; n <= 300; n++ {
			for off := 0; off < 4; off++ {
				wide := make([]float32, n+2*guard)
				for i := range wide {
					wide[i] = -7.5
				}
				toFloat32.For(v)(wide[guard:guard+n], halves[off:off+n])
				narrow := make([]uint16, n+2*guard)
				for i := range narrow {
					narrow[i] = 0xdead
				}
				fromFloat32.For(v)(narrow[guard:guard+n], singles[off:off+n])
				for i := range wide {
					inside := i >= guard && i < guard+n
					wantW, wantN := float32(-7.5), uint16(0xdead)
					if inside {
						wantW = float16.Frombits(halves[off+i-guard]).Float32()
						wantN = uint16(float16.Fromfloat32(singles[off+i-guard]))
					}
					if math.Float32bits(wide[i]) != math.Float32bits(wantW) || narrow[i] != wantN {
						t.Fatalf("%s n=%d off=%d: index %d (guard %d) got %v/%#04x, want %v/%#04x",
							v, n, off, i, guard, wide[i], narrow[i], wantW, wantN)
					}
				}
			}
		}
	})
}

func TestMismatchedLengthsPanic(t *testing.T) {
	require.PanicsWithValue(t, "fp16.ToFloat32: len(dst) = 3, len(src) = 4, want equal lengths", func() {
		ToFloat32(make([]float32, 3), make([]Float16, 4))
	})
	require.PanicsWithValue(t, "fp16.FromFloat32: len(dst) = 5, len(src) = 2, want equal lengths", func() {
		FromFloat32(make([]Float16, 5), make([]float32, 2))
	})
}

func TestNoAllocations(t *testing.T) {
	src, dst := make([]Float16, 1000), make([]float32, 1000)
	back := make([]Float16, 1000)
	varianttest.Run(t, func(t *testing.T, v string) {
		allocs := testing.AllocsPerRun(10, func() {
			ToFloat32(dst, src)
			FromFloat32(back, dst)
		})
		require.Zero(t, allocs, fmt.Sprintf("%s allocates", v))
	})
}

// TestFollowsUse checks that the conversions switch with every other kernel: Use lives
// in package dispatch, which both fp16 and kernels register with, and which Each calls.
func TestFollowsUse(t *testing.T) {
	defer dispatch.Use(dispatch.Active())
	varianttest.Each(t, func(v string) {
		require.Equal(t, reflect.ValueOf(toFloat32.For(v)).Pointer(), reflect.ValueOf(toFloat32.Call).Pointer(), v)
		require.Equal(t, reflect.ValueOf(fromFloat32.For(v)).Pointer(), reflect.ValueOf(fromFloat32.Call).Pointer(), v)
	})
	require.NoError(t, dispatch.Use(dispatch.Generic))
	require.Equal(t, reflect.ValueOf(toFloat32Generic).Pointer(), reflect.ValueOf(toFloat32.Call).Pointer())
}
