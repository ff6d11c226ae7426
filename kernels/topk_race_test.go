//go:build race

package kernels

// raceEnabled: under the race detector sync.Pool drops a quarter of what is put in it,
// on purpose, so pooled scratch space is reallocated at random.
const raceEnabled = true
