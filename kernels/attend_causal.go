package kernels

import (
	"fmt"
	"math/bits"
	"sync"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/race"
	"github.com/kvsimd/kvsimd/q8"
)

// The fused causal (prefill) attention. Query positions are taken a tile at a time,
// CausalTile(rows) positions of rows query rows each (64 rows), and each tile runs
// flash attention over the keys its rows see, a block of causalBlock keys at a time:
// the scores S = scale·Q·Kᵀ of the tile's rows against the block become weights P
// against each row's running maximum (AttendState's online softmax), and P·V is added
// to the rows' sums. Both products reuse each key and value of the block for all 64
// rows, so they run at matrix-product speed:
//
//   - amd64 (avx2, avx512): S on gemmScaled and P·V on gemmAdd, float32
//     register-tiled products, the keys transposed once a call ([dim][n], n·dim
//     elements of workspace), keys and values widened a block at a time for a group
//     of causalGroup tiles;
//   - neon and generic: both on the variant's Scores kernel, P·V as the score block
//     of P against the values transposed once a call, one "key" per value column.
//
// The transposition is a small part of the work: the call does m·rows times more
// arithmetic than it.
//
// Tiles are absolute: position p lies in the tile that starts at P = T·⌊p/T⌋ whatever
// m, n and the call's first query are, and a row's keys are split the same way for
// every call: the keys 0 … P that every row of the tile sees, in blocks of causalBlock
// from key 0, then the diagonal P+1 … p, scored for the whole tile and weighted only
// over each row's own prefix. So a row's bits depend on its position, its rows and
// keys, the tile size and, in the tile where the keys end (n), on n (the diagonal is
// that much narrower), not on how an engine splits the queries among goroutines at
// multiples of CausalTile(rows) (snapkv's PrefillAttend does).

// causalTileRows is the most query rows of a tile: the panel kernels score 64 rows
// of dim 128 with each widened key (panelFloats), and 64 rows of weights times the
// transposed values fill the same panels; on gemmAdd, 128 rows measured the same.
const causalTileRows = 64

// causalBlock is the keys of a block: as many as the scores' panels take at dim 128
// (panelFits), and on the gemmAdd path a block of keys and one of values, widened,
// fit the L2 (256 KiB at dim 128) with the tile's weights.
const causalBlock = 256

// causalGroup is how many consecutive tiles share each block of keys and values on
// the gemmAdd path, widened once for all of them rather than once a tile.
const causalGroup = 4

// CausalTile is the number of query positions in a tile of AttendCausal's over rows
// query rows per position: the largest power of two with rows·T ≤ 64, at least 1.
// A caller that splits one call's queries among goroutines gets the bits of the
// single call by splitting at multiples of CausalTile(rows) positions, counted from
// position 0 of the keys.
func CausalTile(rows int) int {
	t := 1
	for 2*t*max(rows, 1) <= causalTileRows {
		t *= 2
	}
	return t
}

// AttendCausal is the causal attention of a prompt chunk for one KV head's rows query
// heads: the queries are the last m of n positions (0 ≤ m ≤ n), query position i is
// position n−m+i and sees keys 0 … n−m+i. q and out are [rows][m][dim] (a KV head's
// query heads of a head-major Q [QHeads][m][dim]), k and v are [n][dim]. Each output
// row is the composition over its visible keys:
//
//	for g := 0; g < rows; g++ {
//		for i := 0; i < m; i++ {
//			p := n - m + i
//			r := (g*m + i) * dim
//			s := make([]float32, p+1)
//			Scores(s, q[r:r+dim], k[:(p+1)*dim], 1, p+1, dim, scale)
//			Softmax(s)
//			WeightedSumRows(out[r:r+dim], s, v[:(p+1)*dim])
//		}
//	}
//
// fused: each key and value block is read once per tile of CausalTile(rows)
// positions for all rows query heads, and both products run as matrix products (see
// the comment at the top of attend_causal.go). m == n is a whole prompt; m < n a
// later chunk over everything before it.
//
// It panics unless dim ≥ 1, rows ≥ 0, 0 ≤ m ≤ n, len(q) == len(out) == rows·m·dim and
// len(k) == len(v) == n·dim. out must not overlap q, k or v.
//
// Error bound: [Attend]'s for a row of p+1 keys, with E = (2(p+1) + ⌈(p+1)/256⌉ + 20)·u:
// each block's P·V is a chain of fused multiply-adds (2·b·u per term over its b keys,
// as the weighted sums' bound) added to the row's sums, and the diagonal adds one
// block; each score is a chain over dim then scaled, within Scores' bound.
//
// Special values give the composition's answer on every variant, as Attend's: a row
// whose output is NaN or ±Inf is computed again by the composition above. It
// allocates nothing in steady state (its workspace, the transposed values among it, is
// pooled).
func AttendCausal(out, q []float32, k, v []Float16, rows, m, n, dim int, scale float32) {
	checkCausalArgs("AttendCausal", out, q, len(k), len(v), 1, rows, m, n, dim, 0, dim)
	attendCausal(&causalFP16, out, q, k, v, rows, m, n, dim, m*dim, dim, dim, scale)
}

