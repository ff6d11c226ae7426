package fuzz

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/x448/float16"
)

// attendMaxProducts caps rows·n·dim of a fuzzed attention, so that every variant and
// the float64 reference run a few thousand times a second; with the top bit of rows
// set the keys repeat past attendKeys, so that the blocks of 256 keys and their
// rescaling are reached within the cap at small dims.
const attendMaxProducts, attendKeys = 1 << 13, 300

// attendRows is n rows of dim values in one of the fused attention's formats: fp16
// (format 0), bfloat16 (1), q8_0 (2, dims a multiple of 32) or float32 (3), as the
// fuzzer gave them.
type attendRows struct {
	h  []kernels.Float16
	bf []bf16.BFloat16
	q  []q8.Block
	f  []float32
}

// attendDim maps the fuzzer's byte to a dim the format takes.
func attendDim(format int, dim uint8) int {
	if format == 2 {
		return q8.BlockLen * (1 + int(dim)%4)
	}
	return 1 + int(dim)%130
}

// attendRowBytes is the bytes of one row of dim values.
func attendRowBytes(format, dim int) int {
	switch format {
	case 2:
		return dim / q8.BlockLen * q8.BlockSize
	case 3:
		return 4 * dim
	}
	return 2 * dim
}

// readAttendRows reads n rows of dim values from data, which holds them.
func readAttendRows(format int, data []byte, dim, n int) attendRows {
	b := data[:n*attendRowBytes(format, dim)]
	switch format {
	case 0:
		return attendRows{h: halves(uint16s(b))}
	case 1:
		return attendRows{bf: bf16.FromBits(uint16s(b))}
	case 3:
		return attendRows{f: float32s(b)}
	}
	c := make([]byte, len(b)) // Go's allocation: 2-byte aligned, as FromBytes needs
	copy(c, b)
	return attendRows{q: q8.FromBytes(c)}
}

// value is value i of the rows, widened exactly.
func (r attendRows) value(i int) float64 {
	switch {
	case r.h != nil:
		return float64(r.h[i].Float32())
	case r.bf != nil:
		return float64(r.bf[i].Float32())
	case r.f != nil:
		return float64(r.f[i])
	case r.q != nil:
		b := r.q[i/q8.BlockLen]
		return float64(float32(b.Q[i%q8.BlockLen]) * b.D.Float32())
	}
	panic("no rows")
}

// repeat extends the given rows of dim values to n by repeating them.
func (r attendRows) repeat(given, n, dim int) attendRows {
	if r.q != nil {
		w := dim / q8.BlockLen
		for j := given; j < n; j++ {
			r.q = append(r.q, r.q[j%given*w:][:w]...)
		}
		return r
	}
	for j := given; j < n; j++ {
		switch {
		case r.h != nil:
			r.h = append(r.h, r.h[j%given*dim:][:dim]...)
		case r.f != nil:
			r.f = append(r.f, r.f[j%given*dim:][:dim]...)
		default:
			r.bf = append(r.bf, r.bf[j%given*dim:][:dim]...)
		}
	}
	return r
}

// spread lays the n rows out stride values apart, elements that widen to NaN between
// them.
func (r attendRows) spread(n, dim, stride int) attendRows {
	if n == 0 {
		return attendRows{}
	}
	switch {
	case r.h != nil:
		return attendRows{h: spread(r.h, n, dim, stride)}
	case r.bf != nil:
		out := make([]bf16.BFloat16, (n-1)*stride+dim)
		for i := range out {
			out[i] = 0x7fc0
		}
		for j := range n {
			copy(out[j*stride:], r.bf[j*dim:(j+1)*dim])
		}
		return attendRows{bf: out}
	case r.f != nil:
		out := make([]float32, (n-1)*stride+dim)
		for i := range out {
			out[i] = math.Float32frombits(0x7fc00000)
		}
		for j := range n {
			copy(out[j*stride:], r.f[j*dim:(j+1)*dim])
		}
		return attendRows{f: out}
	}
	w, ws := dim/q8.BlockLen, stride/q8.BlockLen
	out := make([]q8.Block, (n-1)*ws+w)
	for i := range out {
		out[i].D = float16.Frombits(0x7e00)
	}
	for j := range n {
		copy(out[j*ws:], r.q[j*w:(j+1)*w])
	}
	return attendRows{q: out}
}

