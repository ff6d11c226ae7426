package oracle

import "math"

// Softmax is the softmax in float64 of float32 inputs, with Softmax's documented
// special cases, and whether −Inf entries must come out exactly 0 (masks): the row
// holds no NaN or +Inf and at least one entry above −Inf.
func Softmax(x []float32) (y []float64, masks bool) {
	y = make([]float64, len(x))
	m := Max(x)
	switch {
	case math.IsNaN(m) || math.IsInf(m, 1):
		for i := range y {
			y[i] = math.NaN()
		}
	case math.IsInf(m, -1):
		for i := range y {
			y[i] = 1 / float64(len(x))
		}
	default:
		var s float64
		for i, v := range x {
			y[i] = math.Exp(float64(v) - m)
			s += y[i]
		}
		for i := range y {
			y[i] /= s
		}
		masks = true
	}
	return y, masks
}
