package snapkv

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// validate checks everything about cfg that does not depend on an input.
func (cfg *Config) validate() error {
	switch {
	case cfg.Budget < 0:
		return fmt.Errorf("snapkv: Budget %d is negative", cfg.Budget)
	case cfg.Budget > 0 && cfg.KeepRatio != 0:
		return fmt.Errorf("snapkv: Budget %d and KeepRatio %v are both set; set one", cfg.Budget, cfg.KeepRatio)
	case cfg.Budget == 0 && cfg.KeepRatio == 0:
		return errors.New("snapkv: Budget 0 and no KeepRatio: set Budget ≥ 1 or KeepRatio in (0, 1]")
	case cfg.Budget == 0 && !(cfg.KeepRatio > 0 && cfg.KeepRatio <= 1): // NaN fails too
		return fmt.Errorf("snapkv: KeepRatio %v is outside (0, 1]", cfg.KeepRatio)
	case cfg.Window < 1:
		return fmt.Errorf("snapkv: Window %d, want ≥ 1", cfg.Window)
	case cfg.Kernel < 1 || cfg.Kernel%2 == 0:
		return fmt.Errorf("snapkv: Kernel %d, want an odd number ≥ 1", cfg.Kernel)
	case cfg.Pool != PoolAvg && cfg.Pool != PoolMax:
		return fmt.Errorf("snapkv: Pool %d is not PoolAvg or PoolMax", cfg.Pool)
	case cfg.Rule != RulePaper && cfg.Rule != RuleProtected:
		return fmt.Errorf("snapkv: Rule %d is not RulePaper or RuleProtected", cfg.Rule)
	case cfg.Sinks < 0:
		return fmt.Errorf("snapkv: Sinks %d is negative", cfg.Sinks)
	case cfg.Sinks > 0 && cfg.Rule == RulePaper:
		return fmt.Errorf("snapkv: Sinks %d with RulePaper, which keeps no sinks; use RuleProtected", cfg.Sinks)
	case cfg.Group != GroupMean && cfg.Group != GroupMax && cfg.Group != GroupSum:
		return fmt.Errorf("snapkv: Group %d is not GroupMean, GroupMax or GroupSum", cfg.Group)
	case cfg.Alloc != AllocUniform && cfg.Alloc != AllocAdaptive:
		return fmt.Errorf("snapkv: Alloc %d is not AllocUniform or AllocAdaptive", cfg.Alloc)
	case !(cfg.Floor >= 0 && cfg.Floor <= 1):
		return fmt.Errorf("snapkv: Floor %v is outside [0, 1]", cfg.Floor)
	case cfg.Floor != 0 && cfg.Alloc != AllocAdaptive:
		return fmt.Errorf("snapkv: Floor %v needs Alloc = AllocAdaptive", cfg.Floor)
	case cfg.Workers < 0:
		return fmt.Errorf("snapkv: Workers %d is negative", cfg.Workers)
	}
	return nil
}

// budget is C for a prompt of n rows: Budget, or ⌈KeepRatio·n⌉ (at least 1), where a
// product within 1e-9 (relative) of an integer counts as that integer, so that the
// binary rounding of ratios like 0.1 does not keep one row more than 0.1·30 = 3.
func (cfg *Config) budget(n int) int {
	if cfg.Budget > 0 {
		return cfg.Budget
	}
	x := cfg.KeepRatio * float64(n)
	c := math.Round(x)
	if math.Abs(x-c) > 1e-9*max(x, 1) {
		c = math.Ceil(x)
	}
	return max(int(c), 1)
}

// mul is a·b·c, or ok = false if the product overflows int (all are ≥ 0).
func mul(a, b, c int) (p int, ok bool) {
	hi, ab := bits.Mul64(uint64(a), uint64(b))
	hi2, abc := bits.Mul64(ab, uint64(c))
	if hi != 0 || hi2 != 0 || abc > math.MaxInt {
		return 0, false
	}
	return int(abc), true
}

// checkLen reports whether len(x) == a·b·c, naming the slice and the dims otherwise.
func checkLen(field string, n int, dims string, a, b, c int) error {
	want, ok := mul(a, b, c)
	if !ok {
		return fmt.Errorf("snapkv: %s = %d·%d·%d overflows int", dims, a, b, c)
	}
	if n != want {
		return fmt.Errorf("snapkv: len(Input.%s) = %d, want %s = %d·%d·%d = %d", field, n, dims, a, b, c, want)
	}
	return nil
}

// checkKeys reports whether len(Input.K) = n is KVHeads·Len·Dim values in E's
// elements (KVHeads·Len·Dim/32 blocks for q8_0; dim is a multiple of 32 then).
func checkKeys[E Element](n, kvHeads, length, dim int) error {
	per := perElem[E]()
	if per == 1 {
		return checkLen("K", n, "KVHeads·Len·Dim", kvHeads, length, dim)
	}
	want, ok := mul(kvHeads, length, dim/per)
	if !ok {
		return fmt.Errorf("snapkv: KVHeads·Len·Dim/%d = %d·%d·%d/%d overflows int", per, kvHeads, length, dim, per)
	}
	if n != want {
		return fmt.Errorf("snapkv: len(Input.K) = %d blocks, want KVHeads·Len·Dim/%d = %d·%d·%d/%d = %d", n, per, kvHeads, length, dim, per, want)
	}
	return nil
}
