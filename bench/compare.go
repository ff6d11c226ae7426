package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
)

// compareFiles reads two report.json files and prints, for every figure and limit
// present in both, the new time (or rate) over the old, so a kernel change can be
// judged from two reports without benchstat. Both runs' spreads are shown: a ratio
// inside them is noise.
func compareFiles(w io.Writer, oldPath, newPath string) error {
	old, err := readReport(oldPath)
	if err != nil {
		return err
	}
	cur, err := readReport(newPath)
	if err != nil {
		return err
	}
	compareReports(w, old, cur, oldPath, newPath)
	return nil
}

func readReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %q, want %q", path, r.Schema, Schema)
	}
	return &r, nil
}

// figureKey identifies a figure across runs.
func figureKey(f Figure) string { return f.Name + "\x00" + f.Variant }

func compareReports(w io.Writer, old, cur *Report, oldName, newName string) {
	fmt.Fprintf(w, "# kvsimd benchmark comparison\n\nold: %s (%s, %s)  \nnew: %s (%s, %s)\n\n",
		oldName, old.Time.Format("2006-01-02 15:04"), orDash(old.Machine.CPU),
		newName, cur.Time.Format("2006-01-02 15:04"), orDash(cur.Machine.CPU))
	if old.Machine.CPU != cur.Machine.CPU {
		fmt.Fprintf(w, "**The CPUs differ**: ratios compare machines as much as code.\n\n")
	}
	fmt.Fprintf(w, "new/old below 1 means the new run is faster. ± is each run's (max − min) / median.\n\n")
	fmt.Fprintf(w, "| kernel | variant | old time | ± | new time | ± | new/old | |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n")
	oldFigs := map[string]Figure{}
	for _, f := range old.Figures {
		oldFigs[figureKey(f)] = f
	}
	logSum, count := map[string]float64{}, map[string]int{}
	var variants []string
	var onlyNew []string
	seen := map[string]bool{}
	for _, f := range cur.Figures {
		o, ok := oldFigs[figureKey(f)]
		if !ok {
			onlyNew = append(onlyNew, f.Name+" · "+f.Variant)
			continue
		}
		seen[figureKey(f)] = true
		ratio := f.NsPerOp.Median / o.NsPerOp.Median
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", f.Name, f.Variant,
			timeText(o.NsPerOp.Median), pct(100*o.NsPerOp.Spread()),
			timeText(f.NsPerOp.Median), pct(100*f.NsPerOp.Spread()), num(ratio), verdict(ratio, o, f))
		if count[f.Variant] == 0 {
			variants = append(variants, f.Variant)
		}
		logSum[f.Variant] += math.Log(ratio)
		count[f.Variant]++
	}
	if len(variants) > 0 {
		fmt.Fprintf(w, "\n| variant | figures | geometric mean new/old |\n| --- | ---: | ---: |\n")
		for _, v := range variants {
			fmt.Fprintf(w, "| %s | %d | %s |\n", v, count[v], num(math.Exp(logSum[v]/float64(count[v]))))
		}
	}
	oldLimits := map[string]Limit{}
	for _, l := range old.Limits {
		oldLimits[l.Name] = l
	}
	fmt.Fprintf(w, "\n| limit | old | new | new/old |\n| --- | ---: | ---: | ---: |\n")
	for _, l := range cur.Limits {
		if o, ok := oldLimits[l.Name]; ok {
			fmt.Fprintf(w, "| %s | %s %s | %s %s | %s |\n", l.Name, num(o.Value.Max), o.Unit, num(l.Value.Max), l.Unit, num(l.Value.Max/o.Value.Max))
		}
	}
	var onlyOld []string
	for _, f := range old.Figures {
		if !seen[figureKey(f)] {
			onlyOld = append(onlyOld, f.Name+" · "+f.Variant)
		}
	}
	for _, l := range []struct {
		what  string
		names []string
	}{{"only in old", onlyOld}, {"only in new", onlyNew}} {
		if len(l.names) > 0 {
			fmt.Fprintf(w, "\n%s: ", l.what)
			for i, n := range l.names {
				if i > 0 {
					fmt.Fprint(w, "; ")
				}
				fmt.Fprint(w, n)
			}
			fmt.Fprintln(w)
		}
	}
}

// verdict calls a ratio faster or slower only when the runs' ranges do not overlap.
func verdict(ratio float64, old, cur Figure) string {
	switch {
	case cur.NsPerOp.Max < old.NsPerOp.Min:
		return "faster"
	case cur.NsPerOp.Min > old.NsPerOp.Max:
		return "slower"
	default:
		return "~"
	}
}
