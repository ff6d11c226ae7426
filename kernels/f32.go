package kernels

import (
	"sync"

	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/race"
)

// The float32 kernels are the fp16 ones over keys and values kept as float32, the
// cache of engines that keep their activations' type. Every variant's body performs
// the same float32 operations in the same order as its fp16 twin, its loads taking the
// values as they are where the twin widens halves: for keys or values that fp16 holds
// exactly, the float32 kernel gives the fp16 kernel's bits on the same variant. The
// error bounds are the fp16 twins'. A float32 value spans float32's range, so an entry
// can overflow where fp16's cannot; it is settled in float64 as the bf16 kernels'
// entries are. A float32 key's dot product is DotF32.

var (
	scoresF32          = dispatch.New(scoresF32Generic)
	weightedSumRowsF32 = dispatch.New(weightedSumRowsF32Generic)
	// scoresAheadF32 and weightedSumRowsAddF32 are the fused attention's steps, as
	// scoresAhead and weightedSumRowsAdd are fp16's.
	scoresAheadF32        = dispatch.New(ignoreAhead(scoresF32Generic))
	weightedSumRowsAddF32 = dispatch.New(weightedSumRowsAddF32Generic)
)

// ScoresF32 is [Scores] with float32 keys: dst[i*n+j] = scale·(q_i · k_j).
//
//	for i := 0; i < rows; i++ {
//		for j := 0; j < n; j++ {
//			var s float32
//			for d := 0; d < dim; d++ { s += q[i*dim+d] * k[j*dim+d] }
//			dst[i*n+j] = scale * s
//		}
//	}
//
// Its conditions, bound and settling of non-finite entries are Scores', and on each
// variant it gives Scores' bits for keys whose values are equal. An entry's unscaled
// sum can overflow where scale·Σ is finite, as ScoresBF16's can; it is settled in
// float64 to the finite value.
func ScoresF32(dst, q, k []float32, rows, n, dim int, scale float32) {
	checkScoresArgs("ScoresF32", dst, q, len(k), 1, rows, n, dim)
	scoresStridedF32(dst, q, k, nil, rows, n, dim, dim, scale)
}

// ScoresStridedF32 is [ScoresStrided] with float32 keys: key j is
// k[j*stride : j*stride+dim].
//
//	for i := 0; i < rows; i++ {
//		for j := 0; j < n; j++ {
//			var s float32
//			for d := 0; d < dim; d++ { s += q[i*dim+d] * k[j*stride+d] }
//			dst[i*n+j] = scale * s
//		}
//	}
//
// Its conditions are ScoresStrided's; its results are ScoresF32's.
func ScoresStridedF32(dst, q, k []float32, rows, n, dim, stride int, scale float32) {
	k = k[:checkScoresStridedArgs("ScoresStridedF32", dst, q, len(k), 1, rows, n, dim, stride)]
	scoresStridedF32(dst, q, k, nil, rows, n, dim, stride, scale)
}

func scoresStridedF32(dst, q, k, ahead []float32, rows, n, dim, stride int, scale float32) {
	if rows == 0 || n == 0 {
		return
	}
	race.Read(q)
	race.Read(k)
	race.Write(dst)
	scoresAheadF32.Call(dst, q, k, ahead, rows, n, dim, stride, scale)
	settleScores(dst, q, rowsF32{k, stride}, n, dim, scale, maxF32)
}

// WeightedSumRowsF32 is [WeightedSumRows] over float32 value rows: the attention
// output Σⱼ w[j]·V_j of one query.
//
//	for d := range dst { dst[d] = 0 }
//	for j := range w {
//		for d := range dst { dst[d] += w[j] * v[j*len(dst)+d] }
//	}
//
// Its conditions, bound and settling are WeightedSumRows', and on each variant it gives
// WeightedSumRows' bits for rows whose values are equal.
func WeightedSumRowsF32(dst, w, v []float32) {
	checkWeightedArgs("WeightedSumRowsF32", len(dst), len(w), len(v), 1)
	weightedSumRowsStridedF32(dst, w, v, len(dst))
}

