package main

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/kvsimd/kvsimd/aligned"
	"github.com/kvsimd/kvsimd/kernels"
)

// The decode step's attention over one layer, as issue 31 sets it: Hkv 8 KV heads of G
// 4 query heads each, dim 128, n rows per KV head. "fused" is kernels.Attend (and its
// twins) once per KV head, or kernels.AttendHeads once for a token-major layer; "loop"
// is the README's former loop, Scores for the head's G query heads then Softmax and
// WeightedSumRows per query head, which reads V G times.
const (
	decodeKVHeads = 8
	decodeGroup   = 4
	decodeDim     = 128
)

var decodeSizes = []int{2048, 16384, 65536}

func init() {
	for _, format := range cacheFormats {
		for _, layout := range []string{"head-major", "token-major"} {
			methods := []string{"loop", "fused"}
			if layout == "token-major" && format != "fp16" {
				methods = methods[1:] // the loop's share is shown for fp16 alone
			}
			for _, n := range decodeSizes {
				for _, method := range methods {
					name := decodeName(format, layout, method, n)
					sections = append(sections, section{name, "row", decodeKVHeads * n,
						func(b *testing.B) { benchDecodeAttention(b, decodeLayerOf(format, layout == "token-major", n), method) }})
					footprints[name] = decodeBytes(format, n)
				}
			}
		}
	}
	// The report shows the fused attention's time as a share of the loop's.
	shares = append(shares, func(whole string) (string, bool) {
		if !strings.HasPrefix(whole, "DecodeAttention ") || !strings.Contains(whole, " loop ") {
			return "", false
		}
		return strings.Replace(whole, " loop ", " fused ", 1), true
	})
}

func decodeName(format, layout, method string, n int) string {
	return fmt.Sprintf("DecodeAttention %s %s %s Hkv=%d G=%d dim=%d n=%d", format, layout, method, decodeKVHeads, decodeGroup, decodeDim, n)
}

// decodeLayer is one layer's K and V in a format and layout: head-major [Hkv][n][dim]
// or token-major [n][Hkv][dim] (values; q8_0 counts blocks of 32).
type decodeLayer struct {
	format     string
	tokenMajor bool
	n          int
	k, v       formatRows
}

var (
	decodeMu   sync.Mutex
	decodeData = map[[2]any]formatRows{}
)

// decodeLayerOf returns the layer of n rows per KV head in format and layout. The
// rows are made once per format and size (a few seconds at n = 65,536) and shared by
// both layouts, which read the same bytes in another order.
func decodeLayerOf(format string, tokenMajor bool, n int) *decodeLayer {
	decodeMu.Lock()
	defer decodeMu.Unlock()
	rows := func(seed uint64) formatRows {
		key := [2]any{format, 2*n + int(seed)%2}
		r, ok := decodeData[key]
		if !ok {
			r = rowsIn(format, decodeKVHeads*n, decodeDim, seed)
			decodeData[key] = r
		}
		return r
	}
	return &decodeLayer{format, tokenMajor, n, rows(21), rows(22)}
}

// bytes is what one layer's K and V take: what a decode step must read.
func (l *decodeLayer) bytes() int64 { return 2 * int64(decodeKVHeads*l.n) * int64(l.k.rowBytes) }

// decodeBytes is decodeLayer.bytes without making the rows: the footprint the
// report measures a read limit over, before any section runs.
func decodeBytes(format string, n int) int64 {
	return 2 * int64(decodeKVHeads*n) * int64(rowsIn(format, 1, decodeDim, 0).rowBytes) // one row, to ask its size
}

// decodeFlops is one decode step's arithmetic, the roofline's FMA term: per KV head,
// query row and key, 2·dim for the score and 2·dim for the value row.
func decodeFlops(n int) float64 { return float64(decodeKVHeads*decodeGroup*n) * 4 * decodeDim }

// head returns KV head h's offset and the stride between its rows, in values.
func (l *decodeLayer) head(h int) (offset, stride int) {
	if l.tokenMajor {
		return h * decodeDim, decodeKVHeads * decodeDim
	}
	return h * l.n * decodeDim, decodeDim
}

