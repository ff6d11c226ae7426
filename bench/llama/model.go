// Package llama is a tiny Llama-style decoder in pure Go, built from kvsimd's kernels
// the way an inference engine would use them: a KV cache in fp16 (the default), bf16 or
// ggml's q8_0 (see Format), the prompt's attention through the fused causal kernel
// (kernels.AttendCausal or its bf16 and q8_0 twins) over the stored rows, or through
// snapkv's PrefillAttend when the cache is compressed, each decoded token's through
// kernels.Attend, and SnapKV compression of every layer's cache after the prefill,
// selecting on the stored keys. It runs the passkey model of testdata/passkey-model (its README gives the exact
// math) and evaluates pass-key retention under KV-cache eviction against the PyTorch
// figures shipped beside it (results.json, and results-kvtypes.json per format).
//
// The format is a type parameter of the forward pass (engine[E]), not a branch per
// call: an engine keeps one format per cache and knows it when it builds the cache, as
// snapkv.CacheOf[E] does. codecOf is the one place where the element type picks its
// rounding and kernels; the exported API takes a Format value and instantiates the
// engine once per evaluation.
package llama

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Config is the model's hyper-parameters, as in config.json.
type Config struct {
	DModel      int     `json:"d_model"`
	Layers      int     `json:"n_layers"`
	QHeads      int     `json:"n_q_heads"`
	KVHeads     int     `json:"n_kv_heads"`
	HeadDim     int     `json:"head_dim"`
	FFNDim      int     `json:"ffn_dim"`
	Vocab       int     `json:"vocab_size"`
	Context     int     `json:"context"`
	RopeTheta   float64 `json:"rope_theta"`
	RopeLayout  string  `json:"rope_layout"`
	NormEps     float64 `json:"norm_eps"`
	Tied        bool    `json:"tied_embeddings"`
	ModelSHA256 string  `json:"model_sha256"`
}

// Model holds the float32 weights. Linear weights are [out][in], row-major.
type Model struct {
	Config
	embed  []float32 // [Vocab][DModel]
	norm   []float32 // [DModel]
	output []float32 // [Vocab][DModel]
	layers []layer
}

type layer struct {
	attnNorm, ffnNorm []float32 // [DModel]
	wq, wo            []float32 // [QHeads·HeadDim][DModel], [DModel][QHeads·HeadDim]
	wk, wv            []float32 // [KVHeads·HeadDim][DModel]
	w1, w3            []float32 // [FFNDim][DModel]: gate, up
	w2                []float32 // [DModel][FFNDim]: down
}

// Load reads config.json and model.safetensors from dir, checks the weights against the
// config's SHA-256 and every tensor's shape.
func Load(dir string) (*Model, error) {
	cb, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	var m Model
	if err := json.Unmarshal(cb, &m.Config); err != nil {
		return nil, fmt.Errorf("llama: config.json: %w", err)
	}
	if err := m.Config.validate(); err != nil {
		return nil, err
	}
	wb, err := os.ReadFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(wb)
	if got := hex.EncodeToString(sum[:]); got != m.ModelSHA256 {
		return nil, fmt.Errorf("llama: model.safetensors has SHA-256 %s, config.json says %s", got, m.ModelSHA256)
	}
	ts, err := parseSafetensors(wb)
	if err != nil {
		return nil, err
	}
	get := func(name string, shape ...int) []float32 {
		if err != nil {
			return nil
		}
		t, ok := ts[name]
		if !ok {
			err = fmt.Errorf("llama: model.safetensors has no tensor %q", name)
			return nil
		}
		if fmt.Sprint(t.shape) != fmt.Sprint(shape) {
			err = fmt.Errorf("llama: tensor %q has shape %v, want %v", name, t.shape, shape)
			return nil
		}
		return t.data
	}
	c := m.Config
	q, kv := c.QHeads*c.HeadDim, c.KVHeads*c.HeadDim
	m.embed = get("tok_embeddings.weight", c.Vocab, c.DModel)
	m.norm = get("norm.weight", c.DModel)
	m.output = get("output.weight", c.Vocab, c.DModel)
	m.layers = make([]layer, c.Layers)
	for i := range m.layers {
		p := fmt.Sprintf("layers.%d.", i)
		m.layers[i] = layer{
			attnNorm: get(p+"attention_norm.weight", c.DModel),
			wq:       get(p+"attention.wq.weight", q, c.DModel),
			wk:       get(p+"attention.wk.weight", kv, c.DModel),
			wv:       get(p+"attention.wv.weight", kv, c.DModel),
			wo:       get(p+"attention.wo.weight", c.DModel, q),
			ffnNorm:  get(p+"ffn_norm.weight", c.DModel),
			w1:       get(p+"feed_forward.w1.weight", c.FFNDim, c.DModel),
			w3:       get(p+"feed_forward.w3.weight", c.FFNDim, c.DModel),
			w2:       get(p+"feed_forward.w2.weight", c.DModel, c.FFNDim),
		}
	}
	if err != nil {
		return nil, err
	}
	return &m, nil
}

func (c Config) validate() error {
	switch {
	case c.DModel < 1 || c.Layers < 1 || c.HeadDim < 2 || c.HeadDim%2 != 0 || c.FFNDim < 1 || c.Vocab < 1 || c.Vocab > 256:
		return fmt.Errorf("llama: config: unsupported sizes %+v", c)
	case c.KVHeads < 1 || c.QHeads%c.KVHeads != 0:
		return fmt.Errorf("llama: config: n_q_heads %d is not a multiple of n_kv_heads %d", c.QHeads, c.KVHeads)
	case c.RopeLayout != "rotate_half":
		return fmt.Errorf("llama: config: rope_layout %q, want rotate_half", c.RopeLayout)
	case c.Tied:
		return fmt.Errorf("llama: config: tied embeddings are not supported")
	}
	return nil
}
