package llama

import (
	"fmt"
	"testing"

	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/snapkv"
)

// BenchmarkPrefill is one 500-byte prompt through the model with full attention.
func BenchmarkPrefill(b *testing.B) {
	m := testModel(b)
	ps, _ := testPrompts(b)
	for b.Loop() {
		if _, err := m.Prefill([]byte(ps[0].Text)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecode is one decode step (a token through all three layers) after a
// 500-byte prompt, with the full cache and with compressed ones: the same-run speed
// ratio of docs/passkey.md. Caches are rebuilt, untimed, every 16 steps so they stay near
// the prompt's size.
func BenchmarkDecode(b *testing.B) {
	m := testModel(b)
	e := mustEngine[fp16.Float16](m)
	ps, _ := testPrompts(b)
	p, err := e.prefill([]byte(ps[0].Text))
	if err != nil {
		b.Fatal(err)
	}
	cases := []Method{{Name: "full", Kind: Full}}
	for _, c := range []int{32, 64, 128} {
		cases = append(cases, Method{Name: "snapkv-protected", Kind: SnapKV, Window: 16, Budget: c, Sinks: ProtocolSinks, Rule: snapkv.RuleProtected})
	}
	for _, me := range cases {
		name := me.Name
		if me.Budget > 0 {
			name = fmt.Sprintf("%s/C=%d", name, me.Budget)
		}
		b.Run(name, func(b *testing.B) {
			build := func() []KV {
				caches, _, err := e.caches(p, me, newMeasured(e, p))
				if err != nil {
					b.Fatal(err)
				}
				return caches
			}
			s := e.newState()
			caches, steps := build(), 0
			for b.Loop() {
				if steps == 16 {
					b.StopTimer()
					caches, steps = build(), 0
					b.StartTimer()
				}
				if _, err := e.forward(s, caches, '7', true); err != nil {
					b.Fatal(err)
				}
				steps++
			}
		})
	}
}
