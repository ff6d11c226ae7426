package snapkv_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
	"github.com/x448/float16"
)

// attendCache returns a cache of E whose KV heads hold n prompt rows each (nothing
// evicted) and one decoded token, values normal, in layout.
func attendCache[E snapkv.Element](t *testing.T, r *rand.Rand, hq, hk, n, d, workers int, layout snapkv.Layout) *snapkv.CacheOf[E] {
	t.Helper()
	c, err := snapkv.NewCacheOf[E](snapkv.CacheConfig{
		Select: snapkv.Config{Budget: n + 1, Window: 1, Kernel: 1, Workers: workers},
		QHeads: hq, KVHeads: hk, Dim: d, Reserve: 1, Layout: layout})
	if err != nil {
		t.Fatal(err)
	}
	rows := func(m int) []E {
		h := make([]fp16.Float16, m*d)
		for i := range h {
			h[i] = float16.Fromfloat32(float32(r.NormFloat64()))
		}
		return keysAs[E](t, h) // values every format holds exactly
	}
	if err := c.Prefill(snapkv.ChunkOf[E]{K: rows(hk * n), V: rows(hk * n), Last: true}); err != nil {
		t.Fatal(err)
	}
	if err := c.Append(rows(hk), rows(hk)); err != nil {
		t.Fatal(err)
	}
	return c
}

// attendHeads is Attend's contract computed head by head with the kernel, as an
// engine would: query head j against KV head j/G.
func attendHeads[E snapkv.Element](c *snapkv.CacheOf[E], out, q []float32, hq, hk, d int) {
	g, scale := hq/hk, float32(1/math.Sqrt(float64(d)))
	for h := range hk {
		k, v, pos := c.Head(h)
		o, qh := out[h*g*d:(h+1)*g*d], q[h*g*d:(h+1)*g*d]
		switch k := any(k).(type) {
		case []fp16.Float16:
			kernels.Attend(o, qh, k, any(v).([]fp16.Float16), g, len(pos), d, scale)
		case []bf16.BFloat16:
			kernels.AttendBF16(o, qh, k, any(v).([]bf16.BFloat16), g, len(pos), d, scale)
		case []q8.Block:
			kernels.AttendQ8(o, qh, k, any(v).([]q8.Block), g, len(pos), d, scale)
		case []float32:
			kernels.AttendF32(o, qh, k, any(v).([]float32), g, len(pos), d, scale)
		}
	}
}

// TestCacheAttend: with one worker, or as many as KV heads, Cache.Attend is the
// kernel's bits head by head; with more workers than heads each head's rows are split
// and merged, within the kernel's bound of the one-call result (the rounding of the
// rescaled parts), and NaN rows stay NaN. Every format and layout.
func TestCacheAttend(t *testing.T) {
	t.Run("fp16", testCacheAttend[fp16.Float16])
	t.Run("bf16", testCacheAttend[bf16.BFloat16])
	t.Run("q8_0", testCacheAttend[q8.Block])
	t.Run("f32", testCacheAttend[float32])
}

func testCacheAttend[E snapkv.Element](t *testing.T) {
	r := rand.New(rand.NewPCG(31, 1))
	const hq, hk, d = 8, 2, 64
	for _, layout := range []snapkv.Layout{snapkv.HeadMajor, snapkv.TokenMajor} {
		for _, n := range []int{1, 300, 4100} {
			for _, workers := range []int{1, 2, 8} {
				c := attendCache[E](t, r, hq, hk, n, d, workers, layout)
				q := make([]float32, hq*d)
				for i := range q {
					q[i] = float32(r.NormFloat64())
				}
				q[3*d+5] = float32(math.NaN()) // query head 3 (KV head 0) sees NaN scores
				got, want := make([]float32, hq*d), make([]float32, hq*d)
				if err := c.Attend(got, q); err != nil {
					t.Fatal(err)
				}
				attendHeads(c, want, q, hq, hk, d)
				split := workers > hk && (n+1)/1024 > 1
				for i := range got {
					switch {
					case want[i] != want[i]:
						if got[i] == got[i] {
							t.Fatalf("layout %d n %d workers %d: out[%d] = %v, want NaN", layout, n, workers, i, got[i])
						}
					case !split:
						if got[i] != want[i] {
							t.Fatalf("layout %d n %d workers %d: out[%d] = %v, the kernel's %v", layout, n, workers, i, got[i], want[i])
						}
					default:
						// The values are below 6 in magnitude; the kernel's bound at n ≈ 4100
						// with its scores' error is below 1e-3 of that.
						if math.Abs(float64(got[i]-want[i])) > 6e-3 {
							t.Fatalf("layout %d n %d workers %d (split): out[%d] = %v, the one-call kernel's %v", layout, n, workers, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestCacheAttendErrors: misuse is an error naming the field, never a panic.
func TestCacheAttendErrors(t *testing.T) {
	c, err := snapkv.NewCache(snapkv.CacheConfig{Select: snapkv.Config{Budget: 4, Window: 1, Kernel: 1}, QHeads: 4, KVHeads: 2, Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Attend(make([]float32, 32), make([]float32, 32)); err == nil || !strings.Contains(err.Error(), "before the prompt ended") {
		t.Fatalf("Attend before the prompt: %v", err)
	}
	if err := c.Prefill(snapkv.Chunk{K: make([]fp16.Float16, 2*8*3), V: make([]fp16.Float16, 2*8*3), Last: true}); err != nil {
		t.Fatal(err)
	}
	if err := c.Attend(make([]float32, 32), make([]float32, 31)); err == nil || !strings.Contains(err.Error(), "len(q) = 31") {
		t.Fatalf("short q: %v", err)
	}
	if err := c.Attend(make([]float32, 33), make([]float32, 32)); err == nil || !strings.Contains(err.Error(), "len(out) = 33") {
		t.Fatalf("long out: %v", err)
	}
	out := make([]float32, 32)
	if err := c.Attend(out, make([]float32, 32)); err != nil {
		t.Fatal(err)
	}
}

// TestCacheAttendAllocs: once warm, Attend allocates nothing, with one goroutine, one
// per head, or a head split into parts.
func TestCacheAttendAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop the kernel's workspace at random")
	}
	r := rand.New(rand.NewPCG(31, 2))
	const hq, hk, d = 4, 2, 32
	for _, workers := range []int{1, 2, 6} {
		c := attendCache[q8.Block](t, r, hq, hk, 3000, d, workers, snapkv.TokenMajor)
		q, out := make([]float32, hq*d), make([]float32, hq*d)
		for i := range q {
			q[i] = float32(r.NormFloat64())
		}
		if a := steadyAllocs(50, func() { _ = c.Attend(out, q) }); a != 0 {
			t.Errorf("workers %d: %v allocations per Attend", workers, a)
		}
	}
}

// TestCacheAttendGoroutines: no helper outlives Attend.
func TestCacheAttendGoroutines(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 3))
	c := attendCache[fp16.Float16](t, r, 4, 2, 2100, 16, 16, snapkv.HeadMajor)
	q, out := make([]float32, 4*16), make([]float32, 4*16)
	before := runtime.NumGoroutine()
	for range 50 {
		if err := c.Attend(out, q); err != nil {
			t.Fatal(err)
		}
	}
	if after := settleGoroutines(before); after > before {
		t.Fatalf("%d goroutines before 50 Attend calls, %d after", before, after)
	}
}
