// Command pool generates asm/pool_amd64.s: the interior ("valid") part of 1-D average
// and max pooling with stride 1, for AVX2 and AVX-512 from one body: a general one for
// any kernel (a runtime loop over the window) and fixed-size ones for kernel 3, 5 and
// 7 that load each source vector once, form the shifted windows in registers, (max)
// screen their own source for NaNs, and (AVX-512) store at dst's 64-byte boundaries.
// It also writes asm/pool_fixed_amd64.go, the fixed-size bodies' block sizes and read
// margins. The padded edges, and the NaN screening for the general max body, are the
// Go callers' (package kernels).
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"

	. "github.com/kvsimd/kvsimd/gen/x86"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// unroll is the number of output vectors per iteration: each window position is one
// load and one add (or max) per vector, independent across the unrolled vectors.
const unroll = 4

func main() {
	Header()
	for _, isa := range Both {
		pool(isa, "AvgPool1DValid", "func(dst []float32, src []float32, kernel int, scale float32)",
			"dst[i] = scale·(src[i] + (src[i+1]+src[i+2]) + … + (src[i+kernel−2]+src[i+kernel−1])), summed in that order, for i < len(dst).")
		pool(isa, "MaxPool1DValid", "func(dst []float32, src []float32, kernel int)",
			"dst[i] = max(src[i], …, src[i+kernel−1]) for i < len(dst), NaNs ignored as VMAXPS does.")
	}
	for _, isa := range Both {
		for _, k := range fixedKernels {
			poolFixedAvg(isa, k)
			poolFixedMax(isa, k)
		}
	}
	Generate()
	constants()
}

var labels int

// pool writes a kernel that, for each group of output vectors, loads the window's
// first column and folds in the other kernel−1 with a runtime loop over the window.
func pool(isa ISA, base, signature, what string) {
	avg := base == "AvgPool1DValid"
	name := base + isa.Suffix
	TEXT(name, NOSPLIT, signature)
	Pragma("noescape")
	Doc(name+" sets "+what, "len(src) must be at least len(dst)+kernel−1 and kernel at least 1.")
	dst := Mem{Base: Load(Param("dst").Base(), GP64())}
	src := Mem{Base: Load(Param("src").Base(), GP64())}
	n := Load(Param("dst").Len(), GP64())
	kernel := Load(Param("kernel"), GP64())
	var ss reg.VecVirtual
	var s reg.VecVirtual
	if avg {
		ss = XMM()
		Load(Param("scale"), ss)
		s = isa.Vec()
		VBROADCASTSS(ss, s)
	}
	// window runs folds once per step of the window after its first column, with w
	// pointing at the step's first column: a step is one column for the maximum and a
	// pair of neighbouring columns for the average (AvgPool1D's order).
	window := func(folds func(w Mem)) {
		id := labels
		labels++
		top, done := fmt.Sprintf("col_%s_%d", name, id), fmt.Sprintf("cols_%s_%d", name, id)
		w := Mem{Base: GP64()}
		cols := GP64()
		MOVQ(src.Base, w.Base)
		MOVQ(kernel, cols)
		if avg {
			SHRQ(U8(1), cols) // (kernel−1)/2 pairs
			INCQ(cols)
		}
		Label(top)
		DECQ(cols)
		JZ(LabelRef(done))
		ADDQ(U8(4), w.Base)
		folds(w)
		if avg {
			ADDQ(U8(4), w.Base)
		}
		JMP(LabelRef(top))
		Label(done)
	}
	Loop(isa, n, unroll, func(k int) {
		acc := make([]reg.VecVirtual, k)
		for u := range acc {
			acc[u] = isa.Vec()
			VMOVUPS(src.Offset(u*isa.Bytes()), acc[u])
		}
		window(func(w Mem) {
			for u := range acc {
				if !avg {
					VMAXPS(w.Offset(u*isa.Bytes()), acc[u], acc[u])
					continue
				}
				pair := isa.Vec()
				VMOVUPS(w.Offset(u*isa.Bytes()), pair)
				VADDPS(w.Offset(u*isa.Bytes()+4), pair, pair)
				VADDPS(pair, acc[u], acc[u])
			}
		})
		for u := range acc {
			if avg {
				VMULPS(s, acc[u], acc[u])
			}
			VMOVUPS(acc[u], dst.Offset(u*isa.Bytes()))
		}
		ADDQ(U32(k*isa.Bytes()), src.Base)
		ADDQ(U32(k*isa.Bytes()), dst.Base)
	}, func() {
		acc := XMM()
		VMOVSS(src, acc)
		window(func(w Mem) {
			t := XMM()
			VMOVSS(w, t)
			if avg {
				VADDSS(w.Offset(4), t, t)
				VADDSS(t, acc, acc)
			} else {
				VMAXSS(t, acc, acc)
			}
		})
		if avg {
			VMULSS(ss, acc, acc)
		}
		VMOVSS(acc, dst)
		ADDQ(U8(4), src.Base)
		ADDQ(U8(4), dst.Base)
	})
	VZEROUPPER()
	RET()
}

