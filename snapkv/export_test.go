package snapkv

// PooledVotes returns the pooled votes of every head that s's last call scored, so
// that tests can compare them bit for bit.
func PooledVotes[E Element](s *SelectorOf[E]) []float32 { return s.pooled }
