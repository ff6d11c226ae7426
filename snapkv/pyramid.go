package snapkv

import (
	"fmt"
	"math"
)

// PyramidBudgets returns a budget for each of layers layers whose sum is exactly
// perLayer·layers (PyramidKV, Cai et al., arXiv:2406.02069: lower layers attend
// broadly and keep more rows, upper layers concentrate and keep fewer). The budgets
// follow an arithmetic sequence from most rows in layer 0 to fewest in the last:
//
//	last  := perLayer / beta
//	first := 2·perLayer − last
//	b[l]  = first − l·(first − last)/(layers − 1)
//
// so their mean is perLayer. Each real b[l] is rounded down and the rows the rounding
// left over go one each to the lowest layers, so the result never increases with l,
// differs from b[l] by less than 1 and sums exactly to perLayer·layers. beta = 1 gives
// every layer perLayer; PyramidKV uses beta = 20. One layer gets perLayer.
//
// It returns an error if perLayer < 1, layers < 1, perLayer·layers overflows int, beta
// is NaN, infinite or below 1, or perLayer/beta < 1 (the last layer would keep no rows).
// The budgets count every kept row, sinks and window included, like [Config.Budget].
func PyramidBudgets(perLayer, layers int, beta float64) ([]int, error) {
	switch {
	case perLayer < 1:
		return nil, fmt.Errorf("snapkv: PyramidBudgets perLayer %d, want ≥ 1", perLayer)
	case layers < 1:
		return nil, fmt.Errorf("snapkv: PyramidBudgets layers %d, want ≥ 1", layers)
	case perLayer > math.MaxInt/layers:
		return nil, fmt.Errorf("snapkv: PyramidBudgets perLayer·layers = %d·%d overflows int", perLayer, layers)
	case !(beta >= 1) || math.IsInf(beta, 1): // NaN fails too
		return nil, fmt.Errorf("snapkv: PyramidBudgets beta %v, want a finite number ≥ 1", beta)
	case float64(perLayer)/beta < 1:
		return nil, fmt.Errorf("snapkv: PyramidBudgets beta %v leaves the last layer perLayer/beta = %v < 1 rows", beta, float64(perLayer)/beta)
	}
	b := make([]int, layers)
	if layers == 1 {
		b[0] = perLayer
		return b, nil
	}
	last := float64(perLayer) / beta
	first := 2*float64(perLayer) - last
	step := (first - last) / float64(layers-1)
	left := perLayer * layers
	for l := range b {
		// Never above perLayer·2 nor below 1, whatever the float rounding.
		b[l] = min(max(int(math.Floor(first-float64(l)*step)), 1), 2*perLayer)
		left -= b[l]
	}
	// left is in [0, layers] unless rounding pushed a floor one past an integer; spread
	// it (or take it back) one row per layer, from the top of the pyramid.
	for l := 0; left > 0; l = (l + 1) % layers {
		b[l]++
		left--
	}
	for l := layers - 1; left < 0; l = (l - 1 + layers) % layers {
		if b[l] > 1 {
			b[l]--
			left++
		}
	}
	return b, nil
}
