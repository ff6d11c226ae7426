//go:build !purego && !noasm

package fp16

import (
	"math"

	"github.com/kvsimd/kvsimd/asm"
	"github.com/kvsimd/kvsimd/internal/align"
	"github.com/kvsimd/kvsimd/internal/dispatch"
)

func init() {
	toFloat32.Add("avx2", toFloat32AVX2)
	toFloat32.Add("avx512", toFloat32AVX512)
	fromFloat32.Add("avx2", asm.FromFloat32AVX2)
	fromFloat32.Add("avx512", asm.FromFloat32AVX512)
}

// toFloat32AVX2 and toFloat32AVX512 run the asm widening from dst's first vector
// boundary on and widen the elements before it in Go (the same bits): a zmm store that
// is not 64-byte aligned splits a cache line, and on a Sapphire Rapids Xeon 131072
// halves took 13.7 µs into a dst 12 bytes past a boundary against 11.5 µs into an
// aligned one.
func toFloat32AVX2(dst []float32, src []uint16) {
	if head := align.Head(dst, 8); head > 0 {
		toFloat32Generic(dst[:head], src[:head])
		dst, src = dst[head:], src[head:]
	}
	asm.ToFloat32AVX2(dst, src)
}

func toFloat32AVX512(dst []float32, src []uint16) {
	if head := align.Head(dst, 16); head > 0 {
		toFloat32Generic(dst[:head], src[:head])
		dst, src = dst[head:], src[head:]
	}
	if len(src) >= toFloat32StreamMin {
		asm.ToFloat32StreamAVX512(dst, src)
		return
	}
	asm.ToFloat32AVX512(dst, src)
}

// toFloat32StreamMin is the shortest conversion that the avx512 variant writes with
// non-temporal stores (asm.ToFloat32StreamAVX512, the same bits), chosen at start-up by
// the CPU family (streamMinOf).
var toFloat32StreamMin = streamMinOf(dispatch.AMDFamily(), dispatch.L3Bytes())

// streamMinOf is toFloat32StreamMin on a CPU of that AMD family (0: not AMD) and L3.
// A conversion that touches more bytes (2 read and 4 written per element) than the L3
// holds leaves nothing in it worth keeping, and ordinary stores read every line of dst
// from memory before writing it. On a Zen 5 core (family 0x1A, 32 MiB of L3) the
// stores that skip that read took 6 Mi halves (36 MiB) in 664 µs against 811 µs
// (ordinary zmm stores) and 796 µs (avx2), 64 Mi in 9.6 against 13.3 and 11.2 ms
// (medians of 60 interleaved calls, shared machine); at 4 Mi (24 MiB, within the L3)
// they were 5 % slower. On a Sapphire Rapids Xeon non-temporal stores made Scores 1.15
// to 1.9× slower (gen/amd64/dot/panels.go) and streaming conversions have not been
// measured: other CPUs keep ordinary stores at every length.
func streamMinOf(amdFamily, l3 int) int {
	if amdFamily >= 0x1a {
		return l3/6 + 1
	}
	return math.MaxInt
}
