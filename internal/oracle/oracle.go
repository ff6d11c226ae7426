// Package oracle holds the float64 references that the tests of package kernels and
// the fuzz targets hold every variant to: one definition of each kernel's documented
// result and bound, so the two test suites cannot drift apart; and the layout
// transposition that tests and benchmarks compare head-major with token-major through.
// Only tests and the benchmarks import it.
package oracle
