package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/internal/longtest"
	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/x448/float16"
)

// The fused attention is tested per format, on every variant: against the float64
// reference's bound (internal/oracle.Attend, the doc's bound), against its composition
// Scores → Softmax → WeightedSumRows on the same variant for special values, in parts
// merged in random orders, and for its panics and allocations.

// attendKind is one cache format's fused attention and what its tests need.
type attendKind[E comparable] struct {
	name string
	per  int // values per element
	// value is value i of x, widened exactly.
	value func(x []E, i int) float64
	// fromFloats rounds values into the format (q8_0: whole blocks, as ggml quantizes).
	fromFloats func(x []float32) []E
	// random makes n values of the format's own range.
	random func(r *rand.Rand, n int) []E
	// set makes value i of x hold v; for q8_0 a non-finite v fills its block.
	set  func(x []E, i int, v float32)
	gap  E // an element that widens to NaN, laid between strided rows and around inputs
	dims []int

	attend   func(out, q []float32, k, v []E, rows, n, dim int, scale float32)
	strided  func(out, q []float32, k, v []E, rows, n, dim, stride int, scale float32)
	partial  func(st *AttendState, q []float32, k, v []E, n, stride int, scale float32)
	heads    func(out, q []float32, k, v []E, heads, rows, n, dim int, scale float32)
	scores   func(dst, q []float32, k []E, rows, n, dim, stride int, scale float32)
	weighted func(dst, w []float32, v []E, stride int)
}

var fp16Attend = &attendKind[Float16]{
	name:  "fp16",
	per:   1,
	value: func(x []Float16, i int) float64 { return float64(x[i].Float32()) },
	fromFloats: func(x []float32) []Float16 {
		h := make([]Float16, len(x))
		for i, f := range x {
			h[i] = float16.Fromfloat32(f)
		}
		return h
	},
	random: func(r *rand.Rand, n int) []Float16 { return toHalves(randomF16(r, n)) },
	set:    func(x []Float16, i int, v float32) { x[i] = float16.Fromfloat32(v) },
	gap:    float16.Frombits(nanHalf),
	dims:   []int{1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 64, 100, 128, 256},

	attend:   Attend,
	strided:  AttendStrided,
	partial:  AttendPartial,
	heads:    AttendHeads,
	scores:   ScoresStrided,
	weighted: WeightedSumRowsStrided,
}

var bf16Attend = &attendKind[bf16.BFloat16]{
	name:  "bf16",
	per:   1,
	value: bf16Format.value,
	fromFloats: func(x []float32) []bf16.BFloat16 {
		b := make([]bf16.BFloat16, len(x))
		bf16.FromFloat32(b, x)
		return b
	},
	random: bf16Format.random,
	set:    func(x []bf16.BFloat16, i int, v float32) { x[i] = bf16.BFloat16(math.Float32bits(v) >> 16) },
	gap:    bf16Format.gap,
	dims:   fp16Attend.dims,

	attend:   AttendBF16,
	strided:  AttendStridedBF16,
	partial:  AttendPartialBF16,
	heads:    AttendHeadsBF16,
	scores:   ScoresStridedBF16,
	weighted: WeightedSumRowsStridedBF16,
}

var f32Attend = &attendKind[float32]{
	name:       "f32",
	per:        1,
	value:      f32Format.value,
	fromFloats: func(x []float32) []float32 { return append([]float32(nil), x...) },
	random:     f32Format.random,
	set:        func(x []float32, i int, v float32) { x[i] = v },
	gap:        f32Format.gap,
	dims:       fp16Attend.dims,

	attend:   AttendF32,
	strided:  AttendStridedF32,
	partial:  AttendPartialF32,
	heads:    AttendHeadsF32,
	scores:   ScoresStridedF32,
	weighted: WeightedSumRowsStridedF32,
}

var q8Attend = &attendKind[q8.Block]{
	name:  "q8_0",
	per:   q8.BlockLen,
	value: q8Format.value,
	fromFloats: func(x []float32) []q8.Block {
		b := make([]q8.Block, len(x)/q8.BlockLen)
		q8.Quantize(b, x)
		return b
	},
	random: q8Format.random,
	set: func(x []q8.Block, i int, v float32) {
		b := &x[i/q8.BlockLen]
		if v-v == 0 { // finite: the block's scale makes value i hold v as nearly as fp16 can
			b.Q[i%q8.BlockLen] = 127
			b.D = float16.Fromfloat32(v / 127)
			return
		}
		b.D = float16.Fromfloat32(float32(math.Abs(float64(v)))) // NaN or +Inf
		for j := range b.Q {
			b.Q[j] = 1
			if v < 0 {
				b.Q[j] = -1
			}
		}
	},
	gap:  q8Format.gap,
	dims: []int{32, 64, 96, 128, 256},

	attend:   AttendQ8,
	strided:  AttendStridedQ8,
	partial:  AttendPartialQ8,
	heads:    AttendHeadsQ8,
	scores:   ScoresStridedQ8,
	weighted: WeightedSumRowsStridedQ8,
}

// sameElems reports whether a and b hold the same elements, a NaN float32 (which E
// may be) equal to any NaN.
func sameElems[E comparable](a, b []E) bool {
	return slices.EqualFunc(a, b, func(x, y E) bool { return x == y || x != x && y != y })
}

// attendInput is one call's operands: k and v hold n rows stride values apart.
type attendInput[E comparable] struct {
	q                    []float32
	k, v                 []E
	rows, n, dim, stride int
	scale                float32
	shape                string
}

func (in attendInput[E]) String() string {
	return fmt.Sprintf("%s rows=%d n=%d dim=%d stride=%d scale=%v", in.shape, in.rows, in.n, in.dim, in.stride, in.scale)
}

// reference is the float64 expectation of in's rows, E increased by extraE.
func (f *attendKind[E]) reference(in attendInput[E], extraE float64) []oracle.AttendRow {
	kf, vf := f.widen(in.k, in.n, in.dim, in.stride), f.widen(in.v, in.n, in.dim, in.stride)
	return oracle.Attend(in.q, func(j, d int) float64 { return kf[j*in.dim+d] },
		func(j, d int) float64 { return vf[j*in.dim+d] }, in.rows, in.n, in.dim, in.scale, extraE)
}

// widen returns the n rows of x, stride values apart, as packed float64 rows.
func (f *attendKind[E]) widen(x []E, n, dim, stride int) []float64 {
	w := make([]float64, n*dim)
	for j := range n {
		for d := range dim {
			w[j*dim+d] = f.value(x, j*stride+d)
		}
	}
	return w
}

// spread lays in's packed rows out stride values apart, NaN elements between them.
func (f *attendKind[E]) spread(x []E, n, dim, stride int) []E {
	return spreadElems(x, n, dim/f.per, stride/f.per, f.gap)
}

