package kernels

func weightedSumRowsGeneric(dst, w []float32, v []uint16, stride int) {
	dim := len(dst)
	clear(dst)
	for j, p := range w {
		row := v[j*stride : j*stride+dim]
		for d, h := range row {
			dst[d] += p * halfFloat32(h)
		}
	}
}
