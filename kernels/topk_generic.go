package kernels

import "math"

// topkFilterGeneric is the scalar filter. Where few elements are in range (the common
// case, about 2k of n) a branch per element is cheapest, as the predictor learns
// "out"; where many are at random, its mispredictions cost four times more than
// storing every element and advancing the output only past those in range. It picks
// one loop or the other chunk by chunk, by the density of the chunk before.
func topkFilterGeneric(idx []int32, bits []uint32, x []float32, lo, hi float32, base int32) int {
	const chunkLen = 256
	idx, bits = idx[:len(x)], bits[:len(x)]
	n, dense := 0, false
	for start := 0; start < len(x); start += chunkLen {
		chunk, first, before := x[start:min(start+chunkLen, len(x))], base+int32(start), n
		if dense {
			for i, v := range chunk {
				idx[n] = first + int32(i)
				bits[n] = math.Float32bits(v)
				n += b2i(v >= lo) & b2i(v <= hi)
			}
		} else {
			for i, v := range chunk {
				if v >= lo && v <= hi {
					idx[n] = first + int32(i)
					bits[n] = math.Float32bits(v)
					n++
				}
			}
		}
		dense = n-before > len(chunk)/16
	}
	return n
}
