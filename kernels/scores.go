package kernels

import (
	"fmt"
	"math"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/race"
)

var (
	scores = dispatch.New(scoresGeneric)

	// scoresAhead{,BF16,Q8} are the Scores kernels given one more stream of rows,
	// ahead, laid out as the keys: row j of it, ahead[j*stride:], is prefetched as key
	// j is scored. The fused attention passes the block's values, which it reads next,
	// so that its K and V streams are in flight together. The amd64 row kernels
	// prefetch; every other variant and kernel is Scores' own, and ignores ahead.
	scoresAhead     = dispatch.New(ignoreAhead(scoresGeneric))
	scoresAheadBF16 = dispatch.New(ignoreAhead(scoresBF16Generic))
	scoresAheadQ8   = dispatch.New(ignoreAhead(scoresQ8Generic))
)

// ignoreAhead is a Scores kernel as a scoresAhead one that does not prefetch.
func ignoreAhead[E any](f func(dst, q []float32, k []E, rows, n, dim, stride int, scale float32)) func(dst, q []float32, k, ahead []E, rows, n, dim, stride int, scale float32) {
	return func(dst, q []float32, k, _ []E, rows, n, dim, stride int, scale float32) {
		f(dst, q, k, rows, n, dim, stride, scale)
	}
}

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
// order of summation, before or after scaling (‖q‖·√dim·65504·max(1, |scale|) below
// 2¹²⁵, checked with one DotF32 over q), only NaN or Inf inputs can make an entry
// non-finite, and those give the float64 answer on every variant already, so nothing
// is settled and dst is not read again.
// Otherwise finding non-finite entries costs one Sum over dst, and settling one costs
// about dim scalar float64 multiply-adds.
func Scores(dst, q []float32, k []Float16, rows, n, dim int, scale float32) {
	checkScoresArgs("Scores", dst, q, len(k), 1, rows, n, dim)
	scoresStrided(dst, q, k, nil, rows, n, dim, dim, scale)
}

// ScoresStrided is Scores over keys that lie stride ≥ dim elements apart: key j is
// k[j*stride : j*stride+dim], and the elements between keys are never read. It scores
// one KV head of a token-major cache ([len][heads][dim]) where it lies, with
// k = cache[h*dim:] and stride = heads·dim, or the first n rows of a buffer allocated
// for a whole context.
//
//	for i := 0; i < rows; i++ {
//		for j := 0; j < n; j++ {
//			var s float32
//			for d := 0; d < dim; d++ { s += q[i*dim+d] * k[j*stride+d].Float32() }
//			dst[i*n+j] = scale * s
//		}
//	}
//
// As in BLAS, the last key needs only its dim elements: it panics unless stride ≥ dim
// and len(k) ≥ (n−1)·stride + dim (for n ≥ 1), besides Scores' conditions on rows, n,
// dim, q and dst. Every entry is computed with the same operations in the same order as
// Scores computes it from the same key values (the stride changes only addresses), so
// the bits, the bound and the settling of non-finite entries are Scores'.
func ScoresStrided(dst, q []float32, k []Float16, rows, n, dim, stride int, scale float32) {
	k = k[:checkScoresStridedArgs("ScoresStrided", dst, q, len(k), 1, rows, n, dim, stride)]
	scoresStrided(dst, q, k, nil, rows, n, dim, stride, scale)
}