// pad returns a copy of x at offset off elements into a larger slice of NaN elements.
func (f *attendKind[E]) pad(x []E, off int) []E {
	p := make([]E, off+len(x)+dotPad)
	for i := range p {
		p[i] = f.gap
	}
	copy(p[off:], x)
	return p[off : off+len(x) : off+len(x)]
}

// compose is the composition Attend's doc gives, on the active variant.
func (f *attendKind[E]) compose(out []float32, in attendInput[E]) {
	n, dim := in.n, in.dim
	s := make([]float32, in.rows*n)
	f.scores(s, in.q, in.k, in.rows, n, dim, in.stride, in.scale)
	for i := range in.rows {
		Softmax(s[i*n : (i+1)*n])
		f.weighted(out[i*dim:(i+1)*dim], s[i*n:(i+1)*n], in.v, in.stride)
	}
}

// call runs the contiguous or the strided kernel, as in's stride asks.
func (f *attendKind[E]) call(out []float32, in attendInput[E]) {
	if in.stride == in.dim {
		f.attend(out, in.q, in.k, in.v, in.rows, in.n, in.dim, in.scale)
	} else {
		f.strided(out, in.q, in.k, in.v, in.rows, in.n, in.dim, in.stride, in.scale)
	}
}

// attendShapes are the score distributions the bound test draws: each fills the float
// queries and keys (rows of dim) and returns the scale. The rescaling ones raise each
// row's running maximum in every block of keys, by a little or by far more than
// float32's exponentials reach, so that earlier blocks' weights shrink or vanish.
var attendShapes = []struct {
	name string
	fill func(r *rand.Rand, q, k []float32, rows, n, dim int) float32
}{
	{"normal", func(r *rand.Rand, q, k []float32, rows, n, dim int) float32 {
		normals(r, q, 1)
		normals(r, k, 1)
		return float32(1 / math.Sqrt(float64(dim)))
	}},
	{"logits", func(r *rand.Rand, q, k []float32, rows, n, dim int) float32 {
		normals(r, q, 1)
		normals(r, k, 2)
		return -float32(3 / math.Sqrt(float64(dim)))
	}},
	{"rising", func(r *rand.Rand, q, k []float32, rows, n, dim int) float32 {
		column(r, q, k, rows, n, dim, func(j int) float64 { return 60 * float64(j) / float64(n) })
		return 1
	}},
	{"steep", func(r *rand.Rand, q, k []float32, rows, n, dim int) float32 {
		column(r, q, k, rows, n, dim, func(j int) float64 { return 2000 * float64(j) / float64(n) })
		return 1
	}},
	{"falling", func(r *rand.Rand, q, k []float32, rows, n, dim int) float32 {
		column(r, q, k, rows, n, dim, func(j int) float64 { return 60 * float64(n-j) / float64(n) })
		return 1
	}},
	{"spread", func(r *rand.Rand, q, k []float32, rows, n, dim int) float32 {
		column(r, q, k, rows, n, dim, func(int) float64 { return 300 * (r.Float64() - 0.5) })
		return 1
	}},
	{"ties", func(r *rand.Rand, q, k []float32, rows, n, dim int) float32 {
		normals(r, q, 1)
		normals(r, k[:min(dim, len(k))], 1)
		for j := 1; j < n; j++ {
			copy(k[j*dim:(j+1)*dim], k[:dim])
		}
		return 0.5
	}},
}

func normals(r *rand.Rand, x []float32, sigma float64) {
	for i := range x {
		x[i] = float32(sigma * r.NormFloat64())
	}
}

// column makes column 0 of the keys carry c(j) and column 0 of every query row a
// factor in [1, 1.5), the other columns small noise: score j is about that factor
// times c(j).
func column(r *rand.Rand, q, k []float32, rows, n, dim int, c func(j int) float64) {
	normals(r, q, 0.3)
	normals(r, k, 0.3)
	for i := range rows {
		q[i*dim] = float32(1 + r.Float64()/2)
	}
	for j := range n {
		k[j*dim] = float32(c(j))
	}
}

// attendRowCounts are the query rows the bound test cycles through: GQA's groups
// (1, 2, 4, 5, 8) most often, every count to 9, and none.
var attendRowCounts = []int{1, 2, 4, 5, 8, 3, 1, 2, 4, 5, 8, 0, 6, 7, 9}

// attendKeyCounts are the key counts of the bound test: the small ones, and around
// the blocks of 256 keys and the 4-row groups of the accumulating sums.
var attendKeyCounts = []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100,
	127, 128, 129, 255, 256, 257, 511, 512, 513, 1000, 3000}

func TestAttendBound(t *testing.T) {
	t.Run("fp16", func(t *testing.T) { testAttendBound(t, fp16Attend) })
	t.Run("bf16", func(t *testing.T) { testAttendBound(t, bf16Attend) })
	t.Run("q8_0", func(t *testing.T) { testAttendBound(t, q8Attend) })
	t.Run("f32", func(t *testing.T) { testAttendBound(t, f32Attend) })
}

func testAttendBound[E comparable](t *testing.T, f *attendKind[E]) {
	r := rand.New(rand.NewPCG(31, uint64(f.per)))
	dims, keyCounts := f.dims, attendKeyCounts
	if longtest.Short() {
		dims = slices.Compact([]int{dims[0], dims[2], dims[len(dims)/2], 128})
		keyCounts = []int{0, 1, 2, 5, 17, 255, 256, 257, 513, 1000}
	}
	c := 0
	for _, dim := range dims {
		for _, n := range keyCounts {
			rows := attendRowCounts[c%len(attendRowCounts)]
			shapes := []int{c % len(attendShapes)}
			if n >= 255 { // and one that rescales in every block
				shapes = append(shapes, 2+c%2)
			}
			c++
			for rows > 1 && rows*n*dim > 1<<19 {
				rows /= 2
			}
			for _, s := range shapes {
				in := f.input(r, s, rows, n, dim)
				checkAttendBound(t, f, r, in)
			}
		}
	}
}

// input draws rows query rows and n keys of shape s and n random values.
func (f *attendKind[E]) input(r *rand.Rand, s, rows, n, dim int) attendInput[E] {
	q, k := make([]float32, rows*dim), make([]float32, n*dim)
	scale := attendShapes[s].fill(r, q, k, rows, n, dim)
	return attendInput[E]{q: q, k: f.fromFloats(k), v: f.random(r, n*dim), rows: rows, n: n, dim: dim,
		stride: dim, scale: scale, shape: attendShapes[s].name}
}

