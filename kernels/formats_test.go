package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/internal/longtest"
	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/x448/float16"
)

// The bf16 and q8_0 kernels are tested through one table per kernel, run for each
// format: every variant against the float64 bound (with values beyond fp16's reach:
// bfloat16's range, q8_0's scales), bit for bit against the fp16 twin on keys and values
// that both formats hold exactly (the promise snapkv's selection relies on), strided
// against contiguous, and with guards around dst and NaN between strided rows.

// cacheFormat is what the tables need of one format whose element E holds per values.
type cacheFormat[E any] struct {
	name string
	per  int
	// value is value i of x, widened exactly.
	value func(x []E, i int) float64
	// random makes n values (a multiple of per) beyond fp16's range and precision.
	random func(r *rand.Rand, n int) []E
	// fromHalves makes elements holding exactly the values of h, made by halvesFor.
	fromHalves func(h []uint16) []E
	// halvesFor makes n fp16 values that the format holds exactly.
	halvesFor func(r *rand.Rand, n int) []uint16
	// gap is an element that widens to NaN, laid between strided rows.
	gap E
	// specials are elements holding NaN, ±Inf, zeros, subnormals and huge values.
	specials []E

	dot      func(a []float32, b []E) float32
	scores   func(dst, q []float32, k []E, rows, n, dim, stride int, scale float32)
	scoresC  func(dst, q []float32, k []E, rows, n, dim int, scale float32)
	weighted func(dst, w []float32, v []E, stride int)
	weightC  func(dst, w []float32, v []E)
	gather   func(dst, src []E, idx []int32, dim, stride int)
	gatherC  func(dst, src []E, idx []int32, dim int)
}

var bf16Format = cacheFormat[bf16.BFloat16]{
	name:  "bf16",
	per:   1,
	value: func(x []bf16.BFloat16, i int) float64 { return float64(x[i].Float32()) },
	random: func(r *rand.Rand, n int) []bf16.BFloat16 {
		x := make([]bf16.BFloat16, n)
		for i := range x {
			// Exponents far beyond fp16's, yet no product or sum of a few
			// hundred near float32's range.
			x[i] = bf16.BFloat16(math.Float32bits(float32(math.Ldexp(r.NormFloat64(), r.IntN(61)-30))) >> 16)
		}
		return x
	},
	fromHalves: func(h []uint16) []bf16.BFloat16 {
		x := make([]bf16.BFloat16, len(h))
		for i, b := range h {
			x[i] = bf16.BFloat16(math.Float32bits(halfFloat32(b)) >> 16)
		}
		return x
	},
	halvesFor: func(r *rand.Rand, n int) []uint16 {
		h := randomF16(r, n)
		for i := range h {
			h[i] &^= 7 // 8 significant bits at most; fp16's exponents all lie in bfloat16's
		}
		return h
	},
	gap: 0x7fc0,
	specials: []bf16.BFloat16{0x7fc0, 0xffc1, 0x7f80, 0xff80, 0x0000, 0x8000, 0x0001, 0x807f,
		0x7f7f, 0xff7f, 0x0080, 0x3f80, 0x7f01},

	dot:      DotF32BF16,
	scores:   ScoresStridedBF16,
	scoresC:  ScoresBF16,
	weighted: WeightedSumRowsStridedBF16,
	weightC:  WeightedSumRowsBF16,
	gather:   GatherRowsStridedBF16,
	gatherC:  GatherRowsBF16,
}

var f32Format = cacheFormat[float32]{
	name:  "f32",
	per:   1,
	value: func(x []float32, i int) float64 { return float64(x[i]) },
	random: func(r *rand.Rand, n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			// float32's own precision and exponents far beyond fp16's, yet no
			// product or sum of a few hundred near float32's range.
			x[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(61)-30))
		}
		return x
	},
	fromHalves: func(h []uint16) []float32 {
		x := make([]float32, len(h))
		for i, b := range h {
			x[i] = halfFloat32(b)
		}
		return x
	},
	halvesFor: randomF16,
	gap:       float32(math.NaN()),
	specials: []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0,
		float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, -0x1p-130, math.MaxFloat32,
		-math.MaxFloat32, 0x1p-126, 1, 0x1.fffffep100},

	dot:      DotF32,
	scores:   ScoresStridedF32,
	scoresC:  ScoresF32,
	weighted: WeightedSumRowsStridedF32,
	weightC:  WeightedSumRowsF32,
	gather:   GatherRowsStridedF32,
	gatherC:  GatherRowsF32,
}

