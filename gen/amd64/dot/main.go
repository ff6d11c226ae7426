// Command dot generates asm/dot_amd64.s: fp16/fp32 dot products (this file) and the
// score block Q·Kᵀ in two layouts (panels.go for blocks of many queries, rows.go for a
// few). The FMA peak loop that the benchmarks measure them against is the report's own
// (gen/amd64/peak).
package main

import (
	"fmt"
	"math/bits"

	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// dotUnroll is the number of accumulators of a dot product, so that one iteration
// takes 64 elements: eight on AVX2, FMA latency (4 cycles) times two FMA ports, where
// eight measured a little faster than four at n = 4096 and the same at 1024 (Zen 1),
// and on a Sapphire Rapids Xeon up to 20% faster at n ≥ 1024. Four on AVX-512, whose
// loads limit an fp32 dot to one FMA per cycle anyway: there four were 4–30% faster
// than eight at n ≤ 256, where the reduction and the short loop count, and within ±4%
// at n ≥ 1024.
func dotUnroll(isa ISA) int { return 64 / isa.Lanes }

// dots lists the dot products, as the pairs of operands they multiply.
var dots = [][2]operand{{operandF16, operandF16}, {operandF32, operandF16}, {operandF32, operandF32}}

func main() {
	Header()
	for _, d := range dots {
		dotEntry(d[0], d[1])
	}
	for _, isa := range Both {
		scoresRows(isa, operandF16, false)
		for _, dim := range []int{0, 64, 128} {
			scoresPanels(isa, dim, operandF16)
		}
	}
	// The other key formats come after fp16's functions, whose labels (numbered in
	// order) they thus leave as they were.
	for _, key := range []operand{operandBF16, operandQ8, operandF32} {
		for _, isa := range Both {
			if key.widened() { // a float32 key's dot is DotF32's entry
				dotFunc(isa, operandF32, key)
			}
			scoresRows(isa, key, false)
			for _, dim := range []int{0, 64, 128} {
				scoresPanels(isa, dim, key)
			}
		}
	}
	// The row kernels over tables of row addresses (the paged attention's) came last.
	for _, key := range []operand{operandF16, operandBF16, operandQ8, operandF32} {
		for _, isa := range Both {
			scoresRows(isa, key, true)
		}
	}
	Generate()
}

// isaNumbers are the values of the entries' sel argument that select a body: the
// numbers of internal/dispatch's Variant, which asm/dot.go names and a test in package
// kernels holds to them.
var isaNumbers = map[string]int{AVX2.Suffix: 1, AVX512.Suffix: 2}

// An operand describes how one side of a dot product, or the keys of a score block,
// is stored. Every format widens exactly to float32, so a kernel over any of them
// performs the same float32 operations as over halves, only the loads differ.
type operand struct {
	name  string // in the function name: DotF32F16
	goTyp string // Go element type
	size  int    // bytes per element (q8_0: per quant, the block's scale aside)
	kind  kind
}

// A kind is a storage format of the elements.
type kind int

const (
	kindF32  kind = iota
	kindF16       // IEEE binary16: VCVTPH2PS
	kindBF16      // bfloat16: the bits shifted left 16
	kindQ8        // ggml's block_q8_0: an fp16 scale d, then 32 int8 quants q; q·d
)

var (
	operandF16  = operand{"F16", "uint16", 2, kindF16}
	operandF32  = operand{"F32", "float32", 4, kindF32}
	operandBF16 = operand{"BF16", "uint16", 2, kindBF16}
	operandQ8   = operand{"Q8", "byte", 1, kindQ8}
)

// q8_0's block: blockLen quants after a two-byte scale, blockBytes in all, unaligned.
const (
	blockLen   = 32
	blockBytes = 34
)

// widened reports whether the elements are converted to float32 on loading.
func (o operand) widened() bool { return o.kind != kindF32 }

// format is the key format's part of a Scores kernel's name: none for fp16, whose
// names predate the others.
func (o operand) format() string {
	if o.kind == kindF16 {
		return ""
	}
	return o.name
}

// bytes is the size of count elements in memory; for q8_0 count is a multiple of
// blockLen.
func (o operand) bytes(count int) int {
	if o.kind == kindQ8 {
		return count / blockLen * blockBytes
	}
	return count * o.size
}

// lastOffset returns the offset in a key of dim elements of its last element (q8_0:
// of its last byte).
func (o operand) lastOffset(dim reg.Register) reg.GPVirtual {
	last := GP64()
	if o.kind == kindQ8 { // dim/32 blocks, less one byte
		MOVQ(dim, last)
		SHRQ(U8(5), last)
		IMUL3Q(U8(blockBytes), last, last)
		DECQ(last)
	} else if o.size == 2 {
		LEAQ(Mem{Base: dim, Index: dim, Scale: 1, Disp: -2}, last) // two bytes an element
	} else {
		MOVQ(dim, last)
		SHLQ(U8(bits.TrailingZeros(uint(o.size))), last)
		SUBQ(U8(o.size), last)
	}
	return last
}

// strideBytes is the size of the unit of a stride between keys: an element, or a
// q8_0 block.
func (o operand) strideBytes() int {
	if o.kind == kindQ8 {
		return blockBytes
	}
	return o.size
}

// vector loads isa.Lanes elements at m as float32, widening halves and bfloat16s.
// q8_0 takes q8Vector instead.
func (o operand) vector(isa ISA, m Mem) reg.VecVirtual {
	v := isa.Vec()
	switch o.kind {
	case kindF16:
		VCVTPH2PS(m, v)
	case kindBF16:
		VPMOVZXWD(m, v)
		VPSLLD(U8(16), v, v)
	default:
		VMOVUPS(m, v)
	}
	return v
}

// scalar loads the element at m as a float32 in the low lane of an XMM register.
func (o operand) scalar(m Mem) reg.VecVirtual {
	x := XMM()
	switch o.kind {
	case kindF16:
		h := GP32()
		MOVWLZX(m, h)
		VMOVD(h, x)
		VCVTPH2PS(x, x)
	case kindBF16:
		h := GP32()
		MOVWLZX(m, h)
		SHLL(U8(16), h)
		VMOVD(h, x)
	default:
		VMOVSS(m, x)
	}
	return x
}

// q8Scale returns the scale d of the q8_0 block at m, widened into every lane: the
// half broadcast, then converted, two instructions once per block and key.
func q8Scale(isa ISA, m Mem) reg.VecVirtual {
	var h reg.VecVirtual = XMM() // a register of its own: a write to the low part of a
	if isa.Lanes == 16 {         // wider one would leave its upper part live for avo
		h = YMM()
	}
	v := isa.Vec()
	VPBROADCASTW(m, h)
	VCVTPH2PS(h, v)
	return v
}

// q8Vector loads isa.Lanes quants at m widened to float32 and multiplied by the
// block's scale d (a register or memory, from q8Scale). q·d is exact in float32
// (|q| ≤ 127 has 7 significant bits, d 11), so the vector holds the values exactly,
// as the widened halves do.
func q8Vector(isa ISA, m Mem, d Op) reg.VecVirtual {
	v := isa.Vec()
	VPMOVSXBD(m, v)
	VCVTDQ2PS(v, v)
	VMULPS(d, v, v)
	return v
}

// dotName is the name of the dot product of a and b: DotF32F16.
func dotName(a, b operand) string {
	if a == b {
		return "Dot" + a.name
	}
	return "Dot" + a.name + b.name
}

// bodyComment starts the comment before each body of an entry, followed by its ISA:
// the register test in package asm checks the AVX2 bodies from it on.
const bodyComment = "Body: "

// dotEntry writes DotF16 and its kin: the AVX-512 body, then the AVX2 body, each run
// when sel names it and the lengths agree (asm/dot.go: sel is the variant's number
// exactly when they do); otherwise, or when a body's result is not finite, a jump to
// the Go continuation. The operands come as pointers and a length, with their
// difference in sel: a frame of seven words (two slices and the variant) cost 0.5 ns
// of the 5.8 of a call at n = 128 against these four (Sapphire Rapids, AVX-512). The
// bodies are in the entry, not functions of their own, because a jump from one
// function to another cost 0.7 ns of the 6 of a call at n = 128. AVX-512 comes first,
// so that its machines take no branch before the body.
func dotEntry(a, b operand) {
	name := dotName(a, b)
	TEXT(name, NOSPLIT, fmt.Sprintf("func(a *%s, b *%s, n int, sel int64) float32", a.goTyp, b.goTyp))
	Pragma("noescape")
	Doc(name+" returns the dot product of a[:n] and b[:n], accumulated in float32, with the",
		"body of the variant that sel selects (asm/dot.go), or as its Go continuation does,",
		"which takes the same arguments.")
	cont, avx2Body := label("continue", ISA{}), label("dotbody", AVX2)
	sel := Load(Param("sel"), GP64())
	for _, body := range []ISA{AVX512, AVX2} {
		next := label("notisa", body)
		CMPQ(sel, U8(isaNumbers[body.Suffix]))
		JNE(LabelRef(next))
		if body.Suffix == AVX2.Suffix {
			Label(avx2Body)
		}
		Comment(bodyComment + body.Suffix)
		dot(body, a, b, cont, avx2Body)
		Label(next)
	}
	Label(cont)
	tailJump("·continue" + name)
}

// tailJump continues in the function named target with the current arguments. Only
// a frameless function may do so (the callee then returns straight to its caller).
// avo sees a jump to no label of its own as the function's end, as it sees RET.
func tailJump(target string) {
	Instruction(&ir.Instruction{Opcode: "JMP", Operands: []Op{LabelRef(target + "(SB)")}, IsTerminal: true})
}

// f16ZMMMin is the Go variable in package asm (asm/dot_cpu_amd64.go) that holds the
// shortest DotF16 the AVX-512 body runs with its own 16-lane conversions, shorter ones
// going to the AVX2 body: a choice per CPU family, made at start-up.
var f16ZMMMin = Mem{Symbol: Symbol{Name: "·f16ZMMMin"}, Base: reg.StaticBase}

// dotFunc writes Dot{a}{b}{ISA}: one body of dot as a function of its own, for the
// key formats whose kernels reach it through a function value (kernels registers it
// with Add) rather than through an entry. It returns a result that is not finite as
// it is: the caller settles it.
func dotFunc(isa ISA, a, b operand) {
	name := dotName(a, b) + isa.Suffix
	TEXT(name, NOSPLIT, fmt.Sprintf("func(a []%s, b []%s) float32", a.goTyp, b.goTyp))
	Pragma("noescape")
	what := "len(a) = len(b)"
	if b.kind == kindQ8 {
		what = "len(a) = 32·len(b)/34, b holding q8_0 blocks"
	}
	Doc(name+" returns the dot product of a and b, "+what+", accumulated in float32",
		"with the "+isa.Suffix+" body of Dot"+a.name+operandF16.name+" (the same operations on the widened values).")
	dot(isa, a, b, "", "")
}

// dot writes one body of a dot product's entry (or of a dotFunc, when cont is empty):
// dotUnroll accumulators over the vector body, one for leftover vectors, a horizontal
// sum, then the scalar tail added to it. A float32 operand makes the result
// overflowable, so a result of an entry that is not finite goes to cont, to be settled
// in Go. The AVX-512 body of two fp16 operands jumps to avx2Body, the AVX2 body's
// start, below f16ZMMMin. q8_0 blocks (b only) take the same vector loop, its loads by
// blocks: their lengths are multiples of 32, so the leftover vectors are one block at
// most and there is no scalar tail.
func dot(isa ISA, a, b operand, cont, avx2Body string) {
	var n reg.Register
	var pa, pb Mem
	if cont != "" { // an entry's arguments: two pointers and a length
		n = Load(Param("n"), GP64())
		if isa.Suffix == AVX512.Suffix && a.kind == kindF16 && b.kind == kindF16 {
			CMPQ(n, f16ZMMMin)
			JB(LabelRef(avx2Body))
		}
		pa = Mem{Base: Load(Param("a"), GP64())}
		pb = Mem{Base: Load(Param("b"), GP64())}
	} else {
		n = Load(Param("a").Len(), GP64())
		pa = Mem{Base: Load(Param("a").Base(), GP64())}
		pb = Mem{Base: Load(Param("b").Base(), GP64())}
	}

	acc := make([]reg.VecVirtual, dotUnroll(isa))
	for i := range acc {
		acc[i] = isa.Vec()
		VXORPS(acc[i], acc[i], acc[i])
	}
	// The unrolled loop counts its iterations down in a register of its own and tests
	// at the bottom: on AVX2 that ran 3–8 % faster at n = 128 and 3 % at n = 1024 than
	// a test at the top and a jump back (Sapphire Rapids; AVX-512 within ±1.3 %). The
	// loop over leftover vectors, which runs at most dotUnroll−1 times, tests at the top.
	leftover := 1
	if b.kind == kindQ8 {
		leftover = blockLen / isa.Lanes // a whole block, into the same accumulator
	}
	for _, k := range []int{dotUnroll(isa), leftover} {
		unrolled := k == dotUnroll(isa)
		step := k * isa.Lanes // a power of two
		top, done := label("dot", isa), label("dotdone", isa)
		var count reg.GPVirtual
		if unrolled {
			count = GP64()
			MOVQ(n, count)
			SHRQ(U8(bits.TrailingZeros(uint(step))), count)
			JZ(LabelRef(done))
			Label(top)
		} else {
			Label(top)
			CMPQ(n, U32(step))
			JB(LabelRef(done))
		}
		var d reg.VecVirtual // the current q8_0 block's scale
		for u := 0; u < k; u++ {
			sum := acc[0]
			if unrolled {
				sum = acc[u]
			}
			ma, mb := pa.Offset(u*isa.Lanes*a.size), pb.Offset(u*isa.Lanes*b.size)
			// A float32 side is the FMA's memory operand; halves need widening first.
			switch {
			case b.kind == kindQ8:
				e := u * isa.Lanes // the vector's first element in this iteration
				block := pb.Offset(b.bytes(e - e%blockLen))
				if e%blockLen == 0 {
					d = q8Scale(isa, block)
				}
				VFMADD231PS(ma, q8Vector(isa, block.Offset(2+e%blockLen), d), sum)
			case !b.widened():
				VFMADD231PS(mb, a.vector(isa, ma), sum)
			case !a.widened():
				VFMADD231PS(ma, b.vector(isa, mb), sum)
			default:
				VFMADD231PS(b.vector(isa, mb), a.vector(isa, ma), sum)
			}
		}
		ADDQ(U32(a.bytes(step)), pa.Base)
		ADDQ(U32(b.bytes(step)), pb.Base)
		if unrolled {
			DECQ(count)
			JNZ(LabelRef(top))
			Label(done)
			ANDQ(U32(step-1), n)
		} else {
			SUBQ(U32(step), n)
			JMP(LabelRef(top))
			Label(done)
		}
	}
	for width := len(acc) / 2; width >= 1; width /= 2 { // pairwise: log₂ rounds
		for i := range width {
			VADDPS(acc[i+width], acc[i], acc[i])
		}
	}
	sum := horizontalSum(isa, acc[0])

	if b.kind != kindQ8 {
		Comment("Scalar tail: the vector sums are already folded into the low lane.")
		top, done := label("tail", isa), label("taildone", isa)
		Label(top)
		TESTQ(n, n)
		JZ(LabelRef(done))
		VFMADD231SS(b.scalar(pb), a.scalar(pa), sum)
		ADDQ(U8(a.size), pa.Base)
		ADDQ(U8(b.size), pb.Base)
		DECQ(n)
		JMP(LabelRef(top))
		Label(done)
	}
	VZEROUPPER()
	if !a.widened() && cont != "" {
		bits := GP32()
		VMOVD(sum, bits)
		ANDL(U32(0x7f800000), bits) // the exponent: all ones for NaN and ±Inf
		CMPL(bits, U32(0x7f800000))
		JE(LabelRef(cont))
	}
	VMOVSS(sum, returnAddr())
	RET()
}

// horizontalSum adds the lanes of v into the low lane of the XMM register it returns.
func horizontalSum(isa ISA, v reg.VecVirtual) reg.VecVirtual {
	y := toYMM(isa, v)
	x, t := XMM(), XMM()
	VEXTRACTF128(U8(1), y, x)
	VADDPS(y.AsX(), x, x)
	VPERMILPS(U8(0x4e), x, t) // swap the 64-bit halves
	VADDPS(t, x, x)
	VPERMILPS(U8(0xb1), x, t) // swap neighbours
	VADDSS(t, x, x)
	return x
}

// toYMM folds a ZMM register's upper half onto its lower; YMM registers pass through.
func toYMM(isa ISA, v reg.VecVirtual) reg.VecVirtual {
	if isa.Lanes == 8 {
		return v
	}
	y := YMM()
	VEXTRACTF64X4(U8(1), v, y)
	VADDPS(v.AsY(), y, y)
	return y
}

var labels int

func returnAddr() Mem {
	b, err := ReturnIndex(0).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

func label(what string, isa ISA) string {
	labels++
	return fmt.Sprintf("%s%s_%d", what, isa.Suffix, labels)
}
