package kernels

import "math"

// The generic loops that widen each element in registers as they use it: the dot
// products, and the weighted sum of a single output row. They keep partialDots' order
// and the order of j of the weighted sums, so they give the bits of the loops over
// widened buffers (generic_widen.go) that the score block and the fused attention use.

// addHalves accumulates a·b over halves b.
func (s partialDots) addHalves(a []float32, b []uint16, t *[1 << 16]float32) partialDots {
	s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
	b = b[:len(a)]
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x, y := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += x[0] * t[y[0]]
		s1 += x[1] * t[y[1]]
		s2 += x[2] * t[y[2]]
		s3 += x[3] * t[y[3]]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * t[b[i]]
	}
	return partialDots{s0, s1, s2, s3}
}

// addHalfPairs accumulates a·b over halves a and b.
func (s partialDots) addHalfPairs(a, b []uint16, t *[1 << 16]float32) partialDots {
	s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
	b = b[:len(a)]
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x, y := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += t[x[0]] * t[y[0]]
		s1 += t[x[1]] * t[y[1]]
		s2 += t[x[2]] * t[y[2]]
		s3 += t[x[3]] * t[y[3]]
	}
	for ; i < len(a); i++ {
		s0 += t[a[i]] * t[b[i]]
	}
	return partialDots{s0, s1, s2, s3}
}

// addBF16 accumulates a·b over bfloat16 b.
func (s partialDots) addBF16(a []float32, b []uint16) partialDots {
	s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
	b = b[:len(a)]
	i := 0
	for ; i+4 <= len(a); i += 4 {
		x, y := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += x[0] * math.Float32frombits(uint32(y[0])<<16)
		s1 += x[1] * math.Float32frombits(uint32(y[1])<<16)
		s2 += x[2] * math.Float32frombits(uint32(y[2])<<16)
		s3 += x[3] * math.Float32frombits(uint32(y[3])<<16)
	}
	for ; i < len(a); i++ {
		s0 += a[i] * math.Float32frombits(uint32(b[i])<<16)
	}
	return partialDots{s0, s1, s2, s3}
}

// addQ8 accumulates a·b over the len(a)/32 q8_0 blocks at the start of b.
func (s partialDots) addQ8(a []float32, b []byte) partialDots {
	s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
	t := &int8Float32
	for i := 0; i < len(a); i += 32 {
		block := b[i/32*q8BlockSize:][:q8BlockSize]
		d := q8Scale(block)
		x, q := a[i:i+32:i+32], block[2:q8BlockSize]
		for k := 0; k < 32; k += 4 {
			x4, q4 := x[k:k+4:k+4], q[k:k+4:k+4]
			s0 += x4[0] * (t[q4[0]] * d)
			s1 += x4[1] * (t[q4[1]] * d)
			s2 += x4[2] * (t[q4[2]] * d)
			s3 += x4[3] * (t[q4[3]] * d)
		}
	}
	return partialDots{s0, s1, s2, s3}
}

// dot is a·(row j).
func (r cacheRows) dot(a []float32, j int) float32 {
	switch r.format {
	case formatF16:
		return partialDots{}.addHalves(a, r.h[j*r.stride:][:len(a)], r.table).sum()
	case formatBF16:
		return partialDots{}.addBF16(a, r.h[j*r.stride:][:len(a)]).sum()
	case formatF32:
		return partialDots{}.add(a, r.f[j*r.stride:][:len(a)]).sum()
	default:
		return partialDots{}.addQ8(a, r.b[j*r.stride*q8BlockSize:]).sum()
	}
}

