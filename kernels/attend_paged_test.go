package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/internal/longtest"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/kvsimd/kvsimd/q8"
)

// pagedKind is a format's paged kernels beside its contiguous ones (attendKind).
type pagedKind[E comparable] struct {
	*attendKind[E]
	paged   func(out, q []float32, kPages, vPages [][]E, rows, n, dim, pageRows int, scale float32)
	partial func(st *AttendState, q []float32, kPages, vPages [][]E, n, pageRows int, scale float32)
}

var (
	fp16Paged = &pagedKind[Float16]{fp16Attend, AttendPaged, AttendPartialPaged}
	bf16Paged = &pagedKind[bf16.BFloat16]{bf16Attend, AttendPagedBF16, AttendPartialPagedBF16}
	q8Paged   = &pagedKind[q8.Block]{q8Attend, AttendPagedQ8, AttendPartialPagedQ8}
	f32Paged  = &pagedKind[float32]{f32Attend, AttendPagedF32, AttendPartialPagedF32}
)

// pages splits n packed rows of x into pages of pageRows rows, each a full page of its
// own allocation (the last one's rows past n, and a guard after every page, hold the
// format's NaN gap, which no output may read).
func (f *pagedKind[E]) pages(x []E, n, dim, pageRows int) [][]E {
	de := dim / f.per
	var pages [][]E
	for j := 0; j < n; j += pageRows {
		r := min(pageRows, n-j)
		buf := make([]E, (pageRows+1)*de)
		for i := range buf {
			buf[i] = f.gap
		}
		copy(buf, x[j*de:(j+r)*de])
		pages = append(pages, buf[:pageRows*de])
	}
	return pages
}

// checkPagedBits runs every variant's paged kernels on in's rows split into pages of
// pageRows and holds them to the contiguous kernels' bits: Attend against AttendPaged,
// AttendPartial (then Finish) against AttendPartialPaged.
func checkPagedBits[E comparable](t *testing.T, f *pagedKind[E], in attendInput[E], pageRows int) {
	t.Helper()
	rows, n, dim := in.rows, in.n, in.dim
	kp, vp := f.pages(in.k, n, dim, pageRows), f.pages(in.v, n, dim, pageRows)
	saved := [][]E{slices.Clone(in.k), slices.Clone(in.v)}
	varianttest.Each(t, func(variant string) {
		t.Helper()
		want, got := make([]float32, rows*dim), make([]float32, rows*dim)
		for i := range got {
			got[i] = float32(math.NaN())
		}
		f.attend(want, in.q, in.k, in.v, rows, n, dim, in.scale)
		f.paged(got, in.q, kp, vp, rows, n, dim, pageRows, in.scale)
		for e := range got {
			if !sameFloatBits(got[e], want[e]) {
				t.Fatalf("%s %s %v pageRows=%d: out[%d] = %v, contiguous gives %v", variant, f.name, in, pageRows, e, got[e], want[e])
			}
		}
		var st, sp AttendState
		st.Reset(rows, dim)
		sp.Reset(rows, dim)
		f.attendKind.partial(&st, in.q, in.k, in.v, n, dim, in.scale)
		f.partial(&sp, in.q, kp, vp, n, pageRows, in.scale)
		st.Finish(want)
		sp.Finish(got)
		for e := range got {
			if !sameFloatBits(got[e], want[e]) {
				t.Fatalf("%s %s %v pageRows=%d: partial: out[%d] = %v, contiguous gives %v", variant, f.name, in, pageRows, e, got[e], want[e])
			}
		}
	})
	for x, now := range [][]E{in.k, in.v} {
		if !sameElems(now, saved[x]) {
			t.Fatalf("%s %v: input %d changed", f.name, in, x)
		}
	}
	for p := range kp {
		de := dim / f.per
		if g := kp[p][:cap(kp[p])][len(kp[p]):]; len(g) != de || !sameElems(g[:1], []E{f.gap}) || !sameElems(g[de-1:], []E{f.gap}) {
			t.Fatalf("%s %v: the guard after page %d changed", f.name, in, p)
		}
	}
}

