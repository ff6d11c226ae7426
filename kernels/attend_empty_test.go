package kernels

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/kvsimd/kvsimd/q8"
)

// TestAttendNoRowsPanics: with n = 0, every packed form (Attend, AttendBF16, AttendQ8
// and the AttendHeads forms) still wants k and v empty, as its doc says, so that an
// engine passing a stale n with a head's rows gets the panic, naming what was wanted,
// and not zero attention; on every variant, before writing to out. Issue 41.
func TestAttendNoRowsPanics(t *testing.T) {
	h := make([]Float16, 64)
	b := make([]bf16.BFloat16, 64)
	blocks := make([]q8.Block, 4)
	var out []float32 // the out of the current case, checked for writes
	outOf := func(n int) []float32 {
		out = make([]float32, n)
		for i := range out {
			out[i] = guard
		}
		return out
	}
	q := make([]float32, 4*32)
	cases := []struct {
		kernel, want string
		call         func()
	}{
		{"Attend", "len(k) = 64, len(v) = 64, want n·dim = 0 for n = 0, dim = 16",
			func() { Attend(outOf(64), q[:64], h, h, 4, 0, 16, 0.25) }},
		{"Attend", "len(k) = 0, len(v) = 64, want n·dim = 0 for n = 0, dim = 16",
			func() { Attend(outOf(64), q[:64], h[:0], h, 4, 0, 16, 0.25) }},
		{"Attend", "len(k) = 64, len(v) = 0, want n·dim = 0 for n = 0, dim = 16",
			func() { Attend(outOf(64), q[:64], h, h[:0], 4, 0, 16, 0.25) }},
		{"Attend", "len(k) = 64, len(v) = 64, want n·dim = 0 for n = 0, dim = 16", // no query rows either
			func() { Attend(outOf(0), q[:0], h, h, 0, 0, 16, 0.25) }},
		{"AttendBF16", "len(k) = 64, len(v) = 64, want n·dim = 0 for n = 0, dim = 16",
			func() { AttendBF16(outOf(64), q[:64], b, b, 4, 0, 16, 0.25) }},
		{"AttendBF16", "len(k) = 0, len(v) = 64, want n·dim = 0 for n = 0, dim = 16",
			func() { AttendBF16(outOf(64), q[:64], b[:0], b, 4, 0, 16, 0.25) }},
		{"AttendQ8", "len(k) = 4, len(v) = 4, want (n·dim)/32 blocks = 0 for n = 0, dim = 32",
			func() { AttendQ8(outOf(128), q, blocks, blocks, 4, 0, 32, 0.25) }},
		{"AttendQ8", "len(k) = 0, len(v) = 4, want (n·dim)/32 blocks = 0 for n = 0, dim = 32",
			func() { AttendQ8(outOf(128), q, blocks[:0], blocks, 4, 0, 32, 0.25) }},
		{"AttendHeads", "len(k) = 64, len(v) = 64, want n·heads·dim = 0 for n = 0, heads = 2, dim = 16",
			func() { AttendHeads(outOf(64), q[:64], h, h, 2, 2, 0, 16, 0.25) }},
		{"AttendHeads", "len(k) = 0, len(v) = 64, want n·heads·dim = 0 for n = 0, heads = 2, dim = 16",
			func() { AttendHeads(outOf(64), q[:64], h[:0], h, 2, 2, 0, 16, 0.25) }},
		{"AttendHeadsBF16", "len(k) = 64, len(v) = 64, want n·heads·dim = 0 for n = 0, heads = 2, dim = 16",
			func() { AttendHeadsBF16(outOf(64), q[:64], b, b, 2, 2, 0, 16, 0.25) }},
		{"AttendHeadsQ8", "len(k) = 4, len(v) = 0, want (n·heads·dim)/32 blocks = 0 for n = 0, heads = 2, dim = 32",
			func() { AttendHeadsQ8(outOf(128), q, blocks, blocks[:0], 2, 2, 0, 32, 0.25) }},
	}
	varianttest.Run(t, func(t *testing.T, _ string) {
		for _, c := range cases {
			func() {
				out = nil
				defer func() {
					msg := fmt.Sprint(recover())
					prefix := "kernels." + c.kernel + ": "
					if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, c.want) {
						t.Errorf("%s: panic %q, want one starting %q and saying %q", c.kernel, msg, prefix, c.want)
					}
					for i, x := range out {
						if x != guard {
							t.Errorf("%s (%q): wrote out[%d] = %v before panicking", c.kernel, c.want, i, x)
							break
						}
					}
				}()
				c.call()
			}()
		}
	})
}

