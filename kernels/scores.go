package kernels

import (
	"fmt"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/race"
)

var scores = dispatch.New(scoresGeneric)

// Scores computes the score block of rows float32 queries against n fp16 keys, all
// row-major with dim elements per row: dst[i*n+j] = scale·(q_i · k_j), the Q·Kᵀ of an
// observation window (scale is usually 1/√dim).
//
//	for i := 0; i < rows; i++ {
//		for j := 0; j < n; j++ {
//			var s float32
//			for d := 0; d < dim; d++ { s += q[i*dim+d] * k[j*dim+d].Float32() }
//			dst[i*n+j] = scale * s
//		}
//	}
//
// It panics unless dim ≥ 1, rows ≥ 0, n ≥ 0, len(q) == rows·dim, len(k) == n·dim and
// len(dst) == rows·n, each product computed without overflow. dst must not overlap q.
//
// The SIMD variants widen each key to float32 once per block of queries (a whole
// 64-query window at dim 128) and multiply it against the block from registers; each
// entry is accumulated with fused multiply-adds in the variant's order. Each entry meets DotF32F16's
// bound times |scale|, plus the rounding of the final product: with s the exact dot
// product,
//
//	|got − scale·s| ≤ |scale|·(2·dim·2⁻²⁴·Σ|qᵢkᵢ| + dim·2⁻¹⁴⁹) + 2⁻¹⁴⁹
//
// NaN and ±Inf entries are settled as DotF32F16's results are: an entry whose float32
// value is not finite is computed again as scale·Σ in float64, in index order, and
// rounded to float32, so it is the same on every variant and GOARCH. An entry is NaN
// exactly when float64 arithmetic on its inputs and scale gives NaN (a NaN, 0·Inf,
// Infs of both signs), and ±Inf only from an Inf input or a float64 value beyond
// float32's range. Finding such entries costs one Sum over dst; settling one costs
// about dim scalar float64 multiply-adds.
func Scores(dst, q []float32, k []Float16, rows, n, dim int, scale float32) {
	if dim < 1 || rows < 0 || n < 0 {
		panic(fmt.Sprintf("kernels.Scores: rows = %d, n = %d, dim = %d", rows, n, dim))
	}
	qLen, qOK := mulSize(rows, dim)
	kLen, kOK := mulSize(n, dim)
	dstLen, dstOK := mulSize(rows, n)
	if !qOK || !kOK || !dstOK {
		panic(fmt.Sprintf("kernels.Scores: rows·dim, n·dim or rows·n overflows int for rows = %d, n = %d, dim = %d", rows, n, dim))
	}
	if len(q) != qLen || len(k) != kLen || len(dst) != dstLen {
		panic(fmt.Sprintf("kernels.Scores: len(dst) = %d, len(q) = %d, len(k) = %d for rows = %d, n = %d, dim = %d",
			len(dst), len(q), len(k), rows, n, dim))
	}
	if rows == 0 || n == 0 {
		return
	}
	race.Read(q)
	race.Read(k)
	race.Write(dst)
	kb := fp16.Bits(k)
	scores.Call(dst, q, kb, rows, n, dim, scale)
	settleScores(dst, q, kb, n, dim, scale)
}

// settleScores settles every entry of a score block that is NaN or ±Inf (see Scores).
func settleScores(dst, q []float32, k []uint16, n, dim int, scale float32) {
	// A float64 sum of float32 values is non-finite exactly when one of them is, so
	// one SIMD Sum tells whether any entry needs settling.
	if s := sumOf.Call(dst); s-s == 0 {
		return
	}
	for e, s := range dst {
		i, j := e/n, e%n
		dst[e] = settleF32F16(s, q[i*dim:(i+1)*dim], k[j*dim:(j+1)*dim], scale)
	}
}
