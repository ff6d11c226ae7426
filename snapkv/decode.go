package snapkv

// afterAttend runs at the end of every Attend call, after the output is computed.
// The decode budget (issue 32) replaces it.
func (c *CacheOf[E]) afterAttend(q []float32) error { return nil }
