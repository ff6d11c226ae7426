package gen

//go:generate go run ./amd64/softmax -out ../asm/softmax_amd64.s -stubs ../asm/softmax_amd64.go -pkg asm
//go:generate go run ./amd64/pool -out ../asm/pool_amd64.s -stubs ../asm/pool_amd64.go -pkg asm
//go:generate go run ./arm64/softmax -out ../asm/softmax_arm64.s -stubs ../asm/softmax_arm64.go
//go:generate go run ./arm64/pool -out ../asm/pool_arm64.s -stubs ../asm/pool_arm64.go
