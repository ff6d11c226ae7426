// Command topk generates asm/topk_arm64.s: TopK's candidate filter, which compares a
// block against a threshold and compresses the indices of the elements at or above it
// with TBL, branch-free.
package main

import (
	"fmt"

	. "github.com/kvsimd/kvsimd/gen/neon"
)

func main() {
	f := NewFile("arm64/topk")
	constants(f)
	filter(f)
	f.Write()
}

// constants writes the lane numbers, the lane mask bits and the compress table: for
// each 4-bit lane mask, the TBL byte indices that move the selected 32-bit lanes, in
// order, to the front (0xff, out of range, zeroes the rest).
func constants(f *File) {
	f.I("DATA topkLanes<>+0(SB)/8, $0x0000000100000000")
	f.I("DATA topkLanes<>+8(SB)/8, $0x0000000300000002")
	f.I("GLOBL topkLanes<>(SB), RODATA|NOPTR, $16")
	f.I("DATA topkLaneBits<>+0(SB)/8, $0x0000000200000001")
	f.I("DATA topkLaneBits<>+8(SB)/8, $0x0000000800000004")
	f.I("GLOBL topkLaneBits<>(SB), RODATA|NOPTR, $16")
	for mask := 0; mask < 16; mask++ {
		var entry [16]byte
		for i := range entry {
			entry[i] = 0xff
		}
		slot := 0
		for lane := 0; lane < 4; lane++ {
			if mask&(1<<lane) != 0 {
				for b := 0; b < 4; b++ {
					entry[4*slot+b] = byte(4*lane + b)
				}
				slot++
			}
		}
		for half := 0; half < 2; half++ {
			var word uint64
			for b := 7; b >= 0; b-- {
				word = word<<8 | uint64(entry[8*half+b])
			}
			f.I(fmt.Sprintf("DATA topkCompressTBL<>+%d(SB)/8, $0x%016x", 16*mask+8*half, word))
		}
	}
	f.I("GLOBL topkCompressTBL<>(SB), RODATA|NOPTR, $256")
}

// filter writes each vector's selected indices with a full-vector store at the output
// position, which then advances by the number selected: the store never passes the
// element being compared, so idx needs only len(x) entries.
//
// Registers: R0 idx, R2 x, R3 elements left, R4 index of the next element,
// R7 compress table, R8 output count; V0 lo, V2 the next vector's indices,
// V3 the index step, V4 the lane mask bits.
func filter(f *File) {
	f.Func("TopKFilterNEON", "(idx []int32, x []float32, lo float32, base int32) int", 64,
		"TopKFilterNEON writes base+i, in ascending order, for every i with x[i] ≥ lo into idx, which holds\n"+
			"// at least len(x) entries, and returns how many. NaN is never selected.")
	f.I("MOVD idx_base+0(FP), R0")
	f.I("MOVD x_base+24(FP), R2")
	f.I("MOVD x_len+32(FP), R3")
	f.I("FMOVS lo+48(FP), F0")
	f.I("MOVWU base+52(FP), R4")
	f.I("VDUP V0.S[0], V0.S4")
	f.I("VDUP R4, V2.S4")
	f.I("MOVD $topkLanes<>(SB), R5")
	f.I("VLD1 (R5), [V12.S4]")
	f.I("VADD V12.S4, V2.S4, V2.S4")
	f.I("MOVD $4, R5")
	f.I("VDUP R5, V3.S4")
	f.I("MOVD $topkLaneBits<>(SB), R5")
	f.I("VLD1 (R5), [V4.S4]")
	f.I("MOVD $topkCompressTBL<>(SB), R7")
	f.I("MOVD ZR, R8")

	f.Label("loop4")
	f.I("CMP $4, R3")
	f.I("BLT tail")
	f.I("VLD1.P 16(R2), [V5.S4]")
	f.W(FCMGE4S(6, 5, 0)) // x ≥ lo: false for NaN
	f.I("VAND V4.B16, V6.B16, V8.B16")
	f.I("VADDV V8.S4, V8") // the lane mask
	f.I("VADDV V6.S4, V6") // −(lanes selected): each is all ones
	f.I("VMOV V8.S[0], R9")
	f.I("VMOV V6.S[0], R10")
	f.I("ADD R9<<4, R7, R11")
	f.I("VLD1 (R11), [V9.B16]")
	f.I("VTBL V9.B16, [V2.B16], V10.B16")
	f.I("ADD R8<<2, R0, R11")
	f.I("VST1 [V10.S4], (R11)")
	f.I("SUBW R10, R8")
	f.I("VADD V3.S4, V2.S4, V2.S4")
	f.I("ADD $4, R4")
	f.I("SUB $4, R3")
	f.I("B loop4")

	f.Label("tail")
	f.I("CBZ R3, done")
	f.I("FMOVS.P 4(R2), F5")
	f.I("MOVW R4, (R0)(R8<<2)")
	// GE is false for unordered comparisons, so NaN is never selected.
	f.I("FCMPS F0, F5")
	f.I("CSET GE, R9")
	f.I("ADD R9, R8")
	f.I("ADD $1, R4")
	f.I("SUB $1, R3")
	f.I("B tail")

	f.Label("done")
	f.I("MOVD R8, ret+56(FP)")
	f.I("RET")
}
