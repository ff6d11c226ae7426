// Command pool generates asm/pool_amd64.s: the interior ("valid") part of 1-D average
// and max pooling with stride 1, for AVX2 and AVX-512 from one body. The padded edges
// and NaN screening are the Go callers' (package kernels).
package main

import (
	"fmt"
	"math"

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
			"dst[i] = scale·(src[i] + … + src[i+kernel−1]), summed in that order, for i < len(dst).")
		pool(isa, "MaxPool1DValid", "func(dst []float32, src []float32, kernel int)",
			"dst[i] = max(src[i], …, src[i+kernel−1]) for i < len(dst), NaNs ignored as VMAXPS does.")
	}
	for _, k := range fixedKernels {
		poolFixed(k, true)
		poolFixed(k, false)
	}
	Generate()
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
	fold := func(m Op, acc reg.Register) {
		if avg {
			VADDPS(m, acc, acc)
		} else {
			VMAXPS(m, acc, acc)
		}
	}
	// window runs fold once per column 1..kernel−1, with w pointing at that column.
	window := func(folds func(w Mem)) {
		id := labels
		labels++
		top, done := fmt.Sprintf("col_%s_%d", name, id), fmt.Sprintf("cols_%s_%d", name, id)
		w := Mem{Base: GP64()}
		cols := GP64()
		MOVQ(src.Base, w.Base)
		MOVQ(kernel, cols)
		Label(top)
		DECQ(cols)
		JZ(LabelRef(done))
		ADDQ(U8(4), w.Base)
		folds(w)
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
				fold(w.Offset(u*isa.Bytes()), acc[u])
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

// fixedKernels are the window sizes with AVX-512 bodies of their own (SnapKV's pooling
// kernels are 5 and 7).
var fixedKernels = []int{3, 5, 7}

// poolFixed writes {Avg,Max}Pool1DValid{k}AVX512: the valid part for one window size,
// loading each source vector once. The window at shift s of the output vector at i is
// VALIGND(s) of the vectors at i and i+16, and the next output vector's first vector is
// this one's second, so a vector of outputs costs one load, k−1 shuffles and k−1 adds
// (maxes) where the general kernel takes k loads. The adds alternate between VADDPS and
// VFMADD231PS by 1.0 (the same rounding) to spread them over the add and FMA pipes.
// Sums run in the general kernel's order, so the bits are the same.
func poolFixed(k int, avg bool) {
	isa := AVX512
	base := "MaxPool1DValid"
	signature := "func(dst []float32, src []float32)"
	if avg {
		base = "AvgPool1DValid"
		signature = "func(dst []float32, src []float32, scale float32)"
	}
	name := fmt.Sprintf("%s%d%s", base, k, isa.Suffix)
	TEXT(name, NOSPLIT, signature)
	Pragma("noescape")
	Doc(fmt.Sprintf("%s is %s%s for kernel = %d. len(dst) must be a multiple of %d and", name, base, isa.Suffix, k, unroll*isa.Lanes),
		fmt.Sprintf("len(src) at least len(dst)+%d (it reads a whole vector past the last window).", isa.Lanes))
	dst := Mem{Base: Load(Param("dst").Base(), GP64())}
	src := Mem{Base: Load(Param("src").Base(), GP64())}
	n := Load(Param("dst").Len(), GP64())
	var s, one reg.VecVirtual
	if avg {
		s, one = ZMM(), ZMM()
		VBROADCASTSS(ParamAddr("scale"), s)
		VBROADCASTSS(splatOne(), one)
	}
	a0 := ZMM()
	VMOVUPS(src, a0)
	a := a0
	id := labels
	labels++
	top, done := fmt.Sprintf("fixed_%s_%d", name, id), fmt.Sprintf("fixeddone_%s_%d", name, id)
	Label(top)
	TESTQ(n, n)
	JZ(LabelRef(done))
	for u := 0; u < unroll; u++ {
		b := ZMM()
		VMOVUPS(src.Offset((u+1)*isa.Bytes()), b)
		acc := ZMM()
		VMOVAPS(a, acc)
		for sh := 1; sh < k; sh++ {
			w := ZMM()
			if sh%2 == 0 { // half the windows from (unaligned) loads, half from shuffles
				VMOVUPS(src.Offset(u*isa.Bytes()+4*sh), w)
			} else {
				VALIGND(U8(sh), a, b, w)
			}
			switch {
			case !avg:
				VMAXPS(w, acc, acc)
			case sh%2 == 0:
				VFMADD231PS(one, w, acc)
			default:
				VADDPS(w, acc, acc)
			}
		}
		if avg {
			VMULPS(s, acc, acc)
		}
		VMOVUPS(acc, dst.Offset(u*isa.Bytes()))
		a = b
	}
	VMOVAPS(a, a0) // the next iteration's first vector
	a = a0
	ADDQ(U32(unroll*isa.Bytes()), src.Base)
	ADDQ(U32(unroll*isa.Bytes()), dst.Base)
	SUBQ(U32(unroll*isa.Lanes), n)
	JMP(LabelRef(top))
	Label(done)
	VZEROUPPER()
	RET()
}

var one Mem

// splatOne is a float32 1.0 in memory, for VBROADCASTSS.
func splatOne() Mem {
	if one.Symbol.Name == "" {
		one = GLOBL("one", RODATA|NOPTR)
		DATA(0, U32(math.Float32bits(1)))
	}
	return one
}
