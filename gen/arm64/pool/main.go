// Command pool generates asm/pool_arm64.s: the interior ("valid") part of 1-D average
// and max pooling with stride 1, on NEON: a general body for any kernel (a runtime loop
// over the window) and fixed-size ones for kernel 3, 5 and 7 that add each pair of
// neighbours once (average) or build the window from maxima of halves (max), forming
// shifted vectors with EXT. It appends to the stubs file (asm/pool_arm64.go) the fixed
// bodies' block size and read margin. The padded edges are the Go callers'.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"

	. "github.com/kvsimd/kvsimd/gen/neon"
)

func main() {
	f := NewFile("arm64/pool")
	pool(f, true)
	pool(f, false)
	for _, k := range []int{3, 5, 7} {
		fixedAvg(f, k)
		fixedMax(f, k)
	}
	f.Write()
	constants(flag.Lookup("stubs").Value.String())
}

// pool loads the window's first column for 16, 4 or 1 outputs and folds in the rest
// with a runtime loop (R4 walks the columns, R5 counts the steps): the maximum one
// column a step, the average a pair of neighbouring columns a step, added together
// before the sum (AvgPool1D's order). FMAX propagates NaNs, so max pooling needs no
// NaN screening here.
func pool(f *File, avg bool) {
	if avg {
		f.Func("AvgPool1DValidNEON", "(dst []float32, src []float32, kernel int, scale float32)", 60,
			"AvgPool1DValidNEON sets dst[i] = scale·(src[i] + (src[i+1]+src[i+2]) + … + (src[i+kernel−2]+src[i+kernel−1])), summed in that order, for i < len(dst). len(src) must be at least len(dst)+kernel−1 and kernel at least 1.")
		f.I("FMOVS scale+56(FP), F16")
		f.I("VDUP V16.S[0], V16.S4")
	} else {
		f.Func("MaxPool1DValidNEON", "(dst []float32, src []float32, kernel int)", 56,
			"MaxPool1DValidNEON sets dst[i] = max(src[i], …, src[i+kernel−1]) for i < len(dst), NaN if one of them is. len(src) must be at least len(dst)+kernel−1 and kernel at least 1.")
	}
	f.I("MOVD dst_base+0(FP), R0")
	f.I("MOVD dst_len+8(FP), R1")
	f.I("MOVD src_base+24(FP), R3")
	f.I("MOVD kernel+48(FP), R6")
	// step emits one step's loads (the column at R4; for the average also the next
	// one, at R7) and folds for the accumulators V0…V(n−1), loaded into V4… and V8….
	step := func(n int, load func(base string, first int) string) {
		if !avg {
			f.I(load("R4", 4))
			for a := 0; a < n; a++ {
				f.W(FMAX4S(V(a), V(4+a), V(a)))
			}
			return
		}
		f.I("ADD $4, R4, R7")
		f.I(load("R4", 4))
		f.I(load("R7", 8))
		for a := 0; a < n; a++ {
			f.W(FADD4S(V(4+a), V(4+a), V(8+a)))
		}
		for a := 0; a < n; a++ {
			f.W(FADD4S(V(a), V(a), V(4+a)))
		}
	}
	columns := func(label string, n int, load func(base string, first int) string) {
		f.I("MOVD R3, R4")
		if avg {
			f.I("LSR $1, R6, R5") // (kernel−1)/2 pairs
		} else {
			f.I("SUB $1, R6, R5")
		}
		f.Label(label)
		f.I("CBZ R5, %s_end", label)
		f.I("ADD $4, R4")
		step(n, load)
		if avg {
			f.I("ADD $4, R4")
		}
		f.I("SUB $1, R5")
		f.I("B %s", label)
		f.Label(label + "_end")
	}
	f.Label("loop16")
	f.I("CMP $16, R1")
	f.I("BLT loop4")
	f.I("VLD1 (R3), [V0.S4, V1.S4, V2.S4, V3.S4]")
	columns("cols16", 4, func(base string, first int) string {
		return fmt.Sprintf("VLD1 (%s), [V%d.S4, V%d.S4, V%d.S4, V%d.S4]", base, first, first+1, first+2, first+3)
	})
	if avg {
		f.W(FMUL4S(0, 0, 16), FMUL4S(1, 1, 16), FMUL4S(2, 2, 16), FMUL4S(3, 3, 16))
	}
	f.I("VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R0)")
	f.I("ADD $64, R3")
	f.I("SUB $16, R1")
	f.I("B loop16")

	f.Label("loop4")
	f.I("CMP $4, R1")
	f.I("BLT tail")
	f.I("VLD1 (R3), [V0.S4]")
	columns("cols4", 1, func(base string, first int) string {
		return fmt.Sprintf("VLD1 (%s), [V%d.S4]", base, first)
	})
	if avg {
		f.W(FMUL4S(0, 0, 16))
	}
	f.I("VST1.P [V0.S4], 16(R0)")
	f.I("ADD $16, R3")
	f.I("SUB $4, R1")
	f.I("B loop4")

	f.Label("tail")
	f.I("CBZ R1, done")
	f.I("FMOVS (R3), F0")
	f.I("MOVD R3, R4")
	if avg {
		f.I("LSR $1, R6, R5")
	} else {
		f.I("SUB $1, R6, R5")
	}
	f.Label("cols1")
	f.I("CBZ R5, cols1_end")
	f.I("ADD $4, R4")
	f.I("FMOVS (R4), F4")
	if avg {
		f.I("FMOVS 4(R4), F5")
		f.I("FADDS F5, F4, F4")
		f.I("FADDS F4, F0, F0")
		f.I("ADD $4, R4")
	} else {
		f.I("FMAXS F4, F0, F0")
	}
	f.I("SUB $1, R5")
	f.I("B cols1")
	f.Label("cols1_end")
	if avg {
		f.I("FMULS F16, F0, F0")
	}
	f.I("FMOVS.P F0, 4(R0)")
	f.I("ADD $4, R3")
	f.I("SUB $1, R1")
	f.I("B tail")
	f.Label("done")
	f.I("RET")
}

