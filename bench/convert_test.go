package main

import "testing"

func BenchmarkToFloat32(b *testing.B)   { eachVariant(b, convertSizes, benchToFloat32) }
func BenchmarkFromFloat32(b *testing.B) { eachVariant(b, convertSizes, benchFromFloat32) }
