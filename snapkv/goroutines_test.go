package snapkv_test

import (
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// TestNoGoroutineOutlivesCall: a thousand caches of the default Workers (GOMAXPROCS 4,
// four KV heads: three helpers per selection), of the three formats in turn, leave no
// goroutine behind once prefilled.
//
// The garbage collector is off for the test and never called: before, a Selector's
// helpers ran until a cleanup closed their channel after the Selector was collected,
// so every prefill would have left three goroutines behind (3,000 here) and nothing
// would have stopped them. A helper's last act is to tell the caller it is done, so
// one may still be a few instructions from its end when the call returns; the test
// lets them finish (yielding, for at most a second) and then wants exactly as many
// goroutines as before.
func TestNoGoroutineOutlivesCall(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	r := rand.New(rand.NewPCG(61, 62))
	const hq, hk, n, w, d = 4, 4, 40, 4, 32
	l := newLayer(r, hq, hk, n, w, d)
	kb, vb := keysAs[bf16.BFloat16](t, l.k), randomRows[bf16.BFloat16](r, hk*n*d)
	kq, vq := keysAs[q8.Block](t, l.k), randomRows[q8.Block](r, hk*n*d/32)
	before := runtime.NumGoroutine()
	caches := make([]any, 1000) // kept alive to the end
	most := before              // right after a prefill
	for i := range caches {
		cfg := snapkv.CacheConfig{Select: snapkv.Config{Budget: 16, Window: w, Kernel: 3}, Mode: snapkv.Mode(i % 2), QHeads: hq, KVHeads: hk, Dim: d}
		var err error
		switch i % 3 {
		case 0:
			caches[i], err = newFed(l, l.k, l.v, cfg)
		case 1:
			caches[i], err = newFed(l, kb, vb, cfg)
		default:
			caches[i], err = newFed(l, kq, vq, cfg)
		}
		if err != nil {
			t.Fatal(err)
		}
		most = max(most, runtime.NumGoroutine())
	}
	// Fewer after than before is fine: an earlier test's goroutine may have been on
	// its way out when before was counted.
	after := settleGoroutines(before)
	if after > before {
		t.Fatalf("%d goroutines before 1,000 prefills, at most %d right after one, %d a second after the last", before, most, after)
	}
	t.Logf("%d goroutines before, at most %d right after a prefill, %d after yielding", before, most, after)
}

// newFed returns a cache of cfg prefilled with the layer's queries and the prompt k
// and v in chunks of 25 rows.
func newFed[E snapkv.Element](l *layer, k, v []E, cfg snapkv.CacheConfig) (*snapkv.CacheOf[E], error) {
	c, err := snapkv.NewCacheOf[E](cfg)
	if err != nil {
		return nil, err
	}
	return c, feedOf(l, c, k, v, 25, 0)
}

// settleGoroutines yields, for at most a second, until at most limit goroutines are
// left, and returns how many are. A helper's last act is to tell the caller it is
// done, so one may still be a few instructions from its end when the call returns.
func settleGoroutines(limit int) int {
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(time.Second); n > limit && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		runtime.Gosched()
	}
	return n
}
