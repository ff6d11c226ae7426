package kernels

import (
	"fmt"
	"math"
	"sync"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/race"
	"github.com/kvsimd/kvsimd/q8"
)

// The fused decode attention. A call runs over the keys in blocks of attendBlock: the
// variant's Scores kernel scores the block for every query row, the variant's softmax
// passes turn each row's scores into exponentials against the row's running maximum
// (rescaling what the row has summed when the maximum grows, as flash-decoding does),
// and one weightedSumRowsAdd call per four query rows adds the block's value rows,
// weighted, to those rows' sums. So K and V are each read from memory once per call
// whatever rows is (AVX-512 takes four rows a pass, AVX2 two, the second group reading
// the block from cache); the block's scores stay in L1.
//
// The two phases alternate, and each would leave the memory idle while the other
// stream waits: so on amd64 each prefetches the other's next rows as it goes. Scoring
// a block prefetches its value rows (row j as key j is scored: scoresAhead), and the
// weighted sums prefetch the next block's keys (weightedSumRowsAdd's ahead) where the
// hardware prefetchers cannot follow them (rows stride apart, pages), so that
// each phase computes from L2 while the memory fills it for the other. On Zen 5 (fp16,
// G = 4, dim 128, 8 heads; 10 runs alternating with the version without them) that,
// with the short blocks below, halved the token-major call (9.50 → 4.61 ms at 16,384
// rows per head, 49.2 → 24.6 at 65,536), whose rows 2 KiB apart escape the hardware
// prefetchers, and left head-major within the noise: a key costs about 13 ns of
// compute from L2 against 12–16 of memory, and the phases still do not overlap the
// two well (docs/performance.md has the study).

// attendBlock is the keys of a block, and the float32s between the query rows of the
// block's weights: the assembly's AttendPitch (gen/amd64/weighted, gen/arm64/weighted).
// With each phase prefetching the other's rows, short blocks keep the prefetches a
// short phase ahead of their use: over 65,536 rows per head for 8 heads (fp16, G = 4,
// dim 128, Zen 5, medians of 5 alternating runs on a shared machine) blocks of 256
// keys took 13.2 ms head-major and 33.0 token-major, blocks of 1,024 14.4 and 39.7;
// blocks of 128 and 512 were within the noise of 256 head-major, 128 faster and 512
// slower token-major; over the whole benchmark (8 alternating runs) blocks of 128
// against 256 moved single rows by −28 % to +32 % and the geomean by −1.2 %.
// (Without the prefetches, blocks of 1,024 were the fastest: fewer switches between
// the K and V streams.)
const attendBlock = 256

// attendRows is the most query rows one weightedSumRowsAdd call takes: their
// accumulators and a widened value vector fill the register file.
const attendRows = 4

var (
	// attendPasses are the active variant's softmax passes (max, exponentials, scale).
	attendPasses           = dispatch.New(genericPasses)
	weightedSumRowsAdd     = dispatch.New(weightedSumRowsAddGeneric)
	weightedSumRowsAddBF16 = dispatch.New(weightedSumRowsAddBF16Generic)
	weightedSumRowsAddQ8   = dispatch.New(weightedSumRowsAddQ8Generic)
)

