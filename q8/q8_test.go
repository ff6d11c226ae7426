package q8

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/kvsimd/kvsimd/internal/varianttest"
	"github.com/x448/float16"
)

func TestLayout(t *testing.T) {
	var b Block
	if s := unsafe.Sizeof(b); s != 34 {
		t.Fatalf("sizeof(Block) = %d, want 34", s)
	}
	if o := unsafe.Offsetof(b.D); o != 0 {
		t.Errorf("offsetof(D) = %d, want 0", o)
	}
	if o := unsafe.Offsetof(b.Q); o != 2 {
		t.Errorf("offsetof(Q) = %d, want 2", o)
	}
	if a := unsafe.Alignof(b); a != 2 {
		t.Errorf("alignof(Block) = %d, want 2", a)
	}
	// Two blocks in ggml's layout: d, then qs. d is in the machine's byte order (the
	// package doc): ggml's little-endian one on every little-endian GOARCH.
	raw := make([]byte, 2*34)
	binary.NativeEndian.PutUint16(raw, 0x3c00)      // 1.0
	binary.NativeEndian.PutUint16(raw[34:], 0xc000) // −2.0
	for j := 0; j < 32; j++ {
		raw[2+j] = byte(j - 16)
		raw[36+j] = byte(127 - j)
	}
	blocks := FromBytes(raw)
	if len(blocks) != 2 {
		t.Fatalf("FromBytes: %d blocks, want 2", len(blocks))
	}
	if blocks[0].D != 0x3c00 || blocks[1].D != 0xc000 {
		t.Errorf("D = %#04x, %#04x, want 0x3c00, 0xc000", uint16(blocks[0].D), uint16(blocks[1].D))
	}
	for j := 0; j < 32; j++ {
		if blocks[0].Q[j] != int8(j-16) || blocks[1].Q[j] != int8(127-j) {
			t.Fatalf("Q[%d] = %d, %d, want %d, %d", j, blocks[0].Q[j], blocks[1].Q[j], j-16, 127-j)
		}
	}
	if &Bytes(blocks)[0] != &raw[0] || len(Bytes(blocks)) != len(raw) {
		t.Error("Bytes does not view the blocks' own memory")
	}
	dst := make([]float32, 64)
	Dequantize(dst, blocks)
	if dst[0] != -16 || dst[31] != 15 || dst[32] != -254 || dst[63] != -192 {
		t.Errorf("Dequantize of the ggml bytes: %v", dst)
	}
}

func TestGGMLHalfRoundingIsNearestEven(t *testing.T) {
	// ggml's GGML_FP32_TO_FP16 agrees with x448 (round to nearest even, subnormal
	// halves kept, overflow to Inf) on every non-NaN input: all half boundaries and
	// ties, and random bit patterns; NaN gives 0x7e00.
	check := func(f float32) {
		got, want := ggmlFP32ToFP16(f), uint16(float16.Fromfloat32(f))
		if f != f {
			want = uint16(math.Float32bits(f)>>16)&0x8000 | 0x7e00
		}
		if got != want {
			t.Fatalf("GGML_FP32_TO_FP16(%#08x) = %#04x, want %#04x", math.Float32bits(f), got, want)
		}
	}
	for h := uint16(0); h < 0x7c00; h++ {
		lo := float64(float16.Frombits(h).Float32())
		hi := 65536.0
		if h < 0x7bff {
			hi = float64(float16.Frombits(h + 1).Float32())
		}
		mid := float32((lo + hi) / 2)
		for _, f := range []float32{float32(lo), mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, math.MaxFloat32)} {
			check(f)
			check(-f)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		check(math.Float32frombits(r.Uint32()))
	}
	for _, u := range []uint32{0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffffffff, 0x33000000, 0x33000001, 0x477fefff, 0x477ff000} {
		check(math.Float32frombits(u))
	}
}

var (
	nan    = float32(math.NaN())
	posInf = float32(math.Inf(1))
	negInf = float32(math.Inf(-1))
)

