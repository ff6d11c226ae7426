package asm

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// loopCount counts the instructions of one iteration of the loop at label in function
// fn of the assembly file path, on its fast path: conditional branches that leave the
// loop fall through, unconditional ones are followed, until the branch back to label.
// control counts the loop's bookkeeping among them: the count and pointer updates and
// the branches to label or to the code after the loop (exit).
func loopCount(t *testing.T, path, fn, label, exit string) (all, control int) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	start := strings.Index(text, "TEXT ·"+fn+"(SB)")
	if start < 0 {
		t.Fatalf("%s: no function %s", path, fn)
	}
	text = text[start+1:]
	if end := strings.Index(text, "\nTEXT "); end >= 0 {
		text = text[:end]
	}
	var body []string
	labels := map[string]int{}
	for _, l := range strings.Split(text, "\n")[1:] {
		l, _, _ = strings.Cut(l, "//")
		l = strings.TrimSpace(l)
		switch {
		case l == "":
		case strings.HasSuffix(l, ":"):
			labels[strings.TrimSuffix(l, ":")] = len(body)
		default:
			body = append(body, l)
		}
	}
	bookkeeping := regexp.MustCompile(`^(CMPQ|CMP|ADDQ|SUBQ|ADD|SUB|SUBS|ADDS) `)
	i, ok := labels[label]
	if !ok {
		t.Fatalf("%s: no label %s in %s", path, label, fn)
	}
	for steps := 0; steps < 10000; steps++ {
		op, arg, _ := strings.Cut(body[i], " ")
		arg = strings.TrimSpace(arg)
		all++
		if bookkeeping.MatchString(body[i]) || arg == label || arg == exit {
			control++
		}
		if arg == label {
			return all, control
		}
		if op == "B" || op == "JMP" {
			i = labels[arg]
			continue
		}
		i++
	}
	t.Fatalf("%s: the loop at %s does not close", path, label)
	return
}

// TestInstructionTable recomputes the instruction counts of the table in ExpSumNEON's
// comment (gen/arm64/softmax/main.go) from the generated assembly: the table must
// follow the generators. Like the register test, it lives in the main module, whose
// files the test cache tracks, so a regenerated file re-runs it.
func TestInstructionTable(t *testing.T) {
	src, err := os.ReadFile("../gen/arm64/softmax/main.go")
	if err != nil {
		t.Fatal(err)
	}
	loops := map[string][4]string{
		"neon, this body": {"softmax_arm64.s", "ExpSumNEON", "loop16", "vectors"},
		"avx512":          {"softmax_amd64.s", "ExpSumAVX512", "exp8AVX512_21", "exp8doneAVX512_22"},
		"avx2":            {"softmax_amd64.s", "ExpSumAVX2", "exp8AVX2_4", "exp8doneAVX2_5"},
	}
	row := regexp.MustCompile(`(?m)^//\t(neon, this body|avx512|avx2) +(\d+) +(\d+) +([\d.]+) +(\d+) +([\d.]+)$`)
	rows := row.FindAllStringSubmatch(string(src), -1)
	if len(rows) != len(loops) {
		t.Fatalf("found %d rows of the table, want %d", len(rows), len(loops))
	}
	for _, r := range rows {
		l := loops[r[1]]
		all, control := loopCount(t, l[0], l[1], l[2], l[3])
		var elems int
		fmt.Sscan(r[2], &elems)
		want := fmt.Sprintf("%d %d %.2f %d %.2f", elems, all, float64(all)/float64(elems), all-control, float64(all-control)/float64(elems))
		if got := strings.Join(r[2:], " "); got != want {
			t.Errorf("%s: the table says %s (elements, instructions, per element, without loop control, per element), the asm gives %s", r[1], got, want)
		}
	}
}