// fixedBlock is the number of outputs an iteration of a fixed-size body writes: four
// vectors, each output vector's operations a chain, the four interleaved.
const fixedBlock = 16

// fixedMargin is how many elements past the last window the fixed-size bodies may
// read: a body computes one or two vectors of partial windows ahead for the next
// iteration (maxReach checks each body against it).
const fixedMargin = 3

// A body tracks the source vectors an iteration of a fixed-size body loads, relative
// to R2 (the iteration's first window), to check its reach against fixedMargin.
type body struct {
	f     *File
	k     int
	reach int // one past the last element read, from the iteration's first window
}

// load loads src[R2/4 + at : … + 4] into v (LDR, or LDUR at offsets that are not a
// multiple of 16).
func (b *body) load(v V, at int) {
	b.f.I("FMOVQ %d(R2), F%d", 4*at, v)
	b.reach = max(b.reach, at+4)
}

// ext sets d to lanes sh … sh+3 of lo followed by hi.
func (b *body) ext(d, lo, hi V, sh int) {
	b.f.I("VEXT $%d, V%d.B16, V%d.B16, V%d.B16", 4*sh, hi, lo, d)
}

// check panics if the body reads more than fixedMargin elements past its last window.
func (b *body) check() {
	if over := b.reach - (fixedBlock + b.k - 1); over > fixedMargin {
		panic(fmt.Sprintf("pool: kernel %d reads %d elements past its last window", b.k, over))
	}
}

