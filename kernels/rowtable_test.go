package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/kvsimd/kvsimd/internal/dispatch"
)

// tableKernels are one format's row kernels in both forms, over rows of T: halves,
// float32s, or q8_0 blocks as bytes (unit 34 bytes to a block of 32 values).
type tableKernels[T any] struct {
	name        string
	perElem     int // values to a unit of T
	unit        int // T to a unit
	scores      *dispatch.Func[func(dst, q []float32, k, ahead []T, rows, n, dim, stride int, scale float32)]
	add         *dispatch.Func[func(dst, w []float32, v, ahead []T, rows, n, stride int)]
	scoresTable *dispatch.Func[rowTableScores]
	addTable    *dispatch.Func[rowTableAdd]
	random      func(rng *rand.Rand) T // any bits: NaN, ±Inf and subnormals among them
}

// TestRowTableKernels holds the row kernels over tables of row addresses to the
// stride kernels' bits on every variant that has them: the same rows, once packed
// stride apart and once each in an allocation of its own, in shuffled order, with
// values of any bits (the kernels compute the same operations in the same order, so
// even NaN payloads agree), every tile and tail of keys and dims, 1 to 6 query rows,
// ahead empty or not; guards after dst stay untouched.
func TestRowTableKernels(t *testing.T) {
	half := func(rng *rand.Rand) uint16 { return uint16(rng.Uint32()) }
	testRowTable(t, tableKernels[uint16]{"fp16", 1, 1, scoresAhead, weightedSumRowsAdd, scoresTableFP16, addTableFP16, half})
	testRowTable(t, tableKernels[uint16]{"bf16", 1, 1, scoresAheadBF16, weightedSumRowsAddBF16, scoresTableBF16, addTableBF16, half})
	testRowTable(t, tableKernels[byte]{"q8_0", 32, q8BlockSize, scoresAheadQ8, weightedSumRowsAddQ8, scoresTableQ8, addTableQ8,
		func(rng *rand.Rand) byte { return byte(rng.Uint32()) }})
	testRowTable(t, tableKernels[float32]{"f32", 1, 1, scoresAheadF32, weightedSumRowsAddF32, scoresTableF32, addTableF32,
		func(rng *rand.Rand) float32 { return math.Float32frombits(rng.Uint32()) }})
}

func testRowTable[T any](t *testing.T, k tableKernels[T]) {
	rng := rand.New(rand.NewPCG(47, uint64(k.unit)))
	dims := []int{1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 128, 200, 256}
	ns := []int{1, 2, 3, 4, 5, 7, 8, 16, 17, 19, 20, 21, 63, 100, attendBlock}
	if k.perElem > 1 {
		dims = []int{32, 64, 96, 128, 160, 256}
	}
	if testing.Short() {
		dims, ns = dims[len(dims)/2:], []int{1, 3, 4, 5, 17, 21, attendBlock}
	}
	const guard = 8
	var variants []string
	for _, variant := range dispatch.Tested() {
		if k.scoresTable.For(variant) != nil { // others take a block a page at a time
			variants = append(variants, variant)
		}
	}
	if len(variants) == 0 {
		t.Skip("no variant here has row kernels over tables (amd64's alone do)")
	}
	for _, variant := range variants {
		scoresTable, addTable := k.scoresTable.For(variant), k.addTable.For(variant)
		scores, add := k.scores.For(variant), k.add.For(variant)
		for _, dim := range dims {
			for _, n := range ns {
				rows := 1 + rng.IntN(6)
				name := fmt.Sprintf("%s %s rows %d dim %d n %d", k.name, variant, rows, dim, n)
				units := dim / k.perElem
				stride := units + rng.IntN(3)
				packed := k.values(rng, (n*stride+1)*k.unit)
				ahead := k.values(rng, (n*stride+1)*k.unit)
				kt, at := k.scatter(rng, packed, n, units, stride), k.scatter(rng, ahead, n, units, stride)
				if rng.IntN(2) == 0 {
					ahead, at = nil, nil
				}
				q := make([]float32, rows*dim)
				for i := range q {
					q[i] = float32(rng.NormFloat64())
				}
				want, got := make([]float32, rows*n+guard), make([]float32, rows*n+guard)
				for i := range want {
					want[i] = float32(i)
					got[i] = float32(i)
				}
				scores(want[:rows*n], q, packed, ahead, rows, n, dim, stride, 0.125)
				scoresTable(got[:rows*n], q, kt.rows, at.list(), rows, n, dim, 0.125)
				sameBits(t, name+" scores", got, want)

				r := min(rows, attendRows)
				w := make([]float32, (r-1)*attendBlock+n)
				for i := range w {
					w[i] = rng.Float32()*2 - 1
				}
				want, got = make([]float32, r*dim+guard), make([]float32, r*dim+guard)
				for i := range want {
					want[i] = rng.Float32()
					got[i] = want[i]
				}
				add(want[:r*dim], w, packed, ahead, r, n, stride)
				addTable(got[:r*dim], w, kt.rows, at.list(), r, n)
				sameBits(t, name+" weighted sums", got, want)
				kt.keep()
				at.keep()
			}
		}
	}
}

func (k tableKernels[T]) values(rng *rand.Rand, count int) []T {
	x := make([]T, count)
	for i := range x {
		x[i] = k.random(rng)
	}
	return x
}

// scattered are rows copied each into an allocation of its own (with a guard of
// random bits after it), and the table of their addresses.
type scattered[T any] struct {
	rows   []uintptr
	allocs [][]T
}

// scatter copies the n rows of units units, stride apart in packed, into allocations
// made in a shuffled order.
func (k tableKernels[T]) scatter(rng *rand.Rand, packed []T, n, units, stride int) *scattered[T] {
	s := &scattered[T]{rows: make([]uintptr, n), allocs: make([][]T, n)}
	for _, j := range rng.Perm(n) {
		row := k.values(rng, (units+1)*k.unit)
		copy(row, packed[j*stride*k.unit:][:units*k.unit])
		s.allocs[j] = row
		s.rows[j] = uintptr(unsafe.Pointer(unsafe.SliceData(row)))
	}
	return s
}

// list is the table, or nil for no rows.
func (s *scattered[T]) list() []uintptr {
	if s == nil {
		return nil
	}
	return s.rows
}

// keep holds the rows alive until here: the table holds bare addresses.
func (s *scattered[T]) keep() {
	if s != nil {
		runtime.KeepAlive(s.allocs)
	}
}

// sameBits fails unless got and want hold the same bits.
func sameBits(t *testing.T, name string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: %d: %v (%#x), the stride form %v (%#x)", name, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}
