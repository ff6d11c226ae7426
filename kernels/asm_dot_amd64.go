//go:build !purego && !noasm

package kernels

import (
	"github.com/kvsimd/kvsimd/asm"
	"github.com/kvsimd/kvsimd/internal/align"
)

func init() {
	dotF16.Add("avx2", func(a, b []uint16) float32 { return dotF16ISA(a, b, asm.ISAAVX2) })
	dotF16.Add("avx512", func(a, b []uint16) float32 { return dotF16ISA(a, b, asm.ISAAVX512) })
	dotF32F16.Add("avx2", func(a []float32, b []uint16) float32 { return dotF32F16ISA(a, b, asm.ISAAVX2) })
	dotF32F16.Add("avx512", func(a []float32, b []uint16) float32 { return dotF32F16ISA(a, b, asm.ISAAVX512) })
	dotF32.Add("avx2", func(a, b []float32) float32 { return dotF32ISA(a, b, asm.ISAAVX2) })
	dotF32.Add("avx512", func(a, b []float32) float32 { return dotF32ISA(a, b, asm.ISAAVX512) })
	scores.Add("avx2", scoresAVX2)
	scores.Add("avx512", scoresAVX512)
	for _, v := range []struct {
		name   string
		avx512 bool
	}{{"avx2", false}, {"avx512", true}} {
		scoresAhead.Add(v.name, func(dst, q []float32, k, ahead []uint16, rows, n, dim, stride int, scale float32) {
			scoresAMD64(v.avx512, amd64Keys{bits: k, aheadBits: ahead}, dst, q, rows, n, dim, stride, scale)
		})
		scoresAheadBF16.Add(v.name, func(dst, q []float32, k, ahead []uint16, rows, n, dim, stride int, scale float32) {
			scoresAMD64(v.avx512, amd64Keys{format: keysBF16, bits: k, aheadBits: ahead}, dst, q, rows, n, dim, stride, scale)
		})
		scoresAheadQ8.Add(v.name, func(dst, q []float32, k, ahead []byte, rows, n, dim, stride int, scale float32) {
			scoresAMD64(v.avx512, amd64Keys{format: keysQ8, blocks: k, aheadBlocks: ahead}, dst, q, rows, n, dim, stride, scale)
		})
		scoresAheadF32.Add(v.name, func(dst, q, k, ahead []float32, rows, n, dim, stride int, scale float32) {
			scoresAMD64(v.avx512, amd64Keys{format: keysF32, floats: k, aheadFloats: ahead}, dst, q, rows, n, dim, stride, scale)
		})
		scoresF32.Add(v.name, func(dst, q, k []float32, rows, n, dim, stride int, scale float32) {
			scoresAMD64(v.avx512, amd64Keys{format: keysF32, floats: k}, dst, q, rows, n, dim, stride, scale)
		})
	}

	// The other key formats' dot products are bodies of their own, without an entry:
	// their callers settle non-finite results afterwards. On avx512 DotF32F16 runs
	// its AVX-512 body at every n (only DotF16 falls back to AVX2 below
	// gen/amd64/dot's f16ZMMMin), and so do these.
	dotF32BF16.Add("avx2", asm.DotF32BF16AVX2)
	dotF32BF16.Add("avx512", asm.DotF32BF16AVX512)
	dotF32Q8.Add("avx2", asm.DotF32Q8AVX2)
	dotF32Q8.Add("avx512", asm.DotF32Q8AVX512)
	scoresBF16.Add("avx2", func(dst, q []float32, k []uint16, rows, n, dim, stride int, scale float32) {
		scoresAMD64(false, amd64Keys{format: keysBF16, bits: k}, dst, q, rows, n, dim, stride, scale)
	})
	scoresBF16.Add("avx512", func(dst, q []float32, k []uint16, rows, n, dim, stride int, scale float32) {
		scoresAMD64(true, amd64Keys{format: keysBF16, bits: k}, dst, q, rows, n, dim, stride, scale)
	})
	scoresQ8.Add("avx2", func(dst, q []float32, k []byte, rows, n, dim, stride int, scale float32) {
		scoresAMD64(false, amd64Keys{format: keysQ8, blocks: k}, dst, q, rows, n, dim, stride, scale)
	})
	scoresQ8.Add("avx512", func(dst, q []float32, k []byte, rows, n, dim, stride int, scale float32) {
		scoresAMD64(true, amd64Keys{format: keysQ8, blocks: k}, dst, q, rows, n, dim, stride, scale)
	})
	scoresTableFP16.Add("avx2", asm.ScoresRowsTableAVX2)
	scoresTableFP16.Add("avx512", asm.ScoresRowsTableAVX512)
	scoresTableBF16.Add("avx2", asm.ScoresBF16RowsTableAVX2)
	scoresTableBF16.Add("avx512", asm.ScoresBF16RowsTableAVX512)
	scoresTableQ8.Add("avx2", asm.ScoresQ8RowsTableAVX2)
	scoresTableQ8.Add("avx512", asm.ScoresQ8RowsTableAVX512)
	scoresTableF32.Add("avx2", asm.ScoresF32RowsTableAVX2)
	scoresTableF32.Add("avx512", asm.ScoresF32RowsTableAVX512)
}