// q8Block makes a block of scale d (fp16 bits) and quants q.
func q8Block(d uint16, q func(i int) int8) q8.Block {
	b := q8.Block{D: float16.Frombits(d)}
	for i := range b.Q {
		b.Q[i] = q(i)
	}
	return b
}

var q8Format = cacheFormat[q8.Block]{
	name: "q8_0",
	per:  32,
	value: func(x []q8.Block, i int) float64 {
		b := x[i/32]
		return float64(float32(b.Q[i%32]) * b.D.Float32())
	},
	random: func(r *rand.Rand, n int) []q8.Block {
		x := make([]q8.Block, n/32)
		for i := range x {
			// Random scales from fp16's subnormals to its largest, quants over
			// all of int8 (-128 too, which ggml never writes but a buffer may hold).
			d := float16.Fromfloat32(float32(math.Ldexp(1+r.Float64(), r.IntN(40)-24)))
			if r.IntN(8) == 0 {
				d = float16.Frombits(uint16(r.IntN(0x7c00)))
			}
			x[i] = q8Block(d.Bits(), func(int) int8 { return int8(r.IntN(256) - 128) })
		}
		return x
	},
	fromHalves: func(h []uint16) []q8.Block {
		// halvesFor's values are q·2⁻⁷ for int8 q.
		x := make([]q8.Block, len(h)/32)
		for i := range x {
			x[i] = q8Block(0x2000, func(j int) int8 { return int8(halfFloat32(h[32*i+j]) * 128) })
		}
		return x
	},
	halvesFor: func(r *rand.Rand, n int) []uint16 {
		h := make([]uint16, n)
		for i := range h {
			h[i] = float16.Fromfloat32(float32(r.IntN(255)-127) / 128).Bits()
		}
		return h
	},
	gap: q8Block(0x7e00, func(int) int8 { return 1 }),
	specials: []q8.Block{
		q8Block(0x7e00, func(int) int8 { return 3 }),                       // NaN scale
		q8Block(0x7c00, func(i int) int8 { return int8(i%3 - 1) }),         // +Inf scale: ±Inf and NaN (0·Inf)
		q8Block(0xfc00, func(int) int8 { return 2 }),                       // −Inf scale
		q8Block(0x7bff, func(i int) int8 { return int8(127 - 255*(i%2)) }), // 65504·±127
		q8Block(0x0001, func(i int) int8 { return int8(i) }),               // subnormal scale
		q8Block(0x8000, func(i int) int8 { return int8(-i) }),              // −0 scale
		q8Block(0x3c00, func(int) int8 { return -128 }),
	},

	dot:      DotF32Q8,
	scores:   ScoresStridedQ8,
	scoresC:  ScoresQ8,
	weighted: WeightedSumRowsStridedQ8,
	weightC:  WeightedSumRowsQ8,
	gather:   GatherRowsStridedQ8,
	gatherC:  GatherRowsQ8,
}

// spreadElems lays n rows of w elements out ws ≥ w elements apart, gap between them,
// the last row ending the slice.
func spreadElems[E any](x []E, n, w, ws int, gap E) []E {
	if n == 0 {
		return nil
	}
	out := make([]E, (n-1)*ws+w)
	for i := range out {
		out[i] = gap
	}
	for j := range n {
		copy(out[j*ws:j*ws+w], x[j*w:(j+1)*w])
	}
	return out
}

// sameFloatBits reports whether a and b have the same bits, NaNs of any payload counting as one.
func sameFloatBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// formatDims are the dims a format's tables run: every small one and those around the
// variants' vector widths and unrolled bodies; q8_0 takes the multiples of 32.
func formatDims(per int) []int {
	if per == 32 {
		return []int{32, 64, 96, 128, 160, 256}
	}
	return []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 80, 128, 129, 256}
}

