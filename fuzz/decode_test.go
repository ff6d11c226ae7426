package fuzz

import (
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/snapkv"
)

// FuzzDecodeBudget drives a cache with a fuzzed decode budget (CacheConfig.Decode)
// through a fuzzed prompt and token sequence, misuse included, keys and queries from
// fuzzed bit patterns (NaN, ±Inf and subnormals among them), and requires that it
// never panics, that every error names the package, that a token-major twin answers
// alike (errors, rows, positions, Stats), and after every Attend that returned nil:
// the positions ascend, each kept row is the row appended at its position, bit for
// bit, Offset counts every token, a head that held Budget + Interval rows or more now
// holds Budget, no head holds Budget + Interval or more, and DecodeRecent kept the
// sinks and the most recent rows exactly. Each op byte is one step: 0 Append then
// Attend, 1 Append alone, 2 Attend alone, 3 Append then Attend twice.
func FuzzDecodeBudget(f *testing.F) {
	f.Add(uint8(24), uint8(2), uint8(8), uint8(0), uint8(4), uint8(2), uint8(16), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, []byte{0x00, 0x3c, 0x00, 0xbc, 0x01, 0x7c})
	f.Add(uint8(6), uint8(1), uint8(4), uint8(1), uint8(2), uint8(1), uint8(9), []byte{0, 0, 1, 0, 2, 3, 0, 0}, []byte{0xff, 0x7f, 0x00, 0x7c})
	f.Add(uint8(10), uint8(3), uint8(5), uint8(2|8), uint8(1), uint8(4), uint8(20), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, []byte{0x01, 0x00, 0x00, 0xfc})
	f.Add(uint8(3), uint8(1), uint8(2), uint8(16), uint8(6), uint8(1), uint8(5), []byte{0, 0, 0, 3, 3}, []byte{})
	f.Add(uint8(14), uint8(2), uint8(3), uint8(3|16), uint8(2), uint8(2), uint8(18), []byte{0, 0, 0, 1, 0, 0, 3, 0, 0, 0}, []byte{0x00, 0x3c, 0x00, 0x7c, 0x00, 0xfc, 0x01, 0x00})
	f.Fuzz(func(t *testing.T, budget, interval, window, enums, sinks, group, prompt uint8, ops, data []byte) {
		const hk, d = 2, 32
		cfg := snapkv.CacheConfig{
			Select: snapkv.Config{Budget: int(prompt) + 1, Window: int(window), Kernel: 3, Pool: snapkv.Pool(enums >> 3 & 1),
				Rule: snapkv.Rule(enums >> 4 & 1), Group: snapkv.Group(enums >> 5 & 3), Workers: 2},
			QHeads: hk * int(group), KVHeads: hk, Dim: d,
			Decode: snapkv.DecodeBudget{Budget: int(budget), Interval: int(interval), Rule: snapkv.DecodeRule(enums & 7)},
		}
		if cfg.Select.Rule == snapkv.RuleProtected {
			cfg.Select.Sinks = int(sinks)
		}
		c, err := snapkv.NewCache(cfg)
		if err != nil {
			checkErr(t, err)
			return
		}
		if group > 4 || prompt > 40 || len(ops) > 64 {
			return // valid but too big to fuzz quickly
		}
		twinCfg := cfg
		twinCfg.Layout = snapkv.TokenMajor
		twin, err := snapkv.NewCache(twinCfg)
		if err != nil {
			t.Fatalf("token-major twin: %v", err)
		}
		hq, n := cfg.QHeads, int(prompt)+len(ops)
		halves := uint16s(data)
		k, v := make([]fp16.Float16, n*hk*d), make([]fp16.Float16, n*hk*d) // [n][hk][d]
		for i := range k {
			k[i] = fp16.Float16(0x3800 + i%61)
			if len(halves) > 0 {
				k[i] = fp16.Float16(halves[i%len(halves)])
			}
			v[i] = fp16.Float16(i) // each row's values name it
		}
		q := make([]float32, n*hq*d)
		for i := range q {
			q[i] = float32(i%13) - 6
			if len(halves) > 0 {
				q[i] = fp16.Float16(halves[(i+1)%len(halves)]).Float32()
			}
		}
		p := int(prompt)
		tokenMajor := snapkv.Chunk{K: k[:p*hk*d], V: v[:p*hk*d], Q: q[:p*hq*d], Last: true}
		headMajor := snapkv.Chunk{K: rowsOfTokens(k[:p*hk*d], p, hk, d), V: rowsOfTokens(v[:p*hk*d], p, hk, d),
			Q: rowsOfTokens(q[:p*hq*d], p, hq, d), Last: true}
		e1, e2 := c.Prefill(headMajor), twin.Prefill(tokenMajor)
		if !equalErr(e1, e2) {
			t.Fatalf("prefill: head-major %v, token-major %v", e1, e2)
		}
		if e1 != nil {
			checkErr(t, e1)
			return
		}
		out := make([]float32, hq*d)
		at := p
		for step, op := range ops {
			tok := k[at*hk*d : (at+1)*hk*d]
			val := v[at*hk*d : (at+1)*hk*d]
			query := q[at*hq*d : (at+1)*hq*d]
			attends := map[byte]int{0: 1, 1: 0, 2: 1, 3: 2}[op&3]
			if op&3 != 2 {
				e1, e2 = c.Append(tok, val), twin.Append(tok, val)
				if !equalErr(e1, e2) {
					t.Fatalf("step %d Append: %v, twin %v", step, e1, e2)
				}
				if e1 != nil {
					checkErr(t, e1)
					return
				}
				at++
			}
			for range attends {
				before := make([][]int32, hk)
				for h := range hk {
					_, _, pos := c.Head(h)
					before[h] = slices.Clone(pos)
				}
				e1, e2 = c.Attend(out, query), twin.Attend(out, query)
				if !equalErr(e1, e2) {
					t.Fatalf("step %d Attend: %v, twin %v", step, e1, e2)
				}
				if e1 != nil {
					checkErr(t, e1)
					continue
				}
				b := cfg.Decode
				for h := range hk {
					kk, vv, pos := c.Head(h)
					tk, tv, tpos := twin.Head(h)
					if !slices.Equal(kk, tk) || !slices.Equal(vv, tv) || !slices.Equal(pos, tpos) {
						t.Fatalf("step %d head %d: the token-major twin holds other rows", step, h)
					}
					if !slices.IsSorted(pos) || len(slices.Compact(slices.Clone(pos))) != len(pos) {
						t.Fatalf("step %d head %d: positions not ascending: %v", step, h, pos)
					}
					for i, ps := range pos {
						if !slices.Equal(vv[i*d:(i+1)*d], v[(int(ps)*hk+h)*d:(int(ps)*hk+h+1)*d]) ||
							!slices.Equal(kk[i*d:(i+1)*d], k[(int(ps)*hk+h)*d:(int(ps)*hk+h+1)*d]) {
							t.Fatalf("step %d head %d: row %d is not position %d's", step, h, i, ps)
						}
					}
					if b.Budget == 0 {
						continue
					}
					held := len(before[h])
					switch {
					case held >= b.Budget+b.Interval && len(pos) != b.Budget:
						t.Fatalf("step %d head %d: %d rows compressed to %d, want Budget %d", step, h, held, len(pos), b.Budget)
					case held < b.Budget+b.Interval && !slices.Equal(pos, before[h]):
						t.Fatalf("step %d head %d: %d rows changed below Budget + Interval", step, h, held)
					}
					if b.Rule == snapkv.DecodeRecent && held >= b.Budget+b.Interval {
						s := min(cfg.Select.Sinks, b.Budget)
						want := append(slices.Clone(before[h][:s]), before[h][held-(b.Budget-s):]...)
						if !slices.Equal(pos, want) {
							t.Fatalf("step %d head %d: recent kept %v of %v, want %v", step, h, pos, before[h], want)
						}
					}
				}
			}
			if c.Offset() != at || twin.Offset() != at {
				t.Fatalf("step %d: Offset %d and %d, want %d", step, c.Offset(), twin.Offset(), at)
			}
		}
		s1, s2 := c.Stats(), twin.Stats()
		if s1.Compressions != s2.Compressions || s1.PeakDecodeRows != s2.PeakDecodeRows {
			t.Fatalf("Stats %+v, twin %+v", s1, s2)
		}
	})
}

// rowsOfTokens turns x [n][heads][d] into [heads][n][d].
func rowsOfTokens[T any](x []T, n, heads, d int) []T {
	out := make([]T, 0, len(x))
	for h := range heads {
		for t := range n {
			out = append(out, x[(t*heads+h)*d:(t*heads+h+1)*d]...)
		}
	}
	return out
}

// equalErr reports whether a and b are both nil or both errors with the same text.
func equalErr(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
}
