//go:build !purego && !noasm

package kernels

import (
	"sync"

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
	scoresAhead.Add("neon", ignoreAhead(scoresNEON))
	scoresAheadBF16.Add("neon", ignoreAhead(scoresBF16NEON))
	scoresAheadQ8.Add("neon", ignoreAhead(scoresQ8NEON))
	dotF32BF16.Add("neon", asm.DotF32BF16NEON)
	dotF32Q8.Add("neon", asm.DotF32Q8NEON)
	scoresBF16.Add("neon", scoresBF16NEON)
	scoresQ8.Add("neon", scoresQ8NEON)
	scoresF32.Add("neon", scoresF32NEON)
	scoresAheadF32.Add("neon", ignoreAhead(scoresF32NEON))
}

// Scores has three NEON kernels, which give the same bits: each score is one lane's
// chain of fused multiply-adds over d in order, then scaled.
//
//   - The panel kernel (asm.ScoresPanelsNEON) transposes up to panelMaxNEON(dim) query
//     rows (32 at dim ≤ 128, 16 to dim 256, 8 to 512) into a panel on the stack (lanes
//     = queries) and widens every key in registers once per panel. Blocks of up to
//     twice that many rows go to it, a panel at a time (32, 16, 8 or 4 rows, then the
//     last one to three).
//   - The block kernel (asm.ScoresBlocksNEON) widens and transposes blockKeysNEON keys
//     at a time into a pooled scratch, blockKeysNEON·dim floats of it, once for all
//     rows (lanes = keys): it takes larger blocks, where widening every key once repays
//     its transposition and its stores.
//   - Dims past maxBlockDimNEON go to the row kernel (asm.ScoresNEON), which needs no
//     scratch.
//
// Two panels is where llvm-mca's Neoverse V2 model puts the panel and block kernels
// even, at each panel size (model estimates, not measurements: at dim 128, 64 rows
// against 256 keys cost both 1.47·10⁵ cycles, 32 rows 0.75·10⁵ with panels and
// 0.82·10⁵ with blocks, 128 rows 2.94·10⁵ and 2.81·10⁵; at dim 256 the even point
// is between 32 and 64 rows, at dim 512 at 16).
//
// The bf16, q8_0 and float32 keys have the same three kernels (asm.ScoresBF16NEON, …), the same
// code with the keys widened by their format, and the same choice between them
// (scoresBF16NEON, scoresQ8NEON): so each gives Scores' bits for keys whose values are
// equal.
//
// The scratch comes from a pool rather than the stack: Go zeroes a local array on every
// call, and for a decode block of four rows the 16.6 KiB of the panel's cost more than
// the Go around the kernel (docs/performance.md).
const (
	blockKeysNEON   = 16
	maxBlockDimNEON = 512

	// The panel and the stage of the partial last tile (gen/arm64/dot/panels.go), and
	// after them, for q8_0 keys, the scales of a tile's keys.
	panelFloatsNEON = 4096
	panelStageNEON  = 64
	panelScalesNEON = 16
)

// scratchNEON is the working memory of the panel and block kernels.
type scratchNEON struct {
	panel [panelFloatsNEON + panelStageNEON + panelScalesNEON]float32
	block [blockKeysNEON * maxBlockDimNEON]float32
}

var scratchesNEON = sync.Pool{New: func() any { return new(scratchNEON) }}

func scoresNEON(dst, q []float32, k []uint16, rows, n, dim, stride int, scale float32) {
	switch {
	case dim > maxBlockDimNEON:
		asm.ScoresNEON(dst, q, k, rows, n, dim, stride, scale)
	case rows > 2*panelMaxNEON(dim):
		sc := scratchesNEON.Get().(*scratchNEON)
		asm.ScoresBlocksNEON(dst, q, k, sc.block[:blockKeysNEON*dim], rows, n, dim, stride, scale)
		scratchesNEON.Put(sc)
	default:
		sc := scratchesNEON.Get().(*scratchNEON)
		scratch := sc.panel[:panelFloatsNEON+panelStageNEON]
		for r := 0; r < rows; {
			c := panelRowsNEON(rows-r, dim)
			asm.ScoresPanelsNEON(dst[r*n:(r+c)*n], q[r*dim:(r+c)*dim], k, scratch, c, n, dim, stride, scale)
			r += c
		}
		scratchesNEON.Put(sc)
	}
}