// fixedKernels are the window sizes with bodies of their own (SnapKV's pooling kernels
// are 5 and 7).
var fixedKernels = []int{3, 5, 7}

// fixedUnroll is the number of output vectors per iteration of the fixed-size bodies:
// eight on AVX-512; four on AVX2, whose 16 registers hold no more chains with the
// vectors they carry.
func fixedUnroll(isa ISA) int {
	if isa.Lanes == 16 {
		return 8
	}
	return 4
}

// fixedMargin is how many vectors past the last window the fixed-size bodies may read.
const fixedMargin = 3

// The average bodies sum each output vector in AvgPool1D's order: its aligned source
// vector x plus the pairs P1, P3, … of neighbours src[j]+src[j+1] starting 1, 3, …
// lanes further. They add the pair vector p = x + (x shifted by one lane) once per
// position and form P1, P3, … as shifts of p and the next p in registers (VALIGND; on
// AVX2 VPERM2F128 once per pair, then VPALIGNR): (kernel+1)/2 adds per output vector
// instead of the kernel−1 of index order. avgLoadX1 says, per ISA, whether x shifted
// by one lane is an unaligned load rather than a shift. Measured on a Sapphire Rapids
// Xeon (131072 outputs, src and dst in L2; dst two lanes off its boundary): AVX-512
// k=5 13.6 µs with the shift against 15.8 µs with the load (a zmm load that is not
// aligned splits a cache line), k=7 13.8 against 13.3 µs (n.s.), both level in L1,
// where llvm-mca's Zen 5 model puts the load 9 % ahead; AVX2 k=5 16.0 µs with the load
// against 23.2 µs with the shift, k=7 19.1 against 27.9 µs (its VPERM2F128 and
// VPALIGNR share one port). Taking every pair from two unaligned loads instead of
// sharing it measured 20–35 % slower on both ISAs (with four chains interleaved).
var avgLoadX1 = map[string]bool{"AVX512": false, "AVX2": true}

// avgChains is how many output vectors' add chains the average bodies interleave,
// pair by pair: two keep AVX2's pair vectors, shifts and sums within its 16 registers.
const avgChains = 2

// A stream hands out, for one iteration of a fixed-size body, the aligned source
// vectors x[pos] (pos counting vectors from the iteration's start) and their shifts.
// Vectors below carried come from the previous iteration, the others are loaded once.
type stream struct {
	isa     ISA
	src     Mem
	x       map[int]reg.VecVirtual
	mid     map[int]reg.VecVirtual // AVX2: the middle of x[pos], x[pos+1]
	carried int
	fresh   []int // positions loaded in this iteration, in order
}

func newStream(isa ISA, src Mem, carried int) *stream {
	return &stream{isa: isa, src: src, x: map[int]reg.VecVirtual{}, mid: map[int]reg.VecVirtual{}, carried: carried}
}

