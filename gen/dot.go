package gen

//go:generate go run ./amd64/dot -out ../asm/dot_amd64.s -stubs ../asm/dot_amd64.go -pkg asm
//go:generate go run ./arm64/dot -out ../asm/dot_arm64.s -stubs ../asm/dot_arm64.go
