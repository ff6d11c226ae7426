//go:build !(amd64 || arm64) || purego || noasm

package dispatch

// asmBuild reports whether this build contains assembly.
const asmBuild = false

func detect() []string { return nil }
