module github.com/kvsimd/kvsimd/bench/peers

go 1.26

require (
	github.com/viterin/partial v1.1.0
	github.com/viterin/vek v0.4.3
	github.com/x448/float16 v0.8.4
	gonum.org/v1/gonum v0.17.0
)

require (
	github.com/chewxy/math32 v1.10.1 // indirect
	golang.org/x/exp v0.0.0-20230817173708-d852ddb80c63 // indirect
	golang.org/x/sys v0.11.0 // indirect
)
