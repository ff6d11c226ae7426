package aligned_test

import (
	"testing"
	"unsafe"

	"github.com/kvsimd/kvsimd/aligned"
	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/q8"
)

// check holds Make[E](n) to its contract: len and cap n, zeros, the first element on
// the boundary, and writable without touching another call's slice.
func check[E comparable](t *testing.T, name string) {
	t.Helper()
	var prev []E
	for n := range 300 {
		s := aligned.Make[E](n)
		if len(s) != n || cap(s) != n {
			t.Fatalf("%s n=%d: len %d, cap %d", name, n, len(s), cap(s))
		}
		var zero E
		for i, x := range s {
			if x != zero {
				t.Fatalf("%s n=%d: s[%d] is not zero", name, n, i)
			}
		}
		if n == 0 {
			continue
		}
		if at := uintptr(unsafe.Pointer(&s[0])); at%aligned.Boundary != 0 {
			t.Fatalf("%s n=%d: starts at %#x", name, n, at)
		}
		// Filling this one with ones leaves the previous one, filled with its own
		// pattern, as it was.
		if prev != nil {
			fill(s, 0xff)
			for i, b := range bytesOf(prev) {
				if b != byte(len(prev)) {
					t.Fatalf("%s n=%d: writing the new slice changed byte %d of the previous one", name, n, i)
				}
			}
		}
		fill(s, byte(n))
		prev = s
	}
}

// bytesOf is the memory of s, len(s) elements.
func bytesOf[E any](s []E) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), uintptr(len(s))*unsafe.Sizeof(s[0]))
}

func fill[E any](s []E, v byte) {
	b := bytesOf(s)
	for i := range b {
		b[i] = v
	}
}

func TestMake(t *testing.T) {
	check[float32](t, "float32")
	check[fp16.Float16](t, "fp16")
	check[bf16.BFloat16](t, "bf16")
	check[q8.Block](t, "q8.Block")
	check[int32](t, "int32")
	check[byte](t, "byte")
	check[float64](t, "float64")
	check[[3]byte](t, "[3]byte")
	check[[12]float64](t, "[12]float64") // 96 bytes: a multiple of 32, not of 64
	check[[16]float32](t, "[16]float32") // 64 bytes: one element a boundary
	if s := aligned.Make[struct{}](5); len(s) != 5 {
		t.Fatalf("zero-size elements: len %d", len(s))
	}
}

func TestMakeNegative(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Make(-1) did not panic")
		}
	}()
	aligned.Make[float32](-1)
}
