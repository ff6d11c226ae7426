package snapkv_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/longtest"
	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
	"github.com/x448/float16"
)

// This file holds the tests that run for every cache format: the selection over keys
// that two formats hold exactly is the fp16 selection, bit for bit (the pooled votes
// too), and a cache of each format keeps the fp16 cache's positions with its own rows.
// The keys are the fp16 tests' random keys rounded to values that the other format
// holds exactly, so that the queries still lean towards them.

// perRow is how many elements of E hold a row of dim values: dim/32 q8_0 blocks,
// else dim halves. The tests count it on their own rather than trust the package's.
func perRow[E snapkv.Element](dim int) int {
	if _, ok := any((*E)(nil)).(*q8.Block); ok {
		return dim / 32
	}
	return dim
}

// rowBytes is the bytes of a row of dim values in E: 34 per 32 values for q8_0, two
// per value for fp16 and bf16, four for float32.
func rowBytes[E snapkv.Element](dim int) int64 {
	switch any((*E)(nil)).(type) {
	case *q8.Block:
		return int64(dim/32) * 34
	case *float32:
		return int64(dim) * 4
	}
	return int64(dim) * 2
}

// formatName names E in failures.
func formatName[E snapkv.Element]() string {
	switch any((*E)(nil)).(type) {
	case *bf16.BFloat16:
		return "bf16"
	case *q8.Block:
		return "q8_0"
	case *float32:
		return "f32"
	}
	return "fp16"
}

// roundBF16 clears the low 3 mantissa bits of every half: what is left has at most 8
// significant bits, which a bfloat16 holds exactly (subnormal halves included, as
// bfloat16 has float32's exponent range).
func roundBF16(k []fp16.Float16) {
	for i := range k {
		k[i] &^= 7
	}
}

// roundPow2 rounds every block of 32 values to q·d with d the power of two just above
// amax/127 and q an int8: values that a q8_0 block with that scale, an fp16 half and
// a bfloat16 (at most 7 significant bits) all hold exactly; −0 becomes +0.
func roundPow2(k []fp16.Float16) {
	for b := 0; b < len(k); b += 32 {
		amax := float32(0)
		for _, h := range k[b : b+32] {
			amax = max(amax, float32(math.Abs(float64(h.Float32()))))
		}
		if amax == 0 {
			continue
		}
		d := math.Exp2(math.Ceil(math.Log2(float64(amax) / 127)))
		for i, h := range k[b : b+32] {
			k[b+i] = float16.Fromfloat32(float32(math.Round(float64(h.Float32())/d)*d + 0)) // + 0: q8_0 has no −0
		}
	}
}

// toFormat returns the keys k (fp16, values that E holds exactly) as E, and fails the
// test unless widening them back gives k's values, bit for bit. A q8_0 block takes
// the smallest power-of-two scale that makes its values int8 multiples of it.
func toFormat[E snapkv.Element](t testing.TB, k []fp16.Float16) []E {
	t.Helper()
	f := make([]float32, len(k))
	fp16.ToFloat32(f, k)
	var out []E
	back := make([]float32, len(k))
	switch o := any(&out).(type) {
	case *[]fp16.Float16:
		*o = slices.Clone(k)
		copy(back, f)
	case *[]bf16.BFloat16:
		*o = make([]bf16.BFloat16, len(k))
		bf16.FromFloat32(*o, f)
		bf16.ToFloat32(back, *o)
	case *[]q8.Block:
		*o = make([]q8.Block, len(k)/32)
		for b := range *o {
			block := f[32*b : 32*b+32]
			amax := float64(0)
			for _, v := range block {
				amax = max(amax, math.Abs(float64(v)))
			}
			if amax == 0 {
				continue
			}
			d := math.Exp2(math.Ceil(math.Log2(amax / 127)))
			(*o)[b].D = float16.Fromfloat32(float32(d))
			for j, v := range block {
				(*o)[b].Q[j] = int8(math.Round(float64(v) / d))
			}
		}
		q8.Dequantize(back, *o)
	case *[]float32:
		*o = slices.Clone(f)
		copy(back, f)
	}
	for i := range f {
		if math.Float32bits(back[i]) != math.Float32bits(f[i]) {
			t.Fatalf("%s: key %d, %v, is not exact in the format (%v)", formatName[E](), i, f[i], back[i])
		}
	}
	return out
}

