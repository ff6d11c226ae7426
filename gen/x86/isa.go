// Package x86 holds what the amd64 generators share: the two vector widths, so that
// each kernel is written once and instantiated for AVX2 (ymm) and AVX-512 (zmm).
package x86

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// ISA is one instantiation of a kernel generator.
type ISA struct {
	Suffix string // appended to function names: ToFloat32AVX2
	Lanes  int    // float32 lanes per vector
	Vec    func() reg.VecVirtual
}

var (
	AVX2   = ISA{Suffix: "AVX2", Lanes: 8, Vec: YMM}
	AVX512 = ISA{Suffix: "AVX512", Lanes: 16, Vec: ZMM}
	Both   = []ISA{AVX2, AVX512}
)

// Bytes is the size of one float32 vector.
func (i ISA) Bytes() int { return 4 * i.Lanes }

// Half returns the register that holds Lanes halves, half the width of v.
func (i ISA) Half(v reg.VecVirtual) reg.Register {
	if i.Lanes == 16 {
		return v.AsY()
	}
	return v.AsX()
}

// Header sets the build constraint of a generated file: purego and noasm builds leave
// the assembly out (the expression is avo's legacy syntax, a comma meaning "and").
func Header() {
	ConstraintExpr("!purego,!noasm")
}

// Loop runs body(unroll) while n ≥ unroll·Lanes, then body(1) while n ≥ Lanes, then
// scalar once per remaining element; n counts elements and is consumed. It leaves the
// vector registers alone afterwards, so reductions can still sum their accumulators:
// every function ends with its own VZEROUPPER before RET.
func Loop(isa ISA, n reg.Register, unroll int, body func(vectors int), scalar func()) {
	id := fmt.Sprintf("_%s_%d", isa.Suffix, labels)
	labels++
	for _, k := range []int{unroll, 1} {
		top, next := fmt.Sprintf("vec%d%s", k, id), fmt.Sprintf("done%d%s", k, id)
		Label(top)
		CMPQ(n, U32(k*isa.Lanes))
		JB(LabelRef(next))
		body(k)
		SUBQ(U32(k*isa.Lanes), n)
		JMP(LabelRef(top))
		Label(next)
	}
	top, done := "scalar"+id, "end"+id
	Label(top)
	TESTQ(n, n)
	JZ(LabelRef(done))
	scalar()
	DECQ(n)
	JMP(LabelRef(top))
	Label(done)
}

var labels int

// ParamAddr is the stack slot of a parameter. Loading floats through it with VEX
// instructions matters: avo's Load uses legacy-SSE MOVSS, and an SSE instruction while
// the upper YMM halves are dirty costs a state transition (measured: 70% of a Scores
// tile's time on the Zen machine the benchmarks run on).
func ParamAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// PrefetchSpan prefetches the lines of the bytes pf … pf+last: one PREFETCHT0 every 64
// bytes from pf, then one at pf+last, which starts one more line when pf is not
// aligned to one. last ≥ 0 (a register or memory) is left as it was; the loop takes one
// register besides pf.
func PrefetchSpan(pf reg.Register, last Op) {
	top := fmt.Sprintf("lines_%d", labels)
	labels++
	line := GP64()
	XORQ(line, line)
	Label(top)
	PREFETCHT0(Mem{Base: pf, Index: line, Scale: 1})
	ADDQ(U8(64), line)
	CMPQ(line, last)
	JB(LabelRef(top))
	MOVQ(last, line)
	PREFETCHT0(Mem{Base: pf, Index: line, Scale: 1})
}

// RowPrefetch prefetches rows of one length, each the lines PrefetchSpan would: rows whose
// last byte is at most 255 bytes from their start (fp16 and bfloat16 rows of dim ≤ 128,
// q8_0 rows of up to 7 blocks) with five straight PREFETCHT0s each, at 0, 64, 128 and
// 192 bytes, each clamped to the last byte, and at the last byte; longer rows with
// PrefetchSpan's loop. The clamped offsets are computed once a call: the loop's add,
// compare and branch per line cost the fused attention, which prefetches three rows a
// key, 1–2 ns of its 16–17 a key from cache (Zen 5).
type RowPrefetch struct {
	last    Mem // the rows' last byte
	clamped Mem // min(64, last), min(128, last), min(192, last)
}

// NewRowPrefetch stores last (≥ 0, the rows' last byte) and its clamped offsets in
// locals of the function being generated.
func NewRowPrefetch(last reg.GPVirtual) RowPrefetch {
	p := RowPrefetch{last: AllocLocal(8), clamped: AllocLocal(24)}
	MOVQ(last, p.last)
	for i := range 3 {
		t := GP64()
		MOVQ(U32(64*(i+1)), t)
		CMPQ(t, last)
		CMOVQHI(last, t)
		MOVQ(t, p.clamped.Offset(8*i))
	}
	return p
}

// Rows prefetches count rows from pf on, stride apart, leaving pf at the last. Several
// rows take the clamped offsets into registers once; a single row takes one register
// besides pf, as PrefetchSpan does, for kernels that have no more to spare.
func (p RowPrefetch) Rows(pf reg.GPVirtual, count int, stride Op) {
	p.rows(count, func(r int) reg.GPVirtual {
		if r > 0 {
			ADDQ(stride, pf)
		}
		return pf
	})
}

// TableRows prefetches the count rows whose addresses are the table entries from entry
// on, leaving entry at the last; it takes one register more than Rows.
func (p RowPrefetch) TableRows(entry reg.GPVirtual, count int) {
	row := GP64()
	p.rows(count, func(r int) reg.GPVirtual {
		if r > 0 {
			ADDQ(U8(8), entry)
		}
		MOVQ(Mem{Base: entry}, row)
		return row
	})
}

// rows prefetches count rows, row r at the address that next(r) leaves in a register.
func (p RowPrefetch) rows(count int, next func(r int) reg.GPVirtual) {
	long, done := fmt.Sprintf("longrows_%d", labels), fmt.Sprintf("rowsprefetched_%d", labels)
	labels++
	last := GP64()
	MOVQ(p.last, last)
	CMPQ(last, U32(255))
	JA(LabelRef(long))
	if count == 1 {
		pf := next(0)
		PREFETCHT0(Mem{Base: pf})
		PREFETCHT0(Mem{Base: pf, Index: last, Scale: 1})
		for i := range 3 {
			MOVQ(p.clamped.Offset(8*i), last)
			PREFETCHT0(Mem{Base: pf, Index: last, Scale: 1})
		}
	} else {
		var at [3]reg.GPVirtual
		for i := range at {
			at[i] = GP64()
			MOVQ(p.clamped.Offset(8*i), at[i])
		}
		for r := range count {
			pf := next(r)
			PREFETCHT0(Mem{Base: pf})
			for _, o := range at {
				PREFETCHT0(Mem{Base: pf, Index: o, Scale: 1})
			}
			PREFETCHT0(Mem{Base: pf, Index: last, Scale: 1})
		}
	}
	JMP(LabelRef(done))
	Label(long)
	for r := range count {
		PrefetchSpan(next(r), p.last)
	}
	Label(done)
}
