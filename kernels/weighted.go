package kernels

import (
	"fmt"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/race"
)

var weightedSumRows = dispatch.New(weightedSumRowsGeneric)

// WeightedSumRows sets dst to the sum of the fp16 rows of v weighted by w, accumulated
// in float32: the attention output Σⱼ pⱼ·Vⱼ of one query over n cached value rows.
//
//	for d := range dst { dst[d] = 0 }
//	for j := range w {
//		for d := range dst { dst[d] += w[j] * v[j*len(dst)+d].Float32() }
//	}
//
// It panics unless len(dst) ≥ 1 and len(v) == len(w)·len(dst). dst must not overlap w.
//
// (Error bound, variants and special values: to be completed with the SIMD variants.)
func WeightedSumRows(dst, w []float32, v []Float16) {
	dim, n := len(dst), len(w)
	if dim < 1 || len(v)/dim != n || len(v)%dim != 0 {
		panic(fmt.Sprintf("kernels.WeightedSumRows: len(dst) = %d, len(w) = %d, len(v) = %d", dim, n, len(v)))
	}
	race.Read(w)
	race.Read(v)
	race.Write(dst)
	weightedSumRows.Call(dst, w, fp16.Bits(v))
}