// attend runs the format's fused attention, contiguous or (stride > dim) strided.
func attend(format int, out, q []float32, k, v attendRows, rows, n, dim, stride int, scale float32) {
	switch {
	case format == 0 && stride == dim:
		kernels.Attend(out, q, k.h, v.h, rows, n, dim, scale)
	case format == 0:
		kernels.AttendStrided(out, q, k.h, v.h, rows, n, dim, stride, scale)
	case format == 1 && stride == dim:
		kernels.AttendBF16(out, q, k.bf, v.bf, rows, n, dim, scale)
	case format == 1:
		kernels.AttendStridedBF16(out, q, k.bf, v.bf, rows, n, dim, stride, scale)
	case format == 3 && stride == dim:
		kernels.AttendF32(out, q, k.f, v.f, rows, n, dim, scale)
	case format == 3:
		kernels.AttendStridedF32(out, q, k.f, v.f, rows, n, dim, stride, scale)
	case stride == dim:
		kernels.AttendQ8(out, q, k.q, v.q, rows, n, dim, scale)
	default:
		kernels.AttendStridedQ8(out, q, k.q, v.q, rows, n, dim, stride, scale)
	}
}

// compose is Attend's composition: Scores, then Softmax and WeightedSumRows per row.
func compose(format int, out, q []float32, k, v attendRows, rows, n, dim int, scale float32) {
	s := make([]float32, rows*n)
	switch format {
	case 0:
		kernels.Scores(s, q, k.h, rows, n, dim, scale)
	case 1:
		kernels.ScoresBF16(s, q, k.bf, rows, n, dim, scale)
	case 3:
		kernels.ScoresF32(s, q, k.f, rows, n, dim, scale)
	default:
		kernels.ScoresQ8(s, q, k.q, rows, n, dim, scale)
	}
	for i := range rows {
		w, o := s[i*n:(i+1)*n], out[i*dim:(i+1)*dim]
		kernels.Softmax(w)
		switch format {
		case 0:
			kernels.WeightedSumRows(o, w, v.h)
		case 1:
			kernels.WeightedSumRowsBF16(o, w, v.bf)
		case 3:
			kernels.WeightedSumRowsF32(o, w, v.f)
		default:
			kernels.WeightedSumRowsQ8(o, w, v.q)
		}
	}
}

