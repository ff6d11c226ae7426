//go:build purego || noasm || !(amd64 || arm64)

package bf16

const asmBuilt = false
