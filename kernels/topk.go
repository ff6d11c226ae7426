package kernels

import (
	"fmt"
	"math"
	"sync"

	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/race"
)

// topkFilter is the SIMD part of TopK: compare a block against a threshold and
// compress the indices of the elements at or above it.
var topkFilter = dispatch.New(topkFilterGeneric)

// topkKeep is the SIMD part of the radix select: compact a list by a key range.
// topkKeep.Call(dst, src, keys, lo, width) writes src[i], in order, for every i with
// keys[i]−lo ≤ width (unsigned: keys[i] in [lo, lo+width] when that does not wrap) into
// dst, and returns how many. dst and src hold len(keys) entries; dst may be src or keys,
// or start before them in the same array: each write lands at or before the entry just
// read.
var topkKeep = dispatch.New(topkKeepGeneric)

// topkFilterFunc writes, in ascending order, base+i for every i with x[i] ≥ lo into idx,
// which has room for len(x) entries, and returns how many it wrote. NaN is never
// selected.
type topkFilterFunc = func(idx []int32, x []float32, lo float32, base int32) int

// TopK writes into dst[:0] the indices of the k largest elements of x, in ascending index
// order, and returns the result, of length min(max(k, 0), len(x)). dst is grown only if
// its capacity is short; it must not overlap x.
//
// The set is exact and the same on every variant: larger values first, +Inf highest,
// NaN (any payload) below every number including −Inf, −0 equal to +0, and among equal
// values (the ties at the threshold) the lower index first. k ≤ 0 gives an empty
// result and k ≥ len(x) every index. The reference is a stable sort with cmp.Compare,
// which ranks NaN and zeros just so:
//
//	order := []int32{0, 1, …, len(x)-1}
//	slices.SortStableFunc(order, func(i, j int32) int { return cmp.Compare(x[j], x[i]) })
//	dst = slices.Sorted(order[:k])
//
// TopK never sorts. It estimates a threshold from a deterministic stratified sample of
// x, compresses the indices of the elements at or above it with SIMD (AVX2 bit by bit
// where few of 64 pass and through a permutation table where more do, AVX-512 with
// VPCOMPRESSD, NEON with TBL), and radix-selects the k-th largest among those
// candidates exactly (on amd64 its compactions, and the final pass that keeps the
// winners, compress with SIMD as well). Whenever the candidates outgrow their buffers
// (a threshold on a plateau of equal values, or one too low for a small k that the
// sample cannot resolve), it keeps only their top k and raises the threshold above the
// k-th, so later blocks pass fewer. When the sample misjudges with too few
// candidates, it filters once more from a safer threshold, then from −Inf. Every path
// is O(len(x)); len(x) below 64 takes the radix select directly.
//
// Scratch space (candidate lists, rank keys, the sample and a histogram) is at most
// 32·k bytes plus 80 KiB, whatever len(x) and the data: a small k on a long row costs
// little memory. It comes from an internal sync.Pool, so TopK is safe for concurrent
// use and, once warm, allocates nothing when cap(dst) ≥ k.
//
// It panics if len(x) exceeds the int32 index range.
func TopK(dst []int32, x []float32, k int) []int32 {
	n := len(x)
	if n > math.MaxInt32 {
		panic(fmt.Sprintf("kernels.TopK: len(x) = %d, want ≤ math.MaxInt32 (indices are int32)", n))
	}
	k = min(max(k, 0), n)
	if cap(dst) < k {
		dst = make([]int32, k)
	}
	dst = dst[:k]
	switch {
	case k == 0:
	case k == n:
		for i := range dst {
			dst[i] = int32(i)
		}
	default:
		race.Read(x) // the filter's assembly reads all of x
		s := topkScratches.Get().(*topkScratch)
		s.topK(dst, x, topkFilter.Call)
		topkScratches.Put(s)
	}
	return dst
}

var topkScratches = sync.Pool{New: func() any { return new(topkScratch) }}

