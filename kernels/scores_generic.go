package kernels

func scoresGeneric(dst, q []float32, k []uint16, rows, n, dim, stride int, scale float32) {
	for i := range rows {
		qi := q[i*dim : (i+1)*dim]
		out := dst[i*n : (i+1)*n]
		for j := range out {
			out[j] = scale * dotF32F16Generic(qi, k[j*stride:j*stride+dim])
		}
	}
}