// weightedSumInline adds Σⱼ w[j]·vⱼ to dst in order of j, four value rows at a time,
// widening in registers: one output row has nothing to share a widened buffer with.
func weightedSumInline(dst, w []float32, cache cacheRows) {
	dim := len(dst)
	j := 0
	for ; j+4 <= len(w); j += 4 {
		p := w[j : j+4 : j+4]
		switch cache.format {
		case formatF16:
			v := cache.h[j*cache.stride:]
			addHalves4(dst, p[0], p[1], p[2], p[3], v[:dim], v[cache.stride:][:dim],
				v[2*cache.stride:][:dim], v[3*cache.stride:][:dim], cache.table)
		case formatBF16:
			v := cache.h[j*cache.stride:]
			addBF16Rows4(dst, p[0], p[1], p[2], p[3], v[:dim], v[cache.stride:][:dim],
				v[2*cache.stride:][:dim], v[3*cache.stride:][:dim])
		case formatF32:
			v := cache.f[j*cache.stride:]
			addRows4(dst, p[0], p[1], p[2], p[3], v[:dim], v[cache.stride:][:dim],
				v[2*cache.stride:][:dim], v[3*cache.stride:][:dim])
		default:
			rowBytes := cache.stride * q8BlockSize
			v := cache.b[j*rowBytes:]
			addQ8Rows4(dst, p[0], p[1], p[2], p[3], v, v[rowBytes:], v[2*rowBytes:], v[3*rowBytes:])
		}
	}
	if j < len(w) {
		var buf [widenChunk]float32
		for d0 := 0; d0 < dim; d0 += widenChunk {
			b := buf[:min(widenChunk, dim-d0)]
			for jj := j; jj < len(w); jj++ {
				cache.widen(b, jj, d0)
				addRow(dst[d0:d0+len(b)], w[jj], b)
			}
		}
	}
}

func addHalves4(acc []float32, p0, p1, p2, p3 float32, v0, v1, v2, v3 []uint16, t *[1 << 16]float32) {
	v0, v1, v2, v3 = v0[:len(acc)], v1[:len(acc)], v2[:len(acc)], v3[:len(acc)]
	for d, x := range acc {
		x += p0 * t[v0[d]]
		x += p1 * t[v1[d]]
		x += p2 * t[v2[d]]
		x += p3 * t[v3[d]]
		acc[d] = x
	}
}

func addBF16Rows4(acc []float32, p0, p1, p2, p3 float32, v0, v1, v2, v3 []uint16) {
	v0, v1, v2, v3 = v0[:len(acc)], v1[:len(acc)], v2[:len(acc)], v3[:len(acc)]
	for d, x := range acc {
		x += p0 * math.Float32frombits(uint32(v0[d])<<16)
		x += p1 * math.Float32frombits(uint32(v1[d])<<16)
		x += p2 * math.Float32frombits(uint32(v2[d])<<16)
		x += p3 * math.Float32frombits(uint32(v3[d])<<16)
		acc[d] = x
	}
}

// int8Float32 is float32(int8(q)) for each byte q: one load where a conversion takes a
// sign extension, a register clear and a convert.
var int8Float32 = func() (t [256]float32) {
	for q := range t {
		t[q] = float32(int8(q))
	}
	return t
}()

// addQ8Rows4 takes the rows' bytes from their first block; len(acc) is a multiple of 32.
func addQ8Rows4(acc []float32, p0, p1, p2, p3 float32, v0, v1, v2, v3 []byte) {
	t := &int8Float32
	for b := 0; b < len(acc); b += 32 {
		o := b / 32 * q8BlockSize
		b0, b1, b2, b3 := v0[o:o+q8BlockSize], v1[o:o+q8BlockSize], v2[o:o+q8BlockSize], v3[o:o+q8BlockSize]
		d0, d1, d2, d3 := q8Scale(b0), q8Scale(b1), q8Scale(b2), q8Scale(b3)
		q0, q1, q2, q3 := b0[2:q8BlockSize], b1[2:q8BlockSize], b2[2:q8BlockSize], b3[2:q8BlockSize]
		out := acc[b : b+32 : b+32]
		for k, x := range out {
			x += p0 * (t[q0[k]] * d0)
			x += p1 * (t[q1[k]] * d1)
			x += p2 * (t[q2[k]] * d2)
			x += p3 * (t[q3[k]] * d3)
			out[k] = x
		}
	}
}
