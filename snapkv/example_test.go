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

// A Selector keeps its workspace between calls; here it shares a layer's budget
// between two KV heads (AdaKV). Head 0 attends to five positions only, head 1 evenly
// to all: head 0 keeps its floor and those five, head 1 takes the rest of the 2·20
// rows. The engine supplies the attention (Input.Attn) itself.
func ExampleSelector() {
	const n, window = 64, 4
	attn := make([]float32, 2*window*n) // [QHeads=2][W][Len]
	for j := 10; j < 15; j++ {
		attn[j] = 1.0 / 5 // head 0, window row 0
	}
	for j := range n {
		attn[window*n+j] = 1.0 / n // head 1, window row 0
	}
	s, err := snapkv.NewSelector(snapkv.Config{Budget: 20, Window: window, Kernel: 1,
		Alloc: snapkv.AllocAdaptive, Floor: 0.25})
	if err != nil {
		fmt.Println(err)
		return
	}
	var sel [][]int32 // reused by every call
	for range 3 {     // e.g. one call per layer
		if sel, err = s.Select(sel, snapkv.Input{Attn: attn, QHeads: 2, KVHeads: 2, Len: n}); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println(len(sel[0]), sel[0])
	fmt.Println(len(sel[1]), sel[1][:8], "…")
	// Output:
	// 9 [10 11 12 13 14 60 61 62 63]
	// 31 [0 1 2 3 4 5 6 7] …
}
