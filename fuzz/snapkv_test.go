package fuzz

import (
	"github.com/kvsimd/kvsimd/internal/oracle"
	"math"
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/internal/varianttest"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
	"github.com/x448/float16"
)

// FuzzSelect feeds snapkv.Select arbitrary configurations, shapes and data on every
// variant: it must return an error or a well-formed selection, never panic. Slices
// are allocated at the declared shape (one of them lenDelta elements off) when the
// shape is small, and short otherwise, so that huge or overflowing dimensions reach
// the validation without allocating them.
func FuzzSelect(f *testing.F) {
	// enums: bit 0 pool, bit 1 rule, bits 2-3 group, bit 4 alloc, bits 5-6 source
	// (0 queries, 1 attention, 2 key proxy), bits 7-8 which slice lenDelta changes,
	// bits 9-10 the layout (2 and 3 are no layout).
	f.Add(16, 0.0, 4, 5, 0, 0.0, uint16(0), int8(1), 4, 2, 48, 8, int8(0), []byte{0, 0, 128, 63, 0, 0, 0, 192})
	f.Add(0, 0.25, 8, 3, 2, 0.2, uint16(2|1<<4), int8(2), 2, 1, 100, 16, int8(0), []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(10, 0.0, 3, 1, 1, 0.0, uint16(2|1<<5), int8(3), 3, 3, 30, 0, int8(0), []byte{0, 0, 192, 127, 0, 0, 128, 127})
	f.Add(12, 0.0, 4, 7, 0, 0.0, uint16(1|2<<5), int8(0), 0, 2, 64, 4, int8(0), []byte{0x00, 0x3c, 0x00, 0xbc})
	f.Add(8, 0.0, 4, 3, 0, 0.0, uint16(0), int8(1), 4, 2, 32, 8, int8(-1), []byte{})
	f.Add(8, 0.0, 4, 3, 0, 0.0, uint16(0), int8(1), math.MaxInt32, math.MaxInt32, math.MaxInt32, math.MaxInt/4, int8(0), []byte{})
	f.Add(-3, math.NaN(), 0, 4, -1, 2.0, uint16(0xffff), int8(-2), -1, 0, -5, -1, int8(0), []byte{})
	f.Fuzz(func(t *testing.T, budget int, ratio float64, window, kernel, sinks int, floor float64, enums uint16,
		workers int8, qHeads, kvHeads, n, dim int, lenDelta int8, data []byte) {
		cfg := snapkv.Config{
			Budget: budget, KeepRatio: ratio, Window: window, Kernel: kernel, Sinks: sinks, Floor: floor,
			Pool: snapkv.Pool(enums & 1), Rule: snapkv.Rule(enums >> 1 & 1), Group: snapkv.Group(enums >> 2 & 3),
			Alloc: snapkv.Alloc(enums >> 4 & 1), Workers: int(workers % 8),
		}
		in := snapkv.Input{QHeads: qHeads, KVHeads: kvHeads, Len: n, Dim: dim, Layout: snapkv.Layout(enums >> 9 & 3)}
		small := qHeads >= 0 && qHeads <= 16 && kvHeads >= 0 && kvHeads <= 16 && n >= 0 && n <= 300 && dim >= 0 && dim <= 128
		w := max(min(window, n), 0)
		sizes := [3]int{1, 1, 1} // Q, Attn, K, when the shape is not small
		if small {
			sizes = [3]int{qHeads * w * dim, qHeads * w * n, kvHeads * n * dim}
		}
		sizes[enums>>7&3%3] = max(sizes[enums>>7&3%3]+int(lenDelta), 0)
		values, halves := float32s(data), uint16s(data)
		switch enums >> 5 & 3 {
		case 0:
			in.Q = fill(make([]float32, sizes[0]), values, 0)
		case 1:
			in.Attn = fill(make([]float32, sizes[1]), values, 0)
		case 3:
			in.Q, in.Attn = []float32{}, []float32{}
		}
		k := fill(make([]uint16, sizes[2]), halves, 0x3c00)
		if len(k) > 0 || in.Attn == nil { // with Attn, no keys is a nil K
			in.K = make([]fp16.Float16, len(k))
			for i, h := range k {
				in.K[i] = fp16.Float16(h)
			}
		}
		varianttest.Each(t, func(v string) {
			sel, err := snapkv.Select(cfg, in)
			if err != nil {
				if len(err.Error()) < 10 || err.Error()[:8] != "snapkv: " {
					t.Fatalf("%s: error %q does not start with the package name", v, err)
				}
				return
			}
			checkSelection(t, v, cfg, in, sel)
		})
	})
}

// FuzzSelectLayout selects the same layer head-major and token-major (its K the first
// positions of a context-sized buffer whose room holds NaN) on every variant, and
// requires the same rows or the same error. The head counts, Len and Dim are small and
// valid, so that most inputs are selected; the configuration is as fuzzed. enums: bit
// 0 pool, bit 1 rule, bits 2-3 group, bit 4 alloc, bits 5-6 source (0 queries, 1
// attention, 2 key proxy, 3 attention without keys), bits 7-8 workers − 1.
func FuzzSelectLayout(f *testing.F) {
	f.Fuzz(func(t *testing.T, budget uint16, window, kernel, sinks, floor uint8, enums uint16, kvHeads, group, n, dim uint8, data []byte) {
		hk, g, d, l := 1+int(kvHeads%4), 1+int(group%4), 1+int(dim%32), int(n)
		hq := hk * g
		cfg := snapkv.Config{
			Budget: int(budget), Window: int(window), Kernel: int(kernel),
			Pool: snapkv.Pool(enums & 1), Rule: snapkv.Rule(enums >> 1 & 1), Group: snapkv.Group(enums >> 2 & 3),
			Alloc: snapkv.Alloc(enums >> 4 & 1), Workers: 1 + int(enums>>7&3),
		}
		if cfg.Rule == snapkv.RuleProtected {
			cfg.Sinks = int(sinks)
		}
		if cfg.Alloc == snapkv.AllocAdaptive {
			cfg.Floor = float64(floor) / 255
		}
		w := min(int(window), l)
		values, halves := float32s(data), uint16s(data)
		head := snapkv.Input{QHeads: hq, KVHeads: hk, Len: l, Dim: d}
		src := enums >> 5 & 3
		switch src {
		case 0:
			head.Q = fill(make([]float32, hq*w*d), values, 1)
		case 1, 3:
			head.Attn = fill(make([]float32, hq*w*l), values, 1)
		}
		if src != 3 {
			k := fill(make([]uint16, hk*l*d), halves, 0x3c00)
			head.K = make([]fp16.Float16, len(k))
			for i, h := range k {
				head.K[i] = fp16.Float16(h)
			}
		}
		token := head
		token.Layout = snapkv.TokenMajor
		if head.K != nil {
			room := make([]fp16.Float16, (l+3)*hk*d)
			for i := range room {
				room[i] = 0x7e00
			}
			token.K = room[:copy(room, oracle.TokenMajor(head.K, hk, l, d))]
		}
		if head.Q != nil {
			token.Q = oracle.TokenMajor(head.Q, hq, w, d)
		}
		varianttest.Each(t, func(v string) {
			want, errHead := snapkv.Select(cfg, head)
			got, errToken := snapkv.Select(cfg, token)
			switch {
			case errHead != nil || errToken != nil:
				if errHead == nil || errToken == nil || errHead.Error() != errToken.Error() {
					t.Fatalf("%s: head-major error %v, token-major %v", v, errHead, errToken)
				}
			case !slices.EqualFunc(got, want, slices.Equal):
				t.Fatalf("%s: token-major kept %v, head-major %v", v, got, want)
			}
		})
	})
}

// fill repeats values over dst (or sets def if there are none) and returns dst.
func fill[T any](dst, values []T, def T) []T {
	for i := range dst {
		if len(values) == 0 {
			dst[i] = def
		} else {
			dst[i] = values[i%len(values)]
		}
	}
	return dst
}

// checkSelection checks what every valid selection satisfies: one strictly ascending
// row of prompt positions per KV head, min(C, Len) rows per head (uniform) or in the
// mean (adaptive), the sinks and the newest row kept.
func checkSelection(t *testing.T, v string, cfg snapkv.Config, in snapkv.Input, sel [][]int32) {
	t.Helper()
	if len(sel) != in.KVHeads {
		t.Fatalf("%s: %d rows for %d KV heads", v, len(sel), in.KVHeads)
	}
	total := 0
	for h, rows := range sel {
		total += len(rows)
		if len(rows) > in.Len {
			t.Fatalf("%s head %d: %d rows of a %d-row prompt", v, h, len(rows), in.Len)
		}
		for i, p := range rows {
			if p < 0 || int(p) >= in.Len || i > 0 && p <= rows[i-1] {
				t.Fatalf("%s head %d: rows %v not strictly ascending in [0, %d)", v, h, rows, in.Len)
			}
		}
		if cfg.Alloc == snapkv.AllocUniform && len(rows) != len(sel[0]) {
			t.Fatalf("%s: uniform budget, but head %d keeps %d rows and head 0 %d", v, h, len(rows), len(sel[0]))
		}
		sinks := min(cfg.Sinks, len(rows))
		if !slices.Equal(rows[:sinks], span(sinks)) {
			t.Fatalf("%s head %d: sinks not kept: %v", v, h, rows)
		}
		if len(rows) > sinks && rows[len(rows)-1] != int32(in.Len-1) {
			t.Fatalf("%s head %d: the newest row is not kept: %v", v, h, rows)
		}
	}
	if cfg.Budget > 0 && total != in.KVHeads*min(cfg.Budget, in.Len) {
		t.Fatalf("%s: %d rows kept in all, want KVHeads·min(C, Len) = %d", v, total, in.KVHeads*min(cfg.Budget, in.Len))
	}
}

func span(n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(i)
	}
	return s
}

