package gen

//go:generate go run ./amd64/bandwidth -out ../asm/bandwidth_amd64.s -stubs ../asm/bandwidth_amd64.go -pkg asm