func TestAttendPagedBits(t *testing.T) {
	testAttendPagedBits(t, fp16Paged)
	testAttendPagedBits(t, bf16Paged)
	testAttendPagedBits(t, q8Paged)
	testAttendPagedBits(t, f32Paged)
}

func testAttendPagedBits[E comparable](t *testing.T, f *pagedKind[E]) {
	r := rand.New(rand.NewPCG(43, uint64(f.per)))
	keyCounts := []int{0, 1, 15, 16, 17, 31, 33, 255, 256, 257, 511, 513, 1000}
	pageSizes := []int{16, 32, 64, 256, 7, 100, 512}
	dims := []int{32, 64, 128}
	if longtest.Short() {
		keyCounts = []int{0, 1, 17, 256, 257, 600}
		pageSizes = []int{16, 64, 256, 7}
	}
	c := 0
	for _, dim := range dims {
		for _, n := range keyCounts {
			for _, pageRows := range pageSizes {
				rows := []int{1, 4, 8, 16, 3, 11, 12}[c%7]
				s := c % len(attendShapes)
				c++
				checkPagedBits(t, f, f.input(r, s, rows, n, dim), pageRows)
			}
		}
	}
}

// TestAttendPagedSpecial holds the paged kernels to the contiguous bits where NaN and
// ±Inf queries, keys and values take the composition's path (attendSpecials).
func TestAttendPagedSpecial(t *testing.T) {
	testAttendPagedSpecial(t, fp16Paged)
	testAttendPagedSpecial(t, bf16Paged)
	testAttendPagedSpecial(t, q8Paged)
	testAttendPagedSpecial(t, f32Paged)
}

func testAttendPagedSpecial[E comparable](t *testing.T, f *pagedKind[E]) {
	r := rand.New(rand.NewPCG(44, uint64(f.per)))
	keyCounts := []int{6, 40, 300}
	if longtest.Short() {
		keyCounts = []int{6, 300}
	}
	c := 0
	for _, s := range attendSpecials {
		for _, dim := range []int{32, 64} {
			for _, n := range keyCounts {
				rows := []int{5, 4, 1, 8, 2}[c%5]
				pageRows := []int{16, 7, 32, 256}[c%4]
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
				checkPagedBits(t, f, in, pageRows)
			}
		}
	}
}

// TestAttendPagedPanics checks the paged kernels' conditions on the pages.
func TestAttendPagedPanics(t *testing.T) {
	dim := 32
	page := make([]Float16, 16*dim)
	out, q := make([]float32, dim), make([]float32, dim)
	for _, c := range []struct {
		name   string
		kp, vp [][]Float16
		n, pr  int
	}{
		{"pageRows 0", [][]Float16{page}, [][]Float16{page}, 16, 0},
		{"too few pages", [][]Float16{page}, [][]Float16{page}, 17, 16},
		{"too many pages", [][]Float16{page, page}, [][]Float16{page, page}, 16, 16},
		{"v pages", [][]Float16{page, page}, [][]Float16{page}, 17, 16},
		{"short page", [][]Float16{page[:15*dim]}, [][]Float16{page}, 16, 16},
		{"short last page", [][]Float16{page, page[:dim-1]}, [][]Float16{page, page}, 17, 16},
		{"stale n = 0", [][]Float16{page}, [][]Float16{page}, 0, 16},
		{"negative n", nil, nil, -1, 16},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("AttendPaged with %s did not panic", c.name)
				}
			}()
			AttendPaged(out, q, c.kp, c.vp, 1, c.n, dim, c.pr, 1)
		}()
	}
	// A short last page that holds its rows is fine.
	AttendPaged(out, q, [][]Float16{page, page[:dim]}, [][]Float16{page, page[:dim]}, 1, 17, dim, 16, 1)
}