// checkAttendBound runs every variant on in, contiguous and strided, from unaligned
// NaN-padded inputs into a guarded NaN-filled out, and holds every output to the
// float64 bound, the strided call to the contiguous call's bits, and the inputs to
// being left as they were.
func checkAttendBound[E comparable](t *testing.T, f *attendKind[E], r *rand.Rand, in attendInput[E]) {
	t.Helper()
	rows, n, dim := in.rows, in.n, in.dim
	want := f.reference(in, 0)
	stride := dim + f.per*(1+r.IntN(dim/f.per+2))
	q := padF32(in.q, 1+r.IntN(15))
	k, v := f.pad(in.k, 1+r.IntN(15)), f.pad(in.v, 1+r.IntN(15))
	sk := f.pad(f.spread(in.k, n, dim, stride), 1+r.IntN(15))
	sv := f.pad(f.spread(in.v, n, dim, stride), 1+r.IntN(15))
	saved := [][]E{slices.Clone(k), slices.Clone(v), slices.Clone(sk), slices.Clone(sv)}
	nans := make([]float32, rows*dim)
	for i := range nans {
		nans[i] = float32(math.NaN())
	}
	outOff, stridedOff := r.IntN(16), r.IntN(16)
	varianttest.Each(t, func(variant string) {
		t.Helper()
		out, intact := guarded(t, nans, outOff)
		f.attend(out, q, k, v, rows, n, dim, in.scale)
		intact()
		for e, got := range out {
			i, d := e/dim, e%dim
			if n == 0 {
				if math.Float32bits(got) != 0 {
					t.Fatalf("%s %s %v: out[%d] = %v with no keys, want +0", variant, f.name, in, e, got)
				}
				continue
			}
			if err := want[i].Check(d, got); err != nil {
				t.Fatalf("%s %s %v: out[%d*dim+%d]: %v", variant, f.name, in, i, d, err)
			}
		}
		sout, sintact := guarded(t, nans, stridedOff)
		f.strided(sout, q, sk, sv, rows, n, dim, stride, in.scale)
		sintact()
		for e := range sout {
			if !sameFloatBits(sout[e], out[e]) {
				t.Fatalf("%s %s %v: stride %d: out[%d] = %v, contiguous gives %v", variant, f.name, in, stride, e, sout[e], out[e])
			}
		}
	})
	for i := range q {
		if math.Float32bits(q[i]) != math.Float32bits(in.q[i]) {
			t.Fatalf("%s %v: q[%d] changed to %v", f.name, in, i, q[i])
		}
	}
	for x, now := range [][]E{k, v, sk, sv} {
		if !sameElems(now, saved[x]) {
			t.Fatalf("%s %v: input %d (k, v, strided k, strided v) changed", f.name, in, x)
		}
	}
}

// TestAttendFlushedWeights holds every variant to the bound's last term where it is
// tightest: the row's largest score has a zero value, and the other keys, each with a
// value of the format's largest magnitude, score a little more than 103 below it,
// where a variant may flush exponentials to 0 (the doc: those below e⁻¹⁰³). Their exact
// weights, up to e⁻¹⁰³ ≈ 1.32·2⁻¹⁴⁹ each, are the whole output, so flushing n − 1 of
// them is an error of up to (n − 1)·1.32·2⁻¹⁴⁹·max|v|, beyond the bound's
// n·2⁻¹⁴⁹·max|v| from n = 5: neon, whose exponentials give 0 below −103, fails here
// (by 1.12 at n = 10, 1.24 at n = 300); the amd64 variants flush below −104 only.
func TestAttendFlushedWeights(t *testing.T) {
	testAttendFlushed(t, fp16Attend, 65504)
	testAttendFlushed(t, bf16Attend, 0x1p100)
	testAttendFlushed(t, q8Attend, 0x1p10)
	testAttendFlushed(t, f32Attend, 0x1p100)
}

func testAttendFlushed[E comparable](t *testing.T, f *attendKind[E], big float32) {
	dim := f.dims[0]
	for _, n := range []int{2, 5, 10, 300} {
		for _, gap := range []float64{103.0625, 103.5, 104.25} {
			q, k, v := make([]float32, dim), make([]float32, n*dim), make([]float32, n*dim)
			for j := range n {
				k[j*dim] = -64 // a power of two: exact in every format
				v[j*dim] = big
			}
			top := n / 2
			k[top*dim], v[top*dim] = 0, 0
			q[0] = float32(gap / 64) // the scores 0 and −gap, within an ulp
			in := attendInput[E]{q: q, k: f.fromFloats(k), v: f.fromFloats(v), rows: 1, n: n, dim: dim, stride: dim,
				scale: 1, shape: fmt.Sprintf("scores 0 and −%v", gap)}
			want := f.reference(in, 0)
			varianttest.Each(t, func(variant string) {
				out := make([]float32, dim)
				f.attend(out, in.q, in.k, in.v, 1, n, dim, 1)
				if err := want[0].Check(0, out[0]); err != nil {
					t.Errorf("%s %s %v: out[0]: %v", variant, f.name, in, err)
				}
			})
		}
	}
}

// attendSpecial is one special-value scene: it edits the float queries, keys and
// values (rows of dim) before they are rounded into the format, and returns the scale
// and the keys' and values' elements to set afterwards (NaN and Inf, which q8_0 blocks
// take only through their scale).
type attendSpecial struct {
	name string
	edit func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (scale float32, ks, vs []specialAt)
}

type specialAt struct {
	i int // value index, j*dim + d
	x float32
}

var (
	inf32 = float32(math.Inf(1))
	nan32 = float32(math.NaN())
)

// positiveColumn makes column d of every query row and every key positive, so that an
// Inf in one of them gives scores of one sign.
func positiveColumn(r *rand.Rand, q, k []float32, rows, n, dim, d int) {
	for i := range rows {
		q[i*dim+d] = float32(0.5 + r.Float64())
	}
	for j := range n {
		k[j*dim+d] = float32(1 + r.Float64())
	}
}

// exactScores makes score j of every row exactly s(j): column 0 of the queries 1, the
// rest 0, and column 0 of key j s(j).
func exactScores(q, k []float32, rows, n, dim int, s func(j int) float32) {
	clear(q)
	for i := range rows {
		q[i*dim] = 1
	}
	for j := range n {
		k[j*dim] = s(j)
	}
}

