package kernels

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/race"
	"github.com/kvsimd/kvsimd/q8"
)

// The fused decode attention over a block table: an engine that pages its cache
// (vLLM's layout) keeps a head's rows in pages of pageRows rows each, page i holding
// rows i·pageRows on, anywhere in memory. The paged forms walk the same blocks of
// attendBlock keys as Attend, in the same order, with the same float operations, so
// they give Attend's bits over the same rows laid contiguous, at any pageRows:
//
//   - A block that lies in one page (always, when pageRows is a multiple of 256) is
//     Attend's block, passed where it lies.
//   - A block that spans pages is scored a page at a time where its keys lie, into
//     the block's score rows (a score is a dot product of its own key: no neighbour
//     enters it), then its non-finite scores are settled once, as Scores settles
//     them. From pagedPanelRows query rows on, where amd64's Scores would take the
//     block's 256 keys with its panel kernel and a page's few keys with its row
//     kernel, the block's keys are gathered into a pooled scratch and scored by
//     Attend's own call instead.
//   - The weighted sums take the block's value rows page by page where they lie:
//     weightedSumRowsAdd adds each term with one fused multiply-add (generic: one
//     multiply and one add) in order of j from dst's value, so adding a block in
//     pieces is adding it whole. The softmax passes see the whole block, as Attend's.
//   - Where the variant has row kernels over tables of row addresses (amd64's), a
//     block that spans pages is not cut up: its keys' and values' addresses are
//     listed, and one call scores the block and one per four query rows adds it, each
//     with the stride kernel's tiles and chains, so with the same bits. Cut into pages
//     of 16 rows, a block of 256 keys had cost 32 calls, a tile of a single key at
//     each page's end and no prefetch of the next page's keys (docs/performance.md).
//
// A list of pages, one slice each, is the table's form: it is what an engine's table
// of page indices into an arena becomes with one slicing per page, which the engine
// does once per sequence and layer and reuses across decode steps (or keeps, when its
// pages are allocations of their own), and it holds any page layout an arena has
// without the kernels knowing it. An int32 table into one arena would spare the engine
// that slice list (24 bytes a page) but fix the arena's layout in the kernels' API.

// AttendPaged is [Attend] over keys and values held in pages of pageRows rows: key j
// is kPages[j/pageRows][(j%pageRows)*dim:][:dim], value j likewise in vPages. It is
// the loop
//
//	k, v := []Float16{}, []Float16{}
//	for p := range kPages {
//		r := min(pageRows, n-p*pageRows) // the last page may be partial
//		k, v = append(k, kPages[p][:r*dim]...), append(v, vPages[p][:r*dim]...)
//	}
//	Attend(out, q, k, v, rows, n, dim, scale)
//
// without the copies, and with that loop's bits on every variant, its bound and its
// special values. It panics unless Attend's conditions on out, q, rows, n and dim
// hold, pageRows ≥ 1, len(kPages) == len(vPages) == ⌈n/pageRows⌉ and each page
// holds at least its rows (len ≥ r·dim; a full-size last page is fine). It allocates
// nothing in steady state.
func AttendPaged(out, q []float32, kPages, vPages [][]Float16, rows, n, dim, pageRows int, scale float32) {
	checkAttendArgs("AttendPaged", out, q, 0, 0, 1, rows, 0, dim, dim, true)
	checkPages("AttendPaged", kPages, vPages, 1, n, dim, pageRows)
	attendPaged(&pagedFP16, out, q, kPages, vPages, rows, n, dim, pageRows, scale)
}

// AttendPagedBF16 is [AttendPaged] over bfloat16 keys and values: AttendBF16's bits.
func AttendPagedBF16(out, q []float32, kPages, vPages [][]bf16.BFloat16, rows, n, dim, pageRows int, scale float32) {
	checkAttendArgs("AttendPagedBF16", out, q, 0, 0, 1, rows, 0, dim, dim, true)
	checkPages("AttendPagedBF16", kPages, vPages, 1, n, dim, pageRows)
	attendPaged(&pagedBF16, out, q, kPages, vPages, rows, n, dim, pageRows, scale)
}

// AttendPagedQ8 is [AttendPaged] over q8_0 keys and values (dim a multiple of 32; a
// page of r rows holds r·dim/32 blocks): AttendQ8's bits.
func AttendPagedQ8(out, q []float32, kPages, vPages [][]q8.Block, rows, n, dim, pageRows int, scale float32) {
	checkAttendArgs("AttendPagedQ8", out, q, 0, 0, q8.BlockLen, rows, 0, dim, dim, true)
	checkPages("AttendPagedQ8", kPages, vPages, q8.BlockLen, n, dim, pageRows)
	attendPaged(&pagedQ8, out, q, kPages, vPages, rows, n, dim, pageRows, scale)
}