// keysAs returns the keys k as E: k itself for fp16, else a copy rounded by roundPow2
// (to values that every format holds exactly) in E.
func keysAs[E snapkv.Element](t testing.TB, k []fp16.Float16) []E {
	t.Helper()
	if out, ok := any(k).([]E); ok {
		return out
	}
	k = slices.Clone(k)
	roundPow2(k)
	return toFormat[E](t, k)
}

// randomRows returns n elements of E of random bits (q8_0 blocks with random scale
// bits and quants), for values that the selection never reads but the cache must
// keep bit for bit.
func randomRows[E snapkv.Element](r *rand.Rand, n int) []E {
	out := make([]E, n)
	switch o := any(out).(type) {
	case []fp16.Float16:
		for i := range o {
			o[i] = fp16.Float16(r.Uint32())
		}
	case []bf16.BFloat16:
		for i := range o {
			o[i] = bf16.BFloat16(r.Uint32())
		}
	case []q8.Block:
		for i := range o {
			o[i].D = fp16.Float16(r.Uint32())
			for j := range o[i].Q {
				o[i].Q[j] = int8(r.Uint32())
			}
		}
	case []float32: // finite, so that the tests' comparisons of E see equal bits as equal
		for i := range o {
			o[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(60)-30))
		}
	}
	return out
}

// nanOf is a NaN of E: the room after a context buffer's positions, which no call
// may read.
func nanOf[E snapkv.Element]() E {
	var x E
	switch p := any(&x).(type) {
	case *fp16.Float16:
		*p = 0x7e00
	case *bf16.BFloat16:
		*p = 0x7fc0
	case *q8.Block:
		p.D = 0x7e00
		for j := range p.Q {
			p.Q[j] = 1
		}
	case *float32:
		*p = float32(math.NaN())
	}
	return x
}

// TestFormatsSelectLikeFP16: over keys that fp16 and the format hold exactly, Select
// and a Selector keep the fp16 rows and pool the fp16 votes, bit for bit, for every
// score source, both rules, both layouts, GQA, adaptive allocation and every variant.
// bf16 is checked on keys of 8 significant bits (any exponent), q8_0 on keys with
// power-of-two block scales (which bf16 holds too: FuzzSelectFormats covers both).
func TestFormatsSelectLikeFP16(t *testing.T) {
	t.Run("bf16", func(t *testing.T) { selectLikeFP16[bf16.BFloat16](t, roundBF16) })
	t.Run("q8_0", func(t *testing.T) { selectLikeFP16[q8.Block](t, roundPow2) })
	t.Run("f32", func(t *testing.T) { selectLikeFP16[float32](t, roundPow2) })
}

func selectLikeFP16[E snapkv.Element](t *testing.T, round func([]fp16.Float16)) {
	varianttest.Run(t, func(t *testing.T, variant string) { selectVariantLikeFP16[E](t, variant, round) })
}