// Attend is one decoded token's attention for rows query rows against n fp16 keys and
// values, all row-major with dim elements per row: out[i*dim:(i+1)*dim] = Σⱼ pᵢⱼ·vⱼ
// with pᵢ = softmax(scale·qᵢ·kⱼ over j). It is the composition
//
//	s := make([]float32, rows*n)
//	Scores(s, q, k, rows, n, dim, scale)
//	for i := 0; i < rows; i++ {
//		Softmax(s[i*n : (i+1)*n])
//		WeightedSumRows(out[i*dim:(i+1)*dim], s[i*n:(i+1)*n], v)
//	}
//
// fused: it reads each key and value row once for all query rows (a KV head's G query
// heads in decode, or any rows that see every key), with an online softmax (a running
// maximum and sum per row), and needs no score row. With n = 0 it writes zeros.
//
// It panics unless dim ≥ 1, rows ≥ 0, n ≥ 0, len(q) == len(out) == rows·dim and
// len(k) == len(v) == n·dim, with n = 0 too: k and v empty then, so that a stale n
// with a head's rows panics rather than attends to none. out must not overlap q, k or
// v.
//
// Error bound: let tⱼ = scale·qᵢ·kⱼ and pⱼ its softmax, exact, and o = Σⱼ pⱼ·vⱼ; let Δ
// be the largest of Scores' bounds on the row's entries (|scale|·(2·dim·2⁻²⁴·Σ|qᵢkⱼ| +
// dim·2⁻¹⁴⁹) + 2⁻¹⁴⁹) and u = 2⁻²⁴. Every finite output meets
//
//	|out − o| ≤ ((e^(2Δ) − 1)·(1 + E) + E)·Σⱼ pⱼ·|vⱼ| + n·2⁻¹⁴⁸·maxⱼ|vⱼ| + 2⁻¹⁴⁹,  E = (2n + ⌈n/256⌉ + 16)·u
//
// for n ≤ 2²²: the scores' error moves each weight by at most a factor e^(±2Δ) (its
// own and, through the sum, the others'); the rest is the fused multiply-add chain
// over n terms (2n·u, as WeightedSumRows'), a rescaling per block at most, the
// exponentials (within 1.65u each, Softmax's), the final division, the exponentials
// below e⁻¹⁰³ < 2⁻¹⁴⁸ that a variant may flush to 0, and the output's own rounding
// where it falls below float32's normal range (2⁻¹⁴⁹).
//
// Special values give the composition's answer on every variant: a row with a NaN or
// +Inf score is all NaN, a row of only −Inf scores is the mean of the value rows (the
// uniform softmax), −Inf scores weigh 0 (and 0·Inf is NaN), and a row whose output is
// NaN or ±Inf (an Inf or NaN value, or an overflow) is computed again by the
// composition itself, Scores, Softmax and WeightedSumRows on that row, so its NaN and
// ±Inf outputs are the composition's. (Its finite outputs are too, but for the last
// bits: Softmax's SIMD sums split a row at its vector boundaries, and the pooled score
// row need not start where the composition's row of a [rows][n] block does.) Only
// then are K and V read a second time, for that row. Attend allocates nothing in
// steady state (its workspace is pooled).
func Attend(out, q []float32, k, v []Float16, rows, n, dim int, scale float32) {
	checkAttendArgs("Attend", out, q, len(k), len(v), 1, rows, n, dim, dim, true)
	attend(&attendFP16, out, q, k, v, rows, n, dim, dim, scale)
}

// AttendStrided is Attend over keys and values that lie stride ≥ dim elements apart:
// key j is k[j*stride:][:dim] and value j is v[j*stride:][:dim], one KV head of a
// token-major cache ([len][heads][dim], k = cacheK[h*dim:], stride = heads·dim).
//
//	s := make([]float32, rows*n)
//	ScoresStrided(s, q, k, rows, n, dim, stride, scale)
//	for i := 0; i < rows; i++ {
//		Softmax(s[i*n : (i+1)*n])
//		WeightedSumRowsStrided(out[i*dim:(i+1)*dim], s[i*n:(i+1)*n], v, stride)
//	}
//
// As in BLAS, the last row needs only its dim elements: it panics unless stride ≥ dim
// and len(k), len(v) ≥ (n−1)·stride + dim (for n ≥ 1), besides Attend's conditions.
// With n = 0 no row is read and k and v may have any length, as in BLAS and
// ScoresStrided: a token-major buffer is passed as it lies, with room past the rows
// written so far, so an empty head's k and v need not be empty (and a stale n = 0
// cannot be told from one; the packed forms catch it). The stride changes only
// addresses: the results are Attend's bits for the same rows.
func AttendStrided(out, q []float32, k, v []Float16, rows, n, dim, stride int, scale float32) {
	span := checkAttendArgs("AttendStrided", out, q, len(k), len(v), 1, rows, n, dim, stride, false)
	attend(&attendFP16, out, q, k[:span], v[:span], rows, n, dim, stride, scale)
}

// AttendBF16 is [Attend] over bfloat16 keys and values, with ScoresBF16 and
// WeightedSumRowsBF16 in its composition; its bound is Attend's.
func AttendBF16(out, q []float32, k, v []bf16.BFloat16, rows, n, dim int, scale float32) {
	checkAttendArgs("AttendBF16", out, q, len(k), len(v), 1, rows, n, dim, dim, true)
	attend(&attendBF16, out, q, k, v, rows, n, dim, dim, scale)
}

