// Package readme owns the test that keeps README.md's Go blocks compiling: it
// extracts every ```go block, wraps each in a function of its own package main beside
// testdata/free.go (the names the blocks use without declaring them, as an engine
// would have them), and builds them all with the go command, so the README cannot
// drift from the API unnoticed. It has no code of its own.
package readme
