package kernels

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/kvsimd/kvsimd/internal/longtest"
	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/internal/varianttest"
)

var poolKernels = []int{1, 3, 5, 7, 9, 31}

// poolReference returns the exact average (float64) and the sum of magnitudes of the
// window of output i, and its maximum (NaN if the window holds one).
func poolReference(src []float32, kernel, i int) (avg, abs, mx float64) {
	w := oracle.PoolWindow(src, kernel, i)
	for _, v := range w {
		avg += float64(v)
		abs += math.Abs(float64(v))
	}
	return avg / float64(kernel), abs, oracle.Max(w)
}

func sameFloat(a, b float32) bool { return a == b || a != a && b != b }

// checkPoolVariant runs both poolings of variant v on guarded outputs at offset off and
// compares them with the float64 reference and bit for bit with the generic variant.
func checkPoolVariant(t *testing.T, v string, src []float32, kernel, off int) {
	t.Helper()
	avg, intactAvg := guarded(t, make([]float32, len(src)), off)
	mx, intactMax := guarded(t, make([]float32, len(src)), off)
	avgPool1D.For(v)(avg, src, kernel)
	maxPool1D.For(v)(mx, src, kernel)
	intactAvg()
	intactMax()
	genAvg, genMax := make([]float32, len(src)), make([]float32, len(src))
	avgPool1DGeneric(genAvg, src, kernel)
	maxPool1DGeneric(genMax, src, kernel)
	for i := range src {
		a, abs, m := poolReference(src, kernel, i)
		if !sameFloat(avg[i], genAvg[i]) {
			t.Fatalf("%s n=%d k=%d: avg[%d] = %v, generic %v", v, len(src), kernel, i, avg[i], genAvg[i])
		}
		bound := float64(kernel+7)*0x1p-25*abs/float64(kernel) + 0x1p-149
		// Only windows whose partial sums stay in float32's range are bounded.
		if abs <= math.MaxFloat32 && math.Abs(float64(avg[i])-a) > bound {
			t.Fatalf("%s n=%d k=%d: avg[%d] = %v, float64 %v: error %.3g > %.3g", v, len(src), kernel, i, avg[i], a, math.Abs(float64(avg[i])-a), bound)
		}
		if float64(mx[i]) != m && !(mx[i] != mx[i] && math.IsNaN(m)) {
			t.Fatalf("%s n=%d k=%d: max[%d] = %v, want %v", v, len(src), kernel, i, mx[i], m)
		}
	}
}

func TestPoolLengths(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	varianttest.Each(t, func(v string) {
		for n := 0; n <= 300; n++ {
			src := make([]float32, n)
			for i := range src {
				src[i] = float32(r.NormFloat64())
			}
			if n > 0 && n%7 == 0 {
				src[r.IntN(n)] = src[r.IntN(n)] // ties
			}
			for _, k := range poolKernels {
				checkPoolVariant(t, v, src, k, 1+(n+k)%3)
			}
		}
		src := make([]float32, 32768)
		for i := range src {
			src[i] = float32(r.ExpFloat64())
		}
		for _, k := range []int{5, 7} {
			checkPoolVariant(t, v, src, k, 2)
		}
	})
}

// TestPoolExponentRange holds AvgPool1D to its bound, and both poolings to the
// generic variant's bits, on rows whose elements span float32's exponents (subnormal
// to 2¹⁰⁰, either sign, so that windows cancel) and on rows of equal-magnitude
// neighbours with alternating signs, at lengths past several blocks of the fixed-size
// bodies (NEON: 16 outputs; AVX-512: 128) and the general body's tails.
func TestPoolExponentRange(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	varianttest.Each(t, func(v string) {
		for _, n := range []int{4096 + 6, 1000 + 13, 16*7 + 6 + 3} {
			for _, k := range []int{3, 5, 7, 9} {
				src := make([]float32, n)
				for i := range src {
					src[i] = float32(math.Ldexp(r.Float64()+0.5, r.IntN(250)-149))
					if r.IntN(2) == 0 {
						src[i] = -src[i]
					}
				}
				checkPoolVariant(t, v, src, k, n%3)
				for i := range src {
					src[i] = float32(math.Ldexp(1+r.Float64()/1024, r.IntN(8))) * float32(1-2*(i%2))
				}
				checkPoolVariant(t, v, src, k, 1+n%3)
			}
		}
	})
}

