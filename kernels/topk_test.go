package kernels

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/kvsimd/kvsimd/internal/longtest"
	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/internal/varianttest"
)

// topkRanks is the position of every index of x in the reference order, best first:
// the stable sort of the doc comment, whose first k entries are the top k. It relies on
// cmp.Compare, not on TopK's rank keys.
func topkRanks(x []float32) []int {
	order := make([]int32, len(x))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(i, j int32) int { return cmp.Compare(x[j], x[i]) })
	ranks := make([]int, len(x))
	for r, i := range order {
		ranks[i] = r
	}
	return ranks
}

type topkInput struct {
	name string
	gen  func(r *rand.Rand, n int) []float32
}

var (
	inf    = float32(math.Inf(1))
	negInf = float32(math.Inf(-1))
	nan    = float32(math.NaN())
)

// topkInputs are the distributions every variant is checked on: the typical ones, and
// the ones built to mislead the sampler or to put many ties at the threshold.
var topkInputs = []topkInput{
	{"uniform", func(r *rand.Rand, n int) []float32 {
		return fill(n, func(int) float32 { return r.Float32() })
	}},
	{"exponential", func(r *rand.Rand, n int) []float32 {
		return fill(n, func(int) float32 { return float32(math.Exp(4 * r.NormFloat64())) })
	}},
	{"signed", func(r *rand.Rand, n int) []float32 {
		return fill(n, func(int) float32 { return float32(r.NormFloat64()) })
	}},
	{"all equal", func(r *rand.Rand, n int) []float32 {
		return fill(n, func(int) float32 { return 0.5 })
	}},
	{"ascending", func(r *rand.Rand, n int) []float32 {
		return fill(n, func(i int) float32 { return float32(i) })
	}},
	{"descending", func(r *rand.Rand, n int) []float32 {
		return fill(n, func(i int) float32 { return float32(n - i) })
	}},
	{"few distinct", func(r *rand.Rand, n int) []float32 {
		return fill(n, func(int) float32 { return float32(r.IntN(5)) })
	}},
	{"signed zeros", func(r *rand.Rand, n int) []float32 {
		return fill(n, func(int) float32 { return [...]float32{float32(math.Copysign(0, -1)), 0, 1, -1}[r.IntN(4)] })
	}},
	{"NaN and Inf", func(r *rand.Rand, n int) []float32 {
		return fill(n, func(int) float32 {
			switch r.IntN(8) {
			case 0:
				return nan
			case 1:
				return math.Float32frombits(0xffc00001) // negative NaN with a payload
			case 2:
				return inf
			case 3:
				return negInf
			case 4:
				return math.Float32frombits(1) // subnormal
			case 5:
				return math.MaxFloat32
			}
			return float32(r.NormFloat64())
		})
	}},
	{"mostly NaN", func(r *rand.Rand, n int) []float32 {
		return fill(n, func(int) float32 {
			if r.IntN(10) == 0 {
				return float32(r.NormFloat64())
			}
			return nan
		})
	}},
	{"few huge among equal", func(r *rand.Rand, n int) []float32 {
		x := fill(n, func(int) float32 { return 1 })
		for range min(5, n) {
			x[r.IntN(n)] = 1e30
		}
		return x
	}},
	{"threshold plateau", func(r *rand.Rand, n int) []float32 {
		// The uniform values ranked from 1% to 1% + 10⁴/n (for short x, to 26%) collapse
		// onto the lowest of them, so the k-th largest for k in that range, and the
		// sample's threshold, sit on one plateau of equal values.
		x := fill(n, func(int) float32 { return r.Float32() })
		lo := float32(0.99) - float32(min(10000, n/4))/float32(n)
		for i, v := range x {
			if v >= lo && v < 0.99 {
				x[i] = lo
			}
		}
		return x
	}},
	{"periodic", func(r *rand.Rand, n int) []float32 {
		// A large value every 64 elements: the sample strides must not alias with it.
		return fill(n, func(i int) float32 {
			if i%64 == 0 {
				return 100 + r.Float32()
			}
			return r.Float32()
		})
	}},
}

func fill(n int, f func(i int) float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = f(i)
	}
	return x
}