// checkScoresArgs panics unless Scores' conditions hold for a kernel whose keys k hold
// perElem values per element (1, or 32 for q8_0 blocks): dim ≥ 1 (a multiple of
// perElem), rows ≥ 0, n ≥ 0, len(q) == rows·dim, len(k) == n·dim/perElem and
// len(dst) == rows·n, every product without overflow. Each message names the first
// condition that fails and the value it wanted.
func checkScoresArgs(kernel string, dst, q []float32, kLen, perElem, rows, n, dim int) {
	if dim < 1 || rows < 0 || n < 0 || dim%perElem != 0 {
		panic(fmt.Sprintf("kernels.%s: rows = %d, n = %d, dim = %d, want rows, n ≥ 0 and dim ≥ 1%s",
			kernel, rows, n, dim, valuesMultiple(perElem, "dim a multiple of")))
	}
	const products = "rows·dim, n·dim or rows·n"
	kWant, ok := mulSize(n, dim)
	if !ok {
		panic(fmt.Sprintf("kernels.%s: %s overflows int for rows = %d, n = %d, dim = %d", kernel, products, rows, n, dim))
	}
	checkScoresShape(kernel, products, dst, q, rows, n, dim)
	if kWant /= perElem; kLen != kWant {
		panic(fmt.Sprintf("kernels.%s: len(k) = %d%s, want n·dim%s = %d·%d%s = %d", kernel, kLen, blocks(perElem),
			per(perElem), n, dim, per(perElem), kWant))
	}
}

// checkScoresStridedArgs panics unless ScoresStrided's conditions hold for keys of perElem
// values per element (stride a multiple of perElem too), and returns the elements of k
// that the n keys span, counted in its elements.
func checkScoresStridedArgs(kernel string, dst, q []float32, kLen, perElem, rows, n, dim, stride int) int {
	if dim < 1 || rows < 0 || n < 0 || stride < dim || dim%perElem != 0 || stride%perElem != 0 {
		panic(fmt.Sprintf("kernels.%s: rows = %d, n = %d, dim = %d, stride = %d, want rows, n ≥ 0 and 1 ≤ dim ≤ stride%s",
			kernel, rows, n, dim, stride, valuesMultiple(perElem, "dim and stride multiples of")))
	}
	checkScoresShape(kernel, "rows·dim or rows·n", dst, q, rows, n, dim)
	if n == 0 {
		return 0
	}
	span, ok := stridedSpan(n, dim/perElem, stride/perElem)
	if !ok {
		panic(fmt.Sprintf("kernels.%s: (n−1)·stride + dim overflows int for n = %d, stride = %d, dim = %d", kernel, n, stride, dim))
	}
	if kLen < span {
		panic(fmt.Sprintf("kernels.%s: len(k) = %d%s, want ≥ ((n−1)·stride + dim)%s = (%d·%d + %d)%s = %d",
			kernel, kLen, blocks(perElem), per(perElem), n-1, stride, dim, per(perElem), span))
	}
	return span
}

// checkScoresShape panics unless len(q) == rows·dim and len(dst) == rows·n, without
// overflow; an overflow's message names products, the sizes the kernel multiplies.
func checkScoresShape(kernel, products string, dst, q []float32, rows, n, dim int) {
	qLen, qOK := mulSize(rows, dim)
	dstLen, dstOK := mulSize(rows, n)
	if !qOK || !dstOK {
		panic(fmt.Sprintf("kernels.%s: %s overflows int for rows = %d, n = %d, dim = %d", kernel, products, rows, n, dim))
	}
	if len(q) != qLen {
		panic(fmt.Sprintf("kernels.%s: len(q) = %d, want rows·dim = %d·%d = %d", kernel, len(q), rows, dim, qLen))
	}
	if len(dst) != dstLen {
		panic(fmt.Sprintf("kernels.%s: len(dst) = %d, want rows·n = %d·%d = %d", kernel, len(dst), rows, n, dstLen))
	}
}

// The panic messages' wording for kernels whose elements hold perElem values each
// (32 for q8_0 blocks, where lengths count blocks and dim and stride count values).

// valuesMultiple is the condition that sizes counted in values hold whole elements,
// cond naming them ("dim a multiple of").
func valuesMultiple(perElem int, cond string) string {
	if perElem == 1 {
		return ""
	}
	return fmt.Sprintf(", %s %d", cond, perElem)
}