// fixedHeader starts a fixed-size body: R0 walks dst, R1 counts outputs, R2 walks src.
func fixedHeader(f *File, avg bool, k int) *body {
	if avg {
		name := fmt.Sprintf("AvgPool1DValid%dNEON", k)
		f.Func(name, "(dst []float32, src []float32, scale float32)", 52,
			fmt.Sprintf("%s is AvgPool1DValidNEON for kernel = %d. len(dst) must be a multiple of %d and len(src) at least len(dst)+%d (it reads up to %d elements past the last window).", name, k, fixedBlock, k-1+fixedMargin, fixedMargin))
		f.I("FMOVS scale+48(FP), F31")
		f.I("VDUP V31.S[0], V31.S4")
	} else {
		name := fmt.Sprintf("MaxPool1DValid%dNEON", k)
		f.Func(name, "(dst []float32, src []float32)", 48,
			fmt.Sprintf("%s is MaxPool1DValidNEON for kernel = %d. len(dst) must be a multiple of %d and len(src) at least len(dst)+%d (it reads up to %d elements past the last window).", name, k, fixedBlock, k-1+fixedMargin, fixedMargin))
	}
	f.I("MOVD dst_base+0(FP), R0")
	f.I("MOVD dst_len+8(FP), R1")
	f.I("MOVD src_base+24(FP), R2")
	return &body{f: f, k: k}
}

// fixedLoop emits the prologue, which computes the vectors the first iteration takes
// over from a previous one, and the loop around one iteration's body, which ends with
// the four output vectors in V0…V3.
func fixedLoop(f *File, label string, prologue, iteration func()) {
	f.I("CBZ R1, %s_done", label)
	prologue()
	f.Label(label)
	iteration()
	f.I("FSTPQ.P (F0, F1), 32(R0)")
	f.I("FSTPQ.P (F2, F3), 32(R0)")
	f.I("ADD $%d, R2", 4*fixedBlock)
	f.I("SUBS $%d, R1, R1", fixedBlock)
	f.I("BNE %s", label)
	f.Label(label + "_done")
	f.I("RET")
}

// fixedAvg writes AvgPool1DValid{k}NEON, in AvgPool1D's order: output vector u of an
// iteration (outputs 4u … 4u+3, src lanes from 4u on, written X(4u)) is
//
//	((X(4u) + P1[u]) + P3[u]) + P1[u+1]   (k = 7; k = 5 stops after P3, k = 3 after P1)
//
// where P1[u] = X(4u+1) + X(4u+2) holds the pairs src[j] + src[j+1] for j = 4u+1 …
// 4u+4 and P3[u] = EXT(P1[u], P1[u+1]) those for j = 4u+3 … 4u+6: each pair is added
// once, and P1[4] is the next iteration's P1[0] (written over the register P1[0] has
// done with, so that no MOV carries it). Per output vector that is 2 loads beside the
// aligned X(4u), one pair add, one EXT, (k−1)/2 adds, the multiply and the store: on
// llvm-mca's Neoverse V2 model, 7 of the 4 vector pipes' µops for k = 7 (1.75 cycles
// per 4 outputs), against 9 if X(4u+1) and X(4u+2) came from X(4u) and X(4u+4) by EXT
// too: a load takes one of three load pipes, an EXT a vector pipe. k = 3 takes its pair
// from the two loads and needs no EXT. llvm-mca model estimates of one AvgPool1D call
// (neonmca, n = 4096, k = 7, Neoverse V2): 2811 cycles with the general body alone,
// 1868 with this one (C 2088), bound by the vector pipes; loops alone, cycles per 16
// outputs: k = 3 4.7 (its 12 loads bind), k = 5 6.1, k = 7 7.1, against 8.3 for the C
// reference's loop (5 loads and 5 adds per 4 outputs, load-bound).
func fixedAvg(f *File, k int) {
	b := fixedHeader(f, true, k)
	label := fmt.Sprintf("avg%d", k)
	if k == 3 {
		fixedLoop(f, label, func() {}, func() {
			for u := V(0); u < 4; u++ {
				b.load(u, int(4*u))
				b.load(4+2*u, int(4*u+1))
				b.load(5+2*u, int(4*u+2))
			}
			for u := V(0); u < 4; u++ {
				f.W(FADD4S(4+2*u, 4+2*u, 5+2*u))
			}
			for u := V(0); u < 4; u++ {
				f.W(FADD4S(u, u, 4+2*u))
			}
			for u := V(0); u < 4; u++ {
				f.W(FMUL4S(u, u, 31))
			}
		})
		b.check()
		return
	}
	// P1[0] in V4, P1[1…3] in V5, V7, V9 (their second loads in V6, V8, V10), P1[4]
	// loaded into V11, V12 and added into V4; P3[0…3] in V13…V16.
	p1 := []V{4, 5, 7, 9, 4}
	fixedLoop(f, label, func() {
		b.load(4, 1)
		b.load(5, 2)
		f.W(FADD4S(4, 4, 5))
	}, func() {
		for u := V(0); u < 4; u++ {
			b.load(u, int(4*u))
		}
		for u := 1; u <= 4; u++ {
			lo := V(5 + 2*(u-1))
			b.load(lo, 4*u+1)
			b.load(lo+1, 4*u+2)
		}
		for u := 1; u <= 3; u++ {
			f.W(FADD4S(p1[u], p1[u], p1[u]+1))
		}
		for u := 0; u < 3; u++ {
			b.ext(V(13+u), p1[u], p1[u+1], 2)
		}
		for u := 0; u < 4; u++ {
			f.W(FADD4S(V(u), V(u), p1[u]))
		}
		f.W(FADD4S(4, 11, 12)) // P1[4], over P1[0]
		b.ext(16, p1[3], p1[4], 2)
		for u := 0; u < 4; u++ {
			f.W(FADD4S(V(u), V(u), V(13+u)))
		}
		if k == 7 {
			for u := 0; u < 4; u++ {
				f.W(FADD4S(V(u), V(u), p1[u+1]))
			}
		}
		for u := V(0); u < 4; u++ {
			f.W(FMUL4S(u, u, 31))
		}
	})
	b.check()
}

