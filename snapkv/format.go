package snapkv

import (
	"fmt"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/q8"
)

// Element is the element type of a KV cache: fp16 halves, bf16, q8_0 blocks (a q8_0
// row of Dim values is Dim/32 blocks; Dim % 32 != 0 is an error for q8_0), or float32,
// for engines that keep their cache in their activations' type.
//
// The types that hold keys and values ([InputOf], [SelectorOf], [ChunkOf], [CacheOf])
// are generic over it, and their fp16 instantiations keep the names they had before
// the other formats came ([Input], [Selector], [Chunk], [Cache]), so that fp16 code
// compiles unchanged. An engine keeps one format per cache and knows it at compile
// time, and the four formats share one code path: only the few calls that read keys
// or copy rows (Scores, GatherRows, the widening of the key proxy's queries) choose
// the format's kernel.
type Element interface {
	fp16.Float16 | bf16.BFloat16 | q8.Block | float32
}

// perElem is how many values one element of E holds: 32 for a q8_0 block, else 1.
// Slices of E are indexed in elements: a row of Dim values is Dim/perElem of them.
func perElem[E Element]() int {
	if _, ok := any((*E)(nil)).(*q8.Block); ok {
		return q8.BlockLen
	}
	return 1
}

// elemBytes is the size of one element of E: 2 bytes for a half or a bfloat16, 4 for
// a float32, 34 for a q8_0 block (32 int8 values and their fp16 scale).
func elemBytes[E Element]() int64 {
	switch any((*E)(nil)).(type) {
	case *q8.Block:
		return q8.BlockSize
	case *float32:
		return 4
	}
	return 2
}

// format numbers the formats for the one-call Select's pools: 0 fp16, 1 bf16, 2 q8_0,
// 3 float32.
func format[E Element]() int {
	switch any((*E)(nil)).(type) {
	case *bf16.BFloat16:
		return 1
	case *q8.Block:
		return 2
	case *float32:
		return 3
	}
	return 0
}

// checkDim reports a Dim that E cannot hold in whole elements: for q8_0, one that is
// not a multiple of 32. field is how the error names it.
func checkDim[E Element](field string, dim int) error {
	if per := perElem[E](); dim%per != 0 {
		return fmt.Errorf("snapkv: %s %d is not a multiple of %d, the values of a q8_0 block", field, dim, per)
	}
	return nil
}

// rowDims names a row of Dim values in E's elements, for error messages: "Dim" for
// halves, "Dim/32" for q8_0 blocks; unit is what len counts (" blocks" or nothing).
func rowDims[E Element]() (dims, unit string) {
	if perElem[E]() == q8.BlockLen {
		return "Dim/32", " blocks"
	}
	return "Dim", ""
}

// scoresStrided is kernels.ScoresStrided over keys of E: n keys of w elements, stride
// elements apart (w and stride count blocks for q8_0, whose kernel counts values).
func scoresStrided[E Element](dst, q []float32, k []E, rows, n, w, stride int, scale float32) {
	switch k := any(k).(type) {
	case []fp16.Float16:
		kernels.ScoresStrided(dst, q, k, rows, n, w, stride, scale)
	case []bf16.BFloat16:
		kernels.ScoresStridedBF16(dst, q, k, rows, n, w, stride, scale)
	case []q8.Block:
		kernels.ScoresStridedQ8(dst, q, k, rows, n, w*q8.BlockLen, stride*q8.BlockLen, scale)
	case []float32:
		kernels.ScoresStridedF32(dst, q, k, rows, n, w, stride, scale)
	}
}

// gatherRows is kernels.GatherRows over rows of w elements of E.
func gatherRows[E Element](dst, src []E, idx []int32, w int) {
	switch dst := any(dst).(type) {
	case []fp16.Float16:
		kernels.GatherRows(dst, any(src).([]fp16.Float16), idx, w)
	case []bf16.BFloat16:
		kernels.GatherRowsBF16(dst, any(src).([]bf16.BFloat16), idx, w)
	case []q8.Block:
		kernels.GatherRowsQ8(dst, any(src).([]q8.Block), idx, w*q8.BlockLen)
	case []float32:
		kernels.GatherRowsF32(dst, any(src).([]float32), idx, w)
	}
}

// widen writes the values of src into dst, exactly: len(dst) = len(src)·perElem.
func widen[E Element](dst []float32, src []E) {
	switch src := any(src).(type) {
	case []fp16.Float16:
		fp16.ToFloat32(dst, src)
	case []bf16.BFloat16:
		bf16.ToFloat32(dst, src)
	case []q8.Block:
		q8.Dequantize(dst, src)
	case []float32:
		copy(dst, src)
	}
}