// TestAttendStridedNoRows: the strided and partial forms take, with n = 0, k and v of
// any length, as in BLAS and as ScoresStrided does (their doc): a token-major buffer
// of an empty head, or the empty part of a head's rows, is passed as it lies. They read
// nothing, AttendStrided writes zeros and AttendPartial leaves the state empty; their
// other conditions still hold with n = 0. Issue 41.
func TestAttendStridedNoRows(t *testing.T) {
	h := make([]Float16, 64)
	b := make([]bf16.BFloat16, 64)
	blocks := make([]q8.Block, 4)
	q := make([]float32, 4*32)
	for i := range q {
		q[i] = float32(i%5) - 2
	}
	varianttest.Run(t, func(t *testing.T, _ string) {
		for _, c := range []struct {
			kernel string
			dim    int
			call   func(out []float32)
		}{
			{"AttendStrided", 16, func(out []float32) { AttendStrided(out, q[:64], h, h, 4, 0, 16, 32, 0.25) }},
			{"AttendStrided", 16, func(out []float32) { AttendStrided(out, q[:64], h[:0], h, 4, 0, 16, 32, 0.25) }},
			{"AttendStridedBF16", 16, func(out []float32) { AttendStridedBF16(out, q[:64], b, b[:3], 4, 0, 16, 16, 0.25) }},
			{"AttendStridedQ8", 32, func(out []float32) { AttendStridedQ8(out, q, blocks, blocks[:0], 4, 0, 32, 64, 0.25) }},
		} {
			out := make([]float32, 4*c.dim)
			for i := range out {
				out[i] = guard
			}
			c.call(out)
			for i, x := range out {
				if x != 0 {
					t.Errorf("%s: out[%d] = %v with n = 0, want 0", c.kernel, i, x)
					break
				}
			}
		}
		var st, qst AttendState
		st.Reset(4, 16)
		qst.Reset(4, 32)
		AttendPartial(&st, q[:64], h, h[:0], 0, 16, 0.25)
		AttendPartialBF16(&st, q[:64], b[:0], b, 0, 48, 0.25)
		AttendPartialQ8(&qst, q, blocks, blocks, 0, 32, 0.25)
		for _, s := range []*AttendState{&st, &qst} {
			out := make([]float32, len(s.acc))
			s.Finish(out)
			for i, x := range out {
				if x != 0 {
					t.Errorf("AttendPartial with n = 0: output[%d] = %v, want 0 (an empty state)", i, x)
					break
				}
			}
		}
		for _, c := range []struct {
			kernel, want string
			call         func()
		}{
			{"AttendStrided", "stride = 8, want rows, n ≥ 0 and 1 ≤ dim ≤ stride",
				func() { AttendStrided(make([]float32, 64), q[:64], h, h, 4, 0, 16, 8, 0.25) }},
			{"AttendStridedQ8", "stride = 48, want rows, n ≥ 0 and 1 ≤ dim ≤ stride, dim and stride multiples of 32",
				func() { AttendStridedQ8(make([]float32, 128), q, blocks, blocks, 4, 0, 32, 48, 0.25) }},
			{"AttendPartialBF16", "stride = 15, want rows, n ≥ 0 and 1 ≤ dim ≤ stride",
				func() { AttendPartialBF16(&st, q[:64], b, b, 0, 15, 0.25) }},
		} {
			func() {
				defer func() {
					msg := fmt.Sprint(recover())
					prefix := "kernels." + c.kernel + ": "
					if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, c.want) {
						t.Errorf("%s: panic %q, want one starting %q and saying %q", c.kernel, msg, prefix, c.want)
					}
				}()
				c.call()
			}()
		}
	})
}
