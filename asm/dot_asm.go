//go:build (amd64 || arm64) && !purego && !noasm

package asm

import "github.com/kvsimd/kvsimd/internal/dotcont"

// The entries and bodies jump to these: the assembly cannot call a function value.

//lint:file-ignore U1000 these functions are reached only by JMPs in dot_amd64.s and dot_arm64.s, which staticcheck does not read

func continueDotF16(a, b *uint16, n int, sel int64) float32 { return dotcont.F16(a, b, n, sel) }

func continueDotF32F16(a *float32, b *uint16, n int, sel int64) float32 {
	return dotcont.F32F16(a, b, n, sel)
}

func continueDotF32(a, b *float32, n int, sel int64) float32 { return dotcont.F32(a, b, n, sel) }
