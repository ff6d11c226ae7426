package kernels

// The generic bodies of the bf16 and q8_0 kernels: the fp16 ones (dot_generic.go,
// scores_generic.go, weighted_generic.go) with the element widened by its format.

func dotF32BF16Generic(a []float32, b []uint16) float32 {
	b = b[:len(a)]
	var s float32
	for i, x := range a {
		s += x * bf16Float32(b[i])
	}
	return s
}

func scoresBF16Generic(dst, q []float32, k []uint16, rows, n, dim, stride int, scale float32) {
	for i := range rows {
		qi := q[i*dim : (i+1)*dim]
		out := dst[i*n : (i+1)*n]
		for j := range out {
			out[j] = scale * dotF32BF16Generic(qi, k[j*stride:j*stride+dim])
		}
	}
}

func weightedSumRowsBF16Generic(dst, w []float32, v []uint16, stride int) {
	dim := len(dst)
	clear(dst)
	for j, p := range w {
		row := v[j*stride : j*stride+dim]
		for d, h := range row {
			dst[d] += p * bf16Float32(h)
		}
	}
}

// dotF32Q8Generic takes the bytes of len(a)/32 q8_0 blocks.
func dotF32Q8Generic(a []float32, b []byte) float32 {
	var s float32
	for i, x := range a {
		block := b[i/32*q8BlockSize:][:q8BlockSize]
		s += x * q8Value(block, i%32)
	}
	return s
}

// scoresQ8Generic takes dim in values and stride in blocks.
func scoresQ8Generic(dst, q []float32, k []byte, rows, n, dim, stride int, scale float32) {
	for i := range rows {
		qi := q[i*dim : (i+1)*dim]
		out := dst[i*n : (i+1)*n]
		for j := range out {
			out[j] = scale * dotF32Q8Generic(qi, k[j*stride*q8BlockSize:])
		}
	}
}

// weightedSumRowsQ8Generic takes stride in blocks.
func weightedSumRowsQ8Generic(dst, w []float32, v []byte, stride int) {
	clear(dst)
	for j, p := range w {
		row := v[j*stride*q8BlockSize:]
		for d := range dst {
			dst[d] += p * q8Value(row[d/32*q8BlockSize:], d%32)
		}
	}
}
