//go:build !(amd64 || arm64) || purego || noasm

package asm

import "github.com/kvsimd/kvsimd/internal/dotcont"

// Without assembly the dot products' entries are their continuations (dot.go). They
// are not inlined, so that the exported kernels that call them stay small enough to
// inline, as in builds with assembly.

//go:noinline
func DotF16(a, b *uint16, n int, sel int64) float32 { return dotcont.F16(a, b, n, sel) }

//go:noinline
func DotF32F16(a *float32, b *uint16, n int, sel int64) float32 {
	return dotcont.F32F16(a, b, n, sel)
}

//go:noinline
func DotF32(a, b *float32, n int, sel int64) float32 { return dotcont.F32(a, b, n, sel) }
