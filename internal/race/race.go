//go:build race

// Package race tells the race detector about the memory that assembly reads and
// writes, which it cannot see for itself. Without the race build tag every function
// here is an empty inline-able no-op.
package race

import (
	"runtime"
	"unsafe"
)

// Enabled is whether the race detector is on. Wrappers that must stay within the
// inlining budget test it around their calls: the inliner does not count a branch on a
// false constant.
const Enabled = true

// Read reports that s is read.
func Read[E any](s []E) {
	if len(s) > 0 {
		runtime.RaceReadRange(unsafe.Pointer(unsafe.SliceData(s)), len(s)*int(unsafe.Sizeof(s[0])))
	}
}

// Write reports that s is written.
func Write[E any](s []E) {
	if len(s) > 0 {
		runtime.RaceWriteRange(unsafe.Pointer(unsafe.SliceData(s)), len(s)*int(unsafe.Sizeof(s[0])))
	}
}
