package snapkv_test

import (
	"errors"
	"fmt"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/snapkv"
)

// ExamplePagePool admits requests while their pages fit: two sequences share a pool of
// 10 pages of 4 rows; the second prompt does not fit beside the first, is refused with
// ErrPoolFull (the cache left as it was), and fits once the first sequence is released.
func ExamplePagePool() {
	const kvHeads, dim = 2, 4
	pool, err := snapkv.NewPagePool(snapkv.PagePoolConfig{Pages: 10, PageRows: 4})
	if err != nil {
		panic(err)
	}
	cfg := snapkv.CacheConfig{Mode: snapkv.ModeDense, QHeads: 2, KVHeads: kvHeads, Dim: dim, PagePool: pool}
	prompt := func(rows int) snapkv.Chunk { // rows positions of zeros, [KVHeads][rows][Dim]
		kv := make([]fp16.Float16, kvHeads*rows*dim)
		return snapkv.Chunk{K: kv, V: kv, Rows: rows, Last: true}
	}
	first, _ := snapkv.NewCache(cfg)
	second, _ := snapkv.NewCache(cfg)
	if err := first.Prefill(prompt(12)); err != nil { // 3 pages per KV head: 6
		panic(err)
	}
	err = second.Prefill(prompt(10)) // 3 more per KV head: 12 > 10
	fmt.Println("second refused:", errors.Is(err, snapkv.ErrPoolFull), "offset", second.Offset())
	fmt.Printf("%+v\n", pool.Stats())
	first.Release() // the first request is done: its pages go back
	if err := second.Prefill(prompt(10)); err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", pool.Stats())
	// Output:
	// second refused: true offset 0
	// {InUse:6 Free:4 HighWater:6 Pages:10}
	// {InUse:6 Free:4 HighWater:6 Pages:10}
}
