package kernels

// The generic bodies of the bf16, q8_0 and float32 kernels: the fp16 ones (dot_generic.go,
// scores_generic.go, weighted_generic.go) with the element widened by its format.

func dotF32BF16Generic(a []float32, b []uint16) float32 {
	return partialDots{}.addBF16(a, b).sum()
}

func scoresBF16Generic(dst, q []float32, k []uint16, rows, n, dim, stride int, scale float32) {
	scoresWidened(dst, q, rows, n, dim, scale, bf16Rows(k, stride))
}

func weightedSumRowsBF16Generic(dst, w []float32, v []uint16, stride int) {
	clear(dst)
	weightedAddWidened(dst, w, 0, 1, len(w), len(dst), bf16Rows(v, stride))
}

// dotF32Q8Generic takes the bytes of len(a)/32 q8_0 blocks.
func dotF32Q8Generic(a []float32, b []byte) float32 {
	return partialDots{}.addQ8(a, b).sum()
}

// scoresQ8Generic takes dim in values and stride in blocks.
func scoresQ8Generic(dst, q []float32, k []byte, rows, n, dim, stride int, scale float32) {
	scoresWidened(dst, q, rows, n, dim, scale, q8Rows(k, stride))
}

// weightedSumRowsQ8Generic takes stride in blocks.
func weightedSumRowsQ8Generic(dst, w []float32, v []byte, stride int) {
	clear(dst)
	weightedAddWidened(dst, w, 0, 1, len(w), len(dst), q8Rows(v, stride))
}

func scoresF32Generic(dst, q []float32, k []float32, rows, n, dim, stride int, scale float32) {
	scoresWidened(dst, q, rows, n, dim, scale, f32Rows(k, stride))
}

func weightedSumRowsF32Generic(dst, w []float32, v []float32, stride int) {
	clear(dst)
	weightedAddWidened(dst, w, 0, 1, len(w), len(dst), f32Rows(v, stride))
}
