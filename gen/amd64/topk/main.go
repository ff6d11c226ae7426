// Command topk generates asm/topk_amd64.s: TopK's candidate filter, which compares a
// block against a threshold range and compresses the indices and bits of the elements
// inside it, branch-free.
package main

import (
	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// unroll is the number of vectors filtered per loop iteration; the output position is a
// dependency chain through POPCNT and ADD, so more vectors per iteration only saves the
// loop overhead.
const unroll = 4

// VCMPPS predicates: ordered, so NaN is never in range.
const (
	cmpGE = 0x1d // GE_OQ
	cmpLE = 0x12 // LE_OQ
)

var laneIndex, compressPerm Mem

func main() {
	Header()
	laneIndex = GLOBL("topkIota", RODATA|NOPTR)
	for i := 0; i < 16; i++ {
		DATA(4*i, U32(i))
	}
	compressPerm = permTable()
	for _, isa := range Both {
		filter(isa)
	}
	Generate()
}

// permTable is AVX2's stand-in for VPCOMPRESSD: for each 8-bit lane mask, the VPERMD
// indices (one byte each, widened by VPMOVZXBD) that move the selected lanes, in order,
// to the front.
func permTable() Mem {
	t := GLOBL("topkCompressPerm", RODATA|NOPTR)
	for mask := 0; mask < 256; mask++ {
		var entry uint64
		slot := 0
		for lane := 0; lane < 8; lane++ {
			if mask&(1<<lane) != 0 {
				entry |= uint64(lane) << (8 * slot)
				slot++
			}
		}
		DATA(8*mask, U64(entry))
	}
	return t
}

// filter writes the in-range elements' indices and bits with full-vector stores at
// the current output position, which then advances by the number selected: the store
// never passes the element being compared, so idx and bits need only len(x) entries.
func filter(isa ISA) {
	name := "TopKFilter" + isa.Suffix
	TEXT(name, NOSPLIT, "func(idx []int32, bits []uint32, x []float32, lo, hi float32, base int32) int")
	Pragma("noescape")
	Doc(name+" writes base+i and the bits of x[i], in ascending order, for every i with lo ≤ x[i] ≤ hi",
		"into idx and bits, which hold at least len(x) entries, and returns how many.")
	idxOut := Load(Param("idx").Base(), GP64())
	bitsOut := Load(Param("bits").Base(), GP64())
	x := Mem{Base: Load(Param("x").Base(), GP64())}
	n := Load(Param("x").Len(), GP64())
	loX := Load(Param("lo"), XMM())
	hiX := Load(Param("hi"), XMM())
	pos := Load(Param("base"), GP32())

	lo, hi := isa.Vec(), isa.Vec()
	VBROADCASTSS(loX, lo)
	VBROADCASTSS(hiX, hi)
	// index holds the indices of the next vector's lanes; step advances it.
	index, step := isa.Vec(), isa.Vec()
	VMOVD(pos, index.AsX())
	VPBROADCASTD(index.AsX(), index)
	VPADDD(laneIndex, index, index)
	lanes := GP32()
	MOVL(U32(isa.Lanes), lanes)
	VMOVD(lanes, step.AsX())
	VPBROADCASTD(step.AsX(), step)
	var perm reg.Register
	if isa.Lanes == 8 {
		perm = GP64()
		LEAQ(compressPerm, perm)
	}
	count := GP64()
	XORQ(count, count)

	Loop(isa, n, unroll, func(vectors int) {
		for u := 0; u < vectors; u++ {
			v, selIdx, selBits := isa.Vec(), isa.Vec(), isa.Vec()
			VMOVUPS(x.Offset(u*isa.Bytes()), v)
			var mask reg.GPVirtual
			if isa.Lanes == 8 {
				mask = compressAVX2(v, lo, hi, index, perm, selIdx, selBits)
			} else {
				mask = compressAVX512(v, lo, hi, index, selIdx, selBits)
			}
			VMOVUPS(selIdx, Mem{Base: idxOut, Index: count, Scale: 4})
			VMOVUPS(selBits, Mem{Base: bitsOut, Index: count, Scale: 4})
			POPCNTL(mask.As32(), mask.As32())
			ADDQ(mask, count)
			VPADDD(step, index, index)
		}
		ADDQ(U32(vectors*isa.Bytes()), x.Base)
		ADDL(U32(vectors*isa.Lanes), pos)
	}, func() {
		v := XMM()
		VMOVSS(x, v)
		MOVL(pos, Mem{Base: idxOut, Index: count, Scale: 4})
		VMOVSS(v, Mem{Base: bitsOut, Index: count, Scale: 4})
		// UCOMISS leaves CF clear exactly when the comparison is ordered and ≥.
		aboveLo, belowHi := GP8(), GP8()
		VUCOMISS(lo.AsX(), v)
		SETCC(aboveLo)
		VUCOMISS(v, hi.AsX())
		SETCC(belowHi)
		ANDB(aboveLo, belowHi)
		inside := GP64()
		MOVBQZX(belowHi, inside)
		ADDQ(inside, count)
		ADDQ(U8(4), x.Base)
		INCL(pos)
	})
	Store(count, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// compressAVX2 selects with a lane mask and moves the selected lanes to the front with
// VPERMD/VPERMPS through the permutation table; it returns the mask.
func compressAVX2(v, lo, hi, index reg.VecVirtual, perm reg.Register, selIdx, selBits reg.VecVirtual) reg.GPVirtual {
	inLo, inHi := YMM(), YMM()
	VCMPPS(U8(cmpGE), lo, v, inLo)
	VCMPPS(U8(cmpLE), hi, v, inHi)
	VANDPS(inHi, inLo, inLo)
	mask := GP64()
	VMOVMSKPS(inLo, mask.As32())
	p := YMM()
	VPMOVZXBD(Mem{Base: perm, Index: mask, Scale: 8}, p)
	VPERMD(index, p, selIdx)
	VPERMPS(v, p, selBits)
	return mask
}

// compressAVX512 selects into an opmask and uses the register forms of VPCOMPRESSD and
// VCOMPRESSPS (the memory forms are microcoded on Zen 4); it returns the mask.
func compressAVX512(v, lo, hi, index reg.VecVirtual, selIdx, selBits reg.VecVirtual) reg.GPVirtual {
	in := K()
	VCMPPS(U8(cmpGE), lo, v, in)
	VCMPPS(U8(cmpLE), hi, v, in, in)
	VPCOMPRESSD_Z(index, in, selIdx)
	VCOMPRESSPS_Z(v, in, selBits)
	mask := GP64()
	KMOVW(in, mask.As32())
	return mask
}
