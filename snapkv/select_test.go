package snapkv_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// span returns the positions lo..hi-1.
func span(lo, hi int) []int32 {
	s := make([]int32, 0, hi-lo)
	for i := lo; i < hi; i++ {
		s = append(s, int32(i))
	}
	return s
}

// flatAttn is [heads][w][n] attention of equal votes for every position a row sees.
func flatAttn(heads, w, n int) []float32 {
	a := make([]float32, heads*w*n)
	for h := range heads {
		for r := range w {
			for j := range n - w + r + 1 {
				a[(h*w+r)*n+j] = 1
			}
		}
	}
	return a
}

func TestPinnedCases(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name string
		cfg  snapkv.Config
		n    int
		want []int32
	}{
		{"L < C keeps all", snapkv.Config{Budget: 50, Window: 8, Kernel: 5}, 40, span(0, 40)},
		{"L == C keeps all", snapkv.Config{Budget: 40, Window: 8, Kernel: 5}, 40, span(0, 40)},
		{"L == C keeps all, protected", snapkv.Config{Budget: 40, Window: 8, Kernel: 5, Rule: snapkv.RuleProtected, Sinks: 50}, 40, span(0, 40)},
		{"ratio 1 keeps all", snapkv.Config{KeepRatio: 1, Window: 8, Kernel: 5}, 40, span(0, 40)},
		{"empty prompt", snapkv.Config{Budget: 4, Window: 8, Kernel: 5}, 0, []int32{}},
		{"window clamped to L, then W ≥ C", snapkv.Config{Budget: 20, Window: 100, Kernel: 5}, 40, span(20, 40)},
		{"W == C: the window", snapkv.Config{Budget: 8, Window: 8, Kernel: 3}, 40, span(32, 40)},
		{"W > C: the most recent C", snapkv.Config{Budget: 5, Window: 8, Kernel: 3}, 40, span(35, 40)},
		{"sinks + W == C", snapkv.Config{Budget: 12, Window: 8, Kernel: 3, Rule: snapkv.RuleProtected, Sinks: 4}, 40,
			append(span(0, 4), span(32, 40)...)},
		{"sinks + W > C: sinks, then the most recent", snapkv.Config{Budget: 10, Window: 8, Kernel: 3, Rule: snapkv.RuleProtected, Sinks: 4}, 40,
			append(span(0, 4), span(34, 40)...)},
		{"sinks ≥ C: the first C", snapkv.Config{Budget: 3, Window: 8, Kernel: 3, Rule: snapkv.RuleProtected, Sinks: 4}, 40, span(0, 3)},
	} {
		hk, g, d := 2, 2, 16
		w := min(tc.cfg.Window, tc.n)
		k := make([]fp16.Float16, hk*tc.n*d)
		q := make([]float32, hk*g*w*d)
		for i := range q {
			q[i] = float32(r.NormFloat64())
		}
		got, err := snapkv.Select(tc.cfg, snapkv.Input{Q: q, K: k, QHeads: hk * g, KVHeads: hk, Len: tc.n, Dim: d})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(got) != hk {
			t.Fatalf("%s: %d heads, want %d", tc.name, len(got), hk)
		}
		for h := range got {
			if !slices.Equal(got[h], tc.want) {
				t.Errorf("%s: head %d kept %v, want %v", tc.name, h, got[h], tc.want)
			}
		}
	}
}

func TestKeepRatio(t *testing.T) {
	for _, tc := range []struct {
		ratio float64
		n     int
		want  int
	}{
		{0.1, 30, 3}, // 0.1·30 is 3.0000000000000004 in float64
		{0.25, 10, 3},
		{0.5, 64, 32},
		{1e-9, 64, 1}, // at least one row
		{0.7, 10, 7},
		{0.999, 100, 100},
	} {
		cfg := snapkv.Config{KeepRatio: tc.ratio, Window: 1, Kernel: 1}
		got, err := snapkv.Select(cfg, snapkv.Input{Attn: flatAttn(1, 1, tc.n), QHeads: 1, KVHeads: 1, Len: tc.n})
		if err != nil {
			t.Fatal(err)
		}
		if len(got[0]) != tc.want {
			t.Errorf("KeepRatio %v of %d: kept %d rows, want %d", tc.ratio, tc.n, len(got[0]), tc.want)
		}
	}
}