// AttendCausalBF16 is [AttendCausal] over bfloat16 keys and values; its bound is
// AttendCausal's.
func AttendCausalBF16(out, q []float32, k, v []bf16.BFloat16, rows, m, n, dim int, scale float32) {
	checkCausalArgs("AttendCausalBF16", out, q, len(k), len(v), 1, rows, m, n, dim, 0, dim)
	attendCausal(&causalBF16, out, q, k, v, rows, m, n, dim, m*dim, dim, dim, scale)
}

// AttendCausalQ8 is [AttendCausal] over q8_0 keys and values: dim is a multiple of 32
// and k and v hold n·dim/32 blocks. Each value block's scale multiplies the weights
// before the values' integers do, one more rounding per term: E grows by (p+1)·u.
func AttendCausalQ8(out, q []float32, k, v []q8.Block, rows, m, n, dim int, scale float32) {
	checkCausalArgs("AttendCausalQ8", out, q, len(k), len(v), q8.BlockLen, rows, m, n, dim, 0, dim)
	attendCausal(&causalQ8, out, q, k, v, rows, m, n, dim, m*dim, dim, dim, scale)
}

// AttendCausalStrided is [AttendCausal] for one KV head of a token-major layer: query
// row g of position i is q[i*qStride+g*dim:][:dim] (out likewise), key and value j are
// k[j*kvStride:][:dim] and v[j*kvStride:][:dim]. For KV head h of Q [m][QHeads][dim]
// and K, V [n][KVHeads][dim]: q = Q[h*rows*dim:], qStride = QHeads·dim, k = K[h*dim:],
// kvStride = KVHeads·dim. The elements between rows are neither read nor written.
//
//	for g, i { r := i*qStride + g*dim; the composition of AttendCausal over k, v with ScoresStrided, WeightedSumRowsStrided }
//
// As in BLAS, the last row needs only its own elements: it panics unless
// qStride ≥ rows·dim, kvStride ≥ dim, len(q), len(out) ≥ (m−1)·qStride + rows·dim and
// len(k), len(v) ≥ (n−1)·kvStride + dim (for m, n, rows ≥ 1), besides AttendCausal's
// conditions on rows, m, n and dim. The strides change only addresses: the results
// are AttendCausal's bits for the same rows.
func AttendCausalStrided(out, q []float32, k, v []Float16, rows, m, n, dim, qStride, kvStride int, scale float32) {
	span := checkCausalArgs("AttendCausalStrided", out, q, len(k), len(v), 1, rows, m, n, dim, qStride, kvStride)
	attendCausal(&causalFP16, out, q, k[:span], v[:span], rows, m, n, dim, dim, qStride, kvStride, scale)
}

// AttendCausalStridedBF16 is [AttendCausalStrided] over bfloat16 keys and values.
func AttendCausalStridedBF16(out, q []float32, k, v []bf16.BFloat16, rows, m, n, dim, qStride, kvStride int, scale float32) {
	span := checkCausalArgs("AttendCausalStridedBF16", out, q, len(k), len(v), 1, rows, m, n, dim, qStride, kvStride)
	attendCausal(&causalBF16, out, q, k[:span], v[:span], rows, m, n, dim, dim, qStride, kvStride, scale)
}

// AttendCausalStridedQ8 is [AttendCausalStrided] over q8_0 keys and values: dim and
// kvStride count values and are multiples of 32, and k and v hold the
// (n−1)·kvStride/32 + dim/32 blocks the rows span.
func AttendCausalStridedQ8(out, q []float32, k, v []q8.Block, rows, m, n, dim, qStride, kvStride int, scale float32) {
	span := checkCausalArgs("AttendCausalStridedQ8", out, q, len(k), len(v), q8.BlockLen, rows, m, n, dim, qStride, kvStride)
	attendCausal(&causalQ8, out, q, k[:span], v[:span], rows, m, n, dim, dim, qStride, kvStride, scale)
}

