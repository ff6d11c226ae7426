package main

import "testing"

// BenchmarkReadL2 is the read loop that %L2 refers to, on the same 512 KiB buffer.
func BenchmarkReadL2(b *testing.B) {
	if peakRead == nil {
		b.Skip("no read loop in this build")
	}
	x := make([]float32, l2Floats)
	b.SetBytes(4 * l2Floats)
	for b.Loop() {
		peakRead(x, 1)
	}
}
