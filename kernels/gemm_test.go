package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kvsimd/kvsimd/internal/longtest"
	"github.com/kvsimd/kvsimd/internal/varianttest"
)

// TestGemmAdd holds the causal attention's float32 products (the variants that have
// them) to a float64 reference, over every row tail of its tiles, one- and two-vector
// column blocks, k from 0, and strides with NaN between the rows, which it must
// neither read nor write; and each entry to the same bits whatever rows and columns
// share its call (the chain over p is the entry's own); and GemmScaled to the bits of
// GemmAdd into zeros times its scale, with nothing written outside the matrix.
func TestGemmAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(46, 1))
	ms := []int{0, 1, 2, 5, 6, 7, 11, 12, 13, 25, 64}
	ns := []int{0, 16, 32, 48, 80, 128}
	ks := []int{0, 1, 3, 16, 129}
	if longtest.Short() {
		ms, ns, ks = []int{1, 7, 13}, []int{16, 48}, []int{0, 5}
	}
	varianttest.Each(t, func(variant string) {
		gemm := gemmAdd.Call
		if gemm == nil { // the causal attention runs on Scores there
			return
		}
		for _, m := range ms {
			for _, n := range ns {
				for _, k := range ks {
					lda, ldb, ldc := k+r.IntN(3), n+r.IntN(3), n+1+r.IntN(20)
					a, b, c := nanFilled(max(0, (m-1)*lda+k)), nanFilled(max(0, (k-1)*ldb+n)), nanFilled(max(0, (m-1)*ldc+n)+5)
					for i := range m {
						normals(r, a[i*lda:i*lda+k], 1)
						normals(r, c[i*ldc:i*ldc+n], 1)
					}
					for p := range k {
						normals(r, b[p*ldb:p*ldb+n], 1)
					}
					c0 := append([]float32(nil), c...)
					gemm(c, a, b, m, n, k, lda, ldb, ldc)
					for e, x := range c {
						i, j := e/ldc, e%ldc
						if i >= m || j >= n {
							if !sameFloatBits(x, c0[e]) {
								t.Fatalf("%s m=%d n=%d k=%d: wrote c[%d] outside the matrix", variant, m, n, k, e)
							}
							continue
						}
						want, mag := float64(c0[e]), math.Abs(float64(c0[e]))
						for p := range k {
							ab := float64(a[i*lda+p]) * float64(b[p*ldb+j])
							want += ab
							mag += math.Abs(ab)
						}
						if bound := float64(k+1) * 0x1p-24 * mag; !(math.Abs(float64(x)-want) <= bound) {
							t.Fatalf("%s m=%d n=%d k=%d: c[%d][%d] = %v, want %v within %g", variant, m, n, k, i, j, x, want, bound)
						}
					}
					// GemmScaled: the bits of GemmAdd into zeros, times s.
					const s = 0.3
					zeros, scaled := append([]float32(nil), c0...), append([]float32(nil), c0...)
					for i := range m {
						clear(zeros[i*ldc : i*ldc+n])
					}
					gemm(zeros, a, b, m, n, k, lda, ldb, ldc)
					gemmScaled.Call(scaled, a, b, m, n, k, lda, ldb, ldc, s)
					for e, x := range scaled {
						want := c0[e]
						if i, j := e/ldc, e%ldc; i < m && j < n {
							want = zeros[e] * s
						}
						if !sameFloatBits(x, want) {
							t.Fatalf("%s m=%d n=%d k=%d: GemmScaled c[%d] = %v, want %v", variant, m, n, k, e, x, want)
						}
					}
					if m < 2 || n < 32 || k == 0 {
						continue
					}
					// The rows from 1 and the columns from 16 on, alone: the same bits.
					part := append([]float32(nil), c0...)
					gemm(part[ldc+16:], a[lda:], b[16:], m-1, n-16, k, lda, ldb, ldc)
					for i := 1; i < m; i++ {
						for j := 16; j < n; j++ {
							if e := i*ldc + j; !sameFloatBits(part[e], c[e]) {
								t.Fatalf("%s m=%d n=%d k=%d: c[%d][%d] = %v alone, %v in the whole call", variant, m, n, k, i, j, part[e], c[e])
							}
						}
					}
				}
			}
		}
	})
}

func nanFilled(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = nan32
	}
	return x
}
