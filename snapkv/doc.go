// Package snapkv will own SnapKV one-shot prefill KV-cache eviction (Li et al.,
// "SnapKV: LLM Knows What You Are Looking for Before Generation", arXiv:2404.14469),
// built from package kernels: observation-window scoring, window sum, pooling, top-k
// per KV head under a budget, gather, and a cache that appends decode tokens and keeps
// each row's true position for RoPE. The exact semantics are in the project's design
// notes; nothing is implemented yet.
package snapkv
