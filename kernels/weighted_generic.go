package kernels

func weightedSumRowsGeneric(dst, w []float32, v []uint16, stride int) {
	clear(dst)
	weightedAddWidened(dst, w, 0, 1, len(w), len(dst), halfRows(v, stride))
}
