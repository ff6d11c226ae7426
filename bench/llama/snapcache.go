package llama

import (
	"github.com/kvsimd/kvsimd/snapkv"
)

// snapLayers builds a sequence's snapkv caches for every layer in format E
// (snapkv.LayersOf) and prefills each layer with its whole prompt in one Last chunk:
// k and v [layer][KVHeads][L][row] as stored, q [layer][QHeads][L][HeadDim] the window
// queries' source. It returns the layers' caches and their bytes right after
// compression (Stats' BytesAfter summed over layers, in the format's bytes).
func snapLayers[E elem](cfg snapkv.LayersConfig, k, v [][]E, q [][]float32) ([]KVOf[E], int64, error) {
	s, err := snapkv.NewLayersOf[E](cfg)
	if err != nil {
		return nil, 0, err
	}
	for l := range k {
		if err := s.Prefill(l, snapkv.ChunkOf[E]{K: k[l], V: v[l], Q: q[l], Last: true}); err != nil {
			return nil, 0, err
		}
	}
	out := make([]KVOf[E], len(k))
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
