package kernels

// topkFilterGeneric is the scalar filter. Where few elements pass (the common case,
// about 2k of n) a branch per element is cheapest, as the predictor learns "out";
// where many pass at random, its mispredictions cost four times more than storing
// every index and advancing the output only past those that pass. It picks one loop or
// the other chunk by chunk, by the density of the chunk before.
func topkFilterGeneric(idx []int32, x []float32, lo float32, base int32) int {
	const chunkLen = 256
	idx = idx[:len(x)]
	n, dense := 0, false
	for start := 0; start < len(x); start += chunkLen {
		chunk, first, before := x[start:min(start+chunkLen, len(x))], base+int32(start), n
		if dense {
			for i, v := range chunk {
				idx[n] = first + int32(i)
				n += b2i(v >= lo)
			}
		} else {
			for i, v := range chunk {
				if v >= lo {
					idx[n] = first + int32(i)
					n++
				}
			}
		}
		dense = n-before > len(chunk)/16
	}
	return n
}

// topkKeepGeneric is the scalar topkKeep: a store per key, the output advancing only
// past those kept, as the few kept among many are at random.
func topkKeepGeneric(dst, src, keys []uint32, lo, width uint32) int {
	dst, src = dst[:len(keys)], src[:len(keys)]
	n := 0
	for i, key := range keys {
		dst[n] = src[i]
		n += b2i(key-lo <= width)
	}
	return n
}