func TestScoresFormats(t *testing.T) {
	testScoresFormat(t, bf16Format)
	testScoresFormat(t, q8Format)
	testScoresFormat(t, f32Format)
}

func testScoresFormat[E any](t *testing.T, f cacheFormat[E]) {
	t.Run(f.name, func(t *testing.T) {
		varianttest.Run(t, func(t *testing.T, v string) {
			r := rand.New(rand.NewPCG(24, uint64(f.per)))
			rowCounts := []int{0, 1, 2, 3, 5, 8, 11, 12, 13, 17, 31, 32, 33, 44, 64}
			keyCounts := []int{0, 1, 2, 7, 8, 9, 16, 17, 31, 127, 128, 129, 200}
			dims := formatDims(f.per)
			if longtest.Short() { // emulation (.ci/avx512), or no KVSIMD_LONG: each kernel's boundaries once
				rowCounts = []int{0, 1, 3, 12, 13, 32, 33}
				keyCounts = []int{0, 1, 9, 128, 129}
				dims = []int{dims[0], dims[len(dims)/2], 128}
			}
			for _, dim := range dims {
				for _, rows := range rowCounts {
					for _, n := range keyCounts {
						if dim > 64 && rows*n > 2000 && rows%8 != 0 {
							continue // the large shapes at the panel kernels' row counts only
						}
						checkScoresFormat(t, f, r, rows, n, dim)
					}
				}
			}
		})
	})
}

// checkScoresFormat scores one block three ways on the active variant: random keys of
// the format against the float64 bound, then keys both formats hold against Scores'
// bits, contiguous and strided (NaN between the keys), into a guarded dst.
func checkScoresFormat[E any](t *testing.T, f cacheFormat[E], r *rand.Rand, rows, n, dim int) {
	t.Helper()
	what := fmt.Sprintf("rows %d, n %d, dim %d", rows, n, dim)
	scale := float32(r.NormFloat64())
	q := randomF32(r, rows*dim+1)[1:] // off the allocation's alignment
	k := f.random(r, n*dim)
	dst, intact := guarded(t, make([]float32, rows*n), 1)
	f.scoresC(dst, q, k, rows, n, dim, scale)
	intact()
	if rows*n*dim <= 1<<18 {
		for e, got := range dst {
			i, j := e/n, e%n
			want := oracle.ExpectDot(dim, oracle.SingleAt(q[i*dim:(i+1)*dim]),
				func(d int) float64 { return f.value(k, j*dim+d) }, float64(scale))
			if err := want.CheckSettled(got); err != nil {
				t.Fatalf("%s: entry (%d, %d): %v", what, i, j, err)
			}
		}
	}

	h := f.halvesFor(r, n*dim)
	twin := make([]float32, rows*n)
	Scores(twin, q, toHalves(h), rows, n, dim, scale)
	kf := f.fromHalves(h)
	f.scoresC(dst, q, kf, rows, n, dim, scale)
	intact()
	for e := range dst {
		if !sameFloatBits(dst[e], twin[e]) {
			t.Fatalf("%s: entry %d = %v, Scores gives %v for the same key values", what, e, dst[e], twin[e])
		}
	}
	w := dim / f.per
	ws := w + 1 + r.IntN(w+2)
	f.scores(dst, q, spreadElems(kf, n, w, ws, f.gap), rows, n, dim, ws*f.per, scale)
	intact()
	for e := range dst {
		if !sameFloatBits(dst[e], twin[e]) {
			t.Fatalf("%s, stride %d: entry %d = %v, contiguous gives %v", what, ws*f.per, e, dst[e], twin[e])
		}
	}
}

func TestDotFormats(t *testing.T) {
	testDotFormat(t, bf16Format)
	testDotFormat(t, q8Format)
	testDotFormat(t, f32Format)
}

