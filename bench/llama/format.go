package llama

import (
	"fmt"
	"strings"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/kernels"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

// Format is the element format the KV cache stores K (after RoPE) and V in. Each row
// is rounded to it once, as it is written, the way an engine writes its cache; the
// attention and SnapKV's selection then read the stored rows, widened exactly.
type Format int

const (
	// FP16 is IEEE half precision (fp16.Float16), round to nearest even: the default.
	FP16 Format = iota
	// BF16 is bfloat16 (bf16.BFloat16), round to nearest even: the cache of an engine
	// that keeps it in a bf16 model's dtype.
	BF16
	// Q8_0 is ggml's q8_0 (q8.Block): each head's row of HeadDim values is HeadDim/32
	// blocks of 32 int8 quants and an fp16 scale, quantized by q8.Quantize, which is
	// ggml's quantize_row_q8_0_ref bit for bit (llama.cpp's --cache-type-k/-v q8_0).
	Q8_0
	// F32 keeps float32 rows, unrounded: the model's own float32 forward, the yardstick
	// of the others' logits, and PyTorch's fp32 cache (results.json).
	F32
)

var formatNames = [...]string{FP16: "fp16", BF16: "bf16", Q8_0: "q8_0", F32: "f32"}

func (f Format) String() string {
	if f < 0 || int(f) >= len(formatNames) {
		return fmt.Sprintf("Format(%d)", int(f))
	}
	return formatNames[f]
}

// Formats are the cache formats engines keep, the choices of -kv, fp16 first.
func Formats() []Format { return []Format{FP16, BF16, Q8_0, F32} }

// ParseFormat returns the format named s, one of Formats' names.
func ParseFormat(s string) (Format, error) {
	var names []string
	for _, f := range Formats() {
		if s == f.String() {
			return f, nil
		}
		names = append(names, f.String())
	}
	return 0, fmt.Errorf("llama: KV cache format %q, want one of %s", s, strings.Join(names, ", "))
}

// RowBytes is the bytes of one stored row of dim values: dim·2 for fp16 and bf16,
// dim/32 blocks of 34 bytes for q8_0, dim·4 for float32.
func (f Format) RowBytes(dim int) int {
	switch f {
	case Q8_0:
		return dim / q8.BlockLen * q8.BlockSize
	case F32:
		return dim * 4
	}
	return dim * 2
}

// elem is the element types of the formats: an fp16 or bf16 value, a q8_0 block of 32
// values, or a float32; snapkv's.
type elem = snapkv.Element

// codec is what the forward pass needs of a format E: rounding float32 rows into it,
// widening them back, and the attention kernels over its rows. Rows of dim values are
// dim/per elements.
type codec[E elem] struct {
	format Format
	per    int // values per element: q8.BlockLen for q8_0, 1 otherwise
	narrow func(dst []E, src []float32)
	widen  func(dst []float32, src []E)
	// scores is kernels.Scores over keys k of n rows of dim values.
	scores func(dst, q []float32, k []E, rows, n, dim int, scale float32)
	// weighted is kernels.WeightedSumRows over the rows of v, each len(dst) values.
	weighted func(dst, w []float32, v []E)
}

// codecOf returns format E's codec: the one place the element type becomes a choice of
// kernels.
func codecOf[E elem]() *codec[E] {
	var c any
	switch any(*new(E)).(type) {
	case fp16.Float16:
		c = &codec[fp16.Float16]{format: FP16, per: 1,
			narrow: fp16.FromFloat32, widen: fp16.ToFloat32,
			scores: kernels.Scores, weighted: kernels.WeightedSumRows}
	case bf16.BFloat16:
		c = &codec[bf16.BFloat16]{format: BF16, per: 1,
			narrow: bf16.FromFloat32, widen: bf16.ToFloat32,
			scores: kernels.ScoresBF16, weighted: kernels.WeightedSumRowsBF16}
	case q8.Block:
		c = &codec[q8.Block]{format: Q8_0, per: q8.BlockLen,
			narrow: q8.Quantize, widen: q8.Dequantize,
			scores: kernels.ScoresQ8, weighted: kernels.WeightedSumRowsQ8}
	case float32:
		c = &codec[float32]{format: F32, per: 1,
			narrow: func(dst, src []float32) { copy(dst, src) }, widen: func(dst, src []float32) { copy(dst, src) },
			scores: kernels.ScoresF32, weighted: kernels.WeightedSumRowsF32}
	}
	return c.(*codec[E])
}
