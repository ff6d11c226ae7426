package kernels

import (
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/race"
	"github.com/kvsimd/kvsimd/q8"
)

// The q8_0 kernels are the fp16 ones over keys and values kept as ggml's q8_0 blocks
// (package q8): 32 int8 quants and one fp16 scale d in 34 bytes, against fp16's 64.
// A row of dim values is dim/32 blocks, so dim, and a stride, count values and must be
// multiples of 32. Each value is widened exactly as q·d (|q| ≤ 127 and d's 11
// significant bits fit float32's 24), and every variant's body performs the same
// float32 operations in the same order as its fp16 twin, with only the widening
// changed: for keys or values whose widened values are equal, the q8_0 kernel gives the
// fp16 kernel's bits on the same variant, and the error bounds are the fp16 twins',
// with q·d in place of the halves. A widened value is at most 127·65504 in magnitude.
// See the bf16 kernels for why each format has functions of its own.

var (
	dotF32Q8          = dispatch.New(dotF32Q8Generic)
	scoresQ8          = dispatch.New(scoresQ8Generic)
	weightedSumRowsQ8 = dispatch.New(weightedSumRowsQ8Generic)
)

// DotF32Q8 returns the dot product of a float32 vector and the 32·len(b) values of the
// q8_0 blocks b (a query against a cached q8_0 key), accumulated in float32.
//
//	for i := range a { s += a[i] * (float32(b[i/32].Q[i%32]) * b[i/32].D.Float32()) }
//
// It panics if len(a) != 32·len(b). The bound of finite results and the settling of
// non-finite ones are DotF32F16's, and it gives DotF32F16's bits on the same variant
// when b's values equal the halves'. It does not allocate.
func DotF32Q8(a []float32, b []q8.Block) float32 {
	if len(a) != q8.BlockLen*len(b) {
		panic(lengthError{"DotF32Q8", len(a), len(b), q8.BlockLen})
	}
	race.Read(a)
	race.Read(b)
	bb := q8.Bytes(b)
	return settleDot(dotF32Q8.Call(a, bb), a, rowsQ8{bb, 0})
}

// ScoresQ8 is [Scores] with q8_0 keys: dst[i*n+j] = scale·(q_i · k_j), key j being the
// dim/32 blocks k[j*dim/32 : (j+1)*dim/32].
//
//	for i := 0; i < rows; i++ {
//		for j := 0; j < n; j++ {
//			var s float32
//			for d := 0; d < dim; d++ {
//				b := k[(j*dim+d)/32]
//				s += q[i*dim+d] * (float32(b.Q[d%32]) * b.D.Float32())
//			}
//			dst[i*n+j] = scale * s
//		}
//	}
//
// It panics unless dim is a positive multiple of 32 and len(k) == n·dim/32, besides
// Scores' conditions on rows, n, q and dst. Its bound and settling are Scores', and on
// each variant it gives Scores' bits for keys whose values are equal.
func ScoresQ8(dst, q []float32, k []q8.Block, rows, n, dim int, scale float32) {
	checkScoresArgs("ScoresQ8", dst, q, len(k), q8.BlockLen, rows, n, dim)
	scoresStridedQ8(dst, q, k, nil, rows, n, dim, dim, scale)
}

// ScoresStridedQ8 is [ScoresStrided] with q8_0 keys: key j is the dim/32 blocks from
// k[j*stride/32] on, and stride ≥ dim counts values, a multiple of 32 (a token-major
// q8_0 cache [len][heads][dim/32 blocks] is read one head at a time with
// k = cache[h*dim/32:] and stride = heads·dim).
//
//	for i := 0; i < rows; i++ {
//		for j := 0; j < n; j++ {
//			var s float32
//			for d := 0; d < dim; d++ {
//				b := k[(j*stride+d)/32]
//				s += q[i*dim+d] * (float32(b.Q[d%32]) * b.D.Float32())
//			}
//			dst[i*n+j] = scale * s
//		}
//	}
//
// It panics unless dim and stride are multiples of 32 and k holds the blocks the keys
// span, (n−1)·stride/32 + dim/32, besides ScoresStrided's conditions; its results are
// ScoresQ8's.
func ScoresStridedQ8(dst, q []float32, k []q8.Block, rows, n, dim, stride int, scale float32) {
	k = k[:checkScoresStridedArgs("ScoresStridedQ8", dst, q, len(k), q8.BlockLen, rows, n, dim, stride)]
	scoresStridedQ8(dst, q, k, nil, rows, n, dim, stride, scale)
}

