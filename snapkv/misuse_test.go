package snapkv_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// TestChunkRows: a chunk that states its row count has len(K) checked against it. A
// q8_0 chunk given Dim blocks per row instead of Dim/32 (the values, not the blocks)
// is taken as 32 times the tokens without Rows, and refused with it.
func TestChunkRows(t *testing.T) {
	const hq, hkv, d, n = 4, 2, 64, 10
	cfg := snapkv.CacheConfig{Select: snapkv.Config{Budget: 8, Window: 4, Kernel: 3, Pool: snapkv.PoolAvg},
		QHeads: hq, KVHeads: hkv, Dim: d}
	r := rand.New(rand.NewPCG(3, 4))
	right := randomRows[q8.Block](r, n*hkv*d/32)
	wrong := randomRows[q8.Block](r, n*hkv*d) // a block per value
	q := make([]float32, hq*4*d)

	newCache := func() *snapkv.CacheOf[q8.Block] {
		c, err := snapkv.NewCacheOf[q8.Block](cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := newCache()
	if err := c.Prefill(snapkv.ChunkOf[q8.Block]{K: wrong, V: wrong}); err != nil || c.Offset() != 32*n {
		t.Fatalf("without Rows: Prefill = %v, Offset %d, want the %d rows len(K) gives", err, c.Offset(), 32*n)
	}
	for _, tc := range []struct {
		rows int
		k    []q8.Block
		want string
	}{
		{n, wrong, fmt.Sprintf("snapkv: len(Chunk.K) = %d blocks, want Chunk.Rows·KVHeads·Dim/32 = %d·%d·%d = %d",
			len(wrong), n, hkv, d/32, len(right))},
		{n + 1, right, "Chunk.Rows·KVHeads·Dim/32 = 11·2·2 = 44"},
		{-1, right, "snapkv: Chunk.Rows -1 is negative"},
	} {
		c := newCache()
		err := c.Prefill(snapkv.ChunkOf[q8.Block]{K: tc.k, V: tc.k, Q: q, Rows: tc.rows, Last: true})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Rows %d, len(K) %d: Prefill = %v, want an error containing %q", tc.rows, len(tc.k), err, tc.want)
		}
		if c.Offset() != 0 {
			t.Errorf("Rows %d: the refused chunk moved Offset to %d", tc.rows, c.Offset())
		}
	}
	c = newCache()
	if err := c.Prefill(snapkv.ChunkOf[q8.Block]{K: right, V: right, Q: q, Rows: n, Last: true}); err != nil || c.Offset() != n {
		t.Errorf("Rows %d with a K of %d rows: Prefill = %v, Offset %d", n, n, err, c.Offset())
	}

	// fp16, token-major: the same check, in values.
	tm := cfg
	tm.Layout = snapkv.TokenMajor
	c16, err := snapkv.NewCache(tm)
	if err != nil {
		t.Fatal(err)
	}
	k16 := make([]fp16.Float16, n*hkv*d)
	want := fmt.Sprintf("snapkv: len(Chunk.K) = %d, want Chunk.Rows·KVHeads·Dim = 12·2·64 = 1536", len(k16))
	if err := c16.Prefill(snapkv.Chunk{K: k16, V: k16, Rows: 12}); err == nil || err.Error() != want {
		t.Errorf("fp16 token-major: Prefill = %v, want %q", err, want)
	}
}

// TestStatsNoAllocations: Stats allocates nothing, before the prompt ends and after,
// and its RowsKept is the cache's own slice, rewritten by the next call.
func TestStatsNoAllocations(t *testing.T) {
	const hq, hkv, d, n = 4, 2, 32, 40
	cfg := snapkv.CacheConfig{Select: snapkv.Config{Budget: 8, Window: 4, Kernel: 3, Pool: snapkv.PoolAvg},
		QHeads: hq, KVHeads: hkv, Dim: d, Reserve: 4}
	c, err := snapkv.NewCache(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	k := randomRows[fp16.Float16](r, n*hkv*d)
	q := make([]float32, hq*4*d)
	var st snapkv.Stats
	stats := func() { st = c.Stats() }
	if err := c.Prefill(snapkv.Chunk{K: k, V: k, Q: q}); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(100, stats); a != 0 {
		t.Errorf("Stats before the prompt ended: %v allocations per call, want 0", a)
	}
	if st.RowsKept[0] != n {
		t.Errorf("RowsKept %v before the prompt ended, want %d per head", st.RowsKept, n)
	}
	if err := c.Prefill(snapkv.Chunk{Last: true}); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(100, stats); a != 0 {
		t.Errorf("Stats after the prompt: %v allocations per call, want 0", a)
	}
	first := c.Stats().RowsKept
	if err := c.Append(k[:hkv*d], k[:hkv*d]); err != nil {
		t.Fatal(err)
	}
	if c.Stats(); first[0] != cfg.Select.Budget+1 {
		t.Errorf("RowsKept after an Append = %v, want %d rows per head in the slice an earlier Stats returned", first, cfg.Select.Budget+1)
	}
}

// panicValue is what call panics with, nil if it returns.
func panicValue(call func()) (v any) {
	defer func() { v = recover() }()
	call()
	return nil
}
