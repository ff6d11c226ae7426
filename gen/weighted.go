package gen

//go:generate go run ./amd64/weighted -out ../asm/weighted_amd64.s -stubs ../asm/weighted_amd64.go -pkg asm
//go:generate go run ./arm64/weighted -out ../asm/weighted_arm64.s -stubs ../asm/weighted_arm64.go
