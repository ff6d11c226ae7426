//go:build !purego && !noasm

package fp16

import (
	"math"
	"testing"

	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/x448/float16"
)

func TestStreamMinOf(t *testing.T) {
	for _, c := range []struct{ family, l3, want int }{
		{0, 32 << 20, math.MaxInt},
		{0x19, 32 << 20, math.MaxInt},
		{0x1a, 32 << 20, 32<<20/6 + 1},
		{0x1a, 96 << 20, 96<<20/6 + 1},
	} {
		if got := streamMinOf(c.family, c.l3); got != c.want {
			t.Errorf("streamMinOf(%#x, %d) = %d, want %d", c.family, c.l3, got, c.want)
		}
	}
	if got, want := toFloat32StreamMin, streamMinOf(dispatch.AMDFamily(), dispatch.L3Bytes()); got != want {
		t.Errorf("toFloat32StreamMin = %d, want %d", got, want)
	}
}

// TestToFloat32Stream runs the avx512 variant with its non-temporal stores from every
// length on (toFloat32StreamMin = 0), whatever this CPU's family: every half, and
// every length up to 300 at every offset of dst within a vector, guards untouched.
func TestToFloat32Stream(t *testing.T) {
	defer func(m int) { toFloat32StreamMin = m }(toFloat32StreamMin)
	toFloat32StreamMin = 0
	varianttest.Each(t, func(v string) {
		if v != "avx512" {
			return
		}
		src := make([]uint16, 1<<16)
		for i := range src {
			src[i] = uint16(i)
		}
		const guard = 17
		for _, n := range []int{len(src), 4099} {
			for off := 0; off < 16; off += 5 {
				wide := make([]float32, n+2*guard)
				for i := range wide {
					wide[i] = -7.5
				}
				toFloat32.For(v)(wide[guard+off:guard+off+n], src[:n])
				for i := range wide {
					want := float32(-7.5)
					if j := i - guard - off; j >= 0 && j < n {
						want = float16.Frombits(src[j]).Float32()
					}
					if math.Float32bits(wide[i]) != math.Float32bits(want) {
						t.Fatalf("n=%d off=%d: index %d got %#08x, want %#08x", n, off, i, math.Float32bits(wide[i]), math.Float32bits(want))
					}
				}
			}
		}
		for n := 0; n <= 300; n++ {
			dst := make([]float32, n+1)
			toFloat32.For(v)(dst[1:], src[0x3c00:0x3c00+n])
			for j := range n {
				if dst[1+j] != float16.Frombits(src[0x3c00+j]).Float32() {
					t.Fatalf("n=%d: index %d got %v", n, j, dst[1+j])
				}
			}
		}
	})
}