// TestTiesAndNaN: equal votes go to the lower position, NaN votes rank below all.
func TestTiesAndNaN(t *testing.T) {
	n, w := 64, 4
	attn := flatAttn(1, w, n)
	for r := range w {
		attn[r*n+3] = float32(math.NaN())
		attn[r*n+7] = float32(math.NaN())
	}
	for _, rule := range []snapkv.Rule{snapkv.RulePaper, snapkv.RuleProtected} {
		cfg := snapkv.Config{Budget: 20, Window: w, Kernel: 1, Rule: rule}
		got, err := snapkv.Select(cfg, snapkv.Input{Attn: attn, QHeads: 1, KVHeads: 1, Len: n})
		if err != nil {
			t.Fatal(err)
		}
		want := append(append([]int32{0, 1, 2}, span(4, 7)...), span(8, 18)...)
		want = append(want, span(n-w, n)...)
		if !slices.Equal(got[0], want) {
			t.Errorf("rule %d: kept %v, want %v", rule, got[0], want)
		}
	}
}

// tooLong is a Len beyond the int32 positions (on 32-bit platforms, a negative Len).
var tooLong = func() int {
	n := int64(math.MaxInt32) + 1
	return int(n)
}()

func TestBadInput(t *testing.T) {
	good := snapkv.Config{Budget: 8, Window: 4, Kernel: 3}
	n, d := 32, 8
	k := make([]fp16.Float16, 2*n*d)
	q := make([]float32, 4*4*d)
	in := snapkv.Input{Q: q, K: k, QHeads: 4, KVHeads: 2, Len: n, Dim: d}
	for _, tc := range []struct {
		cfg  func(*snapkv.Config)
		in   func(*snapkv.Input)
		want string
	}{
		{cfg: func(c *snapkv.Config) { c.Budget = -1 }, want: "Budget -1"},
		{cfg: func(c *snapkv.Config) { c.Budget = 0 }, want: "Budget 0"},
		{cfg: func(c *snapkv.Config) { c.KeepRatio = 0.5 }, want: "KeepRatio 0.5 are both set"},
		{cfg: func(c *snapkv.Config) { c.Budget, c.KeepRatio = 0, math.NaN() }, want: "KeepRatio NaN"},
		{cfg: func(c *snapkv.Config) { c.Budget, c.KeepRatio = 0, 1.5 }, want: "KeepRatio 1.5"},
		{cfg: func(c *snapkv.Config) { c.Budget, c.KeepRatio = 0, -0.5 }, want: "KeepRatio -0.5"},
		{cfg: func(c *snapkv.Config) { c.Budget, c.KeepRatio = 0, math.Inf(1) }, want: "KeepRatio +Inf"},
		{cfg: func(c *snapkv.Config) { c.Window = 0 }, want: "Window 0"},
		{cfg: func(c *snapkv.Config) { c.Window = -3 }, want: "Window -3"},
		{cfg: func(c *snapkv.Config) { c.Kernel = 4 }, want: "Kernel 4"},
		{cfg: func(c *snapkv.Config) { c.Kernel = 0 }, want: "Kernel 0"},
		{cfg: func(c *snapkv.Config) { c.Kernel = -1 }, want: "Kernel -1"},
		{cfg: func(c *snapkv.Config) { c.Pool = 7 }, want: "Pool 7"},
		{cfg: func(c *snapkv.Config) { c.Rule = -1 }, want: "Rule -1"},
		{cfg: func(c *snapkv.Config) { c.Group = 3 }, want: "Group 3"},
		{cfg: func(c *snapkv.Config) { c.Alloc = 2 }, want: "Alloc 2"},
		{cfg: func(c *snapkv.Config) { c.Sinks = 2 }, want: "Sinks 2 with RulePaper"},
		{cfg: func(c *snapkv.Config) { c.Sinks, c.Rule = -2, snapkv.RuleProtected }, want: "Sinks -2"},
		{cfg: func(c *snapkv.Config) { c.Alloc, c.Floor = snapkv.AllocAdaptive, 1.2 }, want: "Floor 1.2"},
		{cfg: func(c *snapkv.Config) { c.Alloc, c.Floor = snapkv.AllocAdaptive, math.NaN() }, want: "Floor NaN"},
		{cfg: func(c *snapkv.Config) { c.Floor = 0.2 }, want: "Floor 0.2 needs Alloc"},
		{cfg: func(c *snapkv.Config) { c.Workers = -1 }, want: "Workers -1"},
		{in: func(i *snapkv.Input) { i.KVHeads = 0 }, want: "KVHeads 0"},
		{in: func(i *snapkv.Input) { i.KVHeads, i.Len, i.K, i.Q = math.MaxInt, 0, nil, nil }, want: fmt.Sprintf("KVHeads %d, want 1 to 65536", math.MaxInt)},
		{in: func(i *snapkv.Input) { i.KVHeads, i.QHeads, i.Len, i.K, i.Q = 1<<16+1, 1<<16+1, 0, nil, nil }, want: "KVHeads 65537"},
		{in: func(i *snapkv.Input) { i.QHeads = 1<<16 + 2 }, want: "QHeads 65538"},
		{in: func(i *snapkv.Input) { i.QHeads, i.Q, i.Attn = math.MaxInt/2+1, nil, make([]float32, 4*4*n) }, want: fmt.Sprintf("QHeads %d", math.MaxInt/2+1)},
		{in: func(i *snapkv.Input) { i.Layout = 2 }, want: "Layout 2 is not HeadMajor or TokenMajor"},
		{in: func(i *snapkv.Input) { i.Layout = -1 }, want: "Layout -1"},
		{in: func(i *snapkv.Input) { i.Layout, i.Len = snapkv.TokenMajor, 31 }, want: "len(Input.K) = 512, want KVHeads·Len·Dim = 2·31·8 = 496"},
		{in: func(i *snapkv.Input) { i.QHeads = 3 }, want: "QHeads 3 is not a multiple of KVHeads 2"},
		{in: func(i *snapkv.Input) { i.QHeads = -4 }, want: "QHeads -4"},
		{in: func(i *snapkv.Input) { i.QHeads = 0 }, want: "QHeads 0"},
		{in: func(i *snapkv.Input) { i.Len = -1 }, want: "Len -1"},
		{in: func(i *snapkv.Input) { i.Len = tooLong }, want: fmt.Sprintf("Len %d", tooLong)},
		{in: func(i *snapkv.Input) { i.Dim = 0 }, want: "Dim 0"},
		{in: func(i *snapkv.Input) { i.Dim = -8 }, want: "Dim -8"},
		{in: func(i *snapkv.Input) { i.Len = 33 }, want: "len(Input.K) = 512, want KVHeads·Len·Dim = 2·33·8 = 528"},
		{in: func(i *snapkv.Input) { i.K = k[1:] }, want: "len(Input.K) = 511"},
		{in: func(i *snapkv.Input) { i.K = nil }, want: "len(Input.K) = 0"},
		{in: func(i *snapkv.Input) { i.Q = q[:len(q)-1] }, want: "len(Input.Q) = 127, want QHeads·W·Dim = 4·4·8 = 128"},
		{in: func(i *snapkv.Input) { i.Attn = make([]float32, 4*4*n) }, want: "Input.Q and Input.Attn are both set"},
		{in: func(i *snapkv.Input) { i.Q, i.Attn = nil, make([]float32, 4*4*n-1) }, want: "len(Input.Attn) = 511"},
		{in: func(i *snapkv.Input) { i.Q, i.K, i.Attn = nil, nil, make([]float32, 4*4*n+4) }, want: "len(Input.Attn) = 516"},
		{in: func(i *snapkv.Input) { i.Len, i.Dim = math.MaxInt32, math.MaxInt/2 },
			want: fmt.Sprintf("KVHeads·Len·Dim = 2·2147483647·%d overflows int", math.MaxInt/2)},
		{in: func(i *snapkv.Input) { i.Dim = math.MaxInt / 4 }, want: "overflows"},
	} {
		cfg, in := good, in
		if tc.cfg != nil {
			tc.cfg(&cfg)
		}
		if tc.in != nil {
			tc.in(&in)
		}
		_, err := snapkv.Select(cfg, in)
		if err == nil {
			t.Errorf("want an error containing %q, got none", tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "snapkv: ") {
			t.Errorf("error %q, want it to contain %q", err, tc.want)
		}
	}
	if _, err := snapkv.Select(good, in); err != nil {
		t.Errorf("the good input: %v", err)
	}
}

// steadyAllocs is the fewest allocations per run of f over three rounds of
// testing.AllocsPerRun: an allocation the code makes on every call shows in every
// round, while one the runtime makes now and then (a GC emptying kernels.TopK's
// sync.Pool on a busy machine) does not fail the test.
func steadyAllocs(runs int, f func()) float64 {
	least := testing.AllocsPerRun(runs, f)
	for range 2 {
		least = min(least, testing.AllocsPerRun(runs, f))
	}
	return least
}

// TestAllocs: once warm, Select and SelectBatch allocate nothing, with or without
// helper goroutines, for every rule, source, allocation and cache format.
// testing.AllocsPerRun runs at GOMAXPROCS 1, where a started helper always finds the
// goroutine the last one left on the P's free list; with more Ps that takes a few
// hundred calls to settle (see the package doc).
func TestAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop scratch space at random")
	}
	t.Run("fp16", allocs[fp16.Float16])
	t.Run("bf16", allocs[bf16.BFloat16])
	t.Run("q8_0", allocs[q8.Block])
	t.Run("f32", allocs[float32])
}

