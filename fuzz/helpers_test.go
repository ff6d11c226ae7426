package fuzz

import (
	"encoding/binary"
	"math"
	"slices"
)

// float32s reads little-endian float32 bit patterns from data (a trailing partial
// word is dropped), so the fuzzer reaches every NaN payload and subnormal.
func float32s(data []byte) []float32 {
	f := make([]float32, len(data)/4)
	for i := range f {
		f[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return f
}

// uint16s reads little-endian 16-bit words from data.
func uint16s(data []byte) []uint16 {
	u := make([]uint16, len(data)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(data[2*i:])
	}
	return u
}

// sameElems reports whether a and b hold the same elements bit for bit: float32s by
// their bits (a NaN equal to itself), the other formats' elements by ==.
func sameElems[E comparable](a, b []E) bool {
	if af, ok := any(a).([]float32); ok {
		return slices.EqualFunc(af, any(b).([]float32), func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
	}
	return slices.Equal(a, b)
}
