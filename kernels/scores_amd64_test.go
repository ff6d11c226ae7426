//go:build !purego && !noasm

package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvsimd/kvsimd/internal/dispatch"
)

// TestScoresPanels runs the panel kernels on their own, at the shapes that Scores
// itself sends to the row kernels (few keys, few rows), so that every key and row
// tail of theirs is covered without large inputs.
func TestScoresPanels(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	dims := scoresDims
	rowCounts := []int{1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 64, 65, 129}
	keyCounts := []int{1, 2, 5, 6, 7, 11, 12, 13, 21}
	if testing.Short() { // for emulators: every tail once
		dims, rowCounts, keyCounts = []int{1, 7, 9, 17, 64, 128, 256}, []int{1, 17, 33, 65}, []int{1, 7, 13}
	}
	for _, isa := range panelISAs() {
		for _, dim := range dims {
			if !panelFits(dim, isa.group, isa.blockKeys) {
				continue
			}
			for _, rows := range rowCounts {
				for _, n := range keyCounts {
					q, k := randomF32(r, rows*dim), randomF16(r, n*dim)
					checkScoresOf(t, "panels", []string{isa.variant}, isa.impl, q, k, rows, n, dim, float32(r.NormFloat64()))
				}
			}
		}
	}
}

// TestScoresPanelsBlocks runs the panel kernels at every key count up to a few of
// their key blocks (blockKeys, 16 or 24), so that full blocks, a last block of every
// length (whose keys past a multiple of Lanes are copied one by one) and partial last
// panels all occur.
func TestScoresPanelsBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	dims, rowCounts := []int{1, 7, 64, 128, 256}, []int{1, 5, 31, 32, 33}
	if testing.Short() {
		dims, rowCounts = []int{7, 128}, []int{5, 33}
	}
	for _, isa := range panelISAs() {
		lanes := isa.group / groupVectors
		for _, dim := range dims {
			if !panelFits(dim, isa.group, isa.blockKeys) {
				continue
			}
			// Every key count up to three blocks at small dims; at large ones, those
			// around a vector and each block boundary.
			var keyCounts []int
			for n := 1; n <= 3*isa.blockKeys+1; n++ {
				m := n % isa.blockKeys
				if dim < 64 || n < 3 || m <= 1 || m == isa.blockKeys-1 || m%lanes <= 1 || m%lanes == lanes-1 {
					keyCounts = append(keyCounts, n)
				}
			}
			for _, rows := range rowCounts {
				for _, n := range keyCounts {
					q, k := randomF32(r, rows*dim), randomF16(r, n*dim)
					checkScoresOf(t, "panels", []string{isa.variant}, isa.impl, q, k, rows, n, dim, 0.125)
				}
			}
		}
	}
}

// TestScoresPanelsSpread runs the panel kernels over several panels and key blocks, at
// dims whose tile loops write the rows of the previous flush while they run (AVX-512:
// gen/amd64/dot's spreads) and at dims too short to write them all, so that rows wait
// across panels and blocks, a partial last panel leaves some unwritten, and the last
// block's rows go out at the end. n = 64 puts the rows 256 bytes apart, as the cliff's
// multiples of 4 KiB do for the sets.
func TestScoresPanelsSpread(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 1))
	dims, rowCounts, keyCounts := []int{4, 7, 64, 96, 128, 256}, []int{33, 64, 65, 97, 129}, []int{47, 48, 64, 81}
	if testing.Short() {
		dims, rowCounts, keyCounts = []int{7, 128}, []int{65}, []int{48, 81}
	}
	for _, isa := range panelISAs() {
		for _, dim := range dims {
			if !panelFits(dim, isa.group, isa.blockKeys) {
				continue
			}
			for _, rows := range rowCounts {
				for _, n := range keyCounts {
					q, k := randomF32(r, rows*dim), randomF16(r, n*dim)
					checkScoresOf(t, "panels", []string{isa.variant}, isa.impl, q, k, rows, n, dim, 0.125)
				}
			}
		}
	}
}

func TestScoresPanelsSpecial(t *testing.T) {
	const n = 13
	r := rand.New(rand.NewPCG(9, 9))
	for _, isa := range panelISAs() {
		eachScoresSpecial(r, []int{1, 16, 21}, n, func(name string, q []float32, k []uint16, rows, dim int) {
			checkScoresOf(t, name+" (panels)", []string{isa.variant}, isa.impl, q, k, rows, n, dim, -0.5)
		})
	}
}

type panelISA struct {
	variant          string
	group, blockKeys int
	impl             func(string) scoresFunc
}

// panelISAs lists the panel kernels this CPU runs, as implementations for checkScoresOf.
func panelISAs() []panelISA {
	var isas []panelISA
	for _, c := range []struct {
		variant          string
		group, blockKeys int
	}{{"avx2", groupAVX2, blockKeysAVX2}, {"avx512", groupAVX512, blockKeysAVX512}} {
		if !slices.Contains(dispatch.Tested(), c.variant) {
			continue
		}
		avx512 := c.variant == "avx512"
		isas = append(isas, panelISA{c.variant, c.group, c.blockKeys, func(string) scoresFunc {
			return func(dst, q []float32, k []uint16, rows, n, dim, stride int, scale float32) {
				scoresPanels(avx512, dst, q, k, rows, n, dim, stride, scale)
			}
		}})
	}
	return isas
}

// TestScoresRowsTiles holds the row kernels to one set of bits per score whatever tile
// it falls in: each key scored alone and each query row alone (the kernels' smallest
// tiles, reduced by reduceLanes) give the bits of the whole block (AVX-512's 4 × 4
// tiles, reduced by reduceTile in the same order).
func TestScoresRowsTiles(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 12))
	for _, v := range dispatch.Tested() {
		if v == dispatch.Generic {
			continue
		}
		for _, dim := range []int{1, 16, 17, 64, 128} {
			for _, n := range []int{4, 9, 17} {
				const rows = 9 // two tiles of 4 rows and one of 1
				q, k := randomF32(r, rows*dim), randomF16(r, n*dim)
				block := make([]float32, rows*n)
				scores.For(v)(block, q, k, rows, n, dim, dim, 0.5)
				one := make([]float32, 1)
				for i := range rows {
					for j := range n {
						scores.For(v)(one, q[i*dim:(i+1)*dim], k[j*dim:(j+1)*dim], 1, 1, dim, dim, 0.5)
						if math.Float32bits(one[0]) != math.Float32bits(block[i*n+j]) {
							t.Fatalf("%s dim %d n %d: score (%d, %d) alone %v, in the block %v", v, dim, n, i, j, one[0], block[i*n+j])
						}
					}
				}
			}
		}
	}
}