var attendSpecials = []attendSpecial{
	{"NaN query", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		q[min(1, rows-1)*dim+r.IntN(dim)] = nan32
		return 0.25, nil, nil
	}},
	{"NaN key", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		return 0.25, []specialAt{{r.IntN(n * dim), nan32}}, nil
	}},
	{"NaN value", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		return 0.25, nil, []specialAt{{r.IntN(n * dim), nan32}}
	}},
	{"+Inf query", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		q[(rows-1)*dim+r.IntN(dim)] = inf32 // scores ±Inf (NaN where the key is 0)
		return 0.25, nil, nil
	}},
	{"−Inf query over positive keys", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		d := r.IntN(dim)
		positiveColumn(r, q, k, rows, n, dim, d)
		q[r.IntN(rows)*dim+d] = -inf32 // that row's scores all −Inf: the mean of the values
		return 0.25, nil, nil
	}},
	{"−Inf scale", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		for i := range q {
			q[i] = float32(0.5 + r.Float64())
		}
		for i := range k {
			k[i] = float32(0.5 + r.Float64())
		}
		return -inf32, nil, nil // every score −Inf
	}},
	{"scores overflowing to −Inf", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		for i := range k {
			k[i] = float32(1 + r.Float64())
		}
		for d := range dim {
			q[d] = -3e38 // row 0: every score beyond −MaxFloat32
		}
		return 0.5, nil, nil
	}},
	{"a sum overflowing to −Inf in float32, +Inf settled", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		for j := range n {
			k[j*dim], k[j*dim+1] = 1.5, 3
		}
		q[0], q[1] = -3e38, 3e38 // row 0: −4.5e38 first, then +9e38: the float64 score is +Inf
		return 1, nil, nil
	}},
	{"+Inf key", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		return 0.25, []specialAt{{r.IntN(n)*dim + r.IntN(dim), inf32}}, nil // +Inf or −Inf scores by q's sign
	}},
	{"masked keys", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		positiveColumn(r, q, k, rows, n, dim, 0)
		var ks []specialAt
		lo := r.IntN(n)
		hi := lo + r.IntN(min(n-lo, 300)+1)
		for j := range n {
			if j >= lo && j < hi || r.IntN(3) == 0 {
				ks = append(ks, specialAt{j * dim, -inf32})
			}
		}
		return 0.25, ks, nil
	}},
	{"masked first block", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		positiveColumn(r, q, k, rows, n, dim, 0)
		var ks []specialAt
		for j := range min(n-1, attendBlock) {
			ks = append(ks, specialAt{j * dim, -inf32})
		}
		return 0.25, ks, nil
	}},
	{"Inf value of a masked key", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		positiveColumn(r, q, k, rows, n, dim, 0)
		j := r.IntN(n)
		return 0.25, []specialAt{{j * dim, -inf32}}, []specialAt{{j*dim + r.IntN(dim), inf32}}
	}},
	{"Inf values under small weights", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		top := n - 1 - r.IntN(min(n, 40))
		gaps := []float32{20, 90, 110, 300}
		exactScores(q, k, rows, n, dim, func(j int) float32 {
			if j == top {
				return 0
			}
			if j < len(gaps) {
				return -gaps[j]
			}
			return float32(-5 * r.Float64())
		})
		var vs []specialAt
		for j := range min(len(gaps), n) {
			if j != top {
				vs = append(vs, specialAt{j*dim + j%dim, []float32{inf32, -inf32}[j%2]})
			}
		}
		return 1, nil, vs
	}},
	{"Inf value under the largest weight", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		j := r.IntN(n)
		exactScores(q, k, rows, n, dim, func(i int) float32 { return float32(-5 * r.Float64()) })
		k[j*dim] = 1
		return 1, nil, []specialAt{{j*dim + r.IntN(dim), inf32}, {r.IntN(n * dim), -inf32}}
	}},
	{"huge values", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		d := r.IntN(dim)
		for j := range n {
			v[j*dim+d] = float32(3.38e38 * (1 - 2*float64(j%2)))
			v[j*dim+(d+1)%dim] = 3.38e38 // a column whose weighted sum is near MaxFloat32
		}
		return 0.5, nil, nil
	}},
	{"huge finite scores", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		exactScores(q, k, rows, n, dim, func(int) float32 { return float32(1 - 2*r.IntN(2)) })
		for i := range rows {
			q[i*dim] = []float32{3e38, -3e38, math.MaxFloat32, 1e38}[i%4]
		}
		return 1, nil, nil
	}},
	{"huge finite scores rising", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		exactScores(q, k, rows, n, dim, func(j int) float32 { return 2*float32(j)/float32(n) - 1 })
		for i := range rows {
			q[i*dim] = 3e38 // from −3e38 to nearly 3e38
		}
		return 1, nil, nil
	}},
	{"ties", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		for d := range dim {
			q[d] = 0 // row 0: every score 0
		}
		exactScores(q[dim:], k, rows-1, n, dim, func(j int) float32 { return float32(j % 3) }) // ties at the maximum
		return 1, nil, nil
	}},
	{"subnormal scale", func(r *rand.Rand, q, k, v []float32, rows, n, dim int) (float32, []specialAt, []specialAt) {
		return 0x1p-140, nil, nil
	}},
}

func TestAttendSpecial(t *testing.T) {
	t.Run("fp16", func(t *testing.T) { testAttendSpecial(t, fp16Attend) })
	t.Run("bf16", func(t *testing.T) { testAttendSpecial(t, bf16Attend) })
	t.Run("q8_0", func(t *testing.T) { testAttendSpecial(t, q8Attend) })
	t.Run("f32", func(t *testing.T) { testAttendSpecial(t, f32Attend) })
}

func testAttendSpecial[E comparable](t *testing.T, f *attendKind[E]) {
	r := rand.New(rand.NewPCG(32, uint64(f.per)))
	dims, keyCounts, repeats := []int{f.dims[4], f.dims[len(f.dims)-5]}, []int{1, 6, 300, 700}, 2
	if f.per > 1 {
		dims = []int{32, 64}
	}
	if longtest.Short() {
		keyCounts, repeats = []int{6, 300}, 1
	}
	c := 0
	for _, s := range attendSpecials {
		for _, dim := range dims {
			for _, n := range keyCounts {
				for rep := range repeats {
					rows := []int{5, 4, 1, 8, 2}[c%5]
					c++
					q, k, v := make([]float32, rows*dim), make([]float32, n*dim), make([]float32, n*dim)
					normals(r, q, 1)
					normals(r, k, 1)
					normals(r, v, 4)
					scale, ks, vs := s.edit(r, q, k, v, rows, n, dim)
					in := attendInput[E]{q: q, k: f.fromFloats(k), v: f.fromFloats(v), rows: rows, n: n, dim: dim,
						stride: dim, scale: scale, shape: s.name}
					for _, x := range ks {
						f.set(in.k, x.i, x.x)
					}
					for _, x := range vs {
						f.set(in.v, x.i, x.x)
					}
					if rep%2 == 1 {
						in.stride = dim + f.per*(1+r.IntN(3))
						in.k, in.v = f.spread(in.k, n, dim, in.stride), f.spread(in.v, n, dim, in.stride)
					}
					checkAttendSpecial(t, f, in)
				}
			}
		}
	}
}

// checkAttendSpecial holds every variant's Attend on in to its composition on the same
// variant: NaN where it is NaN, the same Inf where it is ±Inf, and otherwise within the
// float64 bound, also in the rows that Attend computes again by the composition (those
// whose fused output, which AttendPartial and Finish give, is not finite; see
// TestAttendRecomputedRowsBits for their bits).
func checkAttendSpecial[E comparable](t *testing.T, f *attendKind[E], in attendInput[E]) {
	t.Helper()
	rows, dim := in.rows, in.dim
	want := f.reference(in, 0)
	got, comp, fused := make([]float32, rows*dim), make([]float32, rows*dim), make([]float32, rows*dim)
	var st AttendState
	varianttest.Each(t, func(variant string) {
		t.Helper()
		f.compose(comp, in)
		f.call(got, in)
		st.Reset(rows, dim)
		f.partial(&st, in.q, in.k, in.v, in.n, in.stride, in.scale)
		st.Finish(fused)
		for e, g := range got {
			i, d := e/dim, e%dim
			var err error
			switch c := comp[e]; {
			case c != c:
				if g == g {
					err = fmt.Errorf("got %v, the composition gives NaN", g)
				}
			case c-c != 0:
				if g != c {
					err = fmt.Errorf("got %v, the composition gives %v", g, c)
				}
			default:
				err = want[i].Check(d, g)
			}
			if err != nil {
				t.Fatalf("%s %s %v: out[%d*dim+%d]: %v (fused %v)", variant, f.name, in, i, d, err, fused[e])
			}
		}
	})
}

