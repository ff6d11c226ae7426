package llama

import (
	"path/filepath"
	"testing"

	"github.com/kvsimd/kvsimd/internal/longtest"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/snapkv"
)

// TestStreamAgainstPyTorch runs the streaming study on the 32 public prompts with the
// fp16 cache and holds every cell to PyTorch's results-stream.json: the count within 1
// (a float32 reimplementation may break a near tie the other way and change one
// answer), the peak rows exactly, and at most two prompts per cell whose answers differ.
// -short (arm64 under qemu), a run without KVSIMD_LONG=1 (internal/longtest) and the
// generic variant (purego builds, where the 32 prompts fed byte by byte take minutes)
// run the first 2 prompts: the peaks, and at most one answer per cell other than
// PyTorch's.
func TestStreamAgainstPyTorch(t *testing.T) {
	m := testModel(t)
	ps, _ := testPrompts(t)
	ref, err := LoadStreamReference(filepath.Join(modelDir, "results-stream.json"))
	if err != nil {
		t.Fatal(err)
	}
	subset := longtest.Short() || kernels.Active() == "generic"
	if subset {
		ps = ps[:2]
	}
	out, err := m.EvaluateStream(FP16, ps, StreamMethods())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out {
		correct, peak, pred, ok := ref.Lookup(o.StreamRow)
		if o.Method.Decode == snapkv.DecodeLongRange {
			checkLongRange(t, o)
			continue
		}
		if !ok {
			t.Errorf("%s: no reference", StreamKey(o.StreamRow))
			continue
		}
		key := StreamKey(o.StreamRow)
		if o.PeakRows != peak {
			t.Errorf("%s: peak %d rows, PyTorch %d", key, o.PeakRows, peak)
		}
		if d := o.Correct - correct; !subset && (d < -1 || d > 1) {
			t.Errorf("%s: %d/32 correct, PyTorch %d/32", key, o.Correct, correct)
		}
		differ := 0
		for i, p := range o.Preds {
			if p != pred[i] {
				differ++
				t.Logf("%s: prompt %d: Go %q, PyTorch %q (answer %q)", key, ps[i].ID, p, pred[i], ps[i].Answer)
			}
		}
		most := 2
		if subset {
			most = 1
		}
		if differ > most {
			t.Errorf("%s: %d of %d answers differ from PyTorch's", key, differ, len(o.Preds))
		}
	}
}

// checkLongRange holds the fourth rule, which PyTorch does not run, to its peak and,
// on all 32 prompts, to the target at budget 128, interval 32: 16 or more.
func checkLongRange(t *testing.T, o StreamOutcome) {
	t.Helper()
	if o.PeakRows != o.Budget+o.Interval-1 {
		t.Errorf("long-range B=%d I=%d: peak %d rows, want %d", o.Budget, o.Interval, o.PeakRows, o.Budget+o.Interval-1)
	}
	if o.Total == 32 && o.Budget == 128 && o.Interval == 32 && o.Correct < 16 {
		t.Errorf("long-range B=128 I=32: %d/32 correct, want at least 16", o.Correct)
	}
	t.Logf("long-range B=%d I=%d: %d/%d", o.Budget, o.Interval, o.Correct, o.Total)
}
