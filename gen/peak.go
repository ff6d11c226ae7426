package gen

//go:generate go run ./amd64/peak -out ../bench/peak_amd64.s -stubs ../bench/peak_stubs_amd64.go -pkg main