// TestAttendRecomputedRowsBits: a row whose output is not finite is computed again by
// the composition, so its NaN and ±Inf outputs are the doc's loop's bit for bit, and
// its finite ones within Softmax's rounding of them (its SIMD sums split a row at its
// vector boundaries, and Attend's pooled score row lies elsewhere than the loop's
// s[i*n:], so the last bits may differ: on avx2 here they do).
func TestAttendRecomputedRowsBits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const rows, n, dim = 4, 300, 33
	q, k, v := make([]float32, rows*dim), make([]float32, n*dim), make([]float32, n*dim)
	normals(r, q, 1)
	normals(r, k, 1)
	normals(r, v, 4)
	kh, vh := fp16Attend.fromFloats(k), fp16Attend.fromFloats(v)
	vh[17*dim+5] = float16.Frombits(nanHalf) // every row's column 5 NaN: every row computed again
	varianttest.Each(t, func(variant string) {
		want, got := make([]float32, rows*dim), make([]float32, rows*dim)
		s := make([]float32, rows*n) // the doc's loop
		Scores(s, q, kh, rows, n, dim, 0.25)
		for i := 0; i < rows; i++ {
			Softmax(s[i*n : (i+1)*n])
			WeightedSumRows(want[i*dim:(i+1)*dim], s[i*n:(i+1)*n], vh)
		}
		Attend(got, q, kh, vh, rows, n, dim, 0.25)
		for e := range got {
			g, w := float64(got[e]), float64(want[e])
			switch {
			case w-w != 0: // NaN or ±Inf: the same bits
				if !sameFloatBits(got[e], want[e]) {
					t.Errorf("%s: out[%d*dim+%d] = %v, the doc's loop gives %v", variant, e/dim, e%dim, got[e], want[e])
					return
				}
			case math.Abs(g-w) > 1e-6*(1+math.Abs(w)): // Softmax's 4 ulp per weight, and more
				t.Errorf("%s: out[%d*dim+%d] = %v, the doc's loop gives %v: beyond its rounding", variant, e/dim, e%dim, got[e], want[e])
				return
			}
		}
	})
}

// TestAttendPartialMerge splits the keys at random boundaries into one to five parts
// (empty ones too), runs AttendPartial on each into a state of its own, merges the
// states in a random order and finishes: every output within the bound with E
// increased by 4u per merge, NaN rows NaN, rows of only −Inf scores their mean, no
// keys zeros; Merge and Finish leave their operands as they were.
func TestAttendPartialMerge(t *testing.T) {
	t.Run("fp16", func(t *testing.T) { testAttendPartial(t, fp16Attend) })
	t.Run("bf16", func(t *testing.T) { testAttendPartial(t, bf16Attend) })
	t.Run("q8_0", func(t *testing.T) { testAttendPartial(t, q8Attend) })
	t.Run("f32", func(t *testing.T) { testAttendPartial(t, f32Attend) })
}

func testAttendPartial[E comparable](t *testing.T, f *attendKind[E]) {
	r := rand.New(rand.NewPCG(33, uint64(f.per)))
	cases := 48
	if testing.Short() {
		cases = 12
	}
	for c := range cases {
		rows := []int{1, 2, 4, 5, 8, 3}[c%6]
		n := []int{0, 1, 7, 300, 700, 1000, 257}[c%7]
		dim := f.dims[c%len(f.dims)]
		if dim > 128 {
			dim = 128
		}
		q, k, v := make([]float32, rows*dim), make([]float32, n*dim), make([]float32, n*dim)
		var ks []specialAt
		scene := []string{"normal", "steep", "masked", "special rows"}[c%4]
		scale := float32(1 / math.Sqrt(float64(dim)))
		normals(r, v, 3)
		switch scene {
		case "normal":
			normals(r, q, 1)
			normals(r, k, 2)
		case "steep":
			column(r, q, k, rows, n, dim, func(j int) float64 { return 2000 * float64(j) / float64(max(n, 1)) })
			scale = 1
		case "masked", "special rows":
			normals(r, q, 1)
			normals(r, k, 1)
			positiveColumn(r, q, k, rows, n, dim, 0)
			if scene == "special rows" {
				q[r.IntN(dim)] = nan32   // row 0 NaN
				q[(rows-1)*dim] = -inf32 // the last row's scores all −Inf (row 0 if one row)
				break
			}
			lo := r.IntN(n + 1)
			hi := lo + r.IntN(n-lo+1)
			for j := range n {
				if j >= lo && j < hi || r.IntN(4) == 0 {
					ks = append(ks, specialAt{j * dim, -inf32})
				}
			}
		}
		in := attendInput[E]{q: q, k: f.fromFloats(k), v: f.fromFloats(v), rows: rows, n: n, dim: dim,
			stride: dim, scale: scale, shape: scene}
		for _, x := range ks {
			f.set(in.k, x.i, x.x)
		}
		if c%3 == 1 {
			in.stride = dim + f.per*(1+r.IntN(4))
			in.k, in.v = f.spread(in.k, n, dim, in.stride), f.spread(in.v, n, dim, in.stride)
		}
		checkAttendParts(t, f, r, in)
	}
}

func checkAttendParts[E comparable](t *testing.T, f *attendKind[E], r *rand.Rand, in attendInput[E]) {
	t.Helper()
	rows, n, dim := in.rows, in.n, in.dim
	se, de := in.stride/f.per, dim/f.per
	varianttest.Each(t, func(variant string) {
		t.Helper()
		parts := 1 + r.IntN(5)
		cuts := []int{0, n}
		for range parts - 1 {
			cuts = append(cuts, r.IntN(n+1))
		}
		slices.Sort(cuts)
		want := f.reference(in, 4*0x1p-24*float64(parts-1))
		states := make([]*AttendState, parts)
		what := fmt.Sprintf("%s %s %v, parts at %v", variant, f.name, in, cuts)
		for p := range parts {
			states[p] = new(AttendState)
			states[p].Reset(rows, dim)
			lo, m := cuts[p], cuts[p+1]-cuts[p]
			var k, v []E
			if m > 0 {
				k, v = in.k[lo*se:], in.v[lo*se:]
				if in.stride == dim { // exactly the part's rows
					k, v = k[:(m-1)*se+de], v[:(m-1)*se+de]
				}
			}
			f.partial(states[p], in.q, k, v, m, in.stride, in.scale)
		}
		order := slices.Clone(states)
		for len(order) > 1 {
			a, b := r.IntN(len(order)), r.IntN(len(order)-1)
			if b >= a {
				b++
			}
			before := snapshot(order[b])
			order[a].Merge(order[b])
			if after := snapshot(order[b]); !slices.Equal(before, after) {
				t.Fatalf("%s: Merge changed its operand", what)
			}
			order = slices.Delete(order, b, b+1)
		}
		out, again := make([]float32, rows*dim), make([]float32, rows*dim)
		order[0].Finish(out)
		order[0].Finish(again)
		for e := range out {
			i, d := e/dim, e%dim
			if !sameFloatBits(out[e], again[e]) {
				t.Fatalf("%s: Finish twice: out[%d] = %v, then %v", what, e, out[e], again[e])
			}
			if n == 0 && math.Float32bits(out[e]) != 0 {
				t.Fatalf("%s: out[%d] = %v with no keys, want +0", what, e, out[e])
			}
			if err := want[i].Check(d, out[e]); err != nil {
				t.Fatalf("%s: out[%d*dim+%d]: %v", what, i, d, err)
			}
		}
	})
}

