// Package gen generates the assembly in ../asm, and the report's FMA-peak and
// read-bandwidth loops in ../bench. It is its own module so that importers of kvsimd
// never see avo.
//
// amd64 files are written by avo programs, one per kernel family (amd64/*); arm64 files
// by programs on our NEON encoder (arm64/*, package neon), because avo has no arm64
// backend and Go's arm64 assembler lacks FCVTL, FCVTN and most floating-point vector
// arithmetic. Run `go generate ./...` here; CI fails if that changes any file it writes.
package gen

//go:generate go run ./amd64/fp16 -out ../asm/fp16_amd64.s -stubs ../asm/fp16_amd64.go -pkg asm
//go:generate go run ./arm64/fp16 -out ../asm/fp16_arm64.s -stubs ../asm/fp16_arm64.go
