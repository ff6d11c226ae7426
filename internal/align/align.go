// Package align says where a slice of float32 meets the vector boundaries that the
// assembly wants its bodies to start on: a vector load or store that straddles a
// 64-byte cache line costs far more than the scalar work of a few elements (see
// kernels' asm_softmax_amd64.go for the figures).
package align

import "unsafe"

// Head returns how many leading elements of x precede its first boundary of lanes
// floats (lanes a power of two), or len(x) if x ends before it. It masks rather than
// divides, so that callers that pass lanes as a variable pay no division.
func Head(x []float32, lanes int) int {
	return min(len(x), int(-uintptr(unsafe.Pointer(unsafe.SliceData(x)))&uintptr(4*lanes-1)/4))
}
