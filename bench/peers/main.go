// Command peers times the Go libraries one would use instead of kvsimd on the same
// workloads as kvsimd's report, and prints the figures as JSON for it: `go run
// ./bench -peers` runs this in a subprocess. It is a module of its own so that
// kvsimd's go.mod never lists these libraries.
//
// None of the peers has fp16 SIMD, so each row says what the peer actually computes:
// vek32 and gonum's blas32 get fp16 data widened to fp32 beforehand (the widening is
// not timed), x448/float16 converts one element per call. Bytes and flops per op are
// those of kvsimd's workload of the same name, so the rates compare like for like.
package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/viterin/partial"
	"github.com/viterin/vek/vek32"
	"github.com/x448/float16"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// A figure is the part of kvsimd's bench.Figure (report.json) that a peer fills in;
// the report derives the rest.
type figure struct {
	Name       string  `json:"name"`
	Variant    string  `json:"variant"`
	Computes   string  `json:"computes"`
	NsPerOp    stat    `json:"ns_per_op"`
	Unit       string  `json:"unit"`
	PerOp      int     `json:"per_op"`
	BytesPerOp int64   `json:"bytes_per_op"`
	FlopsPerOp float64 `json:"flops_per_op"`
}

type stat struct {
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	All    []float64 `json:"samples"`
}

// A workload is one peer on one of kvsimd's sections.
type workload struct {
	name, peer, computes string
	unit                 string
	perOp                int
	bytes                int64
	flops                float64
	body                 func(b *testing.B)
}

