package neon

import "fmt"

// FCMGE4S sets each lane of d to all ones where n ≥ m and to zero otherwise (also for
// NaN): fcmge vd.4s, vn.4s, vm.4s.
func FCMGE4S(d, n, m V) Inst {
	return Inst{rd_rn_rm(0x6e20e400, d, n, m), fmt.Sprintf("fcmge v%d.4s, v%d.4s, v%d.4s", d, n, m)}
}

func init() {
	examples = append(examples, FCMGE4S(9, 22, 30))
}
