package llama

import (
	"fmt"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// snapLayers builds a sequence's snapkv caches for every layer in format E
// (snapkv.LayersOf) and prefills each layer with its whole prompt in one Last chunk:
// k and v [layer][KVHeads][L][row] as stored, q [layer][QHeads][L][HeadDim] the window
// queries' source. It returns the layers' caches and their bytes right after
// compression (Stats' BytesAfter summed over layers, in the format's bytes). snapkv
// takes fp16, bf16 and q8_0 (snapkv.Element); the float32 cache has no SnapKV.
func snapLayers[E elem](cfg snapkv.LayersConfig, k, v [][]E, q [][]float32) ([]KVOf[E], int64, error) {
	var (
		caches []any
		bytes  int64
		err    error
	)
	switch k := any(k).(type) {
	case [][]fp16.Float16:
		caches, bytes, err = prefillLayers(cfg, k, any(v).([][]fp16.Float16), q)
	case [][]bf16.BFloat16:
		caches, bytes, err = prefillLayers(cfg, k, any(v).([][]bf16.BFloat16), q)
	case [][]q8.Block:
		caches, bytes, err = prefillLayers(cfg, k, any(v).([][]q8.Block), q)
	default:
		return nil, 0, fmt.Errorf("llama: snapkv keeps no %v cache", codecOf[E]().format)
	}
	if err != nil {
		return nil, 0, err
	}
	out := make([]KVOf[E], len(caches))
	for l, c := range caches {
		out[l] = c.(KVOf[E])
	}
	return out, bytes, nil
}

func prefillLayers[E snapkv.Element](cfg snapkv.LayersConfig, k, v [][]E, q [][]float32) ([]any, int64, error) {
	s, err := snapkv.NewLayersOf[E](cfg)
	if err != nil {
		return nil, 0, err
	}
	for l := range k {
		if err := s.Prefill(l, snapkv.ChunkOf[E]{K: k[l], V: v[l], Q: q[l], Last: true}); err != nil {
			return nil, 0, err
		}
	}
	out := make([]any, len(k))
	var bytes int64
	for l := range out {
		c := s.Layer(l)
		out[l] = c
		bytes += c.Stats().BytesAfter
	}
	return out, bytes, nil
}

// prefillSnap runs prompt through the model as an engine with compressed caches
// prefills it: each layer's rows and queries go to that layer's cache in s in one Last
// chunk, whose PrefillAttend also returns the layer's attention over them. s's caches
// take the prefill's head-major layout. In ModeFaithful the attention is the full
// cache's bit for bit (one kernels.AttendCausal call per KV head over the same rows),
// so the prefill is e.prefill's and the caches are what snapLayers builds from it.
func prefillSnap[E snapkv.Element](e *engine[E], prompt []byte, s *snapkv.LayersOf[E]) (*PrefillOf[E], error) {
	return e.prefillWith(prompt, func(l int, out, q []float32, k, v []E) error {
		return s.PrefillAttend(l, out, snapkv.ChunkOf[E]{K: k, V: v, Q: q, Last: true})
	})
}
