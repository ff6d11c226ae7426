//go:build !(amd64 || arm64) || purego || noasm

package kernels

// Without assembly every dot product runs its generic body.

func dotF16Active(a, b []uint16) float32 {
	checkDot("DotF16", len(a), len(b))
	return dotF16.Call(a, b)
}

func dotF32F16Active(a []float32, b []uint16) float32 {
	checkDot("DotF32F16", len(a), len(b))
	return settleF32F16(dotF32F16.Call(a, b), a, b, 1)
}

func dotF32Active(a, b []float32) float32 {
	checkDot("DotF32", len(a), len(b))
	return settleF32(dotF32.Call(a, b), a, b)
}