func main() {
	reps := flag.Int("reps", 5, "repetitions per figure")
	benchtime := flag.Duration("benchtime", 30*time.Millisecond, "minimum duration of each repetition")
	only := flag.String("only", "", "run only workloads whose name contains this")
	flag.Parse()
	testing.Init()
	must(flag.Set("test.benchtime", benchtime.String()))

	var todo []workload
	for _, w := range workloads() {
		if strings.Contains(w.name, *only) {
			todo = append(todo, w)
		}
	}
	var out []figure
	for i, w := range todo {
		fmt.Fprintf(os.Stderr, "[peers %d/%d] %s · %s\n", i+1, len(todo), w.name, w.peer)
		var ns []float64
		start := time.Now()
		for i := 0; i < *reps && (i < 2 || time.Since(start) < 8*time.Second); i++ {
			r := testing.Benchmark(w.body)
			ns = append(ns, float64(r.T.Nanoseconds())/float64(r.N))
		}
		out = append(out, figure{Name: w.name, Variant: w.peer, Computes: w.computes, NsPerOp: statOf(ns),
			Unit: w.unit, PerOp: w.perOp, BytesPerOp: w.bytes, FlopsPerOp: w.flops})
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	must(enc.Encode(out))
}

// The sizes of kvsimd's sections that have a peer (bench/dot.go, convert.go,
// softmax.go, topk.go).
var (
	dotSizes     = []int{64, 128, 256, 1024, 4096, 65536}
	convertSizes = []int{64, 1024, 32768, 1 << 20}
	softmaxSizes = []int{4096, 32768, 131072}
	scoresSizes  = []int{4096, 16384, 131072}
	topkBudget   = map[int]int{16384: 512, 131072: 2048}
)

const scoresRows, scoresDim = 32, 128

func workloads() []workload {
	var ws []workload
	for _, n := range dotSizes {
		name := fmt.Sprintf("DotF16 n=%d", n)
		a, b := widened(n, 3), widened(n, 4)
		ha, hb := halves(n, 3), halves(n, 4)
		ws = append(ws,
			workload{name, "vek32", "fp32 dot on data widened from fp16 beforehand", "elem", n, int64(4 * n), float64(2 * n),
				loop(func() { sink += vek32.Dot(a, b) })},
			workload{name, "gonum blas32", "Sdot (pure Go) on data widened from fp16 beforehand", "elem", n, int64(4 * n), float64(2 * n),
				loop(func() { sink += blas32.Dot(vec(a), vec(b)) })},
			workload{name, "x448/float16", "per-element Float32() widening, scalar fp32 dot", "elem", n, int64(4 * n), float64(2 * n),
				loop(func() {
					var s float32
					for i := range ha {
						s += ha[i].Float32() * hb[i].Float32()
					}
					sink += s
				})},
		)
		fa, fb := normals(n, 7), normals(n, 8)
		name = fmt.Sprintf("DotF32 n=%d", n)
		ws = append(ws,
			workload{name, "vek32", "fp32 dot", "elem", n, int64(8 * n), float64(2 * n), loop(func() { sink += vek32.Dot(fa, fb) })},
			workload{name, "gonum blas32", "Sdot (pure Go)", "elem", n, int64(8 * n), float64(2 * n), loop(func() { sink += blas32.Dot(vec(fa), vec(fb)) })},
		)
	}
	for _, keys := range scoresSizes {
		q, k := normals(scoresRows*scoresDim, 9), widened(keys*scoresDim, 10)
		dst := make([]float32, scoresRows*keys)
		ws = append(ws, workload{fmt.Sprintf("Scores rows=%d dim=%d n=%d", scoresRows, scoresDim, keys), "gonum blas32",
			"Sgemm Q·Kᵀ (pure Go) with K widened from fp16 beforehand", "score", scoresRows * keys,
			int64(2 * keys * scoresDim), float64(2 * scoresRows * keys * scoresDim),
			loop(func() {
				blas32.Gemm(blas.NoTrans, blas.Trans, 0.125,
					blas32.General{Rows: scoresRows, Cols: scoresDim, Stride: scoresDim, Data: q},
					blas32.General{Rows: keys, Cols: scoresDim, Stride: scoresDim, Data: k}, 0,
					blas32.General{Rows: scoresRows, Cols: keys, Stride: keys, Data: dst})
			})})
	}
	for _, n := range convertSizes {
		h, f := halves(n, 1), make([]float32, n)
		ws = append(ws, workload{fmt.Sprintf("ToFloat32 n=%d", n), "x448/float16", "per-element Float32()", "elem", n, int64(2 * n), 0,
			loop(func() {
				for i, v := range h {
					f[i] = v.Float32()
				}
			})})
	}
	for _, n := range convertSizes {
		f, h := widened(n, 2), make([]float16.Float16, n)
		ws = append(ws, workload{fmt.Sprintf("FromFloat32 n=%d", n), "x448/float16", "per-element Fromfloat32()", "elem", n, int64(4 * n), 0,
			loop(func() {
				for i, v := range f {
					h[i] = float16.Fromfloat32(v)
				}
			})})
	}
	for _, n := range softmaxSizes {
		x, y := logits(n, 1), logits(n, 2)
		ws = append(ws,
			workload{fmt.Sprintf("Softmax n=%d", n), "vek32", "Max, SubNumber, Exp, Sum, DivNumber in place: five passes", "elem", n, int64(4 * n), 0,
				loop(func() {
					vek32.SubNumber_Inplace(x, vek32.Max(x))
					vek32.Exp_Inplace(x)
					vek32.DivNumber_Inplace(x, vek32.Sum(x))
				})},
			workload{fmt.Sprintf("Max n=%d", n), "vek32", "Max", "elem", n, int64(4 * n), 0, loop(func() { sink += vek32.Max(y) })},
			workload{fmt.Sprintf("Sum n=%d", n), "vek32", "Sum (fp32 accumulation)", "elem", n, int64(4 * n), 0, loop(func() { sink += vek32.Sum(y) })},
			workload{fmt.Sprintf("Add n=%d", n), "vek32", "Add_Inplace", "elem", n, int64(4 * n), 0, loop(func() { vek32.Add_Inplace(x, y) })},
		)
	}
	for _, n := range []int{16384, 131072} {
		k := topkBudget[n]
		for _, d := range []struct {
			name string
			gen  func(r *rand.Rand) float32
		}{
			{"uniform", func(r *rand.Rand) float32 { return r.Float32() }},
			{"skewed", func(r *rand.Rand) float32 { return float32(math.Exp(3 * r.NormFloat64())) }},
		} {
			r := rand.New(rand.NewPCG(uint64(n), 5))
			x := make([]float32, n)
			for i := range x {
				x[i] = d.gen(r)
			}
			idx := make([]int32, n)
			ws = append(ws, workload{fmt.Sprintf("TopK %s k=%d n=%d", d.name, k, n), "viterin/partial",
				"TopKFunc (Floyd–Rivest) over indices by value, then the k indices sorted", "elem", n, int64(4 * n), 0,
				loop(func() {
					for i := range idx {
						idx[i] = int32(i)
					}
					partial.TopKFunc(idx, k, func(p, q int32) int { return cmp.Or(cmp.Compare(x[q], x[p]), cmp.Compare(p, q)) })
					slices.Sort(idx[:k])
				})})
		}
	}
	return ws
}

var sink float32

func loop(op func()) func(b *testing.B) {
	return func(b *testing.B) {
		for b.Loop() {
			op()
		}
	}
}

func vec(x []float32) blas32.Vector { return blas32.Vector{N: len(x), Inc: 1, Data: x} }

func normals(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 2))
	f := make([]float32, n)
	for i := range f {
		f[i] = float32(r.NormFloat64())
	}
	return f
}

// halves are fp16 normals, as kvsimd's benchmarks use; widened is the same data as
// fp32, what a peer without fp16 gets.
func halves(n int, seed uint64) []float16.Float16 {
	f := normals(n, seed)
	h := make([]float16.Float16, n)
	for i, v := range f {
		h[i] = float16.Fromfloat32(v)
	}
	return h
}

func widened(n int, seed uint64) []float32 {
	h := halves(n, seed)
	f := make([]float32, n)
	for i, v := range h {
		f[i] = v.Float32()
	}
	return f
}

func logits(n int, seed uint64) []float32 {
	x := normals(n, seed)
	for i := range x {
		x[i] *= 3
	}
	return x
}

func statOf(x []float64) stat {
	s := slices.Clone(x)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stat{Median: m, Min: s[0], Max: s[len(s)-1], All: x}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