// topkScratch is the reusable working memory of one TopK call.
type topkScratch struct {
	idx    []int32  // filter output: candidate indices, ascending
	bits   []uint32 // the bits of x at those indices
	keys   []uint32 // rank keys of the candidates (or of all of x)
	work   []uint32 // radix select's shrinking candidate set
	sample []uint32 // rank keys of the sample
	hist   [1 << radixDigitBits]uint32
}

const (
	// sampledMinLen is the length from which sampling and filtering beat one radix
	// select over all of x (measured: 2× faster at 256 elements, even at 64).
	sampledMinLen = 64
	// sampleExpected is the number of sample elements expected among the top k: the
	// sample's error shrinks as 1/√sampleExpected while its cost grows linearly.
	// With 12, the first threshold leaves about 2.0k candidates (uniform x, k = 512
	// and 2048); 16 leaves 1.87k, but its larger sample, drawn from scattered cache
	// lines, made TopK slower at both sizes (measured, same run: 5.3 against 6.6 µs
	// at 512 of 16384, 25 against 30 µs at 2048 of 131072).
	sampleExpected = 12
	// sampleMiss is the chance that the first threshold is too high (fewer than k at
	// or above it), which costs a second filter pass from one that misses with
	// retryMiss. Below 1%, so that a benchmark's few fixed inputs do not all hit it by
	// luck; lower costs more candidates on every call (measured with 12 expected: 5%
	// at 1.56k candidates, 0.2% at 2.0k).
	sampleMiss, retryMiss = 0.002, 1e-9
	// sampleMin and sampleMax bound the sample size.
	sampleMin, sampleMax = 128, 2048
	// filterBlock is how many elements one filter call compares. The candidate
	// buffers hold 2k + 2·filterBlock entries, so that keeping the top k of them, when
	// full, comes at most once per k + filterBlock new candidates.
	filterBlock = 2048
)

// topK fills dst (0 < len(dst) < len(x)) with the top len(dst) indices of x.
func (s *topkScratch) topK(dst []int32, x []float32, filter topkFilterFunc) {
	if len(x) < sampledMinLen {
		s.exact(dst, x)
		return
	}
	s.sampled(dst, x, filter)
}

// sampled is topK for long x (len(x) ≥ 16): sample a threshold, filter, select.
func (s *topkScratch) sampled(dst []int32, x []float32, filter topkFilterFunc) {
	k := len(dst)
	s.grow(candidateRoom(len(x), k))
	sample := s.drawSample(x, k)
	// The first threshold leaves 1.2k to 2.8k candidates when k is large enough for
	// the sample to resolve it (2.0k on average), and a few times len(x)/len(sample)
	// when it is not: at least the sample's second largest, not its largest, which on
	// sorted x may be the largest of x. If fewer than k are at or above it (0.2% of
	// inputs), the second, from a rank the sample misjudges only on adversarial data
	// (and at least four times the first), is tried; past that, every number is a
	// candidate.
	first := max(s.sampleRank(sample, sampleMiss), 2)
	for _, rank := range []int{first, max(s.sampleRank(sample, retryMiss), 4*first)} {
		t, ok := s.quantile(sample, rank)
		if !ok {
			break // a NaN threshold: mostly-NaN x
		}
		if c, floor, compacted := s.stream(filter, x, t, k); c >= k {
			s.finish(dst, c, floor, compacted)
			return
		}
	}
	c, floor, compacted := s.stream(filter, x, float32(math.Inf(-1)), k)
	if c >= k {
		s.finish(dst, c, floor, compacted)
		return
	}
	// Fewer than k numbers, all candidates: the first NaNs make up the rest.
	nans := s.idx[c:k]
	for i, j := 0, 0; j < len(nans); i++ {
		nans[j] = int32(i)
		j += b2i(x[i] != x[i])
	}
	mergeAscending(dst, s.idx[:c], nans)
}