// snapshot is a state's contents as bits, NaNs included.
func snapshot(st *AttendState) []uint64 {
	s := []uint64{uint64(st.rows), uint64(st.dim)}
	for _, x := range st.max {
		s = append(s, uint64(math.Float32bits(x)))
	}
	for _, x := range st.sum {
		s = append(s, math.Float64bits(x))
	}
	for _, x := range st.acc {
		s = append(s, uint64(math.Float32bits(x)))
	}
	return s
}

// TestAttendStridedLongerBuffers: AttendStrided's doc (and AttendPartial's, which
// refers to it) asks len(k), len(v) ≥ (n−1)·stride + dim, as ScoresStrided and
// WeightedSumRowsStrided do, so a stride equal to dim over a longer buffer (the first
// n rows of a cache allocated for the whole context, or one KV head of a token-major
// cache with a single head) must work and give Attend's bits.
func TestAttendStridedLongerBuffers(t *testing.T) {
	testAttendLonger(t, fp16Attend)
	testAttendLonger(t, bf16Attend)
	testAttendLonger(t, q8Attend)
	testAttendLonger(t, f32Attend)
}

func testAttendLonger[E comparable](t *testing.T, f *attendKind[E]) {
	r := rand.New(rand.NewPCG(34, uint64(f.per)))
	const rows, n = 2, 5
	dim := f.dims[len(f.dims)-1] / 4
	in := f.input(r, 0, rows, n, dim)
	longK, longV := append(slices.Clone(in.k), in.k[:dim/f.per]...), append(slices.Clone(in.v), in.v[:dim/f.per]...)
	want, got := make([]float32, rows*dim), make([]float32, rows*dim)
	f.attend(want, in.q, in.k, in.v, rows, n, dim, in.scale)
	for _, call := range []struct {
		name string
		run  func()
	}{
		{"strided", func() { f.strided(got, in.q, longK, longV, rows, n, dim, dim, in.scale) }},
		{"partial", func() {
			var st AttendState
			st.Reset(rows, dim)
			f.partial(&st, in.q, longK, longV, n, dim, in.scale)
			st.Finish(got)
		}},
	} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s %s: stride = dim with k and v a row longer than (n−1)·stride + dim: %v", f.name, call.name, p)
				}
			}()
			clear(got)
			call.run()
			for e := range got {
				if !sameFloatBits(got[e], want[e]) {
					t.Errorf("%s %s: out[%d] = %v, Attend gives %v", f.name, call.name, e, got[e], want[e])
					break
				}
			}
		}()
	}
}

