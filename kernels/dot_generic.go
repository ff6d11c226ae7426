package kernels

import "github.com/x448/float16"

// halfFloat32 widens one fp16 bit pattern exactly, as x448 does.
func halfFloat32(h uint16) float32 { return float16.Frombits(h).Float32() }

func dotF16Generic(a, b []uint16) float32 {
	b = b[:len(a)]
	var s float32
	for i, h := range a {
		s += halfFloat32(h) * halfFloat32(b[i])
	}
	return s
}

func dotF32F16Generic(a []float32, b []uint16) float32 {
	b = b[:len(a)]
	var s float32
	for i, x := range a {
		s += x * halfFloat32(b[i])
	}
	return s
}

func dotF32Generic(a, b []float32) float32 {
	b = b[:len(a)]
	var s float32
	for i, x := range a {
		s += x * b[i]
	}
	return s
}
