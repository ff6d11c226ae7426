package oracle

import "math"

// Max is the largest element of x by the NaN rule of kernels.Max and kernels.MaxPool1D:
// NaN if x holds a NaN, whatever else it holds, and −Inf if x is empty. math.Max is
// not that rule: math.Max(NaN, +Inf) is +Inf.
func Max(x []float32) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		if v != v {
			return math.NaN()
		}
		m = max(m, float64(v))
	}
	return m
}

// PoolWindow is the part of src under the window of output i of a 1-D pooling with
// stride 1 and padding kernel/2: the padding is left out.
func PoolWindow(src []float32, kernel, i int) []float32 {
	p := kernel / 2
	return src[max(i-p, 0):min(i+p+1, len(src))]
}

// AvgPool1D is kernels.AvgPool1D's reference loop, in float32: each window summed as
// its first element and then pairs of neighbours, (w[1]+w[2]), (w[3]+w[4]), …, with a
// lone last element where the window is even (cut by the padding), and scaled by the
// rounded reciprocal of kernel, which every variant reproduces bit for bit.
func AvgPool1D(src []float32, kernel int) []float32 {
	dst := make([]float32, len(src))
	for i := range dst {
		w := PoolWindow(src, kernel, i)
		s := w[0]
		for j := 1; j+1 < len(w); j += 2 {
			s += w[j] + w[j+1]
		}
		if len(w)%2 == 0 {
			s += w[len(w)-1]
		}
		dst[i] = s * (1 / float32(kernel))
	}
	return dst
}

// MaxPool1D is kernels.MaxPool1D's reference: the Max of each window.
func MaxPool1D(src []float32, kernel int) []float64 {
	dst := make([]float64, len(src))
	for i := range dst {
		dst[i] = Max(PoolWindow(src, kernel, i))
	}
	return dst
}
