package llama

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// safetensorsFile builds a file from a header and float32 data.
func safetensorsFile(t *testing.T, header map[string]any, data []float32) []byte {
	t.Helper()
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	b = append(b, h...)
	for _, f := range data {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

func TestParseSafetensors(t *testing.T) {
	data := []float32{1, -2, 3.5, 0, 5, 6}
	good := safetensorsFile(t, map[string]any{
		"__metadata__": map[string]string{"k": "v"},
		"a":            map[string]any{"dtype": "F32", "shape": []int{2, 2}, "data_offsets": []int{0, 16}},
		"b":            map[string]any{"dtype": "F32", "shape": []int{2}, "data_offsets": []int{16, 24}},
	}, data)
	ts, err := parseSafetensors(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || !slices.Equal(ts["a"].data, data[:4]) || !slices.Equal(ts["a"].shape, []int{2, 2}) || !slices.Equal(ts["b"].data, data[4:]) {
		t.Fatalf("parsed %v", ts)
	}

	for _, c := range []struct {
		name string
		file []byte
		want string
	}{
		{"no length", good[:7], "no header length"},
		{"length past the end", binary.LittleEndian.AppendUint64(nil, 1<<40), "exceeds the file"},
		{"bad json", append(binary.LittleEndian.AppendUint64(nil, 2), "{x"...), "header"},
		{"dtype", safetensorsFile(t, map[string]any{"a": map[string]any{"dtype": "F16", "shape": []int{2}, "data_offsets": []int{0, 4}}}, data[:1]), "dtype"},
		{"size", safetensorsFile(t, map[string]any{"a": map[string]any{"dtype": "F32", "shape": []int{3}, "data_offsets": []int{0, 8}}}, data[:2]), "do not hold"},
		{"past data", safetensorsFile(t, map[string]any{"a": map[string]any{"dtype": "F32", "shape": []int{4}, "data_offsets": []int{0, 16}}}, data[:2]), "do not hold"},
		{"reversed", safetensorsFile(t, map[string]any{"a": map[string]any{"dtype": "F32", "shape": []int{0}, "data_offsets": []int{8, 4}}}, data[:2]), "do not hold"},
		{"negative shape", safetensorsFile(t, map[string]any{"a": map[string]any{"dtype": "F32", "shape": []int{-1}, "data_offsets": []int{0, 4}}}, data[:1]), "shape"},
	} {
		if _, err := parseSafetensors(c.file); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}

func TestApportion(t *testing.T) {
	for _, c := range []struct {
		n       int
		weights []float64
		want    []int
	}{
		{10, []float64{1, 1}, []int{5, 5}},
		{10, []float64{1, 1, 1}, []int{4, 3, 3}},
		{7, []float64{5, 1, 1}, []int{5, 1, 1}},
		{36, []float64{100, 200, 300}, []int{6, 12, 18}},
	} {
		if got := apportion(c.n, c.weights); !slices.Equal(got, c.want) {
			t.Errorf("apportion(%d, %v) = %v, want %v", c.n, c.weights, got, c.want)
		}
	}
}

func TestLayerBudgets(t *testing.T) {
	// Layer 0 attends to one row, layer 1 evenly to five, layer 2 evenly to all 40.
	candidates := [][]float32{make([]float32, 40), make([]float32, 40), make([]float32, 40)}
	candidates[0][7] = 1
	for i := range 5 {
		candidates[1][8*i] = 0.2
	}
	for i := range candidates[2] {
		candidates[2][i] = 1.0 / 40
	}
	for _, s := range []Schedule{Entropy, AdaptiveLayers} {
		got, err := layerBudgets(s, 30, 3, 20, candidates)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		for _, b := range got {
			sum += b
			if b < 20 {
				t.Errorf("schedule %d: budgets %v: a layer lost its sinks or window", s, got)
			}
		}
		if sum != 90 {
			t.Errorf("schedule %d: budgets %v sum to %d, want 90", s, got, sum)
		}
		t.Logf("schedule %d: %v", s, got)
	}
	// exp(entropy) is 1, 5 and 40 rows: the 30 spare rows go 30·(1, 5, 40)/46 =
	// (0.65, 3.26, 26.09), rounded by largest remainder.
	if got, _ := layerBudgets(Entropy, 30, 3, 20, candidates); !slices.Equal(got, []int{21, 23, 46}) {
		t.Errorf("Entropy budgets %v, want [21 23 46]", got)
	}
	// A floor of 2 spare rows each (0.2·10) takes layer 0's 1 and a 0, and two of layer
	// 1's 0.2s; the other 24 go to the largest votes left: layer 1's three 0.2s, then 21
	// of layer 2's 1/40s.
	if got, _ := layerBudgets(AdaptiveLayers, 30, 3, 20, candidates); !slices.Equal(got, []int{22, 25, 43}) {
		t.Errorf("AdaptiveLayers budgets %v, want [22 25 43]", got)
	}
	if _, err := layerBudgets(Entropy, 20, 3, 20, candidates); err == nil {
		t.Error("a budget the sinks and window fill: no error")
	}
}

func TestSinksRecent(t *testing.T) {
	if got := sinksRecent(10, 6, 2); !slices.Equal(got, []int32{0, 1, 6, 7, 8, 9}) {
		t.Errorf("sinksRecent(10, 6, 2) = %v", got)
	}
	if got := sinksRecent(4, 6, 2); !slices.Equal(got, []int32{0, 1, 2, 3}) {
		t.Errorf("sinksRecent(4, 6, 2) = %v", got)
	}
}

func TestKeyDigitsKept(t *testing.T) {
	p := Prompt{KeySpans: [][2]int{{2, 4}, {10, 13}}}
	if got := keyDigitsKept(p, []int32{0, 3, 10, 11, 12, 20}); got != 4.0/5 {
		t.Errorf("keyDigitsKept = %v, want 0.8", got)
	}
}

func TestSymmetricDifference(t *testing.T) {
	if got := symmetricDifference([]int32{1, 2, 5, 9}, []int32{2, 3, 9, 10, 11}); got != 5 {
		t.Errorf("symmetricDifference = %d, want 5", got)
	}
}