// WeightedSumRowsStridedF32 is [WeightedSumRowsStrided] over float32 value rows: row j
// is v[j*stride : j*stride+len(dst)].
//
//	for d := range dst { dst[d] = 0 }
//	for j := range w {
//		for d := range dst { dst[d] += w[j] * v[j*stride+d] }
//	}
//
// Its conditions are WeightedSumRowsStrided's; its results are WeightedSumRowsF32's.
func WeightedSumRowsStridedF32(dst, w, v []float32, stride int) {
	v = v[:checkWeightedStridedArgs("WeightedSumRowsStridedF32", len(dst), len(w), len(v), 1, stride)]
	weightedSumRowsStridedF32(dst, w, v, stride)
}

func weightedSumRowsStridedF32(dst, w, v []float32, stride int) {
	race.Read(w)
	race.Read(v)
	race.Write(dst)
	weightedSumRowsF32.Call(dst, w, v, stride)
	settleWeightedSumRows(dst, w, rowsF32{v, stride})
}

// GatherRowsF32 is [GatherRows] for float32 rows: it copies the rows of src named by
// idx, in idx's order, into dst, bit for bit.
//
//	for i, r := range idx {
//		copy(dst[i*dim:(i+1)*dim], src[int(r)*dim:(int(r)+1)*dim])
//	}
//
// It panics as GatherRows does, before writing anything, and does not allocate.
func GatherRowsF32(dst, src []float32, idx []int32, dim int) {
	gatherRows("GatherRowsF32", dst, src, idx, dim, 1)
}

// GatherRowsStridedF32 is [GatherRowsStrided] for float32 rows: row r of src is
// src[r*stride : r*stride+dim].
//
//	for i, r := range idx {
//		copy(dst[i*dim:(i+1)*dim], src[int(r)*stride:int(r)*stride+dim])
//	}
//
// It panics as GatherRowsStrided does, before writing anything, and does not allocate.
func GatherRowsStridedF32(dst, src []float32, idx []int32, dim, stride int) {
	gatherRowsStrided("GatherRowsStridedF32", dst, src, idx, dim, stride, 1)
}

// AttendF32 is [Attend] over float32 keys and values, with ScoresF32 and
// WeightedSumRowsF32 in its composition; its bound is Attend's.
func AttendF32(out, q, k, v []float32, rows, n, dim int, scale float32) {
	checkAttendArgs("AttendF32", out, q, len(k), len(v), 1, rows, n, dim, dim, true)
	attend(&attendF32, out, q, k, v, rows, n, dim, dim, scale)
}

// AttendStridedF32 is [AttendStrided] over float32 keys and values.
func AttendStridedF32(out, q, k, v []float32, rows, n, dim, stride int, scale float32) {
	span := checkAttendArgs("AttendStridedF32", out, q, len(k), len(v), 1, rows, n, dim, stride, false)
	attend(&attendF32, out, q, k[:span], v[:span], rows, n, dim, stride, scale)
}

// AttendPartialF32 is [AttendPartial] over float32 keys and values.
func AttendPartialF32(st *AttendState, q, k, v []float32, n, stride int, scale float32) {
	checkPartialQueries("AttendPartialF32", st, q)
	span := checkAttendArgs("AttendPartialF32", st.acc, q, len(k), len(v), 1, st.rows, n, st.dim, stride, false)
	attendPartial(&attendF32, st, q, k[:span], v[:span], n, stride, scale)
}

// AttendHeadsF32 is [AttendHeads] over float32 keys and values: the loop of
// AttendStridedF32 calls.
func AttendHeadsF32(out, q, k, v []float32, heads, rows, n, dim int, scale float32) {
	checkAttendHeadsArgs("AttendHeadsF32", out, q, len(k), len(v), 1, heads, rows, n, dim)
	attendHeads(&attendF32, out, q, k, v, heads, rows, n, dim, scale)
}

// AttendPagedF32 is [AttendPaged] over float32 keys and values: AttendF32's bits.
func AttendPagedF32(out, q []float32, kPages, vPages [][]float32, rows, n, dim, pageRows int, scale float32) {
	checkAttendArgs("AttendPagedF32", out, q, 0, 0, 1, rows, 0, dim, dim, true)
	checkPages("AttendPagedF32", kPages, vPages, 1, n, dim, pageRows)
	attendPaged(&pagedF32, out, q, kPages, vPages, rows, n, dim, pageRows, scale)
}

