package oracle

import (
	"fmt"
	"math"

	"github.com/x448/float16"
)

// DotExpectation is what the float64 reference requires of one float32 dot product
// times scale: the bound of the doc comments around the exact value, or a NaN, or an
// Inf. Products are exact in float64 (24+24 bits), so the reference's own rounding is
// some 2⁻²⁹ of the bound.
type DotExpectation struct {
	Exact float64 // scale·Σ aᵢbᵢ over the finite products
	Bound float64 // allowed |got − exact|
	NaN   bool    // the result must be NaN
	Inf   int     // ±1: the result must be that Inf
	// Overflowable: the finite terms reach within a factor of two of MaxFloat32, so a
	// variant's order of summation decides whether it overflows; a non-finite result
	// is then also right.
	Overflowable bool
}

// ExpectDot computes the expectation for Σ a(i)·b(i), i < n, times a finite, nonzero
// scale.
func ExpectDot(n int, a, b func(i int) float64, scale float64) DotExpectation {
	var sum, mag float64
	var nan, posInf, negInf bool
	for i := range n {
		p := a(i) * b(i)
		switch {
		case math.IsNaN(p): // a NaN input, or 0·Inf
			nan = true
		case math.IsInf(p, 1):
			posInf = true
		case math.IsInf(p, -1):
			negInf = true
		default:
			sum += p
			mag += math.Abs(p)
		}
	}
	const near = math.MaxFloat32 / 2
	e := DotExpectation{
		Exact:        scale * sum,
		Bound:        math.Abs(scale)*(2*float64(n)*0x1p-24*mag+float64(n)*0x1p-149) + 0x1p-149,
		NaN:          nan || posInf && negInf,
		Overflowable: mag >= near || math.Abs(scale)*mag >= near,
	}
	if !e.NaN && (posInf || negInf) {
		e.Inf = 1
		if negInf != (scale < 0) {
			e.Inf = -1
		}
	}
	return e
}

// Check reports how got misses the expectation, or nil.
func (e DotExpectation) Check(got float32) error {
	g := float64(got)
	nonFinite := math.IsNaN(g) || math.IsInf(g, 0)
	switch {
	case e.NaN:
		if !math.IsNaN(g) {
			return fmt.Errorf("got %v, want NaN", got)
		}
	case e.Overflowable && nonFinite:
	case e.Inf != 0:
		if !math.IsInf(g, e.Inf) {
			return fmt.Errorf("got %v, want %v", got, math.Inf(e.Inf))
		}
	case !(math.Abs(g-e.Exact) <= e.Bound): // also catches NaN
		return fmt.Errorf("got %v, want %v ± %.3g (error %.3g)", got, e.Exact, e.Bound, math.Abs(g-e.Exact))
	}
	return nil
}

// CheckSettled reports how got, a result of the exported DotF32F16, DotF32 or Scores,
// misses the expectation, or nil. Those settle every non-finite result in float64 (see
// kernels.DotF32F16): NaN only when the inputs force it, an Inf input gives its Inf,
// and any other Inf is the float64 sum rounded, which Exact holds in the same order.
// Finite results meet the bound. (Check is the looser contract of a variant's body
// before settling; DotF16's results already meet this one.)
func (e DotExpectation) CheckSettled(got float32) error {
	g := float64(got)
	switch {
	case e.NaN:
		if !math.IsNaN(g) {
			return fmt.Errorf("got %v, want NaN", got)
		}
	case e.Inf != 0:
		if !math.IsInf(g, e.Inf) {
			return fmt.Errorf("got %v, want %v", got, math.Inf(e.Inf))
		}
	case math.IsNaN(g):
		return fmt.Errorf("got NaN from inputs that force none (want %v ± %.3g)", e.Exact, e.Bound)
	case math.IsInf(g, 0):
		if want := float32(e.Exact); got != want {
			return fmt.Errorf("got %v, want the float64 sum %v rounded: %v", got, e.Exact, want)
		}
	case !(math.Abs(g-e.Exact) <= e.Bound):
		return fmt.Errorf("got %v, want %v ± %.3g (error %.3g)", got, e.Exact, e.Bound, math.Abs(g-e.Exact))
	}
	return nil
}

// HalfAt reads element i of fp16 bits h as the float64 it equals: an operand of
// ExpectDot.
func HalfAt(h []uint16) func(int) float64 {
	return func(i int) float64 { return float64(float16.Frombits(h[i]).Float32()) }
}

// SingleAt reads element i of x as a float64: an operand of ExpectDot.
func SingleAt(x []float32) func(int) float64 {
	return func(i int) float64 { return float64(x[i]) }
}