func selectVariantLikeFP16[E snapkv.Element](t *testing.T, variant string, round func([]fp16.Float16)) {
	r := rand.New(rand.NewPCG(81, 82))
	shapes := []struct{ hk, g, n, w, d int }{
		{1, 1, 90, 8, 32}, {2, 4, 300, 16, 64}, {3, 2, 257, 32, 32}, {2, 8, 400, 32, 128},
	}
	if longtest.Short() {
		shapes = shapes[:3]
	}
	for _, sh := range shapes {
		hq := sh.hk * sh.g
		p := newProblem(r, hq, sh.hk, sh.n, sh.w, sh.d)
		round(p.k)
		kE := toFormat[E](t, p.k)
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
			}
			inE := snapkv.InputOf[E]{Q: in.Q, Attn: in.Attn, K: kE, QHeads: hq, KVHeads: sh.hk, Len: sh.n, Dim: sh.d}
			headE, tokenE := layouts(inE, p.w)
			for _, cfg := range []snapkv.Config{
				{Budget: sh.n / 4, Window: sh.w, Kernel: 5},
				{Budget: sh.n / 3, Window: sh.w, Kernel: 7, Rule: snapkv.RuleProtected, Sinks: 4, Pool: snapkv.PoolMax, Group: snapkv.GroupMax, Workers: 3},
				{KeepRatio: 0.3, Window: sh.w, Kernel: 3, Group: snapkv.GroupSum, Alloc: snapkv.AllocAdaptive, Floor: 0.2, Workers: 2},
				{Budget: sh.n / 4, Window: sh.w, Kernel: 5, Rule: snapkv.RuleProtected, Sinks: 2, Alloc: snapkv.AllocAdaptive, Floor: 0.5},
			} {
				func() {
					what := fmt.Sprintf("%s %s %v Hq=%d Hkv=%d L=%d D=%d %+v", formatName[E](), variant, src, hq, sh.hk, sh.n, sh.d, cfg)
					s16 := mustSelector(t, cfg)
					want, err := s16.Select(nil, in)
					if err != nil {
						t.Fatal(err)
					}
					for _, inE := range []snapkv.InputOf[E]{headE, tokenE} {
						what := fmt.Sprintf("%s layout %d", what, inE.Layout)
						s, err := snapkv.NewSelectorOf[E](cfg)
						if err != nil {
							t.Fatal(err)
						}
						got, err := s.Select(nil, inE)
						if err != nil {
							t.Fatalf("%s: %v", what, err)
						}
						if !slices.EqualFunc(got, want, slices.Equal) {
							t.Fatalf("%s: kept %v, fp16 %v", what, got, want)
						}
						if !slices.EqualFunc(snapkv.PooledVotes(s), snapkv.PooledVotes(s16), func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }) {
							t.Fatalf("%s: the pooled votes differ from fp16's", what)
						}
						if once, err := snapkv.Select(cfg, inE); err != nil || !slices.EqualFunc(once, want, slices.Equal) {
							t.Fatalf("%s: one-call Select kept %v (%v), fp16 %v", what, once, err, want)
						}
					}
				}()
			}
		}
	}
}

// TestFormatsCacheLikeFP16: a cache of each format, given the same prompt as an fp16
// cache (keys that both hold exactly, values of random bits) in the same chunks, holds
// after every chunk the fp16 cache's positions, each with its own K and V rows, bit
// for bit, and after decoding the appended rows; in both modes and both layouts, for
// every score source, on every variant.
func TestFormatsCacheLikeFP16(t *testing.T) {
	t.Run("bf16", func(t *testing.T) { cacheLikeFP16[bf16.BFloat16](t, roundBF16) })
	t.Run("q8_0", func(t *testing.T) { cacheLikeFP16[q8.Block](t, roundPow2) })
	t.Run("f32", func(t *testing.T) { cacheLikeFP16[float32](t, roundPow2) })
}

func cacheLikeFP16[E snapkv.Element](t *testing.T, round func([]fp16.Float16)) {
	varianttest.Run(t, func(t *testing.T, variant string) { cacheVariantLikeFP16[E](t, round) })
}

