package kernels

func weightedSumRowsGeneric(dst, w []float32, v []uint16) {
	dim := len(dst)
	clear(dst)
	for j, p := range w {
		row := v[j*dim : (j+1)*dim]
		for d, h := range row {
			dst[d] += p * halfFloat32(h)
		}
	}
}