func (s *stream) at(pos int) reg.VecVirtual {
	if v, ok := s.x[pos]; ok {
		return v
	}
	if pos < s.carried {
		panic(fmt.Sprintf("pool: vector %d should have been carried", pos))
	}
	v := s.isa.Vec()
	VMOVUPS(s.src.Offset(s.isa.Bytes()*pos), v)
	s.x[pos] = v
	s.fresh = append(s.fresh, pos)
	return v
}

// shifted returns src[lanes·pos+sh : lanes·(pos+1)+sh] as an operand: a memory operand
// when load is set, else formed from x[pos] and x[pos+1].
func (s *stream) shifted(pos, sh int, load bool) Op {
	if sh == 0 {
		return s.at(pos)
	}
	if load {
		return s.src.Offset(s.isa.Bytes()*pos + 4*sh)
	}
	return shiftPair(s.isa, s.at(pos), s.at(pos+1), sh, s.mid, pos)
}

// shiftPair returns lanes sh … sh+Lanes−1 of a followed by b (0 < sh < Lanes). AVX2
// shifts only within 128-bit lanes: mid[key] caches [a's upper half, b's lower half].
func shiftPair(isa ISA, a, b reg.VecVirtual, sh int, mid map[int]reg.VecVirtual, key int) reg.VecVirtual {
	if isa.Lanes == 16 {
		w := ZMM()
		VALIGND(U8(sh), a, b, w)
		return w
	}
	t, ok := mid[key]
	if !ok {
		t = YMM()
		VPERM2F128(U8(0x21), b, a, t)
		mid[key] = t
	}
	w := YMM()
	switch {
	case sh == 4:
		return t
	case sh < 4:
		VPALIGNR(U8(4*sh), a, t, w)
	default:
		VPALIGNR(U8(4*(sh-4)), t, b, w)
	}
	return w
}

// fixedLoop emits the loop of a fixed-size body: n counts outputs (a multiple of
// fixedUnroll vectors) and body emits one iteration.
func fixedLoop(isa ISA, name string, n reg.GPVirtual, src, dst Mem, body func()) {
	id := labels
	labels++
	top, done := fmt.Sprintf("fixed_%s_%d", name, id), fmt.Sprintf("fixeddone_%s_%d", name, id)
	u := fixedUnroll(isa)
	Label(top)
	TESTQ(n, n)
	JZ(LabelRef(done))
	body()
	ADDQ(U32(u*isa.Bytes()), src.Base)
	ADDQ(U32(u*isa.Bytes()), dst.Base)
	SUBQ(U32(u*isa.Lanes), n)
	JMP(LabelRef(top))
	Label(done)
}

// fixedHeader starts a fixed-size body: its TEXT, doc and the dst, src and len(dst)
// every one loads.
func fixedHeader(isa ISA, base string, k int, signature, extra string) (dst, src Mem, n reg.GPVirtual) {
	name := fmt.Sprintf("%s%d%s", base, k, isa.Suffix)
	TEXT(name, NOSPLIT, signature)
	Pragma("noescape")
	Doc(fmt.Sprintf("%s is %s%s for kernel = %d%s. len(dst) must be a multiple of %d and", name, base, isa.Suffix, k, extra, fixedUnroll(isa)*isa.Lanes),
		fmt.Sprintf("len(src) at least len(dst)+%d (it reads whole vectors past the last window).", fixedMargin*isa.Lanes))
	dst = Mem{Base: Load(Param("dst").Base(), GP64())}
	src = Mem{Base: Load(Param("src").Base(), GP64())}
	n = Load(Param("dst").Len(), GP64()).(reg.GPVirtual)
	return dst, src, n
}