// AttendStridedBF16 is [AttendStrided] over bfloat16 keys and values.
func AttendStridedBF16(out, q []float32, k, v []bf16.BFloat16, rows, n, dim, stride int, scale float32) {
	span := checkAttendArgs("AttendStridedBF16", out, q, len(k), len(v), 1, rows, n, dim, stride, false)
	attend(&attendBF16, out, q, k[:span], v[:span], rows, n, dim, stride, scale)
}

// AttendQ8 is [Attend] over q8_0 keys and values: a row of dim values (a multiple of
// 32) is dim/32 blocks, so len(k) == len(v) == n·dim/32 (0 for n = 0); ScoresQ8 and
// WeightedSumRowsQ8 are its composition, and its bound is Attend's.
func AttendQ8(out, q []float32, k, v []q8.Block, rows, n, dim int, scale float32) {
	checkAttendArgs("AttendQ8", out, q, len(k), len(v), q8.BlockLen, rows, n, dim, dim, true)
	attend(&attendQ8, out, q, k, v, rows, n, dim, dim, scale)
}

// AttendStridedQ8 is [AttendStrided] over q8_0 keys and values: dim and stride count
// values and are multiples of 32, and k and v hold the (n−1)·stride/32 + dim/32 blocks
// the rows span.
func AttendStridedQ8(out, q []float32, k, v []q8.Block, rows, n, dim, stride int, scale float32) {
	span := checkAttendArgs("AttendStridedQ8", out, q, len(k), len(v), q8.BlockLen, rows, n, dim, stride, false)
	attend(&attendQ8, out, q, k[:span], v[:span], rows, n, dim, stride, scale)
}

// checkAttendArgs panics unless an Attend kernel's conditions hold for rows of dim
// values held perElem to an element, stride apart (packed: the contiguous form, whose
// k and v hold exactly the rows), and returns the elements of k and v the n rows span.
// With n = 0 the packed forms still want k and v empty, so that a stale n = 0 with a
// head's rows panics rather than attends to none; the strided forms, as in BLAS, read
// nothing and take k and v of any length (a token-major buffer of an empty head).
func checkAttendArgs(kernel string, out, q []float32, kLen, vLen, perElem, rows, n, dim, stride int, packed bool) int {
	if dim < 1 || rows < 0 || n < 0 || stride < dim || dim%perElem != 0 || stride%perElem != 0 {
		panic(fmt.Sprintf("kernels.%s: rows = %d, n = %d, dim = %d, stride = %d, want rows, n ≥ 0 and 1 ≤ dim ≤ stride%s",
			kernel, rows, n, dim, stride, multipleOf(perElem)))
	}
	qLen, ok := mulSize(rows, dim)
	if !ok {
		panic(fmt.Sprintf("kernels.%s: rows·dim overflows int for rows = %d, dim = %d", kernel, rows, dim))
	}
	if len(q) != qLen || len(out) != qLen {
		panic(fmt.Sprintf("kernels.%s: len(out) = %d, len(q) = %d, want rows·dim = %d·%d = %d", kernel, len(out), len(q), rows, dim, qLen))
	}
	return checkRowsSpan(kernel, "stride", kLen, vLen, perElem, n, dim, stride, packed)
}

// checkRowsSpan panics unless k and v (kLen, vLen elements) hold n rows of dim values,
// perElem to an element, stride apart (named strideName in the message): exactly
// (packed), or at least, as in BLAS; and returns the elements the rows span.
func checkRowsSpan(kernel, strideName string, kLen, vLen, perElem, n, dim, stride int, packed bool) int {
	span, ok := 0, true // n = 0: no row
	if n > 0 {
		span, ok = stridedSpan(n, dim/perElem, stride/perElem)
	}
	if !ok || kLen < span || vLen < span || (packed && (kLen != span || vLen != span)) {
		want := "(n−1)·" + strideName + " + dim"
		if packed {
			want = "n·dim"
		}
		if perElem > 1 {
			want = "(" + want + ")/32 blocks"
		}
		panic(fmt.Sprintf("kernels.%s: len(k) = %d, len(v) = %d, want %s = %d for n = %d, dim = %d, %s = %d",
			kernel, kLen, vLen, want, span, n, dim, strideName, stride))
	}
	return span
}

