package neon

import "fmt"

// The FEAT_FHM instructions (Armv8.2-A's optional fp16 multiply-add long, mandatory
// from Armv8.4-A when FEAT_FP16 is present): they multiply halves and add the exact
// products into single-precision lanes with one rounding, without widening the halves
// first. A CPU without the feature raises SIGILL on them, so the code that runs them
// must be selected at run time (internal/dispatch). llvm-mc accepts them only with
// -mattr=+fp16fml, so they are catalogued apart from Examples (FHMExamples) and
// checked by their own test.

// FMLAL multiplies the low four halves of n and m and adds the products into d:
// fmlal vd.4s, vn.4h, vm.4h.
func FMLAL(d, n, m V) Inst {
	return Inst{rd_rn_rm(0x4e20ec00, d, n, m), fmt.Sprintf("fmlal v%d.4s, v%d.4h, v%d.4h", d, n, m)}
}

// FMLAL2 multiplies the high four halves of n and m (lanes 4–7 of their .8h) and adds
// the products into d: fmlal2 vd.4s, vn.4h, vm.4h. (The assembler's syntax names the
// sources .4h; the instruction reads their upper 64 bits.)
func FMLAL2(d, n, m V) Inst {
	return Inst{rd_rn_rm(0x6e20cc00, d, n, m), fmt.Sprintf("fmlal2 v%d.4s, v%d.4h, v%d.4h", d, n, m)}
}

// fhmExamples holds one instance of every FEAT_FHM encoder with distinct registers.
var fhmExamples = []Inst{FMLAL(16, 0, 8), FMLAL(31, 17, 9), FMLAL2(17, 0, 8), FMLAL2(30, 5, 23)}

// FHMExamples returns the catalogue of the FEAT_FHM encoders.
func FHMExamples() []Inst { return append([]Inst(nil), fhmExamples...) }