func allocs[E snapkv.Element](t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	p := newProblem(r, 8, 2, 300, 16, 64)
	short := newProblem(r, 8, 2, 150, 16, 64)
	k, kShort := keysAs[E](t, p.k), keysAs[E](t, short.k)
	inQ := snapkv.InputOf[E]{Q: p.q, K: k, QHeads: 8, KVHeads: 2, Len: p.n, Dim: p.d}
	inKeys := snapkv.InputOf[E]{K: k, KVHeads: 2, Len: p.n, Dim: p.d}
	inShort := snapkv.InputOf[E]{Q: short.q, K: kShort, QHeads: 8, KVHeads: 2, Len: short.n, Dim: short.d}
	for _, workers := range []int{1, 4} {
		for _, cfg := range []snapkv.Config{
			{Budget: 60, Window: 16, Kernel: 5, Workers: workers},
			{Budget: 60, Window: 16, Kernel: 7, Pool: snapkv.PoolMax, Rule: snapkv.RuleProtected, Sinks: 4, Group: snapkv.GroupMax, Workers: workers},
			{KeepRatio: 0.2, Window: 16, Kernel: 5, Alloc: snapkv.AllocAdaptive, Floor: 0.2, Workers: workers},
		} {
			s, err := snapkv.NewSelectorOf[E](cfg)
			if err != nil {
				t.Fatal(err)
			}
			var dst [][]int32
			var batch [][][]int32
			ins := []snapkv.InputOf[E]{inQ, inShort, inKeys}
			run := func() {
				for _, in := range ins {
					if dst, err = s.Select(dst, in); err != nil {
						t.Fatal(err)
					}
				}
				if batch, err = s.SelectBatch(batch, ins); err != nil {
					t.Fatal(err)
				}
			}
			run() // grow the workspace and the result rows
			run() // warm kernels.TopK's scratch pool on every goroutine
			if a := steadyAllocs(10, run); a != 0 {
				t.Errorf("%+v: %v allocs per run", cfg, a)
			}
		}
	}
}

