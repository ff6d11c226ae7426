package snapkv

import "github.com/kvsimd/kvsimd/kernels"

// keepTop writes KV head h's kept rows under a uniform budget into p.dst[h]: the
// protected rows and the top of the pooled votes between them (cfg.Sinks is 0 under
// RulePaper).
func (p *plan[E]) keepTop(cfg *Config, h int) {
	pooled := p.pooled[h*p.cols : (h+1)*p.cols]
	p.dst[h] = p.assemble(p.dst[h], cfg.Sinks, p.c, func(free []int32, lo, hi int) {
		kernels.TopK(free[:0], pooled[lo:hi], len(free))
	})
}

// assemble fills row with c rows: the first sinks positions, then the len(free) = c −
// sinks − W rows that pick writes into free (positions relative to lo, ascending,
// chosen from [lo, hi) = [sinks, L−W)), then the W window rows.
func (p *plan[E]) assemble(row []int32, sinks, c int, pick func(free []int32, lo, hi int)) []int32 {
	n, w := p.in.Len, p.w
	row = grow(row, c)
	for i := range sinks {
		row[i] = int32(i)
	}
	free := row[sinks : c-w]
	pick(free, sinks, n-w)
	for i := range free {
		free[i] += int32(sinks)
	}
	for i := range w {
		row[c-w+i] = int32(n - w + i)
	}
	return row
}
