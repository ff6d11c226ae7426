//go:build race

package snapkv_test

// raceEnabled: under the race detector sync.Pool (kernels.TopK's scratch) drops a
// quarter of what is put in it, on purpose, so steady state still allocates.
const raceEnabled = true
