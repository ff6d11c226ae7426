// Package expfree holds what the table-free exponential of ExpSumNEON and ExpSumAVX2
// (gen/arm64/softmax, gen/amd64/softmax) shares: its polynomial, and the exactly
// rounded float32 FMA their tests emulate it with.
package expfree

import (
	"math"
	"math/big"
)

// Poly holds c2 … c6 of 1 + r + r²·(c2 + c3·r + c4·r² + c5·r³ + c6·r⁴) ≈ e^r,
// |r| ≤ PolyRange: a Lawson (iteratively reweighted least squares) minimax fit of the
// relative error with c0 = c1 = 1, rounded to float32.
var Poly = [5]float32{
	math.Float32frombits(0x3efffffe), // 0.49999994
	math.Float32frombits(0x3e2aaa49), // 0.16666521
	math.Float32frombits(0x3d2aac79), // 0.041668389
	math.Float32frombits(0x3c091d05), // 0.0083687352
	math.Float32frombits(0x3ab511f9), // 0.0013814560
}

// PolyRange bounds the reduced argument the fit covers.
const PolyRange = 0.3467

// FMA32 is the float32 a·b + c rounded once (to a subnormal too).
func FMA32(a, b, c float32) float32 {
	f := math.FMA(float64(a), float64(b), float64(c))
	r := float32(f)
	if float64(r) == f {
		return r
	}
	// f itself may be rounded: redo it exactly when it lies halfway between floats.
	next := math.Nextafter32(r, float32(math.Copysign(math.Inf(1), f-float64(r))))
	if f-float64(r) != (float64(next)-float64(r))/2 {
		return r
	}
	x := new(big.Float).SetPrec(256).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(256).SetFloat64(float64(c)))
	v, _ := x.Float32()
	return v
}
