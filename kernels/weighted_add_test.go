package kernels

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/internal/dispatch"
)

// addKernel is one format's accumulating weighted sum with the rows of v in its own
// element type: fp16 or bf16 halves, or q8_0 blocks as bytes (stride in blocks).
type addKernel[T any] struct {
	name     string
	perElem  int
	add      *dispatch.Func[func(dst, w []float32, v, ahead []T, rows, n, stride int)]
	single   *dispatch.Func[func(dst, w []float32, v []T, stride int)]
	generic  func(dst, w []float32, v, ahead []T, rows, n, stride int)
	elements func(rng *rand.Rand, n int) []T // random finite values of n elements
	vMax     float64                         // bounds |value| of those elements
}

// TestWeightedSumRowsAdd holds the fused attention's accumulating sums to their
// contract on every variant: row i of dst gets the chain of fused multiply-adds that a
// one-row call gives it (so the rows do not disturb each other, whatever the passes
// and groups), a one-row call into zeros gives WeightedSumRows' bits, and the sums
// are those of the generic loop within its rounding. Guards after dst stay untouched.
func TestWeightedSumRowsAdd(t *testing.T) {
	halves := func(mask uint16) func(rng *rand.Rand, n int) []uint16 {
		return func(rng *rand.Rand, n int) []uint16 {
			v := make([]uint16, n)
			for i := range v {
				v[i] = uint16(rng.Uint32())&mask | uint16(rng.Uint32()&0x8000)
			}
			return v
		}
	}
	blocks := func(rng *rand.Rand, n int) []byte {
		b := make([]byte, n*q8BlockSize)
		for i := range n {
			binary.NativeEndian.PutUint16(b[i*q8BlockSize:], uint16(rng.IntN(0x3c00)))
			for j := 2; j < q8BlockSize; j++ {
				b[i*q8BlockSize+j] = byte(rng.Uint32())
			}
		}
		return b
	}
	testAdd(t, addKernel[uint16]{"fp16", 1, weightedSumRowsAdd, weightedSumRows, weightedSumRowsAddGeneric, halves(0x3fff), 2})
	testAdd(t, addKernel[uint16]{"bf16", 1, weightedSumRowsAddBF16, weightedSumRowsBF16, weightedSumRowsAddBF16Generic, halves(0x407f), 4})
	testAdd(t, addKernel[byte]{"q8_0", 32, weightedSumRowsAddQ8, weightedSumRowsQ8, weightedSumRowsAddQ8Generic, blocks, 127})
}

func testAdd[T any](t *testing.T, k addKernel[T]) {
	rng := rand.New(rand.NewPCG(31, uint64(k.perElem)))
	dims := []int{1, 2, 3, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 64, 100, 128, 200, 256, 448, 1000}
	ns := []int{0, 1, 2, 3, 5, 63, 64, 65, 127, 130, attendBlock}
	if k.perElem > 1 {
		dims = []int{32, 64, 96, 128, 160, 192, 256, 384, 512, 1024}
	}
	if testing.Short() { // the emulators' runs: every pass count and tail still
		ns = []int{0, 1, 5, 65, attendBlock}
		dims = []int{1, 7, 16, 17, 33, 128, 200, 1000}
		if k.perElem > 1 {
			dims = []int{32, 96, 128, 384}
		}
	}
	const guard = 8
	for _, variant := range dispatch.Tested() {
		add, single := k.add.For(variant), k.single.For(variant)
		for rows := 1; rows <= attendRows; rows++ {
			for _, dim := range dims {
				for _, n := range ns {
					name := fmt.Sprintf("%s %s rows %d dim %d n %d", k.name, variant, rows, dim, n)
					stride := dim/k.perElem + rng.IntN(3) // elements
					w := make([]float32, (rows-1)*attendBlock+n)
					for i := range w {
						w[i] = rng.Float32()*2 - 1
					}
					v := k.elements(rng, n*stride+dim/k.perElem)
					dst := make([]float32, rows*dim+guard)
					for i := range dst {
						dst[i] = rng.Float32()*4 - 2
					}
					// Half the calls prefetch rows laid out as v's (the next block's
					// keys), which must change no result: the one-row calls do not.
					var ahead []T
					if rng.IntN(2) == 0 {
						ahead = k.elements(rng, n*stride+dim/k.perElem)
					}
					got := append([]float32(nil), dst...)
					add(got[:rows*dim], w, v, ahead, rows, n, stride)
					for i := range rows {
						one := append([]float32(nil), dst[i*dim:(i+1)*dim]...)
						add(one, w[i*attendBlock:][:n], v, nil, 1, n, stride)
						for d := range one {
							if got[i*dim+d] != one[d] {
								t.Fatalf("%s: row %d column %d: %v, one row alone %v", name, i, d, got[i*dim+d], one[d])
							}
						}
					}
					for i := rows * dim; i < len(got); i++ {
						if got[i] != dst[i] {
							t.Fatalf("%s: guard %d overwritten", name, i-rows*dim)
						}
					}
					loop := append([]float32(nil), dst...)
					k.generic(loop[:rows*dim], w, v, nil, rows, n, stride)
					for i := range rows * dim {
						// Each is a chain of n+1 terms, |w| < 1, |v| < vMax and |dst| < 2,
						// rounded differently: within 2·2·(n+1)·2⁻²⁴·(2 + n·vMax) of the other.
						if d := float64(got[i] - loop[i]); d*d > sq(4*float64(n+1)*0x1p-24*(2+float64(n)*k.vMax)) {
							t.Fatalf("%s: %d: %v, the generic loop %v", name, i, got[i], loop[i])
						}
					}
					if n > 0 {
						zero := make([]float32, dim)
						add(zero, w[:n], v, nil, 1, n, stride)
						ref := make([]float32, dim)
						span := (n-1)*stride + dim/k.perElem
						if k.perElem > 1 {
							span *= q8BlockSize // v holds the blocks' bytes
						}
						single(ref, w[:n], v[:span], stride)
						for d := range zero {
							if zero[d] != ref[d] {
								t.Fatalf("%s: column %d: %v into zeros, WeightedSumRows %v", name, d, zero[d], ref[d])
							}
						}
					}
				}
			}
		}
	}
}

func sq(x float64) float64 { return x * x }