// TestSelectBatch: sequences of different lengths (and head counts) selected together
// equal each selected alone, with several selectors running at once (run with -race).
func TestSelectBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var ins []snapkv.Input
	for i, n := range []int{700, 40, 333, 1000, 129} {
		hk := 1 + i%3
		p := newProblem(r, 2*hk, hk, n, 16, 32)
		in := snapkv.Input{Q: p.q, K: p.k, QHeads: 2 * hk, KVHeads: hk, Len: n, Dim: 32}
		if i == 3 {
			in.Q, in.QHeads = nil, 0 // the key proxy
		}
		ins = append(ins, in)
	}
	cfgs := []snapkv.Config{
		{Budget: 64, Window: 16, Kernel: 5, Workers: 3},
		{KeepRatio: 0.25, Window: 16, Kernel: 3, Rule: snapkv.RuleProtected, Sinks: 2, Workers: 2},
		{Budget: 80, Window: 16, Kernel: 5, Alloc: snapkv.AllocAdaptive, Floor: 0.3, Workers: 4},
	}
	var wg sync.WaitGroup
	for _, cfg := range cfgs {
		alone := cfg
		alone.Workers = 1
		var want [][][]int32
		for _, in := range ins {
			sel, err := snapkv.Select(alone, in)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, sel)
		}
		for range 2 {
			wg.Go(func() {
				s, err := snapkv.NewSelector(cfg)
				if err != nil {
					t.Error(err)
					return
				}
				var got [][][]int32
				for range 3 {
					if got, err = s.SelectBatch(got, ins); err != nil {
						t.Error(err)
						return
					}
					for i := range ins {
						for h := range want[i] {
							if !slices.Equal(got[i][h], want[i][h]) {
								t.Errorf("%+v: sequence %d head %d: batch kept %v, alone %v", cfg, i, h, got[i][h], want[i][h])
							}
						}
					}
				}
			})
		}
	}
	wg.Wait()
	bad := append(slices.Clone(ins), snapkv.Input{KVHeads: 1, QHeads: 1, Len: 5, Dim: 4})
	if _, err := snapkv.Select(cfgs[0], bad[len(bad)-1]); err == nil {
		t.Fatal("want an error")
	}
	s, _ := snapkv.NewSelector(cfgs[0])
	if _, err := s.SelectBatch(nil, bad); err == nil || !strings.Contains(err.Error(), "ins[5]: len(Input.K) = 0") {
		t.Errorf("SelectBatch error %v, want one naming ins[5]", err)
	}
}

