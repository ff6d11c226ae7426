package snapkv_test

import (
	"fmt"
	"github.com/kvsimd/kvsimd/internal/oracle"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/longtest"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// inContext returns k in the first len(k) elements of a buffer with room for more
// positions after them, filled with NaN, as an engine's context-sized buffer.
func inContext[E snapkv.Element](k []E, more int) []E {
	buf := make([]E, len(k)+more)
	copy(buf, k)
	for i := len(k); i < len(buf); i++ {
		buf[i] = nanOf[E]()
	}
	return buf[:len(k)]
}

// layouts returns in (head-major) and the same data token-major, its K a prefix of a
// context-sized buffer.
func layouts[E snapkv.Element](in snapkv.InputOf[E], w int) (head, token snapkv.InputOf[E]) {
	token = in
	token.Layout = snapkv.TokenMajor
	if in.K != nil {
		wd := perRow[E](in.Dim)
		token.K = inContext(oracle.TokenMajor(in.K, in.KVHeads, in.Len, wd), 7*in.KVHeads*wd)
	}
	if in.Q != nil {
		token.Q = oracle.TokenMajor(in.Q, in.QHeads, w, in.Dim)
	}
	return in, token
}

// TestLayoutsAgree: the same data in both layouts gives the same pooled votes, bit for
// bit, and the same rows, on random GQA shapes, for every score source, rule, pooling,
// group reduction, allocation and kernel variant.
func TestLayoutsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	shapes := []struct{ hk, g, n, w, d int }{
		{1, 1, 90, 8, 16}, {2, 2, 300, 16, 32}, {3, 4, 257, 16, 24}, {2, 8, 500, 32, 64}, {4, 3, 129, 8, 8}, {2, 1, 40, 64, 16},
	}
	if testing.Short() {
		shapes = shapes[:3]
	}
	for _, sh := range shapes {
		hq := sh.hk * sh.g
		p := newProblem(r, hq, sh.hk, sh.n, sh.w, sh.d)
		attn := make([]float32, hq*p.w*p.n)
		for i := range attn {
			attn[i] = r.Float32()
		}
		for _, src := range []source{byQueries, byAttn, byKeys} {
			in := snapkv.Input{K: p.k, QHeads: hq, KVHeads: sh.hk, Len: sh.n, Dim: sh.d}
			switch src {
			case byQueries:
				in.Q = p.q
			case byAttn:
				in.Attn = attn
			case byKeys:
				in.QHeads = 0
			}
			head, token := layouts(in, p.w)
			for _, cfg := range []snapkv.Config{
				{Budget: sh.n / 4, Window: sh.w, Kernel: 5},
				{Budget: sh.n / 3, Window: sh.w, Kernel: 7, Rule: snapkv.RuleProtected, Sinks: 4, Pool: snapkv.PoolMax, Group: snapkv.GroupMax, Workers: 3},
				{KeepRatio: 0.3, Window: sh.w, Kernel: 3, Group: snapkv.GroupSum, Alloc: snapkv.AllocAdaptive, Floor: 0.2, Workers: 2},
				{Budget: sh.n / 4, Window: sh.w, Kernel: 5, Rule: snapkv.RuleProtected, Sinks: 2, Alloc: snapkv.AllocAdaptive, Floor: 0.5},
				{Budget: sh.n, Window: sh.w, Kernel: 5}, // keeps every row
			} {
				varianttest.Each(t, func(variant string) {
					what := fmt.Sprintf("%s %v Hq=%d Hkv=%d L=%d %+v", variant, src, hq, sh.hk, sh.n, cfg)
					sHead, sToken := mustSelector(t, cfg), mustSelector(t, cfg)
					want, err := sHead.Select(nil, head)
					if err != nil {
						t.Fatal(err)
					}
					got, err := sToken.Select(nil, token)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					if !slices.EqualFunc(got, want, slices.Equal) {
						t.Fatalf("%s: token-major kept %v, head-major %v", what, got, want)
					}
					a, b := snapkv.PooledVotes(sToken), snapkv.PooledVotes(sHead)
					if !slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }) {
						t.Fatalf("%s: the pooled votes differ between the layouts", what)
					}
					c := max(cfg.Budget, int(math.Ceil(cfg.KeepRatio*float64(sh.n))))
					if scored := c < sh.n && c > p.w+cfg.Sinks; scored != (len(a) > 0) {
						t.Fatalf("%s: %d pooled votes", what, len(a))
					}
				})
			}
		}
	}
}

func mustSelector(t *testing.T, cfg snapkv.Config) *snapkv.Selector {
	t.Helper()
	s, err := snapkv.NewSelector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTokenMajorNoCopy: a reused Selector scoring a token-major layer, on every variant
// and with helpers, allocates nothing, in every cache format: K (512 KiB here in fp16)
// is read where it lies, never copied, and the gathered window queries live in the
// workspace. bf16 and q8_0, whose only difference from fp16 is the kernel that reads
// K, take a shorter prompt, so that the test stays quick under emulation; without
// KVSIMD_LONG=1 (internal/longtest) every prompt is a quarter as long.
func TestTokenMajorNoCopy(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop scratch space at random")
	}
	t.Run("fp16", func(t *testing.T) { tokenMajorNoCopy[fp16.Float16](t, 2048) })
	t.Run("bf16", func(t *testing.T) { tokenMajorNoCopy[bf16.BFloat16](t, 512) })
	t.Run("q8_0", func(t *testing.T) { tokenMajorNoCopy[q8.Block](t, 512) })
	t.Run("f32", func(t *testing.T) { tokenMajorNoCopy[float32](t, 512) })
}

func tokenMajorNoCopy[E snapkv.Element](t *testing.T, n int) {
	if !longtest.Enabled() {
		n /= 4 // an allocation shows at any length; the generic variant scores slowly
	}
	r := rand.New(rand.NewPCG(73, 74))
	const hq, hk, w, d = 8, 2, 32, 64
	p := newProblem(r, hq, hk, n, w, d)
	k := keysAs[E](t, p.k)
	_, byQ := layouts(snapkv.InputOf[E]{Q: p.q, K: k, QHeads: hq, KVHeads: hk, Len: n, Dim: d}, w)
	_, byK := layouts(snapkv.InputOf[E]{K: k, KVHeads: hk, Len: n, Dim: d}, w)
	varianttest.Each(t, func(variant string) {
		for _, workers := range []int{1, 2} {
			s, err := snapkv.NewSelectorOf[E](snapkv.Config{Budget: 256, Window: w, Kernel: 5, Workers: workers})
			if err != nil {
				t.Fatal(err)
			}
			var dst [][]int32
			run := func() {
				for _, in := range []snapkv.InputOf[E]{byQ, byK} {
					var err error
					if dst, err = s.Select(dst, in); err != nil {
						t.Fatal(err)
					}
				}
			}
			run()
			run()
			if a := steadyAllocs(5, run); a != 0 {
				t.Errorf("%s, %d workers: %v allocations per token-major call pair", variant, workers, a)
			}
		}
	})
}