func testDotFormat[E any](t *testing.T, f cacheFormat[E]) {
	t.Run(f.name, func(t *testing.T) {
		varianttest.Run(t, func(t *testing.T, v string) {
			r := rand.New(rand.NewPCG(25, uint64(f.per)))
			var lengths []int
			for n := 0; n <= 300; n += f.per {
				lengths = append(lengths, n)
			}
			lengths = append(lengths, 736, 768, 800, 1024, 4096+f.per)
			for _, n := range lengths {
				for off := range 3 {
					a := randomF32(r, n+off)[off:]
					b := f.random(r, n)
					want := oracle.ExpectDot(n, oracle.SingleAt(a), func(i int) float64 { return f.value(b, i) }, 1)
					if err := want.CheckSettled(f.dot(a, b)); err != nil {
						t.Fatalf("n %d, offset %d: %v", n, off, err)
					}
					if f.name == f32Format.name {
						continue // DotF32 is a kernel of its own, promising no DotF32F16 bits
					}
					h := f.halvesFor(r, n)
					if got, twin := f.dot(a, f.fromHalves(h)), DotF32F16(a, toHalves(h)); !sameFloatBits(got, twin) {
						t.Fatalf("n %d, offset %d: %v, DotF32F16 gives %v for the same values", n, off, got, twin)
					}
				}
			}
		})
	})
}

func TestWeightedSumRowsFormats(t *testing.T) {
	testWeightedFormat(t, bf16Format)
	testWeightedFormat(t, q8Format)
	testWeightedFormat(t, f32Format)
}

func testWeightedFormat[E any](t *testing.T, f cacheFormat[E]) {
	t.Run(f.name, func(t *testing.T) {
		varianttest.Run(t, func(t *testing.T, v string) {
			r := rand.New(rand.NewPCG(26, uint64(f.per)))
			for _, dim := range formatDims(f.per) {
				for _, n := range []int{0, 1, 2, 3, 4, 5, 8, 9, 16, 33, 100} {
					what := fmt.Sprintf("n %d, dim %d", n, dim)
					w := attentionWeights(r, n+1)[1:]
					vals := f.random(r, n*dim)
					dst, intact := guarded(t, make([]float32, dim), 3)
					f.weightC(dst, w, vals)
					intact()
					for d, got := range dst {
						want := oracle.ExpectDot(n, oracle.SingleAt(w), func(j int) float64 { return f.value(vals, j*dim+d) }, 1)
						if err := want.CheckSettled(got); err != nil {
							t.Fatalf("%s: output %d: %v", what, d, err)
						}
					}
					h := f.halvesFor(r, n*dim)
					twin := make([]float32, dim)
					WeightedSumRows(twin, w, toHalves(h))
					vf := f.fromHalves(h)
					f.weightC(dst, w, vf)
					for d := range dst {
						if !sameFloatBits(dst[d], twin[d]) {
							t.Fatalf("%s: output %d = %v, WeightedSumRows gives %v for the same values", what, d, dst[d], twin[d])
						}
					}
					el := dim / f.per
					ws := el + 1 + r.IntN(el+2)
					f.weighted(dst, w, spreadElems(vf, n, el, ws, f.gap), ws*f.per)
					intact()
					for d := range dst {
						if !sameFloatBits(dst[d], twin[d]) {
							t.Fatalf("%s, stride %d: output %d = %v, contiguous gives %v", what, ws*f.per, d, dst[d], twin[d])
						}
					}
				}
			}
		})
	})
}

// TestFormatsSpecial puts every special element of a format into keys, values and
// dot operands, among ordinary ones, and checks the settled results against float64:
// NaN and Inf exactly where the inputs force them, the same on every variant.
func TestFormatsSpecial(t *testing.T) {
	testFormatSpecial(t, bf16Format)
	testFormatSpecial(t, q8Format)
	testFormatSpecial(t, f32Format)
}