// testBlocks returns named blocks of 32 values: every class the package doc names.
func testBlocks() map[string][]float32 {
	r := rand.New(rand.NewPCG(3, 4))
	bs := map[string][]float32{}
	fill := func(f func(j int) float32) []float32 {
		x := make([]float32, 32)
		for j := range x {
			x[j] = f(j)
		}
		return x
	}
	bs["zeros"] = fill(func(int) float32 { return 0 })
	bs["negative zeros"] = fill(func(int) float32 { return float32(math.Copysign(0, -1)) })
	for _, k := range []int{0, 5, 31} {
		for _, v := range []float32{1, -3e-3, 1e30, -1e-40, math.SmallestNonzeroFloat32, math.MaxFloat32} {
			bs[fmt.Sprintf("single %g at %d", v, k)] = fill(func(j int) float32 {
				if j == k {
					return v
				}
				return 0
			})
		}
	}
	// Random blocks at every scale from float32 subnormals to near MaxFloat32.
	for e := -149; e <= 127; e += 3 {
		scale := float32(math.Ldexp(1, e))
		bs[fmt.Sprintf("gauss 2^%d", e)] = fill(func(int) float32 { return float32(r.NormFloat64()) * scale })
		bs[fmt.Sprintf("uniform 2^%d", e)] = fill(func(int) float32 { return (2*r.Float32() - 1) * scale })
	}
	bs["near max"] = fill(func(j int) float32 { return math.MaxFloat32 * (1 - float32(j)/64) * float32(1-2*(j&1)) })
	bs["d overflows half"] = fill(func(j int) float32 { return 8321040 * float32(j-15) / 16 })
	bs["d just below half overflow"] = fill(func(j int) float32 { return 8321039 * float32(j-16) / 16 })
	// Exact ties: amax = 127·2^e makes d = 2^e and id = 2^−e, so x = (k+½)·2^e gives
	// y = k+½; and the floats either side of each tie.
	for _, e := range []int{-20, -1, 0, 3, 40} {
		s := math.Ldexp(1, e)
		bs[fmt.Sprintf("ties 2^%d", e)] = fill(func(j int) float32 {
			if j == 0 {
				return float32(127 * s)
			}
			k := float64(j*8%127) - 63
			return float32((k + 0.5) * s)
		})
		bs[fmt.Sprintf("negative ties 2^%d", e)] = fill(func(j int) float32 {
			if j == 31 {
				return float32(-127 * s)
			}
			return float32(-(float64(j*4) + 0.5) * s)
		})
		for _, dir := range []float32{0, math.MaxFloat32} {
			bs[fmt.Sprintf("near ties 2^%d toward %g", e, dir)] = fill(func(j int) float32 {
				if j == 7 {
					return float32(127 * s)
				}
				k := float64(j*4) - 63
				return math.Nextafter32(float32((k+0.5)*s), dir)
			})
		}
	}
	bs["just below a half"] = fill(func(j int) float32 {
		switch j {
		case 0:
			return 127
		case 1:
			return 0.49999997
		case 2:
			return -0.49999997
		case 3:
			return 0.5
		case 4:
			return -0.5
		}
		return 1.5 + float32(j)
	})
	bs["±127"] = fill(func(j int) float32 { return float32(127 * (1 - 2*(j&1))) })
	bs["±amax"] = fill(func(j int) float32 { return float32(0.3 * float64(1-2*(j&1))) })
	// Non-finite values: NaNs (with payloads, signs) and infinities at every position
	// class, alone and together.
	qnanPayload := math.Float32frombits(0x7fc12345)
	snan := math.Float32frombits(0xff800001)
	for _, k := range []int{0, 1, 7, 8, 15, 16, 30, 31} {
		for name, v := range map[string]float32{"NaN": nan, "payload NaN": qnanPayload, "sNaN": snan, "+Inf": posInf, "-Inf": negInf} {
			bs[fmt.Sprintf("%s at %d", name, k)] = fill(func(j int) float32 {
				if j == k {
					return v
				}
				return float32(r.NormFloat64()) * 10
			})
		}
	}
	bs["NaN, then larger before it"] = fill(func(j int) float32 {
		switch {
		case j < 10:
			return 1000 + float32(j)*1e5 // exceed the amax after the NaN: quants wrap
		case j == 10:
			return nan
		}
		return float32(j) / 31
	})
	bs["NaN, then huge before it"] = fill(func(j int) float32 {
		switch {
		case j < 3:
			return 3e38
		case j == 3:
			return nan
		}
		return 1e-3
	})
	bs["all NaN"] = fill(func(int) float32 { return nan })
	bs["Inf and NaN"] = fill(func(j int) float32 { return []float32{posInf, nan, negInf, 1}[j%4] })
	bs["NaN then Inf"] = fill(func(j int) float32 { return []float32{1, nan, 2, negInf}[j%4] })
	return bs
}

func sameBlock(a, b Block) bool { return a == b }

func TestQuantizeBlocks(t *testing.T) {
	bs := testBlocks()
	varianttest.Run(t, func(t *testing.T, v string) {
		for name, x := range bs {
			want := refBlock(x)
			got := make([]Block, 1)
			Quantize(got, x)
			if !sameBlock(got[0], want) {
				t.Errorf("%s: %s:\n x   %v\n got  D %#04x Q %v\n want D %#04x Q %v", v, name, x, uint16(got[0].D), got[0].Q, uint16(want.D), want.Q)
			}
		}
	})
}

