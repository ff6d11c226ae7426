package halftable_test

import (
	"math"
	"testing"

	"github.com/kvsimd/kvsimd/internal/halftable"
	"github.com/x448/float16"
)

// TestTable: every entry is x448's widening, bit for bit, NaN payloads included.
func TestTable(t *testing.T) {
	table := halftable.Table()
	for h := range 1 << 16 {
		if got, want := math.Float32bits(table[h]), math.Float32bits(float16.Frombits(uint16(h)).Float32()); got != want {
			t.Fatalf("half %#04x: %#08x, x448 %#08x", h, got, want)
		}
	}
}
