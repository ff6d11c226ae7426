package neon

import "fmt"

// FSUB4S subtracts lanewise: fsub vd.4s, vn.4s, vm.4s (d = n − m).
func FSUB4S(d, n, m V) Inst {
	return Inst{rd_rn_rm(0x4ea0d400, d, n, m), fmt.Sprintf("fsub v%d.4s, v%d.4s, v%d.4s", d, n, m)}
}

// FMAXNM4S takes the lanewise maximum, the number if one lane is a quiet NaN:
// fmaxnm vd.4s, vn.4s, vm.4s.
func FMAXNM4S(d, n, m V) Inst {
	return Inst{rd_rn_rm(0x4e20c400, d, n, m), fmt.Sprintf("fmaxnm v%d.4s, v%d.4s, v%d.4s", d, n, m)}
}

// FMINNM4S takes the lanewise minimum, the number if one lane is a quiet NaN:
// fminnm vd.4s, vn.4s, vm.4s.
func FMINNM4S(d, n, m V) Inst {
	return Inst{rd_rn_rm(0x4ea0c400, d, n, m), fmt.Sprintf("fminnm v%d.4s, v%d.4s, v%d.4s", d, n, m)}
}

// FMAXV4S reduces the four lanes of n to their maximum in sd, NaN if any lane is NaN:
// fmaxv sd, vn.4s.
func FMAXV4S(d, n V) Inst {
	return Inst{rd_rn(0x6e30f800, d, n), fmt.Sprintf("fmaxv s%d, v%d.4s", d, n)}
}

// FCVTL2D widens the low two singles of n to doubles: fcvtl vd.2d, vn.2s.
func FCVTL2D(d, n V) Inst {
	return Inst{rd_rn(0x0e617800, d, n), fmt.Sprintf("fcvtl v%d.2d, v%d.2s", d, n)}
}

// FCVTL22D widens the high two singles of n to doubles: fcvtl2 vd.2d, vn.4s.
func FCVTL22D(d, n V) Inst {
	return Inst{rd_rn(0x4e617800, d, n), fmt.Sprintf("fcvtl2 v%d.2d, v%d.4s", d, n)}
}

// FADD2D adds doubles lanewise: fadd vd.2d, vn.2d, vm.2d.
func FADD2D(d, n, m V) Inst {
	return Inst{rd_rn_rm(0x4e60d400, d, n, m), fmt.Sprintf("fadd v%d.2d, v%d.2d, v%d.2d", d, n, m)}
}

// FADDP2D adds the two doubles of n into the scalar dd: faddp dd, vn.2d.
func FADDP2D(d, n V) Inst {
	return Inst{rd_rn(0x7e70d800, d, n), fmt.Sprintf("faddp d%d, v%d.2d", d, n)}
}

func init() {
	examples = append(examples,
		FSUB4S(1, 12, 23), FMAXNM4S(31, 0, 15), FMINNM4S(2, 30, 9), FMAXV4S(5, 26),
		FCVTL2D(11, 4), FCVTL22D(27, 18), FADD2D(13, 24, 6), FADDP2D(20, 7),
	)
}