// TestAdaptiveShares: a head with a few strong votes keeps its floor and those, a head
// with even votes takes the rest of the shared budget.
func TestAdaptiveShares(t *testing.T) {
	n, w := 64, 4
	attn := make([]float32, 2*w*n)
	for j := 10; j < 15; j++ {
		attn[j] = 100 // head 0, window row 0
	}
	for j := range n {
		attn[w*n+j] = 1 // head 1, window row 0
	}
	cfg := snapkv.Config{Budget: 20, Window: w, Kernel: 1, Alloc: snapkv.AllocAdaptive, Floor: 0.25}
	got, err := snapkv.Select(cfg, snapkv.Input{Attn: attn, QHeads: 2, KVHeads: 2, Len: n})
	if err != nil {
		t.Fatal(err)
	}
	if want := append(span(10, 15), span(n-w, n)...); !slices.Equal(got[0], want) {
		t.Errorf("head 0 kept %v, want %v", got[0], want)
	}
	if want := append(span(0, 27), span(n-w, n)...); !slices.Equal(got[1], want) {
		t.Errorf("head 1 kept %v, want %v", got[1], want)
	}
	cfg.Floor = 1 // every head its own budget: uniform
	got, _ = snapkv.Select(cfg, snapkv.Input{Attn: attn, QHeads: 2, KVHeads: 2, Len: n})
	if len(got[0]) != 20 || len(got[1]) != 20 {
		t.Errorf("Floor 1 kept %d and %d rows, want 20 each", len(got[0]), len(got[1]))
	}
}

