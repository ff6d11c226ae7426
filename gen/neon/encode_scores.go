package neon

import "fmt"

// FMLAElem4S multiplies n by lane i (0..3) of m and adds into d:
// fmla vd.4s, vn.4s, vm.s[i].
func FMLAElem4S(d, n, m V, i int) Inst {
	w := rd_rn_rm(0x4f801000, d, n, m) | uint32(i&1)<<21 | uint32(i>>1&1)<<11
	return Inst{w, fmt.Sprintf("fmla v%d.4s, v%d.4s, v%d.s[%d]", d, n, m, i)}
}

func init() {
	examples = append(examples, FMLAElem4S(16, 4, 0, 0), FMLAElem4S(31, 7, 3, 1), FMLAElem4S(5, 30, 17, 2), FMLAElem4S(20, 21, 31, 3))
}
