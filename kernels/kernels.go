// Package kernels owns the SIMD kernels of kvsimd and the choice of which variant runs
// them.
//
// Every kernel is one exported function whose doc comment states its contract and its
// reference loop. Behind it sit a scalar Go implementation (the "generic" variant,
// always compiled, the oracle of every test) and the SIMD variants:
//
//	variant  needs                                             arch
//	avx512   AVX-512F/BW/DQ/VL, AVX2, FMA, F16C, POPCNT, BMI1  amd64
//	avx2     AVX2, FMA, F16C, POPCNT, BMI1                     amd64
//	neon     ASIMD (FCVTL/FCVTN); FEAT_FHM used when present   arm64
//	generic  nothing                                           every GOARCH
//
// On a core with FEAT_FHM the neon variant's DotF16 multiplies halves with FMLAL, without
// widening them first; it gives the bits of the widening body (tested on both).
//
// The kernels that read a KV cache (DotF32F16, Scores, WeightedSumRows, GatherRows,
// the fused attentions and their strided, heads, paged and causal forms) have twins
// for caches kept as bfloat16 (DotF32BF16, ScoresBF16, …), as ggml's q8_0 blocks
// (DotF32Q8, ScoresQ8, …) and as float32 (DotF32, ScoresF32, …). Widening any format
// is exact, and each twin performs its fp16 kernel's float32 operations in the same
// order, so it has that kernel's bound and, for equal values, its bits on the same
// variant (DotF32 aside, a kernel of its own). A q8_0 row of dim values is dim/32
// blocks: dim and strides count values and must be multiples of 32.
//
// cpuid is read once at start-up and the best variant is installed in package-level
// function tables, so a call costs one indirect call and no feature test. [Use] forces
// another variant for every kernel at once, the conversions of packages fp16, bf16 and
// q8 included; the environment variable KVSIMD_ISA=generic|avx2|avx512|neon does the
// same at start-up, and a value this CPU cannot run falls back to the best variant and
// is reported by [EnvError]. Build tags purego and noasm compile the generic variant only.
//
// A kernel that has no body of its own for a variant runs the next one down
// (avx512 → avx2 → generic, neon → generic).
//
// Kernels panic on programmer error (mismatched lengths, sizes whose products overflow
// int), as the standard library does, before any variant's code runs, so the message
// is the same on every variant. They do not allocate, with one exception stated on TopK: it grows dst when dst
// is short, and its scratch comes from a sync.Pool that is empty on the first call.
//
// Under the race detector, the wrappers report the memory their assembly reads and
// writes, which the detector cannot see for itself.
package kernels

import (
	"fmt"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/internal/dispatch"
)

// Float16 is the fp16 element type, x448/float16's Float16.
type Float16 = fp16.Float16

// Variants lists the variants this CPU and build can run, best first; the last is
// always "generic".
func Variants() []string { return dispatch.Variants() }

// Active names the variant every kernel currently runs.
func Active() string { return dispatch.Active() }

// Use makes name the variant of every kernel, the fp16, bf16 and q8 conversions
// included. An unknown or unsupported name changes nothing and returns an error that
// lists the usable ones.
// Use is for start-up, tests and benchmarks: it must not run concurrently with kernels.
func Use(name string) error {
	if err := dispatch.Use(name); err != nil {
		return fmt.Errorf("kernels.Use: %w", err)
	}
	return nil
}

// EnvError reports why the KVSIMD_ISA value seen at start-up was not honoured, or nil.
func EnvError() error { return dispatch.EnvErr }
