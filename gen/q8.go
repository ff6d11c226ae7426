package gen

//go:generate go run ./amd64/q8 -out ../asm/q8_amd64.s -stubs ../asm/q8_amd64.go -pkg asm
//go:generate go run ./arm64/q8 -out ../asm/q8_arm64.s -stubs ../asm/q8_arm64.go