func testFormatSpecial[E any](t *testing.T, f cacheFormat[E]) {
	t.Run(f.name, func(t *testing.T) {
		r := rand.New(rand.NewPCG(27, uint64(f.per)))
		const rows, n = 33, 130 // the panel kernels' shapes, with a row left for the row kernel
		dim := 2 * f.per
		if f.per == 1 {
			dim = 20
		}
		el := dim / f.per
		k := f.random(r, n*dim)
		for j := range n {
			if j%3 == 0 {
				k[j*el+r.IntN(el)] = f.specials[r.IntN(len(f.specials))]
			}
		}
		q := randomF32(r, rows*dim)
		q[5] = float32(math.Inf(1))
		q[dim+3] = 0
		q[2*dim] = math.MaxFloat32
		var first []float32
		varianttest.Each(t, func(v string) {
			dst := make([]float32, rows*n)
			f.scoresC(dst, q, k, rows, n, dim, 0.25)
			for e, got := range dst {
				i, j := e/n, e%n
				want := oracle.ExpectDot(dim, oracle.SingleAt(q[i*dim:(i+1)*dim]),
					func(d int) float64 { return f.value(k, j*dim+d) }, 0.25)
				if err := want.CheckSettled(got); err != nil {
					t.Fatalf("%s: Scores entry (%d, %d): %v", v, i, j, err)
				}
			}
			if first == nil {
				first = dst
			}
			for e := range dst {
				if (dst[e]-dst[e] == 0) != (first[e]-first[e] == 0) {
					t.Fatalf("%s: entry %d = %v, the first variant gave %v", v, e, dst[e], first[e])
				}
			}
			out := make([]float32, dim)
			w := attentionWeights(r, n)
			f.weightC(out, w, k)
			for d, got := range out {
				want := oracle.ExpectDot(n, oracle.SingleAt(w), func(j int) float64 { return f.value(k, j*dim+d) }, 1)
				if err := want.CheckSettled(got); err != nil {
					t.Fatalf("%s: WeightedSumRows output %d: %v", v, d, err)
				}
			}
			for j := range n {
				row := k[j*el : (j+1)*el]
				want := oracle.ExpectDot(dim, oracle.SingleAt(q[:dim]), func(d int) float64 { return f.value(row, d) }, 1)
				if err := want.CheckSettled(f.dot(q[:dim], row)); err != nil {
					t.Fatalf("%s: dot with key %d: %v", v, j, err)
				}
			}
		})
	})
}

func TestGatherRowsFormats(t *testing.T) {
	testGatherFormat(t, bf16Format)
	testGatherFormat(t, q8Format)
	testGatherFormat(t, f32Format)
}

func testGatherFormat[E comparable](t *testing.T, f cacheFormat[E]) {
	t.Run(f.name, func(t *testing.T) {
		r := rand.New(rand.NewPCG(28, uint64(f.per)))
		for _, dim := range formatDims(f.per) {
			el := dim / f.per
			for _, rows := range []int{1, 2, 7, 33} {
				src := append(f.random(r, rows*dim), f.specials...)[:rows*el]
				idx := make([]int32, 2*rows)
				for i := range idx {
					idx[i] = int32(r.IntN(rows))
				}
				dst := make([]E, len(idx)*el)
				f.gatherC(dst, src, idx, dim)
				ws := el + r.IntN(3)
				sdst := make([]E, len(idx)*el)
				f.gather(sdst, spreadElems(src, rows, el, ws, f.gap), idx, dim, ws*f.per)
				for i, row := range idx {
					for e := range el {
						want := src[int(row)*el+e]
						if dst[i*el+e] != want || sdst[i*el+e] != want {
							t.Fatalf("dim %d: row %d element %d: got %v (strided %v), want %v", dim, i, e, dst[i*el+e], sdst[i*el+e], want)
						}
					}
				}
			}
		}
	})
}

