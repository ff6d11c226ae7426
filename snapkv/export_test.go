package snapkv

// PooledVotes returns the pooled votes of every head that s's last call scored, so
// that tests can compare them bit for bit.
func PooledVotes[E Element](s *SelectorOf[E]) []float32 { return s.pooled }

// AttendCausalOf is attendCausal, the kernel call PrefillAttend makes per KV head, for
// the tests' references.
func AttendCausalOf[E Element](out, q []float32, k, v []E, rows, m, n, dim int, scale float32) {
	attendCausal(out, q, k, v, rows, m, n, dim, scale)
}
