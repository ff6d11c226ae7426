// Command dot generates asm/dot_amd64.s: fp16/fp32 dot products (this file), the score
// block Q·Kᵀ in two layouts (panels.go for blocks of many queries, rows.go for a few),
// and the FMA peak loop that the benchmarks measure them against.
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"

	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// dotUnroll is the number of accumulators of a dot product: FMA latency (4 cycles)
// times two FMA ports. The fp16 forms are bound by the conversions anyway; eight
// measured a little faster than four at n = 4096 and the same at 1024.
const dotUnroll = 8

// peakChains is the number of independent FMA chains in the peak loop: more than
// latency times ports, so the loop measures throughput.
const peakChains = 12

func main() {
	Header()
	for _, isa := range Both {
		dot(isa, operandF16, operandF16)
		dot(isa, operandF32, operandF16)
		dot(isa, operandF32, operandF32)
		scoresRows(isa)
		for _, dim := range []int{0, 64, 128} {
			scoresPanels(isa, dim)
		}
		peakFMA(isa)
	}
	Generate()
	checkAVX2Registers()
}

// checkAVX2Registers fails the generation if an AVX2 function uses a vector register
// above 15: avo allocates from all 32 AVX-512 registers, and such an instruction
// would fault on a CPU without AVX-512.
func checkAVX2Registers() {
	out, err := os.ReadFile(flag.Lookup("out").Value.String())
	if err != nil {
		panic(err)
	}
	high := regexp.MustCompile(`\b[XYZ](1[6-9]|2[0-9]|3[01])\b`)
	var function string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "TEXT ") {
			function = line
		}
		if strings.Contains(function, AVX2.Suffix+"(SB)") && high.MatchString(line) {
			fmt.Fprintf(os.Stderr, "%s uses an AVX-512 register: %s\n", function, line)
			os.Exit(1)
		}
	}
}

// An operand describes how one side of a dot product is stored.
type operand struct {
	name  string // in the function name: DotF32F16
	goTyp string // Go element type
	size  int    // bytes per element
	f16   bool
}

var (
	operandF16 = operand{"F16", "uint16", 2, true}
	operandF32 = operand{"F32", "float32", 4, false}
)

// vector loads isa.Lanes elements at m as float32, widening halves.
func (o operand) vector(isa ISA, m Mem) reg.VecVirtual {
	v := isa.Vec()
	if o.f16 {
		VCVTPH2PS(m, v)
	} else {
		VMOVUPS(m, v)
	}
	return v
}

// scalar loads the element at m as a float32 in the low lane of an XMM register.
func (o operand) scalar(m Mem) reg.VecVirtual {
	x := XMM()
	if o.f16 {
		h := GP32()
		MOVWLZX(m, h)
		VMOVD(h, x)
		VCVTPH2PS(x, x)
	} else {
		VMOVSS(m, x)
	}
	return x
}

// dot writes DotF16AVX2 and its kin: dotUnroll accumulators over the vector body, one
// for leftover vectors, a horizontal sum, then the scalar tail added to it.
func dot(isa ISA, a, b operand) {
	name := "Dot" + a.name
	if a != b {
		name += b.name
	}
	name += isa.Suffix
	TEXT(name, NOSPLIT, fmt.Sprintf("func(a []%s, b []%s) float32", a.goTyp, b.goTyp))
	Pragma("noescape")
	Doc(name + " returns the dot product of a and b[:len(a)], accumulated in float32.")
	pa := Mem{Base: Load(Param("a").Base(), GP64())}
	pb := Mem{Base: Load(Param("b").Base(), GP64())}
	n := Load(Param("a").Len(), GP64())

	acc := make([]reg.VecVirtual, dotUnroll)
	for i := range acc {
		acc[i] = isa.Vec()
		VXORPS(acc[i], acc[i], acc[i])
	}
	for _, k := range []int{dotUnroll, 1} {
		top, done := label("dot", isa), label("dotdone", isa)
		Label(top)
		CMPQ(n, U32(k*isa.Lanes))
		JB(LabelRef(done))
		for u := 0; u < k; u++ {
			ma, mb := pa.Offset(u*isa.Lanes*a.size), pb.Offset(u*isa.Lanes*b.size)
			// A float32 side is the FMA's memory operand; halves need widening first.
			switch {
			case !b.f16:
				VFMADD231PS(mb, a.vector(isa, ma), acc[u])
			case !a.f16:
				VFMADD231PS(ma, b.vector(isa, mb), acc[u])
			default:
				VFMADD231PS(b.vector(isa, mb), a.vector(isa, ma), acc[u])
			}
		}
		ADDQ(U32(k*isa.Lanes*a.size), pa.Base)
		ADDQ(U32(k*isa.Lanes*b.size), pb.Base)
		SUBQ(U32(k*isa.Lanes), n)
		JMP(LabelRef(top))
		Label(done)
	}
	for width := len(acc) / 2; width >= 1; width /= 2 { // pairwise: log₂ rounds
		for i := range width {
			VADDPS(acc[i+width], acc[i], acc[i])
		}
	}
	sum := horizontalSum(isa, acc[0])

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
	VZEROUPPER()
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

// peakFMA writes PeakFMA{AVX2,AVX512}: iterations × peakChains independent FMAs on
// full vectors, the throughput ceiling that benchmarks report their FLOP rate against.
// It returns the number of flops it ran, so callers need not know the loop's shape.
func peakFMA(isa ISA) {
	name := "PeakFMA" + isa.Suffix
	TEXT(name, NOSPLIT, "func(iterations int) (flops int)")
	Doc(fmt.Sprintf("%s runs iterations × %d independent %d-lane FMAs and returns the flop count.",
		name, peakChains, isa.Lanes))
	n := Load(Param("iterations"), GP64())
	flops := GP64()
	IMUL3Q(U32(peakChains*2*isa.Lanes), n, flops)
	Store(flops, ReturnIndex(0))
	acc := make([]reg.VecVirtual, peakChains)
	for i := range acc {
		acc[i] = isa.Vec()
		VXORPS(acc[i], acc[i], acc[i])
	}
	x, y := isa.Vec(), isa.Vec()
	VXORPS(x, x, x)
	VXORPS(y, y, y)
	top, done := label("peak", isa), label("peakdone", isa)
	Label(top)
	TESTQ(n, n)
	JZ(LabelRef(done))
	for _, a := range acc {
		VFMADD231PS(x, y, a)
	}
	DECQ(n)
	JMP(LabelRef(top))
	Label(done)
	VZEROUPPER()
	RET()
}