func multipleOf(perElem int) string {
	if perElem == 1 {
		return ""
	}
	return fmt.Sprintf(", dim and stride multiples of %d", perElem)
}

// attendFormat is what the fused attention needs of a cache format: its checked
// Scores and WeightedSumRows (the composition, for rows that need it), the
// accumulating weighted sum of several rows, its elements per value, and, for
// settling, the float64 reading of value d of row j of rows stride values apart and
// the bound of a finite value's magnitude (settleScores' keyMax).
type attendFormat[E any] struct {
	perElem  int
	scores   func(dst, q []float32, k, ahead []E, rows, n, dim, stride int, scale float32)
	weighted func(dst, w []float32, v []E, stride int)
	add      func(dst, w []float32, v, ahead []E, rows, n, stride int)
	race     func(k, v []E)
	at       func(x []E, j, d, stride int) float64
	keyMax   float64
}

// formatRows are rows of E stride values apart, read for settling (keyRows).
type formatRows[E any] struct {
	f      *attendFormat[E]
	x      []E
	stride int
}

func (r formatRows[E]) at(j, d int) float64 { return r.f.at(r.x, j, d, r.stride) }

var (
	attendFP16 = attendFormat[Float16]{
		perElem: 1, scores: scoresStrided, weighted: weightedSumRowsStrided,
		add: func(dst, w []float32, v, ahead []Float16, rows, n, stride int) {
			weightedSumRowsAdd.Call(dst, w, fp16.Bits(v), fp16.Bits(ahead), rows, n, stride)
		},
		race:   func(k, v []Float16) { race.Read(k); race.Read(v) },
		at:     func(x []Float16, j, d, stride int) float64 { return rowsF16{fp16.Bits(x), stride}.at(j, d) },
		keyMax: maxF16,
	}
	attendBF16 = attendFormat[bf16.BFloat16]{
		perElem: 1, scores: scoresStridedBF16, weighted: weightedSumRowsStridedBF16,
		add: func(dst, w []float32, v, ahead []bf16.BFloat16, rows, n, stride int) {
			weightedSumRowsAddBF16.Call(dst, w, bf16.Bits(v), bf16.Bits(ahead), rows, n, stride)
		},
		race:   func(k, v []bf16.BFloat16) { race.Read(k); race.Read(v) },
		at:     func(x []bf16.BFloat16, j, d, stride int) float64 { return rowsBF16{bf16.Bits(x), stride}.at(j, d) },
		keyMax: maxBF16,
	}
	attendQ8 = attendFormat[q8.Block]{
		perElem: q8.BlockLen, scores: scoresStridedQ8, weighted: weightedSumRowsStridedQ8,
		add: func(dst, w []float32, v, ahead []q8.Block, rows, n, stride int) {
			weightedSumRowsAddQ8.Call(dst, w, q8.Bytes(v), q8.Bytes(ahead), rows, n, stride/q8.BlockLen)
		},
		race: func(k, v []q8.Block) { race.Read(k); race.Read(v) },
		at: func(x []q8.Block, j, d, stride int) float64 {
			return rowsQ8{q8.Bytes(x), stride / q8.BlockLen}.at(j, d)
		},
		keyMax: maxQ8,
	}
)

// attend runs the checked kernel: k and v hold exactly the span of the n rows.
func attend[E any](f *attendFormat[E], out, q []float32, k, v []E, rows, n, dim, stride int, scale float32) {
	if rows == 0 {
		return
	}
	race.Read(q)
	race.Write(out)
	st := attendStates.Get().(*AttendState)
	st.Reset(rows, dim)
	attendPartial(f, st, q, k, v, n, stride, scale)
	finishAttend(f, st, out, q, k, v, n, stride, scale)
	attendStates.Put(st)
}

