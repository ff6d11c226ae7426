package oracle

// WeightedSumRows returns the expectation for each output of kernels.WeightedSumRows:
// column d is the dot product of w with v[d], v[dim+d], v[2·dim+d], …, so it is held
// to the dot products' bound (see ExpectDot).
func WeightedSumRows(w []float32, v []uint16, dim int) []DotExpectation {
	e := make([]DotExpectation, dim)
	half := HalfAt(v)
	for d := range e {
		column := func(j int) float64 { return half(j*dim + d) }
		e[d] = ExpectDot(len(w), SingleAt(w), column, 1)
	}
	return e
}