// TestKeyProxyIgnoresQHeads: the key proxy reads no queries, so QHeads is neither
// checked nor used there.
func TestKeyProxyIgnoresQHeads(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	p := newProblem(r, 2, 2, 100, 8, 16)
	cfg := snapkv.Config{Budget: 30, Window: 8, Kernel: 5}
	in := snapkv.Input{K: p.k, KVHeads: 2, Len: p.n, Dim: p.d}
	want, err := snapkv.Select(cfg, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, qHeads := range []int{3, -1, 1 << 20, math.MaxInt} {
		in.QHeads = qHeads
		got, err := snapkv.Select(cfg, in)
		if err != nil {
			t.Fatalf("QHeads %d: %v", qHeads, err)
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("QHeads %d: kept %v, with QHeads 0 %v", qHeads, got, want)
		}
	}
}

// TestWorkersBounded: a call runs on at most as many goroutines as it has heads to
// score, whatever Workers says: Workers math.MaxInt and 10,000 on two heads start one
// helper, and it has ended soon after the call returns.
//
// runtime.NumGoroutine also counts the runtime's finalizer and cleanup goroutines
// while they run user code, so the garbage collector is off for the test (CI once
// counted 4 during the calls, 2 before; so did 4 in 40 fresh -race runs, none in 60
// with it off). Before each call the test also lets the previous call's helper finish
// (settleGoroutines): it tells the caller it is done before it returns, so it may
// still be counted when the next call starts its own.
func TestWorkersBounded(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	p := newProblem(r, 4, 2, 300, 16, 16)
	in := snapkv.Input{Q: p.q, K: p.k, QHeads: 4, KVHeads: 2, Len: p.n, Dim: p.d}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for _, workers := range []int{math.MaxInt, 10000} {
		before := runtime.NumGoroutine()
		most := before
		stop, sampled := make(chan struct{}), make(chan struct{})
		go func() { // sampling while the calls run
			defer close(sampled)
			for {
				select {
				case <-stop:
					return
				default:
					most = max(most, runtime.NumGoroutine()-1) // not this one
					runtime.Gosched()
				}
			}
		}()
		for range 20 {
			settleGoroutines(before + 1) // and the sampler
			if _, err := snapkv.Select(snapkv.Config{Budget: 60, Window: 16, Kernel: 5, Workers: workers}, in); err != nil {
				t.Fatal(err)
			}
		}
		close(stop)
		<-sampled
		if most > before+1 {
			t.Errorf("Workers %d on 2 heads: %d goroutines during the calls, %d before", workers, most, before)
		}
		// Fewer after than before is fine: a goroutine of an earlier test may have been
		// on its way out when before was counted (CI once saw 2 after 3).
		if after := settleGoroutines(before); after > before {
			t.Errorf("Workers %d: %d goroutines after the calls, %d before", workers, after, before)
		}
	}
}

// TestAdaptiveFloorOne: AllocAdaptive with Floor 1 keeps what AllocUniform keeps, also
// when pooled votes hold +Inf and math.MaxFloat32 (which the shared ranking cannot
// tell apart, but each head's own top does).
func TestAdaptiveFloorOne(t *testing.T) {
	inf, big := float32(math.Inf(1)), float32(math.MaxFloat32)
	// One head, one window row, C 2: the uniform budget keeps the +Inf vote at 5 and
	// the window row 7, not the lower position 2 of math.MaxFloat32.
	attn := []float32{0, 0, big, 0, 0, inf, 0, 1}
	uniform := snapkv.Config{Budget: 2, Window: 1, Kernel: 1}
	adaptive := uniform
	adaptive.Alloc, adaptive.Floor = snapkv.AllocAdaptive, 1
	for _, cfg := range []snapkv.Config{uniform, adaptive} {
		got, err := snapkv.Select(cfg, snapkv.Input{Attn: attn, QHeads: 1, KVHeads: 1, Len: 8})
		if err != nil {
			t.Fatal(err)
		}
		if want := []int32{5, 7}; !slices.Equal(got[0], want) {
			t.Errorf("%+v: kept %v, want %v", cfg, got[0], want)
		}
	}

	// Random layers whose votes hold both, under both rules and poolings.
	r := rand.New(rand.NewPCG(17, 18))
	for range 50 {
		hk, g, w := 1+r.IntN(4), 1+r.IntN(3), 1+r.IntN(4)
		n := w + 10 + r.IntN(60)
		attn := make([]float32, hk*g*w*n)
		for i := range attn {
			switch r.IntN(10) {
			case 0:
				attn[i] = inf
			case 1:
				attn[i] = big
			default:
				attn[i] = float32(r.IntN(4)) // ties too
			}
		}
		in := snapkv.Input{Attn: attn, QHeads: hk * g, KVHeads: hk, Len: n}
		uniform := snapkv.Config{Budget: w + 2 + r.IntN(n-w-2), Window: w, Kernel: 1 + 2*r.IntN(3), Pool: snapkv.Pool(r.IntN(2)), Group: snapkv.Group(r.IntN(3))}
		if r.IntN(2) == 0 {
			uniform.Rule, uniform.Sinks = snapkv.RuleProtected, r.IntN(3)
		}
		adaptive := uniform
		adaptive.Alloc, adaptive.Floor = snapkv.AllocAdaptive, 1
		want, err := snapkv.Select(uniform, in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := snapkv.Select(adaptive, in)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("Hkv %d G %d W %d L %d %+v: Floor 1 kept %v, AllocUniform %v", hk, g, w, n, uniform, got, want)
		}
	}
}

// TestSelectOneCallAllocs: in steady state the one-call Select allocates its result
// (the positions in one array, and the rows' headers) and nothing else: not the
// workspace of 64·L floats per goroutine (512 KiB here), nor the pooled votes, in
// every cache format (each has a pool of its own). Until sync.Pool (Select's,
// kernels.TopK's) and the runtime's free goroutines have settled on every P, a call
// that finds its P's share empty allocates more; the test takes the quietest of a few
// rounds.
func TestSelectOneCallAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop what it holds at random")
	}
	t.Run("fp16", func(t *testing.T) { oneCallAllocs[fp16.Float16](t, 3) })
	// The other formats differ only in their pool: one configuration each, with a
	// helper, keeps the test quick under emulation.
	t.Run("bf16", func(t *testing.T) { oneCallAllocs[bf16.BFloat16](t, 1) })
	t.Run("q8_0", func(t *testing.T) { oneCallAllocs[q8.Block](t, 1) })
	t.Run("f32", func(t *testing.T) { oneCallAllocs[float32](t, 1) })
}

