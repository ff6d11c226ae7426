package main

import "testing"

func BenchmarkSoftmax(b *testing.B)        { eachVariant(b, softmaxSizes, benchSoftmax) }
func BenchmarkAddSoftmax(b *testing.B)     { eachVariant(b, softmaxSizes, benchAddSoftmax) }
func BenchmarkSoftmaxThenAdd(b *testing.B) { eachVariant(b, softmaxSizes, benchSoftmaxThenAdd) }
func BenchmarkMax(b *testing.B)            { eachVariant(b, softmaxSizes, benchMax) }
func BenchmarkSum(b *testing.B)            { eachVariant(b, softmaxSizes, benchSum) }
func BenchmarkAdd(b *testing.B)            { eachVariant(b, softmaxSizes, benchAdd) }

func BenchmarkAvgPool1DK5(b *testing.B) {
	eachVariant(b, poolSizes, func(b *testing.B, n int) { benchAvgPool1D(b, n, 5) })
}

func BenchmarkAvgPool1DK7(b *testing.B) {
	eachVariant(b, poolSizes, func(b *testing.B, n int) { benchAvgPool1D(b, n, 7) })
}

func BenchmarkMaxPool1DK5(b *testing.B) {
	eachVariant(b, poolSizes, func(b *testing.B, n int) { benchMaxPool1D(b, n, 5) })
}

func BenchmarkMaxPool1DK7(b *testing.B) {
	eachVariant(b, poolSizes, func(b *testing.B, n int) { benchMaxPool1D(b, n, 7) })
}
