// Package fuzz holds the fuzz targets of kvsimd: each feeds arbitrary bytes to every
// variant this CPU runs and compares the result with the generic reference (or, for
// fp16, with x448/float16 itself). Their seed corpora live in testdata/fuzz, so plain
// `go test ./fuzz` replays them; `go test -fuzz=FuzzName ./fuzz` explores further.
package fuzz