// finishAttend writes st's output to out, then computes again, by the composition,
// the rows whose output is not finite; k and v are the n rows st has seen.
func finishAttend[E any](f *attendFormat[E], st *AttendState, out, q []float32, k, v []E, n, stride int, scale float32) {
	st.Finish(out)
	dim := st.dim
	for i := range st.rows {
		o := out[i*dim : (i+1)*dim]
		if s := sumOf.Call(o); s-s == 0 {
			continue
		}
		st.row = growN(st.row, n)
		s := st.row
		f.scores(s, q[i*dim:(i+1)*dim], k, nil, 1, n, dim, stride, scale)
		softmax.Call(s)
		f.weighted(o, s, v, stride)
	}
}

var attendStates = sync.Pool{New: func() any { return new(AttendState) }}

// AttendState is the partial state of the fused attention of rows query rows over the
// keys seen so far, which [AttendPartial] extends, [AttendState.Merge] combines with
// another part's, and [AttendState.Finish] turns into the output: per row the running
// maximum m of the scores, the sum l of the weights wⱼ = 2²⁴·exp(sⱼ − m), and the
// weighted sum Σⱼ wⱼ·vⱼ (2²⁴ keeps small weights out of float32's subnormal range; it
// cancels in Finish). While a row has seen only −Inf scores its weights are 2²⁴ each,
// the limit of equal scores, so that such a row ends as the mean of its values, as
// Softmax's uniform row; a row with a NaN or +Inf score has m = NaN and ends all NaN.
//
// An engine splits one head's keys into parts (goroutines, or pages of its cache),
// runs AttendPartial on each with a state of its own, merges them in any order and
// finishes once: the result meets Attend's bound with E increased by 4u per merge.
// Special values follow Attend's rules, except that a part has no composition to
// fall back on: an output that comes out NaN or ±Inf may differ from the
// composition's where an Inf or NaN value meets a weight that underflows (0·Inf is
// NaN, a tiny weight times Inf is Inf) or where Σ wⱼ·vⱼ overflows; recompute such rows
// with Attend over the whole head (snapkv's Cache.Attend does).
//
// The zero AttendState is ready for Reset; a state reuses its storage, so steady-state
// use allocates nothing.
type AttendState struct {
	rows, dim int
	max       []float32 // per row; −Inf before a finite score, NaN after a NaN or +Inf
	sum       []float64 // per row, Σ wⱼ
	acc       []float32 // [rows][dim], Σ wⱼ·vⱼ
	weights   []float32 // [rows][attendBlock]: a block's scores, then its weights
	row       []float32 // the composition's score row, for Attend's fallback
	tables    rowTables // the paged forms' row addresses
}

// Reset empties the state for rows query rows of dim values.
func (st *AttendState) Reset(rows, dim int) {
	if rows < 0 || dim < 1 {
		panic(fmt.Sprintf("kernels.AttendState.Reset: rows = %d, dim = %d, want rows ≥ 0 and dim ≥ 1", rows, dim))
	}
	size, ok := mulSize(rows, dim)
	if !ok {
		panic(fmt.Sprintf("kernels.AttendState.Reset: rows·dim overflows int for rows = %d, dim = %d", rows, dim))
	}
	st.rows, st.dim = rows, dim
	st.max = growN(st.max, rows)
	st.sum = growN(st.sum, rows)
	st.acc = growN(st.acc, size)
	for i := range st.max {
		st.max[i] = float32(math.Inf(-1))
	}
	clear(st.sum)
	clear(st.acc)
}