// AttendCausalHeads is the causal attention of a whole token-major layer at once: q
// and out are [m][heads·rows][dim] (Q of QHeads = heads·rows query heads, query head
// h·rows+g attending to KV head h), k and v are [n][heads][dim]. It is the loop
//
//	for h := 0; h < heads; h++ {
//		AttendCausalStrided(out[h*rows*dim:], q[h*rows*dim:], k[h*dim:], v[h*dim:],
//			rows, m, n, dim, heads*rows*dim, heads*dim, scale)
//	}
//
// with its bits (the last rows' slices cut to their span). It panics unless heads,
// rows ≥ 0, dim ≥ 1, 0 ≤ m ≤ n, len(q) == len(out) == m·heads·rows·dim and
// len(k) == len(v) == n·heads·dim.
func AttendCausalHeads(out, q []float32, k, v []Float16, heads, rows, m, n, dim int, scale float32) {
	checkCausalHeadsArgs("AttendCausalHeads", out, q, len(k), len(v), 1, heads, rows, m, n, dim)
	attendCausalHeads(&causalFP16, out, q, k, v, heads, rows, m, n, dim, scale)
}

// AttendCausalHeadsBF16 is [AttendCausalHeads] over bfloat16 keys and values.
func AttendCausalHeadsBF16(out, q []float32, k, v []bf16.BFloat16, heads, rows, m, n, dim int, scale float32) {
	checkCausalHeadsArgs("AttendCausalHeadsBF16", out, q, len(k), len(v), 1, heads, rows, m, n, dim)
	attendCausalHeads(&causalBF16, out, q, k, v, heads, rows, m, n, dim, scale)
}

// AttendCausalHeadsQ8 is [AttendCausalHeads] over q8_0 keys and values (dim a
// multiple of 32; k and v hold n·heads·dim/32 blocks).
func AttendCausalHeadsQ8(out, q []float32, k, v []q8.Block, heads, rows, m, n, dim int, scale float32) {
	checkCausalHeadsArgs("AttendCausalHeadsQ8", out, q, len(k), len(v), q8.BlockLen, heads, rows, m, n, dim)
	attendCausalHeads(&causalQ8, out, q, k, v, heads, rows, m, n, dim, scale)
}

// checkCausalArgs panics unless an AttendCausal kernel's conditions hold, for q and
// out head-major (qStride 0: exactly rows·m·dim) or token-major qStride apart, and
// keys and values of dim values held perElem to an element, kvStride apart (kvStride
// == dim and qStride == 0: the packed form, whose k and v hold exactly the rows). It
// returns the elements of k and v the n rows span.
func checkCausalArgs(kernel string, out, q []float32, kLen, vLen, perElem, rows, m, n, dim, qStride, kvStride int) int {
	packed := qStride == 0
	if dim < 1 || rows < 0 || m < 0 || n < m || kvStride < dim || dim%perElem != 0 || kvStride%perElem != 0 ||
		(!packed && qStride < rows*dim) {
		want := "rows ≥ 0, 0 ≤ m ≤ n and 1 ≤ dim ≤ kvStride"
		if !packed {
			want = "rows ≥ 0, 0 ≤ m ≤ n, 1 ≤ dim ≤ kvStride and qStride ≥ rows·dim"
		}
		panic(fmt.Sprintf("kernels.%s: rows = %d, m = %d, n = %d, dim = %d, qStride = %d, kvStride = %d, want %s%s",
			kernel, rows, m, n, dim, qStride, kvStride, want, multipleOf(perElem)))
	}
	var qLen int
	var ok bool
	if packed {
		qLen, ok = mulSize(rows, m)
		if ok {
			qLen, ok = mulSize(qLen, dim)
		}
	} else if m > 0 && rows > 0 {
		qLen, ok = stridedSpan(m, rows*dim, qStride)
	} else {
		ok = true
	}
	if !ok {
		panic(fmt.Sprintf("kernels.%s: the queries' length overflows int for rows = %d, m = %d, dim = %d, qStride = %d", kernel, rows, m, dim, qStride))
	}
	if packed && (len(q) != qLen || len(out) != qLen) {
		panic(fmt.Sprintf("kernels.%s: len(out) = %d, len(q) = %d, want rows·m·dim = %d·%d·%d = %d", kernel, len(out), len(q), rows, m, dim, qLen))
	}
	if !packed && (len(q) < qLen || len(out) < qLen) {
		panic(fmt.Sprintf("kernels.%s: len(out) = %d, len(q) = %d, want ≥ (m−1)·qStride + rows·dim = %d", kernel, len(out), len(q), qLen))
	}
	return checkRowsSpan(kernel, "kvStride", kLen, vLen, perElem, n, dim, kvStride, packed)
}