// candidateRoom is how many candidates stream keeps before it compacts them:
// min(2k + 2·filterBlock, n), without overflow. The buffers may be longer, grown by an
// earlier call with a larger k, but stream does not use the rest: on a plateau each
// candidate kept costs a gather and a comparison at the compaction.
func candidateRoom(n, k int) int { return k + min(k+2*filterBlock, n-k) }

// grow makes the candidate buffers and the rank keys hold at least n entries.
func (s *topkScratch) grow(n int) {
	if len(s.idx) < n {
		s.idx = make([]int32, n)
		s.bits = make([]uint32, n)
	}
	s.growWork(n)
}

// stream filters x block by block into s.idx, from threshold lo up, and returns how
// many candidates it kept, with their bits in s.bits, and a floor below none of them.
// The candidates hold every element of the top k that is ≥ lo. When the next block
// might not fit in the buffers, it keeps only the top k of the candidates and raises
// lo above the k-th largest of them: an element equal to it, coming later, ranks below
// it by index. So the buffers never hold more than 2k + 2·filterBlock entries,
// whatever the order and distribution of x.
//
// The filter writes indices only; the bits of the candidates are read back from x
// when they are needed, before a compaction and at the end, for those that have none
// yet (the first k after a compaction keep theirs).
func (s *topkScratch) stream(f topkFilterFunc, x []float32, lo float32, k int) (c int, floor float32, compacted bool) {
	floor = lo
	room := candidateRoom(len(x), k)
	withBits := 0 // s.bits[:withBits] holds the bits of the candidates s.idx[:withBits]
	for start := 0; start < len(x); start += filterBlock {
		end := min(start+filterBlock, len(x))
		m := end - start
		if c+m > room {
			gatherBits(s.bits[withBits:c], s.idx[withBits:c], x)
			key := s.compact(c, k, lo)
			c, floor, compacted = k, keyFloat(key), true
			withBits = k
			if key >= topkKey(float32(math.Inf(1))) {
				break // k of +Inf: nothing later can enter
			}
			lo = keyFloat(key + 1)
		}
		c += f(s.idx[c:c+m], x[start:end], lo, int32(start))
	}
	gatherBits(s.bits[withBits:c], s.idx[withBits:c], x)
	return c, floor, compacted
}

// gatherBits stores the bits of x[idx[i]] into bits[i].
func gatherBits(bits []uint32, idx []int32, x []float32) {
	bits = bits[:len(idx)]
	for i, j := range idx {
		bits[i] = math.Float32bits(x[j])
	}
}

// finish fills dst with the top len(dst) of the c ≥ len(dst) candidates that stream
// left, all ≥ floor. After a compaction, floor is the k-th largest of those kept, and
// on a plateau of ties most candidates equal it: compact takes them without rank keys.
func (s *topkScratch) finish(dst []int32, c int, floor float32, compacted bool) {
	if compacted {
		if c > len(dst) {
			s.compact(c, len(dst), floor)
		}
		copy(dst, s.idx[:len(dst)])
		return
	}
	s.selectCandidates(dst, c, floor)
}

// compact keeps, in place and in index order, the top k of the c > k candidates, all
// ≥ lo, and returns the rank key of the k-th largest of them.
func (s *topkScratch) compact(c, k int, lo float32) uint32 {
	idx, bits := s.idx[:c], s.bits[:c]
	above := 0
	for _, b := range bits {
		above += b2i(math.Float32frombits(b) > lo)
	}
	if above < k {
		// lo is the k-th largest, on a plateau of ties: keep all above it and the first
		// ties, with no rank keys to compute. Above a positive lo, the bits order as
		// the values.
		if lo > 0 {
			s.keepTop(c, k, bits, math.Float32bits(lo), above)
			return topkKey(lo)
		}
		j, ties := 0, k-above
		for i := 0; j < k; i++ {
			v := math.Float32frombits(bits[i])
			idx[j], bits[j] = idx[i], bits[i]
			tie := b2i(v == lo) & b2i(ties > 0)
			ties -= tie
			j += b2i(v > lo) | tie
		}
		return topkKey(lo)
	}
	keys := s.keys[:c]
	keyLo, keyHi := topkKeys(keys, bits)
	r := s.kthLargest(keys, k, keyLo, keyHi)
	s.keepTop(c, k, keys, r.key, r.above)
	return r.key
}

