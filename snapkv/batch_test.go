package snapkv_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/longtest"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
	"github.com/x448/float16"
)

// batchCache returns a cache of E holding n prompt rows per KV head (nothing evicted),
// with a decode budget if budget > 0, its rows drawn from seed: twins share a seed.
func batchCache[E snapkv.Element](t *testing.T, seed uint64, hq, hk, n, d, workers, budget int, layout snapkv.Layout) *snapkv.CacheOf[E] {
	t.Helper()
	cfg := snapkv.CacheConfig{
		Select: snapkv.Config{Budget: n, Window: 1, Kernel: 1, Workers: workers},
		QHeads: hq, KVHeads: hk, Dim: d, Reserve: 8, Layout: layout}
	if budget > 0 {
		cfg.Decode = snapkv.DecodeBudget{Budget: budget, Interval: 2, Rule: snapkv.DecodeH2O}
	}
	c, err := snapkv.NewCacheOf[E](cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 7))
	if err := c.Prefill(snapkv.ChunkOf[E]{K: batchRows[E](t, r, hk*n*d), V: batchRows[E](t, r, hk*n*d), Last: true}); err != nil {
		t.Fatal(err)
	}
	return c
}

// batchRows returns m values of E that every format holds exactly.
func batchRows[E snapkv.Element](t *testing.T, r *rand.Rand, m int) []E {
	h := make([]fp16.Float16, m)
	for i := range h {
		h[i] = float16.Fromfloat32(float32(r.NormFloat64()))
	}
	return keysAs[E](t, h)
}

// TestBatchAttend: a batch's outputs are each sequence's own Attend, bit for bit, and so
// are the rows each cache keeps after its decode-budget steps: sequences of different
// lengths and Workers (so that some heads are split into parts), a NaN query, every
// format and layout, on one goroutine or several.
func TestBatchAttend(t *testing.T) {
	t.Run("fp16", testBatchAttend[fp16.Float16])
	t.Run("bf16", testBatchAttend[bf16.BFloat16])
	t.Run("q8_0", testBatchAttend[q8.Block])
	t.Run("f32", testBatchAttend[float32])
}

func testBatchAttend[E snapkv.Element](t *testing.T) {
	const hq, hk, d = 8, 2, 64
	lengths := []int{1, 300, 2100, 40, 4100}
	if longtest.Short() { // the emulators: 2,100 rows split a head already
		lengths = lengths[:4]
	}
	for _, layout := range []snapkv.Layout{snapkv.HeadMajor, snapkv.TokenMajor} {
		for _, budget := range []int{0, 64} {
			for _, workers := range []int{1, 3} {
				var batched, alone []*snapkv.CacheOf[E]
				for s, n := range lengths {
					cw := []int{1, 2, 8}[s%3] // the caches' own Workers: 8 splits the long heads
					seed := uint64(100*s + budget + workers)
					batched = append(batched, batchCache[E](t, seed, hq, hk, n, d, cw, budget, layout))
					alone = append(alone, batchCache[E](t, seed, hq, hk, n, d, cw, budget, layout))
				}
				b := snapkv.BatchOf[E]{Workers: workers}
				r := rand.New(rand.NewPCG(uint64(workers), uint64(budget)))
				out, want, q := make([][]float32, len(lengths)), make([][]float32, len(lengths)), make([][]float32, len(lengths))
				for step := range 4 {
					for s := range lengths {
						k, v := batchRows[E](t, r, hk*d), batchRows[E](t, r, hk*d)
						for _, c := range []*snapkv.CacheOf[E]{batched[s], alone[s]} {
							if err := c.Append(k, v); err != nil {
								t.Fatal(err)
							}
						}
						q[s], out[s], want[s] = make([]float32, hq*d), make([]float32, hq*d), make([]float32, hq*d)
						for i := range q[s] {
							q[s][i] = float32(r.NormFloat64())
						}
						if s == 2 {
							q[s][3*d+1] = float32(math.NaN())
						}
						if err := alone[s].Attend(want[s], q[s]); err != nil {
							t.Fatal(err)
						}
					}
					if err := b.Attend(out, q, batched); err != nil {
						t.Fatal(err)
					}
					for s := range lengths {
						for i := range out[s] {
							if math.Float32bits(out[s][i]) != math.Float32bits(want[s][i]) {
								t.Fatalf("layout %d budget %d workers %d step %d: sequence %d out[%d] = %v, its Attend's %v",
									layout, budget, workers, step, s, i, out[s][i], want[s][i])
							}
						}
						for h := range hk {
							_, _, gotPos := batched[s].Head(h)
							_, _, wantPos := alone[s].Head(h)
							if !slicesEqual(gotPos, wantPos) {
								t.Fatalf("layout %d budget %d step %d: sequence %d head %d keeps %v, its Attend's cache %v", layout, budget, step, s, h, gotPos, wantPos)
							}
						}
					}
				}
			}
		}
	}
}