// amd64Keys are the keys of a Scores call in one of the formats the kernels take:
// halves or bfloat16s in bits, float32 values in floats, or q8_0 blocks in blocks (a
// stride then counts blocks, and dim is a multiple of 32). The driver below is the same for every format; it
// picks the format's kernels where it calls them, which it must do directly (a call
// through a function value would make the stack buffers escape), at the cost of one
// switch per call of a kernel.
type amd64Keys struct {
	format keysFormat
	bits   []uint16
	floats []float32
	blocks []byte
	// Rows to prefetch beside the keys, or nil (scoresAhead); the row kernels take them.
	aheadBits   []uint16
	aheadFloats []float32
	aheadBlocks []byte
}

type keysFormat uint8

const (
	keysF16 keysFormat = iota
	keysBF16
	keysQ8
	keysF32
)

// The panel kernels (asm.ScoresPanels*) take the queries transposed into panels of two
// vectors' worth of queries, a scratch for one widened block of keys and a stage for
// the block's scores; all three live on the stack, aligned to a cache line (unaligned,
// the kernels ran 4–8% slower). A block of queries whose panels fit
// panelFloats is scored in one call, which widens every key once. The kernels that
// hold query rows in registers (asm.ScoresRows*) take dims too large for panels or for
// the scratch; the rows left over after the last full panel when they are fewer than
// panelMinRows, where a mostly empty panel would waste its lanes; and blocks of fewer
// than panelMinKeys keys, which do not repay the transposition of the queries (3.5 µs
// for 32×128, as long as 110 keys take at dim 128).
const (
	panelFloats   = 8192
	scratchFloats = 24 * 256
	panelMinRows  = 12
	panelMinKeys  = 128

	// The panel width and the keys of a block (gen/amd64/dot/panels.go).
	groupVectors                 = 2
	groupAVX2, blockKeysAVX2     = 16, 24
	groupAVX512, blockKeysAVX512 = 32, 16
	// The kernels keep a transposed block behind the key-major one.
	stageFloats = 2 * max(blockKeysAVX2*groupAVX2, blockKeysAVX512*groupAVX512)
)

// panelFits reports whether the panel kernel of that group and key block takes dim.
func panelFits(dim, group, blockKeys int) bool {
	return dim*group <= panelFloats && dim*blockKeys <= scratchFloats
}

func scoresAVX2(dst, q []float32, k []uint16, rows, n, dim, stride int, scale float32) {
	scoresAMD64(false, amd64Keys{bits: k}, dst, q, rows, n, dim, stride, scale)
}

func scoresAVX512(dst, q []float32, k []uint16, rows, n, dim, stride int, scale float32) {
	scoresAMD64(true, amd64Keys{bits: k}, dst, q, rows, n, dim, stride, scale)
}