// FuzzSelectFormats selects the same layer with its keys in fp16 and in format
// (format%4: 0 fp16, 1 bf16, 2 q8_0, 3 float32), both layouts of the latter, on every variant.
// The keys come from data as values that both formats hold exactly: bf16's are halves
// with their low 3 mantissa bits cleared (NaN and ±Inf included), q8_0's are blocks
// of 32 int8 quants times a power-of-two scale 2⁻²⁴ … 2⁸. The selection must be the
// fp16 selection, in both layouts, or all three must fail. Dim is 1 … 64, a multiple
// of 32 for q8_0 unless bit 7 of dim asks for any (which must fail unless it is one);
// the rest is FuzzSelectLayout's.
func FuzzSelectFormats(f *testing.F) {
	f.Fuzz(func(t *testing.T, format uint8, budget uint16, window, kernel, sinks, floor uint8, enums uint16, kvHeads, group, n, dim uint8, data []byte) {
		hk, g, l := 1+int(kvHeads%4), 1+int(group%4), int(n)
		d := 1 + int(dim%64)
		if format%4 == 2 && dim&0x80 == 0 {
			d = 32 * (1 + int(dim%2))
		}
		hq := hk * g
		cfg := snapkv.Config{
			Budget: int(budget), Window: int(window), Kernel: int(kernel),
			Pool: snapkv.Pool(enums & 1), Rule: snapkv.Rule(enums >> 1 & 1), Group: snapkv.Group(enums >> 2 & 3),
			Alloc: snapkv.Alloc(enums >> 4 & 1), Workers: 1 + int(enums>>7&3),
		}
		if cfg.Rule == snapkv.RuleProtected {
			cfg.Sinks = int(sinks)
		}
		if cfg.Alloc == snapkv.AllocAdaptive {
			cfg.Floor = float64(floor) / 255
		}
		w := min(int(window), l)
		in := snapkv.Input{QHeads: hq, KVHeads: hk, Len: l, Dim: d}
		switch enums >> 5 & 3 {
		case 0:
			in.Q = fill(make([]float32, hq*w*d), float32s(data), 1)
		case 1:
			in.Attn = fill(make([]float32, hq*w*l), float32s(data), 1)
		} // 2, 3: the key proxy
		switch format % 4 {
		case 0:
			selectLikeFP16[fp16.Float16](t, cfg, in, data)
		case 1:
			selectLikeFP16[bf16.BFloat16](t, cfg, in, data)
		case 2:
			selectLikeFP16[q8.Block](t, cfg, in, data)
		default:
			selectLikeFP16[float32](t, cfg, in, data)
		}
	})
}

