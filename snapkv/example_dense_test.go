package snapkv_test

import (
	"fmt"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/snapkv"
)

// ExampleCacheOf_Truncate keeps every row (ModeDense: no selection, no window queries),
// appends three draft tokens of a speculative decoder, rolls back the two the model
// rejected, forks the sequence with Clone and starts another one with Reset. Setting
// Mode to ModeFaithful and a Select budget makes the same calls run a compressed cache.
func ExampleCacheOf_Truncate() {
	const qHeads, kvHeads, dim = 2, 1, 4
	c, err := snapkv.NewCache(snapkv.CacheConfig{Mode: snapkv.ModeDense, QHeads: qHeads, KVHeads: kvHeads, Dim: dim, Reserve: 8})
	if err != nil {
		panic(err)
	}
	row := func(x float32) []fp16.Float16 { // one position's K or V rows, [KVHeads][Dim]
		r, f := make([]fp16.Float16, kvHeads*dim), make([]float32, kvHeads*dim)
		for i := range f {
			f[i] = x
		}
		fp16.FromFloat32(r, f)
		return r
	}
	prompt := make([]fp16.Float16, 0, 5*kvHeads*dim)
	for p := range 5 {
		prompt = append(prompt, row(float32(p))...)
	}
	if err := c.Prefill(snapkv.Chunk{K: prompt, V: prompt, Last: true}); err != nil { // no Q: nothing is scored
		panic(err)
	}
	for d := range 3 { // the draft's tokens at positions 5, 6, 7
		if err := c.Append(row(float32(5+d)), row(float32(5+d))); err != nil {
			panic(err)
		}
	}
	if err := c.Truncate(6); err != nil { // the model accepted the first draft token only
		panic(err)
	}
	fork := c.Clone() // another continuation of the same six positions
	if err := fork.Append(row(9), row(9)); err != nil {
		panic(err)
	}
	_, _, pos := c.Head(0)
	_, _, forked := fork.Head(0)
	fmt.Println("kept:", pos, "offset", c.Offset())
	fmt.Println("fork:", forked, "offset", fork.Offset())
	c.Reset() // the next request, in the same storage
	fmt.Println("after Reset: offset", c.Offset(), "rows", c.Stats().RowsKept)
	// Output:
	// kept: [0 1 2 3 4 5] offset 6
	// fork: [0 1 2 3 4 5 6] offset 7
	// after Reset: offset 0 rows [0]
}
