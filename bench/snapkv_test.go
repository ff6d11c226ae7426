package main

import "testing"

// BenchmarkSnapKVScores and BenchmarkSnapKVSelect* run at the same shapes in one
// process; the target is Select ≤ 1.3× Scores.
func BenchmarkSnapKVScores(b *testing.B) { eachVariant(b, snapkvLens, benchLayerScores) }

func BenchmarkSnapKVSelectC1024(b *testing.B) {
	eachVariant(b, snapkvLens, func(b *testing.B, n int) { benchLayerSelect(b, n, 1024) })
}

func BenchmarkSnapKVSelectC2048(b *testing.B) {
	eachVariant(b, snapkvLens, func(b *testing.B, n int) { benchLayerSelect(b, n, 2048) })
}

// BenchmarkSnapKVRatio times Select against its Scores calls in alternation.
func BenchmarkSnapKVRatio(b *testing.B) {
	eachVariant(b, snapkvLens, func(b *testing.B, n int) { benchLayerRatio(b, n, 1024) })
}