func cacheVariantLikeFP16[E snapkv.Element](t *testing.T, round func([]fp16.Float16)) {
	r := rand.New(rand.NewPCG(83, 84))
	const hq, hk, n, w, d = 6, 3, 150, 8, 64
	l := newLayer(r, hq, hk, n, w, d)
	round(l.k)
	wd := perRow[E](d)
	kE, vE := toFormat[E](t, l.k), randomRows[E](r, hk*n*wd)
	decodeK, decodeV := randomRows[E](r, hk*wd), randomRows[E](r, hk*wd)
	for _, mode := range []snapkv.Mode{snapkv.ModeFaithful, snapkv.ModeBounded} {
		for _, sel := range []snapkv.Config{
			{Budget: 40, Window: w, Kernel: 5},
			{Budget: 40, Window: w, Kernel: 3, Rule: snapkv.RuleProtected, Sinks: 2, Alloc: snapkv.AllocAdaptive, Floor: 0.3, Workers: 2},
		} {
			for _, src := range []source{byQueries, byAttn, byKeys} {
				if src == byAttn && mode == snapkv.ModeBounded {
					continue // Attn is for ModeFaithful only
				}
				for _, layout := range []snapkv.Layout{snapkv.HeadMajor, snapkv.TokenMajor} {
					for _, sizes := range [][]int{{150}, {50, 50, 50}, {7, 1, 139, 3}} {
						what := fmt.Sprintf("%s mode %d layout %d %+v %v chunks %v", formatName[E](), mode, layout, sel, src, sizes)
						cfg := snapkv.CacheConfig{Select: sel, Mode: mode, QHeads: hq, KVHeads: hk, Dim: d, Reserve: 2, Layout: layout}
						c16, err := snapkv.NewCache(cfg)
						if err != nil {
							t.Fatal(err)
						}
						c, err := snapkv.NewCacheOf[E](cfg)
						if err != nil {
							t.Fatal(err)
						}
						chunks16, chunks := cutChunks(l, l.k, l.v, d, cfg, sizes, src), cutChunks(l, kE, vE, wd, cfg, sizes, src)
						for i := range chunks {
							if layout == snapkv.TokenMajor {
								chunks16[i] = tokenMajorChunk(chunks16[i], hq, hk, d, d)
								chunks[i] = tokenMajorChunk(chunks[i], hq, hk, d, wd)
							}
							if err := c16.Prefill(chunks16[i]); err != nil {
								t.Fatalf("%s: fp16 chunk %d: %v", what, i, err)
							}
							if err := c.Prefill(chunks[i]); err != nil {
								t.Fatalf("%s: chunk %d: %v", what, i, err)
							}
							sameAsFP16(t, fmt.Sprintf("%s after chunk %d", what, i), c, c16, kE, vE, decodeK, decodeV, n, wd, d)
						}
						for range 3 {
							if err := c16.Append(make([]fp16.Float16, hk*d), make([]fp16.Float16, hk*d)); err != nil {
								t.Fatal(err)
							}
							if err := c.Append(decodeK, decodeV); err != nil {
								t.Fatalf("%s: Append: %v", what, err)
							}
						}
						if c.Offset() != n+3 {
							t.Fatalf("%s: Offset %d, want %d", what, c.Offset(), n+3)
						}
						sameAsFP16(t, what+" after decoding", c, c16, kE, vE, decodeK, decodeV, n, wd, d)
					}
				}
			}
		}
	}
}

// cutChunks cuts a prompt [heads][n][wd] of k and v (wd elements a row) into
// head-major chunks of the given sizes (the last marked Last), with all of a chunk's
// queries or only its last Window rows in turn.
func cutChunks[E snapkv.Element](l *layer, k, v []E, wd int, cfg snapkv.CacheConfig, sizes []int, src source) []snapkv.ChunkOf[E] {
	var out []snapkv.ChunkOf[E]
	at := 0
	for i, n := range sizes {
		ch := snapkv.ChunkOf[E]{K: rows(k, l.hk, l.n, wd, at, at+n), V: rows(v, l.hk, l.n, wd, at, at+n), Last: i == len(sizes)-1}
		switch {
		case src == byQueries && i%2 == 0:
			ch.Q = rows(l.q, l.hq, l.n, l.d, at, at+n)
		case src == byQueries:
			ch.Q = rows(l.q, l.hq, l.n, l.d, max(at, at+n-cfg.Select.Window), at+n)
		case src == byAttn && ch.Last:
			ch.Attn = l.attn
		}
		out = append(out, ch)
		at += n
	}
	return out
}

