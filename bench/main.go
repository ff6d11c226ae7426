// Command bench is kvsimd's report: what this CPU can run, which variant start-up chose,
// and every kernel family's speed per variant against generic, measured in one process.
//
//	go run ./bench            # the report
//	go test -bench . ./bench  # the same bodies as go test benchmarks, for benchstat
//
// Each kernel family adds a section (see sections); the benchmark bodies are shared
// with the Benchmark functions in this directory's _test.go files.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/klauspost/cpuid/v2"
	"github.com/kvsimd/kvsimd/kernels"
)

// A section measures one kernel family at one size for every variant.
type section struct {
	name string
	// unit names what perElement counts ("elem", "pair"); perElement is how many of
	// them one op processes, for the ns/unit column.
	unit       string
	perElement int
	body       func(b *testing.B)
}

var sections []section

func main() {
	filter := flag.String("only", "", "run only sections whose name contains this")
	flag.Bool("json", false, "with -passkey: print a JSON array instead of a Markdown table")
	flag.Parse()
	passkeyMain()
	testing.Init()

	fmt.Printf("CPU       %s\n", cpuid.CPU.BrandName)
	fmt.Printf("features  %s\n", strings.Join(relevantFeatures(), " "))
	fmt.Printf("variants  %s\n", strings.Join(kernels.Variants(), " "))
	fmt.Printf("active    %s\n", kernels.Active())
	if err := kernels.EnvError(); err != nil {
		fmt.Printf("warning   %v\n", err)
	}
	fmt.Println()

	start := kernels.Active()
	defer kernels.Use(start)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kernel\tvariant\tns/op\tns/unit\tMB/s\tvs generic\t")
	for _, s := range sections {
		if !strings.Contains(s.name, *filter) {
			continue
		}
		var generic float64
		for _, v := range append([]string{"generic"}, kernels.Variants()...) {
			if v == "generic" && generic != 0 {
				continue
			}
			must(kernels.Use(v))
			r := testing.Benchmark(s.body)
			ns := float64(r.T.Nanoseconds()) / float64(r.N)
			if v == "generic" {
				generic = ns
			}
			mbs := "-"
			if r.Bytes > 0 {
				mbs = fmt.Sprintf("%.0f", float64(r.Bytes)*float64(r.N)/float64(r.T.Nanoseconds())*1e3)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.4f %s\t%s\t%.1f×\t\n", s.name, v, ns, ns/float64(s.perElement), s.unit, mbs, generic/ns)
		}
	}
	tw.Flush()
}

func relevantFeatures() []string {
	var have []string
	for _, f := range []cpuid.FeatureID{cpuid.AVX2, cpuid.FMA3, cpuid.F16C, cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL, cpuid.AVX512FP16, cpuid.ASIMD, cpuid.ASIMDHP, cpuid.FPHP} {
		if cpuid.CPU.Supports(f) {
			have = append(have, f.String())
		}
	}
	return have
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
