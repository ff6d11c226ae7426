package snapkv_test

import (
	"fmt"
	"slices"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/snapkv"
)

// An engine keeps a layer's keys token-major, one row of KVHeads·Dim values per
// position, in a buffer sized for the whole context, and has just prefilled a 12-row
// prompt. It selects from the buffer's first Len positions, a reslice: the keys are
// read where they lie. Its window queries come token-major too, [W][QHeads][Dim].
// Here KV head 0's queries look for position 3, KV head 1's for position 8; with a
// budget of 3 rows and a window of 2, each head keeps its row and the window. The
// same data head-major ([KVHeads][Len][Dim], [QHeads][W][Dim]) selects the same rows.
func ExampleLayout() {
	const kvHeads, qHeads, dim, context, n, window = 2, 4, 4, 64, 12, 2
	buffer := make([]float32, context*kvHeads*dim) // [context][KVHeads][Dim]
	for p := range n {
		for h := range kvHeads {
			buffer[(p*kvHeads+h)*dim+2+p%2] = 1 // orthogonal to the queries
		}
	}
	buffer[(3*kvHeads+0)*dim+0] = 4 // KV head 0, position 3
	buffer[(8*kvHeads+1)*dim+1] = 4 // KV head 1, position 8
	cache := make([]fp16.Float16, len(buffer))
	fp16.FromFloat32(cache, buffer)

	q := make([]float32, window*qHeads*dim) // [W][QHeads][Dim]
	for r := range window {
		for h := range qHeads {
			q[(r*qHeads+h)*dim+h/2] = 2 // query heads 0, 1 share KV head 0; 2, 3 KV head 1
		}
	}

	cfg := snapkv.Config{Budget: 3, Window: window, Kernel: 1}
	token := snapkv.Input{Q: q, K: cache[:n*kvHeads*dim], QHeads: qHeads, KVHeads: kvHeads, Len: n, Dim: dim, Layout: snapkv.TokenMajor}
	kept, err := snapkv.Select(cfg, token)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("token-major:", kept)

	head := snapkv.Input{Q: make([]float32, len(q)), K: make([]fp16.Float16, n*kvHeads*dim), QHeads: qHeads, KVHeads: kvHeads, Len: n, Dim: dim, Layout: snapkv.HeadMajor}
	for p := range n {
		for h := range kvHeads {
			copy(head.K[(h*n+p)*dim:(h*n+p+1)*dim], cache[(p*kvHeads+h)*dim:])
		}
	}
	for r := range window {
		for h := range qHeads {
			copy(head.Q[(h*window+r)*dim:(h*window+r+1)*dim], q[(r*qHeads+h)*dim:])
		}
	}
	same, err := snapkv.Select(cfg, head)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("head-major the same:", slices.EqualFunc(same, kept, slices.Equal))
	// Output:
	// token-major: [[3 10 11] [8 10 11]]
	// head-major the same: true
}

// A Cache takes an engine's token-major chunks as they are ([n][KVHeads][Dim]) and
// scatters them into its own head-major working area, so that Head still returns a
// head's rows contiguously. Here a 12-row prompt of two KV heads arrives in two chunks,
// with the key proxy as the score source (no queries): every key of KV head 0 looks
// most like position 3's, every key of KV head 1 like position 6's.
func ExampleCacheConfig_tokenMajor() {
	const kvHeads, dim, n = 2, 4, 12
	keys := make([]float32, n*kvHeads*dim) // [Len][KVHeads][Dim]
	for p := range n {
		for h := range kvHeads {
			keys[(p*kvHeads+h)*dim+h] = 1
		}
	}
	keys[(3*kvHeads+0)*dim+0] = 4
	keys[(6*kvHeads+1)*dim+1] = 4
	k := make([]fp16.Float16, len(keys))
	fp16.FromFloat32(k, keys)
	v := slices.Clone(k)

	c, err := snapkv.NewCache(snapkv.CacheConfig{
		Select: snapkv.Config{Budget: 3, Window: 2, Kernel: 1},
		QHeads: kvHeads, KVHeads: kvHeads, Dim: dim, Layout: snapkv.TokenMajor,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	row := kvHeads * dim
	for _, ch := range []snapkv.Chunk{{K: k[:7*row], V: v[:7*row]}, {K: k[7*row:], V: v[7*row:], Last: true}} {
		if err := c.Prefill(ch); err != nil {
			fmt.Println(err)
			return
		}
	}
	for h := range kvHeads {
		_, _, pos := c.Head(h)
		fmt.Println(h, pos)
	}
	// Output:
	// 0 [3 10 11]
	// 1 [6 10 11]
}
