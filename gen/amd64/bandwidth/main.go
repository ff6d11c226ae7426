// Command bandwidth generates asm/bandwidth_amd64.s: the read-bandwidth loop that the
// benchmark report measures memory-bound kernels against, one full-width load per
// vector register of a buffer that the caller sizes to L1, L2, L3 or DRAM.
package main

import (
	"fmt"

	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// chains is the number of vectors loaded per iteration, each ORed into its own
// accumulator: a one-cycle integer op on more ports than there are load ports, so the
// loads alone bound the loop.
const chains = 8

func main() {
	Header()
	for _, isa := range Both {
		readBandwidth(isa)
	}
	Generate()
}

// readBandwidth writes ReadBandwidth{AVX2,AVX512}: passes sweeps over p, chains
// vectors per iteration. It returns the bytes it read; the accumulators are discarded,
// which is safe because the CPU cannot know that.
func readBandwidth(isa ISA) {
	name := "ReadBandwidth" + isa.Suffix
	step := chains * isa.Bytes()
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
	acc := make([]reg.VecVirtual, chains)
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