// tokenMajorChunk returns a head-major chunk token-major: K and V rows of wd
// elements, Q rows of d values.
func tokenMajorChunk[E snapkv.Element](ch snapkv.ChunkOf[E], hq, hk, d, wd int) snapkv.ChunkOf[E] {
	m := len(ch.K) / (hk * wd)
	ch.K, ch.V = oracle.TokenMajor(ch.K, hk, m, wd), oracle.TokenMajor(ch.V, hk, m, wd)
	if ch.Q != nil {
		ch.Q = oracle.TokenMajor(ch.Q, hq, len(ch.Q)/(hq*d), d)
	}
	return ch
}

// sameAsFP16 requires c to hold c16's positions in every head, each with its rows:
// the prompt's k and v ([heads][n][wd]) or the decoded dk and dv ([heads][wd]); and
// to report c16's Stats but for the bytes, which follow the format's row size.
func sameAsFP16[E snapkv.Element](t *testing.T, what string, c *snapkv.CacheOf[E], c16 *snapkv.Cache, k, v, dk, dv []E, n, wd, d int) {
	t.Helper()
	st, st16 := c.Stats(), c16.Stats()
	for h := range st.RowsKept {
		gk, gv, pos := c.Head(h)
		_, _, want := c16.Head(h)
		if !slices.Equal(pos, want) {
			t.Fatalf("%s: head %d holds positions %v, fp16 %v", what, h, pos, want)
		}
		if len(gk) != len(pos)*wd || len(gv) != len(pos)*wd {
			t.Fatalf("%s: head %d: %d positions, len(k) = %d, len(v) = %d", what, h, len(pos), len(gk), len(gv))
		}
		for i, p := range pos {
			wk, wv := dk[h*wd:(h+1)*wd], dv[h*wd:(h+1)*wd]
			if int(p) < n {
				at := (h*n + int(p)) * wd
				wk, wv = k[at:at+wd], v[at:at+wd]
			}
			if !reflect.DeepEqual(gk[i*wd:(i+1)*wd], wk) || !reflect.DeepEqual(gv[i*wd:(i+1)*wd], wv) {
				t.Fatalf("%s: head %d row %d (position %d) is not the prompt's", what, h, i, p)
			}
		}
	}
	if st.TokensSeen != st16.TokensSeen || !slices.Equal(st.RowsKept, st16.RowsKept) || st.PeakRows != st16.PeakRows || st.EvictionRatio != st16.EvictionRatio {
		t.Fatalf("%s: Stats %+v, fp16 %+v", what, st, st16)
	}
	kv := 2 * rowBytes[E](d)
	kept := int64(0)
	for _, r := range st.RowsKept {
		kept += int64(r)
	}
	if st.BytesAfter != kept*(kv+4) || st.BytesBefore != int64(st.TokensSeen)*int64(len(st.RowsKept))*kv {
		t.Fatalf("%s: BytesAfter %d, BytesBefore %d for %d rows kept of %d tokens, %d bytes a position's K and V", what, st.BytesAfter, st.BytesBefore, kept, st.TokensSeen, kv)
	}
}