// scoresAMD64 splits the rows between the panel kernel and the row kernel. Both read
// key j at k[j*stride:] (q8_0: from block j*stride on), so strided keys are scored
// where they lie.
func scoresAMD64(avx512 bool, k amd64Keys, dst, q []float32, rows, n, dim, stride int, scale float32) {
	group, blockKeys := groupAVX2, blockKeysAVX2
	if avx512 {
		group, blockKeys = groupAVX512, blockKeysAVX512
	}
	panelRows := 0
	if panelFits(dim, group, blockKeys) && n >= panelMinKeys {
		panelRows = rows
		if rest := rows % group; rest < panelMinRows {
			panelRows -= rest
		}
	}
	if panelRows > 0 {
		scoresPanelsOf(avx512, k, dst[:panelRows*n], q[:panelRows*dim], panelRows, n, dim, stride, scale)
	}
	if rest := rows - panelRows; rest > 0 {
		d, qr := dst[panelRows*n:], q[panelRows*dim:]
		switch {
		case avx512 && k.format == keysF16:
			asm.ScoresRowsAVX512(d, qr, k.bits, k.aheadBits, rest, n, dim, stride, scale)
		case avx512 && k.format == keysBF16:
			asm.ScoresBF16RowsAVX512(d, qr, k.bits, k.aheadBits, rest, n, dim, stride, scale)
		case avx512 && k.format == keysF32:
			asm.ScoresF32RowsAVX512(d, qr, k.floats, k.aheadFloats, rest, n, dim, stride, scale)
		case avx512:
			asm.ScoresQ8RowsAVX512(d, qr, k.blocks, k.aheadBlocks, rest, n, dim, stride, scale)
		case k.format == keysF16:
			asm.ScoresRowsAVX2(d, qr, k.bits, k.aheadBits, rest, n, dim, stride, scale)
		case k.format == keysBF16:
			asm.ScoresBF16RowsAVX2(d, qr, k.bits, k.aheadBits, rest, n, dim, stride, scale)
		case k.format == keysF32:
			asm.ScoresF32RowsAVX2(d, qr, k.floats, k.aheadFloats, rest, n, dim, stride, scale)
		default:
			asm.ScoresQ8RowsAVX2(d, qr, k.blocks, k.aheadBlocks, rest, n, dim, stride, scale)
		}
	}
}

// scoresPanels is scoresPanelsOf for fp16 keys.
func scoresPanels(avx512 bool, dst, q []float32, k []uint16, rows, n, dim, stride int, scale float32) {
	scoresPanelsOf(avx512, amd64Keys{bits: k}, dst, q, rows, n, dim, stride, scale)
}

