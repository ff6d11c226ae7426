// Package dispatch owns the choice of SIMD variant for the whole module: which variants
// this CPU can run, which one is active, and the function tables that follow the choice.
//
// cpuid is read once, at start-up. Every kernel is a [Func]: a table of implementations
// keyed by variant name plus the one currently selected, so the hot path is a single
// indirect call with no per-call feature test, or, for the dot products, whose calls
// last a few nanoseconds, one direct call of an assembly entry that takes the selected
// [Variant] and branches on it. [Use] switches every Func at once, which is how
// `kernels.Use` also switches the conversions in package fp16 without either package
// importing the other.
package dispatch

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// Generic is the name of the scalar Go variant, which every platform can run.
const Generic = "generic"

// EnvVar names the environment variable read once at start-up to force a variant.
const EnvVar = "KVSIMD_ISA"

// fallback lists, for each variant, the variants to try in order when a kernel has no
// implementation of its own for it. A kernel without an avx512 body runs its avx2 one.
var fallback = map[string][]string{
	"avx512": {"avx512", "avx2", Generic},
	"avx2":   {"avx2", Generic},
	"neon":   {"neon", Generic},
	Generic:  {Generic},
}

var (
	supported = append(detect(), Generic) // best first
	active    = supported[0]
	funcs     []selector

	// EnvErr reports a KVSIMD_ISA value that could not be honoured; nil otherwise.
	EnvErr error
)

func init() {
	if v, ok := lookupEnv(); ok {
		if err := Use(v); err != nil {
			EnvErr = fmt.Errorf("%s=%q ignored, using %q: %w", EnvVar, v, active, err)
		}
	}
}

func lookupEnv() (string, bool) {
	v, ok := os.LookupEnv(EnvVar)
	return v, ok && v != ""
}

type selector interface{ selectVariant(name string) }

// Func is one kernel's dispatch table. Call is the implementation of the active
// variant, or of the variant it falls back to (an avx512 kernel without an avx512 body
// runs its avx2 one); callers invoke it directly.
type Func[F any] struct {
	impls map[string]F
	Call  F
}

// A Variant numbers the variants for a branch. The dot products pass ActiveVariant to
// their assembly entries (package asm numbers the variants alike), which branch on it:
// a call through Call reaches assembly through Go's ABI wrapper, one more frame, which
// cost them about 1 ns of 6–7 at n = 128. Kernels that run for microseconds per call
// use Call.
type Variant uint8

const (
	GenericVariant Variant = iota
	AVX2
	AVX512
	NEON
	// NEONFHM is the number of the neon variant on a CPU with FEAT_FHM (FMLAL, an fp16
	// multiply-add into float32 lanes: Apple M1 and later, Neoverse V1, V2, N2; not
	// Neoverse N1 or Cortex-A53/A55/A76). The variant keeps its name: the CPU adds a
	// body of DotF16's entry, which gives the same bits as the one without it, and
	// selecting it costs the entry no more than the variant's own number does. So
	// "neon" has two numbers, one per kind of CPU, chosen at start-up; [Number] says
	// which.
	NEONFHM
)

var variantNumbers = map[string]Variant{Generic: GenericVariant, "avx2": AVX2, "avx512": AVX512, "neon": neonNumber()}

// Number returns the number of the named variant on this CPU (NEON or NEONFHM for
// neon), whether or not it can run it, and GenericVariant for an unknown name: the
// value that the dot products' entries take when it is active.
func Number(name string) Variant { return variantNumbers[name] }

// ActiveVariant is the number of the active variant. The dot products' entries hold a
// body for every variant of their GOARCH, so they never fall back and can take the
// module's number rather than a Func's: read from a fixed address, it costs a call one
// load where a field of a Func, behind its pointer, costs two (2 % of a call at
// n = 128).
var ActiveVariant = variantNumbers[active]

// New returns a Func whose generic implementation is generic, registered so that [Use]
// reaches it. Call it from a package-level variable initialiser.
func New[F any](generic F) *Func[F] {
	f := &Func[F]{impls: map[string]F{Generic: generic}, Call: generic}
	funcs = append(funcs, f)
	return f
}

// Add registers impl as the implementation for variant; arch-specific init functions
// call it only for variants the build contains.
func (f *Func[F]) Add(variant string, impl F) {
	if _, ok := fallback[variant]; !ok {
		panic("dispatch: unknown variant " + variant)
	}
	f.impls[variant] = impl
	f.selectVariant(active)
}

// For returns the implementation that runs when variant is active, for tests that
// compare variants side by side.
func (f *Func[F]) For(variant string) F {
	return f.resolve(variant)
}

// resolve returns the implementation that runs when variant is active.
func (f *Func[F]) resolve(variant string) F {
	for _, v := range fallback[variant] {
		if impl, ok := f.impls[v]; ok {
			return impl
		}
	}
	return f.impls[Generic]
}

func (f *Func[F]) selectVariant(name string) {
	f.Call = f.resolve(name)
}

// Variants lists the variants this CPU and build can run, best first, ending in Generic.
func Variants() []string { return append([]string(nil), supported...) }

// Tested lists the variants that tests compare against the reference: Variants(), or,
// when KVSIMD_TEST_VARIANTS names some (comma-separated), only those of them this CPU
// runs. Emulated runs use it to spend their ~100× slowdown on the variant that only the
// emulator can execute.
func Tested() []string {
	only := os.Getenv("KVSIMD_TEST_VARIANTS")
	if only == "" {
		return Variants()
	}
	var vs []string
	for _, v := range supported {
		if slices.Contains(strings.Split(only, ","), v) {
			vs = append(vs, v)
		}
	}
	return vs
}

// Active is the name of the variant every kernel currently runs.
func Active() string { return active }

// Use makes name the active variant of every kernel. It is meant for start-up, tests and
// benchmarks: it must not run concurrently with kernel calls.
func Use(name string) error {
	for _, v := range supported {
		if v == name {
			active, ActiveVariant = name, variantNumbers[name]
			for _, f := range funcs {
				f.selectVariant(name)
			}
			return nil
		}
	}
	why := "unknown variant"
	if _, known := fallback[name]; known {
		why = "not supported by this CPU or build"
	}
	return fmt.Errorf("variant %q: %s; usable: %s", name, why, strings.Join(supported, ", "))
}