// TestPoolNaNBesideInf puts a NaN and an Inf in one window, where a reference built on
// math.Max would let +Inf win.
func TestPoolNaNBesideInf(t *testing.T) {
	varianttest.Each(t, func(v string) {
		for _, src := range [][]float32{{nan, inf}, {inf, nan}, {negInf, nan, inf}, {1, inf, 2, nan, 3}} {
			for _, k := range []int{1, 3, 5, 23} {
				checkPoolVariant(t, v, src, k, 1)
			}
		}
	})
}

func TestPoolSpecial(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	specials := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), -float32(math.NaN()),
		float32(math.Copysign(0, -1)), math.MaxFloat32, -math.MaxFloat32, 1e-45}
	// 1..80 for the general kernels, then lengths where AVX-512's fixed-size bodies run
	// (at least 80 interior outputs) with and without a tail.
	var lengths []int
	for n := 1; n <= 80; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 150, 151, 214, 300)
	varianttest.Each(t, func(v string) {
		for _, n := range lengths {
			for _, s := range specials {
				src := make([]float32, n)
				for i := range src {
					src[i] = float32(r.NormFloat64())
				}
				src[r.IntN(n)] = s
				src[r.IntN(n)] = s
				for _, k := range poolKernels {
					checkPoolVariant(t, v, src, k, 1)
				}
			}
		}
	})
}

func TestPoolPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"avg even":   func() { AvgPool1D(make([]float32, 8), make([]float32, 8), 4) },
		"max even":   func() { MaxPool1D(make([]float32, 8), make([]float32, 8), 2) },
		"avg zero":   func() { AvgPool1D(make([]float32, 8), make([]float32, 8), 0) },
		"max -1":     func() { MaxPool1D(make([]float32, 8), make([]float32, 8), -1) },
		"avg length": func() { AvgPool1D(make([]float32, 7), make([]float32, 8), 5) },
		"max length": func() { MaxPool1D(make([]float32, 9), make([]float32, 8), 5) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}

func TestPoolAllocs(t *testing.T) {
	src, dst := make([]float32, 1027), make([]float32, 1027)
	src[5] = float32(math.NaN()) // the screened path too
	varianttest.Each(t, func(v string) {
		if a := testing.AllocsPerRun(10, func() { AvgPool1D(dst, src, 5); MaxPool1D(dst, src, 7) }); a != 0 {
			t.Fatalf("%s: pooling allocates %v times", v, a)
		}
	})
}

// The oracle vectors of ../testdata/snapkv-oracle (PyTorch), copied from the shared
// set; see its README for the fields.
var snapOracleFiles = []string{"tiny_h1_l48.json", "small_h2_l128.json", "medium_h2_l512_d16.json"}

type snapOracleTensor struct {
	Shape []int     `json:"shape"`
	Data  []float32 `json:"data"`
}

type snapOraclePool struct {
	Pooled       snapOracleTensor `json:"pooled"`
	PooledPrefix snapOracleTensor `json:"pooled_prefix"`
}

type snapOracle struct {
	Params struct {
		Batch     int `json:"batch"`
		Heads     int `json:"heads"`
		PromptLen int `json:"prompt_len"`
		HeadDim   int `json:"head_dim"`
		Window    int `json:"window"`
		Kernel    int `json:"kernel"`
	} `json:"params"`
	Scale  float64 `json:"scale"`
	Inputs struct {
		QWindow snapOracleTensor `json:"q_window"`
		K       snapOracleTensor `json:"k"`
	} `json:"inputs"`
	AttnWindow snapOracleTensor                  `json:"attn_window"`
	Votes      snapOracleTensor                  `json:"votes"`
	Seed       struct{ Avg, Max snapOraclePool } `json:"seed"`
	Original   struct{ Avg, Max snapOraclePool } `json:"original"`
}

func readSnapOracle(t *testing.T, file string) *snapOracle {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "snapkv-oracle", file))
	if err != nil {
		t.Fatal(err)
	}
	var c snapOracle
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &c
}

