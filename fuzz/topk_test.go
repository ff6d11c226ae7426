package fuzz

import (
	"testing"

	"github.com/kvsimd/kvsimd/internal/varianttest"

	"github.com/kvsimd/kvsimd/internal/oracle"
	"github.com/kvsimd/kvsimd/kernels"
)

// topkMaxLen and topkMaxValues cap the fuzzed rows and the distinct values in them:
// long enough for every path of TopK (sampling from 64 elements, filter blocks of 2048,
// candidates outgrowing their buffers past 2k + 4096), small enough for a million
// executions in a two-minute run. Longer data is passed over, so that no input the
// fuzzer keeps, and must minimize, is longer than what the target reads.
const topkMaxLen, topkMaxValues = 1 << 13, 1 << 9

// FuzzTopK checks every variant against TopK's ranking (oracle.CheckTopK). The fuzzed
// values are repeated out to length n, so that a few bytes also make long inputs with
// many ties, the threshold's hardest case.
func FuzzTopK(f *testing.F) {
	f.Add([]byte{0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0xc0, 0x7f, 0x00, 0x00, 0x80, 0xff, 0x00, 0x00, 0x00, 0x80}, uint16(0), 2)
	f.Add([]byte{0x00, 0x00, 0x80, 0x3f, 0x01, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x80, 0x7f}, uint16(5000), 1700)
	f.Fuzz(func(t *testing.T, data []byte, n uint16, k int) {
		if len(data) > 4*topkMaxValues {
			return
		}
		x := float32s(data)
		if values, n := x, int(n)%(topkMaxLen+1); len(values) > 0 && n > len(values) {
			x = make([]float32, n)
			for i := range x {
				x[i] = values[i%len(values)]
			}
		}
		dst := make([]int32, 0, len(x))
		varianttest.Each(t, func(v string) {
			got := kernels.TopK(dst, x, k)
			if err := oracle.CheckTopK(x, k, got); err != nil {
				t.Fatalf("%s: TopK(n=%d, k=%d): %v", v, len(x), k, err)
			}
		})
	})
}
