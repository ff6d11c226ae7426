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

// One prompt of 32 rows, one KV head shared by two query heads, under the choices a
// Config offers. The engine supplies the window's attention (Input.Attn, each row a
// causal probability distribution, in 32nds): query head 0 looks at position 6, a
// little at 0, 1 and 20; head 1 at 14, 15 and 20. Each line shows the KV head's kept
// positions: the window 28..31 and the prefix rows with the most (pooled) votes.
// Pooling spreads a peak over its neighbours (equal votes go to the lower position);
// the group's mean counts position 20, which both heads look at, above 15, which one
// looks at more; RuleProtected keeps the first Sinks rows whatever their votes.
func ExampleConfig() {
	const n, window = 32, 4
	attn := make([]float32, 2*window*n) // [QHeads=2][W][Len]
	for r := range window {
		h0, h1 := attn[r*n:][:n], attn[(window+r)*n:][:n]
		h0[0], h0[1], h0[6], h0[20], h0[n-window+r] = 4.0/32, 2.0/32, 16.0/32, 4.0/32, 6.0/32
		h1[14], h1[15], h1[20], h1[n-window+r] = 10.0/32, 7.0/32, 5.0/32, 10.0/32
	}
	in := snapkv.Input{Attn: attn, QHeads: 2, KVHeads: 1, Len: n}
	for _, c := range []struct {
		name string
		cfg  snapkv.Config
	}{
		{"paper, no pooling", snapkv.Config{Budget: 8, Window: window, Kernel: 1, Rule: snapkv.RulePaper}},
		{"paper, avg pool 3", snapkv.Config{Budget: 8, Window: window, Kernel: 3, Pool: snapkv.PoolAvg}},
		{"paper, max pool 3", snapkv.Config{Budget: 8, Window: window, Kernel: 3, Pool: snapkv.PoolMax}},
		{"protected, 2 sinks", snapkv.Config{Budget: 8, Window: window, Kernel: 1, Rule: snapkv.RuleProtected, Sinks: 2}},
		{"group mean", snapkv.Config{Budget: 7, Window: window, Kernel: 1, Group: snapkv.GroupMean}},
		{"group sum", snapkv.Config{Budget: 7, Window: window, Kernel: 1, Group: snapkv.GroupSum}},
		{"group max", snapkv.Config{Budget: 7, Window: window, Kernel: 1, Group: snapkv.GroupMax}},
		{"keep 20%, uniform", snapkv.Config{KeepRatio: 0.2, Window: window, Kernel: 1, Alloc: snapkv.AllocUniform, Workers: 1}},
	} {
		sel, err := snapkv.Select(c.cfg, in)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-19s %v\n", c.name+":", sel[0])
	}
	// Output:
	// paper, no pooling:  [6 14 15 20 28 29 30 31]
	// paper, avg pool 3:  [5 6 14 15 28 29 30 31]
	// paper, max pool 3:  [5 6 7 13 28 29 30 31]
	// protected, 2 sinks: [0 1 6 14 28 29 30 31]
	// group mean:         [6 14 20 28 29 30 31]
	// group sum:          [6 14 20 28 29 30 31]
	// group max:          [6 14 15 28 29 30 31]
	// keep 20%, uniform:  [6 14 20 28 29 30 31]
}

// PyramidBudgets spreads 64 rows per layer over 4 layers as PyramidKV does: the first
// layer keeps the most, the last perLayer/beta, and the layers' budgets sum to 4·64.
// Each layer then gets its own Config (or CacheConfig.Select) with that Budget.
func ExamplePyramidBudgets() {
	budgets, err := snapkv.PyramidBudgets(64, 4, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	sum := 0
	for _, b := range budgets {
		sum += b
	}
	fmt.Println(budgets, sum)
	cfgs := make([]snapkv.Config, len(budgets)) // one per layer
	for l, b := range budgets {
		cfgs[l] = snapkv.Config{Budget: b, Window: 8, Kernel: 5}
	}
	fmt.Println(cfgs[3].Budget)
	// Output:
	// [112 80 48 16] 256
	// 16
}

// SelectBatch selects for a batch of sequences of different lengths in one call,
// spreading sequences and KV heads over Config.Workers goroutines. Here neither Q nor
// Attn is given, so each KV head's last Window keys stand in for its queries (the key
// proxy, for wrappers that see only K and V): they share a direction with the keys at a
// few positions of each sequence, and those positions are kept beside the window.
func ExampleSelector_SelectBatch() {
	const dim, window = 4, 4
	keys := func(n int, marked ...int) []fp16.Float16 { // [KVHeads=2][n][Dim]
		f := make([]float32, 2*n*dim)
		for h := range 2 {
			for p := range n {
				row := f[(h*n+p)*dim:][:dim]
				row[1+p%3] = 1
				if p >= n-window {
					row[0] = 2 // the window's keys, the queries of the key proxy
				}
			}
			row := f[(h*n+marked[h])*dim:][:dim]
			row[0] = 4
		}
		k := make([]fp16.Float16, len(f))
		fp16.FromFloat32(k, f)
		return k
	}
	ins := []snapkv.Input{
		{K: keys(16, 3, 9), KVHeads: 2, Len: 16, Dim: dim},  // sequence 0: head 0 marks 3, head 1 marks 9
		{K: keys(24, 17, 5), KVHeads: 2, Len: 24, Dim: dim}, // sequence 1: 17 and 5
	}
	s, err := snapkv.NewSelector(snapkv.Config{Budget: 5, Window: window, Kernel: 1, Workers: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	var sel [][][]int32 // reused by every call
	if sel, err = s.SelectBatch(sel, ins); err != nil {
		fmt.Println(err)
		return
	}
	for i, heads := range sel {
		fmt.Println("sequence", i, heads)
	}
	// Output:
	// sequence 0 [[3 12 13 14 15] [9 12 13 14 15]]
	// sequence 1 [[17 20 21 22 23] [5 20 21 22 23]]
}