// poolFixedAvg writes AvgPool1DValid{k}{AVX2,AVX512}: each source vector is loaded
// once (aligned when the caller aligns src), and each pair vector is added once and
// shifted in registers (avgLoadX1). The adds of one output vector are a chain, so the
// body interleaves fixedUnroll chains, pair by pair; from the second pair on, the adds
// alternate between VADDPS and VFMADD231PS by 1.0 (the same rounding) to spread them
// over the add and FMA pipes. Sums run in the general kernel's order, so the bits are
// the same.
func poolFixedAvg(isa ISA, k int) {
	name := fmt.Sprintf("AvgPool1DValid%d%s", k, isa.Suffix)
	dst, src, n := fixedHeader(isa, "AvgPool1DValid", k, "func(dst []float32, src []float32, scale float32)", "")
	out := alignStores(isa, dst, n)
	s := isa.Vec()
	VBROADCASTSS(ParamAddr("scale"), s)
	var one reg.VecVirtual
	if k > 3 { // kernel 3 has one pair, added without an FMA
		one = isa.Vec()
		VBROADCASTSS(splatOne(), one)
	}
	// The aligned source vector and the pair vector at the iteration's first position
	// come from the previous iteration.
	carryX, carryP := isa.Vec(), isa.Vec()
	VMOVUPS(src, carryX)
	VADDPS(src.Offset(4), carryX, carryP)
	unroll := fixedUnroll(isa)
	fixedLoop(isa, name, n, src, dst, func() {
		st := newStream(isa, src, 1)
		st.x[0] = carryX
		pairs := map[int]reg.VecVirtual{0: carryP}
		pairVector := func(pos int) reg.VecVirtual {
			if v, ok := pairs[pos]; ok {
				return v
			}
			v := isa.Vec()
			VADDPS(st.shifted(pos, 1, avgLoadX1[isa.Suffix]), st.at(pos), v)
			pairs[pos] = v
			return v
		}
		mid := map[int]reg.VecVirtual{}
		// pair returns the pairs src[j]+src[j+1] for j = lanes·pos+sh … lanes·(pos+1)+sh−1.
		pair := func(pos, sh int) reg.VecVirtual {
			return shiftPair(isa, pairVector(pos), pairVector(pos+1), sh, mid, pos)
		}
		for g := 0; g < unroll; g += avgChains {
			acc := make([]reg.VecVirtual, avgChains)
			for sh := 1; sh < k; sh += 2 {
				for c := range acc {
					u := g + c
					switch {
					case sh == 1:
						acc[c] = isa.Vec()
						VADDPS(pair(u, 1), st.at(u), acc[c])
					case (sh/2+u)%2 == 0:
						VFMADD231PS(pair(u, sh), one, acc[c])
					default:
						VADDPS(pair(u, sh), acc[c], acc[c])
					}
				}
			}
			for c := range acc {
				VMULPS(s, acc[c], acc[c])
				out.store(g+c, acc[c])
			}
		}
		out.next()
		VMOVAPS(st.at(unroll), carryX)
		VMOVAPS(pairVector(unroll), carryP)
	})
	out.finish()
	VZEROUPPER()
	RET()
}

// A maxStep is one doubling step of the max bodies: level m[i] = max(a[i], b[i+shift])
// over levels computed before it (level 0 is the source, whose shifts are unaligned
// loads where load is set and the ISA's maxLoads allows). Window sizes up to 8 take at
// most three maxes per output vector instead of k−1.
type maxStep struct {
	a, b, shift int
	load        bool
}

// maxSteps are, per window size, the steps whose last level is the window's maximum:
// widths 1 → 2 → 3 for k = 3, 1 → 2 → 4 → 5 for k = 5, 1 → 2 → 4 → 7 for k = 7.
// maxLoads says, per ISA, whether the max bodies take the source shifts that maxSteps
// mark as loads from unaligned loads (else VALIGND or VPERM2F128 and VPALIGNR). On a
// Sapphire Rapids Xeon with src and dst in L2 (131072 outputs), AVX-512 k=5 and k=7
// took 12.3 and 12.1 µs with shifts only against 14.0 and 14.4 µs with the loads (a
// zmm load that is not aligned splits a cache line), while AVX2 took 17.0 and 18.7 µs
// with the loads against 19.8 and 27.9 µs without.
var maxLoads = map[string]bool{"AVX512": false, "AVX2": true}