// scoresBF16NEON is scoresNEON over bfloat16 keys.
func scoresBF16NEON(dst, q []float32, k []uint16, rows, n, dim, stride int, scale float32) {
	switch {
	case dim > maxBlockDimNEON:
		asm.ScoresBF16NEON(dst, q, k, rows, n, dim, stride, scale)
	case rows > 2*panelMaxNEON(dim):
		sc := scratchesNEON.Get().(*scratchNEON)
		asm.ScoresBlocksBF16NEON(dst, q, k, sc.block[:blockKeysNEON*dim], rows, n, dim, stride, scale)
		scratchesNEON.Put(sc)
	default:
		sc := scratchesNEON.Get().(*scratchNEON)
		scratch := sc.panel[:panelFloatsNEON+panelStageNEON]
		for r := 0; r < rows; {
			c := panelRowsNEON(rows-r, dim)
			asm.ScoresPanelsBF16NEON(dst[r*n:(r+c)*n], q[r*dim:(r+c)*dim], k, scratch, c, n, dim, stride, scale)
			r += c
		}
		scratchesNEON.Put(sc)
	}
}

// scoresQ8NEON is scoresNEON over q8_0 keys: dim counts values, stride blocks.
func scoresQ8NEON(dst, q []float32, k []byte, rows, n, dim, stride int, scale float32) {
	switch {
	case dim > maxBlockDimNEON:
		asm.ScoresQ8NEON(dst, q, k, rows, n, dim, stride, scale)
	case rows > 2*panelMaxNEON(dim):
		sc := scratchesNEON.Get().(*scratchNEON)
		asm.ScoresBlocksQ8NEON(dst, q, k, sc.block[:blockKeysNEON*dim], rows, n, dim, stride, scale)
		scratchesNEON.Put(sc)
	default:
		sc := scratchesNEON.Get().(*scratchNEON)
		scratch := sc.panel[:]
		for r := 0; r < rows; {
			c := panelRowsNEON(rows-r, dim)
			asm.ScoresPanelsQ8NEON(dst[r*n:(r+c)*n], q[r*dim:(r+c)*dim], k, scratch, c, n, dim, stride, scale)
			r += c
		}
		scratchesNEON.Put(sc)
	}
}

// scoresF32NEON is scoresNEON over float32 keys.
func scoresF32NEON(dst, q, k []float32, rows, n, dim, stride int, scale float32) {
	switch {
	case dim > maxBlockDimNEON:
		asm.ScoresF32NEON(dst, q, k, rows, n, dim, stride, scale)
	case rows > 2*panelMaxNEON(dim):
		sc := scratchesNEON.Get().(*scratchNEON)
		asm.ScoresBlocksF32NEON(dst, q, k, sc.block[:blockKeysNEON*dim], rows, n, dim, stride, scale)
		scratchesNEON.Put(sc)
	default:
		sc := scratchesNEON.Get().(*scratchNEON)
		scratch := sc.panel[:panelFloatsNEON+panelStageNEON]
		for r := 0; r < rows; {
			c := panelRowsNEON(rows-r, dim)
			asm.ScoresPanelsF32NEON(dst[r*n:(r+c)*n], q[r*dim:(r+c)*dim], k, scratch, c, n, dim, stride, scale)
			r += c
		}
		scratchesNEON.Put(sc)
	}
}

// panelMaxNEON is the most query rows a panel holds at dim ≤ maxBlockDimNEON: 32, 16
// or 8.
func panelMaxNEON(dim int) int {
	p := 32
	for p*dim > panelFloatsNEON {
		p /= 2
	}
	return p
}

// panelRowsNEON is how many of left ≥ 1 query rows the next panel takes: the largest
// of 32, 16, 8 and 4 that left has and the panel holds, else all of them (one to
// three, as one query vector).
func panelRowsNEON(left, dim int) int {
	for _, c := range []int{32, 16, 8, 4} {
		if c <= left && c <= panelMaxNEON(dim) {
			return c
		}
	}
	return left
}