// randomRow returns n blocks' worth of values whose blocks mix the classes above.
func randomRow(r *rand.Rand, blocks int) []float32 {
	bs := testBlocks()
	names := make([]string, 0, len(bs))
	for n := range bs {
		names = append(names, n)
	}
	x := make([]float32, 0, 32*blocks)
	for range blocks {
		if r.IntN(2) == 0 {
			x = append(x, bs[names[r.IntN(len(names))]]...)
			continue
		}
		s := float32(math.Ldexp(1, r.IntN(80)-40))
		for range 32 {
			x = append(x, float32(r.NormFloat64())*s)
		}
	}
	return x
}

const guard = 3

func TestQuantizeRows(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	varianttest.Run(t, func(t *testing.T, v string) {
		for n := 0; n <= 20; n++ {
			for off := 0; off < 4; off++ {
				buf := make([]float32, 32*n+off)
				copy(buf[off:], randomRow(r, n))
				src := buf[off:] // unaligned for off > 0
				want := refQuantize(src)
				all := make([]Block, n+2*guard)
				for i := range all {
					for j := range all[i].Q {
						all[i].Q[j] = int8(0x5a + i + j)
					}
					all[i].D = float16.Float16(0xa5a5 + i)
				}
				sentinel := append([]Block(nil), all...)
				Quantize(all[guard:guard+n], src)
				for i := range all {
					switch {
					case i < guard || i >= guard+n:
						if all[i] != sentinel[i] {
							t.Fatalf("%s: n=%d off=%d: guard block %d overwritten", v, n, off, i)
						}
					case all[i] != want[i-guard]:
						t.Fatalf("%s: n=%d off=%d: block %d: got D %#04x Q %v, want D %#04x Q %v", v, n, off, i-guard,
							uint16(all[i].D), all[i].Q, uint16(want[i-guard].D), want[i-guard].Q)
					}
				}
			}
		}
	})
}

func TestQuantizeRandomBits(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	n := 4096
	if testing.Short() {
		n = 256
	}
	src := make([]float32, 32*n)
	for i := range src {
		src[i] = math.Float32frombits(r.Uint32())
		if r.IntN(4) != 0 { // mostly finite, so that blocks without NaN occur
			src[i] = float32(r.NormFloat64()) * float32(math.Ldexp(1, r.IntN(60)-30))
		}
	}
	want := refQuantize(src)
	varianttest.Run(t, func(t *testing.T, v string) {
		got := make([]Block, n)
		Quantize(got, src)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: block %d %v: got D %#04x Q %v, want D %#04x Q %v", v, i, src[32*i:32*i+32], uint16(got[i].D), got[i].Q, uint16(want[i].D), want[i].Q)
			}
		}
	})
}

func TestDequantizeAll(t *testing.T) {
	// Every D with every q: 8 blocks per D hold the 256 quants.
	ds := 1 << 16
	if testing.Short() {
		ds = 1 << 12 // every 16th D, all classes still
	}
	src := make([]Block, 0, 8*ds)
	for i := range ds {
		d := uint16(i)
		if ds < 1<<16 {
			d = uint16(i * 16)
			if i%4 == 1 {
				d = uint16(i*16 + 15)
			}
		}
		for k := range 8 {
			var b Block
			b.D = float16.Frombits(d)
			for j := range b.Q {
				b.Q[j] = int8(32*k + j)
			}
			src = append(src, b)
		}
	}
	dst := make([]float32, 32*len(src))
	varianttest.Run(t, func(t *testing.T, v string) {
		clear(dst)
		Dequantize(dst, src)
		for i, b := range src {
			d := b.D.Float32()
			for j, q := range b.Q {
				got := dst[32*i+j]
				want := float32(q) * d // the CPU's own product, also for NaN and Inf
				if math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("%s: D %#04x · q %d = %#08x, want %#08x", v, uint16(b.D), q, math.Float32bits(got), math.Float32bits(want))
				}
				if exact := float64(q) * float64(d); !math.IsNaN(exact) && float64(got) != exact {
					t.Fatalf("%s: D %#04x · q %d = %g, exact %g", v, uint16(b.D), q, got, exact)
				}
			}
		}
	})
}