var maxSteps = map[int][]maxStep{
	3: {{0, 0, 1, true}, {1, 0, 2, false}},
	5: {{0, 0, 1, true}, {1, 1, 2, false}, {2, 0, 4, false}},
	7: {{0, 0, 1, true}, {1, 1, 2, false}, {2, 2, 3, false}},
}

// poolFixedMax writes MaxPool1DValid{k}{AVX2,AVX512} from maxSteps: each level is kept
// one vector ahead of the level that shifts it (formed from its vectors at pos and
// pos+1), the vectors past the iteration carried over; shifts of the source are
// unaligned loads where the step says so. VMAXPS drops NaNs, so every aligned source
// vector goes through one unordered compare (two vectors per VCMPPS) and the function
// reports whether any was NaN; the caller then pools that row with the generic code.
func poolFixedMax(isa ISA, k int) {
	name := fmt.Sprintf("MaxPool1DValid%d%s", k, isa.Suffix)
	dst, src, n := fixedHeader(isa, "MaxPool1DValid", k, "func(dst []float32, src []float32) (nan bool)",
		" and reports whether it read a NaN (dst is then not pooled)")
	out := alignStores(isa, dst, n)
	unroll := fixedUnroll(isa)
	steps := maxSteps[k]
	loaded := func(st maxStep) bool { return st.load && maxLoads[isa.Suffix] }
	levels := len(steps) + 1
	// reach[l] is one past the last vector position of level l an iteration reads.
	reach := make([]int, levels)
	reach[levels-1] = unroll
	for l := levels - 1; l >= 1; l-- {
		st := steps[l-1]
		reach[st.a] = max(reach[st.a], reach[l])
		// A shift reads the vector after pos (the NaN screen wants it loaded too).
		reach[st.b] = max(reach[st.b], reach[l]+1)
	}
	if reach[0]-unroll > fixedMargin {
		panic(fmt.Sprintf("pool: k=%d reads %d vectors ahead", k, reach[0]-unroll))
	}
	// An iteration computes level l at positions reach[l]−unroll … reach[l]−1; those
	// below come from the previous iteration, in carried[l] where the iteration reads
	// them (nil where it does not).
	used := make([]map[int]bool, levels)
	for l := range used {
		used[l] = map[int]bool{}
	}
	var walk func(l, pos int)
	walk = func(l, pos int) {
		if pos < reach[l]-unroll {
			used[l][pos] = true
			return
		}
		if l == 0 {
			return
		}
		step := steps[l-1]
		walk(step.a, pos)
		if step.b == 0 {
			walk(0, pos)
			if !loaded(step) {
				walk(0, pos+1)
			}
		} else {
			walk(step.b, pos)
			walk(step.b, pos+1)
		}
	}
	for u := 0; u < unroll; u++ {
		walk(levels-1, u)
	}
	carried := make([][]reg.VecVirtual, levels)
	for l := range carried {
		carried[l] = make([]reg.VecVirtual, reach[l]-unroll)
		for pos := range carried[l] {
			if used[l][pos] {
				carried[l][pos] = isa.Vec()
			}
		}
	}
	// screen folds the unordered compare of x[p] and x[q] into the NaN flag: a mask
	// register on AVX-512, a vector on AVX2.
	newFlag := func() reg.Register { return YMM() }
	xor := func(a, b, d Op) { VXORPS(a, b, d) }
	or := func(a, b, d Op) { VORPS(a, b, d) }
	test := func(a, b Op) { VPTEST(a, b) }
	if isa.Lanes == 16 {
		newFlag, xor, or, test = func() reg.Register { return K() }, KXORW, KORW, KORTESTW
	}
	nan := newFlag()
	xor(nan, nan, nan)
	screen := func(p, q reg.VecVirtual) {
		m := newFlag()
		VCMPPS(U8(3), p, q, m)
		or(m, nan, nan)
	}
	// level emits (memoised) the vector of level l at position pos.
	type memo struct{ vals, mid []map[int]reg.VecVirtual }
	var level func(m memo, st *stream, l, pos int) reg.VecVirtual
	level = func(m memo, st *stream, l, pos int) reg.VecVirtual {
		if l == 0 {
			return st.at(pos)
		}
		if v, ok := m.vals[l][pos]; ok {
			return v
		}
		step := steps[l-1]
		a := level(m, st, step.a, pos)
		var b Op
		if step.b == 0 {
			b = st.shifted(pos, step.shift, loaded(step))
		} else {
			b = shiftPair(isa, level(m, st, step.b, pos), level(m, st, step.b, pos+1), step.shift, m.mid[step.b], pos)
		}
		v := isa.Vec()
		VMAXPS(b, a, v)
		m.vals[l][pos] = v
		return v
	}
	newMemo := func() memo {
		m := memo{make([]map[int]reg.VecVirtual, levels), make([]map[int]reg.VecVirtual, levels)}
		for l := range m.vals {
			m.vals[l], m.mid[l] = map[int]reg.VecVirtual{}, map[int]reg.VecVirtual{}
		}
		return m
	}
	// The prologue computes the carried vectors of the first iteration.
	{
		m := newMemo()
		st := newStream(isa, src, 0)
		for l := levels - 1; l >= 0; l-- {
			for pos, r := range carried[l] {
				if r != nil {
					VMOVAPS(level(m, st, l, pos), r)
				}
			}
		}
		for pos := range carried[0] {
			st.at(pos)
		}
		screenFresh(st, screen)
	}
	fixedLoop(isa, name, n, src, dst, func() {
		m := newMemo()
		st := newStream(isa, src, len(carried[0]))
		for l := range carried {
			for pos, r := range carried[l] {
				switch {
				case r == nil:
				case l == 0:
					st.x[pos] = r
				default:
					m.vals[l][pos] = r
				}
			}
		}
		for u := 0; u < unroll; u++ {
			out.store(u, level(m, st, levels-1, u))
		}
		out.next()
		for l := range carried {
			for pos, r := range carried[l] {
				if r != nil {
					VMOVAPS(level(m, st, l, pos+unroll), r)
				}
			}
		}
		for pos := len(carried[0]); pos < reach[0]; pos++ {
			st.at(pos) // every source vector is screened once
		}
		screenFresh(st, screen)
	})
	out.finish()
	flag := GP8()
	test(nan, nan)
	SETNE(flag)
	Store(flag, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// A storer writes a fixed-size body's output vectors, which are 64-byte aligned to src,
// not to dst. On AVX2 it stores them as they are. On AVX-512, where dst is r lanes
// past a 64-byte boundary, it stores each output vector's last 16−r lanes together
// with the next vector's first r lanes (one VPERMT2PS) at a 64-byte boundary of dst:
// a zmm store that splits a cache line costs more than the permute. Measured on a
// Sapphire Rapids Xeon with src and dst in L2 (131072 outputs, kernel 5), the average
// took 17.2 µs with dst r = 2 or 3 lanes off against 12.8 µs with dst aligned. The
// first store of a call is masked to the lanes from dst on, and finish writes the last
// r lanes with a masked store.
type storer struct {
	isa   ISA
	dst   Mem
	idx   reg.VecVirtual // lane l takes lane l+16−r of the previous:current pair
	carry reg.VecVirtual // the previous iteration's last output vector
	prev  reg.VecVirtual // the previous output vector
	head  reg.OpmaskVirtual
	tail  reg.OpmaskVirtual
}

// alignStores starts a storer: on AVX-512 it moves dst's base back to the 64-byte
// boundary at or before it, where the stores go.
func alignStores(isa ISA, dst Mem, n reg.GPVirtual) *storer {
	o := &storer{isa: isa, dst: dst}
	if isa.Lanes != 16 {
		return o
	}
	r := GP64()
	MOVQ(dst.Base, r)
	ANDQ(U8(63), r)
	SUBQ(r, dst.Base)
	SHRQ(U8(2), r) // dst's lanes past the boundary
	t := GP64()
	MOVQ(U32(16), t)
	SUBQ(r, t)
	o.idx, o.carry = ZMM(), ZMM()
	VPBROADCASTD(t.As32(), o.idx)
	VPADDD(laneIndices(), o.idx, o.idx)
	sixteen := ZMM()
	MOVL(U32(16), t.As32())
	VPBROADCASTD(t.As32(), sixteen)
	o.head, o.tail = K(), K()
	VPCMPD(U8(1), sixteen, o.idx, o.tail) // lanes l < r: the previous vector's
	KNOTW(o.tail, o.head)
	Comment("No tail when there are no outputs.")
	XORQ(r, r)
	KMOVW(o.tail, t.As32())
	TESTQ(n, n)
	CMOVLEQ(r.As32(), t.As32())
	KMOVW(t.As32(), o.tail)
	VXORPS(o.carry, o.carry, o.carry)
	return o
}

// store writes output vector u of an iteration (in order) and keeps it for the next.
func (o *storer) store(u int, v reg.VecVirtual) {
	if o.isa.Lanes != 16 {
		VMOVUPS(v, o.dst.Offset(o.isa.Bytes()*u))
		return
	}
	if u == 0 {
		VPERMT2PS(v, o.idx, o.carry)
		VMOVUPS(o.carry, o.head, o.dst)
	} else {
		VPERMT2PS(v, o.idx, o.prev)
		VMOVUPS(o.prev, o.dst.Offset(o.isa.Bytes()*u))
	}
	o.prev = v
}

// next ends an iteration: its last output vector is the next one's previous, and
// every store after the first is whole.
func (o *storer) next() {
	if o.isa.Lanes != 16 {
		return
	}
	VMOVAPS(o.prev, o.carry)
	KXNORW(o.head, o.head, o.head)
}

// finish writes the last r lanes, after the loop has moved dst past its outputs.
func (o *storer) finish() {
	if o.isa.Lanes != 16 {
		return
	}
	VPERMT2PS(o.carry, o.idx, o.carry)
	VMOVUPS(o.carry, o.tail, o.dst)
}

// screenFresh compares the source vectors a stream loaded, two by two.
func screenFresh(st *stream, screen func(p, q reg.VecVirtual)) {
	for i := 0; i < len(st.fresh); i += 2 {
		p := st.x[st.fresh[i]]
		q := p
		if i+1 < len(st.fresh) {
			q = st.x[st.fresh[i+1]]
		}
		screen(p, q)
	}
}

// constants writes the fixed bodies' shapes for the Go callers beside the stubs.
func constants() {
	f, err := os.Create(filepath.Join(filepath.Dir(flag.Lookup("stubs").Value.String()), "pool_fixed_amd64.go"))
	if err != nil {
		panic(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "// Code generated by command: go run ./amd64/pool. DO NOT EDIT.\n\n//go:build !purego && !noasm\n\npackage asm\n")
	for _, isa := range Both {
		fmt.Fprintf(f, "\n// PoolFixedBlock%[1]s divides the len(dst) of {Avg,Max}Pool1DValid{3,5,7}%[1]s, which need\n", isa.Suffix)
		fmt.Fprintf(f, "// len(src) ≥ len(dst) + PoolFixedMargin%s.\n", isa.Suffix)
		fmt.Fprintf(f, "const (\n\tPoolFixedBlock%[1]s  = %[2]d\n\tPoolFixedMargin%[1]s = %[3]d\n)\n", isa.Suffix, fixedUnroll(isa)*isa.Lanes, fixedMargin*isa.Lanes)
	}
}

var one, lanes Mem

// laneIndices is the int32 vector 0, 1, …, 15 in memory.
func laneIndices() Mem {
	if lanes.Symbol.Name == "" {
		lanes = GLOBL("lanes", RODATA|NOPTR)
		for l := range 16 {
			DATA(4*l, U32(l))
		}
	}
	return lanes
}

// splatOne is a float32 1.0 in memory, for VBROADCASTSS.
func splatOne() Mem {
	if one.Symbol.Name == "" {
		one = GLOBL("one", RODATA|NOPTR)
		DATA(0, U32(math.Float32bits(1)))
	}
	return one
}
