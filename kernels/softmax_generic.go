package kernels

import "math"

// softmaxGeneric is the scalar reference: float64 math.Exp per element.
func softmaxGeneric(x []float32) {
	softmaxPasses(x, withoutMin(maxGeneric), expSumGeneric, scaleGeneric)
}

// withoutMin turns a maximum into a softmaxPasses maxMin for an expSum that takes no
// lower bound: −Inf bounds every element.
func withoutMin(max func([]float32) float32) func([]float32) (float32, float32) {
	return func(x []float32) (float32, float32) { return max(x), float32(math.Inf(-1)) }
}

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
