//go:build !purego && !noasm

package kernels

import (
	"github.com/kvsimd/kvsimd/asm"
	"github.com/kvsimd/kvsimd/internal/dispatch"
)

// neonISA is the neon variant's number on this CPU: asm.ISANEONFHM when it has
// FEAT_FHM, whose FMLAL body DotF16 then runs, else asm.ISANEON (asm/dot.go).
var neonISA = uint8(dispatch.Number("neon"))

func init() {
	dotF16.Add("neon", func(a, b []uint16) float32 { return dotF16ISA(a, b, neonISA) })
	dotF32F16.Add("neon", func(a []float32, b []uint16) float32 { return dotF32F16ISA(a, b, neonISA) })
	dotF32.Add("neon", func(a, b []float32) float32 { return dotF32ISA(a, b, neonISA) })
	scores.Add("neon", scoresNEON)
}

// The block kernel (asm.ScoresBlocksNEON) widens and transposes blockKeysNEON keys at
// a time into a scratch on the stack, of blockKeysNEON·dim floats; dims past
// maxBlockDimNEON go to the row kernel (asm.ScoresNEON), which needs no scratch.
const (
	blockKeysNEON   = 16
	maxBlockDimNEON = 512
)

func scoresNEON(dst, q []float32, k []uint16, rows, n, dim, stride int, scale float32) {
	if dim > maxBlockDimNEON {
		asm.ScoresNEON(dst, q, k, rows, n, dim, stride, scale)
		return
	}
	var scratch [blockKeysNEON * maxBlockDimNEON]float32
	asm.ScoresBlocksNEON(dst, q, k, scratch[:blockKeysNEON*dim], rows, n, dim, stride, scale)
}
