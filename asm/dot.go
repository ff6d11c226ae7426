package asm

// The dot products are the one place where this package picks a variant: a call lasts
// a few nanoseconds, and a Go function between the caller and the assembly (to switch
// on the variant, or Go's ABI wrapper, when the call goes through a function value)
// cost 1–1.6 ns of a 6–7 ns call at n = 128. So each dot product has one entry
// (DotF16, DotF32F16, DotF32), holding the body of every variant of its GOARCH, that
// the exported kernels function calls directly.
//
// Go passes assembly its arguments through memory, so the entries take few: pointers
// to the operands' first elements, the length n of a, and sel, which holds the active
// variant's number in its low byte and len(b) − n above it (Select). Two slices and a
// variant byte, seven words rather than four, cost 0.5 ns of a 5.9 ns call at n = 128
// (AVX-512). sel is the variant's number exactly when the lengths agree, so the one
// comparison that picks a body also checks them.
//
// The entry runs the variant's body, and jumps to the Go continuation instead, with the
// same arguments, when the lengths differ (the continuation panics), when this build
// has no body for the variant (the generic one), or when a float32 result is not
// finite (the continuation settles it in float64). Builds without assembly have the
// entries too (dot_noasm.go), as Go functions that go straight to the continuations,
// so that the kernels call them the same way in every build.
//
// Package kernels owns the generic bodies, the panics and the settling, and imports
// this package, which therefore cannot call it: kernels sets the continuations at
// start-up as variables of internal/dotcont, and continueDot* (dot_asm.go) call them
// there. Internal, they are out of reach of code outside kvsimd, so nothing but kvsimd
// decides what a kernel calls; and they run only off the SIMD bodies' path, which
// never reads them.

// Select returns the sel argument of a dot product's entry: isa in the low byte, and
// nb − na above it. sel is an int64 because on 32-bit GOARCHes an int difference
// shifted by 8 could overflow; on 64-bit ones no slice of two-byte elements or larger
// holds 2⁵⁵ of them (neither amd64 nor arm64 maps more than 2⁵⁷ bytes), so the
// difference fits in the 56 bits above the byte there too.
func Select(isa uint8, na, nb int) int64 { return int64(isa) | int64(nb-na)<<8 }

// Unselect undoes Select, given na: it returns the variant's number and nb.
func Unselect(na int, sel int64) (isa uint8, nb int) { return uint8(sel), na + int(sel>>8) }

// The numbers of isa that select a body: those of internal/dispatch's Variant, which a
// test in package kernels holds them to. The generators in ../gen compare with them.
//
// The neon variant has two: ISANEONFHM on a CPU with FEAT_FHM, ISANEON on one without,
// chosen at start-up (dispatch.Number). DotF16's entry holds a body for each: FMLAL and
// FMLAL2, which multiply halves into float32 lanes, for ISANEONFHM, and FCVTL with FMLA
// for ISANEON, in one order of summation, so that both give the same bits (the product
// of two halves is exact in float32, and both add it with one rounding). The other
// entries run their one NEON body for either number. A second number, rather than a
// test of the CPU in the entry, keeps the choice to the one comparison that also checks
// the lengths.
const (
	ISAAVX2    = 1
	ISAAVX512  = 2
	ISANEON    = 3
	ISANEONFHM = 4
)