// blocks names the unit of a length counted in elements of perElem values.
func blocks(perElem int) string {
	if perElem == 1 {
		return ""
	}
	return " blocks"
}

// per is the division that turns values into such elements.
func per(perElem int) string {
	if perElem == 1 {
		return ""
	}
	return fmt.Sprintf("/%d", perElem)
}

// stridedSpan is (n−1)·stride + dim, the elements that n ≥ 1 rows of dim elements
// stride apart cover, and whether it fits an int.
func stridedSpan(n, dim, stride int) (int, bool) {
	last, ok := mulSize(n-1, stride)
	if !ok || last > math.MaxInt-dim {
		return 0, false
	}
	return last + dim, true
}

// scoresStrided runs the checked kernel: k holds exactly the span of the n keys, and
// ahead is nil or rows laid out as k's, to prefetch (scoresAhead).
func scoresStrided(dst, q []float32, k, ahead []Float16, rows, n, dim, stride int, scale float32) {
	if rows == 0 || n == 0 {
		return
	}
	race.Read(q)
	race.Read(k)
	race.Write(dst)
	kb := fp16.Bits(k)
	scoresAhead.Call(dst, q, kb, fp16.Bits(ahead), rows, n, dim, stride, scale)
	settleScores(dst, q, rowsF16{kb, stride}, n, dim, scale, maxF16)
}

// settleScores settles every entry of a score block that is NaN or ±Inf (see Scores);
// keys holds the keys as they were scored, and keyMax bounds |value| of a finite key.
func settleScores[K keyRows](dst, q []float32, keys K, n, dim int, scale float32, keyMax float64) {
	if scoresCannotOverflow(q, dim, scale, keyMax) {
		return
	}
	// A float64 sum of float32 values is non-finite exactly when one of them is, so
	// one SIMD Sum tells whether any entry needs settling.
	if s := sumOf.Call(dst); s-s == 0 {
		return
	}
	for e, s := range dst {
		if s-s == 0 {
			continue
		}
		i, j := e/n, e%n
		dst[e] = settleRow(q[i*dim:(i+1)*dim], keys, j, scale)
	}
}

// scoresCannotOverflow reports whether no product, partial sum or scaled value of any
// entry of q's score block can leave float32's range, in any order of summation. Then
// a non-finite entry comes only from NaN or Inf inputs (Inf·x, Inf+x, Inf−Inf, 0·Inf
// and NaN propagate alike in every order, fused or not, and in float64), so settling
// could change nothing.
//
// Every |product| and |partial sum| of entry (i, j) is at most Σ_d |q_id·k_jd| ≤
// ‖q_i‖·‖k_j‖ ≤ ‖q‖·√dim·keyMax for finite keys (65504 for fp16) (an Inf key is an
// Inf input), and the computed sums exceed the exact ones by at most a factor
// 1 + 2·dim·2⁻²⁴. The variants sum each entry unscaled and multiply by scale at the
// end, so the bound must hold for the sum as well as for the scaled value: the factor
// is max(1, |scale|), not |scale| (with bf16 keys near float32's limit and |scale| < 1
// the unscaled sum overflows where the scaled value would not). The check takes ‖q‖²
// from DotF32, itself within a factor 1 + 2·len(q)·2⁻²⁴, so both factors stay below
// 9/8 for len(q) ≤ 2²⁰, and a bound of 2¹²⁵ leaves room for them below float32's
// 2¹²⁸. A NaN or Inf in q fails the check, and so does a ‖q‖² beyond float32's range.
func scoresCannotOverflow(q []float32, dim int, scale float32, keyMax float64) bool {
	if len(q) > 1<<20 {
		return false
	}
	norm2 := float64(dotF32.Call(q, q))
	bound := math.Sqrt(norm2) * math.Sqrt(float64(dim)) * keyMax * max(1, math.Abs(float64(scale)))
	return bound < 0x1p125 // false for NaN
}
