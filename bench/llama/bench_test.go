package llama

import (
	"fmt"
	"testing"

	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/q8"
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
// 500-byte prompt, with the full cache and with compressed ones, the cache in each
// format (kv=fp16|bf16|q8_0 last, for benchstat -col /kv): the same-run speed ratio of
// docs/passkey.md. Caches are rebuilt, untimed, every 16 steps so they stay near the
// prompt's size.
func BenchmarkDecode(b *testing.B) {
	m := testModel(b)
	ps, _ := testPrompts(b)
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
			b.Run("kv=fp16", func(b *testing.B) { benchDecode(b, mustEngine[fp16.Float16](m), ps[0], me) })
			b.Run("kv=bf16", func(b *testing.B) { benchDecode(b, mustEngine[bf16.BFloat16](m), ps[0], me) })
			b.Run("kv=q8_0", func(b *testing.B) { benchDecode(b, mustEngine[q8.Block](m), ps[0], me) })
		})
	}
}

func benchDecode[E elem](b *testing.B, e *engine[E], pr Prompt, me Method) {
	p, err := e.prefill([]byte(pr.Text))
	if err != nil {
		b.Fatal(err)
	}
	build := func() []KVOf[E] {
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
}