// checkCausalHeadsArgs panics unless an AttendCausalHeads kernel's conditions hold.
func checkCausalHeadsArgs(kernel string, out, q []float32, kLen, vLen, perElem, heads, rows, m, n, dim int) {
	if heads < 0 || rows < 0 || m < 0 || n < m || dim < 1 || dim%perElem != 0 {
		panic(fmt.Sprintf("kernels.%s: heads = %d, rows = %d, m = %d, n = %d, dim = %d, want heads, rows ≥ 0, 0 ≤ m ≤ n and dim ≥ 1%s",
			kernel, heads, rows, m, n, dim, multipleOf(perElem)))
	}
	token, ok := mulSize(heads, dim)
	query, ok2 := mulSize(token, rows)
	qLen, ok3 := mulSize(query, m)
	kv, ok4 := mulSize(token, n)
	if !ok || !ok2 || !ok3 || !ok4 {
		panic(fmt.Sprintf("kernels.%s: m·heads·rows·dim or n·heads·dim overflows int for heads = %d, rows = %d, m = %d, n = %d, dim = %d",
			kernel, heads, rows, m, n, dim))
	}
	if len(q) != qLen || len(out) != qLen {
		panic(fmt.Sprintf("kernels.%s: len(out) = %d, len(q) = %d, want m·heads·rows·dim = %d·%d·%d·%d = %d",
			kernel, len(out), len(q), m, heads, rows, dim, qLen))
	}
	if kLen != kv/perElem || vLen != kv/perElem {
		want := "n·heads·dim"
		if perElem > 1 {
			want = "(n·heads·dim)/32 blocks"
		}
		panic(fmt.Sprintf("kernels.%s: len(k) = %d, len(v) = %d, want %s = %d for n = %d, heads = %d, dim = %d",
			kernel, kLen, vLen, want, kv/perElem, n, heads, dim))
	}
}

// attendCausalHeads runs the checked whole-layer form, one KV head after another.
func attendCausalHeads[E any](f *causalFormat[E], out, q []float32, k, v []E, heads, rows, m, n, dim int, scale float32) {
	if rows == 0 || m == 0 {
		return
	}
	qStride, kvStride := heads*rows*dim, heads*dim
	qSpan := (m-1)*qStride + rows*dim
	kvSpan := ((n-1)*kvStride + dim) / f.perElem
	for h := range heads {
		g, kh := h*rows*dim, h*dim/f.perElem
		attendCausal(f, out[g:g+qSpan], q[g:g+qSpan], k[kh:kh+kvSpan], v[kh:kh+kvSpan],
			rows, m, n, dim, dim, qStride, kvStride, scale)
	}
}

// causalFormat is what the causal attention needs of a cache format beyond the decode
// attention's. On variants with a float32 product kernel (gemmAdd: avx2, avx512) the
// tile's products multiply float32 blocks: the keys transposed once a call and
// widened a block at a time, the values widened a block at a time. Elsewhere (neon,
// generic) both products run on the Scores kernel, the values transposed as its keys.
type causalFormat[E any] struct {
	*attendFormat[E]
	// transposeKeys lays keys 0 … n−1 (stride apart, in elements of E) into w as
	// [dim][n] columns, and widenKeys writes columns j0 … j0+b−1 of them as float32
	// into dst [dim][pitch].
	transposeKeys func(w *causalWork, k []E, n, dim, stride int)
	widenKeys     func(w *causalWork, dst []float32, j0, b, pitch, n, dim int)
	// widenValues writes b values (their span, stride values apart) as float32 into
	// dst [b][dim].
	widenValues func(dst []float32, v []E, b, dim, stride int)
	// transposeValues lays values 0 … n−1 into w as [dim][n] columns, and product
	// writes dst [rows][dim] = p [rows][b] · values j0 … j0+b−1 from them.
	transposeValues func(w *causalWork, v []E, n, dim, stride int)
	product         func(w *causalWork, dst, p []float32, rows, j0, b, n, dim int)
}

// gemmAdd is the variant's float32 product-accumulate, c[i*ldc+j] += Σₚ
// a[i*lda+p]·b[p*ldb+j] with n a multiple of gemmLanes (asm.GemmAdd*), or nil.
var gemmAdd = dispatch.New[func(c, a, b []float32, m, n, k, lda, ldb, ldc int)](nil)