// fixedMax writes MaxPool1DValid{k}NEON. With M2(j) = max(src[j], src[j+1]) and
// M4(j) = max(M2(j), M2(j+2)), output i is max(M2(i), M2(i+1)) for k = 3,
// max(M4(i), src[i+4]) for k = 5 and max(M4(i), M4(i+3)) for k = 7; M2 of an output
// vector comes from two loads, its shifts by EXT from the next vector's, and the
// vectors the next iteration needs are written over registers this one has done with.
// Vector-pipe µops per output vector: 4 for k = 3, 5 for k = 5, 6 for k = 7 (store
// included), with two loads. FMAX propagates NaNs: no screening. llvm-mca model
// estimates of one MaxPool1D call (n = 4096, k = 7, Neoverse V2; neonmca has no max
// row, so a copy of it with one, the C in the style of its avgpool7: 5 loads and 5
// FMAX per 4 outputs): 2815 cycles with the general body alone, 1618 with this one, C
// 2104; loops alone, cycles per 16 outputs: k = 3 4.1, k = 5 5.1, k = 7 6.1 (C 8.2).
func fixedMax(f *File, k int) {
	b := fixedHeader(f, false, k)
	label := fmt.Sprintf("max%d", k)
	switch k {
	case 3:
		// M2[0] in V4 (carried), M2[1…3] in V5…V7, M2[4] over V4; X(4u) in V8…V11,
		// X(4u+1) in V12…V15; the shifted M2 in V16…V19.
		m2 := []V{4, 5, 6, 7, 4}
		fixedLoop(f, label, func() {
			b.load(4, 0)
			b.load(5, 1)
			f.W(FMAX4S(4, 4, 5))
		}, func() {
			for u := 1; u <= 4; u++ {
				b.load(V(7+u), 4*u)
				b.load(V(11+u), 4*u+1)
			}
			for u := 1; u <= 3; u++ {
				f.W(FMAX4S(m2[u], V(7+u), V(11+u)))
			}
			for u := 0; u < 3; u++ {
				b.ext(V(16+u), m2[u], m2[u+1], 1)
			}
			for u := V(0); u < 3; u++ {
				f.W(FMAX4S(u, m2[u], 16+u))
			}
			f.W(FMAX4S(4, 11, 15)) // M2[4], over M2[0]
			b.ext(19, m2[3], m2[4], 1)
			f.W(FMAX4S(3, m2[3], 19))
		})
	case 5:
		// M2[0] in V4 (carried), M2[1…3] in V5…V7, M2[4] over V4; X(4u+4) in V8…V11,
		// X(4u+5) in V12…V15; M4 in V16…V19.
		m2 := []V{4, 5, 6, 7, 4}
		fixedLoop(f, label, func() {
			b.load(4, 0)
			b.load(5, 1)
			f.W(FMAX4S(4, 4, 5))
		}, func() {
			for u := 1; u <= 4; u++ {
				b.load(V(7+u), 4*u)
				b.load(V(11+u), 4*u+1)
			}
			for u := 1; u <= 3; u++ {
				f.W(FMAX4S(m2[u], V(7+u), V(11+u)))
			}
			for u := 0; u < 3; u++ {
				b.ext(V(16+u), m2[u], m2[u+1], 2)
			}
			for u := 0; u < 3; u++ {
				f.W(FMAX4S(V(16+u), V(16+u), m2[u]))
			}
			f.W(FMAX4S(4, 11, 15)) // M2[4], over M2[0]
			b.ext(19, m2[3], m2[4], 2)
			f.W(FMAX4S(19, 19, m2[3]))
			for u := V(0); u < 4; u++ {
				f.W(FMAX4S(u, 16+u, 8+u)) // max(M4(i), src[i+4])
			}
		})
	case 7:
		// M2[1] in V5 (carried), M2[2…4] in V6…V8, M2[5] over V5; M4[0] in V9
		// (carried), M4[1…3] in V10…V12, M4[4] over V9.
		m2 := []V{0, 5, 6, 7, 8, 5}
		m4 := []V{9, 10, 11, 12, 9}
		fixedLoop(f, label, func() {
			b.load(4, 0)
			b.load(5, 1)
			f.W(FMAX4S(4, 4, 5)) // M2[0]
			b.load(5, 4)
			b.load(6, 5)
			f.W(FMAX4S(5, 5, 6)) // M2[1]
			b.ext(9, 4, 5, 2)
			f.W(FMAX4S(9, 9, 4)) // M4[0]
		}, func() {
			for u := 2; u <= 5; u++ {
				b.load(V(11+2*u), 4*u)   // V15, V17, V19, V21
				b.load(V(12+2*u), 4*u+1) // V16, V18, V20, V22
			}
			for u := 2; u <= 4; u++ {
				f.W(FMAX4S(m2[u], V(11+2*u), V(12+2*u)))
			}
			for u := 1; u <= 3; u++ {
				b.ext(V(22+u), m2[u], m2[u+1], 2) // V23…V25
			}
			for u := 1; u <= 3; u++ {
				f.W(FMAX4S(m4[u], V(22+u), m2[u]))
			}
			f.W(FMAX4S(5, 21, 22)) // M2[5], over M2[1]
			b.ext(26, m2[4], m2[5], 2)
			for u := 0; u < 3; u++ {
				b.ext(V(27+u), m4[u], m4[u+1], 3) // V27…V29
			}
			for u := V(0); u < 3; u++ {
				f.W(FMAX4S(u, m4[u], 27+u))
			}
			f.W(FMAX4S(9, 26, m2[4])) // M4[4], over M4[0]
			b.ext(30, m4[3], m4[4], 3)
			f.W(FMAX4S(3, m4[3], 30))
		})
	}
	b.check()
}

// constants appends the fixed bodies' shape to the stubs file for the Go callers.
func constants(stubs string) {
	src, err := os.ReadFile(stubs)
	if err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	buf.Write(src)
	fmt.Fprintf(&buf, "\n// PoolFixedBlockNEON divides the len(dst) of {Avg,Max}Pool1DValid{3,5,7}NEON, which\n")
	fmt.Fprintf(&buf, "// need len(src) ≥ len(dst) + kernel − 1 + PoolFixedMarginNEON.\n")
	fmt.Fprintf(&buf, "const (\n\tPoolFixedBlockNEON = %d\n\tPoolFixedMarginNEON = %d\n)\n", fixedBlock, fixedMargin)
	out, err := format.Source(buf.Bytes())
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(stubs, out, 0o644); err != nil {
		panic(err)
	}
}
