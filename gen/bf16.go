package gen

//go:generate go run ./amd64/bf16 -out ../asm/bf16_amd64.s -stubs ../asm/bf16_amd64.go -pkg asm
//go:generate go run ./arm64/bf16 -out ../asm/bf16_arm64.s -stubs ../asm/bf16_arm64.go