// TestTopKFilter checks every variant's filter, the generic one included, against the
// loop of its contract, at every length to 300 (the vector bodies, their tails, and
// the generic filter's dense chunks) and every alignment, and that it writes nothing
// outside idx[:len(x)].
func TestTopKFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	varianttest.Each(t, func(v string) {
		filter := topkFilter.For(v)
		for n := 0; n <= 300; n++ {
			in := topkInputs[r.IntN(len(topkInputs))]
			off := n % 4
			buf := in.gen(r, n+off)
			x := buf[off:]
			var lo float32
			switch {
			case n%5 == 1:
				lo = negInf // all but NaN
			case n%5 == 2:
				lo = inf
			case n > 0:
				lo = x[r.IntN(n)]
			}
			checkFilter(t, fmt.Sprintf("%s: %s n=%d lo=%v", v, in.name, n, lo), filter, x, off, lo, int32(r.IntN(1000)))
		}
	})
}

// checkFilter runs filter on x, placed at offset off in its output as x is in its
// buffer, and checks the indices it writes against the loop of its contract and that it
// writes nothing outside idx[:len(x)].
func checkFilter(t *testing.T, what string, filter topkFilterFunc, x []float32, off int, lo float32, base int32) {
	t.Helper()
	const guard = 0x5eed
	var want []int32
	for i, v := range x {
		if v >= lo {
			want = append(want, base+int32(i))
		}
	}
	n := len(x)
	idx := make([]int32, off+n+16)
	for i := range idx {
		idx[i] = guard
	}
	got := filter(idx[off:off+n], x, lo, base)
	if got != len(want) || !slices.Equal(idx[off:off+got], want) {
		t.Fatalf("%s: %v, want %v", what, idx[off:off+max(got, 0)], want)
	}
	for i := range idx {
		if (i < off || i >= off+n) && idx[i] != guard {
			t.Fatalf("%s: wrote outside idx at %d", what, i-off)
		}
	}
}

// TestTopKFilterGroups checks the filters on groups of 64 elements with a chosen number
// passing: AVX2 writes a group with at most six passing bit by bit and one with more
// through its permutation table, so each group gets one of the counts around that
// switch (or none, or all), drawn at random, with elements equal to the threshold
// (which pass) and NaNs (which do not) among them.
func TestTopKFilterGroups(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	counts := []int{0, 1, 2, 5, 6, 7, 8, 33, 63, 64}
	const lo = float32(0.5)
	varianttest.Each(t, func(v string) {
		filter := topkFilter.For(v)
		for trial := range 200 {
			groups := 1 + trial%4
			n := 64*groups + r.IntN(20)
			off := trial % 3
			buf := make([]float32, off+n)
			x := buf[off:]
			for i := range x {
				x[i] = []float32{0, 0.25, -1, nan, negInf, 0.4999}[r.IntN(6)]
			}
			for g := range groups {
				group := x[64*g : 64*g+64]
				for _, i := range r.Perm(64)[:counts[r.IntN(len(counts))]] {
					group[i] = []float32{lo, 0.75, inf, 1e30}[r.IntN(4)]
				}
			}
			for i := 64 * groups; i < n; i++ { // the tail: vector and scalar loops
				if r.IntN(3) == 0 {
					x[i] = lo
				}
			}
			checkFilter(t, fmt.Sprintf("%s: trial %d, n=%d", v, trial, n), filter, x, off, lo, int32(r.IntN(1<<20)))
		}
	})
}

func TestTopKShort(t *testing.T) {
	varianttest.Run(t, func(t *testing.T, v string) {
		r := rand.New(rand.NewPCG(3, 4))
		dst := make([]int32, 0, 400)
		for n := 0; n <= 300; n++ {
			// Every k; in -short runs (emulators) and without KVSIMD_LONG=1 every k up
			// to 64, then every n/16-th.
			step := 1
			if longtest.Short() && n > 64 {
				step = n / 16
			}
			for _, in := range topkInputs {
				x := in.gen(r, n)
				ranks := topkRanks(x)
				for k := -1; k <= n+1; k += step {
					got := TopK(dst, x, k)
					checkTopK(t, in.name, x, ranks, k, got)
				}
			}
		}
	})
}

