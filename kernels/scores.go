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
// len(dst) == rows·n. dst must not overlap q.
//
// The SIMD variants widen each key to float32 once per block of queries (a whole
// 64-query window at dim 128) and multiply it against the block from registers; each
// entry is accumulated with fused multiply-adds in the variant's order. Each entry meets DotF32F16's
// bound times |scale|, plus the rounding of the final product: with s the exact dot
// product,
//
//	|got − scale·s| ≤ |scale|·(2·dim·2⁻²⁴·Σ|qᵢkᵢ| + dim·2⁻¹⁴⁹) + 2⁻¹⁴⁹
//
// NaN and Inf behave as in DotF16, entry by entry.
func Scores(dst, q []float32, k []Float16, rows, n, dim int, scale float32) {
	if dim < 1 || rows < 0 || n < 0 {
		panic(fmt.Sprintf("kernels.Scores: rows = %d, n = %d, dim = %d", rows, n, dim))
	}
	if len(q) != rows*dim || len(k) != n*dim || len(dst) != rows*n {
		panic(fmt.Sprintf("kernels.Scores: len(dst) = %d, len(q) = %d, len(k) = %d for rows = %d, n = %d, dim = %d",
			len(dst), len(q), len(k), rows, n, dim))
	}
	if rows == 0 || n == 0 {
		return
	}
	race.Read(q)
	race.Read(k)
	race.Write(dst)
	scores.Call(dst, q, fp16.Bits(k), rows, n, dim, scale)
}