// gemmScaled is the variant's scaled float32 product, c[i*ldc+j] = s·Σₚ
// a[i*lda+p]·b[p*ldb+j], the bits of gemmAdd into zeros and then a multiply by s
// (asm.GemmScaled*), or nil where gemmAdd is.
var gemmScaled = dispatch.New[func(c, a, b []float32, m, n, k, lda, ldb, ldc int, s float32)](nil)

// gemmLanes is what gemmAdd's n must be a multiple of on every variant that has one.
const gemmLanes = 16

// causalWork is one call's workspace, pooled.
type causalWork struct {
	tiles [causalGroup]causalTile
	s     []float32 // a tile's scores against a block, then its weights
	ot    []float32 // a tile's outputs, [rows·T][dim] in position-major order
	pv    []float32 // a block's P·V, [rows·T][dim] (the Scores path)
	// The keys or values transposed, [dim][n]: fp16 (q8_0's integers as fp16 on the
	// Scores path), bfloat16, or q8_0's keys widened.
	t16  []Float16
	tBF  []bf16.BFloat16
	tF32 []float32
	// A block's keys transposed and values, widened (the gemmAdd path), the keys'
	// rows pitch apart.
	kb, vb []float32
	pitch  int
	vScale []float32 // q8_0: the values' block scales, [n][dim/32]
	pq     []float32 // q8_0: the weights times one block column's scales
	pqOut  []float32 // q8_0: P·V of one block column, [rows·T][32]
	row    []float32 // q8_0: one key widened
}

// causalTile is one tile of query positions lo … hi−1 (p0 the tile's first, which
// may precede lo): its query rows, [rows·T][dim] in position-major order, and its
// online-softmax state.
type causalTile struct {
	lo, hi, p0 int
	qt         []float32
	st         AttendState
	// settle: the tile's scores on the gemmAdd path may overflow float32 and need
	// settling (not scoresCannotOverflow for its queries).
	settle bool
}

var causalWorks = sync.Pool{New: func() any { return new(causalWork) }}

var (
	causalFP16 = causalFormat[Float16]{
		attendFormat: &attendFP16,
		transposeKeys: func(w *causalWork, k []Float16, n, dim, stride int) {
			w.t16 = growN(w.t16, n*dim)
			transposeRows(w.t16, k, n, dim, stride)
		},
		widenKeys: func(w *causalWork, dst []float32, j0, b, pitch, n, dim int) {
			for d := range dim {
				fp16.ToFloat32(dst[d*pitch:][:b], w.t16[d*n+j0:][:b])
			}
		},
		widenValues: func(dst []float32, v []Float16, b, dim, stride int) {
			if stride == dim {
				fp16.ToFloat32(dst[:b*dim], v[:b*dim])
				return
			}
			for j := range b {
				fp16.ToFloat32(dst[j*dim:][:dim], v[j*stride:][:dim])
			}
		},
		transposeValues: func(w *causalWork, v []Float16, n, dim, stride int) {
			w.t16 = growN(w.t16, n*dim)
			transposeRows(w.t16, v, n, dim, stride)
		},
		product: func(w *causalWork, dst, p []float32, rows, j0, b, n, dim int) {
			scoresAhead.Call(dst, p, fp16.Bits(w.t16[j0:(dim-1)*n+j0+b]), nil, rows, dim, b, n, 1)
		},
	}
	causalBF16 = causalFormat[bf16.BFloat16]{
		attendFormat: &attendBF16,
		transposeKeys: func(w *causalWork, k []bf16.BFloat16, n, dim, stride int) {
			w.tBF = growN(w.tBF, n*dim)
			transposeRows(w.tBF, k, n, dim, stride)
		},
		widenKeys: func(w *causalWork, dst []float32, j0, b, pitch, n, dim int) {
			for d := range dim {
				bf16.ToFloat32(dst[d*pitch:][:b], w.tBF[d*n+j0:][:b])
			}
		},
		widenValues: func(dst []float32, v []bf16.BFloat16, b, dim, stride int) {
			if stride == dim {
				bf16.ToFloat32(dst[:b*dim], v[:b*dim])
				return
			}
			for j := range b {
				bf16.ToFloat32(dst[j*dim:][:dim], v[j*stride:][:dim])
			}
		},
		transposeValues: func(w *causalWork, v []bf16.BFloat16, n, dim, stride int) {
			w.tBF = growN(w.tBF, n*dim)
			transposeRows(w.tBF, v, n, dim, stride)
		},
		product: func(w *causalWork, dst, p []float32, rows, j0, b, n, dim int) {
			scoresAheadBF16.Call(dst, p, bf16.Bits(w.tBF[j0:(dim-1)*n+j0+b]), nil, rows, dim, b, n, 1)
		},
	}
	causalQ8 = causalFormat[q8.Block]{
		attendFormat:  &attendQ8,
		transposeKeys: transposeKeysQ8,
		widenKeys: func(w *causalWork, dst []float32, j0, b, pitch, n, dim int) {
			for d := range dim {
				copy(dst[d*pitch:][:b], w.tF32[d*n+j0:][:b])
			}
		},
		widenValues: func(dst []float32, v []q8.Block, b, dim, stride int) {
			nb, sb := dim/q8.BlockLen, stride/q8.BlockLen
			if stride == dim {
				q8.Dequantize(dst[:b*dim], v[:b*nb])
				return
			}
			for j := range b {
				q8.Dequantize(dst[j*dim:][:dim], v[j*sb:][:nb])
			}
		},
		transposeValues: transposeValuesQ8,
		product:         productQ8,
	}
)