// TestTopKSampledShort runs the sample-filter-select path, which TopK uses only from
// sampledMinLen, on every variant's filter from 16 elements.
func TestTopKSampledShort(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var s topkScratch
	varianttest.Each(t, func(v string) {
		filter := topkFilter.For(v)
		for n := 16; n <= 300; n += 1 + n/16 {
			for _, in := range topkInputs {
				x := in.gen(r, n)
				ranks := topkRanks(x)
				for k := 1; k < n; k += 1 + b2i(testing.Short())*n/16 {
					got := make([]int32, k)
					s.sampled(got, x, filter)
					checkTopK(t, v+" "+in.name, x, ranks, k, got)
				}
			}
		}
	})
}

func TestTopKLong(t *testing.T) {
	if testing.Short() {
		t.Skip("sorts 131072 elements per input")
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{sampledMinLen - 1, sampledMinLen, 4097, 16384, 131072} {
		for _, in := range topkInputs {
			x := in.gen(r, n)
			ranks := topkRanks(x)
			ks := []int{1, 2, 7, 100, 511, 512, 2048, n / 3, n / 2, n - 1, n}
			for range 4 {
				ks = append(ks, 1+r.IntN(n))
			}
			t.Run(fmt.Sprintf("%s/n=%d", in.name, n), func(t *testing.T) {
				varianttest.Run(t, func(t *testing.T, v string) {
					for _, k := range ks {
						got := TopK(nil, x, k)
						checkTopK(t, in.name, x, ranks, k, got)
					}
				})
			})
		}
	}
}

// TestTopKSampleBlind gives the sample the lowest (or highest) values of x, the worst
// misjudgement a sampler can make, so the fallbacks must produce the exact result.
func TestTopKSampleBlind(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const n = 16384
	var s topkScratch
	for _, k := range []int{1, 10, 512, 3000, n / 2} {
		for _, sampleValue := range []float32{0, 3} {
			x := fill(n, func(int) float32 { return 1 + r.Float32() })
			size := sampleSize(n, k)
			at := newSampler(n, size)
			for i := range size {
				x[at.position(i)] = sampleValue
			}
			ranks := topkRanks(x)
			varianttest.Each(t, func(v string) {
				got := make([]int32, k)
				s.sampled(got, x, topkFilter.For(v))
				checkTopK(t, fmt.Sprintf("%s sample=%v", v, sampleValue), x, ranks, k, got)
			})
		}
	}
}

// checkTopK checks got against the reference: exactly min(max(k, 0), len(x)) indices,
// ascending, each ranked within the top k; together they are then the reference set.
func checkTopK(t *testing.T, name string, x []float32, ranks []int, k int, got []int32) {
	t.Helper()
	want := min(max(k, 0), len(x))
	if len(got) != want {
		t.Fatalf("%s n=%d k=%d: %d indices", name, len(x), k, len(got))
	}
	for i, j := range got {
		if i > 0 && j <= got[i-1] {
			t.Fatalf("%s n=%d k=%d: index %d after %d", name, len(x), k, j, got[i-1])
		}
		if j < 0 || int(j) >= len(x) || ranks[j] >= want {
			t.Fatalf("%s n=%d k=%d: index %d is not in the top k", name, len(x), k, j)
		}
	}
}

func TestTopKDst(t *testing.T) {
	x := []float32{3, 1, 4, 1, 5, 9, 2, 6}
	roomy := make([]int32, 5, 10)
	got := TopK(roomy, x, 3)
	if &got[0] != &roomy[0] || !slices.Equal(got, []int32{4, 5, 7}) {
		t.Fatalf("TopK into a roomy dst = %v (new array: %t)", got, &got[0] != &roomy[0])
	}
	short := make([]int32, 2)
	if got := TopK(short, x, 3); cap(got) < 3 || !slices.Equal(got, []int32{4, 5, 7}) {
		t.Fatalf("TopK into a short dst = %v", got)
	}
	if got := TopK(roomy, x, 0); len(got) != 0 {
		t.Fatalf("TopK(k=0) = %v", got)
	}
}

func TestTopKAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop scratch space at random")
	}
	r := rand.New(rand.NewPCG(9, 10))
	for _, in := range topkInputs {
		x := in.gen(r, 16384)
		dst := make([]int32, 0, 512)
		varianttest.Run(t, func(t *testing.T, v string) {
			TopK(dst, x, 512) // warm the scratch pool
			if allocs := testing.AllocsPerRun(20, func() { TopK(dst, x, 512) }); allocs != 0 {
				t.Errorf("%s: %v allocs per TopK", in.name, allocs)
			}
		})
	}
}