// oneCallAllocs checks the first configs of the configurations below.
func oneCallAllocs[E snapkv.Element](t *testing.T, configs int) {
	r := rand.New(rand.NewPCG(19, 20))
	const hq, hk, n, w, d = 8, 2, 2048, 32, 64
	p := newProblem(r, hq, hk, n, w, d)
	in := snapkv.InputOf[E]{Q: p.q, K: keysAs[E](t, p.k), QHeads: hq, KVHeads: hk, Len: n, Dim: d}
	for _, cfg := range []snapkv.Config{
		{Budget: 256, Window: w, Kernel: 5, Workers: 2},
		{Budget: 256, Window: w, Kernel: 5, Workers: 1},
		{Budget: 256, Window: w, Kernel: 5, Rule: snapkv.RuleProtected, Sinks: 4, Alloc: snapkv.AllocAdaptive, Floor: 0.2, Workers: 2},
	}[:configs] {
		result := uint64(hk*cfg.Budget*4 + hk*24) // positions and row headers
		quietest := uint64(math.MaxUint64)
		for range 5 {
			const calls = 20
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range calls {
				if _, err := snapkv.Select(cfg, in); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			quietest = min(quietest, (after.TotalAlloc-before.TotalAlloc)/calls)
		}
		if quietest > result+1024 {
			t.Errorf("%+v: %d bytes per call, want the result's %d (+ size classes)", cfg, quietest, result)
		}
	}
}