// TestAttendPagedAllocs checks that the paged kernels allocate nothing in steady
// state, through the one-page, the page-at-a-time and the gathered blocks and the rows
// computed again (as testAttendAllocs does: the least of a few runs).
func TestAttendPagedAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop its contents at random")
	}
	testAttendPagedAllocs(t, fp16Paged)
	testAttendPagedAllocs(t, bf16Paged)
	testAttendPagedAllocs(t, q8Paged)
	testAttendPagedAllocs(t, f32Paged)
}

func testAttendPagedAllocs[E comparable](t *testing.T, f *pagedKind[E]) {
	r := rand.New(rand.NewPCG(45, uint64(f.per)))
	const n, dim = 300, 64 // two blocks
	out := make([]float32, 16*dim)
	var st AttendState
	for _, rows := range []int{4, 16} {
		in := f.input(r, 0, rows, n, dim)
		special := f.input(r, 0, rows, n, dim)
		f.set(special.v, 7*dim+3, inf32) // an Inf value: its rows are computed again
		for _, pageRows := range []int{16, 256} {
			kp, vp := f.pages(in.k, n, dim, pageRows), f.pages(in.v, n, dim, pageRows)
			skp, svp := f.pages(special.k, n, dim, pageRows), f.pages(special.v, n, dim, pageRows)
			o := out[:rows*dim]
			varianttest.Each(t, func(variant string) {
				for _, c := range []struct {
					name string
					call func()
				}{
					{"AttendPaged", func() { f.paged(o, in.q, kp, vp, rows, n, dim, pageRows, in.scale) }},
					{"computed again", func() { f.paged(o, special.q, skp, svp, rows, n, dim, pageRows, special.scale) }},
					{"partial", func() {
						st.Reset(rows, dim)
						f.partial(&st, in.q, kp, vp, n, pageRows, in.scale)
					}},
				} {
					c.call()
					least := testing.AllocsPerRun(3, c.call)
					for range 2 {
						least = min(least, testing.AllocsPerRun(3, c.call))
					}
					if least != 0 {
						t.Errorf("%s %s %s rows=%d pageRows=%d: %v allocations per call", variant, f.name, c.name, rows, pageRows, least)
					}
				}
			})
		}
	}
}

