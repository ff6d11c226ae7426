package main

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/snapkv"
)

// The prefill's causal attention, as issue 40 sets it: one KV head's G 4 query heads,
// dim 128, over a prompt of n positions (m = n), or a later chunk of m = 512 queries
// over n = 4,096 keys. "fused" is kernels.AttendCausal (and its twins); "composition"
// is the loop an engine wrote before it, per position: Scores for the G query rows
// over keys 0…i, then Softmax and WeightedSumRows per row, which reads V once per
// query row. FLOPs are 4·dim per (query row, visible key): the multiply-adds of Q·Kᵀ
// and P·V over the causal triangle only.
const (
	prefillGroup = 4
	prefillDim   = 128
)

var prefillSizes = []int{1024, 4096, 16384}

func init() {
	for _, format := range cacheFormats {
		for _, n := range prefillSizes {
			sections = append(sections, section{prefillName(format, "fused", n), "pair", prefillPairs(n, n),
				func(b *testing.B) { benchPrefill(b, format, "fused", n, n) }})
		}
	}
	for _, n := range prefillSizes[:2] { // the composition at 16,384 takes seconds an op
		sections = append(sections, section{prefillName("fp16", "composition", n), "pair", prefillPairs(n, n),
			func(b *testing.B) { benchPrefill(b, "fp16", "composition", n, n) }})
	}
	const m, n = 512, 4096
	for _, method := range []string{"fused", "composition"} {
		sections = append(sections, section{fmt.Sprintf("PrefillChunk fp16 %s G=%d dim=%d m=%d n=%d", method, prefillGroup, prefillDim, m, n),
			"pair", prefillPairs(m, n), func(b *testing.B) { benchPrefill(b, "fp16", method, m, n) }})
	}
	for _, layout := range []string{"head-major", "token-major"} {
		sections = append(sections, section{prefillLayerName(layout), "pair", prefillLayerQHeads * prefillPairs(prefillLayerLen, prefillLayerLen),
			func(b *testing.B) { benchPrefillLayer(b, layout == "token-major") }})
	}
	// The report shows the fused attention's time as a share of the composition's.
	shares = append(shares, func(whole string) (string, bool) {
		if !strings.HasPrefix(whole, "Prefill") || !strings.Contains(whole, " composition ") {
			return "", false
		}
		return strings.Replace(whole, " composition ", " fused ", 1), true
	})
}

func prefillName(format, method string, n int) string {
	return fmt.Sprintf("PrefillAttention %s %s G=%d dim=%d n=%d", format, method, prefillGroup, prefillDim, n)
}

// prefillPairs is the (query position, visible key) pairs of m queries over n keys.
func prefillPairs(m, n int) int { return m * (2*(n-m) + m + 1) / 2 }

// prefillFlops is the FLOPs a call counts: 4·dim per query row and visible key.
func prefillFlops(rows, m, n, dim int) float64 {
	return 4 * float64(dim) * float64(rows) * float64(prefillPairs(m, n))
}

// benchPrefill times one KV head's causal attention of m queries over n keys by
// method, counting K and V's bytes and the triangle's FLOPs.
func benchPrefill(b *testing.B, format, method string, m, n int) {
	const g, d = prefillGroup, prefillDim
	k, v := rowsIn(format, n, d, 41), rowsIn(format, n, d, 42)
	q := randomFloats(g*m*d, 43)
	out := make([]float32, len(q))
	scale := float32(1 / math.Sqrt(d))
	b.SetBytes(2 * int64(n) * int64(k.rowBytes))
	b.ReportAllocs()
	if method == "fused" {
		for b.Loop() {
			prefillFused(format, out, q, k, v, g, m, n, d, scale)
		}
	} else {
		s := make([]float32, g*n)
		qi := make([]float32, g*d)
		for b.Loop() {
			prefillComposition(out, q, qi, s, k, v, g, m, n, d, scale)
		}
	}
	reportFlops(b, prefillFlops(g, m, n, d))
}

func prefillFused(format string, out, q []float32, k, v formatRows, g, m, n, d int, scale float32) {
	switch format {
	case "fp16":
		kernels.AttendCausal(out, q, k.f16, v.f16, g, m, n, d, scale)
	case "bf16":
		kernels.AttendCausalBF16(out, q, k.bf16, v.bf16, g, m, n, d, scale)
	case "q8_0":
		kernels.AttendCausalQ8(out, q, k.q8, v.q8, g, m, n, d, scale)
	case "f32":
		kernels.AttendCausalF32(out, q, k.f32, v.f32, g, m, n, d, scale)
	}
}

