package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/oracle"
)

// nanHalf fills the gaps between strided rows: a kernel that reads one makes a NaN.
const nanHalf = 0x7e00

// spreadRows lays the n rows of dim halves in x out stride ≥ dim apart, the gaps
// filled with NaN, the last row ending the slice (as the strided kernels allow).
func spreadRows(x []uint16, n, dim, stride int) []uint16 {
	return spreadElems(x, n, dim, stride, nanHalf)
}

// TestScoresStridedTokenMajor scores every KV head of a token-major cache where it
// lies and requires the bits of Scores on the same head's contiguous keys, on every
// variant, at the panel kernels' shapes (rows of whole and partial panels, the fast
// dims and a general one, key counts around the block sizes).
func TestScoresStridedTokenMajor(t *testing.T) {
	defer Use(Active())
	r := rand.New(rand.NewPCG(23, 1))
	const heads = 3
	for _, dim := range []int{64, 128, 72, 5} {
		for _, n := range []int{1, 17, 130, 257} {
			k := randomF16(r, heads*n*dim)
			cache := toHalves(oracle.TokenMajor(k, heads, n, dim))
			for _, rows := range []int{1, 13, 32, 45, 64} {
				q := randomF32(r, rows*dim)
				want, got := make([]float32, rows*n), make([]float32, rows*n)
				for _, v := range dispatch.Tested() {
					if err := Use(v); err != nil {
						t.Fatal(err)
					}
					for h := range heads {
						Scores(want, q, toHalves(k[h*n*dim:(h+1)*n*dim]), rows, n, dim, 0.125)
						ScoresStrided(got, q, cache[h*dim:], rows, n, dim, heads*dim, 0.125)
						for e := range got {
							if !sameFloat(got[e], want[e]) {
								t.Fatalf("%s dim=%d n=%d rows=%d head %d: strided dst[%d] = %v, contiguous %v", v, dim, n, rows, h, e, got[e], want[e])
							}
						}
					}
				}
			}
		}
	}
}

// TestWeightedSumRowsStridedTokenMajor is TestScoresStridedTokenMajor for
// WeightedSumRowsStrided.
func TestWeightedSumRowsStridedTokenMajor(t *testing.T) {
	defer Use(Active())
	r := rand.New(rand.NewPCG(23, 2))
	const heads = 3
	for _, dim := range []int{1, 7, 64, 128, 136} {
		for _, n := range []int{1, 9, 100} {
			vals := randomF16(r, heads*n*dim)
			cache := toHalves(oracle.TokenMajor(vals, heads, n, dim))
			w := attentionWeights(r, n)
			want, got := make([]float32, dim), make([]float32, dim)
			for _, v := range dispatch.Tested() {
				if err := Use(v); err != nil {
					t.Fatal(err)
				}
				for h := range heads {
					WeightedSumRows(want, w, toHalves(vals[h*n*dim:(h+1)*n*dim]))
					WeightedSumRowsStrided(got, w, cache[h*dim:], heads*dim)
					for d := range got {
						if !sameFloat(got[d], want[d]) {
							t.Fatalf("%s dim=%d n=%d head %d: strided dst[%d] = %v, contiguous %v", v, dim, n, h, d, got[d], want[d])
						}
					}
				}
			}
		}
	}
}

// TestGatherRowsStrided gathers from rows an odd stride apart, NaN between them, into
// a guarded dst, and compares bit for bit with the reference loop.
func TestGatherRowsStrided(t *testing.T) {
	defer Use(Active())
	r := rand.New(rand.NewPCG(23, 3))
	for _, v := range dispatch.Tested() {
		if err := Use(v); err != nil {
			t.Fatal(err)
		}
		for _, dim := range []int{1, 3, 16, 64, 128} {
			for _, extra := range []int{0, 1, 3, 7 * dim} {
				stride, rows := dim+extra, 37
				src := toHalves(spreadRows(randomF16(r, rows*dim), rows, dim, stride))
				for _, n := range []int{0, 1, 5, 40} {
					idx := make([]int32, n)
					for i := range idx {
						idx[i] = int32(r.IntN(rows))
					}
					if n > 0 {
						idx[0] = int32(rows - 1) // the last row, which ends src
					}
					dst, intact := guardedHalves(t, n*dim, 1+n%3)
					GatherRowsStrided(dst, src, idx, dim, stride)
					intact()
					for i, row := range idx {
						for d := range dim {
							if got, want := dst[i*dim+d], src[int(row)*stride+d]; got != want {
								t.Fatalf("%s dim=%d stride=%d: dst[%d][%d] = %#04x, src row %d = %#04x", v, dim, stride, i, d, uint16(got), row, uint16(want))
							}
						}
					}
				}
			}
		}
	}
}

// TestStridedPanics: each strided kernel panics on a stride below dim, a source one
// element short of its last row, and (gather) an index past the last row; and accepts
// the shortest source.
func TestStridedPanics(t *testing.T) {
	const dim, stride, n = 4, 6, 3
	span := (n-1)*stride + dim
	panics := func(f func()) (p bool) {
		defer func() { p = recover() != nil }()
		f()
		return false
	}
	q, dst := make([]float32, 2*dim), make([]float32, 2*n)
	scores := func(k int, s int) func() {
		return func() { ScoresStrided(dst, q, make([]Float16, k), 2, n, dim, s, 1) }
	}
	w, out := make([]float32, n), make([]float32, dim)
	weighted := func(k int, s int) func() {
		return func() { WeightedSumRowsStrided(out, w, make([]Float16, k), s) }
	}
	gather := func(k int, s int, row int32) func() {
		return func() { GatherRowsStrided(make([]Float16, 2*dim), make([]Float16, k), []int32{0, row}, dim, s) }
	}
	for _, c := range []struct {
		name string
		f    func()
		want bool
	}{
		{"ScoresStrided fits", scores(span, stride), false},
		{"ScoresStrided short", scores(span-1, stride), true},
		{"ScoresStrided stride < dim", scores(span, dim-1), true},
		{"ScoresStrided huge stride", scores(span, math.MaxInt), true},
		{"WeightedSumRowsStrided fits", weighted(span, stride), false},
		{"WeightedSumRowsStrided short", weighted(span-1, stride), true},
		{"WeightedSumRowsStrided stride < dim", weighted(span, dim-1), true},
		{"GatherRowsStrided last row", gather(span, stride, n-1), false},
		{"GatherRowsStrided past the last row", gather(span-1, stride, n-1), true},
		{"GatherRowsStrided stride < dim", gather(span, dim-1, 0), true},
	} {
		if got := panics(c.f); got != c.want {
			t.Errorf("%s: panicked = %v, want %v", c.name, got, c.want)
		}
	}
}
