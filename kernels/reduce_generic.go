package kernels

// maxGeneric is Max's reference loop; x is not empty.
func maxGeneric(x []float32) float32 {
	m := x[0]
	for _, v := range x[1:] {
		if v > m || v != v {
			m = v
		}
	}
	return m
}

func sumGeneric(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v)
	}
	return s
}

func addGeneric(dst, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] += v
	}
}
