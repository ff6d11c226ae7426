package snapkv

// API SKELETON (coordinator): budget schedules. Bodies come from the cache branch.

// PyramidBudgets returns per-layer budgets for layers layers whose mean is perLayer
// (PyramidKV: an arithmetic sequence from most rows in layer 0 to fewest in the last;
// beta sets the last layer to perLayer/beta). The sum is exactly perLayer·layers.
func PyramidBudgets(perLayer, layers int, beta float64) ([]int, error) { return nil, errNotYet }