// TestFormatsPanics checks that the format kernels refuse what their docs refuse,
// with their own names, before writing anything.
func TestFormatsPanics(t *testing.T) {
	b := make([]bf16.BFloat16, 64)
	blocks := make([]q8.Block, 4)
	f := make([]float32, 256)
	cases := []struct {
		name string
		call func()
	}{
		{"DotF32BF16", func() { DotF32BF16(f[:3], b[:4]) }},
		{"DotF32Q8", func() { DotF32Q8(f[:33], blocks[:1]) }},
		{"ScoresBF16", func() { ScoresBF16(f[:4], f[:4], b[:5], 2, 2, 2, 1) }},
		{"ScoresStridedBF16", func() { ScoresStridedBF16(f[:4], f[:4], b[:3], 2, 2, 2, 2, 1) }},
		{"ScoresQ8", func() { ScoresQ8(f[:1], f[:16], blocks[:1], 1, 1, 16, 1) }},
		{"ScoresQ8", func() { ScoresQ8(f[:2], f[:32], blocks[:1], 1, 2, 32, 1) }},
		{"ScoresStridedQ8", func() { ScoresStridedQ8(f[:2], f[:32], blocks[:2], 1, 2, 32, 48, 1) }},
		{"ScoresStridedQ8", func() { ScoresStridedQ8(f[:2], f[:32], blocks[:2], 1, 2, 32, 64, 1) }},
		{"WeightedSumRowsBF16", func() { WeightedSumRowsBF16(f[:4], f[:2], b[:7]) }},
		{"WeightedSumRowsStridedBF16", func() { WeightedSumRowsStridedBF16(f[:4], f[:2], b[:7], 4) }},
		{"WeightedSumRowsQ8", func() { WeightedSumRowsQ8(f[:16], f[:1], blocks[:1]) }},
		{"WeightedSumRowsStridedQ8", func() { WeightedSumRowsStridedQ8(f[:32], f[:2], blocks[:2], 64) }},
		{"GatherRowsBF16", func() { GatherRowsBF16(b[:4], b[:8], []int32{0, 4}, 2) }},
		{"GatherRowsStridedBF16", func() { GatherRowsStridedBF16(b[:4], b[:8], []int32{0, 3}, 2, 3) }},
		{"GatherRowsQ8", func() { GatherRowsQ8(blocks[:1], blocks[:4], []int32{0}, 16) }},
		{"GatherRowsStridedQ8", func() { GatherRowsStridedQ8(blocks[:2], blocks[:4], []int32{0, 2}, 32, 64) }},
	}
	for _, c := range cases {
		func() {
			defer func() {
				msg := fmt.Sprint(recover()) // a string, or the dots' lengthError
				want := "kernels." + c.name + ": "
				if len(msg) < len(want) || msg[:len(want)] != want {
					t.Errorf("%s: panic %q, want one of its own", c.name, msg)
				}
			}()
			c.call()
		}()
	}
}

// TestFormatsNoAllocations holds the format kernels to their docs: no allocation.
func TestFormatsNoAllocations(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 1))
	q, out := randomF32(r, 32*128), make([]float32, 32*200)
	kb, kq, kf := bf16Format.random(r, 200*128), q8Format.random(r, 200*128), f32Format.random(r, 200*128)
	idx := []int32{3, 1, 4}
	gb, gq, gf := make([]bf16.BFloat16, 3*128), make([]q8.Block, 3*4), make([]float32, 3*128)
	varianttest.Each(t, func(v string) {
		if a := testing.AllocsPerRun(5, func() {
			ScoresBF16(out, q, kb, 32, 200, 128, 1)
			ScoresQ8(out, q, kq, 32, 200, 128, 1)
			WeightedSumRowsBF16(out[:128], q[:200], kb)
			WeightedSumRowsQ8(out[:128], q[:200], kq)
			DotF32BF16(q[:128], kb[:128])
			DotF32Q8(q[:128], kq[:4])
			GatherRowsBF16(gb, kb, idx, 128)
			GatherRowsQ8(gq, kq, idx, 128)
			ScoresF32(out, q, kf, 32, 200, 128, 1)
			WeightedSumRowsF32(out[:128], q[:200], kf)
			GatherRowsF32(gf, kf, idx, 128)
		}); a != 0 {
			t.Errorf("%s: %v allocations per run", v, a)
		}
	})
}

// The q8_0 tables widen with the scale read in the machine's byte order, as q8.Block
// holds it; this checks the test's own view of a block against the kernels' bytes.
func TestQ8ValueMatchesBlock(t *testing.T) {
	b := q8Block(0x3555, func(i int) int8 { return int8(i*9 - 100) })
	raw := q8.Bytes([]q8.Block{b})
	if binary.NativeEndian.Uint16(raw) != 0x3555 {
		t.Fatal("scale bytes")
	}
	for i := range 32 {
		if got, want := q8Value(raw, i), float32(b.Q[i])*b.D.Float32(); got != want {
			t.Fatalf("value %d: %v, want %v", i, got, want)
		}
	}
}
