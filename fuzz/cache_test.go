package fuzz

import (
	"github.com/kvsimd/kvsimd/internal/oracle"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// FuzzCache drives a Cache with fuzzed configurations and chunk sequences, misuse
// included, and requires that it never panics, that every error names the package,
// that a twin cache given the same chunks token-major answers alike (the same errors,
// rows, positions and Stats), and that a faithful cache whose chunks were all accepted
// holds exactly the rows of a one-shot Select over the whole prompt, at their
// positions, followed by the decoded rows. Each op byte is one chunk: bits 0-4 its length, bits 5-6 its queries (0 all
// rows, 1 the last Window rows, 2 none, 3 a malformed K); the last op ends the prompt.
func FuzzCache(f *testing.F) {
	f.Add(int16(12), uint8(4), uint8(3), uint8(0), uint8(2), uint8(2), uint8(8), uint8(2), []byte{20, 9, 2}, []byte{0x00, 0x3c, 0x00, 0xbc, 0x01, 0x7c})
	f.Add(int16(12), uint8(4), uint8(5), uint8(1), uint8(1), uint8(4), uint8(4), uint8(0), []byte{31, 31, 1}, []byte{1, 2, 3})
	f.Add(int16(9), uint8(6), uint8(3), uint8(6), uint8(3), uint8(1), uint8(5), uint8(1), []byte{64 | 17, 64 | 3, 64}, []byte{})
	f.Add(int16(6), uint8(8), uint8(1), uint8(3), uint8(2), uint8(1), uint8(3), uint8(3), []byte{30, 96 | 2, 4}, []byte{0xff, 0x7f})
	f.Fuzz(func(t *testing.T, budget int16, window, kernel, enums, kvHeads, group, dim, decode uint8, ops, data []byte) {
		cfg := snapkv.CacheConfig{
			Select: snapkv.Config{Budget: int(budget), Window: int(window), Kernel: int(kernel),
				Pool: snapkv.Pool(enums & 1), Rule: snapkv.Rule(enums >> 1 & 1), Alloc: snapkv.Alloc(enums >> 2 & 1), Workers: 2},
			Mode: snapkv.Mode(enums >> 3 & 3), QHeads: int(kvHeads) * int(group), KVHeads: int(kvHeads), Dim: int(dim), Reserve: int(decode),
		}
		if cfg.Select.Rule == snapkv.RuleProtected {
			cfg.Select.Sinks = int(enums >> 5)
		}
		c, err := snapkv.NewCache(cfg)
		if err != nil {
			checkErr(t, err)
			return
		}
		if kvHeads > 4 || group > 4 || dim > 32 || len(ops) > 16 {
			return // valid but too big to fuzz quickly
		}
		twinCfg := cfg
		twinCfg.Layout = snapkv.TokenMajor
		twin, err := snapkv.NewCache(twinCfg)
		if err != nil {
			t.Fatalf("token-major twin: %v", err)
		}
		hk, hq, d := cfg.KVHeads, cfg.QHeads, cfg.Dim
		n := 0
		for _, op := range ops {
			n += int(op & 31)
		}
		// The whole prompt, [heads][n][d], from the fuzzed fp16 patterns.
		halves := uint16s(data)
		k, v := make([]fp16.Float16, hk*n*d), make([]fp16.Float16, hk*n*d)
		for i := range k {
			k[i] = fp16.Float16(0x3800 + i%61)
			if len(halves) > 0 {
				k[i] = fp16.Float16(halves[i%len(halves)])
			}
			v[i] = ^k[i]
		}
		dk, dv := make([]fp16.Float16, hk*d), make([]fp16.Float16, hk*d) // every decoded token
		for i := range dk {
			dk[i], dv[i] = fp16.Float16(0x7c01+i), fp16.Float16(0x8000+i)
		}
		q := make([]float32, hq*n*d)
		for i := range q {
			q[i] = float32(i%13) - 6
		}
		at, accepted, sawQ := 0, true, false
		for i, op := range ops {
			m := int(op & 31)
			ch := snapkv.Chunk{K: rows(k, hk, n, d, at, at+m), V: rows(v, hk, n, d, at, at+m), Last: i == len(ops)-1}
			switch op >> 5 & 3 {
			case 0:
				ch.Q = rows(q, hq, n, d, at, at+m)
			case 1:
				ch.Q = rows(q, hq, n, d, max(at, at+m-cfg.Select.Window), at+m)
			case 3:
				ch.K = ch.K[:max(len(ch.K)-1, 0)]
			}
			err := c.Prefill(ch)
			if op>>5&3 != 3 { // a malformed K stays as it is
				ch.K, ch.V = oracle.TokenMajor(ch.K, hk, m, d), oracle.TokenMajor(ch.V, hk, m, d)
				if ch.Q != nil {
					ch.Q = oracle.TokenMajor(ch.Q, hq, len(ch.Q)/(hq*d), d)
				}
			}
			sameErr(t, "Prefill", err, twin.Prefill(ch))
			sameHeads(t, c, twin, hk)
			if err != nil {
				checkErr(t, err)
				accepted = false
				continue
			}
			sawQ = sawQ || ch.Q != nil
			at += m
		}
		for range decode {
			err := c.Append(dk, dv)
			sameErr(t, "Append", err, twin.Append(dk, dv))
			if err != nil {
				checkErr(t, err)
			}
		}
		sameHeads(t, c, twin, hk)
		if !accepted || len(ops) == 0 { // the prompt has not ended
			return
		}
		if err := c.Prefill(snapkv.Chunk{}); err == nil {
			t.Fatal("Prefill after the last chunk succeeded")
		}
		if cfg.Mode != snapkv.ModeFaithful {
			return
		}
		// The cache accepted every chunk, so its query window held the prompt's last
		// Window queries whenever any chunk had queries.
		in := snapkv.Input{K: k, QHeads: hq, KVHeads: hk, Len: n, Dim: d}
		if sawQ {
			in.Q = rows(q, hq, n, d, n-min(cfg.Select.Window, n), n)
		}
		want, err := snapkv.Select(cfg.Select, in)
		if err != nil {
			t.Fatalf("one-shot Select of what the cache accepted: %v", err)
		}
		if c.Offset() != n+int(decode) {
			t.Fatalf("Offset %d, want %d", c.Offset(), n+int(decode))
		}
		for h := range hk {
			gk, gv, pos := c.Head(h)
			wantPos := append(want[h], make([]int32, decode)...)
			for j := range int(decode) {
				wantPos[len(want[h])+j] = int32(n + j)
			}
			if !slices.Equal(pos, wantPos) {
				t.Fatalf("head %d: positions %v, one shot %v", h, pos, wantPos)
			}
			for j, p := range pos {
				wk, wv := dk[h*d:(h+1)*d], dv[h*d:(h+1)*d]
				if int(p) < n {
					wk, wv = k[(h*n+int(p))*d:(h*n+int(p)+1)*d], v[(h*n+int(p))*d:(h*n+int(p)+1)*d]
				}
				if !slices.Equal(gk[j*d:(j+1)*d], wk) || !slices.Equal(gv[j*d:(j+1)*d], wv) {
					t.Fatalf("head %d row %d (position %d) differs from what was given", h, j, p)
				}
			}
		}
	})
}

// rows returns x's rows [lo, hi) of every head, x being [heads][n][d].
func rows[T any](x []T, heads, n, d, lo, hi int) []T {
	out := make([]T, 0, heads*(hi-lo)*d)
	for h := range heads {
		out = append(out, x[(h*n+lo)*d:(h*n+hi)*d]...)
	}
	return out
}

// sameErr requires the head-major cache's error and its token-major twin's to match.
func sameErr(t *testing.T, call string, head, token error) {
	t.Helper()
	if (head == nil) != (token == nil) || head != nil && head.Error() != token.Error() {
		t.Fatalf("%s: head-major error %v, token-major %v", call, head, token)
	}
}

// sameHeads requires the two caches to hold the same rows at the same positions and to
// report the same Stats.
func sameHeads[E snapkv.Element](t *testing.T, head, token *snapkv.CacheOf[E], heads int) {
	t.Helper()
	for h := range heads {
		k, v, pos := head.Head(h)
		tk, tv, tpos := token.Head(h)
		if !sameElems(tk, k) || !sameElems(tv, v) || !slices.Equal(tpos, pos) {
			t.Fatalf("head %d: token-major holds positions %v, head-major %v (or their rows differ)", h, tpos, pos)
		}
	}
	if a, b := token.Stats(), head.Stats(); !reflect.DeepEqual(a, b) {
		t.Fatalf("token-major Stats %+v, head-major %+v", a, b)
	}
}

func checkErr(t *testing.T, err error) {
	t.Helper()
	if !strings.HasPrefix(err.Error(), "snapkv: ") {
		t.Fatalf("error %q does not start with the package name", err)
	}
}

// FuzzCacheFormats drives a cache of format (format%4: 0 fp16, 1 bf16, 2 q8_0, 3 float32), its
// token-major twin and an fp16 cache with the same prompt, whose keys hold values
// that both formats hold exactly (see sameValues), in the same chunks (FuzzCache's
// ops), then decode tokens. The format's caches must accept and refuse the same
// chunks as the fp16 cache, hold its positions after every call, each with the rows
// that were given in the format, bit for bit, and the twins must agree in everything.
// Dim is 1 … 32, a multiple of 32 for q8_0 unless bit 7 of dim asks for any (then
// NewCacheOf must fail unless it is one).
func FuzzCacheFormats(f *testing.F) {
	f.Fuzz(func(t *testing.T, format uint8, budget int16, window, kernel, enums, kvHeads, group, dim, decode uint8, ops, data []byte) {
		cfg := snapkv.CacheConfig{
			Select: snapkv.Config{Budget: int(budget), Window: int(window), Kernel: int(kernel),
				Pool: snapkv.Pool(enums & 1), Rule: snapkv.Rule(enums >> 1 & 1), Alloc: snapkv.Alloc(enums >> 2 & 1), Workers: 2},
			Mode: snapkv.Mode(enums >> 3 & 3), QHeads: int(kvHeads%5) * int(group%5), KVHeads: int(kvHeads % 5), Dim: 1 + int(dim%32), Reserve: int(decode % 8),
		}
		if format%4 == 2 && dim&0x80 == 0 {
			cfg.Dim = 32 * (1 + int(dim%2))
		}
		if cfg.Select.Rule == snapkv.RuleProtected {
			cfg.Select.Sinks = int(enums >> 5)
		}
		if len(ops) > 12 {
			return // valid but too long to fuzz quickly
		}
		switch format % 4 {
		case 0:
			cacheLikeFP16[fp16.Float16](t, cfg, int(decode%8), ops, data)
		case 1:
			cacheLikeFP16[bf16.BFloat16](t, cfg, int(decode%8), ops, data)
		case 2:
			cacheLikeFP16[q8.Block](t, cfg, int(decode%8), ops, data)
		default:
			cacheLikeFP16[float32](t, cfg, int(decode%8), ops, data)
		}
	})
}

func cacheLikeFP16[E snapkv.Element](t *testing.T, cfg snapkv.CacheConfig, decode int, ops, data []byte) {
	width, isQ8 := cfg.Dim, false
	if _, ok := any((*E)(nil)).(*q8.Block); ok {
		width, isQ8 = cfg.Dim/32, true
	}
	c16, err16 := snapkv.NewCache(cfg)
	c, err := snapkv.NewCacheOf[E](cfg)
	if isQ8 && cfg.Dim%32 != 0 {
		if err == nil {
			t.Fatalf("NewCacheOf[q8.Block] with Dim %d succeeded", cfg.Dim)
		}
		checkErr(t, err)
		return
	}
	if (err == nil) != (err16 == nil) {
		t.Fatalf("NewCacheOf: %v, fp16: %v", err, err16)
	}
	if err != nil {
		checkErr(t, err)
		return
	}
	twinCfg := cfg
	twinCfg.Layout = snapkv.TokenMajor
	twin, err := snapkv.NewCacheOf[E](twinCfg)
	if err != nil {
		t.Fatalf("token-major twin: %v", err)
	}
	hk, hq, d := cfg.KVHeads, cfg.QHeads, cfg.Dim
	n := 0
	for _, op := range ops {
		n += int(op & 31)
	}
	k16, k := sameValues[E](data, hk*n*width)
	v16, v := sameValues[E](slices.Concat([]byte{0xa5}, data), hk*n*width)
	dk16, dk := sameValues[E](slices.Concat(data, []byte{0x3c}), hk*width)
	q := make([]float32, hq*n*d)
	for i := range q {
		q[i] = float32(i%13) - 6
	}
	at := 0 // prompt rows accepted: positions from at on are decoded
	check := func(call string, err16, err, errTwin error) {
		t.Helper()
		sameErr(t, call, err, errTwin)
		if (err == nil) != (err16 == nil) {
			t.Fatalf("%s: %v, fp16: %v", call, err, err16)
		}
		if err != nil {
			checkErr(t, err)
		}
		sameHeads(t, c, twin, hk)
		for h := range hk {
			gk, gv, pos := c.Head(h)
			if _, _, want := c16.Head(h); !slices.Equal(pos, want) {
				t.Fatalf("%s: head %d holds positions %v, fp16 %v", call, h, pos, want)
			}
			for j, p := range pos {
				wk, wv := dk[h*width:(h+1)*width], dk[h*width:(h+1)*width]
				if int(p) < at {
					row := (h*n + int(p)) * width
					wk, wv = k[row:row+width], v[row:row+width]
				}
				if !sameElems(gk[j*width:(j+1)*width], wk) || !sameElems(gv[j*width:(j+1)*width], wv) {
					t.Fatalf("%s: head %d row %d (position %d) differs from what was given", call, h, j, p)
				}
			}
		}
	}
	for i, op := range ops {
		m := int(op & 31)
		ch16 := snapkv.Chunk{K: rows(k16, hk, n, d, at, at+m), V: rows(v16, hk, n, d, at, at+m), Last: i == len(ops)-1}
		ch := snapkv.ChunkOf[E]{K: rows(k, hk, n, width, at, at+m), V: rows(v, hk, n, width, at, at+m), Last: ch16.Last}
		switch op >> 5 & 3 {
		case 0:
			ch.Q = rows(q, hq, n, d, at, at+m)
		case 1:
			ch.Q = rows(q, hq, n, d, max(at, at+m-cfg.Select.Window), at+m)
		case 3:
			ch16.K, ch.K = ch16.K[:max(len(ch16.K)-1, 0)], ch.K[:max(len(ch.K)-1, 0)]
		}
		ch16.Q = ch.Q
		err16, err := c16.Prefill(ch16), c.Prefill(ch)
		if op>>5&3 != 3 { // a malformed K stays as it is
			ch.K, ch.V = oracle.TokenMajor(ch.K, hk, m, width), oracle.TokenMajor(ch.V, hk, m, width)
			if ch.Q != nil {
				ch.Q = oracle.TokenMajor(ch.Q, hq, len(ch.Q)/(hq*d), d)
			}
		}
		errTwin := twin.Prefill(ch)
		if err == nil {
			at += m
		}
		check("Prefill", err16, err, errTwin)
	}
	for range decode {
		err16, err := c16.Append(dk16, make([]fp16.Float16, len(dk16))), c.Append(dk, dk)
		check("Append", err16, err, twin.Append(dk, dk))
	}
}