// BenchmarkAttendPaged times a layer's decode attention, Hkv 8 heads of G 4 query rows
// at dim 128 over n 2,048 fp16 rows per head, head by head: contiguous (Attend), and
// AttendPaged over the same rows in pages of 16, 64 and 256 rows, each page an
// allocation of its own, and in pages of 16 and 64 cut from one arena in a shuffled
// order, as a pool hands them out after churn (arena/…). kernels/… runs the row
// kernels over tables alone (scores, then weighted sums, block by block, no softmax)
// over the rows contiguous and in the arena's pages: what the layout itself costs.
func BenchmarkAttendPaged(b *testing.B) {
	const heads, rows, n, dim = 8, 4, 2048, 128
	r := rand.New(rand.NewPCG(46, 1))
	q := make([]float32, heads*rows*dim)
	normals(r, q, 1)
	out := make([]float32, len(q))
	k, v := make([][]Float16, heads), make([][]Float16, heads)
	for h := range heads {
		k[h], v[h] = toHalves(randomF16(r, n*dim)), toHalves(randomF16(r, n*dim))
	}
	scale := float32(1 / math.Sqrt(dim))
	bytes := int64(2 * heads * n * dim * 2)
	b.Run("contiguous", func(b *testing.B) {
		b.SetBytes(bytes)
		for b.Loop() {
			for h := range heads {
				s := h * rows * dim
				Attend(out[s:s+rows*dim], q[s:s+rows*dim], k[h], v[h], rows, n, dim, scale)
			}
		}
	})
	paged := func(name string, kp, vp [][][]Float16, pageRows int) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(bytes)
			for b.Loop() {
				for h := range heads {
					s := h * rows * dim
					AttendPaged(out[s:s+rows*dim], q[s:s+rows*dim], kp[h], vp[h], rows, n, dim, pageRows, scale)
				}
			}
		})
	}
	for _, pageRows := range []int{16, 64, 256} {
		kp, vp := make([][][]Float16, heads), make([][][]Float16, heads)
		for h := range heads {
			kp[h], vp[h] = fp16Paged.pages(k[h], n, dim, pageRows), fp16Paged.pages(v[h], n, dim, pageRows)
		}
		paged(fmt.Sprintf("pages=%d", pageRows), kp, vp, pageRows)
	}
	arenas := map[int][2][][][]Float16{}
	for _, pageRows := range []int{16, 64} {
		kp, vp := arenaPages(r, k, v, n, dim, pageRows)
		arenas[pageRows] = [2][][][]Float16{kp, vp}
		paged(fmt.Sprintf("arena/pages=%d", pageRows), kp, vp, pageRows)
	}

	if scoresTableFP16.Call == nil {
		return // no table kernels on this variant
	}
	s := make([]float32, rows*attendBlock)
	for i := range s {
		s[i] = 1e-3
	}
	acc := make([]float32, rows*dim)
	tables := func(kp, vp [][][]Float16, pageRows int) (kt, vt [][]uintptr) {
		kt, vt = make([][]uintptr, heads), make([][]uintptr, heads)
		for h := range heads {
			kt[h], vt[h] = make([]uintptr, n), make([]uintptr, n)
			listRows(kt[h], kp[h], 0, pageRows, dim)
			listRows(vt[h], vp[h], 0, pageRows, dim)
		}
		return kt, vt
	}
	rowKernels := func(name string, kp, vp [][][]Float16, pageRows int) {
		kt, vt := tables(kp, vp, pageRows)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(bytes)
			for b.Loop() {
				for h := range heads {
					for j0 := 0; j0 < n; j0 += attendBlock {
						scoresTableFP16.Call(s, q[:rows*dim], kt[h][j0:][:attendBlock], vt[h][j0:][:attendBlock], rows, attendBlock, dim, scale)
						addTableFP16.Call(acc, s, vt[h][j0:][:attendBlock], nil, rows, attendBlock)
					}
				}
			}
			runtime.KeepAlive(kp)
			runtime.KeepAlive(vp)
		})
	}
	whole := make([][][]Float16, heads)
	wholeV := make([][][]Float16, heads)
	for h := range heads {
		whole[h], wholeV[h] = [][]Float16{k[h]}, [][]Float16{v[h]}
	}
	rowKernels("kernels/contiguous", whole, wholeV, n)
	for _, pageRows := range []int{16, 64} {
		rowKernels(fmt.Sprintf("kernels/arena/pages=%d", pageRows), arenas[pageRows][0], arenas[pageRows][1], pageRows)
	}
}

// arenaPages cuts pages of pageRows rows for every head's k and v from one arena per
// side, twice the pages' size, in a shuffled order, and copies the rows in.
func arenaPages(r *rand.Rand, k, v [][]Float16, n, dim, pageRows int) (kp, vp [][][]Float16) {
	heads := len(k)
	pages := heads * n / pageRows
	ka, va := make([]Float16, 2*pages*pageRows*dim), make([]Float16, 2*pages*pageRows*dim)
	perm := r.Perm(2 * pages)
	kp, vp = make([][][]Float16, heads), make([][][]Float16, heads)
	for h := range heads {
		for j := 0; j < n; j += pageRows {
			at := perm[0] * pageRows * dim
			perm = perm[1:]
			kp[h] = append(kp[h], ka[at:at+pageRows*dim])
			vp[h] = append(vp[h], va[at:at+pageRows*dim])
			copy(kp[h][len(kp[h])-1], k[h][j*dim:(j+pageRows)*dim])
			copy(vp[h][len(vp[h])-1], v[h][j*dim:(j+pageRows)*dim])
		}
	}
	return kp, vp
}
