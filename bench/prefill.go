package main

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/kernels"
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
