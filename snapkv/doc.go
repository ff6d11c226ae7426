// Package snapkv owns SnapKV KV-cache eviction (Li et al., "SnapKV: LLM Knows What You
// Are Looking for Before Generation", arXiv:2404.14469) for one layer at a time: which
// prompt rows of each KV head to keep, judged by the attention that the last W prompt
// positions (the observation window) pay to them, and the compressed cache that holds
// the kept rows with their original positions. It is built from package kernels.
//
// Selection ([Select], [Selector]) runs, for each KV head:
//
//	s = Scale·Scores(Qwin, K)      W×L, never L×L; or Input.Attn; or K's last W rows as queries (Scale 0: 1/√Dim)
//	p = causal Softmax(s) per row  fp32; row r (position L−W+r) sees columns 0..L−W+r
//	v = Σ_rows p, reduced over G   window sum per query head, then the group's mean|max|sum
//	u = Pool(v, Kernel)            avg (zero padding counted) or max; over [0, L−W) or [0, L)
//	t = TopK(u between protected)  C − protected rows; ties to the lower position, NaN lowest
//	keep = sinks ∪ t ∪ window      ascending []int32 positions
//
// With G = QHeads/KVHeads, query head j belongs to KV head j/G (query heads hG …
// hG+G−1 share KV head h), as in Hugging Face's repeat_kv and llama.cpp: in Q, Attn
// and the cache's decode queries, the G query heads of a KV head are adjacent.
//
// The cache ([Cache], one layer of one sequence) runs that selection for an engine:
//
//	c, _ := NewCache(CacheConfig{Select: cfg, QHeads: hq, KVHeads: hkv, Dim: d, Reserve: 64})
//	c.Prefill(Chunk{K: k, V: v, Q: qWindow, Last: true}) // or several chunks, the last marked
//	k, v, pos := c.Head(h)                                // kept rows and their true positions
//	c.Append(kTok, vTok)                                  // decode rows (evicted only under CacheConfig.Decode)
//	rope(q, c.Offset())                                   // prompt length + decoded, not rows
//
// A server decoding many sequences of a layer at once attends them in one call with
// [BatchOf.Attend], each sequence's output the bits of its own Cache.Attend.
//
// ModeDense keeps every row, with no selection and no window queries, behind the same
// calls, so an engine switches between a full and a compressed cache by configuration
// ([ModeDense]). Every cache can be [CacheOf.Reset] for the next request in the same
// storage, rolled back with [CacheOf.Truncate] (speculative decoding's rejected tokens;
// an error naming the rows where an eviction already dropped one it would need), and
// forked with [CacheOf.Clone]; [LayersOf] has the three for all its layers.
//
// ModeFaithful selects once, when the Last chunk arrives, and equals a one-shot Select;
// ModeBounded re-applies the budget after every chunk so a head never holds more than
// Budget + one chunk. Per-layer budgets come from [PyramidBudgets] or the engine's own
// schedule: one Config per layer. [LayersOf] holds one sequence's caches for every layer
// of a model, with those budgets, and can select every layer from shared votes: the
// window attention of chosen layers, averaged, once their windows have all arrived.
//
// # Cache formats
//
// Keys (and the cache's K and V) come in the format the engine keeps its cache in, an
// [Element]: fp16 halves, bfloat16 (a bf16 model's dtype) or ggml's q8_0 blocks (32
// int8 values and an fp16 scale in 34 bytes, llama.cpp's --cache-type-k q8_0). The
// types are generic over it, and their fp16 instantiations keep their old names:
//
//	Input    = InputOf[fp16.Float16]      Selector = SelectorOf[fp16.Float16]
//	Chunk    = ChunkOf[fp16.Float16]      Cache    = CacheOf[fp16.Float16]
//	Select(cfg, in) infers the format from in; NewSelectorOf[E], NewCacheOf[E] name it
//
// Why generic with aliases: fp16 code (engines, examples, bench/llama) compiles
// unchanged; an engine holds one format per cache, known at compile time, so the
// format is a type rather than a field checked at run time; and all four formats run
// one code path, which chooses the format's kernel only where keys are read or rows
// copied (kernels.ScoresStrided, ScoresStridedBF16, ScoresStridedQ8 or
// ScoresStridedF32; GatherRows and its twins; the key proxy's widening,
// fp16.ToFloat32, bf16.ToFloat32, q8.Dequantize or a copy).
//
// A q8_0 row of Dim values is Dim/32 blocks along each head's row, and Dim must be a
// multiple of 32 (an error otherwise): wherever this documentation says
// [KVHeads][Len][Dim] values, a q8_0 slice holds KVHeads·Len·Dim/32 blocks,
// [KVHeads][Len][Dim/32 blocks] head-major or [Len][KVHeads][Dim/32 blocks] token-major, and Head
// returns [rows][Dim/32 blocks]. Queries and attention stay float32.
//
// The selection depends on the keys' values only. Each format's Scores kernel gives
// the same bits as the fp16 kernel on the same variant for the same widened key values,
// and the rest of the pipeline is float32, so keys that two formats hold exactly
// select the same rows, bit for bit: fp16 keys of at most 8 significant bits select in
// bf16 as in fp16, and keys q·d with d a power of two and q an int8 select in q8_0 as
// in fp16. Otherwise the formats differ only by their rounding of the keys. [Stats]
// counts the format's bytes: a row of Dim values is Dim·2 bytes in fp16 and bf16 and
// Dim/32·34 in q8_0, so a q8_0 cache holds 17/32 of fp16's bytes for the same rows.
//
// # Decisions
//
// The zero value of each enum is the default: RulePaper (the authors' code), PoolAvg,
// GroupMean, AllocUniform, HeadMajor; Workers 0 means GOMAXPROCS. Budget (or
// KeepRatio), Window and Kernel have no hidden defaults; the paper's code uses Window
// 32 and Kernel 7 or 5 with average pooling.
//
// K and Q come head-major or token-major, as the engine keeps them ([Layout]); the
// selection is the same, bit for bit. QHeads and KVHeads are at most 1<<16: no model
// has more than a few hundred heads, and an absurd count is then an error rather than
// a loop or an allocation over it.
//
// Budget C counts every kept prompt row, sinks and window included. KeepRatio sets
// C = ⌈KeepRatio·Len⌉, at least 1, where a product within 1e-9 (relative) of an integer
// counts as that integer (0.1 of 30 rows keeps 3, not 4).
//
// RulePaper pools the votes of the prefix [0, L−W) alone (zero padding at both of its
// ends), keeps the top C−W of the prefix and appends the W window rows; Sinks must be
// 0. RuleProtected pools the votes of all L rows and keeps the first Sinks and the last
// W rows and the top C−Sinks−W of the rows between them, which is the PyTorch
// reference's "set the protected rows to +Inf after pooling, keep the top C" except
// that protected rows stay kept even when votes between them are +Inf.
//
// Pinned cases: Len ≤ C keeps every row (nothing is scored, the score source is not
// read); W is clamped to Len; when the protected rows fill the budget (Sinks + W ≥ C)
// the first min(Sinks, C) rows and then the most recent rows are kept. An empty prompt
// keeps nothing.
//
// The causal softmax of a window row runs over its visible columns only (the masked
// ones would be exact zeros); a row whose visible scores are all −Inf becomes uniform
// over them (see kernels.Softmax). Input.Attn is used as given: every column of every
// row is summed. The key proxy widens the last W key rows of each KV head to float32
// and uses them as that head's queries (a row sees itself), with G = 1. GroupMean is
// the group's sum times 1/G: within a layer it selects what GroupSum selects, up to
// rounding.
//
// AllocAdaptive (AdaKV) shares KVHeads·C rows among the layer's KV heads. With
// free = C − Sinks − W (Sinks = 0 under RulePaper), each head keeps its protected rows,
// its own top ⌊Floor·free⌋ rows (taken from its votes as they are, as AllocUniform
// takes its top), and whatever it wins of one top-(KVHeads·free) taken over the
// selectable pooled votes of all heads together, in which its own top rows count above
// every vote (a +Inf vote counts as math.MaxFloat32 there); ties go to the lower head,
// then the lower position. So the heads' rows sum to exactly KVHeads·C, each head keeps
// at least sinks + W + ⌊Floor·free⌋, and Floor 1 is the uniform budget. Votes are
// comparable across heads because every head's window rows are probability
// distributions. The pinned cases apply to every head alike.
//
// # Work and memory
//
// Everything is computed and stored at KV-head size, in float32 whatever the cache
// format: a group's G query heads are scored against their KV head's keys (as many
// whole windows per Scores call as fit the 64 query rows that the SIMD variants widen
// each key once for) and reduced into one vote row; nothing is repeated G times. K is
// read where it lies in either [Layout] and format, never copied or widened as a
// whole. A Selector's workspace holds one score block (at most max(W, 64)·L floats)
// per goroutine and the pooled votes of every head.
//
// A call scores its KV heads (all sequences' heads, for SelectBatch) on min(Workers,
// scored heads) goroutines: the caller's, and helpers that the call starts and waits
// for, each with a workspace that the Selector keeps for the next call; the top-k runs
// on the caller's goroutine. No goroutine runs between calls: a helper's last act is
// to tell the caller it is done, so none works past the call that started it (though
// runtime.NumGoroutine may count one for the moment it takes to return), and a
// dropped Selector or Cache leaves nothing running. A Selector is not safe for
// concurrent use; use one per goroutine.
//
// In steady state (same or smaller shapes, results passed back in) Select and
// SelectBatch allocate nothing between garbage collections: a helper's body is made
// once per Selector, and the runtime starts a goroutine from its free list. Until that
// list and kernels.TopK's pooled scratch have settled on every P (a few hundred calls,
// when helpers or the caller move between Ps), a call may allocate a few hundred
// bytes, and a collection empties TopK's sync.Pool, so the first calls after one
// allocate its scratch again. The one-call [Select] borrows a Selector from a
// sync.Pool (one per format) and allocates only its result: the positions, in one
// array, and the rows' headers. Between calls a Selector, a Cache and the pool keep no
// reference to a call's inputs (K, V, Q, Attn) or dst.
//
// # Errors and numerics
//
// Nothing in snapkv panics on user input but an index: [CacheOf.Head] with h outside
// [0, KVHeads) panics naming h, as a slice index would. Every bad shape or
// configuration (slice lengths against the declared dims, a chunk's stated Rows, QHeads not a multiple of KVHeads, an even or
// non-positive Kernel, a negative Budget, Window < 1, KeepRatio outside (0, 1] or NaN,
// both Q and Attn set, Sinks with RulePaper, an unknown Layout, more than 1<<16 heads,
// a Reserve beyond the int32 positions, dims whose product overflows int, a q8_0 Dim
// that is not a multiple of 32) returns an error that names the field and its value.
//
// The kept set is the exact top-k of the float32 votes. Against the same computation in
// float64 it can differ only between rows whose pooled votes are within the float32
// pipeline's rounding (about 1e-4 relative; the tests hold it to 2e-4 of the head's
// largest vote), and it matches the PyTorch reference vectors in testdata/snapkv-oracle.
package snapkv
