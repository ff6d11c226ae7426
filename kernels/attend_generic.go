package kernels

// The generic bodies of the accumulating weighted sums of the fused attention: row i of
// dst takes Σⱼ w[i*attendBlock+j]·vⱼ over j < n, in order of j, after its own value.
// The rows to prefetch (ahead) are the assembly's business; Go has no prefetch.

func weightedSumRowsAddGeneric(dst, w []float32, v, _ []uint16, rows, n, stride int) {
	dim := len(dst) / rows
	for i := range rows {
		acc := dst[i*dim : (i+1)*dim]
		for j, p := range w[i*attendBlock:][:n] {
			for d, h := range v[j*stride:][:dim] {
				acc[d] += p * halfFloat32(h)
			}
		}
	}
}

func weightedSumRowsAddBF16Generic(dst, w []float32, v, _ []uint16, rows, n, stride int) {
	dim := len(dst) / rows
	for i := range rows {
		acc := dst[i*dim : (i+1)*dim]
		for j, p := range w[i*attendBlock:][:n] {
			for d, h := range v[j*stride:][:dim] {
				acc[d] += p * bf16Float32(h)
			}
		}
	}
}

// weightedSumRowsAddQ8Generic takes stride in blocks.
func weightedSumRowsAddQ8Generic(dst, w []float32, v, _ []byte, rows, n, stride int) {
	dim := len(dst) / rows
	for i := range rows {
		acc := dst[i*dim : (i+1)*dim]
		for j, p := range w[i*attendBlock:][:n] {
			row := v[j*stride*q8BlockSize:]
			for d := range acc {
				acc[d] += p * q8Value(row[d/32*q8BlockSize:], d%32)
			}
		}
	}
}
