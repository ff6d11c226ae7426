package snapkv

import (
	"math"

	"github.com/kvsimd/kvsimd/kernels"
)

// adaptive is the scratch of AllocAdaptive's shared selection.
type adaptive struct {
	votes []float32 // [KVHeads][n] every head's selectable pooled votes, concatenated
	picks []int32   // the shared top, indices into votes
	own   []int32   // one head's floor picks
}

// allocate selects the rows of every KV head of p under AllocAdaptive. Each head h has n
// selectable positions [sinks, L−W) and free = C − sinks − W rows of its own budget; it
// keeps its protected rows, its own top ⌊Floor·free⌋ (taken from its pooled votes as
// they are, as AllocUniform takes its top), and whatever it wins of the shared top
// KVHeads·free over the selectable votes of all heads, its own top included (marked
// +Inf, above every vote, so it is always won; a +Inf vote counts as math.MaxFloat32
// there). Ties go to the lower head, then the lower position. Floor 1 is thus the
// uniform budget exactly.
func (p *plan[E]) allocate(a *adaptive, cfg *Config) {
	heads, sinks := p.in.KVHeads, cfg.Sinks // 0 under RulePaper
	lo, hi := sinks, p.in.Len-p.w
	n := hi - lo
	free := p.c - sinks - p.w
	floor := int(cfg.Floor * float64(free))
	a.votes = grow(a.votes, heads*n)
	inf := float32(math.Inf(1))
	for h := range heads {
		pooled, votes := p.pooled[h*p.cols+lo:h*p.cols+hi], a.votes[h*n:(h+1)*n]
		for i, v := range pooled {
			if v == inf {
				v = math.MaxFloat32
			}
			votes[i] = v
		}
		if floor > 0 {
			a.own = kernels.TopK(a.own[:0], pooled, floor)
			for _, i := range a.own {
				votes[i] = inf
			}
		}
	}
	a.picks = kernels.TopK(a.picks[:0], a.votes, heads*free)
	at := 0
	for h := range heads {
		end := at
		for end < len(a.picks) && int(a.picks[end]) < (h+1)*n {
			end++
		}
		picks, base := a.picks[at:end], int32(h*n)
		p.dst[h] = p.assemble(p.dst[h], sinks, sinks+len(picks)+p.w, func(free []int32, _, _ int) {
			for i := range free {
				free[i] = picks[i] - base
			}
		})
		at = end
	}
}