// AttendPartialPaged is [AttendPartial] over n keys and values in pages of pageRows
// rows, as AttendPaged takes them: the same bits as AttendPartial over the rows laid
// contiguous (stride dim). It panics on AttendPaged's conditions on the pages, with
// rows and dim from st.
func AttendPartialPaged(st *AttendState, q []float32, kPages, vPages [][]Float16, n, pageRows int, scale float32) {
	checkPartialQueries("AttendPartialPaged", st, q)
	checkPages("AttendPartialPaged", kPages, vPages, 1, n, st.dim, pageRows)
	attendPartialPaged(&pagedFP16, st, q, kPages, vPages, n, pageRows, scale)
}

// AttendPartialPagedBF16 is [AttendPartialPaged] over bfloat16 keys and values.
func AttendPartialPagedBF16(st *AttendState, q []float32, kPages, vPages [][]bf16.BFloat16, n, pageRows int, scale float32) {
	checkPartialQueries("AttendPartialPagedBF16", st, q)
	checkPages("AttendPartialPagedBF16", kPages, vPages, 1, n, st.dim, pageRows)
	attendPartialPaged(&pagedBF16, st, q, kPages, vPages, n, pageRows, scale)
}

// AttendPartialPagedQ8 is [AttendPartialPaged] over q8_0 keys and values.
func AttendPartialPagedQ8(st *AttendState, q []float32, kPages, vPages [][]q8.Block, n, pageRows int, scale float32) {
	checkPartialQueries("AttendPartialPagedQ8", st, q)
	checkPages("AttendPartialPagedQ8", kPages, vPages, q8.BlockLen, n, st.dim, pageRows)
	attendPartialPaged(&pagedQ8, st, q, kPages, vPages, n, pageRows, scale)
}

// checkPages panics unless the pages hold n rows of dim values (perElem to an element)
// in pages of pageRows rows, the last one possibly partial.
func checkPages[E any](kernel string, kPages, vPages [][]E, perElem, n, dim, pageRows int) {
	if n < 0 || pageRows < 1 || dim < 1 || dim%perElem != 0 {
		panic(fmt.Sprintf("kernels.%s: n = %d, dim = %d, pageRows = %d, want n ≥ 0, dim ≥ 1, pageRows ≥ 1%s",
			kernel, n, dim, pageRows, multipleOf(perElem)))
	}
	pages := n / pageRows
	if n%pageRows != 0 {
		pages++
	}
	if len(kPages) != pages || len(vPages) != pages {
		panic(fmt.Sprintf("kernels.%s: len(kPages) = %d, len(vPages) = %d, want ⌈n/pageRows⌉ = %d for n = %d, pageRows = %d",
			kernel, len(kPages), len(vPages), pages, n, pageRows))
	}
	de := dim / perElem
	for p := range pages {
		r := min(pageRows, n-p*pageRows)
		want, ok := mulSize(r, de)
		if !ok || len(kPages[p]) < want || len(vPages[p]) < want {
			panic(fmt.Sprintf("kernels.%s: page %d: len(k) = %d, len(v) = %d, want ≥ %d rows of dim = %d",
				kernel, p, len(kPages[p]), len(vPages[p]), r, dim))
		}
	}
}

// pagedFormat is a format's fused attention with what the paged forms add: a pool of
// one block's gathered keys, and the float64 reading of a value for the settling of
// non-finite outputs.
type pagedFormat[E any] struct {
	*attendFormat[E]
	scratch *sync.Pool // of *[]E
	// raw is the variant's Scores kernel on packed keys before settling, prefetching
	// ahead.
	raw func(dst, q []float32, k, ahead []E, rows, n, dim, stride int, scale float32)
	// scoresTable and addTable are the row kernels over tables of row addresses; their
	// Call is nil where the variant has none.
	scoresTable *dispatch.Func[rowTableScores]
	addTable    *dispatch.Func[rowTableAdd]
}