// TestFormatsBadInput: a q8_0 Dim that is not a multiple of 32 and slices of the wrong
// number of blocks are errors that name the field, the value and the blocks.
func TestFormatsBadInput(t *testing.T) {
	const hk, hq, n, d = 2, 4, 32, 64
	cfg := snapkv.Config{Budget: 8, Window: 4, Kernel: 3}
	k, q := make([]q8.Block, hk*n*d/32), make([]float32, hq*4*d)
	good := snapkv.InputOf[q8.Block]{Q: q, K: k, QHeads: hq, KVHeads: hk, Len: n, Dim: d}
	for _, tc := range []struct {
		in   func(*snapkv.InputOf[q8.Block])
		want string
	}{
		{func(i *snapkv.InputOf[q8.Block]) { i.Dim = 48 }, "snapkv: Dim 48 is not a multiple of 32"},
		{func(i *snapkv.InputOf[q8.Block]) { i.Dim, i.Q, i.Attn = 5, nil, make([]float32, hq*4*n) }, "Dim 5 is not a multiple of 32"},
		{func(i *snapkv.InputOf[q8.Block]) { i.K = k[1:] }, "len(Input.K) = 127 blocks, want KVHeads·Len·Dim/32 = 2·32·64/32 = 128"},
		{func(i *snapkv.InputOf[q8.Block]) { i.Layout, i.Len = snapkv.TokenMajor, 31 }, "len(Input.K) = 128 blocks, want KVHeads·Len·Dim/32 = 2·31·64/32 = 124"},
		{func(i *snapkv.InputOf[q8.Block]) { i.Len, i.Dim = math.MaxInt32, math.MaxInt/2+1 },
			fmt.Sprintf("KVHeads·Len·Dim/32 = 2·2147483647·%d/32 overflows int", math.MaxInt/2+1)},
	} {
		in := good
		tc.in(&in)
		if _, err := snapkv.Select(cfg, in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Select = %v, want an error containing %q", err, tc.want)
		}
		s, _ := snapkv.NewSelectorOf[q8.Block](cfg)
		if _, err := s.SelectBatch(nil, []snapkv.InputOf[q8.Block]{good, in}); err == nil || !strings.Contains(err.Error(), "ins[1]") {
			t.Errorf("SelectBatch = %v, want an error naming ins[1]", err)
		}
	}
	if _, err := snapkv.Select(cfg, good); err != nil {
		t.Errorf("the good input: %v", err)
	}
	// The same Dim 48 is fine in bf16: only q8_0 counts blocks.
	if _, err := snapkv.Select(cfg, snapkv.InputOf[bf16.BFloat16]{Q: make([]float32, hq*4*48), K: make([]bf16.BFloat16, hk*n*48), QHeads: hq, KVHeads: hk, Len: n, Dim: 48}); err != nil {
		t.Errorf("bf16 Dim 48: %v", err)
	}

	ccfg := snapkv.CacheConfig{Select: cfg, QHeads: hq, KVHeads: hk, Dim: 40}
	if _, err := snapkv.NewCacheOf[q8.Block](ccfg); err == nil || !strings.Contains(err.Error(), "snapkv: CacheConfig.Dim 40 is not a multiple of 32") {
		t.Errorf("NewCacheOf[q8.Block] Dim 40 = %v", err)
	}
	ccfg.Dim = d
	c, err := snapkv.NewCacheOf[q8.Block](ccfg)
	if err != nil {
		t.Fatal(err)
	}
	blocks := func(rows int) []q8.Block { return make([]q8.Block, hk*rows*d/32) }
	if err := c.Prefill(snapkv.ChunkOf[q8.Block]{K: make([]q8.Block, 5), V: make([]q8.Block, 5)}); err == nil || !strings.Contains(err.Error(), "len(Chunk.K) = 5 blocks is not a multiple of KVHeads·Dim/32 = 2·2") {
		t.Errorf("Prefill of 5 blocks = %v", err)
	}
	if err := c.Prefill(snapkv.ChunkOf[q8.Block]{K: blocks(10), V: blocks(10), Q: make([]float32, hq*10*d), Last: true}); err != nil {
		t.Fatal(err)
	}
	if err := c.Append(make([]q8.Block, 3), blocks(1)); err == nil || !strings.Contains(err.Error(), "len(k) = 3 blocks, want KVHeads·Dim/32 = 2·2 = 4") {
		t.Errorf("Append of 3 blocks = %v", err)
	}
	if err := c.Append(blocks(1), blocks(1)); err != nil {
		t.Errorf("Append of one position: %v", err)
	}
}
