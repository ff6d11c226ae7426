package kernels

import "github.com/x448/float16"

// halfFloat32 widens one fp16 bit pattern exactly, as x448 does: for the scalar paths
// (settling, q8_0 scales); the generic kernels widen whole rows (generic_widen.go).
func halfFloat32(h uint16) float32 { return float16.Frombits(h).Float32() }

// The generic dot products sum in partialDots' order, not the doc loops' index order;
// both meet the documented bound, and the float64 reference of the tests is
// internal/oracle.

func dotF16Generic(a, b []uint16) float32 {
	return partialDots{}.addHalfPairs(a, b, halfTable()).sum()
}

func dotF32F16Generic(a []float32, b []uint16) float32 {
	return partialDots{}.addHalves(a, b, halfTable()).sum()
}

func dotF32Generic(a, b []float32) float32 {
	return partialDots{}.add(a, b).sum()
}