// TestTopKKeyOrder checks that rank keys order every pair of special and ordinary
// values as cmp.Compare does (the reference), and that keyFloat inverts them.
func TestTopKKeyOrder(t *testing.T) {
	values := []float32{nan, math.Float32frombits(0xffc00001), math.Float32frombits(0x7f800001), negInf, -math.MaxFloat32, -1,
		-math.SmallestNonzeroFloat32, float32(math.Copysign(0, -1)), 0, math.SmallestNonzeroFloat32, 1, math.MaxFloat32, inf}
	for _, a := range values {
		for _, b := range values {
			ka, kb := topkKey(a), topkKey(b)
			if got, want := cmp.Compare(ka, kb), cmp.Compare(a, b); got != want {
				t.Errorf("keys of %v and %v (%#x, %#x) compare %d, values %d", a, b, ka, kb, got, want)
			}
		}
		if key := topkKey(a); a == a && topkKey(keyFloat(key)) != key {
			t.Errorf("keyFloat(topkKey(%v)) = %v", a, keyFloat(key))
		}
	}
}

// TestTopKSampler checks that sample positions are ascending, in range, and one per
// stratum.
func TestTopKSampler(t *testing.T) {
	for _, n := range []int{16, 17, 1000, 16384, 131071, 1<<31 - 1} {
		for _, size := range []int{2, sampleMin, sampleMax} {
			if size > n/8 {
				continue
			}
			at, stratum := newSampler(n, size), float64(n)/float64(size)
			for i := range size {
				p := at.position(i)
				if p < 0 || p >= n || float64(p) < float64(i)*stratum-1 || float64(p) >= float64(i+1)*stratum {
					t.Fatalf("n=%d size=%d: position %d = %d, outside stratum [%.1f, %.1f)", n, size, i, p, float64(i)*stratum, float64(i+1)*stratum)
				}
			}
		}
	}
}

// bytes is the size of s's buffers.
func (s *topkScratch) bytes() int {
	return 4*(cap(s.idx)+cap(s.bits)+cap(s.keys)+cap(s.work)+cap(s.sample)) + int(unsafe.Sizeof(s.hist))
}

// TestTopKScratchBound holds TopK's scratch to the bound of its doc comment, 32·k bytes
// plus 80 KiB, on every distribution, and with a sample that sees only the lowest or
// only the highest values (every fallback), where it used to take 16 bytes per element
// of x.
func TestTopKScratchBound(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	n := 1 << 20
	if testing.Short() {
		n = 1 << 16
	}
	blind := func(sampleValue float32) func(r *rand.Rand, n int) []float32 {
		return func(r *rand.Rand, n int) []float32 {
			x := fill(n, func(i int) float32 { return 1 + float32(i%1000) })
			size := sampleSize(n, 10)
			at := newSampler(n, size)
			for i := range size {
				x[at.position(i)] = sampleValue
			}
			return x
		}
	}
	inputs := append(topkInputs[:len(topkInputs):len(topkInputs)],
		topkInput{"sample sees the lowest", blind(0)}, topkInput{"sample sees the highest", blind(1e30)})
	for _, in := range inputs {
		x := in.gen(r, n)
		for _, k := range []int{1, 10, 100, 2048, n / 3} {
			varianttest.Each(t, func(v string) {
				var s topkScratch
				dst := make([]int32, k)
				s.topK(dst, x, topkFilter.For(v))
				if bound := 32*k + 80<<10; s.bytes() > bound {
					t.Errorf("%s: %s n=%d k=%d: %d bytes of scratch, bound %d", v, in.name, n, k, s.bytes(), bound)
				}
			})
		}
	}
}

// TestOracleCheckTopK holds the fuzz target's O(n) check to the sort: it accepts the
// sorted reference and rejects it with any one index swapped for one left out.
func TestOracleCheckTopK(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, in := range topkInputs {
		for _, n := range []int{1, 2, 5, 70, 300} {
			x := in.gen(r, n)
			order := make([]int32, n)
			for i := range order {
				order[i] = int32(i)
			}
			slices.SortStableFunc(order, func(i, j int32) int { return cmp.Compare(x[j], x[i]) })
			for _, k := range []int{0, 1, n / 2, n - 1, n} {
				want := slices.Sorted(slices.Values(order[:k]))
				if err := oracle.CheckTopK(x, k, want); err != nil {
					t.Fatalf("%s n=%d k=%d: rejects the reference: %v", in.name, n, k, err)
				}
				if k == 0 || k == n {
					continue
				}
				kept, out := order[r.IntN(k)], order[k+r.IntN(n-k)]
				wrong := slices.Clone(want)
				wrong[slices.Index(wrong, kept)] = out
				slices.Sort(wrong)
				if oracle.CheckTopK(x, k, wrong) == nil {
					t.Fatalf("%s n=%d k=%d: accepts %d in place of %d", in.name, n, k, out, kept)
				}
			}
		}
	}
}

