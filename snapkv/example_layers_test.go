package snapkv_test

import (
	"fmt"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/snapkv"
)

// ExampleLayers compresses a two-layer model's cache for one 12-token prompt, each
// layer keeping 4 rows: the last 2 (the window) and the 2 best of the rest. Layer 0's
// window queries look at position 3, layer 1's at position 7. With its own votes each
// layer keeps its own find (and position 0, the first of the equally voted rest); with
// shared votes both layers keep both finds. Selecting from layer 1's votes alone
// (VoteLayers) makes layer 0 keep what layer 1 found.
func ExampleLayers() {
	const layers, dim, prompt, window = 2, 16, 12, 2
	// Key t is the unit vector e_t; a window query 10·e_target attends to key target.
	keys := make([]fp16.Float16, prompt*dim)
	for t := range prompt {
		keys[t*dim+t] = 0x3c00 // 1.0
	}
	values := make([]fp16.Float16, prompt*dim)
	queries := func(target int) []float32 {
		q := make([]float32, window*dim) // one query head, the last 2 positions
		for r := range window {
			q[r*dim+target] = 10
		}
		return q
	}
	targets := []int{3, 7}

	for _, lc := range []snapkv.LayersConfig{
		{},
		{SharedVotes: true},
		{SharedVotes: true, VoteLayers: []int{1}},
	} {
		lc.Layers = layers
		lc.Cache = snapkv.CacheConfig{
			Select:  snapkv.Config{Budget: 4, Window: window, Kernel: 1, Rule: snapkv.RuleProtected},
			QHeads:  1,
			KVHeads: 1,
			Dim:     dim,
			Reserve: 8,
		}
		s, err := snapkv.NewLayers(lc)
		if err != nil {
			panic(err)
		}
		// An engine prefills layer by layer; with shared votes the layers select when
		// the last one's window has arrived.
		for l := range layers {
			if err := s.Prefill(l, snapkv.Chunk{K: keys, V: values, Q: queries(targets[l]), Last: true}); err != nil {
				panic(err)
			}
		}
		fmt.Printf("shared %v, vote layers %v:", lc.SharedVotes, lc.VoteLayers)
		for l := range layers {
			_, _, pos := s.Layer(l).Head(0)
			fmt.Printf(" layer %d keeps %v", l, pos)
		}
		fmt.Println()
	}
	// Output:
	// shared false, vote layers []: layer 0 keeps [0 3 10 11] layer 1 keeps [0 7 10 11]
	// shared true, vote layers []: layer 0 keeps [3 7 10 11] layer 1 keeps [3 7 10 11]
	// shared true, vote layers [1]: layer 0 keeps [0 7 10 11] layer 1 keeps [0 7 10 11]
}
