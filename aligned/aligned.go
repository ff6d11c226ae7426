// Package aligned allocates slices whose first element starts on a 64-byte boundary:
// a cache line, and the width of an AVX-512 vector, so that the kernels' full-vector
// loads of such an operand never straddle two lines (see the README's alignment note
// and docs/performance.md, "Where a slice starts").
package aligned

import (
	"fmt"
	"unsafe"
)

// Boundary is the alignment of Make's slices, in bytes.
const Boundary = 64

// Make returns n zero elements of E, as make([]E, n) does, with the first starting on a
// Boundary; len and cap are n, so an append reallocates (without the alignment) rather
// than writing past them. It allocates up to Boundary−1 elements more and returns the
// aligned run in them. An element whose size is not a multiple of the allocation's
// alignment still gets its first element aligned (q8.Block's 34 bytes: the first
// block's bytes start on the boundary, the next ones 34 bytes apart). n = 0, or a
// zero-size E, gives make([]E, n). It panics if n is negative, as make does.
func Make[E any](n int) []E {
	if n < 0 {
		panic(fmt.Sprintf("aligned.Make: n = %d, want n ≥ 0", n))
	}
	var zero E
	size := unsafe.Sizeof(zero)
	if n == 0 || size == 0 {
		return make([]E, n)
	}
	s := make([]E, n+Boundary-1)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	for i := range Boundary {
		if (base+uintptr(i)*size)%Boundary == 0 {
			return s[i : i+n : i+n]
		}
	}
	// Unreachable for Go's allocations: they start on a multiple of 8 bytes, or of an
	// element smaller than 8 bytes, and i·size then reaches every such offset below 64.
	panic(fmt.Sprintf("aligned.Make: no element of %d bytes starts on a %d-byte boundary from %#x", size, Boundary, base))
}