// TestTopKSampleRank checks sampleRank against the Poisson tail summed independently
// (from lgamma, upwards from the rank): the lowest rank whose tail is at most miss.
func TestTopKSampleRank(t *testing.T) {
	tail := func(mean float64, r int) float64 { // P(N ≥ r), N ~ Poisson(mean)
		sum := 0.0
		for j := r; j < r+2000; j++ {
			lg, _ := math.Lgamma(float64(j + 1))
			sum += math.Exp(float64(j)*math.Log(mean) - mean - lg)
		}
		return sum
	}
	var s topkScratch
	keys := make([]uint32, sampleMax)
	for _, mean := range []float64{0.001, 0.3, 1, 5, 16, 40, 128} {
		for _, miss := range []float64{sampleMiss, retryMiss} {
			r := s.sampleRank(sample{keys: keys, expected: mean}, miss)
			if tail(mean, r) > miss*(1+1e-6) || r > 1 && tail(mean, r-1) <= miss*(1-1e-6) {
				t.Errorf("mean %v, miss %v: rank %d, P(N ≥ %d) = %.3g, P(N ≥ %d) = %.3g", mean, miss, r, r, tail(mean, r), r-1, tail(mean, r-1))
			}
		}
	}
	if r := s.sampleRank(sample{keys: keys[:10], expected: 16}, retryMiss); r != 10 {
		t.Errorf("rank %d in a sample of 10", r)
	}
}

// TestTopKFirstThreshold measures how often the first threshold leaves fewer than k
// candidates on uniform x, at SnapKV's shapes: sampleMiss (0.2%) by design; more than
// 1.5% of 600 inputs (10 expected at most 2.5 ≈ 0.6% + 5σ) means the rank is wrong.
func TestTopKFirstThreshold(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	var s topkScratch
	for _, nk := range [][2]int{{16384, 512}, {131072, 2048}} {
		n, k := nk[0], nk[1]
		trials := 600
		if testing.Short() {
			trials = 60
		}
		misses, candidates := 0, 0
		for range trials {
			x := topkInputs[0].gen(r, n)
			s.growWork(sampleMax)
			p := s.drawSample(x, k)
			th, _ := s.quantile(p, max(s.sampleRank(p, sampleMiss), 2))
			c := 0
			for _, v := range x {
				c += b2i(v >= th)
			}
			misses += b2i(c < k)
			candidates += c
		}
		if misses > trials*15/1000 {
			t.Errorf("n=%d k=%d: %d of %d first thresholds too high", n, k, misses, trials)
		}
		t.Logf("n=%d k=%d: %d of %d too high, %.2fk candidates", n, k, misses, trials, float64(candidates)/float64(trials*k))
	}
}