// TestAttendPanics: each kernel refuses what its doc refuses, with its own name and
// what it wanted, before writing to out.
func TestAttendPanics(t *testing.T) {
	h := make([]Float16, 64)
	b := make([]bf16.BFloat16, 64)
	blocks := make([]q8.Block, 8)
	f := func(n int) []float32 { return make([]float32, n) }
	huge := math.MaxInt/4 + 1
	var st, other AttendState
	st.Reset(2, 4)
	other.Reset(2, 8)
	var qst AttendState
	qst.Reset(1, 32)
	var out []float32 // the out of the current case, checked for writes
	outOf := func(n int) []float32 {
		out = make([]float32, n)
		for i := range out {
			out[i] = guard
		}
		return out
	}
	cases := []struct {
		kernel, want string
		call         func()
	}{
		{"Attend", "1 ≤ dim", func() { Attend(outOf(0), f(0), h[:0], h[:0], 0, 0, 0, 1) }},
		{"Attend", "rows, n ≥ 0", func() { Attend(outOf(0), f(0), h[:0], h[:0], -1, 0, 4, 1) }},
		{"Attend", "rows, n ≥ 0", func() { Attend(outOf(8), f(8), h[:0], h[:0], 2, -1, 4, 1) }},
		{"Attend", "len(q) = 7, want rows·dim", func() { Attend(outOf(8), f(7), h[:12], h[:12], 2, 3, 4, 1) }},
		{"Attend", "len(out) = 9", func() { Attend(outOf(9), f(8), h[:12], h[:12], 2, 3, 4, 1) }},
		{"Attend", "len(k) = 11, len(v) = 12, want n·dim = 12", func() { Attend(outOf(8), f(8), h[:11], h[:12], 2, 3, 4, 1) }},
		{"Attend", "len(k) = 12, len(v) = 13, want n·dim = 12", func() { Attend(outOf(8), f(8), h[:12], h[:13], 2, 3, 4, 1) }},
		{"Attend", "len(k) = 12, len(v) = 8", func() { Attend(outOf(8), f(8), h[:12], h[:8], 2, 3, 4, 1) }},
		{"Attend", "len(k) = 0", func() { Attend(outOf(8), f(8), h[:0], h[:0], 2, 3, 4, 1) }},
		{"Attend", "rows·dim overflows", func() { Attend(outOf(0), f(0), h[:0], h[:0], huge, 0, 4, 1) }},
		{"AttendStrided", "1 ≤ dim ≤ stride", func() { AttendStrided(outOf(8), f(8), h[:12], h[:12], 2, 3, 4, 3, 1) }},
		{"AttendStrided", "want (n−1)·stride + dim = 16", func() { AttendStrided(outOf(8), f(8), h[:15], h[:16], 2, 3, 4, 6, 1) }},
		{"AttendStrided", "want (n−1)·stride + dim = 16", func() { AttendStrided(outOf(8), f(8), h[:16], h[:15], 2, 3, 4, 6, 1) }},
		{"AttendStrided", "len(k) = 64", func() { AttendStrided(outOf(8), f(8), h, h, 2, 3, 4, math.MaxInt, 1) }},
		{"AttendStrided", "rows·dim overflows", func() { AttendStrided(outOf(0), f(0), h[:0], h[:0], huge, 0, 4, 8, 1) }},
		{"AttendBF16", "len(k) = 11", func() { AttendBF16(outOf(8), f(8), b[:11], b[:12], 2, 3, 4, 1) }},
		{"AttendBF16", "len(q) = 9", func() { AttendBF16(outOf(8), f(9), b[:12], b[:12], 2, 3, 4, 1) }},
		{"AttendStridedBF16", "want (n−1)·stride + dim = 16", func() { AttendStridedBF16(outOf(8), f(8), b[:16], b[:14], 2, 3, 4, 6, 1) }},
		{"AttendQ8", "multiples of 32", func() { AttendQ8(outOf(16), f(16), blocks[:1], blocks[:1], 1, 2, 16, 1) }},
		{"AttendQ8", "want (n·dim)/32 blocks = 2", func() { AttendQ8(outOf(32), f(32), blocks[:2], blocks[:3], 1, 2, 32, 1) }},
		{"AttendQ8", "rows·dim overflows", func() { AttendQ8(outOf(0), f(0), blocks[:0], blocks[:0], huge, 0, 32, 1) }},
		{"AttendStridedQ8", "multiples of 32", func() { AttendStridedQ8(outOf(32), f(32), blocks[:3], blocks[:3], 1, 2, 32, 48, 1) }},
		{"AttendStridedQ8", "want ((n−1)·stride + dim)/32 blocks = 3", func() { AttendStridedQ8(outOf(32), f(32), blocks[:2], blocks[:3], 1, 2, 32, 64, 1) }},
		{"AttendPartial", "len(q) = 7", func() { AttendPartial(&st, f(7), h[:12], h[:12], 3, 4, 1) }},
		{"AttendPartial", "want (n−1)·stride + dim = 16", func() { AttendPartial(&st, f(8), h[:15], h[:16], 3, 6, 1) }},
		{"AttendPartial", "1 ≤ dim ≤ stride", func() { AttendPartial(&st, f(8), h[:12], h[:12], 3, 2, 1) }},
		{"AttendPartial", "1 ≤ dim", func() { AttendPartial(new(AttendState), f(0), h[:4], h[:4], 1, 4, 1) }},
		{"AttendPartialBF16", "len(k) = 11, len(v) = 12", func() { AttendPartialBF16(&st, f(8), b[:11], b[:12], 3, 4, 1) }},
		{"AttendPartialQ8", "multiples of 32", func() { AttendPartialQ8(&st, f(8), blocks[:1], blocks[:1], 1, 4, 1) }},
		{"AttendPartialQ8", "blocks = 2", func() { AttendPartialQ8(&qst, f(32), blocks[:2], blocks[:1], 2, 32, 1) }},
		{"AttendHeads", "heads, rows, n ≥ 0", func() { AttendHeads(outOf(0), f(0), h[:0], h[:0], -1, 2, 3, 4, 1) }},
		{"AttendHeads", "dim ≥ 1", func() { AttendHeads(outOf(0), f(0), h[:0], h[:0], 2, 2, 3, 0, 1) }},
		{"AttendHeads", "len(q) = 15, want heads·rows·dim = 2·2·4 = 16", func() { AttendHeads(outOf(16), f(15), h[:24], h[:24], 2, 2, 3, 4, 1) }},
		{"AttendHeads", "len(out) = 17", func() { AttendHeads(outOf(17), f(16), h[:24], h[:24], 2, 2, 3, 4, 1) }},
		{"AttendHeads", "len(k) = 23, len(v) = 24, want n·heads·dim = 24", func() { AttendHeads(outOf(16), f(16), h[:23], h[:24], 2, 2, 3, 4, 1) }},
		{"AttendHeads", "len(k) = 24, len(v) = 25", func() { AttendHeads(outOf(16), f(16), h[:24], h[:25], 2, 2, 3, 4, 1) }},
		{"AttendHeads", "overflows", func() { AttendHeads(outOf(0), f(0), h[:0], h[:0], huge, 0, 4, 8, 1) }},
		{"AttendHeadsBF16", "len(k) = 11", func() { AttendHeadsBF16(outOf(8), f(8), b[:11], b[:12], 1, 2, 3, 4, 1) }},
		{"AttendHeadsQ8", "multiples of 32", func() { AttendHeadsQ8(outOf(16), f(16), blocks[:1], blocks[:1], 1, 1, 2, 16, 1) }},
		{"AttendHeadsQ8", "want (n·heads·dim)/32 blocks = 4", func() { AttendHeadsQ8(outOf(64), f(64), blocks[:4], blocks[:3], 2, 1, 2, 32, 1) }},
		{"AttendState.Reset", "rows ≥ 0", func() { new(AttendState).Reset(-1, 4) }},
		{"AttendState.Reset", "dim ≥ 1", func() { new(AttendState).Reset(1, 0) }},
		{"AttendState.Reset", "rows·dim overflows", func() { new(AttendState).Reset(huge, 4) }},
		{"AttendState.Merge", "2 rows of dim 8 into 2 rows of dim 4", func() { st.Merge(&other) }},
		{"AttendState.Finish", "len(out) = 7, want Rows·Dim = 2·4 = 8", func() { st.Finish(outOf(7)) }},
	}
	for _, c := range cases {
		func() {
			out = nil
			defer func() {
				msg := fmt.Sprint(recover())
				prefix := "kernels." + c.kernel + ": "
				if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, c.want) {
					t.Errorf("%s: panic %q, want one starting %q and saying %q", c.kernel, msg, prefix, c.want)
				}
				for i, x := range out {
					if x != guard {
						t.Errorf("%s (%q): wrote out[%d] = %v before panicking", c.kernel, c.want, i, x)
						break
					}
				}
			}()
			c.call()
		}()
	}
}

// TestAttendAllocs: once warm, Attend, its strided and partial forms, a row computed
// again by the composition, and a merge allocate nothing, on every variant and format.
// The fewest of three rounds is taken, as snapkv's steadyAllocs does: a GC that empties
// the workspace pool on a busy machine costs one round, a per-call allocation all three.
func TestAttendAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop its contents at random")
	}
	testAttendAllocs(t, fp16Attend)
	testAttendAllocs(t, bf16Attend)
	testAttendAllocs(t, q8Attend)
	testAttendAllocs(t, f32Attend)
}

