// Command pool generates asm/pool_arm64.s: the interior ("valid") part of 1-D average
// and max pooling with stride 1, on NEON. The padded edges are the Go callers'.
package main

import (
	"fmt"

	. "github.com/kvsimd/kvsimd/gen/neon"
)

func main() {
	f := NewFile("arm64/pool")
	pool(f, true)
	pool(f, false)
	f.Write()
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