func slicesEqual(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestBatchAttendErrors: misuse is an error naming the sequence, before anything is
// attended; a cache is usable again after a refused batch.
func TestBatchAttendErrors(t *testing.T) {
	const hq, hk, d = 4, 2, 8
	a := batchCache[fp16.Float16](t, 1, hq, hk, 5, d, 1, 0, snapkv.HeadMajor)
	c := batchCache[fp16.Float16](t, 2, hq, hk, 7, d, 1, 0, snapkv.HeadMajor)
	fresh, err := snapkv.NewCache(snapkv.CacheConfig{Select: snapkv.Config{Budget: 4, Window: 1, Kernel: 1}, QHeads: hq, KVHeads: hk, Dim: d})
	if err != nil {
		t.Fatal(err)
	}
	vec := func() []float32 { return make([]float32, hq*d) }
	var b snapkv.Batch
	for _, tc := range []struct {
		out, q [][]float32
		caches []*snapkv.Cache
		want   string
	}{
		{[][]float32{vec()}, [][]float32{vec(), vec()}, []*snapkv.Cache{a, c}, "len(out) = 1, len(q) = 2, want len(caches) = 2"},
		{[][]float32{vec(), vec()}, [][]float32{vec(), vec()}, []*snapkv.Cache{a, nil}, "caches[1] is nil"},
		{[][]float32{vec(), vec()}, [][]float32{vec(), vec()[:3]}, []*snapkv.Cache{a, c}, "sequence 1: snapkv: Attend: len(q) = 3"},
		{[][]float32{vec(), vec()}, [][]float32{vec(), vec()}, []*snapkv.Cache{fresh, c}, "sequence 0: snapkv: Attend before the prompt ended"},
		{[][]float32{vec(), vec(), vec()}, [][]float32{vec(), vec(), vec()}, []*snapkv.Cache{a, c, a}, "caches[2] appears twice"},
	} {
		if err := b.Attend(tc.out, tc.q, tc.caches); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want an error containing %q, got %v", tc.want, err)
		}
	}
	out := [][]float32{vec(), vec()}
	if err := b.Attend(out, [][]float32{vec(), vec()}, []*snapkv.Cache{a, c}); err != nil {
		t.Fatalf("after the refused calls: %v", err)
	}
	if err := a.Attend(vec(), vec()); err != nil {
		t.Fatalf("a's own Attend after the refused calls: %v", err)
	}
}

// TestBatchAttendAllocs: once warm, a batch allocates nothing, and no goroutine
// outlives it.
func TestBatchAttendAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop the kernel's workspace at random")
	}
	const hq, hk, d = 4, 2, 32
	var caches []*snapkv.CacheOf[q8.Block]
	var out, q [][]float32
	for s, n := range []int{50, 3000, 700} {
		caches = append(caches, batchCache[q8.Block](t, uint64(s), hq, hk, n, d, 1+s, 0, snapkv.TokenMajor))
		out, q = append(out, make([]float32, hq*d)), append(q, make([]float32, hq*d))
	}
	before := runtime.NumGoroutine()
	for _, workers := range []int{1, 4} {
		b := snapkv.BatchOf[q8.Block]{Workers: workers}
		if a := steadyAllocs(50, func() { _ = b.Attend(out, q, caches) }); a != 0 {
			t.Errorf("workers %d: %v allocations per batch", workers, a)
		}
	}
	if after := settleGoroutines(before); after > before {
		t.Fatalf("%d goroutines before the batches, %d after", before, after)
	}
}

// BenchmarkBatchAttend: one decoded token for 64 sequences of 2,048 rows per KV head
// (Hkv 8, G 4, Dim 128, fp16, Workers 1), as one batch and as 64 Attend calls.
func BenchmarkBatchAttend(b *testing.B) {
	const seqs, hq, hk, n, d = 64, 32, 8, 2048, 128
	caches := make([]*snapkv.Cache, seqs)
	out, q := make([][]float32, seqs), make([][]float32, seqs)
	r := rand.New(rand.NewPCG(1, 2))
	rows := make([]fp16.Float16, hk*n*d)
	for i := range rows {
		rows[i] = float16.Fromfloat32(float32(r.NormFloat64()))
	}
	for s := range caches {
		c, err := snapkv.NewCache(snapkv.CacheConfig{
			Select: snapkv.Config{Budget: n, Window: 1, Kernel: 1, Workers: 1},
			QHeads: hq, KVHeads: hk, Dim: d, Reserve: 1})
		if err != nil {
			b.Fatal(err)
		}
		// Each sequence's rows start at another offset of one random buffer.
		k := append(rows[s*d:], rows[:s*d]...)
		if err := c.Prefill(snapkv.Chunk{K: k, V: k, Last: true}); err != nil {
			b.Fatal(err)
		}
		caches[s], out[s], q[s] = c, make([]float32, hq*d), make([]float32, hq*d)
		for i := range q[s] {
			q[s][i] = float32(r.NormFloat64())
		}
	}
	b.Run("batch", func(b *testing.B) {
		batch := snapkv.Batch{Workers: 1}
		for b.Loop() {
			if err := batch.Attend(out, q, caches); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("separate", func(b *testing.B) {
		for b.Loop() {
			for s, c := range caches {
				if err := c.Attend(out[s], q[s]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