// rowTableScores and rowTableAdd are the Scores row kernel and weightedSumRowsAdd
// reading row j at the address k[j] (v[j]), prefetching the row at ahead[j] (ahead
// empty or of n entries): asm.Scores*RowsTable* and asm.WeightedSumRowsAdd*Table*.
// Only amd64's variants have them; generic and neon take a block a page at a time.
type (
	rowTableScores = func(dst, q []float32, k, ahead []uintptr, rows, n, dim int, scale float32)
	rowTableAdd    = func(dst, w []float32, v, ahead []uintptr, rows, n int)
)

var (
	scoresTableFP16 = dispatch.New[rowTableScores](nil)
	scoresTableBF16 = dispatch.New[rowTableScores](nil)
	scoresTableQ8   = dispatch.New[rowTableScores](nil)
	scoresTableF32  = dispatch.New[rowTableScores](nil)
	addTableFP16    = dispatch.New[rowTableAdd](nil)
	addTableBF16    = dispatch.New[rowTableAdd](nil)
	addTableQ8      = dispatch.New[rowTableAdd](nil)
	addTableF32     = dispatch.New[rowTableAdd](nil)

	pagedFP16 = pagedFormat[Float16]{&attendFP16, &sync.Pool{New: func() any { return new([]Float16) }},
		func(dst, q []float32, k, ahead []Float16, rows, n, dim, stride int, scale float32) {
			scoresAhead.Call(dst, q, fp16.Bits(k), fp16.Bits(ahead), rows, n, dim, stride, scale)
		}, scoresTableFP16, addTableFP16}
	pagedBF16 = pagedFormat[bf16.BFloat16]{&attendBF16, &sync.Pool{New: func() any { return new([]bf16.BFloat16) }},
		func(dst, q []float32, k, ahead []bf16.BFloat16, rows, n, dim, stride int, scale float32) {
			scoresAheadBF16.Call(dst, q, bf16.Bits(k), bf16.Bits(ahead), rows, n, dim, stride, scale)
		}, scoresTableBF16, addTableBF16}
	pagedQ8 = pagedFormat[q8.Block]{&attendQ8, &sync.Pool{New: func() any { return new([]q8.Block) }},
		func(dst, q []float32, k, ahead []q8.Block, rows, n, dim, stride int, scale float32) {
			scoresAheadQ8.Call(dst, q, q8.Bytes(k), q8.Bytes(ahead), rows, n, dim, stride/q8.BlockLen, scale)
		}, scoresTableQ8, addTableQ8}
)

// attendPaged runs the checked kernel, as attend runs Attend.
func attendPaged[E any](f *pagedFormat[E], out, q []float32, kPages, vPages [][]E, rows, n, dim, pageRows int, scale float32) {
	if rows == 0 {
		return
	}
	race.Read(q)
	race.Write(out)
	st := attendStates.Get().(*AttendState)
	st.Reset(rows, dim)
	attendPartialPaged(f, st, q, kPages, vPages, n, pageRows, scale)
	finishAttendPaged(f, st, out, q, kPages, vPages, n, pageRows, scale)
	attendStates.Put(st)
}

// attendPartialPaged runs attendPartial's blocks over the pages.
func attendPartialPaged[E any](f *pagedFormat[E], st *AttendState, q []float32, kPages, vPages [][]E, n, pageRows int, scale float32) {
	rows, dim := st.rows, st.dim
	if rows == 0 || n == 0 {
		return
	}
	race.Read(q)
	de := dim / f.perElem
	for p := range kPages {
		r := min(pageRows, n-p*pageRows)
		f.race(kPages[p][:r*de], vPages[p][:r*de])
	}
	st.weights = growN(st.weights, rows*attendBlock)
	passes := attendPasses.Call
	var gathered *[]E
	var t *rowTables
	if f.scoresTable.Call != nil {
		t = &st.tables
		t.grow()
	}
	keysListed := false // t.keys lists the block's keys
	for j0 := 0; j0 < n; j0 += attendBlock {
		b := min(attendBlock, n-j0)
		p, at := j0/pageRows, j0%pageRows
		if at+b <= pageRows { // the block lies in one page: Attend's block where it lies
			var next []E
			if j1 := j0 + b; n-j1 >= b && j1%pageRows+b <= pageRows {
				next = kPages[j1/pageRows][j1%pageRows*de:][:b*de]
			}
			attendBlockOf(f.attendFormat, st, passes, q, kPages[p][at*de:][:b*de], vPages[p][at*de:][:b*de], next, b, dim, scale)
			keysListed = false
			continue
		}
		if t != nil {
			if !keysListed {
				listRows(t.keys[:b], kPages, j0, pageRows, de)
			}
			listRows(t.values[:b], vPages, j0, pageRows, de)
			// The next block's keys, prefetched as this block's values are added, are
			// listed now and kept for it; as in Attend, only a whole block's.
			t.ahead = t.next[:0]
			if j1 := j0 + b; n-j1 >= b {
				t.ahead = t.next[:b]
				listRows(t.ahead, kPages, j1, pageRows, de)
			}
		}
		var kb []E // the block's keys gathered, or nil to score them a page at a time
		if rows >= pagedPanelRows {
			if gathered == nil {
				gathered = f.scratch.Get().(*[]E)
				*gathered = growN(*gathered, attendBlock*de)
			}
			kb = (*gathered)[:b*de]
			for j := 0; j < b; {
				p, at := (j0+j)/pageRows, (j0+j)%pageRows
				c := min(pageRows-at, b-j)
				copy(kb[j*de:], kPages[p][at*de:][:c*de])
				j += c
			}
		}
		attendPagedBlock(f, st, passes, q, kb, t, kPages, vPages, j0, b, n, pageRows, scale)
		if t != nil {
			t.keys, t.next = t.next, t.keys
			keysListed = len(t.ahead) > 0
		}
	}
	if gathered != nil {
		f.scratch.Put(gathered)
	}
	// The tables hold the pages' addresses as integers, which keep nothing alive; the
	// pages are heap memory (the kernels above take them through function values,
	// through which they escape), which does not move.
	runtime.KeepAlive(kPages)
	runtime.KeepAlive(vPages)
}

