package q8_test

import (
	"fmt"

	"github.com/kvsimd/kvsimd/q8"
)

// An engine that keeps a ggml-format q8_0 buffer views it as blocks, without copying,
// and quantizes new rows straight into it.
func ExampleFromBytes() {
	buf := make([]byte, 2*q8.BlockSize) // two block_q8_0, as ggml lays them out
	blocks := q8.FromBytes(buf)

	row := make([]float32, 2*q8.BlockLen)
	for i := range row {
		row[i] = float32(i%q8.BlockLen-16) / 4 // −4 … 3.75 in each block
	}
	q8.Quantize(blocks, row)
	// buf holds d (2 bytes, the machine's order), then the 32 quants, a byte each.
	fmt.Printf("d = %#04x (%v), q[0] = %d, quant bytes %x…\n", uint16(blocks[0].D), blocks[0].D.Float32(), blocks[0].Q[0], buf[2:4])

	back := make([]float32, len(row))
	q8.Dequantize(back, blocks)
	fmt.Printf("%.4f %.4f\n", back[0], back[33])
	// Output:
	// d = 0x2808 (0.03149414), q[0] = -127, quant bytes 8189…
	// -3.9998 -3.7478
}