func scoresStridedQ8(dst, q []float32, k, ahead []q8.Block, rows, n, dim, stride int, scale float32) {
	if rows == 0 || n == 0 {
		return
	}
	race.Read(q)
	race.Read(k)
	race.Write(dst)
	kb, bs := q8.Bytes(k), stride/q8.BlockLen
	scoresAheadQ8.Call(dst, q, kb, q8.Bytes(ahead), rows, n, dim, bs, scale)
	settleScores(dst, q, rowsQ8{kb, bs}, n, dim, scale, maxQ8)
}

// WeightedSumRowsQ8 is [WeightedSumRows] over q8_0 value rows of len(dst) values, a
// multiple of 32, each len(dst)/32 blocks.
//
//	for d := range dst { dst[d] = 0 }
//	for j := range w {
//		for d := range dst {
//			b := v[(j*len(dst)+d)/32]
//			dst[d] += w[j] * (float32(b.Q[d%32]) * b.D.Float32())
//		}
//	}
//
// It panics unless len(dst) is a positive multiple of 32 and len(v) == len(w)·len(dst)/32.
// Its bound and settling are WeightedSumRows', and on each variant it gives
// WeightedSumRows' bits for rows whose values are equal.
func WeightedSumRowsQ8(dst, w []float32, v []q8.Block) {
	checkWeightedArgs("WeightedSumRowsQ8", len(dst), len(w), len(v), q8.BlockLen)
	weightedSumRowsStridedQ8(dst, w, v, len(dst))
}

// WeightedSumRowsStridedQ8 is [WeightedSumRowsStrided] over q8_0 value rows: row j is
// the len(dst)/32 blocks from v[j*stride/32] on, stride ≥ len(dst) counting values, a
// multiple of 32.
//
//	for d := range dst { dst[d] = 0 }
//	for j := range w {
//		for d := range dst {
//			b := v[(j*stride+d)/32]
//			dst[d] += w[j] * (float32(b.Q[d%32]) * b.D.Float32())
//		}
//	}
//
// It panics unless len(dst) and stride are multiples of 32 and v holds the blocks the
// rows span, besides WeightedSumRowsStrided's conditions; its results are
// WeightedSumRowsQ8's.
func WeightedSumRowsStridedQ8(dst, w []float32, v []q8.Block, stride int) {
	v = v[:checkWeightedStridedArgs("WeightedSumRowsStridedQ8", len(dst), len(w), len(v), q8.BlockLen, stride)]
	weightedSumRowsStridedQ8(dst, w, v, stride)
}

func weightedSumRowsStridedQ8(dst, w []float32, v []q8.Block, stride int) {
	race.Read(w)
	race.Read(v)
	race.Write(dst)
	vb, bs := q8.Bytes(v), stride/q8.BlockLen
	weightedSumRowsQ8.Call(dst, w, vb, bs)
	settleWeightedSumRows(dst, w, rowsQ8{vb, bs})
}

// GatherRowsQ8 is [GatherRows] for q8_0 rows of dim values, a positive multiple of 32:
// row r of src is the dim/32 blocks src[r*dim/32 : (r+1)*dim/32], copied bit for bit.
//
//	for i, r := range idx {
//		copy(dst[i*dim/32:(i+1)*dim/32], src[int(r)*dim/32:(int(r)+1)*dim/32])
//	}
//
// It panics as GatherRows does, before writing anything, and does not allocate.
func GatherRowsQ8(dst, src []q8.Block, idx []int32, dim int) {
	gatherRows("GatherRowsQ8", dst, src, idx, dim, q8.BlockLen)
}

// GatherRowsStridedQ8 is [GatherRowsStrided] for q8_0 rows: row r of src is the dim/32
// blocks from src[r*stride/32] on, dim and stride counting values, multiples of 32.
//
//	for i, r := range idx {
//		copy(dst[i*dim/32:(i+1)*dim/32], src[int(r)*stride/32:][:dim/32])
//	}
//
// It panics as GatherRowsStrided does, before writing anything, and does not allocate.
func GatherRowsStridedQ8(dst, src []q8.Block, idx []int32, dim, stride int) {
	gatherRowsStrided("GatherRowsStridedQ8", dst, src, idx, dim, stride, q8.BlockLen)
}