// rowTables are one block's row addresses for the table kernels, attendBlock entries
// each: its keys', its values', and the next block's keys' (ahead, the part of next in
// use, or empty), which become the keys' for the next block.
type rowTables struct {
	keys, values, next []uintptr
	ahead              []uintptr
}

func (t *rowTables) grow() {
	t.keys = growN(t.keys, attendBlock)
	t.values = growN(t.values, attendBlock)
	t.next = growN(t.next, attendBlock)
}

// listRows sets t[j] to the address of row j0+j in pages of pageRows rows of de
// elements each.
func listRows[E any](t []uintptr, pages [][]E, j0, pageRows, de int) {
	var e E
	size := uintptr(de) * unsafe.Sizeof(e)
	p, at := j0/pageRows, j0%pageRows
	for len(t) > 0 {
		c := min(pageRows-at, len(t))
		row := uintptr(unsafe.Pointer(unsafe.SliceData(pages[p][at*de:])))
		for i := range t[:c] {
			t[i] = row
			row += size
		}
		t = t[c:]
		p, at = p+1, 0
	}
}

// pagedPanelRows is the fewest query rows for which a block spanning pages is scored
// from a gathered copy of its keys. With fewer, no variant's Scores kernel depends on
// the number of keys it is given: generic and neon compute each score alike in every
// kernel, and amd64's row kernel reduces every tile of keys in one order, while its
// panel kernels, which take blocks of 128 keys or more (asm_dot_amd64.go:
// panelMinKeys), start at 12 rows (panelMinRows). So a block's scores can be taken a
// page at a time where the pages lie; from 12 rows on, the block is copied whole.
const pagedPanelRows = 12

