package oracle

import (
	"cmp"
	"fmt"
)

// CheckTopK reports how got misses being kernels.TopK(x, k), or nil, in O(len(x)) and
// without sorting: got must hold min(max(k, 0), len(x)) ascending indices, and every
// index left out must rank below the lowest-ranked one kept. The ranking is the doc
// comment's stable sort with cmp.Compare: larger first, NaN last, −0 equal to +0, and
// among equals the lower index first.
func CheckTopK(x []float32, k int, got []int32) error {
	want := min(max(k, 0), len(x))
	if len(got) != want {
		return fmt.Errorf("%d indices, want %d", len(got), want)
	}
	if want == 0 {
		return nil
	}
	// below reports whether index i ranks below index j.
	below := func(i, j int32) bool {
		c := cmp.Compare(x[i], x[j])
		return c < 0 || c == 0 && i > j
	}
	worst := got[0]
	for n, i := range got {
		if i < 0 || int(i) >= len(x) || n > 0 && i <= got[n-1] {
			return fmt.Errorf("index %d at %d: not ascending within [0, %d)", i, n, len(x))
		}
		if below(i, worst) {
			worst = i
		}
	}
	n := 0
	for i := range int32(len(x)) {
		if n < len(got) && got[n] == i {
			n++
			continue
		}
		if !below(i, worst) {
			return fmt.Errorf("index %d (%v) left out ranks above kept index %d (%v)", i, x[i], worst, x[worst])
		}
	}
	return nil
}
