// The names README.md's Go blocks use without declaring them, as an engine would
// have them: each block is built in a package main of its own with this file.

package main

import (
	"github.com/kvsimd/kvsimd/bf16"
	"github.com/kvsimd/kvsimd/fp16"
	"github.com/kvsimd/kvsimd/q8"
	"github.com/kvsimd/kvsimd/snapkv"
)

func main() {}

var (
	err                                 error
	cfg                                 snapkv.Config
	q, qWindow, x                       []float32      // queries, the window's queries, the hidden state
	k                                   []fp16.Float16 // a layer's keys
	kBF16                               []bf16.BFloat16
	kBlocks, vBlocks                    []q8.Block
	L, w, h, hq, hkv, d, layers, maxNew int
	engine                              model
)

// rope rotates x's heads at position pos, in place.
func rope(x []float32, pos int) {}

// model is the engine's own work around the cache.
type model struct{}

func (model) prefillLayer(l int) (q, k, v []float32)         { return }
func (model) project(l int, x []float32) (q, k, v []float32) { return }
func (model) rest(l int, out []float32) []float32            { return out }