func testAttendAllocs[E comparable](t *testing.T, f *attendKind[E]) {
	r := rand.New(rand.NewPCG(35, uint64(f.per)))
	const rows, n, dim = 5, 300, 64 // two blocks
	in := f.input(r, 0, rows, n, dim)
	special := f.input(r, 0, rows, n, dim)
	f.set(special.v, 7*dim+3, inf32) // an Inf value: its rows are computed again
	stride := dim + f.per
	sk, sv := f.spread(in.k, n, dim, stride), f.spread(in.v, n, dim, stride)
	out := make([]float32, rows*dim)
	var a, b AttendState
	varianttest.Each(t, func(variant string) {
		for _, c := range []struct {
			name string
			call func()
		}{
			{"Attend", func() { f.attend(out, in.q, in.k, in.v, rows, n, dim, in.scale) }},
			{"strided", func() { f.strided(out, in.q, sk, sv, rows, n, dim, stride, in.scale) }},
			{"computed again", func() { f.attend(out, special.q, special.k, special.v, rows, n, dim, special.scale) }},
			{"heads", func() { f.heads(out, in.q, in.k, in.v, 1, rows, n, dim, in.scale) }},
			{"partial, merge, finish", func() {
				a.Reset(rows, dim)
				b.Reset(rows, dim)
				f.partial(&a, in.q, in.k[:n/2*dim/f.per], in.v[:n/2*dim/f.per], n/2, dim, in.scale)
				f.partial(&b, in.q, in.k[n/2*dim/f.per:], in.v[n/2*dim/f.per:], n-n/2, dim, in.scale)
				a.Merge(&b)
				a.Finish(out)
			}},
		} {
			c.call() // warm: the pooled workspace and the states grow once
			least := testing.AllocsPerRun(3, c.call)
			for range 2 {
				least = min(least, testing.AllocsPerRun(3, c.call))
			}
			if least != 0 {
				t.Errorf("%s %s %s: %v allocations per call", variant, f.name, c.name, least)
			}
		}
	})
}

// TestAttendSubnormalOutputs: an output in float32's subnormal range is rounded to a
// multiple of 2⁻¹⁴⁹, an absolute error of up to 2⁻¹⁵⁰ that the doc's bound has no term
// for when the values are small: E·Σpⱼ|vⱼ| and n·2⁻¹⁴⁹·maxⱼ|vⱼ| both shrink with the
// values. Here three equal scores over bfloat16 values 2⁻¹³³, 0, 0 (the output
// 2⁻¹³³/3, bound about 2⁻¹⁵³), and fp16 values 2⁻¹⁴ under a weight of about e⁻⁹⁰ (the
// output about 36·2⁻¹⁴⁹, bound about 2⁻¹⁶²). The fuzz target FuzzAttend found the
// first kind (bfloat16, rows 1, n 2, dim 4).
func TestAttendSubnormalOutputs(t *testing.T) {
	tiny := attendInput[bf16.BFloat16]{q: []float32{1}, k: []bf16.BFloat16{0, 0, 0}, v: []bf16.BFloat16{0x0001, 0, 0},
		rows: 1, n: 3, dim: 1, stride: 1, scale: 1, shape: "equal scores, values 2⁻¹³³, 0, 0"}
	small := attendInput[Float16]{q: []float32{1}, k: fp16Attend.fromFloats([]float32{0, -90}),
		v: fp16Attend.fromFloats([]float32{0, 0x1p-14}), rows: 1, n: 2, dim: 1, stride: 1, scale: 1,
		shape: "scores 0, −90, values 0, 2⁻¹⁴"}
	wantTiny, wantSmall := bf16Attend.reference(tiny, 0), fp16Attend.reference(small, 0)
	varianttest.Each(t, func(variant string) {
		out := make([]float32, 1)
		AttendBF16(out, tiny.q, tiny.k, tiny.v, 1, tiny.n, 1, 1)
		if err := wantTiny[0].Check(0, out[0]); err != nil {
			t.Errorf("%s bf16 %v: %v", variant, tiny, err)
		}
		Attend(out, small.q, small.k, small.v, 1, small.n, 1, 1)
		if err := wantSmall[0].Check(0, out[0]); err != nil {
			t.Errorf("%s fp16 %v: %v", variant, small, err)
		}
	})
}

// TestAttendHeads: AttendHeads gives, head by head, the bits of the AttendStrided loop
// its doc gives, on every variant and format: heads of 0 to 8, around the blocks of
// keys, with special values in some heads (NaN and Inf keys and values, −Inf scale),
// and writes nothing outside out.
func TestAttendHeads(t *testing.T) {
	testAttendHeads(t, fp16Attend)
	testAttendHeads(t, bf16Attend)
	testAttendHeads(t, q8Attend)
	testAttendHeads(t, f32Attend)
}

func testAttendHeads[E comparable](t *testing.T, f *attendKind[E]) {
	r := rand.New(rand.NewPCG(36, uint64(f.per)))
	keyCounts := []int{0, 1, 2, 17, 127, 128, 129, 255, 256, 257, 600}
	if longtest.Short() {
		keyCounts = []int{0, 1, 255, 257}
	}
	type call struct {
		heads, rows, n, dim int
		scale               float32
		q                   []float32
		k, v                []E
	}
	var calls []call
	for _, heads := range []int{0, 1, 2, 3, 8} {
		for _, rows := range []int{0, 1, 4, 5} {
			for _, n := range keyCounts {
				dim := f.dims[r.IntN(len(f.dims))]
				c := call{heads: heads, rows: rows, n: n, dim: dim, scale: float32(r.NormFloat64()) / 4}
				c.q = make([]float32, heads*rows*dim)
				normals(r, c.q, 1)
				c.k, c.v = f.random(r, n*heads*dim), f.random(r, n*heads*dim)
				// Special values in one head, a third of the time.
				if n > 0 && heads > 0 && r.IntN(3) == 0 {
					h := r.IntN(heads)
					at := func() int { return (r.IntN(n)*heads+h)*dim + r.IntN(dim) }
					f.set(c.k, at(), inf32)
					f.set(c.v, at(), nan32)
					if r.IntN(2) == 0 {
						c.scale = float32(math.Inf(-1))
					}
				}
				calls = append(calls, c)
			}
		}
	}
	varianttest.Each(t, func(variant string) {
		for _, c := range calls {
			size, stride := c.rows*c.dim, c.heads*c.dim
			want := make([]float32, c.heads*size)
			for h := range c.heads {
				var k, v []E // head h's rows
				if c.n > 0 {
					k, v = c.k[h*c.dim/f.per:], c.v[h*c.dim/f.per:]
				}
				f.strided(want[h*size:(h+1)*size], c.q[h*size:(h+1)*size], k, v, c.rows, c.n, c.dim, stride, c.scale)
			}
			buf := make([]float32, len(want)+2*dotPad)
			for i := range buf {
				buf[i] = guard
			}
			got := buf[dotPad : dotPad+len(want)]
			f.heads(got, c.q, c.k, c.v, c.heads, c.rows, c.n, c.dim, c.scale)
			what := fmt.Sprintf("%s %s heads=%d rows=%d n=%d dim=%d scale=%v", variant, f.name, c.heads, c.rows, c.n, c.dim, c.scale)
			for e := range got {
				if !sameFloatBits(got[e], want[e]) {
					t.Fatalf("%s: out[%d] = %v, the AttendStrided loop gives %v", what, e, got[e], want[e])
				}
			}
			for i, x := range buf {
				if (i < dotPad || i >= dotPad+len(want)) && x != guard {
					t.Fatalf("%s: wrote buf[%d] = %v outside out", what, i, x)
				}
			}
		}
	})
}
