package kernels

import (
	"fmt"
	"sync"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/internal/race"
	"github.com/kvsimd/kvsimd/q8"
)

// AttendHeads is one decoded token's attention for every KV head of a layer of a
// token-major cache at once: k and v hold n tokens of heads rows of dim values each
// ([n][heads][dim]), q and out hold heads groups of rows query rows ([heads][rows][dim]),
// and group h attends to KV head h. It is the loop
//
//	for h := 0; h < heads; h++ {
//		g := h * rows * dim
//		AttendStrided(out[g:g+rows*dim], q[g:g+rows*dim], k[h*dim:], v[h*dim:], rows, n, dim, heads*dim, scale)
//	}
//
// with that loop's bits, bound and special values, but not its order: the loop reads
// each head's rows heads·dim values apart, one head after another, a walk over the
// whole cache per head that the hardware prefetchers do not follow, where AttendHeads
// takes the keys a block at a time across all heads (prefetching the next head's
// block), so that the layer streams from memory nearly in order. On Zen 5 (fp16, 8
// heads, G = 4, dim 128) the loop took 1.8× the time of Attend over the same bytes
// head-major at 65,536 tokens, AttendHeads 1.1–1.2× (1.35 and 1.3 at 16,384 tokens;
// docs/performance.md).
//
// It panics unless heads, rows, n ≥ 0, dim ≥ 1, len(q) == len(out) == heads·rows·dim
// and len(k) == len(v) == n·heads·dim. out must not overlap q, k or v.
func AttendHeads(out, q []float32, k, v []Float16, heads, rows, n, dim int, scale float32) {
	checkAttendHeadsArgs("AttendHeads", out, q, len(k), len(v), 1, heads, rows, n, dim)
	attendHeads(&attendFP16, out, q, k, v, heads, rows, n, dim, scale)
}

// AttendHeadsBF16 is [AttendHeads] over bfloat16 keys and values: the loop of
// AttendStridedBF16 calls.
func AttendHeadsBF16(out, q []float32, k, v []bf16.BFloat16, heads, rows, n, dim int, scale float32) {
	checkAttendHeadsArgs("AttendHeadsBF16", out, q, len(k), len(v), 1, heads, rows, n, dim)
	attendHeads(&attendBF16, out, q, k, v, heads, rows, n, dim, scale)
}

// AttendHeadsQ8 is [AttendHeads] over q8_0 keys and values (dim a multiple of 32; k
// and v hold n·heads·dim/32 blocks): the loop of AttendStridedQ8 calls.
func AttendHeadsQ8(out, q []float32, k, v []q8.Block, heads, rows, n, dim int, scale float32) {
	checkAttendHeadsArgs("AttendHeadsQ8", out, q, len(k), len(v), q8.BlockLen, heads, rows, n, dim)
	attendHeads(&attendQ8, out, q, k, v, heads, rows, n, dim, scale)
}

// checkAttendHeadsArgs panics unless an AttendHeads kernel's conditions hold.
func checkAttendHeadsArgs(kernel string, out, q []float32, kLen, vLen, perElem, heads, rows, n, dim int) {
	if heads < 0 || rows < 0 || n < 0 || dim < 1 || dim%perElem != 0 {
		panic(fmt.Sprintf("kernels.%s: heads = %d, rows = %d, n = %d, dim = %d, want heads, rows, n ≥ 0 and dim ≥ 1%s",
			kernel, heads, rows, n, dim, multipleOf(perElem)))
	}
	token, ok := mulSize(heads, dim)
	qLen, ok2 := mulSize(token, rows)
	kv, ok3 := mulSize(token, n)
	if !ok || !ok2 || !ok3 {
		panic(fmt.Sprintf("kernels.%s: heads·rows·dim or n·heads·dim overflows int for heads = %d, rows = %d, n = %d, dim = %d",
			kernel, heads, rows, n, dim))
	}
	if len(q) != qLen || len(out) != qLen {
		panic(fmt.Sprintf("kernels.%s: len(out) = %d, len(q) = %d, want heads·rows·dim = %d·%d·%d = %d",
			kernel, len(out), len(q), heads, rows, dim, qLen))
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

// attendHeadStates are the states of one AttendHeads call, a state per head.
type attendHeadStates struct{ heads []AttendState }

var attendHeadPool = sync.Pool{New: func() any { return new(attendHeadStates) }}

// attendHeads runs the checked kernel: head h's blocks are the blocks attendPartial
// takes, and its rows are finished as attend finishes them, so each head's bits are
// AttendStrided's.
func attendHeads[E any](f *attendFormat[E], out, q []float32, k, v []E, heads, rows, n, dim int, scale float32) {
	if heads == 0 || rows == 0 {
		return
	}
	race.Read(q)
	race.Write(out)
	f.race(k, v)
	hs := attendHeadPool.Get().(*attendHeadStates)
	hs.heads = growN(hs.heads, heads)
	for h := range hs.heads {
		hs.heads[h].Reset(rows, dim)
		hs.heads[h].weights = growN(hs.heads[h].weights, rows*attendBlock)
	}
	size, stride := rows*dim, heads*dim
	se, de := stride/f.perElem, dim/f.perElem // elements of E
	passes := attendPasses.Call
	for j0 := 0; j0 < n; j0 += attendBlock {
		b := min(attendBlock, n-j0)
		span := (b-1)*se + de
		for h := range heads {
			at := j0*se + h*de
			// The rows this loop takes next: the next head's block, or the first
			// head's next block (not a shorter last one, as in attendPartial).
			var next []E
			if h+1 < heads {
				next = k[at+de:][:span]
			} else if n-j0-b >= b {
				next = k[(j0+b)*se:][:span]
			}
			attendBlockOf(f, &hs.heads[h], passes, q[h*size:][:size], k[at:][:span], v[at:][:span], next, b, stride, scale)
		}
	}
	for h := range heads {
		var kh, vh []E // head h's rows
		if n > 0 {
			span := (n-1)*se + de
			kh, vh = k[h*de:][:span], v[h*de:][:span]
		}
		finishAttend(f, &hs.heads[h], out[h*size:][:size], q[h*size:][:size], kh, vh, n, stride, scale)
	}
	attendHeadPool.Put(hs)
}