// FuzzAttend takes the format (format%4: fp16, bf16, q8_0, float32), the query rows
// (0 to 9; with the top bit, keys repeated past two blocks), dim and a stride gap from
// its first arguments, and from data rows·dim float32 queries, then n key rows and n
// value rows in the format, as many as fit the cap. Every variant's Attend is held to
// its composition on the same variant (NaN where it is NaN, the same Inf where it is
// ±Inf) and, where that is finite, to the float64 bound of its doc; and the strided
// form, on the same rows spread strideOf(dim, gap) apart, to the contiguous bits.
func FuzzAttend(f *testing.F) {
	seed := make([]byte, 0, 1200)
	for i := range 1200 {
		seed = append(seed, byte(i*37+11))
	}
	f.Add(uint8(0), uint8(2), uint8(3), uint8(5), float32(0.5), []byte{
		0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0xc0, // q row 0: 1, 2, −3
		0x00, 0x00, 0xc0, 0x7f, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x80, 0x3f, // q row 1: NaN, 1, 1
		0x00, 0x3c, 0x00, 0x3c, 0x00, 0xbc, 0x00, 0x7c, 0x00, 0x00, 0x00, 0x3c, // keys: 1, 1, −1; Inf, 0, 1
		0x00, 0x40, 0x00, 0xc0, 0x01, 0x00, 0xff, 0x7b, 0x00, 0x7c, 0x00, 0x80}) // values: 2, −2, 2⁻²⁴; 65504, Inf, −0
	f.Add(uint8(0), uint8(0x84), uint8(7), uint8(0), float32(0.125), seed)
	f.Add(uint8(1), uint8(0x81), uint8(15), uint8(9), float32(-1), seed)
	f.Add(uint8(2), uint8(3), uint8(0), uint8(1), float32(0.25), seed)
	f.Add(uint8(2), uint8(0x85), uint8(1), uint8(2), float32(float32(math.Inf(-1))), seed)
	f.Add(uint8(3), uint8(2), uint8(3), uint8(5), float32(0.5), seed)
	f.Add(uint8(3), uint8(0x81), uint8(15), uint8(9), float32(-1), seed)
	f.Fuzz(func(t *testing.T, format, rows, dim, gap uint8, scale float32, data []byte) {
		if len(data) > scoresMaxBytes {
			return
		}
		fm := int(format % 4)
		d := attendDim(fm, dim)
		r := min(int(rows&0x7f)%10, len(data)/(4*d))
		q := float32s(data[:4*r*d])
		rowBytes := attendRowBytes(fm, d)
		maxKeys := attendMaxProducts / (max(r, 1) * d)
		given := min((len(data)-4*r*d)/(2*rowBytes), maxKeys)
		k := readAttendRows(fm, data[4*r*d:], d, given)
		v := readAttendRows(fm, data[4*r*d+given*rowBytes:], d, given)
		n := given
		if rows&0x80 != 0 && given > 0 {
			n = max(given, min(attendKeys, maxKeys))
			k, v = k.repeat(given, n, d), v.repeat(given, n, d)
		}
		want := oracle.Attend(q, func(j, e int) float64 { return k.value(j*d + e) },
			func(j, e int) float64 { return v.value(j*d + e) }, r, n, d, scale, 0)
		stride := strideOf(d, gap)
		if fm == 2 {
			stride = d + q8.BlockLen*(int(gap)%3)
		}
		sk, sv := k.spread(n, d, stride), v.spread(n, d, stride)
		got, strided, comp := make([]float32, r*d), make([]float32, r*d), make([]float32, r*d)
		varianttest.Each(t, func(variant string) {
			what := fmt.Sprintf("%s: format %d rows=%d n=%d dim=%d scale=%v", variant, fm, r, n, d, scale)
			compose(fm, comp, q, k, v, r, n, d, scale)
			attend(fm, got, q, k, v, r, n, d, d, scale)
			attend(fm, strided, q, sk, sv, r, n, d, stride, scale)
			for e, g := range got {
				i, c := e/d, comp[e]
				switch {
				case n == 0:
					if math.Float32bits(g) != 0 {
						t.Fatalf("%s: out[%d] = %v with no keys, want +0", what, e, g)
					}
				case c != c:
					if g == g {
						t.Fatalf("%s: out[%d*dim+%d] = %v, the composition gives NaN", what, i, e%d, g)
					}
				case c-c != 0:
					if g != c {
						t.Fatalf("%s: out[%d*dim+%d] = %v, the composition gives %v", what, i, e%d, g, c)
					}
				default:
					if err := want[i].Check(e%d, g); err != nil {
						t.Fatalf("%s: out[%d*dim+%d]: %v (the composition gives %v)", what, i, e%d, err, c)
					}
				}
				if !sameBits(strided[e], g) {
					t.Fatalf("%s: stride %d: out[%d] = %v, contiguous gives %v", what, stride, e, strided[e], g)
				}
			}
		})
	})
}

// partial runs the format's AttendPartial on n rows stride values apart.
func partial(format int, st *kernels.AttendState, q []float32, k, v attendRows, n, stride int, scale float32) {
	switch format {
	case 0:
		kernels.AttendPartial(st, q, k.h, v.h, n, stride, scale)
	case 1:
		kernels.AttendPartialBF16(st, q, k.bf, v.bf, n, stride, scale)
	case 3:
		kernels.AttendPartialF32(st, q, k.f, v.f, n, stride, scale)
	default:
		kernels.AttendPartialQ8(st, q, k.q, v.q, n, stride, scale)
	}
}

