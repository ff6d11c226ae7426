package snapkv_test

import (
	"fmt"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/snapkv"
)

// A 16-row prompt with one KV head shared by two query heads: the window queries all
// look for the keys at positions 5 and 6. With a budget of 8 rows and a window of 4,
// SnapKV keeps the window (12..15) and the 4 prefix rows with the most pooled votes:
// the two it looks for and, through the pooling, their neighbours.
func ExampleSelect() {
	const n, dim, window = 16, 4, 4
	keys := make([]float32, n*dim) // [KVHeads=1][Len][Dim]
	for p := range n {
		keys[p*dim+1+p%3] = 1 // orthogonal to the queries
	}
	keys[5*dim], keys[6*dim] = 4, 4
	k := make([]fp16.Float16, len(keys))
	fp16.FromFloat32(k, keys)

	q := make([]float32, 2*window*dim) // [QHeads=2][W][Dim]
	for row := range 2 * window {
		q[row*dim] = 2
	}

	sel, err := snapkv.Select(
		snapkv.Config{Budget: 8, Window: window, Kernel: 3, Pool: snapkv.PoolAvg, Rule: snapkv.RulePaper},
		snapkv.Input{Q: q, K: k, QHeads: 2, KVHeads: 1, Len: n, Dim: dim})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sel[0])
	// Output: [4 5 6 7 12 13 14 15]
}