// TestTopKKeep checks every variant's topkKeep against the loop of its contract, at
// every length to 300 and every alignment, out of place and in place over src and over
// keys, with ranges that keep nothing, everything, and those that end at the top of
// the key space (emitTop's keys ≥ r.key), and that it writes nothing outside dst.
func TestTopKKeep(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const guard = 0x5eed
	varianttest.Each(t, func(v string) {
		keep := topkKeep.For(v)
		for n := 0; n <= 300; n++ {
			off := n % 4
			keys, src := make([]uint32, n), make([]uint32, n)
			spread := []uint32{4, 1 << 12, math.MaxUint32}[n%3]
			base := r.Uint32()
			for i := range keys {
				keys[i] = base + r.Uint32N(spread) // wraps past MaxUint32 at random bases
				src[i] = r.Uint32()
			}
			lo, width := base+uint32(n), uint32(n)*7
			switch n % 5 {
			case 1:
				lo, width = 0, math.MaxUint32 // everything
			case 2:
				lo, width = base+spread/2, 0 // one key value, if any
			case 3:
				lo = base + r.Uint32N(spread) // up to the top of the key space
				width = math.MaxUint32 - lo
			}
			var want []uint32
			for i, key := range keys {
				if key-lo <= width {
					want = append(want, src[i])
				}
			}
			// shift places src (or keys) that far after dst in the same array, as keepTop
			// does; the room dst needs then ends shift entries into it.
			shift := n / 3
			for mode, name := range []string{"out of place", "in place over src", "in place over keys",
				"over src, after dst", "over src and keys, after dst"} {
				buf := make([]uint32, off+shift+n+16)
				for i := range buf {
					buf[i] = guard
				}
				dst := buf[off : off+n]
				s, k := src, keys
				switch mode {
				case 1:
					copy(dst, src)
					s = dst
				case 2:
					copy(dst, keys)
					k = dst
				case 3:
					s = buf[off+shift : off+shift+n]
					copy(s, src)
				case 4:
					// src and keys one array: the keys, kept by their own range.
					s = buf[off+shift : off+shift+n]
					copy(s, keys)
					k = s
				}
				wantHere := want
				if mode == 4 {
					wantHere = nil
					for _, key := range keys {
						if key-lo <= width {
							wantHere = append(wantHere, key)
						}
					}
				}
				got := keep(dst, s, k, lo, width)
				if got != len(wantHere) || !slices.Equal(dst[:got], wantHere) {
					t.Fatalf("%s %s: n=%d lo=%#x width=%#x: %d kept, want %d", v, name, n, lo, width, got, len(wantHere))
				}
				end := off + n
				if mode >= 3 {
					end += shift // src's own entries, past dst
				}
				for i := range buf {
					if (i < off || i >= end) && buf[i] != guard {
						t.Fatalf("%s %s: n=%d: wrote outside dst at %d", v, name, n, i-off)
					}
				}
			}
		}
	})
}

// TestKthLargest checks the radix select against a sort, on every variant (its
// compactions are topkKeep's): sets spread over the whole key space, packed into a few
// values, and crowded against either end of it, where a bucket's top could wrap past
// MaxUint32; bounds tight and loose, and every k of the short sets.
func TestKthLargest(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	// A slice, not a map: the sets draw from one generator, in a fixed order, so that a
	// failure comes back on the next run.
	sets := []struct {
		name string
		key  func(n int) uint32
	}{
		{"whole space", func(int) uint32 { return r.Uint32() }},
		{"few values", func(int) uint32 { return 1000 + 7*r.Uint32N(5) }},
		{"top end", func(n int) uint32 { return math.MaxUint32 - r.Uint32N(3*uint32(n)) }},
		{"bottom end", func(int) uint32 { return r.Uint32N(1 << 20) }},
		{"one value", func(int) uint32 { return math.MaxUint32 }},
	}
	varianttest.Run(t, func(t *testing.T, v string) {
		s := new(topkScratch)
		for _, set := range sets {
			for _, n := range []int{1, 2, 31, 32, 33, 64, 65, 100, 1000, 2048, 2049, 5000} {
				keys := make([]uint32, n)
				for i := range keys {
					keys[i] = set.key(n)
				}
				sorted := slices.Sorted(slices.Values(keys))
				lo, hi := sorted[0], sorted[n-1]
				s.growWork(n)
				ks := []int{1, n, 1 + r.IntN(n), 1 + r.IntN(n)}
				if n <= 100 {
					ks = ks[:0]
					for k := 1; k <= n; k++ {
						ks = append(ks, k)
					}
				}
				for _, k := range ks {
					want := kth{key: sorted[n-k]}
					for _, x := range keys {
						want.above += b2i(x > want.key)
						want.equal += b2i(x == want.key)
					}
					before := slices.Clone(keys)
					for _, bounds := range [][2]uint32{{lo, hi}, {lo / 2, hi + (math.MaxUint32-hi)/2}, {0, math.MaxUint32}} {
						if got := s.kthLargest(keys, k, bounds[0], bounds[1]); got != want {
							t.Fatalf("%s n=%d k=%d bounds %#x–%#x: got %+v, want %+v", set.name, n, k, bounds[0], bounds[1], got, want)
						}
					}
					if !slices.Equal(keys, before) {
						t.Fatalf("%s n=%d k=%d: kthLargest changed keys", set.name, n, k)
					}
				}
			}
		}
	})
}