// keepTop keeps, in place and in index order, the k of the c candidates s.idx[:c] and
// s.bits[:c] that rank in the top k by keys, given the k-th largest key and how many
// keys are above it: those, and the first k−above equal to it. A scan finds the last
// tie kept; before it, topkKeep keeps the keys ≥ key, after it those above. keys may
// be s.bits[:c].
func (s *topkScratch) keepTop(c, k int, keys []uint32, key uint32, above int) {
	idx, bits := int32Bits(s.idx[:c]), s.bits[:c]
	keys = keys[:c]
	p := 0
	for ties := k - above; ties > 0; p++ {
		ties -= b2i(keys[p] == key)
	}
	// idx before bits: keys may be bits, which must stay as they are until idx is done.
	for _, list := range [][]uint32{idx, bits} {
		n := topkKeep.Call(list, list[:p], keys[:p], key, math.MaxUint32-key)
		if key < math.MaxUint32 {
			n += topkKeep.Call(list[n:], list[p:], keys[p:], key+1, math.MaxUint32-key-1)
		}
		if n != k {
			panic("kernels: TopK kept the wrong number of candidates")
		}
	}
}

// sample is the rank keys of a deterministic stratified sample of x, drawn to estimate
// thresholds for the top k.
type sample struct {
	keys     []uint32
	lo, hi   uint32  // the smallest and largest key
	expected float64 // sample elements expected among the top k of x
}

func (s *topkScratch) drawSample(x []float32, k int) sample {
	n := len(x)
	size := sampleSize(n, k)
	if cap(s.sample) < size {
		s.sample = make([]uint32, sampleMax)
	}
	keys := s.sample[:size]
	at := newSampler(n, size)
	// The loads miss the cache (x was last read a call ago, if ever) and are
	// independent: a loop that does nothing else keeps the most of them in flight.
	for i := range keys {
		keys[i] = math.Float32bits(x[at.position(i)])
	}
	lo, hi := topkKeys(keys, keys)
	return sample{keys, lo, hi, float64(k) * float64(size) / float64(n)}
}

// sampleRank is the lowest rank r in the sample whose value has fewer than k elements
// of x at or above it with probability at most miss. That happens when r or more
// sample elements fall among the top k−1 of x, whose number is close to Poisson with
// mean p.expected (binomial, as the strata are sampled independently; Poisson has the
// larger tail). The normal approximation, p.expected + z·√p.expected, undershoots the
// right tail at these means: it missed 5% of inputs meant to miss 2.3%.
func (s *topkScratch) sampleRank(p sample, miss float64) int {
	pmf := math.Exp(-p.expected) // P(N = 0)
	tail := 1 - pmf              // P(N ≥ 1)
	r := 1
	for tail > miss && r < len(p.keys) {
		pmf *= p.expected / float64(r) // P(N = r)
		tail -= pmf                    // P(N ≥ r+1)
		r++
	}
	return r
}

// quantile returns the sample value of the given rank (1 the largest). ok is false
// when it is NaN (mostly-NaN input), which the filter cannot express.
func (s *topkScratch) quantile(p sample, rank int) (t float32, ok bool) {
	r := s.kthLargest(p.keys, min(rank, len(p.keys)), p.lo, p.hi)
	return keyFloat(r.key), r.key != nanKey
}

// sampleSize is how many elements threshold samples from n for the top k (in int64:
// sampleExpected·n overflows a 32-bit int).
func sampleSize(n, k int) int {
	return int(min(max(sampleExpected*int64(n)/int64(k), sampleMin), sampleMax, int64(n/8)))
}