// attendPagedBlock is attendBlockOf for the block of b keys from key j0 whose rows lie
// in pages (kb: its keys gathered, or nil; t: their rows listed, or nil): the same
// scores, weights and sums.
func attendPagedBlock[E any](f *pagedFormat[E], st *AttendState, passes softmaxPasses, q []float32, kb []E, t *rowTables, kPages, vPages [][]E, j0, b, n, pageRows int, scale float32) {
	rows, dim := st.rows, st.dim
	de := dim / f.perElem
	s := st.weights[:rows*b]
	switch {
	case kb != nil:
		f.scores(s, q, kb, nil, rows, b, dim, dim, scale)
	case t != nil:
		race.Write(s)
		f.scoresTable.Call(s, q, t.keys[:b], t.values[:b], rows, b, dim, scale)
		settleScores(s, q, pagedKeys[E]{f, kPages, j0, pageRows, dim}, b, dim, scale, f.keyMax)
	default:
		// Score each page's part of the block with the unchecked kernel (into the
		// block's [rows][b] layout), prefetching its values as Attend's scoring does,
		// then settle the block's non-finite scores once, as Scores settles them.
		race.Write(s)
		if rows > 1 {
			st.row = growN(st.row, rows*min(pageRows, attendBlock))
		}
		for j := 0; j < b; {
			p, at := (j0+j)/pageRows, (j0+j)%pageRows
			c := min(pageRows-at, b-j)
			k, v := kPages[p][at*de:][:c*de], vPages[p][at*de:][:c*de]
			if rows == 1 {
				f.raw(s[j:j+c], q, k, v, 1, c, dim, dim, scale)
			} else {
				t := st.row[:rows*c]
				f.raw(t, q, k, v, rows, c, dim, dim, scale)
				for i := range rows {
					copy(s[i*b+j:][:c], t[i*c:][:c])
				}
			}
			j += c
		}
		settleScores(s, q, pagedKeys[E]{f, kPages, j0, pageRows, dim}, b, dim, scale, f.keyMax)
	}
	for i := rows - 1; i > 0 && b < attendBlock; i-- {
		copy(st.weights[i*attendBlock:][:b], st.weights[i*b:][:b])
	}
	for i := range rows {
		st.blockWeights(passes, i, st.weights[i*attendBlock:][:b])
	}
	if t != nil {
		ahead := t.ahead
		for i := 0; i < rows; i += attendRows {
			r := min(attendRows, rows-i)
			f.addTable.Call(st.acc[i*dim:(i+r)*dim], st.weights[i*attendBlock:(i+r-1)*attendBlock+b], t.values[:b], ahead, r, b)
			ahead = nil // prefetched once
		}
		return
	}
	// The weighted sums prefetch the next block's keys where a part of it lies in one
	// page as the part of this block they add does.
	j1 := j0 + b
	for i := 0; i < rows; i += attendRows {
		r := min(attendRows, rows-i)
		for j := 0; j < b; {
			p, at := (j0+j)/pageRows, (j0+j)%pageRows
			c := min(pageRows-at, b-j)
			var next []E
			if i == 0 && n-j1 >= b && (j1+j)%pageRows+c <= pageRows {
				next = kPages[(j1+j)/pageRows][(j1+j)%pageRows*de:][:c*de]
			}
			f.add(st.acc[i*dim:(i+r)*dim], st.weights[i*attendBlock+j:(i+r-1)*attendBlock+j+c], vPages[p][at*de:][:c*de], next, r, c, dim)
			j += c
		}
	}
}

// pagedKeys are the keys of a block from key j0 in pages, read for settling.
type pagedKeys[E any] struct {
	f            *pagedFormat[E]
	pages        [][]E
	j0, pageRows int
	dim          int
}

func (k pagedKeys[E]) at(j, d int) float64 {
	j += k.j0
	return k.f.at(k.pages[j/k.pageRows], j%k.pageRows, d, k.dim)
}

// finishAttendPaged is finishAttend over pages: a row whose output is not finite is
// computed again by the composition, Scores, Softmax and WeightedSumRows, a page at a
// time, with the contiguous composition's bits (one query row takes the same Scores
// kernel at every n, and WeightedSumRows' sum is the chain that weightedSumRowsAdd
// continues).
func finishAttendPaged[E any](f *pagedFormat[E], st *AttendState, out, q []float32, kPages, vPages [][]E, n, pageRows int, scale float32) {
	st.Finish(out)
	dim := st.dim
	de := dim / f.perElem
	for i := range st.rows {
		o := out[i*dim : (i+1)*dim]
		if s := sumOf.Call(o); s-s == 0 {
			continue
		}
		st.row = growN(st.row, n)
		s := st.row
		qi := q[i*dim : (i+1)*dim]
		for p := range kPages {
			r := min(pageRows, n-p*pageRows)
			f.scores(s[p*pageRows:][:r], qi, kPages[p][:r*de], nil, 1, r, dim, dim, scale)
		}
		softmax.Call(s)
		clear(o)
		for p := range vPages {
			r := min(pageRows, n-p*pageRows)
			f.add(o, s[p*pageRows:][:r], vPages[p][:r*de], nil, 1, r, dim)
		}
		settlePaged(f, o, s, vPages, pageRows)
	}
}

// settlePaged is settleWeightedSumRows over pages: each non-finite output summed
// again in float64 over j in order.
func settlePaged[E any](f *pagedFormat[E], dst, w []float32, vPages [][]E, pageRows int) {
	if s := sumOf.Call(dst); s-s == 0 {
		return
	}
	dim := len(dst)
	for d, x := range dst {
		if x-x == 0 {
			continue
		}
		var t float64
		for j, p := range w {
			t += float64(p) * f.at(vPages[j/pageRows], j%pageRows, d, dim)
		}
		dst[d] = float32(t)
	}
}
