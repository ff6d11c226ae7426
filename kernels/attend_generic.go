package kernels

// The generic bodies of the accumulating weighted sums of the fused attention: row i of
// dst takes Σⱼ w[i*attendBlock+j]·vⱼ over j < n, in order of j, after its own value.
// Each block of value rows is widened once for all rows of dst. The rows to prefetch
// (ahead) are the assembly's business; Go has no prefetch.

func weightedSumRowsAddGeneric(dst, w []float32, v, _ []uint16, rows, n, stride int) {
	weightedAddWidened(dst, w, attendBlock, rows, n, len(dst)/rows, halfRows(v, stride))
}

func weightedSumRowsAddBF16Generic(dst, w []float32, v, _ []uint16, rows, n, stride int) {
	weightedAddWidened(dst, w, attendBlock, rows, n, len(dst)/rows, bf16Rows(v, stride))
}

// weightedSumRowsAddQ8Generic takes stride in blocks.
func weightedSumRowsAddQ8Generic(dst, w []float32, v, _ []byte, rows, n, stride int) {
	weightedAddWidened(dst, w, attendBlock, rows, n, len(dst)/rows, q8Rows(v, stride))
}

func weightedSumRowsAddF32Generic(dst, w []float32, v, _ []float32, rows, n, stride int) {
	weightedAddWidened(dst, w, attendBlock, rows, n, len(dst)/rows, f32Rows(v, stride))
}