// part returns rows [lo, hi) of the rows, stride values apart.
func (r attendRows) part(lo, hi, dim, stride int) attendRows {
	if hi == lo {
		return attendRows{}
	}
	if r.q != nil {
		ws := stride / q8.BlockLen
		return attendRows{q: r.q[lo*ws : (hi-1)*ws+dim/q8.BlockLen]}
	}
	if r.h != nil {
		return attendRows{h: r.h[lo*stride : (hi-1)*stride+dim]}
	}
	if r.f != nil {
		return attendRows{f: r.f[lo*stride : (hi-1)*stride+dim]}
	}
	return attendRows{bf: r.bf[lo*stride : (hi-1)*stride+dim]}
}

// FuzzAttendParts is FuzzAttend through the partial form: the keys split where cuts
// says (a byte per boundary, empty parts too), AttendPartial on each part into a state
// of its own, the states merged in the order cuts' bytes also give, then Finish. A row
// whose Attend output is finite must come out finite and within the float64 bound
// with E increased by 4u per merge; a row with a NaN or +Inf score must be NaN. The
// AttendState doc lets other non-finite rows differ from the composition where the
// values hold Inf or NaN, or where Σ wⱼ·vⱼ may overflow; then only NaN for NaN is
// required.
func FuzzAttendParts(f *testing.F) {
	seed := make([]byte, 0, 1200)
	for i := range 1200 {
		seed = append(seed, byte(i*53+7))
	}
	f.Add(uint8(0), uint8(0x83), uint8(7), []byte{40, 3, 200, 0, 9}, float32(0.125), seed)
	f.Add(uint8(1), uint8(2), uint8(3), []byte{0, 0, 255}, float32(-0.5), seed)
	f.Add(uint8(2), uint8(0x84), uint8(0), []byte{128, 64, 17, 5}, float32(0.25), seed)
	f.Add(uint8(3), uint8(0x83), uint8(7), []byte{40, 3, 200, 0, 9}, float32(0.125), seed)
	f.Fuzz(func(t *testing.T, format, rows, dim uint8, cuts []byte, scale float32, data []byte) {
		if len(data) > scoresMaxBytes || len(cuts) > 8 {
			return
		}
		fm := int(format % 4)
		d := attendDim(fm, dim)
		r := min(int(rows&0x7f)%10, len(data)/(4*d))
		q := float32s(data[:4*r*d])
		rowBytes := attendRowBytes(fm, d)
		maxKeys := attendMaxProducts / (max(r, 1) * d)
		given := min((len(data)-4*r*d)/(2*rowBytes), maxKeys)
		k := readAttendRows(fm, data[4*r*d:], d, given)
		v := readAttendRows(fm, data[4*r*d+given*rowBytes:], d, given)
		n := given
		if rows&0x80 != 0 && given > 0 {
			n = max(given, min(attendKeys, maxKeys))
			k, v = k.repeat(given, n, d), v.repeat(given, n, d)
		}
		parts := 1 + len(cuts)/2
		bounds := []int{0, n}
		for _, c := range cuts[:parts-1] {
			bounds = append(bounds, int(c)*n/255)
		}
		slices.Sort(bounds)
		merges := parts - 1
		want := oracle.Attend(q, func(j, e int) float64 { return k.value(j*d + e) },
			func(j, e int) float64 { return v.value(j*d + e) }, r, n, d, scale, 4*0x1p-24*float64(merges))
		special := false // an Inf or NaN value, or values large enough for Σ wⱼ·vⱼ to overflow
		for i := range n * d {
			x := math.Abs(v.value(i))
			special = special || !(x*0x1p24*float64(n) < math.MaxFloat32)
		}
		got, whole := make([]float32, r*d), make([]float32, r*d)
		varianttest.Each(t, func(variant string) {
			what := fmt.Sprintf("%s: format %d rows=%d n=%d dim=%d scale=%v parts %v", variant, fm, r, n, d, scale, bounds)
			states := make([]*kernels.AttendState, parts)
			for p := range parts {
				states[p] = new(kernels.AttendState)
				states[p].Reset(r, d)
				lo, hi := bounds[p], bounds[p+1]
				partial(fm, states[p], q, k.part(lo, hi, d, d), v.part(lo, hi, d, d), hi-lo, d, scale)
			}
			order := cuts[parts-1:]
			for len(states) > 1 {
				a := 0
				if len(order) > 0 {
					a, order = int(order[0])%len(states), order[1:]
				}
				b := (a + 1) % len(states)
				states[a].Merge(states[b])
				states = slices.Delete(states, b, b+1)
			}
			states[0].Finish(got)
			attend(fm, whole, q, k, v, r, n, d, d, scale)
			for e, g := range got {
				i, w := e/d, whole[e]
				switch {
				case n == 0:
					if math.Float32bits(g) != 0 {
						t.Fatalf("%s: out[%d] = %v with no keys, want +0", what, e, g)
					}
				case want[i].NaN || w != w && !special:
					if g == g {
						t.Fatalf("%s: out[%d*dim+%d] = %v, want NaN (Attend gives %v)", what, i, e%d, g, w)
					}
				case w-w != 0 || g-g != 0:
					if !special && !(w == g) {
						t.Fatalf("%s: out[%d*dim+%d] = %v, Attend gives %v", what, i, e%d, g, w)
					}
				default:
					if err := want[i].Check(e%d, g); err != nil {
						t.Fatalf("%s: out[%d*dim+%d]: %v (Attend gives %v)", what, i, e%d, err, w)
					}
				}
			}
		})
	})
}