// selectLikeFP16 gives in keys from data in fp16 and in E (equal values) and requires
// the E selection, head-major and token-major, to be the fp16 one, or all to fail.
func selectLikeFP16[E snapkv.Element](t *testing.T, cfg snapkv.Config, in snapkv.Input, data []byte) {
	width, mustFail := in.Dim, false
	if _, ok := any((*E)(nil)).(*q8.Block); ok {
		width, mustFail = in.Dim/32, in.Dim%32 != 0 // then fp16's keys are short too
	}
	k16, k := sameValues[E](data, in.KVHeads*in.Len*width)
	in.K = k16
	head := snapkv.InputOf[E]{Q: in.Q, Attn: in.Attn, K: k, QHeads: in.QHeads, KVHeads: in.KVHeads, Len: in.Len, Dim: in.Dim}
	token := head
	token.Layout = snapkv.TokenMajor
	token.K = oracle.TokenMajor(k, in.KVHeads, in.Len, width)
	if in.Q != nil {
		token.Q = oracle.TokenMajor(in.Q, in.QHeads, len(in.Q)/(in.QHeads*in.Dim), in.Dim)
	}
	varianttest.Each(t, func(v string) {
		want, err16 := snapkv.Select(cfg, in)
		got, errHead := snapkv.Select(cfg, head)
		gotToken, errToken := snapkv.Select(cfg, token)
		for _, err := range []error{err16, errHead, errToken} {
			if err != nil {
				checkErr(t, err)
			}
		}
		switch {
		case mustFail && errHead == nil:
			t.Fatalf("%s: q8_0 selects with Dim %d", v, in.Dim)
		case errHead != nil || errToken != nil:
			if errToken == nil || errHead == nil || errHead.Error() != errToken.Error() {
				t.Fatalf("%s: head-major error %v, token-major %v", v, errHead, errToken)
			}
			if err16 == nil && !mustFail {
				t.Fatalf("%s: fp16 selects, the format fails: %v", v, errHead)
			}
		case err16 != nil:
			t.Fatalf("%s: the format selects, fp16 fails: %v", v, err16)
		case !slices.EqualFunc(got, want, slices.Equal) || !slices.EqualFunc(gotToken, want, slices.Equal):
			t.Fatalf("%s: kept %v head-major, %v token-major; fp16 %v", v, got, gotToken, want)
		}
	})
}

