package oracle

import (
	"fmt"
	"math"
)

// AttendRow is what the float64 reference requires of one query row of the fused
// decode attention (kernels.Attend and its twins): the exact Σⱼ pⱼ·vⱼ with pⱼ the
// exact softmax of the exact scores, and the bound of Attend's doc comment around
// each output. A row with a NaN or +Inf score is NaN.
type AttendRow struct {
	Out   []float64 // the exact outputs (NaN or ±Inf where a value forces it)
	Bound []float64 // allowed |got − Out[d]|; +Inf where the scores' bound overflows exp
	NaN   bool      // a NaN or +Inf score: every output must be NaN
}

// Attend computes the expectation for every query row of q ([rows][dim]) against n
// keys and values read through key(j, d) and value(j, d), widened exactly, with the
// scores scale·qᵢ·kⱼ summed in float64 in index order (as the kernels settle
// non-finite scores). extraE is added to the doc's E (4u per AttendState.Merge).
//
// With tⱼ the exact scores, Δ the largest of Scores' bounds over the row's finite
// entries and u = 2⁻²⁴, each finite output must meet
//
//	|out − o| ≤ ((e^(2Δ) − 1)·(1 + E) + E)·Σⱼ pⱼ·|vⱼ| + n·2⁻¹⁴⁸·maxⱼ|vⱼ| + 2⁻¹⁴⁹,  E = (2n + ⌈n/256⌉ + 16)·u
//
// A row whose scores are all −Inf is the uniform softmax (the mean of the values), with
// Δ = 0; −Inf scores beside finite ones weigh exactly 0.
func Attend(q []float32, key, value func(j, d int) float64, rows, n, dim int, scale float32, extraE float64) []AttendRow {
	out := make([]AttendRow, rows)
	t, mag := make([]float64, n), make([]float64, n)
	p := make([]float64, n)
	sc := float64(scale)
	e := float64(2*n+(n+255)/256+16)*0x1p-24 + extraE
	for i := range rows {
		out[i] = AttendRow{Out: make([]float64, dim), Bound: make([]float64, dim)}
		row := &out[i]
		maxT, delta, finite := math.Inf(-1), 0.0, 0
		for j := range n {
			var s, a float64
			for d := range dim {
				x := float64(q[i*dim+d]) * key(j, d)
				s += x
				a += math.Abs(x)
			}
			t[j], mag[j] = sc*s, a
			switch {
			case math.IsNaN(t[j]) || math.IsInf(t[j], 1):
				row.NaN = true
			case !math.IsInf(t[j], -1):
				finite++
				maxT = max(maxT, t[j])
				delta = max(delta, math.Abs(sc)*(2*float64(dim)*0x1p-24*mag[j]+float64(dim)*0x1p-149)+0x1p-149)
			}
		}
		if row.NaN {
			for d := range dim {
				row.Out[d], row.Bound[d] = math.NaN(), 0
			}
			continue
		}
		var sum float64
		for j := range n {
			switch {
			case finite == 0:
				p[j] = 1
			case math.IsInf(t[j], -1):
				p[j] = 0
			default:
				p[j] = math.Exp(t[j] - maxT)
			}
			sum += p[j]
		}
		growth := math.Expm1(2 * delta)
		for d := range dim {
			var o, weighted, largest float64
			for j := range n {
				v := value(j, d)
				if p[j] != 0 || math.IsInf(v, 0) || math.IsNaN(v) {
					o += p[j] / sum * v // 0·Inf is NaN, as in the kernels
					weighted += p[j] / sum * math.Abs(v)
				}
				largest = max(largest, math.Abs(v))
			}
			row.Out[d] = o
			if math.IsInf(growth, 1) {
				row.Bound[d] = math.Inf(1)
				continue
			}
			row.Bound[d] = (growth*(1+e)+e)*weighted + float64(n)*0x1p-148*largest + 0x1p-149
		}
	}
	return out
}

// Check reports how got, output d of the row, misses the expectation, or nil. It is
// meant for rows whose outputs the kernel's own composition gives finite; a NaN
// expectation requires NaN.
func (r AttendRow) Check(d int, got float32) error {
	g := float64(got)
	if r.NaN {
		if g == g {
			return fmt.Errorf("got %v, want NaN (a NaN or +Inf score)", got)
		}
		return nil
	}
	o, b := r.Out[d], r.Bound[d]
	if math.IsNaN(o) || math.IsInf(o, 0) {
		if !(g == o || math.IsNaN(o) && g != g) {
			return fmt.Errorf("got %v, want %v", got, o)
		}
		return nil
	}
	if diff := math.Abs(g - o); !(diff <= b) { // a NaN or Inf got fails too
		return fmt.Errorf("got %v, float64 gives %v: error %.4g > bound %.4g (%.3g of it)", got, o, diff, b, diff/b)
	}
	return nil
}
