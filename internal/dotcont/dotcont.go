// Package dotcont holds the continuations of the dot products' assembly entries
// (asm/dot.go): the Go functions an entry finishes in, with its own arguments, for the
// generic variant, for a float32 result that is not finite and for operands whose
// lengths differ. Package asm calls them; package kernels, which owns the generic
// bodies, the settling and the panics, sets them at start-up, before any kernel runs.
//
// They are variables because asm cannot call into kernels, which imports it. They live
// in an internal package, not in asm, so that nothing outside this module can change
// what a kernel calls; within it only kernels sets them (and its test of the entries,
// which wraps them to count their calls).
package dotcont

var (
	// F16 continues DotF16's entry: it panics if the lengths differ (sel holds
	// len(b) − n above the variant's number, asm.Select), and else runs the generic
	// body.
	F16 func(a, b *uint16, n int, sel int64) float32
	// F32F16 continues DotF32F16's entry: it panics if the lengths differ, and else
	// settles the float32 result in float64, running the generic body first when the
	// variant is generic.
	F32F16 func(a *float32, b *uint16, n int, sel int64) float32
	// F32 is F32F16 for DotF32.
	F32 func(a, b *float32, n int, sel int64) float32
)