// transposeRows writes dst[d*n+j] = src[j*stride+d] for n rows of dim elements, a
// few rows at a time so that each column's writes share cache lines.
func transposeRows[T any](dst, src []T, n, dim, stride int) {
	const rowsAtOnce = 16
	for j0 := 0; j0 < n; j0 += rowsAtOnce {
		j1 := min(j0+rowsAtOnce, n)
		for d := range dim {
			col := dst[d*n:]
			for j := j0; j < j1; j++ {
				col[j] = src[j*stride+d]
			}
		}
	}
}

// transposeKeysQ8 lays q8_0 keys out widened, [dim][n] float32; stride counts values.
func transposeKeysQ8(w *causalWork, k []q8.Block, n, dim, stride int) {
	nb, sb := dim/q8.BlockLen, stride/q8.BlockLen
	w.tF32 = growN(w.tF32, n*dim)
	w.row = growN(w.row, dim)
	for j := range n {
		q8.Dequantize(w.row, k[j*sb:][:nb])
		for d, x := range w.row {
			w.tF32[d*n+j] = x
		}
	}
}

// halfOfInt8 is the fp16 of each int8 value, exact: q8_0's integers as keys.
var halfOfInt8 = func() (t [256]Float16) {
	for i := range t {
		x := int(int8(uint8(i)))
		var sign uint16
		if x < 0 {
			sign, x = 0x8000, -x
		}
		if x == 0 {
			continue
		}
		e := bits.Len(uint(x)) - 1 // x = 1.f·2^e, e ≤ 7: normal and exact
		t[i] = Float16(sign | uint16(e+15)<<10 | uint16(x<<(10-e))&0x3ff)
	}
	return t
}()

// transposeValuesQ8 lays q8_0 values out as fp16 integers, [dim][n], and their scales
// as float32, [n][dim/32]; stride counts values.
func transposeValuesQ8(w *causalWork, v []q8.Block, n, dim, stride int) {
	nb, sb := dim/q8.BlockLen, stride/q8.BlockLen
	w.t16 = growN(w.t16, n*dim)
	w.vScale = growN(w.vScale, n*nb)
	const rowsAtOnce = 16
	for j0 := 0; j0 < n; j0 += rowsAtOnce {
		j1 := min(j0+rowsAtOnce, n)
		for c := range nb {
			for j := j0; j < j1; j++ {
				blk := &v[j*sb+c]
				w.vScale[j*nb+c] = blk.D.Float32()
				for e, x := range blk.Q {
					w.t16[(c*q8.BlockLen+e)*n+j] = halfOfInt8[uint8(x)]
				}
			}
		}
	}
}

// productQ8 is P·V over q8_0 values, one column of blocks at a time: the weights
// times that column's scales, then their score block against its 32 columns of
// integers.
func productQ8(w *causalWork, dst, p []float32, rows, j0, b, n, dim int) {
	nb := dim / q8.BlockLen
	w.pq = growN(w.pq, rows*b)
	w.pqOut = growN(w.pqOut, rows*q8.BlockLen)
	for c := range nb {
		for r := range rows {
			pr, qr := p[r*b:(r+1)*b], w.pq[r*b:(r+1)*b]
			for j := range qr {
				qr[j] = pr[j] * w.vScale[(j0+j)*nb+c]
			}
		}
		col := c * q8.BlockLen * n
		scoresAhead.Call(w.pqOut, w.pq, fp16.Bits(w.t16[col+j0:col+(q8.BlockLen-1)*n+j0+b]), nil, rows, q8.BlockLen, b, n, 1)
		for r := range rows {
			copy(dst[r*dim+c*q8.BlockLen:][:q8.BlockLen], w.pqOut[r*q8.BlockLen:][:q8.BlockLen])
		}
	}
}

