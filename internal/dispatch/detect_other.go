//go:build !(amd64 || arm64) || purego || noasm

package dispatch

func detect() []string { return nil }

// neonNumber is neon's number, which this build cannot run.
func neonNumber() Variant { return NEON }
