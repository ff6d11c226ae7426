package kernels

func gatherRowsGeneric(dst, src []Float16, idx []int32, dim, stride int) {
	for i, r := range idx {
		copy(dst[i*dim:(i+1)*dim], src[int(r)*stride:][:dim])
	}
}
