package gen

//go:generate go run ./amd64/gemm -out ../asm/gemm_amd64.s -stubs ../asm/gemm_amd64.go -pkg asm
