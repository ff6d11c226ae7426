// Command peak generates bench/peak_amd64.s: the loops that the benchmark report
// measures the kernels against, the FMA peak and the read bandwidth of each cache
// level. They belong to the report (package main of ./bench), not to the library, so
// they are generated there with -pkg main.
package main

import (
	"fmt"

	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// peakChains is the number of independent FMA chains in the peak loop: more than
// latency times ports, so the loop measures throughput.
const peakChains = 12

// readChains is the number of vectors the read loop loads per iteration, each ORed
// into its own accumulator: a one-cycle integer op on more ports than there are load
// ports, so the loads alone bound the loop.
const readChains = 8

func main() {
	Header()
	for _, isa := range Both {
		peakFMA(isa)
		readBandwidth(isa)
	}
	Generate()
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
	top, done := name+"_loop", name+"_done"
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

// readBandwidth writes ReadBandwidth{AVX2,AVX512}: passes sweeps over p, readChains
// vectors per iteration. It returns the bytes it read; the accumulators are discarded,
// which is safe because the CPU cannot know that.
func readBandwidth(isa ISA) {
	name := "ReadBandwidth" + isa.Suffix
	step := readChains * isa.Bytes()
	TEXT(name, NOSPLIT, "func(p []byte, passes int) (bytes int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s reads p[:len(p) rounded down to %d bytes] passes times with %d-byte loads and returns the bytes read.",
		name, step, isa.Bytes()))
	base := Load(Param("p").Base(), GP64())
	n := Load(Param("p").Len(), GP64())
	passes := Load(Param("passes"), GP64())
	ANDQ(I32(-step), n)
	total := GP64()
	MOVQ(n, total)
	IMULQ(passes, total)
	Store(total, ReturnIndex(0))
	// AVX-512F spells the integer ops with an element size; VEX has none.
	xor, or := func(a reg.VecVirtual) { VPXOR(a, a, a) }, func(m Mem, a reg.VecVirtual) { VPOR(m, a, a) }
	if isa.Lanes == 16 {
		xor, or = func(a reg.VecVirtual) { VPXORD(a, a, a) }, func(m Mem, a reg.VecVirtual) { VPORD(m, a, a) }
	}
	acc := make([]reg.VecVirtual, readChains)
	for i := range acc {
		acc[i] = isa.Vec()
		xor(acc[i])
	}
	pass, passDone := name+"_pass", name+"_done"
	sweep, sweepDone := name+"_sweep", name+"_sweepdone"
	offset := GP64()
	Label(pass)
	TESTQ(passes, passes)
	JZ(LabelRef(passDone))
	XORQ(offset, offset)
	Label(sweep)
	CMPQ(offset, n)
	JAE(LabelRef(sweepDone))
	for i, a := range acc {
		or(Mem{Base: base, Index: offset, Scale: 1, Disp: i * isa.Bytes()}, a)
	}
	ADDQ(U32(step), offset)
	JMP(LabelRef(sweep))
	Label(sweepDone)
	DECQ(passes)
	JMP(LabelRef(pass))
	Label(passDone)
	VZEROUPPER()
	RET()
}
