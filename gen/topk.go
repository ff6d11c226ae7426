package gen

//go:generate go run ./amd64/topk -out ../asm/topk_amd64.s -stubs ../asm/topk_amd64.go -pkg asm
//go:generate go run ./arm64/topk -out ../asm/topk_arm64.s -stubs ../asm/topk_arm64.go
