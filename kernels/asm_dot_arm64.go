//go:build !purego && !noasm

package kernels

import (
	"github.com/kvsimd/kvsimd/asm"
	"github.com/kvsimd/kvsimd/internal/dispatch"
)

func init() {
	dotF16.Add("neon", asm.DotF16NEON)
	dotF32F16.Add("neon", asm.DotF32F16NEON)
	dotF32.Add("neon", asm.DotF32NEON)
	scores.Add("neon", scoresNEON)
}

// dotF16Active is DotF16 past the race annotations (see checkDot).
func dotF16Active(a, b []uint16) float32 {
	checkDot("DotF16", len(a), len(b))
	if dotF16.Active == dispatch.NEON {
		return asm.DotF16NEON(a, b)
	}
	return dotF16.Call(a, b)
}

func dotF32F16Active(a []float32, b []uint16) float32 {
	checkDot("DotF32F16", len(a), len(b))
	var s float32
	if dotF32F16.Active == dispatch.NEON {
		s = asm.DotF32F16NEON(a, b)
	} else {
		s = dotF32F16.Call(a, b)
	}
	return settleF32F16(s, a, b, 1)
}

func dotF32Active(a, b []float32) float32 {
	checkDot("DotF32", len(a), len(b))
	var s float32
	if dotF32.Active == dispatch.NEON {
		s = asm.DotF32NEON(a, b)
	} else {
		s = dotF32.Call(a, b)
	}
	return settleF32(s, a, b)
}

// The block kernel (asm.ScoresBlocksNEON) widens and transposes blockKeysNEON keys at
// a time into a scratch on the stack, of blockKeysNEON·dim floats; dims past
// maxBlockDimNEON go to the row kernel (asm.ScoresNEON), which needs no scratch.
const (
	blockKeysNEON   = 16
	maxBlockDimNEON = 512
)

func scoresNEON(dst, q []float32, k []uint16, rows, n, dim int, scale float32) {
	if dim > maxBlockDimNEON {
		asm.ScoresNEON(dst, q, k, rows, n, dim, scale)
		return
	}
	var scratch [blockKeysNEON * maxBlockDimNEON]float32
	asm.ScoresBlocksNEON(dst, q, k, scratch[:blockKeysNEON*dim], rows, n, dim, scale)
}