// prefillComposition is the per-position loop over fp16 rows: the G query rows of
// position i gathered into qi, scored over keys 0…p, then each row's softmax and
// weighted sum of values 0…p.
func prefillComposition(out, q, qi, s []float32, k, v formatRows, g, m, n, d int, scale float32) {
	for i := range m {
		p := n - m + i + 1 // visible keys
		for r := range g {
			copy(qi[r*d:(r+1)*d], q[(r*m+i)*d:][:d])
		}
		kernels.Scores(s[:g*p], qi, k.f16[:p*d], g, p, d, scale)
		for r := range g {
			w := s[r*p : (r+1)*p]
			kernels.Softmax(w)
			kernels.WeightedSumRows(out[(r*m+i)*d:][:d], w, v.f16[:p*d])
		}
	}
}

// A whole layer through snapkv's PrefillAttend, as an engine prefills: Hq 32 query
// heads over Hkv 8 KV heads, dim 128, one chunk of L 2,048 positions into a new
// ModeFaithful cache, Workers 1. The chunk is not the last, so no selection runs: the
// time is the attention's, and the rows' copy into the cache's working area.
const (
	prefillLayerQHeads  = 32
	prefillLayerKVHeads = 8
	prefillLayerLen     = 2048
)

func prefillLayerName(layout string) string {
	return fmt.Sprintf("PrefillLayer fp16 %s Hq=%d Hkv=%d dim=%d n=%d", layout, prefillLayerQHeads, prefillLayerKVHeads, prefillDim, prefillLayerLen)
}

func benchPrefillLayer(b *testing.B, tokenMajor bool) {
	const n, d = prefillLayerLen, prefillDim
	layout := snapkv.HeadMajor
	if tokenMajor {
		layout = snapkv.TokenMajor
	}
	cfg := snapkv.CacheConfig{
		Select: snapkv.Config{Budget: 512, Window: 32, Kernel: 5, Pool: snapkv.PoolAvg, Workers: 1},
		Mode:   snapkv.ModeFaithful, QHeads: prefillLayerQHeads, KVHeads: prefillLayerKVHeads, Dim: d, Layout: layout,
	}
	k, v := rowsIn("fp16", prefillLayerKVHeads*n, d, 44), rowsIn("fp16", prefillLayerKVHeads*n, d, 45)
	ch := snapkv.Chunk{K: k.f16, V: v.f16, Q: randomFloats(prefillLayerQHeads*n*d, 46), Rows: n}
	out := make([]float32, len(ch.Q))
	b.SetBytes(2 * int64(len(k.f16)) * 2)
	for b.Loop() {
		c, err := snapkv.NewCacheOf[fp16.Float16](cfg)
		if err == nil {
			err = c.PrefillAttend(out, ch)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	reportFlops(b, prefillFlops(prefillLayerQHeads, n, n, d))
}

// prefillChart is the prefill attention's % of the FMA peak against the prompt's
// length, a line per format (fused) and one for fp16's composition, on the active
// variant's figures: the report's chart for issue 40's targets. nil without figures.
func (r *Report) prefillChart() []byte {
	var lines []series
	index := map[string]int{}
	for _, f := range r.Figures {
		if f.Kernel != "PrefillAttention" || f.Peer || f.Variant != kernels.Active() || f.PctOfLimit == 0 {
			continue
		}
		fields := strings.Fields(f.Name) // PrefillAttention format method …
		label := fields[1] + " " + fields[2]
		i, ok := index[label]
		if !ok {
			i = len(lines)
			index[label] = i
			lines = append(lines, series{name: label})
		}
		lines[i].x = append(lines[i].x, float64(f.N))
		lines[i].y = append(lines[i].y, f.PctOfLimit)
	}
	if len(lines) == 0 {
		return nil
	}
	return lineChart(lineSpec{
		title:  fmt.Sprintf("Prefill attention (G %d, dim %d, m = n) on %s: %% of the same run's FMA peak", prefillGroup, prefillDim, kernels.Active()),
		x:      axis{label: "n (prompt positions)", log: true},
		y:      axis{label: "% of the FMA peak", min: 0, max: 100},
		series: lines,
	})
}