// scoresPanelsOf scores all rows with the panel kernel, one block of rows at a time;
// dim must fit (panelFits). The asm is called directly, not through a function value,
// so the stack buffers do not escape.
func scoresPanelsOf(avx512 bool, k amd64Keys, dst, q []float32, rows, n, dim, stride int, scale float32) {
	group, blockKeys := groupAVX2, blockKeysAVX2
	if avx512 {
		group, blockKeys = groupAVX512, blockKeysAVX512
	}
	var panelsBuf [panelFloats + 16]float32
	var scratchBuf [scratchFloats + 16]float32
	var stageBuf [stageFloats + 16]float32
	panels, scratch, stage := align64(panelsBuf[:]), align64(scratchBuf[:]), align64(stageBuf[:])
	block := panelFloats / (dim * group) * group
	for r0 := 0; r0 < rows; r0 += block {
		rb := min(block, rows-r0)
		p := panels[:(rb+group-1)/group*group*dim]
		toPanels(p, q[r0*dim:(r0+rb)*dim], rb, dim, group)
		d, kt, st := dst[r0*n:(r0+rb)*n], scratch[:blockKeys*dim], stage[:stageFloats]
		switch k.format {
		case keysF16:
			kf := k.bits
			switch {
			case avx512 && dim == 64:
				asm.ScoresPanels64AVX512(d, p, kf, kt, st, rb, n, dim, stride, scale)
			case avx512 && dim == 128:
				asm.ScoresPanels128AVX512(d, p, kf, kt, st, rb, n, dim, stride, scale)
			case avx512:
				asm.ScoresPanelsAVX512(d, p, kf, kt, st, rb, n, dim, stride, scale)
			case dim == 64:
				asm.ScoresPanels64AVX2(d, p, kf, kt, st, rb, n, dim, stride, scale)
			case dim == 128:
				asm.ScoresPanels128AVX2(d, p, kf, kt, st, rb, n, dim, stride, scale)
			default:
				asm.ScoresPanelsAVX2(d, p, kf, kt, st, rb, n, dim, stride, scale)
			}
		case keysBF16:
			kb := k.bits
			switch {
			case avx512 && dim == 64:
				asm.ScoresBF16Panels64AVX512(d, p, kb, kt, st, rb, n, dim, stride, scale)
			case avx512 && dim == 128:
				asm.ScoresBF16Panels128AVX512(d, p, kb, kt, st, rb, n, dim, stride, scale)
			case avx512:
				asm.ScoresBF16PanelsAVX512(d, p, kb, kt, st, rb, n, dim, stride, scale)
			case dim == 64:
				asm.ScoresBF16Panels64AVX2(d, p, kb, kt, st, rb, n, dim, stride, scale)
			case dim == 128:
				asm.ScoresBF16Panels128AVX2(d, p, kb, kt, st, rb, n, dim, stride, scale)
			default:
				asm.ScoresBF16PanelsAVX2(d, p, kb, kt, st, rb, n, dim, stride, scale)
			}
		case keysF32:
			kf := k.floats
			switch {
			case avx512 && dim == 64:
				asm.ScoresF32Panels64AVX512(d, p, kf, kt, st, rb, n, dim, stride, scale)
			case avx512 && dim == 128:
				asm.ScoresF32Panels128AVX512(d, p, kf, kt, st, rb, n, dim, stride, scale)
			case avx512:
				asm.ScoresF32PanelsAVX512(d, p, kf, kt, st, rb, n, dim, stride, scale)
			case dim == 64:
				asm.ScoresF32Panels64AVX2(d, p, kf, kt, st, rb, n, dim, stride, scale)
			case dim == 128:
				asm.ScoresF32Panels128AVX2(d, p, kf, kt, st, rb, n, dim, stride, scale)
			default:
				asm.ScoresF32PanelsAVX2(d, p, kf, kt, st, rb, n, dim, stride, scale)
			}
		default:
			kq := k.blocks
			switch {
			case avx512 && dim == 64:
				asm.ScoresQ8Panels64AVX512(d, p, kq, kt, st, rb, n, dim, stride, scale)
			case avx512 && dim == 128:
				asm.ScoresQ8Panels128AVX512(d, p, kq, kt, st, rb, n, dim, stride, scale)
			case avx512:
				asm.ScoresQ8PanelsAVX512(d, p, kq, kt, st, rb, n, dim, stride, scale)
			case dim == 64:
				asm.ScoresQ8Panels64AVX2(d, p, kq, kt, st, rb, n, dim, stride, scale)
			case dim == 128:
				asm.ScoresQ8Panels128AVX2(d, p, kq, kt, st, rb, n, dim, stride, scale)
			default:
				asm.ScoresQ8PanelsAVX2(d, p, kq, kt, st, rb, n, dim, stride, scale)
			}
		}
	}
}

// align64 returns buf from its first 64-byte aligned element on, so that no vector
// access into it crosses a cache line; buf has 16 floats to spare.
func align64(buf []float32) []float32 {
	return buf[align.Head(buf, 16):] // 16 floats: 64 bytes
}

// toPanels transposes rows query rows into panels of group queries, zero past rows:
//
//	panels[(i/group*dim + d)*group + i%group] = q[i*dim + d]
func toPanels(panels, q []float32, rows, dim, group int) {
	for g := 0; g*group < rows; g++ {
		p := panels[g*dim*group : (g+1)*dim*group]
		for lane := range group {
			i := g*group + lane
			if i >= rows {
				for d := range dim {
					p[d*group+lane] = 0
				}
				continue
			}
			for d, x := range q[i*dim : (i+1)*dim] {
				p[d*group+lane] = x
			}
		}
	}
}