// from returns the rows from value off on (a multiple of 32 for q8_0).
func (r attendRows) from(off int) attendRows {
	switch {
	case r.h != nil:
		return attendRows{h: r.h[off:]}
	case r.bf != nil:
		return attendRows{bf: r.bf[off:]}
	case r.f != nil:
		return attendRows{f: r.f[off:]}
	case r.q != nil:
		return attendRows{q: r.q[off/q8.BlockLen:]}
	}
	return attendRows{}
}

// queryOf is a query value from one byte: b/16 as a signed byte, but NaN for 0x80 and
// +Inf for 0x7f.
func queryOf(b byte) float32 {
	switch int8(b) {
	case -128:
		return float32(math.NaN())
	case 127:
		return float32(math.Inf(1))
	}
	return float32(int8(b)) / 16
}

// attendRowsOf is the values float32(int8(b))/16 of data's bytes in the format (q8_0:
// quantized in blocks of 32, len(data) a multiple of 32).
func attendRowsOf(format int, data []byte) attendRows {
	x := make([]float32, len(data))
	for i, b := range data {
		x[i] = float32(int8(b)) / 16
	}
	switch format {
	case 0:
		h := make([]kernels.Float16, len(x))
		for i, f := range x {
			h[i] = float16.Fromfloat32(f)
		}
		return attendRows{h: h}
	case 1:
		b := make([]bf16.BFloat16, len(x))
		bf16.FromFloat32(b, x)
		return attendRows{bf: b}
	case 3:
		return attendRows{f: x}
	}
	b := make([]q8.Block, len(x)/q8.BlockLen)
	q8.Quantize(b, x)
	return attendRows{q: b}
}

// attendHeads runs the format's AttendHeads on a token-major layer.
func attendHeads(format int, out, q []float32, k, v attendRows, heads, rows, n, dim int, scale float32) {
	switch format {
	case 0:
		kernels.AttendHeads(out, q, k.h, v.h, heads, rows, n, dim, scale)
	case 1:
		kernels.AttendHeadsBF16(out, q, k.bf, v.bf, heads, rows, n, dim, scale)
	case 3:
		kernels.AttendHeadsF32(out, q, k.f, v.f, heads, rows, n, dim, scale)
	default:
		kernels.AttendHeadsQ8(out, q, k.q, v.q, heads, rows, n, dim, scale)
	}
}