// fused attends every KV head's G query heads: head-major with one AttendStrided call
// per head, token-major with one AttendHeads call for the layer, which walks it in order.
func (l *decodeLayer) fused(out, q []float32) {
	const g, d = decodeGroup, decodeDim
	scale := float32(1 / math.Sqrt(d))
	if l.tokenMajor {
		switch l.format {
		case "fp16":
			kernels.AttendHeads(out, q, l.k.f16, l.v.f16, decodeKVHeads, g, l.n, d, scale)
		case "bf16":
			kernels.AttendHeadsBF16(out, q, l.k.bf16, l.v.bf16, decodeKVHeads, g, l.n, d, scale)
		case "q8_0":
			kernels.AttendHeadsQ8(out, q, l.k.q8, l.v.q8, decodeKVHeads, g, l.n, d, scale)
		case "f32":
			kernels.AttendHeadsF32(out, q, l.k.f32, l.v.f32, decodeKVHeads, g, l.n, d, scale)
		}
		return
	}
	for h := range decodeKVHeads {
		o, s := l.head(h)
		out, q := out[h*g*d:(h+1)*g*d], q[h*g*d:(h+1)*g*d]
		switch l.format {
		case "fp16":
			kernels.AttendStrided(out, q, l.k.f16[o:], l.v.f16[o:], g, l.n, d, s, scale)
		case "bf16":
			kernels.AttendStridedBF16(out, q, l.k.bf16[o:], l.v.bf16[o:], g, l.n, d, s, scale)
		case "q8_0":
			kernels.AttendStridedQ8(out, q, l.k.q8[o/32:], l.v.q8[o/32:], g, l.n, d, s, scale)
		case "f32":
			kernels.AttendStridedF32(out, q, l.k.f32[o:], l.v.f32[o:], g, l.n, d, s, scale)
		}
	}
}

// loop is the composition, with a score block of G rows per KV head.
func (l *decodeLayer) loop(out, q, s []float32) {
	const g, d = decodeGroup, decodeDim
	scale := float32(1 / math.Sqrt(d))
	n := l.n
	for h := range decodeKVHeads {
		o, st := l.head(h)
		q := q[h*g*d : (h+1)*g*d]
		switch l.format {
		case "fp16":
			kernels.ScoresStrided(s, q, l.k.f16[o:], g, n, d, st, scale)
		case "bf16":
			kernels.ScoresStridedBF16(s, q, l.k.bf16[o:], g, n, d, st, scale)
		case "q8_0":
			kernels.ScoresStridedQ8(s, q, l.k.q8[o/32:], g, n, d, st, scale)
		case "f32":
			kernels.ScoresStridedF32(s, q, l.k.f32[o:], g, n, d, st, scale)
		}
		for i := range g {
			p, dst := s[i*n:(i+1)*n], out[(h*g+i)*d:(h*g+i+1)*d]
			kernels.Softmax(p)
			switch l.format {
			case "fp16":
				kernels.WeightedSumRowsStrided(dst, p, l.v.f16[o:], st)
			case "bf16":
				kernels.WeightedSumRowsStridedBF16(dst, p, l.v.bf16[o:], st)
			case "q8_0":
				kernels.WeightedSumRowsStridedQ8(dst, p, l.v.q8[o/32:], st)
			case "f32":
				kernels.WeightedSumRowsStridedF32(dst, p, l.v.f32[o:], st)
			}
		}
	}
}

// benchDecodeAttention times one layer's decode attention by method, counting the bytes
// of K and V, so that MB/s sets it against the read bandwidth.
func benchDecodeAttention(b *testing.B, l *decodeLayer, method string) {
	q := randomFloats(decodeKVHeads*decodeGroup*decodeDim, 23)
	out := aligned.Make[float32](len(q))
	b.SetBytes(l.bytes())
	b.ReportAllocs()
	if method == "fused" {
		for b.Loop() {
			l.fused(out, q)
		}
		reportFlops(b, decodeFlops(l.n))
		return
	}
	s := aligned.Make[float32](decodeGroup * l.n)
	for b.Loop() {
		l.loop(out, q, s)
	}
	reportFlops(b, decodeFlops(l.n))
}
