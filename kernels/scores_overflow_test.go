package kernels

import (
	"math"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/kvsimd/kvsimd/q8"
)

// TestScoresUnscaledOverflow: an entry whose unscaled float32 sum overflows while
// scale·Σ in float64 is finite must come back as that float64 value, rounded, on every
// variant and in every format: the shortcut that skips settling must count the sum
// before it is scaled, not only the scaled value (a second robustness audit found bf16
// keys near float32's limit with |scale| < 1 returning +Inf). fp16 and q8_0 keys reach
// it too, with queries large enough.
func TestScoresUnscaledOverflow(t *testing.T) {
	mBF16 := math.Float32frombits(0x7f7f << 16) // the largest finite bfloat16, ≈ 3.39e38
	type block struct {
		q, k                 []float32 // k's values, exactly representable in the format
		rows, n, dim, stride int
		scale                float32
	}
	fill := func(n int, v float32) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = v
		}
		return s
	}
	// Two keys of dim 4 that cancel (M, M, −M, −M: the float32 sum overflows at M+M,
	// float64 gives 0) beside one that does not overflow at all.
	cancel := append([]float32{mBF16, mBF16, -mBF16, -mBF16}, 1, 2, 3, 4)
	// The same two keys, 8 elements apart (a token-major cache of two KV heads).
	cancelStrided := append(append([]float32{mBF16, mBF16, -mBF16, -mBF16}, fill(4, 7)...), 1, 2, 3, 4)
	bf16Cases := map[string]block{
		"cancelling keys": {q: fill(4, 1), k: cancel, rows: 1, n: 2, dim: 4, stride: 4, scale: 0x1p-10},
		"strided":         {q: fill(8, 1), k: cancelStrided, rows: 2, n: 2, dim: 4, stride: 8, scale: 0x1p-10},
		// dim 128, keys all M, q 0.01, scale 1/√128: float64 gives ≈ 3.8e37.
		"large keys": {q: fill(128, 0.01), k: fill(128, mBF16), rows: 1, n: 1, dim: 128, stride: 128,
			scale: float32(1 / math.Sqrt(128))},
	}
	// fp16 keys at 65504 and q8_0 keys at 127·65504 overflow an unscaled sum only with
	// queries whose ‖q‖² itself overflows, which also skips the shortcut: these hold
	// that path.
	f16Case := block{q: fill(64, 1e36), k: fill(64, 65504), rows: 1, n: 1, dim: 64, stride: 64, scale: 0x1p-20}
	q8Case := block{q: fill(32, 1e33), k: fill(32, 127*65504), rows: 1, n: 1, dim: 32, stride: 32, scale: 0x1p-16}

	// want is scale·Σ q·k in float64, rounded to float32: the doc's settled value.
	want := func(c block) []float32 {
		w := make([]float32, c.rows*c.n)
		for i := range c.rows {
			for j := range c.n {
				var s float64
				for d := range c.dim {
					s += float64(c.q[i*c.dim+d]) * float64(c.k[j*c.stride+d])
				}
				w[i*c.n+j] = float32(float64(c.scale) * s)
			}
		}
		return w
	}
	check := func(t *testing.T, variant, kernel string, got, want []float32) {
		t.Helper()
		for e := range want {
			if math.Float32bits(got[e]) != math.Float32bits(want[e]) {
				t.Errorf("%s: %s entry %d = %g, want %g (scale·Σ in float64)", variant, kernel, e, got[e], want[e])
			}
		}
	}
	for name, c := range bf16Cases {
		k := make([]bf16.BFloat16, len(c.k))
		bf16.FromFloat32(k, c.k)
		for i := range k {
			if k[i].Float32() != c.k[i] {
				t.Fatalf("%s: key %g is not a bfloat16", name, c.k[i])
			}
		}
		varianttest.Each(t, func(v string) {
			dst := make([]float32, c.rows*c.n)
			if c.stride == c.dim {
				ScoresBF16(dst, c.q, k, c.rows, c.n, c.dim, c.scale)
				check(t, v, "ScoresBF16 "+name, dst, want(c))
			}
			clear(dst)
			ScoresStridedBF16(dst, c.q, k, c.rows, c.n, c.dim, c.stride, c.scale)
			check(t, v, "ScoresStridedBF16 "+name, dst, want(c))
		})
	}

	k16 := make([]fp16.Float16, len(f16Case.k))
	fp16.FromFloat32(k16, f16Case.k)
	blocks := make([]q8.Block, len(q8Case.k)/q8.BlockLen)
	q8.Quantize(blocks, q8Case.k)
	values := make([]float32, len(q8Case.k))
	q8.Dequantize(values, blocks)
	for i, x := range values {
		if x != q8Case.k[i] {
			t.Fatalf("q8_0 key %g dequantizes to %g", q8Case.k[i], x)
		}
	}
	varianttest.Each(t, func(v string) {
		dst := make([]float32, 1)
		Scores(dst, f16Case.q, k16, 1, 1, f16Case.dim, f16Case.scale)
		check(t, v, "Scores", dst, want(f16Case))
		ScoresStrided(dst, f16Case.q, k16, 1, 1, f16Case.dim, f16Case.dim, f16Case.scale)
		check(t, v, "ScoresStrided", dst, want(f16Case))
		ScoresQ8(dst, q8Case.q, blocks, 1, 1, q8Case.dim, q8Case.scale)
		check(t, v, "ScoresQ8", dst, want(q8Case))
		ScoresStridedQ8(dst, q8Case.q, blocks, 1, 1, q8Case.dim, q8Case.dim, q8Case.scale)
		check(t, v, "ScoresStridedQ8", dst, want(q8Case))
	})
}