// sameValues returns n elements of E made from data, and their values as fp16
// halves, the two equal value for value: for fp16 the halves themselves, for bf16
// halves with the low 3 mantissa bits cleared (at most 8 significant bits; NaN and
// ±Inf kept), for q8_0 blocks of int8 quants with a power-of-two scale 2⁻²⁴ … 2⁸,
// whose 32·n values fp16 holds exactly, for float32 the halves widened.
func sameValues[E snapkv.Element](data []byte, n int) ([]fp16.Float16, []E) {
	out := make([]E, n)
	var k16 []fp16.Float16
	switch o := any(out).(type) {
	case []fp16.Float16:
		for i, h := range fill(make([]uint16, n), uint16s(data), 0x3c00) {
			o[i] = fp16.Float16(h)
		}
		k16 = o
	case []bf16.BFloat16:
		k16 = make([]fp16.Float16, n)
		for i, h := range fill(make([]uint16, n), uint16s(data), 0x3c00) {
			k16[i] = fp16.Float16(h &^ 7)
		}
		f := make([]float32, n)
		fp16.ToFloat32(f, k16)
		bf16.FromFloat32(o, f)
	case []q8.Block:
		bytes := fill(make([]byte, 33*n), data, 0x41)
		for i := range o {
			b := bytes[33*i:]
			o[i].D = float16.Fromfloat32(float32(math.Ldexp(1, int(b[0]%33)-24)))
			for j := range o[i].Q {
				o[i].Q[j] = int8(b[1+j])
			}
		}
		f := make([]float32, 32*n)
		q8.Dequantize(f, o)
		k16 = make([]fp16.Float16, len(f))
		fp16.FromFloat32(k16, f)
	case []float32:
		k16 = make([]fp16.Float16, n)
		for i, h := range fill(make([]uint16, n), uint16s(data), 0x3c00) {
			k16[i] = fp16.Float16(h)
		}
		fp16.ToFloat32(o, k16)
	}
	return k16, out
}
