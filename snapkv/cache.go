package snapkv

// API SKELETON (coordinator): the cache. Bodies come from the cache branch.

import "github.com/kvsimd/kvsimd/fp16"

// Mode is how a Cache prefills.
type Mode int

const (
	// ModeFaithful keeps every prompt row until the chunk marked last arrives, then
	// selects once over the whole prompt: the result equals a one-shot prefill.
	ModeFaithful Mode = iota
	// ModeBounded re-applies the budget after every chunk (window = that chunk's last
	// rows), so the rows held never exceed budget + chunk length.
	ModeBounded
)

// CacheConfig configures one layer's cache.
type CacheConfig struct {
	Select  Config
	Mode    Mode
	QHeads  int
	KVHeads int
	Dim     int
}

// Chunk is a run of consecutive prompt positions for one layer: K and V
// [KVHeads][n][Dim] post-RoPE, and Q [QHeads][n][Dim], the queries of the same
// positions (only the last W rows of the prompt are read, so an engine may pass Q for
// the last min(n, W) rows only: [QHeads][min(n, W)][Dim]). Attn may replace Q as in Input.
type Chunk struct {
	K, V []fp16.Float16
	Q    []float32
	Attn []float32
	Last bool // the chunk that ends the prompt
}

// Cache is one layer's compressed KV cache: per KV head, the kept K and V rows and
// their original positions. Decode tokens are appended and never evicted.
type Cache struct{ cfg CacheConfig }

// NewCache validates cfg and returns an empty cache.
func NewCache(cfg CacheConfig) (*Cache, error) { return &Cache{cfg: cfg}, errNotYet }

// Prefill adds a chunk of prompt rows; with ch.Last it compresses (faithful mode).
func (c *Cache) Prefill(ch Chunk) error { return errNotYet }

// Append adds one decoded token's rows: k, v [KVHeads][Dim].
func (c *Cache) Append(k, v []fp16.Float16) error { return errNotYet }

// Head returns KV head h's rows: k, v [rows][Dim] and their positions, ascending. The
// slices alias the cache and stay valid until the next Prefill or Append.
func (c *Cache) Head(h int) (k, v []fp16.Float16, pos []int32) { return nil, nil, nil }

// Offset is the true next position: prompt length plus decoded tokens (RoPE needs it).
func (c *Cache) Offset() int { return 0 }

// Stats describes what the cache holds.
type Stats struct {
	TokensSeen    int     // prompt rows plus decoded tokens
	RowsKept      []int   // per KV head, decoded rows included
	BytesBefore   int64   // what the full cache would hold: TokensSeen·KVHeads·Dim·2·2
	BytesAfter    int64   // Σ_h RowsKept[h]·Dim·2·2 + 4·RowsKept[h]
	EvictionRatio float64 // 1 − rows kept / rows seen, over all heads
}

// Stats reports the cache's contents.
func (c *Cache) Stats() Stats { return Stats{} }