// sampler places size sample elements in n: one in each of size equal strata, at a
// hashed offset within it, so that periodic data does not alias with the sample. The
// positions are fixed-point products, because a division per element would cost more
// than the load it addresses.
type sampler struct{ step, stratum uint64 }

func newSampler(n, size int) sampler {
	return sampler{step: uint64(n) << 32 / uint64(size), stratum: uint64(n / size)}
}

// position is the index of the i-th sample element.
func (p sampler) position(i int) int {
	offset := uint64(uint32(i)*0x9e3779b9) * p.stratum >> 32
	return int(uint64(i)*p.step>>32 + offset)
}

// selectCandidates fills dst with the top len(dst) of the c filtered candidates, all
// ≥ lo.
func (s *topkScratch) selectCandidates(dst []int32, c int, lo float32) {
	s.growWork(c)
	if lo > 0 {
		// Positive numbers order as their bits: rank the candidates as they are,
		// between lo and their largest, which one SIMD Max finds (none is NaN: the
		// filter never selects NaN).
		bits := s.bits[:c]
		hi := math.Float32bits(maxOf.Call(bitsFloat32(bits)))
		emitTop(dst, s.idx[:c], bits, s.kthLargest(bits, len(dst), math.Float32bits(lo), hi))
		return
	}
	keys := s.keys[:c]
	keyLo, keyHi := topkKeys(keys, s.bits[:c])
	emitTop(dst, s.idx[:c], keys, s.kthLargest(keys, len(dst), keyLo, keyHi))
}

// exact fills dst with the top len(dst) of x by a radix select over every element.
func (s *topkScratch) exact(dst []int32, x []float32) {
	s.growWork(len(x))
	keys := s.keys[:len(x)]
	lo, hi := topkKeys(keys, float32Bits(x))
	emitTopAll(dst, keys, s.kthLargest(keys, len(dst), lo, hi))
}

// growWork makes s.keys and s.work hold at least n keys.
func (s *topkScratch) growWork(n int) {
	if len(s.keys) < n {
		s.keys = make([]uint32, n)
		s.work = make([]uint32, n)
	}
}

// emitTop writes into dst, in order, the idx[i] whose keys[i] rank in the top len(dst),
// given the len(dst)-th largest key r: those above r.key and, of those equal to it, the
// first len(dst)-r.above. It may overwrite idx.
func emitTop(dst, idx []int32, keys []uint32, r kth) {
	j, ties := 0, len(dst)-r.above
	if ties == r.equal { // every tie is in: the keys ≥ r.key, compacted in place
		kept := int32Bits(idx)
		copy(dst, idx[:topkKeep.Call(kept, kept, keys[:len(idx)], r.key, math.MaxUint32-r.key)])
		return
	}
	for i := 0; j < len(dst); i++ {
		key := keys[i]
		dst[j] = idx[i]
		tie := b2i(key == r.key) & b2i(ties > 0)
		ties -= tie
		j += b2i(key > r.key) | tie
	}
}

// emitTopAll is emitTop with idx[i] = i.
func emitTopAll(dst []int32, keys []uint32, r kth) {
	j, ties := 0, len(dst)-r.above
	if ties == r.equal {
		for i := 0; j < len(dst); i++ {
			dst[j] = int32(i)
			j += b2i(keys[i] >= r.key)
		}
		return
	}
	for i := 0; j < len(dst); i++ {
		key := keys[i]
		dst[j] = int32(i)
		tie := b2i(key == r.key) & b2i(ties > 0)
		ties -= tie
		j += b2i(key > r.key) | tie
	}
}

// mergeAscending fills dst with the union of the ascending, disjoint a and b.
func mergeAscending(dst, a, b []int32) {
	i, j := 0, 0
	for d := range dst {
		if j == len(b) || i < len(a) && a[i] < b[j] {
			dst[d] = a[i]
			i++
		} else {
			dst[d] = b[j]
			j++
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