func TestDequantizeRows(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	varianttest.Run(t, func(t *testing.T, v string) {
		for n := 0; n <= 20; n++ {
			src := make([]Block, n)
			for i := range src {
				src[i].D = float16.Frombits(uint16(r.Uint32()))
				for j := range src[i].Q {
					src[i].Q[j] = int8(r.Uint32())
				}
			}
			for off := 0; off < 4; off++ {
				buf := make([]float32, 32*n+off+2*guard)
				for i := range buf {
					buf[i] = -7
				}
				Dequantize(buf[guard+off:guard+off+32*n], src)
				for i, got := range buf {
					k := i - guard - off
					if k < 0 || k >= 32*n {
						if got != -7 {
							t.Fatalf("%s: n=%d off=%d: guard %d overwritten", v, n, off, i)
						}
						continue
					}
					b := src[k/32]
					if want := float32(b.Q[k%32]) * b.D.Float32(); math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("%s: n=%d off=%d: value %d = %g, want %g", v, n, off, k, got, want)
					}
				}
			}
		}
	})
}

func TestRoundTrip(t *testing.T) {
	// Dequantize∘Quantize is within half a quantization step of the input. The step is
	// d = amax/127 in float32, but values are rebuilt with D, d rounded to half, so the
	// bound adds |q|·|d − D| ≤ 127·|d − D|, and a few float32 ulps of the product x·id.
	r := rand.New(rand.NewPCG(11, 12))
	for _, e := range []int{-14, -3, 0, 5, 15} {
		n := 64
		src := make([]float32, 32*n)
		for i := range src {
			src[i] = float32(r.NormFloat64() * math.Ldexp(1, e))
		}
		varianttest.Run(t, func(t *testing.T, v string) {
			blocks := make([]Block, n)
			Quantize(blocks, src)
			back := make([]float32, len(src))
			Dequantize(back, blocks)
			for i := range n {
				x := src[32*i : 32*i+32]
				amax := float32(0)
				for _, xv := range x {
					amax = max(amax, fabsf(xv))
				}
				d := float64(amax / 127)
				D := float64(blocks[i].D.Float32())
				bound := d/2 + 127*math.Abs(d-D) + 4*d*math.Ldexp(1, -23)
				for j, xv := range x {
					if err := math.Abs(float64(back[32*i+j]) - float64(xv)); err > bound {
						t.Fatalf("%s: 2^%d: block %d value %d: %g came back as %g, error %g > %g", v, e, i, j, xv, back[32*i+j], err, bound)
					}
				}
			}
		})
	}
}

func TestLengthPanics(t *testing.T) {
	for _, f := range []func(){
		func() { Quantize(make([]Block, 1), make([]float32, 31)) },
		func() { Quantize(make([]Block, 1), make([]float32, 33)) },
		func() { Quantize(nil, make([]float32, 1)) },
		func() { Dequantize(make([]float32, 31), make([]Block, 1)) },
		func() { Dequantize(make([]float32, 1), nil) },
		func() { FromBytes(make([]byte, 35)) },
		func() { FromBytes(make([]byte, 36)[1:35]) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		}()
	}
	Quantize(nil, nil)
	Dequantize(nil, nil)
}

// TestReferenceKnownValues pins the oracle itself to values worked out by hand.
func TestReferenceKnownValues(t *testing.T) {
	block := func(vs ...float32) []float32 {
		x := make([]float32, 32)
		copy(x, vs)
		return x
	}
	for _, c := range []struct {
		name string
		x    []float32
		d    uint16
		q    []int8 // the first quants; the rest are 0
	}{
		{"ties away from zero", block(127, 0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -126.5), 0x3c00, []int8{127, 1, 2, 3, -1, -3, 0, -127}},
		{"all NaN", block(nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan), 0x7e00, nil},
		{"last NaN", func() []float32 { x := block(1, 2, 3); x[31] = nan; return x }(), 0x7e00, []int8{0, 0, 0}},
		// amax = 1 after the NaN; 1000·(1/(1/127)) = 127000, whose low byte is 24.
		{"wrap before a NaN", block(1000, nan, 1, -1), 0x2008, []int8{24, 0, 127, -127}},
		{"+Inf", block(1, posInf, -3), 0x7c00, []int8{0, 0, 0}},
		{"Inf then NaN then 2", block(negInf, nan, 2, -1), 0x2408, []int8{0, 0, 127, -64}},
		{"id overflows", block(1e-40, 0, -1e-40), 0, []int8{0, 0, 0}},
		{"d overflows half", block(1e7, -5e6), 0x7c00, []int8{127, -64}},
	} {
		got := refBlock(c.x)
		var want Block
		want.D = float16.Frombits(c.d)
		copy(want.Q[:], c.q)
		if got != want {
			t.Errorf("%s: reference gives D %#04x Q %v, want D %#04x Q %v", c.name, uint16(got.D), got.Q, c.d, want.Q)
		}
	}
}