// causalCall is one checked call: query row g of position i is q[g*qRow+i*qPos:][:dim]
// (out likewise), and k and v hold exactly the span of the n rows, kvStride values
// apart.
type causalCall[E any] struct {
	f               *causalFormat[E]
	w               *causalWork
	out, q          []float32
	k, v            []E
	rows, first, n  int
	dim, qRow, qPos int
	kvStride        int
	scale           float32
	gemm            bool
}

func attendCausal[E any](f *causalFormat[E], out, q []float32, k, v []E, rows, m, n, dim, qRow, qPos, kvStride int, scale float32) {
	if rows == 0 || m == 0 {
		return
	}
	race.Read(q)
	race.Write(out)
	f.race(k, v)
	c := causalCall[E]{f: f, w: causalWorks.Get().(*causalWork), out: out, q: q, k: k, v: v, rows: rows, first: n - m, n: n,
		dim: dim, qRow: qRow, qPos: qPos, kvStride: kvStride, scale: scale, gemm: gemmAdd.Call != nil && dim%gemmLanes == 0}
	group := 1
	if c.gemm {
		f.transposeKeys(c.w, k, n, dim, kvStride)
		group = causalGroup
	} else {
		f.transposeValues(c.w, v, n, dim, kvStride)
	}
	t := CausalTile(rows)
	for p0 := c.first - c.first%t; p0 < n; p0 += group * t {
		c.tiles(p0, t, group)
	}
	causalWorks.Put(c.w)
}

// tiles computes the outputs of up to group tiles of t positions from position p0,
// sharing each block of keys and values they all see (widened once on the gemmAdd
// path). A tile's arithmetic is the same alone or in a group.
func (c *causalCall[E]) tiles(p0, t, group int) {
	w, dim, rows := c.w, c.dim, c.rows
	ts := w.tiles[:0]
	for i := range group {
		tp0 := p0 + i*t
		if tp0 >= c.n {
			break
		}
		ts = w.tiles[:i+1]
		tl := &ts[i]
		tl.lo, tl.hi, tl.p0 = max(tp0, c.first), min(tp0+t, c.n), tp0
		lo, hi := tl.lo, tl.hi
		tileRows := (hi - lo) * rows
		tl.qt = growN(tl.qt, tileRows*dim)
		for i := lo; i < hi; i++ {
			for g := range rows {
				r := (i-lo)*rows + g
				copy(tl.qt[r*dim:(r+1)*dim], c.q[g*c.qRow+(i-c.first)*c.qPos:][:dim])
			}
		}
		tl.st.Reset(tileRows, dim)
		tl.settle = c.gemm && !scoresCannotOverflow(tl.qt, dim, c.scale, c.f.keyMax)
	}
	w.s = growN(w.s, rows*t*(causalBlock+gemmLanes))
	passes := attendPasses.Call
	// The keys every row of a tile sees, 0 … p0, in blocks from key 0.
	last := ts[len(ts)-1].p0
	for j0 := 0; j0 <= last; j0 += causalBlock {
		c.widen(j0, min(causalBlock, last+1-j0))
		for i := range ts {
			tl := &ts[i]
			if j0 > tl.p0 {
				continue
			}
			b := min(causalBlock, tl.p0+1-j0)
			s, pitch := c.scores(tl, j0, b)
			for r := range tl.st.rows {
				tl.st.blockWeights(passes, r, s[r*pitch:][:b])
			}
			c.addProduct(tl, s, pitch, j0, b)
		}
	}
	for i := range ts {
		c.finish(&ts[i])
	}
}

