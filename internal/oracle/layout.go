package oracle

// TokenMajor returns x, laid out [heads][n][dim] (head-major), as [n][heads][dim]
// (token-major, as most CPU engines keep a layer's cache): the one transposition the
// layout tests and benchmarks compare the two layouts through.
func TokenMajor[T any](x []T, heads, n, dim int) []T {
	out := make([]T, len(x))
	for h := range heads {
		for i := range n {
			copy(out[(i*heads+h)*dim:(i*heads+h+1)*dim], x[(h*n+i)*dim:(h*n+i+1)*dim])
		}
	}
	return out
}
