package kernels

import (
	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/race"
)

// The bf16 kernels are the fp16 ones over keys and values kept as bfloat16, the format
// of caches that follow a bf16 model's dtype. Widening a bfloat16 is exact (its bits
// shifted left 16), and every variant's body performs the same float32 operations in
// the same order as its fp16 twin, with only the widening changed: for keys or values
// whose widened values are equal, the bf16 kernel gives the fp16 kernel's bits on the
// same variant. The error bounds are the fp16 twins', with the widened values in place
// of the halves. A bfloat16 spans float32's range, so an entry can overflow where
// fp16's cannot; it is settled in float64 as DotF32F16's results are.
//
// Why one function per format rather than a generic function over an element
// constraint: each format has its own assembly bodies and dispatch table, a q8_0 row is
// counted in blocks rather than elements, and the fp16 signatures stay as they were, so
// existing callers and function values (kernels.Scores as a func) keep working.

var (
	dotF32BF16          = dispatch.New(dotF32BF16Generic)
	scoresBF16          = dispatch.New(scoresBF16Generic)
	weightedSumRowsBF16 = dispatch.New(weightedSumRowsBF16Generic)
)

// DotF32BF16 returns the dot product of a float32 vector and a bfloat16 vector (a
// query against a cached bf16 key), accumulated in float32.
//
//	for i := range a { s += a[i] * b[i].Float32() }
//
// It panics if len(a) != len(b). The bound of finite results and the settling of
// non-finite ones are DotF32F16's, and it gives DotF32F16's bits on the same variant
// when b's values equal the halves'. It does not allocate.
func DotF32BF16(a []float32, b []bf16.BFloat16) float32 {
	checkDot("DotF32BF16", len(a), len(b))
	race.Read(a)
	race.Read(b)
	bb := bf16.Bits(b)
	return settleDot(dotF32BF16.Call(a, bb), a, rowsBF16{bb, len(a)})
}

// ScoresBF16 is [Scores] with bfloat16 keys: dst[i*n+j] = scale·(q_i · k_j).
//
//	for i := 0; i < rows; i++ {
//		for j := 0; j < n; j++ {
//			var s float32
//			for d := 0; d < dim; d++ { s += q[i*dim+d] * k[j*dim+d].Float32() }
//			dst[i*n+j] = scale * s
//		}
//	}
//
// Its conditions, bound and settling of non-finite entries are Scores', and on each
// variant it gives Scores' bits for keys whose values are equal. Keys span float32's
// range, so an entry's unscaled float32 sum can overflow even where scale·Σ is finite
// (keys near 3.4e38, |scale| < 1): such an entry comes out non-finite and is settled
// in float64 to the finite value. The no-overflow shortcut counts keys up to float32's
// largest value, so it seldom applies: settling costs one Sum over dst per call.
func ScoresBF16(dst, q []float32, k []bf16.BFloat16, rows, n, dim int, scale float32) {
	checkScoresArgs("ScoresBF16", dst, q, len(k), 1, rows, n, dim)
	scoresStridedBF16(dst, q, k, nil, rows, n, dim, dim, scale)
}

// ScoresStridedBF16 is [ScoresStrided] with bfloat16 keys: key j is
// k[j*stride : j*stride+dim].
//
//	for i := 0; i < rows; i++ {
//		for j := 0; j < n; j++ {
//			var s float32
//			for d := 0; d < dim; d++ { s += q[i*dim+d] * k[j*stride+d].Float32() }
//			dst[i*n+j] = scale * s
//		}
//	}
//
// Its conditions are ScoresStrided's; its results are ScoresBF16's.
func ScoresStridedBF16(dst, q []float32, k []bf16.BFloat16, rows, n, dim, stride int, scale float32) {
	k = k[:checkScoresStridedArgs("ScoresStridedBF16", dst, q, len(k), 1, rows, n, dim, stride)]
	scoresStridedBF16(dst, q, k, nil, rows, n, dim, stride, scale)
}

func scoresStridedBF16(dst, q []float32, k, ahead []bf16.BFloat16, rows, n, dim, stride int, scale float32) {
	if rows == 0 || n == 0 {
		return
	}
	race.Read(q)
	race.Read(k)
	race.Write(dst)
	kb := bf16.Bits(k)
	scoresAheadBF16.Call(dst, q, kb, bf16.Bits(ahead), rows, n, dim, stride, scale)
	settleScores(dst, q, rowsBF16{kb, stride}, n, dim, scale, maxBF16)
}

// WeightedSumRowsBF16 is [WeightedSumRows] over bfloat16 value rows: the attention
// output Σⱼ w[j]·V_j of one query.
//
//	for d := range dst { dst[d] = 0 }
//	for j := range w {
//		for d := range dst { dst[d] += w[j] * v[j*len(dst)+d].Float32() }
//	}
//
// Its conditions, bound and settling are WeightedSumRows', and on each variant it gives
// WeightedSumRows' bits for rows whose values are equal.
func WeightedSumRowsBF16(dst, w []float32, v []bf16.BFloat16) {
	checkWeightedArgs("WeightedSumRowsBF16", len(dst), len(w), len(v), 1)
	weightedSumRowsStridedBF16(dst, w, v, len(dst))
}

// WeightedSumRowsStridedBF16 is [WeightedSumRowsStrided] over bfloat16 value rows:
// row j is v[j*stride : j*stride+len(dst)].
//
//	for d := range dst { dst[d] = 0 }
//	for j := range w {
//		for d := range dst { dst[d] += w[j] * v[j*stride+d].Float32() }
//	}
//
// Its conditions are WeightedSumRowsStrided's; its results are WeightedSumRowsBF16's.
func WeightedSumRowsStridedBF16(dst, w []float32, v []bf16.BFloat16, stride int) {
	v = v[:checkWeightedStridedArgs("WeightedSumRowsStridedBF16", len(dst), len(w), len(v), 1, stride)]
	weightedSumRowsStridedBF16(dst, w, v, stride)
}

func weightedSumRowsStridedBF16(dst, w []float32, v []bf16.BFloat16, stride int) {
	race.Read(w)
	race.Read(v)
	race.Write(dst)
	vb := bf16.Bits(v)
	weightedSumRowsBF16.Call(dst, w, vb, stride)
	settleWeightedSumRows(dst, w, rowsBF16{vb, stride})
}

// GatherRowsBF16 is [GatherRows] for bfloat16 rows: it copies the rows of src named by
// idx, in idx's order, into dst, bit for bit.
//
//	for i, r := range idx {
//		copy(dst[i*dim:(i+1)*dim], src[int(r)*dim:(int(r)+1)*dim])
//	}
//
// It panics as GatherRows does, before writing anything, and does not allocate.
func GatherRowsBF16(dst, src []bf16.BFloat16, idx []int32, dim int) {
	gatherRows("GatherRowsBF16", dst, src, idx, dim, 1)
}

// GatherRowsStridedBF16 is [GatherRowsStrided] for bfloat16 rows: row r of src is
// src[r*stride : r*stride+dim].
//
//	for i, r := range idx {
//		copy(dst[i*dim:(i+1)*dim], src[int(r)*stride:int(r)*stride+dim])
//	}
//
// It panics as GatherRowsStrided does, before writing anything, and does not allocate.
func GatherRowsStridedBF16(dst, src []bf16.BFloat16, idx []int32, dim, stride int) {
	gatherRowsStrided("GatherRowsStridedBF16", dst, src, idx, dim, stride, 1)
}