// FuzzAttendHeads takes the format (format%4), the KV heads (heads%9), the query rows
// per head (0 to 9; with the top bit, tokens repeated past two blocks) and dim from
// its first arguments, and from data heads·rows·dim queries, a byte each (queryOf),
// then n tokens of keys and n of values, heads rows each ([n][heads][dim]), as many as
// fit the cap, each value from a byte too (valueOf, rounded to the format). Every
// variant's AttendHeads must give, head by head, the bits of AttendStrided on the
// head's rows (FuzzAttend holds those to the composition and the bound, on raw
// format bits), and write nothing past out. The values are small and finite, and
// the queries mostly so, because a row whose output is not finite is computed again
// from its own query, which would hide a head that took another's.
func FuzzAttendHeads(f *testing.F) {
	seed := make([]byte, 0, 1600)
	for i := range 1600 {
		seed = append(seed, byte(i*29+3))
	}
	f.Add(uint8(0), uint8(2), uint8(0x82), uint8(3), float32(0.5), seed)
	f.Add(uint8(1), uint8(3), uint8(1), uint8(15), float32(-0.25), seed)
	f.Add(uint8(2), uint8(2), uint8(0x81), uint8(0), float32(0.125), seed)
	f.Add(uint8(0), uint8(8), uint8(4), uint8(7), float32(math.Inf(-1)), seed)
	f.Add(uint8(3), uint8(3), uint8(0x82), uint8(15), float32(-0.25), seed)
	f.Fuzz(func(t *testing.T, format, heads, rows, dim uint8, scale float32, data []byte) {
		if len(data) > scoresMaxBytes {
			return
		}
		fm := int(format % 4)
		d := attendDim(fm, dim)
		hk := int(heads % 9)
		r := min(int(rows&0x7f)%10, len(data)/(d*max(hk, 1)))
		q := make([]float32, hk*r*d)
		for i := range q {
			q[i] = queryOf(data[i])
		}
		tokenValues := hk * d
		maxTokens := attendMaxProducts / (max(hk*r, 1) * d)
		given := 0
		if tokenValues > 0 {
			given = min((len(data)-len(q))/(2*tokenValues), maxTokens)
		}
		// The layer as given·heads rows of dim: [n][heads][dim].
		k := attendRowsOf(fm, data[len(q):][:given*tokenValues])
		v := attendRowsOf(fm, data[len(q)+given*tokenValues:][:given*tokenValues])
		n := given
		if rows&0x80 != 0 && given > 0 {
			n = max(given, min(attendKeys, maxTokens))
			k, v = k.repeat(given*hk, n*hk, d), v.repeat(given*hk, n*hk, d)
		}
		size := r * d
		want, buf := make([]float32, hk*size), make([]float32, hk*size+16)
		varianttest.Each(t, func(variant string) {
			what := fmt.Sprintf("%s: format %d heads=%d rows=%d n=%d dim=%d scale=%v", variant, fm, hk, r, n, d, scale)
			for h := range hk {
				var kh, vh attendRows
				if n > 0 {
					kh, vh = k.from(h*d), v.from(h*d)
				}
				attend(fm, want[h*size:(h+1)*size], q[h*size:(h+1)*size], kh, vh, r, n, d, hk*d, scale)
			}
			for i := range buf {
				buf[i] = 1234
			}
			got := buf[:hk*size]
			attendHeads(fm, got, q, k, v, hk, r, n, d, scale)
			for e, g := range got {
				if !sameBits(g, want[e]) {
					t.Fatalf("%s: out[%d] = %v, AttendStrided on head %d gives %v", what, e, g, e/max(size, 1), want[e])
				}
			}
			for i, x := range buf[hk*size:] {
				if x != 1234 {
					t.Fatalf("%s: wrote out[%d] = %v, past len(out) = %d", what, hk*size+i, x, hk*size)
				}
			}
		})
	})
}
