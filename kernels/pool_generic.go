package kernels

func avgPool1DGeneric(dst, src []float32, kernel int) {
	avgPoolRange(dst, src, kernel, 0, len(dst))
}

func maxPool1DGeneric(dst, src []float32, kernel int) {
	maxPoolRange(dst, src, kernel, 0, len(dst))
}

// poolWindow returns the part of src under the window of output i: padding is left out.
func poolWindow(src []float32, kernel, i int) []float32 {
	p := kernel / 2
	return src[max(i-p, 0):min(i+p+1, len(src))]
}

// avgPoolRange sets dst[lo:hi], summing each window w in AvgPool1D's order: w[0], then
// the pairs (w[1]+w[2]), (w[3]+w[4]), …, and a last lone element where len(w) is even
// (only at the edges). Starting from w[0] rather than from 0 gives the SIMD variants'
// bits, signed zeros included.
func avgPoolRange(dst, src []float32, kernel, lo, hi int) {
	scale := 1 / float32(kernel)
	for i := lo; i < hi; i++ {
		w := poolWindow(src, kernel, i)
		s := w[0]
		j := 1
		for ; j+1 < len(w); j += 2 {
			s += w[j] + w[j+1]
		}
		if j < len(w) {
			s += w[j]
		}
		dst[i] = s * scale
	}
}

func maxPoolRange(dst, src []float32, kernel, lo, hi int) {
	for i := lo; i < hi; i++ {
		dst[i] = maxGeneric(poolWindow(src, kernel, i))
	}
}
