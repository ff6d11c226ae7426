package asm

import (
	"math"
	"testing"
)

// TestSelect checks that Unselect recovers the variant and len(b) from what Select
// encodes, and that sel is the variant's number exactly when the lengths agree, at
// lengths up to 2³¹−1 on a 32-bit GOARCH, and up to 2⁵⁵−1 on a 64-bit one, past what
// any slice of two-byte elements can hold.
func TestSelect(t *testing.T) {
	lengths := []int{0, 1, 2, 255, 256, 1 << 16, math.MaxInt32, math.MaxInt >> 16, math.MaxInt >> 8}
	for _, isa := range []uint8{0, ISAAVX2, ISAAVX512, ISANEON, ISANEONFHM, 255} {
		for _, na := range lengths {
			for _, nb := range lengths {
				sel := Select(isa, na, nb)
				if gotISA, gotNB := Unselect(na, sel); gotISA != isa || gotNB != nb {
					t.Errorf("Unselect(%d, Select(%d, %d, %d)) = %d, %d", na, isa, na, nb, gotISA, gotNB)
				}
				if (sel == int64(isa)) != (na == nb) {
					t.Errorf("Select(%d, %d, %d) = %#x", isa, na, nb, sel)
				}
			}
		}
	}
}
