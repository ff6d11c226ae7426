// Package halftable owns the table of every fp16 bit pattern widened to float32, which
// the generic variants of fp16.ToFloat32 and of the kernels read: one load per element
// is 2–4× the speed of bit arithmetic with a branch for subnormals and NaNs
// (docs/performance.md, "The generic path"). It is built on first use, so programs that
// run a SIMD variant never pay for its 256 KiB.
package halftable

import (
	"sync"

	"github.com/x448/float16"
)

// Table returns the table: Table()[h] is half h as x448 widens it (exactly; NaNs
// quieted, their payload kept).
var Table = sync.OnceValue(func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for h := range t {
		t[h] = float16.Frombits(uint16(h)).Float32()
	}
	return &t
})