// TestPoolOracle pools the oracle's votes over all L (the seed rule) and over the
// prefix L−W (the paper's rule) and compares with PyTorch's pooled tensors: avg within
// our bound plus that of PyTorch's own sum, in index order, max exactly for the seed
// rule. The paper's code recomputes the prefix votes, which then differ from `votes`
// in the last bit at a few positions (small_h2_l128 has six, by 2e-8), so its pooled
// prefix is checked within the README's 2e-7 tolerance for float tensors.
func TestPoolOracle(t *testing.T) {
	for _, file := range snapOracleFiles {
		c := readSnapOracle(t, file)
		p := c.Params
		L, W := p.PromptLen, p.Window
		varianttest.Each(t, func(v string) {
			for row := 0; row < p.Batch*p.Heads; row++ {
				votes := c.Votes.Data[row*L:][:L]
				for _, tc := range []struct {
					name     string
					src      []float32
					avg, max []float32
					tol      float64
				}{
					{"seed", votes, c.Seed.Avg.Pooled.Data[row*L:][:L], c.Seed.Max.Pooled.Data[row*L:][:L], 0},
					{"original", votes[:L-W], c.Original.Avg.PooledPrefix.Data[row*(L-W):][:L-W], c.Original.Max.PooledPrefix.Data[row*(L-W):][:L-W], 2e-7},
				} {
					avg, mx := make([]float32, len(tc.src)), make([]float32, len(tc.src))
					avgPool1D.For(v)(avg, tc.src, p.Kernel)
					maxPool1D.For(v)(mx, tc.src, p.Kernel)
					for i := range avg {
						_, abs, _ := poolReference(tc.src, p.Kernel, i)
						bound := float64(p.Kernel+7)*0x1p-25*abs/float64(p.Kernel) + float64(p.Kernel+2)*0x1p-24*abs/float64(p.Kernel) + tc.tol
						if math.Abs(float64(avg[i]-tc.avg[i])) > bound {
							t.Fatalf("%s %s %s row %d: avg[%d] = %v, PyTorch %v", v, file, tc.name, row, i, avg[i], tc.avg[i])
						}
						if math.Abs(float64(mx[i]-tc.max[i])) > tc.tol {
							t.Fatalf("%s %s %s row %d: max[%d] = %v, PyTorch %v", v, file, tc.name, row, i, mx[i], tc.max[i])
						}
					}
				}
			}
		})
	}
}

// TestPoolFixedBodies covers the fixed-size bodies for kernel 3, 5 and 7, which start
// at the first 64-byte aligned source vector and take whole blocks of outputs (128 on
// AVX-512, reading three vectors past their last window; 64 on AVX2): every source
// alignment, lengths around the block boundaries, and a NaN (or ±Inf) at every
// position of a row, where VMAXPS would drop it unless the body's screen catches it.
// Other kernels (9) run the general body. Short mode (emulators, or no KVSIMD_LONG=1)
// puts the special value at every third position, and uses three source alignments
// (0, 7, 15).
func TestPoolFixedBodies(t *testing.T) {
	alignments, step := 16, 1
	if longtest.Short() {
		alignments, step = 3, 3
	}
	r := rand.New(rand.NewPCG(15, 16))
	buf := alignedFloats(2048 + 16)
	for i := range buf {
		buf[i] = float32(r.NormFloat64())
	}
	var lengths []int
	for b := 1; b <= 3; b++ {
		for d := -3; d <= 3; d++ {
			lengths = append(lengths, b*128+48+16+d)
		}
	}
	lengths = append(lengths, 66, 70, 71, 72, 80, 100, 135, 136, 177, 190, 191, 250, 400, 640, 1000, 2048)
	varianttest.Each(t, func(v string) {
		for _, k := range []int{3, 5, 7, 9} {
			for _, n := range lengths {
				for a := range alignments {
					a = a * 15 / max(alignments-1, 1)
					checkPoolVariant(t, v, buf[a:a+n], k, 1+a%3)
				}
			}
			for a := range alignments {
				a = a * 15 / max(alignments-1, 1)
				src := alignedFloats(a + 300)[a:]
				copy(src, buf)
				for p := a % step; p < len(src); p += step {
					for _, s := range []float32{nan, inf, negInf} {
						keep := src[p]
						src[p] = s
						checkPoolVariant(t, v, src, k, 1)
						src[p] = keep
					}
				}
			}
		}
	})
}

// alignedFloats returns n floats starting on a 64-byte boundary, so that s[a:] starts a
// floats past one.
func alignedFloats(n int) []float32 {
	s := make([]float32, n+16)
	skip := int(-(uintptr(unsafe.Pointer(&s[0])) / 4) & 15)
	return s[skip : skip+n : skip+n]
}
