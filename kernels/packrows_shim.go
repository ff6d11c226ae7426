package kernels

// packRows copies n rows of dim halves, stride apart, into a new contiguous slice.
//
// TODO(strided asm): a temporary stand-in, until the SIMD bodies take the stride, so
// that strided calls give the contiguous bodies' bits. It allocates; it goes with them.
func packRows(x []uint16, n, dim, stride int) []uint16 {
	out := make([]uint16, n*dim)
	for j := range n {
		copy(out[j*dim:(j+1)*dim], x[j*stride:j*stride+dim])
	}
	return out
}
