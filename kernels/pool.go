package kernels

import (
	"fmt"

	"github.com/kvsimd/kvsimd/internal/dispatch"
	"github.com/kvsimd/kvsimd/internal/race"
)

var (
	avgPool1D = dispatch.New(avgPool1DGeneric)
	maxPool1D = dispatch.New(maxPool1DGeneric)
)

// AvgPool1D sets dst to the 1-D average pooling of src with stride 1 and zero padding
// of kernel/2 on each side, PyTorch's avg_pool1d(src, kernel, 1, kernel/2) with
// count_include_pad=True: every output divides by kernel, also where the window hangs
// over the padding. With p = kernel/2:
//
//	for i := range dst {
//		w := src[max(i−p, 0):min(i+p+1, len(src))] // the window, padding left out
//		s := w[0]
//		for j := 1; j+1 < len(w); j += 2 { s += w[j] + w[j+1] }
//		if len(w)%2 == 0 { s += w[len(w)−1] }
//		dst[i] = s * (1 / float32(kernel))
//	}
//
// The window is summed in float32 in that order, its first element and then pairs of
// neighbours, and scaled by the rounded reciprocal: the same operations in every
// variant, so all variants give the same bits. The order lets the SIMD variants add
// each pair of neighbours once for every window that holds it: kernel 7 takes four adds
// per output instead of six. No element goes through more than (kernel+1)/2 of the
// sum's roundings, so against the exact average a = Σ src[j]/kernel, with S = Σ|src[j]|
// over the window:
//
//	|dst[i] − a| ≤ (kernel+7)·2⁻²⁵·S/kernel + 2⁻¹⁴⁹
//
// (the last term for averages that underflow float32's subnormal range).
// NaN and Inf propagate as in float32 addition; a window whose partial sums exceed
// float32's range gives ±Inf. It panics if len(dst) != len(src) or kernel is not an odd
// number ≥ 1 (an even kernel would shift the output by half a position). dst must not
// overlap src. AvgPool1D does not allocate.
func AvgPool1D(dst, src []float32, kernel int) {
	checkPool("AvgPool1D", dst, src, kernel)
	race.Read(src)
	race.Write(dst)
	avgPool1D.Call(dst, src, kernel)
}

// MaxPool1D sets dst to the 1-D max pooling of src with stride 1 and padding kernel/2
// on each side that never wins, PyTorch's max_pool1d(src, kernel, 1, kernel/2). With
// p = kernel/2:
//
//	for i := range dst { dst[i] = Max(src[max(i−p, 0) : min(i+p+1, len(src))]) }
//
// The result is exact: each output is an element of its window. A NaN in the window
// gives NaN (as PyTorch does); +0 and −0 compare equal and either may be returned. It
// panics if len(dst) != len(src) or kernel is not an odd number ≥ 1. dst must not
// overlap src. MaxPool1D does not allocate.
func MaxPool1D(dst, src []float32, kernel int) {
	checkPool("MaxPool1D", dst, src, kernel)
	race.Read(src)
	race.Write(dst)
	maxPool1D.Call(dst, src, kernel)
}

func checkPool(name string, dst, src []float32, kernel int) {
	if len(dst) != len(src) {
		panic(fmt.Sprintf("kernels.%s: len(dst) = %d, len(src) = %d, want equal lengths", name, len(dst), len(src)))
	}
	if kernel < 1 || kernel%2 == 0 {
		panic(fmt.Sprintf("kernels.%s: kernel = %d, want an odd number ≥ 1", name, kernel))
	}
}
