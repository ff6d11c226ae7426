//go:build (amd64 || arm64) && !purego && !noasm

package kernels

// poolWith runs a SIMD variant's valid pooling on the interior, where the window lies
// inside src, and the generic edges on the first and last kernel/2 outputs.
func poolWith(dst, src []float32, kernel int, edges func(dst, src []float32, kernel, lo, hi int), valid func(dst, src []float32)) {
	p := kernel / 2
	if len(src) < kernel {
		edges(dst, src, kernel, 0, len(dst))
		return
	}
	edges(dst, src, kernel, 0, p)
	edges(dst, src, kernel, len(dst)-p, len(dst))
	valid(dst[p:len(dst)-p], src)
}
