package snapkv_test

import (
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/kvsimd/kvsimd/snapkv"
)

// TestNoGoroutineOutlivesCall: a thousand caches of the default Workers (GOMAXPROCS 4,
// four KV heads: three helpers per selection) leave no goroutine behind once prefilled.
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
	const hq, hk, n, w, d = 4, 4, 40, 4, 8
	l := newLayer(r, hq, hk, n, w, d)
	before := runtime.NumGoroutine()
	caches := make([]*snapkv.Cache, 1000)
	most := before // right after a prefill
	for i := range caches {
		cfg := snapkv.CacheConfig{Select: snapkv.Config{Budget: 16, Window: w, Kernel: 3}, Mode: snapkv.Mode(i % 2), QHeads: hq, KVHeads: hk, Dim: d}
		c, err := snapkv.NewCache(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.feed(c, 25, 0); err != nil {
			t.Fatal(err)
		}
		caches[i] = c
		most = max(most, runtime.NumGoroutine())
	}
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(time.Second); after != before && time.Now().Before(deadline); after = runtime.NumGoroutine() {
		runtime.Gosched()
	}
	if after != before {
		t.Fatalf("%d goroutines before 1,000 prefills, at most %d right after one, %d a second after the last", before, most, after)
	}
	t.Logf("%d goroutines before, at most %d right after a prefill, %d after yielding", before, most, after)
}
