//go:build !race

package race

// Enabled is whether the race detector is on.
const Enabled = false

// Read reports that s is read; a no-op without the race build tag.
func Read[E any](s []E) {}

// Write reports that s is written; a no-op without the race build tag.
func Write[E any](s []E) {}
