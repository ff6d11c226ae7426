package kernels

func scoresGeneric(dst, q []float32, k []uint16, rows, n, dim, stride int, scale float32) {
	scoresWidened(dst, q, rows, n, dim, scale, halfRows(k, stride))
}
