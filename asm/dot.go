//go:build (amd64 || arm64) && !purego && !noasm

package asm

// The dot products are the one place where this package picks a variant: a call lasts
// a few nanoseconds, and a Go function between the caller and the assembly (to switch
// on the variant, or Go's ABI wrapper, when the call goes through a function value)
// cost 1–1.6 ns of a 6–7 ns call at n = 128. So each dot product has one entry
// (DotF16, DotF32F16, DotF32), holding the body of every variant of its GOARCH, that
// the inlined kernels function calls directly, passing the active variant's number as
// isa. The entry runs that variant's body, and jumps to the Go continuation instead,
// with the same arguments, when the lengths differ (the continuation panics), when
// this build has no body for isa (the generic variant), or when a float32 result is
// not finite (the continuation settles it in float64). Package kernels sets the
// continuations at start-up: it owns the generic bodies, the panics and the settling.
var (
	ContinueDotF16    func(a, b []uint16, isa uint8) float32
	ContinueDotF32F16 func(a []float32, b []uint16, isa uint8) float32
	ContinueDotF32    func(a, b []float32, isa uint8) float32
)

// The numbers of isa that select a body: those of internal/dispatch's Variant, which a
// test in package kernels holds them to. The generators in ../gen compare with them.
const (
	ISAAVX2   = 1
	ISAAVX512 = 2
	ISANEON   = 3
)

// The entries and bodies jump to these: the assembly cannot call a function value.

func continueDotF16(a, b []uint16, isa uint8) float32 { return ContinueDotF16(a, b, isa) }

func continueDotF32F16(a []float32, b []uint16, isa uint8) float32 {
	return ContinueDotF32F16(a, b, isa)
}

func continueDotF32(a, b []float32, isa uint8) float32 { return ContinueDotF32(a, b, isa) }
