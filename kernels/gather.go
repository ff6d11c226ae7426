package kernels

import (
	"fmt"
	"math"

	"github.com/kvsimd/kvsimd/internal/dispatch"
)

// gatherRows has no SIMD variant: a copy per row runs at memmove speed, and the gather's
// cost is the cache misses of rows scattered through src, not the copying (see the
// GatherRows benchmark in ./bench, which compares it with one contiguous copy of the
// same bytes).
var gatherRows = dispatch.New(gatherRowsGeneric)

// GatherRows copies the rows of src named by idx, in idx's order, into dst. src and dst
// are row-major with dim elements per row; row r of src is src[r*dim : (r+1)*dim].
//
//	for i, r := range idx {
//		copy(dst[i*dim:(i+1)*dim], src[int(r)*dim:(int(r)+1)*dim])
//	}
//
// Rows are copied bit for bit: NaN payloads, signed zeros and subnormals are kept. idx
// need not be sorted and may repeat a row. It panics, before writing anything, if
// dim < 1, len(idx)·dim overflows int, len(dst) != len(idx)·dim, len(src) is not a
// multiple of dim, or an index lies outside [0, len(src)/dim). dst must not overlap
// src. GatherRows does not allocate.
func GatherRows(dst, src []Float16, idx []int32, dim int) {
	if dim < 1 {
		panic(fmt.Sprintf("kernels.GatherRows: dim = %d, want ≥ 1", dim))
	}
	if len(idx) > math.MaxInt/dim {
		panic(fmt.Sprintf("kernels.GatherRows: len(idx)·dim = %d·%d overflows int", len(idx), dim))
	}
	if len(dst) != len(idx)*dim || len(src)%dim != 0 {
		panic(fmt.Sprintf("kernels.GatherRows: len(dst) = %d, len(src) = %d for len(idx) = %d, dim = %d; want len(dst) = len(idx)·dim and len(src) a multiple of dim",
			len(dst), len(src), len(idx), dim))
	}
	rows := len(src) / dim
	for i, r := range idx {
		if r < 0 || int(r) >= rows {
			panic(fmt.Sprintf("kernels.GatherRows: idx[%d] = %d outside the %d rows of src", i, r, rows))
		}
	}
	gatherRows.Call(dst, src, idx, dim)
}
