package llama

import (
	"fmt"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// snapCache builds one layer's snapkv cache in format E and prefills it with the whole
// prompt in one Last chunk: k and v [KVHeads][L][row] as stored, and the score source,
// the window queries q or the attention attn. It returns the cache and its bytes right
// after compression (Stats' BytesAfter, in the format's bytes). snapkv takes fp16, bf16
// and q8_0 (snapkv.Element); the float32 cache has no SnapKV.
func snapCache[E elem](cfg snapkv.CacheConfig, k, v []E, q, attn []float32) (KVOf[E], int64, error) {
	var (
		c     any
		bytes int64
		err   error
	)
	switch k := any(k).(type) {
	case []fp16.Float16:
		c, bytes, err = prefillSnap(cfg, k, any(v).([]fp16.Float16), q, attn)
	case []bf16.BFloat16:
		c, bytes, err = prefillSnap(cfg, k, any(v).([]bf16.BFloat16), q, attn)
	case []q8.Block:
		c, bytes, err = prefillSnap(cfg, k, any(v).([]q8.Block), q, attn)
	default:
		return nil, 0, fmt.Errorf("llama: snapkv keeps no %v cache", codecOf[E]().format)
	}
	if err != nil {
		return nil, 0, err
	}
	return c.(KVOf[E]), bytes, nil
}

func prefillSnap[E snapkv.Element](cfg snapkv.CacheConfig, k, v []E, q, attn []float32) (*snapkv.CacheOf[E], int64, error) {
	c, err := snapkv.NewCacheOf[E](cfg)
	if err != nil {
		return nil, 0, err
	}
	if err := c.Prefill(snapkv.ChunkOf[E]{K: k, V: v, Q: q, Attn: attn, Last: true}); err != nil {
		return nil, 0, err
	}
	return c, c.Stats().BytesAfter, nil
}
