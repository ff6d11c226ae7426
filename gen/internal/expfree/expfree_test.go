package expfree

import (
	"math"
	"testing"
)

const u = 0x1p-24

// TestPolynomial checks the float32 coefficients of the polynomial: the relative error
// of 1 + r + r²·P(r) against e^r, evaluated exactly (float64), stays within 0.065u on
// |r| ≤ PolyRange, which covers the reduced argument of both exponentials.
func TestPolynomial(t *testing.T) {
	if reach := (0.5+0x1p-18)*math.Ln2 + 0x1p-18; reach > PolyRange {
		t.Fatalf("|r| reaches %v, beyond the fit's range %v", reach, PolyRange)
	}
	worst := 0.0
	const steps = 1 << 20
	for i := 0; i <= steps; i++ {
		r := PolyRange * (2*float64(i)/steps - 1)
		p := 0.0
		for k := len(Poly) - 1; k >= 0; k-- {
			p = p*r + float64(Poly[k])
		}
		worst = max(worst, math.Abs((1+r+r*r*p)/math.Exp(r)-1))
	}
	if worst > 0.065*u {
		t.Fatalf("truncation %.3fu, want at most 0.065u", worst/u)
	}
}