// AttendPartialPagedF32 is [AttendPartialPaged] over float32 keys and values.
func AttendPartialPagedF32(st *AttendState, q []float32, kPages, vPages [][]float32, n, pageRows int, scale float32) {
	checkPartialQueries("AttendPartialPagedF32", st, q)
	checkPages("AttendPartialPagedF32", kPages, vPages, 1, n, st.dim, pageRows)
	attendPartialPaged(&pagedF32, st, q, kPages, vPages, n, pageRows, scale)
}

// AttendCausalF32 is [AttendCausal] over float32 keys and values; its bound is
// AttendCausal's.
func AttendCausalF32(out, q, k, v []float32, rows, m, n, dim int, scale float32) {
	checkCausalArgs("AttendCausalF32", out, q, len(k), len(v), 1, rows, m, n, dim, 0, dim)
	attendCausal(&causalF32, out, q, k, v, rows, m, n, dim, m*dim, dim, dim, scale)
}

// AttendCausalStridedF32 is [AttendCausalStrided] over float32 keys and values.
func AttendCausalStridedF32(out, q, k, v []float32, rows, m, n, dim, qStride, kvStride int, scale float32) {
	span := checkCausalArgs("AttendCausalStridedF32", out, q, len(k), len(v), 1, rows, m, n, dim, qStride, kvStride)
	attendCausal(&causalF32, out, q, k[:span], v[:span], rows, m, n, dim, dim, qStride, kvStride, scale)
}

// AttendCausalHeadsF32 is [AttendCausalHeads] over float32 keys and values.
func AttendCausalHeadsF32(out, q, k, v []float32, heads, rows, m, n, dim int, scale float32) {
	checkCausalHeadsArgs("AttendCausalHeadsF32", out, q, len(k), len(v), 1, heads, rows, m, n, dim)
	attendCausalHeads(&causalF32, out, q, k, v, heads, rows, m, n, dim, scale)
}

var (
	attendF32 = attendFormat[float32]{
		perElem: 1, scores: scoresStridedF32, weighted: weightedSumRowsStridedF32,
		add: func(dst, w []float32, v, ahead []float32, rows, n, stride int) {
			weightedSumRowsAddF32.Call(dst, w, v, ahead, rows, n, stride)
		},
		race:   func(k, v []float32) { race.Read(k); race.Read(v) },
		at:     func(x []float32, j, d, stride int) float64 { return rowsF32{x, stride}.at(j, d) },
		keyMax: maxF32,
	}
	pagedF32 = pagedFormat[float32]{&attendF32, &sync.Pool{New: func() any { return new([]float32) }},
		func(dst, q []float32, k, ahead []float32, rows, n, dim, stride int, scale float32) {
			scoresAheadF32.Call(dst, q, k, ahead, rows, n, dim, stride, scale)
		}, scoresTableF32, addTableF32}
	// causalF32 keeps its transposed keys or values in the workspace's float32 columns,
	// which need no widening.
	causalF32 = causalFormat[float32]{
		attendFormat: &attendF32,
		transposeKeys: func(w *causalWork, k []float32, n, dim, stride int) {
			w.tF32 = growN(w.tF32, n*dim)
			transposeRows(w.tF32, k, n, dim, stride)
		},
		widenKeys: func(w *causalWork, dst []float32, j0, b, pitch, n, dim int) {
			for d := range dim {
				copy(dst[d*pitch:][:b], w.tF32[d*n+j0:][:b])
			}
		},
		widenValues: func(dst []float32, v []float32, b, dim, stride int) {
			for j := range b {
				copy(dst[j*dim:][:dim], v[j*stride:][:dim])
			}
		},
		transposeValues: func(w *causalWork, v []float32, n, dim, stride int) {
			w.tF32 = growN(w.tF32, n*dim)
			transposeRows(w.tF32, v, n, dim, stride)
		},
		product: func(w *causalWork, dst, p []float32, rows, j0, b, n, dim int) {
			scoresAheadF32.Call(dst, p, w.tF32[j0:(dim-1)*n+j0+b], nil, rows, dim, b, n, 1)
		},
	}
)