// finish weights the diagonal of tile tl, p0+1 … hi−1, scored for the whole tile and
// weighted over each row's own keys (position i sees i−p0 of them, the others'
// weights 0), and writes the tile's outputs.
func (c *causalCall[E]) finish(tl *causalTile) {
	w, dim, rows := c.w, c.dim, c.rows
	st, tileRows := &tl.st, tl.st.rows
	passes := attendPasses.Call
	if d := tl.hi - 1 - tl.p0; d > 0 {
		j0 := tl.p0 + 1
		c.widen(j0, d)
		s, pitch := c.scores(tl, j0, d)
		for r := range tileRows {
			x := s[r*pitch:][:d]
			own := tl.lo + r/rows - tl.p0
			if own > 0 {
				st.blockWeights(passes, r, x[:own])
			}
			clear(x[own:])
		}
		c.addProduct(tl, s, pitch, j0, d)
	}
	w.ot = growN(w.ot, tileRows*dim)
	st.Finish(w.ot)
	se, de := c.kvStride/c.f.perElem, dim/c.f.perElem
	for r := range tileRows {
		i, g := tl.lo+r/rows, r%rows
		o := c.out[g*c.qRow+(i-c.first)*c.qPos:][:dim]
		copy(o, w.ot[r*dim:(r+1)*dim])
		if s := sumOf.Call(o); s-s == 0 {
			continue
		}
		// Not finite: the composition over the row's i+1 keys.
		st.row = growN(st.row, i+1)
		sr := st.row
		c.f.scores(sr, tl.qt[r*dim:(r+1)*dim], c.k[:i*se+de], nil, 1, i+1, dim, c.kvStride, c.scale)
		softmax.Call(sr)
		c.f.weighted(o, sr, c.v[:i*se+de], c.kvStride)
	}
}

// widen writes keys and values j0 … j0+b−1 as float32 into the workspace on the
// gemmAdd path: the keys transposed, [dim][pitch] with pitch b rounded up to
// gemmLanes and the padding columns 0 (finite, their scores unused), the values
// [b][dim].
func (c *causalCall[E]) widen(j0, b int) {
	if !c.gemm {
		return
	}
	w, dim := c.w, c.dim
	pitch := (b + gemmLanes - 1) / gemmLanes * gemmLanes
	w.kb = growN(w.kb, dim*pitch)
	c.f.widenKeys(w, w.kb, j0, b, pitch, c.n, dim)
	for d := range dim {
		clear(w.kb[d*pitch+b : (d+1)*pitch])
	}
	se, de := c.kvStride/c.f.perElem, dim/c.f.perElem
	w.vb = growN(w.vb, b*dim)
	c.f.widenValues(w.vb, c.v[j0*se:][:(b-1)*se+de], b, dim, c.kvStride)
	w.pitch = pitch
}

// scores writes tile tl's scores against keys j0 … j0+b−1 into the workspace, its
// rows pitch apart, and returns them and pitch. On the gemmAdd path the keys are
// the ones widen wrote last, which may run past b.
func (c *causalCall[E]) scores(tl *causalTile, j0, b int) ([]float32, int) {
	w, dim, tileRows := c.w, c.dim, tl.st.rows
	if !c.gemm {
		s := w.s[:tileRows*b]
		se, de := c.kvStride/c.f.perElem, dim/c.f.perElem
		c.f.scores(s, tl.qt, c.k[j0*se:][:(b-1)*se+de], nil, tileRows, b, dim, c.kvStride, c.scale)
		return s, b
	}
	pitch := (b + gemmLanes - 1) / gemmLanes * gemmLanes
	s := w.s[:tileRows*pitch]
	gemmScaled.Call(s, tl.qt, w.kb, tileRows, pitch, dim, dim, w.pitch, pitch, c.scale)
	if !tl.settle {
		return s, pitch
	}
	if x := sumOf.Call(s); x-x != 0 {
		// Settle the scores that are not finite as Scores settles them, so that a row
		// whose float32 sum overflowed meets the composition's value, not its own.
		keys := formatRows[E]{c.f.attendFormat, c.k[j0*c.kvStride/c.f.perElem:], c.kvStride}
		for r := range tileRows {
			row := s[r*pitch:][:b]
			for j, x := range row {
				if x-x != 0 {
					row[j] = settleRow(tl.qt[r*dim:(r+1)*dim], keys, j, c.scale)
				}
			}
		}
	}
	return s, pitch
}

// addProduct adds the weights p [tileRows][pitch] (the first b of each row) times
// values j0 … j0+b−1 to tile tl's sums.
func (c *causalCall[E]) addProduct(tl *causalTile, p []float32, pitch, j0, b int) {
	w, dim, tileRows := c.w, c.dim, tl.st.rows
	if !c.gemm {
		w.pv = growN(w.pv, tileRows*dim)
		pv := w.pv[:tileRows*dim]
		c.f.product(w, pv, p, tileRows, j0, b, c.n, dim)
		attendPasses.Call.add(tl.st.acc, pv)
		return
	}
	gemmAdd.Call(tl.st.acc, p, w.vb, tileRows, dim, b, pitch, dim, dim)
}
