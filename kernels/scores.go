package kernels

import (
	"fmt"
	"math"

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
// float32's range. When the queries are small enough that no entry can overflow in any
// order of summation (‖q‖·√dim·65504·|scale| below 2¹²⁵, checked with one DotF32 over
// q), only NaN or Inf inputs can make an entry non-finite, and those give the float64
// answer on every variant already, so nothing is settled and dst is not read again.
// Otherwise finding non-finite entries costs one Sum over dst, and settling one costs
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
	if scoresCannotOverflow(q, dim, scale) {
		return
	}
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

// scoresCannotOverflow reports whether no product, partial sum or scaled value of any
// entry of q's score block can leave float32's range, in any order of summation. Then
// a non-finite entry comes only from NaN or Inf inputs (Inf·x, Inf+x, Inf−Inf, 0·Inf
// and NaN propagate alike in every order, fused or not, and in float64), so settling
// could change nothing.
//
// Every |product| and |partial sum| of entry (i, j) is at most Σ_d |q_id·k_jd| ≤
// ‖q_i‖·‖k_j‖ ≤ ‖q‖·√dim·65504 for finite fp16 keys (an Inf key is an Inf input), and
// the computed sums exceed the exact ones by at most a factor 1 + 2·dim·2⁻²⁴. The
// check takes ‖q‖² from DotF32, itself within a factor 1 + 2·len(q)·2⁻²⁴, so both
// factors stay below 9/8 for len(q) ≤ 2²⁰, and a bound of 2¹²⁵ on the scaled product
// leaves room for them below float32's 2¹²⁸. A NaN or Inf in q fails the check.
func scoresCannotOverflow(q []float32, dim int, scale float32) bool {
	if len(q) > 1<<20 {
		return false
	}
	norm2 := float64(dotF32.Call(q, q))
	bound := math.Sqrt(norm2) * math.Sqrt(float64(dim)) * 65504 * math.Abs(float64(scale))
	return bound < 0x1p125 // false for NaN
}
