package snapkv_test

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/snapkv"
)

// TestNoPinnedInputs: what outlives a call (a kept Selector, a Cache, the pool behind
// the one-call Select) holds no reference to the call's K, V, Q or Attn, so an engine
// that keeps one Selector per layer does not keep a whole prompt's keys alive until its
// next call. Each input's backing array gets a runtime.AddCleanup; the caller drops its
// references, the holder is kept alive, and the garbage collector must free the arrays.
// The control keeps one input reachable on purpose and requires its cleanup not to run,
// so the test can tell a pinned array from a freed one.
func TestNoPinnedInputs(t *testing.T) {
	cfg := snapkv.Config{Budget: 16, Window: 4, Kernel: 3, Pool: snapkv.PoolAvg}
	const hq, hkv, l, d = 4, 2, 64, 32

	t.Run("Selector", func(t *testing.T) {
		s, err := snapkv.NewSelector(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var dst [][]int32
		freed := watchInputs(t, "K", "Q", func(k []fp16.Float16, q []float32) {
			if dst, err = s.Select(dst, snapkv.Input{Q: q, K: k, QHeads: hq, KVHeads: hkv, Len: l, Dim: d}); err != nil {
				t.Error(err)
			}
		})
		requireFreed(t, freed, 2, func() { runtime.GC() })
		runtime.KeepAlive(s)
		runtime.KeepAlive(dst)
	})

	t.Run("SelectBatch", func(t *testing.T) {
		s, err := snapkv.NewSelector(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var dst [][][]int32
		freed := watchInputs(t, "K", "Q", func(k []fp16.Float16, q []float32) {
			in := snapkv.Input{Q: q, K: k, QHeads: hq, KVHeads: hkv, Len: l, Dim: d}
			if dst, err = s.SelectBatch(dst, []snapkv.Input{in, in}); err != nil {
				t.Error(err)
			}
		})
		requireFreed(t, freed, 2, func() { runtime.GC() })
		runtime.KeepAlive(s)
	})

	t.Run("Selector error", func(t *testing.T) {
		s, err := snapkv.NewSelector(cfg)
		if err != nil {
			t.Fatal(err)
		}
		freed := watchInputs(t, "K", "Q", func(k []fp16.Float16, q []float32) {
			good := snapkv.Input{Q: q, K: k, QHeads: hq, KVHeads: hkv, Len: l, Dim: d}
			bad := good
			bad.Dim = -1 // the second sequence fails after the first was planned
			if _, err := s.SelectBatch(nil, []snapkv.Input{good, bad}); err == nil {
				t.Error("SelectBatch took Dim −1")
			}
		})
		requireFreed(t, freed, 2, func() { runtime.GC() })
		runtime.KeepAlive(s)
	})

	t.Run("Cache", func(t *testing.T) {
		c, err := snapkv.NewCache(snapkv.CacheConfig{Select: cfg, QHeads: hq, KVHeads: hkv, Dim: d, Reserve: 4})
		if err != nil {
			t.Fatal(err)
		}
		freed := watchInputs(t, "K", "Q", func(k []fp16.Float16, q []float32) {
			if err := c.Prefill(snapkv.Chunk{K: k, V: k, Q: q, Last: true}); err != nil {
				t.Error(err)
			}
		})
		requireFreed(t, freed, 2, func() { runtime.GC() })
		runtime.KeepAlive(c)
	})

	t.Run("Cache Attn", func(t *testing.T) {
		c, err := snapkv.NewCache(snapkv.CacheConfig{Select: cfg, QHeads: hq, KVHeads: hkv, Dim: d})
		if err != nil {
			t.Fatal(err)
		}
		freed := watchInputs(t, "K", "Attn", func(k []fp16.Float16, _ []float32) {
			attn := make([]float32, hq*cfg.Window*l)
			watchFree(&attn[0], "Attn")
			if err := c.Prefill(snapkv.Chunk{K: k, V: k, Attn: attn, Last: true}); err != nil {
				t.Error(err)
			}
		})
		requireFreed(t, freed, 2, func() { runtime.GC() })
		runtime.KeepAlive(c)
	})

	// The one-call Select keeps its Selector in a sync.Pool, which survives one
	// collection (as the pool's victim) and is emptied by the second: a single GC must
	// free the inputs, or the pool pins them.
	t.Run("Select", func(t *testing.T) {
		freed := watchInputs(t, "K", "Q", func(k []fp16.Float16, q []float32) {
			if _, err := snapkv.Select(cfg, snapkv.Input{Q: q, K: k, QHeads: hq, KVHeads: hkv, Len: l, Dim: d}); err != nil {
				t.Error(err)
			}
		})
		runtime.GC()
		requireFreed(t, freed, 2, func() {})
	})

	t.Run("control", func(t *testing.T) {
		var kept []fp16.Float16
		freed := watchInputs(t, "K", "Q", func(k []fp16.Float16, q []float32) { kept = k })
		requireFreed(t, freed, 1, func() { runtime.GC() }) // Q only
		deadline := time.After(100 * time.Millisecond)
		for waiting := true; waiting; {
			select {
			case w := <-watched:
				if w.round == freed {
					t.Errorf("%s was freed while the control held it", w.name)
				}
			case <-deadline:
				waiting = false
			}
		}
		runtime.KeepAlive(kept)
	})
}

// watched receives the names of the watched arrays that were freed, tagged with the
// round that watched them (an earlier round's arrays may be freed late, once what
// pinned them is gone). The tests that use it run one at a time.
var (
	watched = make(chan watch, 16)
	round   int
)

type watch struct {
	name  string
	round int
}

// watchInputs allocates a prompt's keys ([2][64][32]: KVHeads 2, Len 64, Dim 32; the
// caches take them as V too) and window queries ([4][4][32]), attaches a cleanup
// naming each (Q's only if qName is "Q"), and hands them to call; once it returns,
// only what call kept refers to them. It returns the round's number.
//
//go:noinline
func watchInputs(t *testing.T, kName, qName string, call func(k []fp16.Float16, q []float32)) int {
	t.Helper()
	round++
	r := rand.New(rand.NewPCG(7, 31))
	kv := make([]float32, 2*64*32)
	for i := range kv {
		kv[i] = float32(r.NormFloat64())
	}
	k := make([]fp16.Float16, len(kv))
	fp16.FromFloat32(k, kv)
	q := make([]float32, 4*4*32)
	for i := range q {
		q[i] = float32(r.NormFloat64())
	}
	watchFree(&k[0], kName)
	if qName == "Q" {
		watchFree(&q[0], qName)
	}
	call(k, q)
	return round
}

// watchFree reports on watched, tagged with the current round, when p's array is freed.
func watchFree[T any](p *T, name string) {
	runtime.AddCleanup(p, func(w watch) { watched <- w }, watch{name, round})
}

// requireFreed waits up to two seconds for n of round's arrays to be freed, calling
// collect before each wait.
func requireFreed(t *testing.T, round, n int, collect func()) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	var got []string
	for len(got) < n && time.Now().Before(deadline) {
		collect()
		select {
		case w := <-watched:
			if w.round == round {
				got = append(got, w.name)
			}
		case <-time.After(20 * time.Millisecond):
		}
	}
	if len(got) < n {
		t.Fatalf("freed %v, want %d arrays freed: something kept a reference to the call's inputs", got, n)
	}
}
