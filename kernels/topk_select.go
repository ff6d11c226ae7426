package kernels

import (
	"math"
	"math/bits"
	"unsafe"
)

// nanKey is the rank key of every NaN: below −Inf's.
const nanKey = 0

// topkKey maps v to a key whose unsigned order is TopK's ranking: NaN lowest (nanKey),
// then −Inf … −0 = +0 … +Inf.
func topkKey(v float32) uint32 { return topkKeyBits(math.Float32bits(v)) }

// topkKeyBits is topkKey of the float32 with bits b. Positive values set the sign bit;
// negative ones are negated (flipped and incremented), so −0 lands on +0's key and
// larger magnitudes on smaller keys. Branch-free but for NaN, which is rare.
func topkKeyBits(b uint32) uint32 {
	if b&0x7fffffff > 0x7f800000 {
		return nanKey
	}
	negative := uint32(int32(b) >> 31)
	return b ^ (negative | 0x80000000) - negative
}

// float32Bits views x as its bit patterns, without copying.
func float32Bits(x []float32) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

// bitsFloat32 views bit patterns as the float32s they encode, without copying.
func bitsFloat32(b []uint32) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b))
}

// int32Bits views x as uint32s, without copying.
func int32Bits(x []int32) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

// keyFloat is the inverse of topkKey for numbers (−0 comes back as +0).
func keyFloat(key uint32) float32 {
	if int32(key) < 0 {
		return math.Float32frombits(key &^ 0x80000000)
	}
	return math.Float32frombits(-key)
}

// topkKeys stores the keys of the floats whose bits are x into keys (which may be x)
// and returns their minimum and maximum.
func topkKeys(keys []uint32, x []uint32) (lo, hi uint32) {
	keys = keys[:len(x)]
	lo, hi = math.MaxUint32, 0
	for i, b := range x {
		key := topkKeyBits(b)
		keys[i] = key
		lo, hi = min(lo, key), max(hi, key)
	}
	return lo, hi
}

const (
	// radixDigitBits sets the largest number of radix buckets per level, 2048: a few
	// thousand candidates spread to about one per bucket, so the second level rarely
	// has more than a handful left.
	radixDigitBits = 11
	// smallSelect is the candidate count at which insertion sort beats another
	// histogram level.
	smallSelect = 32
)

// kth describes the k-th largest key of a set: its value, how many keys are larger, and
// how many equal it.
type kth struct {
	key          uint32
	above, equal int
}

// kthLargest finds the k-th largest of keys (1 ≤ k ≤ len(keys)), all in [lo, hi], by a
// radix select that keeps only the bucket holding it at each level. The buckets split
// [lo, hi] rather than fixed bit fields, so keys clustered in a narrow range
// (candidates above a threshold, all of one exponent) still spread over all of them.
// Each level divides the range by at least 64 (up to 2048), so there are at most six.
// keys is left as it is; s.work must hold len(keys).
func (s *topkScratch) kthLargest(keys []uint32, k int, lo, hi uint32) kth {
	cur, above := keys, 0
	for {
		if len(cur) <= smallSelect {
			return s.kthLargestSmall(cur, k, above)
		}
		// About one bucket per key, up to 1<<radixDigitBits: clearing and scanning the
		// histogram then costs no more than filling it.
		digitBits := min(bits.Len(uint(len(cur))), radixDigitBits)
		shift := uint(max(bits.Len32(hi-lo)-digitBits, 0))
		last := (hi - lo) >> shift
		hist := &s.hist
		clear(hist[:last+1])
		for _, key := range cur {
			// The mask changes nothing (key ≤ hi), but it drops the bounds check:
			// with neither it nor a clamp, the loop is one load, subtract, shift
			// and increment per key.
			hist[(key-lo)>>shift&(uint32(len(hist))-1)]++
		}
		b := last
		for above+int(hist[b]) < k {
			above += int(hist[b])
			b--
		}
		bucketLo := lo + b<<shift
		if shift == 0 {
			return kth{bucketLo, above, int(hist[b])}
		}
		// Keep bucket b, [bucketLo, bucketLo+width] (keys below bucketLo wrap around
		// above width), compacting into s.work (in place after the first level). The
		// top bucket ends at hi, so the next level spans no more than its keys can.
		width := min(uint32(1)<<shift-1, hi-bucketLo)
		work := s.work[:len(cur)]
		n := topkKeep.Call(work, cur, cur, bucketLo, width)
		cur, lo, hi = work[:n], bucketLo, bucketLo+width
		if hi == lo {
			return kth{lo, above, len(cur)}
		}
	}
}

// kthLargestSmall finishes kthLargest on a few keys by insertion sort, descending;
// above counts the keys already known to be larger than all of them.
func (s *topkScratch) kthLargestSmall(keys []uint32, k, above int) kth {
	work := s.work[:len(keys)]
	copy(work, keys)
	for i := 1; i < len(work); i++ {
		v, j := work[i], i
		for ; j > 0 && work[j-1] < v; j-- {
			work[j] = work[j-1]
		}
		work[j] = v
	}
	first := k - above - 1
	key := work[first]
	for first > 0 && work[first-1] == key {
		first--
	}
	end := k - above
	for end < len(work) && work[end] == key {
		end++
	}
	return kth{key, above + first, end - first}
}
