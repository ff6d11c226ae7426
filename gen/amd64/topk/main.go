// Command topk generates asm/topk_amd64.s: TopK's candidate filter, which compares a
// block against a threshold and compresses the indices of the elements at or above it,
// and the radix select's compaction by a key range, both branch-free.
package main

import (
	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// unroll is the number of vectors filtered or kept per loop iteration; the output
// position is a dependency chain through POPCNT and ADD, so more vectors per iteration
// only saves the loop overhead.
const unroll = 4

// AVX2's filter takes a group of groupVectors vectors (64 elements) per iteration and
// writes the indices of a group with at most sparseMax selected by extracting its mask
// bits one by one; see filterGroupAVX2.
const (
	groupVectors = 8
	sparseMax    = 6
)

// cmpGE and cmpLE are VCMPPS's GE_OQ and LE_OQ predicates: ordered, so NaN is never
// selected.
const cmpGE, cmpLE = 0x1d, 0x12

// cmpLEU is VPCMPUD's unsigned ≤ predicate.
const cmpLEU = 2

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
		keep(isa)
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

// filter writes the selected elements' indices with a full-vector store at the current
// output position, which then advances by the number selected: the store never passes
// the element being compared, so idx needs only len(x) entries. It writes indices
// only, not the values as well: a second compress and store per vector took half the
// loop's time, for values that the few candidates read back from x in a fraction of it.
func filter(isa ISA) {
	name := "TopKFilter" + isa.Suffix
	TEXT(name, NOSPLIT, "func(idx []int32, x []float32, lo float32, base int32) int")
	Pragma("noescape")
	Doc(name+" writes base+i, in ascending order, for every i with x[i] ≥ lo into idx, which holds",
		"at least len(x) entries, and returns how many. NaN is never selected.")
	idxOut := Load(Param("idx").Base(), GP64())
	x := Mem{Base: Load(Param("x").Base(), GP64())}
	n := Load(Param("x").Len(), GP64())
	pos := Load(Param("base"), GP32())

	lo := isa.Vec()
	VBROADCASTSS(ParamAddr("lo"), lo)
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

	vectorsPerIteration := unroll
	var groupStep reg.VecVirtual
	if isa.Lanes == 8 {
		vectorsPerIteration = groupVectors
		groupStep = isa.Vec()
		VPSLLD(U8(3), step, groupStep) // 64 = 8·8 in every lane
	}
	Loop(isa, n, vectorsPerIteration, func(vectors int) {
		if isa.Lanes == 8 && vectors == groupVectors {
			filterGroupAVX2(x, lo, index, step, groupStep, perm, pos, idxOut, count)
		} else {
			for u := range vectors {
				v, sel := isa.Vec(), isa.Vec()
				VMOVUPS(x.Offset(u*isa.Bytes()), v)
				var mask reg.GPVirtual
				if isa.Lanes == 8 {
					mask = compressAVX2(v, lo, index, perm, sel)
				} else {
					mask = compressAVX512(v, lo, index, sel)
				}
				storeCompressed(sel, mask, idxOut, count)
				VPADDD(step, index, index)
			}
		}
		ADDQ(U32(vectors*isa.Bytes()), x.Base)
		ADDL(U32(vectors*isa.Lanes), pos)
	}, func() {
		v := XMM()
		VMOVSS(x, v)
		MOVL(pos, Mem{Base: idxOut, Index: count, Scale: 4})
		// UCOMISS leaves CF clear exactly when the comparison is ordered and ≥.
		inside := GP64()
		XORQ(inside, inside)
		VUCOMISS(lo.AsX(), v)
		SETCC(inside.As8())
		ADDQ(inside, count)
		ADDQ(U8(4), x.Base)
		INCL(pos)
	})
	Store(count, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// storeCompressed stores a vector of compressed indices at the output position and
// advances it by the number selected, the population count of mask (which it clobbers).
func storeCompressed(sel reg.VecVirtual, mask reg.GPVirtual, idxOut, count reg.Register) {
	VMOVUPS(sel, Mem{Base: idxOut, Index: count, Scale: 4})
	POPCNTL(mask.As32(), mask.As32())
	ADDQ(mask, count)
}

// filterGroupAVX2 filters the 64 elements at x into the output at count; their indices
// start at pos, and index holds those of the first vector, which it advances by 64.
//
// AVX2 has no compress instruction: the permutation table stands in for one, a table
// load, a VPERMD (three µops on Zen 1) and a full-vector store for every vector, which
// made the filter three times slower than a pass that only reads (0.33 against Max's
// 0.11 ns per element on Zen 1, in L2). Where few elements pass, the common case (the
// first threshold lets about 2k of n through: 3% at 2048 of 128k), most of that goes to
// vectors that select nothing. So the group first compares all eight vectors and
// gathers their masks into one 64-bit word. With at most sparseMax bits set, it writes
// pos+i for each bit i in turn (TZCNT, BLSR: sparseMax stores, unconditionally, those
// past the count being overwritten later, so that no branch depends on the count);
// with more, it compresses the eight vectors through the table as before. sparseMax = 6
// keeps that one branch predictable where few pass: a group of 64 has more than 6 with
// probability 0.3% at 3% passing and 9% at 6% (more than 4: 4% and 34%).
//
// Measured on Zen 1 (BenchmarkTopKFilter, benchstat over 8 interleaved runs against
// the table alone), per element of 2048 in L2: 0.19–0.21 ns against 0.33 with 0.05%,
// 3% and 6% passing; the same at 15%; 6% slower at 50%, where every group takes the
// table path after the compares and the mask word. Streaming 128k elements from L3,
// 35–40% faster at up to 6%. TopK itself: 2048 of 128k 40% faster, 512 of 16k 14%,
// k ≤ 100 of 128k 30%. llvm-mca, for the loop of each path over 64 elements, gives the
// table path against the bitwise one 33 against 22 cycles on znver1, 24 against 12 on
// znver3 and znver4, 17 against 14 on alderlake, and 18 either way on skylake and
// icelake-server, whose VPERMD is one µop. AVX-512 has VPCOMPRESSD and stays with it:
// the same two paths with zmm and opmasks come to 8.1 cycles each on znver4 and znver5.
func filterGroupAVX2(x Mem, lo, index, step, groupStep reg.VecVirtual, perm, pos, idxOut, count reg.Register) {
	word := GP64()
	for u := range groupVectors {
		in := YMM()
		VCMPPS(U8(cmpLE), x.Offset(32*u), lo, in) // lo ≤ x: x ≥ lo, with the load folded in
		if u == 0 {
			VMOVMSKPS(in, word.As32())
			continue
		}
		mask := GP64()
		VMOVMSKPS(in, mask.As32())
		SHLQ(U8(8*u), mask)
		ORQ(mask, word)
	}
	selected := GP64()
	POPCNTQ(word, selected)
	CMPQ(selected, U8(sparseMax))
	JA(LabelRef("table"))
	for slot := 0; slot < sparseMax; slot++ {
		bit := GP64()
		TZCNTQ(word, bit)
		ADDL(pos, bit.As32())
		MOVL(bit.As32(), Mem{Base: idxOut, Index: count, Scale: 4, Disp: 4 * slot})
		if slot < sparseMax-1 {
			BLSRQ(word, word)
		}
	}
	ADDQ(selected, count)
	VPADDD(groupStep, index, index)
	JMP(LabelRef("grouped"))

	Label("table")
	for range groupVectors {
		mask, sel := GP64(), YMM()
		MOVBQZX(word.As8(), mask)
		SHRQ(U8(8), word)
		permute(perm, mask, index, sel)
		storeCompressed(sel, mask, idxOut, count)
		VPADDD(step, index, index)
	}
	Label("grouped")
}

// compressAVX2 selects with a lane mask and moves the selected lanes' indices to the
// front with VPERMD through the permutation table; it returns the mask.
func compressAVX2(v, lo, index reg.VecVirtual, perm reg.Register, sel reg.VecVirtual) reg.GPVirtual {
	in := YMM()
	VCMPPS(U8(cmpGE), lo, v, in)
	mask := GP64()
	VMOVMSKPS(in, mask.As32())
	permute(perm, mask, index, sel)
	return mask
}

// permute moves the lanes of v selected by the 8-bit mask, in order, to the front of
// sel, through the permutation table at perm.
func permute(perm reg.Register, mask reg.GPVirtual, v, sel reg.VecVirtual) {
	p := YMM()
	VPMOVZXBD(Mem{Base: perm, Index: mask, Scale: 8}, p)
	VPERMD(v, p, sel)
}

// compressAVX512 selects into an opmask and uses the register form of VPCOMPRESSD (the
// memory form is microcoded on Zen 4); it returns the mask.
func compressAVX512(v, lo, index reg.VecVirtual, sel reg.VecVirtual) reg.GPVirtual {
	in := K()
	VCMPPS(U8(cmpGE), lo, v, in)
	VPCOMPRESSD_Z(index, in, sel)
	mask := GP64()
	KMOVW(in, mask.As32())
	return mask
}

// keep is the select's compaction, for the passes over the ≈ 2k candidates after the
// filter: it writes src[i] for every key[i] with key[i] − lo ≤ width (unsigned, so the
// range [lo, lo+width] without wrapping) to dst, in order, with a full-vector store at
// the output position. dst may be src or keys: the store never passes the vector just
// loaded from them.
func keep(isa ISA) {
	name := "TopKKeep" + isa.Suffix
	TEXT(name, NOSPLIT, "func(dst, src, keys []uint32, lo, width uint32) int")
	Pragma("noescape")
	Doc(name+" writes src[i], in order, for every i with keys[i]−lo ≤ width (unsigned) into dst,",
		"and returns how many. dst, src and keys hold len(keys) entries; dst may be src or keys.")
	out := Load(Param("dst").Base(), GP64())
	src := Mem{Base: Load(Param("src").Base(), GP64())}
	keys := Mem{Base: Load(Param("keys").Base(), GP64())}
	n := Load(Param("keys").Len(), GP64())
	// Broadcast from the general registers: vet's asmdecl takes VPBROADCASTD's memory
	// operand for more than the 4 bytes of a uint32 parameter.
	loG := Load(Param("lo"), GP32())
	widthG := Load(Param("width"), GP32())
	loV, widthV := isa.Vec(), isa.Vec()
	VMOVD(loG, loV.AsX())
	VPBROADCASTD(loV.AsX(), loV)
	VMOVD(widthG, widthV.AsX())
	VPBROADCASTD(widthV.AsX(), widthV)
	var perm, sign reg.Register
	if isa.Lanes == 8 {
		perm = GP64()
		LEAQ(compressPerm, perm)
		// AVX2 compares signed only: flipping the sign bits of both sides makes the
		// signed order the unsigned one.
		s := isa.Vec()
		t := GP32()
		MOVL(U32(0x80000000), t)
		VMOVD(t, s.AsX())
		VPBROADCASTD(s.AsX(), s)
		VPXOR(s, widthV, widthV)
		sign = s
	}
	count := GP64()
	XORQ(count, count)

	Loop(isa, n, unroll, func(vectors int) {
		for u := 0; u < vectors; u++ {
			k, v, sel := isa.Vec(), isa.Vec(), isa.Vec()
			movu(isa, keys.Offset(u*isa.Bytes()), k)
			movu(isa, src.Offset(u*isa.Bytes()), v)
			VPSUBD(loV, k, k)
			mask := GP64()
			if isa.Lanes == 8 {
				// outside = (k−lo) > width, signed after the flip; keep the others.
				VPXOR(sign, k, k)
				VPCMPGTD(widthV, k, k)
				VMOVMSKPS(k, mask.As32())
				XORL(U32(0xff), mask.As32())
				permute(perm, mask, v, sel)
			} else {
				in := K()
				VPCMPUD(U8(cmpLEU), widthV, k, in)
				VPCOMPRESSD_Z(v, in, sel)
				KMOVW(in, mask.As32())
			}
			movu(isa, sel, Mem{Base: out, Index: count, Scale: 4})
			POPCNTL(mask.As32(), mask.As32())
			ADDQ(mask, count)
		}
		ADDQ(U32(vectors*isa.Bytes()), keys.Base)
		ADDQ(U32(vectors*isa.Bytes()), src.Base)
	}, func() {
		k, v := GP32(), GP32()
		MOVL(keys, k)
		MOVL(src, v)
		MOVL(v, Mem{Base: out, Index: count, Scale: 4})
		SUBL(loG, k)
		inside := GP64()
		XORQ(inside, inside)
		CMPL(k, widthG)
		SETLS(inside.As8())
		ADDQ(inside, count)
		ADDQ(U8(4), keys.Base)
		ADDQ(U8(4), src.Base)
	})
	Store(count, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// movu is an unaligned 32-bit-lane vector move of either width.
func movu(isa ISA, src, dst Op) {
	if isa.Lanes == 16 {
		VMOVDQU32(src, dst)
	} else {
		VMOVDQU(src, dst)
	}
}