func growN[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// Rows is the number of query rows the state holds, Dim their length.
func (st *AttendState) Rows() int { return st.rows }

// Dim is the length of the state's query and output rows.
func (st *AttendState) Dim() int { return st.dim }

// AttendPartial adds n fp16 keys and values, stride ≥ dim elements apart (dim for
// packed rows), to st's rows (q is [st.Rows()][st.Dim()]): the step of [Attend] over a
// part of a head's keys. See [AttendState] for the merge and the output.
//
//	for i, j { s := scale·qᵢ·kⱼ; if s > mᵢ { rescale row i to mᵢ = s }; w := 2²⁴·exp(s − mᵢ); lᵢ += w; accᵢ += w·vⱼ }
//
// It panics on the conditions of AttendStrided (with rows and dim from st): with n = 0
// it reads nothing and takes k and v of any length (a part of a head's rows that is
// empty, k and v the rest of the head).
func AttendPartial(st *AttendState, q []float32, k, v []Float16, n, stride int, scale float32) {
	checkPartialQueries("AttendPartial", st, q)
	span := checkAttendArgs("AttendPartial", st.acc, q, len(k), len(v), 1, st.rows, n, st.dim, stride, false)
	attendPartial(&attendFP16, st, q, k[:span], v[:span], n, stride, scale)
}

// AttendPartialBF16 is [AttendPartial] over bfloat16 keys and values.
func AttendPartialBF16(st *AttendState, q []float32, k, v []bf16.BFloat16, n, stride int, scale float32) {
	checkPartialQueries("AttendPartialBF16", st, q)
	span := checkAttendArgs("AttendPartialBF16", st.acc, q, len(k), len(v), 1, st.rows, n, st.dim, stride, false)
	attendPartial(&attendBF16, st, q, k[:span], v[:span], n, stride, scale)
}

// AttendPartialQ8 is [AttendPartial] over q8_0 keys and values (dim and stride count
// values, multiples of 32).
func AttendPartialQ8(st *AttendState, q []float32, k, v []q8.Block, n, stride int, scale float32) {
	checkPartialQueries("AttendPartialQ8", st, q)
	span := checkAttendArgs("AttendPartialQ8", st.acc, q, len(k), len(v), q8.BlockLen, st.rows, n, st.dim, stride, false)
	attendPartial(&attendQ8, st, q, k[:span], v[:span], n, stride, scale)
}

// checkPartialQueries panics unless q holds the state's rows, so that checkAttendArgs,
// given the state's sums as out, has only k and v left to blame.
func checkPartialQueries(kernel string, st *AttendState, q []float32) {
	if len(q) != len(st.acc) {
		panic(fmt.Sprintf("kernels.%s: len(q) = %d, want Rows·Dim = %d·%d = %d", kernel, len(q), st.rows, st.dim, len(st.acc)))
	}
}

// attendPartial runs the blocks; k and v hold exactly the span of the n rows.
func attendPartial[E any](f *attendFormat[E], st *AttendState, q []float32, k, v []E, n, stride int, scale float32) {
	rows, dim := st.rows, st.dim
	if rows == 0 || n == 0 {
		return
	}
	race.Read(q)
	f.race(k, v)
	st.weights = growN(st.weights, rows*attendBlock)
	passes := attendPasses.Call
	se, de := stride/f.perElem, dim/f.perElem // elements of E
	for j0 := 0; j0 < n; j0 += attendBlock {
		b := min(attendBlock, n-j0)
		span := (b-1)*se + de
		// The next block's keys, which the weighted sums prefetch while the block's
		// values stream from cache, as scoring prefetches the values: both phases
		// keep a stream from memory in flight. Only rows stride apart: packed ones
		// the hardware prefetchers follow. A shorter last block is not prefetched.
		var next []E
		if n-j0-b >= b && se != de {
			next = k[(j0+b)*se:][:span]
		}
		attendBlockOf(f, st, passes, q, k[j0*se:][:span], v[j0*se:][:span], next, b, stride, scale)
	}
}

// attendBlockOf adds one block of b keys and values (kb, vb, their span) to st's rows,
// prefetching next (nil, or b rows laid out as kb's) as it adds the values.
func attendBlockOf[E any](f *attendFormat[E], st *AttendState, passes softmaxPasses, q []float32, kb, vb, next []E, b, stride int, scale float32) {
	rows, dim := st.rows, st.dim
	s := st.weights[:rows*b]
	f.scores(s, q, kb, vb, rows, b, dim, stride, scale)
	// Lay the rows attendBlock apart, as weightedSumRowsAdd reads them; the last
	// row first, since a row moves up over the rows after it.
	for i := rows - 1; i > 0 && b < attendBlock; i-- {
		copy(st.weights[i*attendBlock:][:b], st.weights[i*b:][:b])
	}
	for i := range rows {
		st.blockWeights(passes, i, st.weights[i*attendBlock:][:b])
	}
	for i := 0; i < rows; i += attendRows {
		r := min(attendRows, rows-i)
		f.add(st.acc[i*dim:(i+r)*dim], st.weights[i*attendBlock:(i+r-1)*attendBlock+b], vb, next, r, b, stride)
		next = nil // prefetched once
	}
}

// blockWeights turns row i's scores x of one block into its weights, in place,
// against the row's running maximum, rescaling the row's sums first if the block
// raises it.
func (st *AttendState) blockWeights(p softmaxPasses, i int, x []float32) {
	const one = 0x1p24 // the weight of a score equal to the maximum
	m := st.max[i]
	if m != m { // a NaN or +Inf score came before: the row ends NaN whatever it adds
		st.setNaN(i, x)
		return
	}
	mb, lo := p.maxMin(x)
	switch {
	case mb != mb || mb > math.MaxFloat32:
		st.setNaN(i, x)
		return
	case mb < -math.MaxFloat32: // only −Inf scores in the block, or NaNs among them
		switch {
		case hasNaN(x):
			st.setNaN(i, x)
		case m < -math.MaxFloat32: // and before: equal weights, the uniform limit
			setAll(x, one)
			st.sum[i] += float64(len(x)) * one
		default:
			clear(x)
		}
		return
	case mb > m:
		// exp(−Inf) = 0 drops a uniform start, as Softmax ignores −Inf beside finite
		// scores; 0·Inf in the sum of values is NaN, as in the composition.
		c := float32(math.Exp(float64(m) - float64(mb)))
		st.sum[i] *= float64(c)
		p.scale(st.acc[i*st.dim:(i+1)*st.dim], c)
		st.max[i], m = mb, mb
	}
	if l := p.expSum(x, m, lo); l == l {
		st.sum[i] += l
	} else { // a NaN score, which maxMin may pass over
		st.setNaN(i, x)
	}
}

// setNaN marks row i as having seen a NaN or +Inf score, and zeroes the block's
// weights x so that the row's sums take nothing more.
func (st *AttendState) setNaN(i int, x []float32) {
	st.max[i] = float32(math.NaN())
	clear(x)
}

// Merge adds o's keys to st's: afterwards st is the state of both parts, as if one
// AttendPartial had seen them all (within the rounding that [AttendState] states). It
// panics unless both hold the same rows and dim; o is left as it was.
func (st *AttendState) Merge(o *AttendState) {
	if st.rows != o.rows || st.dim != o.dim {
		panic(fmt.Sprintf("kernels.AttendState.Merge: %d rows of dim %d into %d rows of dim %d, want equal shapes",
			o.rows, o.dim, st.rows, st.dim))
	}
	p := attendPasses.Call
	for i := range st.rows {
		a, b := st.max[i], o.max[i]
		acc, oacc := st.acc[i*st.dim:(i+1)*st.dim], o.acc[i*st.dim:(i+1)*st.dim]
		switch {
		case a != a || b != b:
			st.max[i] = float32(math.NaN())
			continue
		case a == b: // equal maxima, or both parts uniform (−Inf): add
			st.sum[i] += o.sum[i]
			p.add(acc, oacc)
			continue
		case a < b: // st's part rescaled to o's maximum
			c := float32(math.Exp(float64(a) - float64(b)))
			st.sum[i] = st.sum[i]*float64(c) + o.sum[i]
			p.scale(acc, c)
			p.add(acc, oacc)
			st.max[i] = b
		default: // o's part rescaled to st's maximum
			c := float32(math.Exp(float64(b) - float64(a)))
			st.sum[i] += o.sum[i] * float64(c)
			p.scaleAdd(acc, oacc, c)
		}
	}
}

// Finish writes the attention output of the state's rows to out, [Rows()][Dim()]:
// each row's weighted sum divided by its sum of weights; zeros for a row that saw no
// keys and NaN for a row that saw a NaN or +Inf score. The state is left as it was.
func (st *AttendState) Finish(out []float32) {
	if len(out) != st.rows*st.dim {
		panic(fmt.Sprintf("kernels.AttendState.Finish: len(out) = %d, want Rows·Dim = %d·%d = %d",
			len(out), st.rows, st.dim, st.rows*st.dim))
	}
	race.Write(out)
	p := attendPasses.Call
	for i := range st.rows {
		o := out[i*st.dim : (i+1)*st.dim]
		switch m, l := st.max[i], st.sum[i]; {
		case m != m:
			setAll(o, float32(math.NaN()))
		case l == 0:
			clear(o)
		default:
			copy(o, st.acc[i*st.dim:(i+1)*st.dim])
			p.scale(o, float32(1/l))
		}
	}
}
