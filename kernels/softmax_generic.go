package kernels

import "math"

// softmaxGeneric is the scalar reference: float64 math.Exp per element.
func softmaxGeneric(x []float32) { genericPasses.softmax(x) }

// addSoftmaxGeneric is softmaxGeneric with the last pass adding into dst.
func addSoftmaxGeneric(dst, x []float32) { genericPasses.addSoftmax(dst, x) }

var genericPasses = softmaxPasses{maxMinGeneric, expSumGeneric, scaleGeneric, scaleAddGeneric, addGeneric}

// maxMinGeneric gives −Inf as the lower bound, which bounds every element:
// expSumGeneric takes none.
func maxMinGeneric(x []float32) (float32, float32) { return maxGeneric(x), float32(math.Inf(-1)) }

// expSumGeneric needs no lower bound.
func expSumGeneric(x []float32, m, _ float32) float64 {
	var s float64
	for i, v := range x {
		x[i] = float32(math.Exp(float64(v)-float64(m)) * 0x1p24)
		s += float64(x[i])
	}
	return s
}

func scaleGeneric(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

// scaleAddGeneric rounds each product before the add, as scaleGeneric then addGeneric
// do: the conversion forbids the compiler a fused multiply-add (which Go may emit for
// x*s + d, as it does on arm64).
func scaleAddGeneric(dst, x []float32, s float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] += float32(v * s)
	}
}
