package kernels

import "fmt"

// The gathers have no SIMD variant and no dispatch table: each row is one copy, which
// the runtime's memmove already does with vector moves, and at SnapKV's shapes (a few
// thousand rows scattered through a prompt of several MiB) fetching the rows dominates
// the cost. The GatherRows benchmark in ./bench compares it with one contiguous copy of
// as many bytes, the floor no gather reaches. One generic body serves every element
// type (fp16, bf16, q8_0 blocks, float32).

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
	gatherRows("GatherRows", dst, src, idx, dim, 1)
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
	gatherRowsStrided("GatherRowsStrided", dst, src, idx, dim, stride, 1)
}

// gatherRows is GatherRows over elements of E that hold perElem values each (32 for
// q8_0 blocks): dim counts values and must be a multiple of perElem.
func gatherRows[E any](kernel string, dst, src []E, idx []int32, dim, perElem int) {
	if dim < 1 || dim%perElem != 0 {
		panic(fmt.Sprintf("kernels.%s: dim = %d, want ≥ 1%s", kernel, dim, valuesMultiple(perElem, "a multiple of")))
	}
	w := dim / perElem // elements per row
	checkGatherShape(kernel, len(dst), idx, dim, perElem)
	if len(src)%w != 0 {
		want := fmt.Sprint(dim)
		if perElem > 1 {
			want = fmt.Sprintf("%d%s = %d", dim, per(perElem), w)
		}
		panic(fmt.Sprintf("kernels.%s: len(src) = %d%s, want a multiple of dim%s = %s", kernel, len(src), blocks(perElem),
			per(perElem), want))
	}
	gatherChecked(kernel, dst, src, idx, len(src)/w, w, w)
}

// gatherRowsStrided is GatherRowsStrided over elements of E that hold perElem values
// each: dim and stride count values and must be multiples of perElem.
func gatherRowsStrided[E any](kernel string, dst, src []E, idx []int32, dim, stride, perElem int) {
	if dim < 1 || stride < dim || dim%perElem != 0 || stride%perElem != 0 {
		panic(fmt.Sprintf("kernels.%s: dim = %d, stride = %d, want 1 ≤ dim ≤ stride%s", kernel, dim, stride,
			valuesMultiple(perElem, "both multiples of")))
	}
	w, ws := dim/perElem, stride/perElem
	checkGatherShape(kernel, len(dst), idx, dim, perElem)
	rows := 0
	if len(src) >= w {
		rows = (len(src)-w)/ws + 1
	}
	gatherChecked(kernel, dst, src, idx, rows, w, ws)
}

// checkGatherShape panics unless dstLen == len(idx)·dim/perElem, without overflow.
func checkGatherShape(kernel string, dstLen int, idx []int32, dim, perElem int) {
	want, ok := mulSize(len(idx), dim/perElem)
	if !ok {
		panic(fmt.Sprintf("kernels.%s: len(idx)·dim%s overflows int for len(idx) = %d, dim = %d", kernel, per(perElem), len(idx), dim))
	}
	if dstLen != want {
		panic(fmt.Sprintf("kernels.%s: len(dst) = %d%s, want len(idx)·dim%s = %d·%d%s = %d", kernel, dstLen, blocks(perElem),
			per(perElem), len(idx), dim, per(perElem), want))
	}
}

// gatherChecked checks every index against the rows src holds, then copies rows of w
// elements that lie ws elements apart.
func gatherChecked[E any](kernel string, dst, src []E, idx []int32, rows, w, ws int) {
	for i, r := range idx {
		if r < 0 || int(r) >= rows {
			panic(fmt.Sprintf("kernels.%s: idx[%d] = %d outside the %d rows of src", kernel, i, r, rows))
		}
	}
	for i, r := range idx {
		copy(dst[i*w:(i+1)*w], src[int(r)*ws:][:w])
	}
}
