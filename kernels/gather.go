package kernels

import (
	"fmt"
	"math"

	"github.com/kvsimd/kvsimd/internal/dispatch"
)

// gatherRows has no SIMD variant: each row is one copy, which the runtime's memmove
// already does with vector moves, and at SnapKV's shapes (a few thousand rows scattered
// through a prompt of several MiB) fetching the rows dominates the cost. The GatherRows benchmark in ./bench compares it with one contiguous copy
// of as many bytes, the floor no gather reaches.
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
	checkGatherShape("GatherRows", dst, idx, dim)
	if len(src)%dim != 0 {
		panic(fmt.Sprintf("kernels.GatherRows: len(dst) = %d, len(src) = %d for len(idx) = %d, dim = %d; want len(dst) = len(idx)·dim and len(src) a multiple of dim",
			len(dst), len(src), len(idx), dim))
	}
	gatherRowsStrided("GatherRows", dst, src, idx, len(src)/dim, dim, dim)
}

// GatherRowsStrided is GatherRows from rows that lie stride ≥ dim elements apart: row r
// of src is src[r*stride : r*stride+dim], and the elements between rows are never read.
// It gathers one KV head's rows out of a token-major cache ([len][heads][dim]) where it
// lies, with src = cache[h*dim:] and stride = heads·dim.
//
//	for i, r := range idx {
//		copy(dst[i*dim:(i+1)*dim], src[int(r)*stride:int(r)*stride+dim])
//	}
//
// src holds the rows r with r·stride + dim ≤ len(src) (as in BLAS, the last row needs
// only its dim elements). It panics, before writing anything, if dim < 1, stride < dim,
// len(idx)·dim overflows int, len(dst) != len(idx)·dim, or an index names a row src
// does not hold. dst must not overlap src. GatherRowsStrided does not allocate.
func GatherRowsStrided(dst, src []Float16, idx []int32, dim, stride int) {
	if dim < 1 || stride < dim {
		panic(fmt.Sprintf("kernels.GatherRowsStrided: dim = %d, stride = %d, want 1 ≤ dim ≤ stride", dim, stride))
	}
	checkGatherShape("GatherRowsStrided", dst, idx, dim)
	rows := 0
	if len(src) >= dim {
		rows = (len(src)-dim)/stride + 1
	}
	gatherRowsStrided("GatherRowsStrided", dst, src, idx, rows, dim, stride)
}

// checkGatherShape panics unless len(dst) == len(idx)·dim, without overflow.
func checkGatherShape(kernel string, dst []Float16, idx []int32, dim int) {
	if len(idx) > math.MaxInt/dim {
		panic(fmt.Sprintf("kernels.%s: len(idx)·dim = %d·%d overflows int", kernel, len(idx), dim))
	}
	if len(dst) != len(idx)*dim {
		panic(fmt.Sprintf("kernels.%s: len(dst) = %d for len(idx) = %d, dim = %d; want len(idx)·dim", kernel, len(dst), len(idx), dim))
	}
}

// gatherRowsStrided checks every index against the rows src holds, then copies.
func gatherRowsStrided(kernel string, dst, src []Float16, idx []int32, rows, dim, stride int) {
	for i, r := range idx {
		if r < 0 || int(r) >= rows {
			panic(fmt.Sprintf("kernels.%s: idx[%d] = %d outside the %d rows of src", kernel, i, r, rows))
		}
	}
	gatherRows.Call(dst, src, idx, dim, stride)
}
