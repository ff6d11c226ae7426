package kernels

import "math"

// softmaxGeneric is the scalar reference: float64 math.Exp per element.
func softmaxGeneric(x []float32) {
	softmaxPasses(x, maxGeneric, expSumGeneric, scaleGeneric)
}

func expSumGeneric(x []float32, m float32) float64 {
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
