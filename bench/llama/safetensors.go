package llama

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// tensor is one float32 tensor of a safetensors file, row-major.
type tensor struct {
	shape []int
	data  []float32
}

// maxHeader bounds the JSON header, so a corrupt length cannot ask for gigabytes.
const maxHeader = 100 << 20

// parseSafetensors decodes a safetensors file held in memory: an unsigned 64-bit
// little-endian header length N, N bytes of JSON naming each tensor's dtype, shape and
// [begin, end) byte range after the header, then the data. Only F32 tensors are
// supported (the passkey model has no others); the "__metadata__" entry is skipped.
func parseSafetensors(b []byte) (map[string]tensor, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("safetensors: file of %d bytes has no header length", len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	if n > maxHeader || n > uint64(len(b)-8) {
		return nil, fmt.Errorf("safetensors: header length %d exceeds the file (%d bytes)", n, len(b))
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &header); err != nil {
		return nil, fmt.Errorf("safetensors: header: %w", err)
	}
	data := b[8+n:]
	out := make(map[string]tensor, len(header))
	for name, raw := range header {
		if name == "__metadata__" {
			continue
		}
		var e struct {
			Dtype   string   `json:"dtype"`
			Shape   []int    `json:"shape"`
			Offsets []uint64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, fmt.Errorf("safetensors: tensor %q: %w", name, err)
		}
		if e.Dtype != "F32" {
			return nil, fmt.Errorf("safetensors: tensor %q has dtype %q, want F32", name, e.Dtype)
		}
		count := uint64(1)
		for _, d := range e.Shape {
			if d < 0 || d > math.MaxInt32 {
				return nil, fmt.Errorf("safetensors: tensor %q has shape %v", name, e.Shape)
			}
			count *= uint64(d)
		}
		if len(e.Offsets) != 2 || e.Offsets[0] > e.Offsets[1] || e.Offsets[1] > uint64(len(data)) ||
			e.Offsets[1]-e.Offsets[0] != 4*count {
			return nil, fmt.Errorf("safetensors: tensor %q: data_offsets %v do not hold shape %v in %d data bytes",
				name, e.Offsets, e.Shape, len(data))
		}
		raw := data[e.Offsets[0]:e.Offsets[1]]
		t := tensor{shape: e.Shape, data: make([]float32, count)}
		for i := range t.data {
			t.data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		out[name] = t
	}
	return out, nil
}
