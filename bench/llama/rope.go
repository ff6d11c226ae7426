package llama

import "math"

// rope applies rotary position embeddings in the rotate-half layout (Hugging Face /
// GPT-NeoX): dimension i pairs with i + dim/2. Angles are computed in float64 and their
// cosines and sines rounded to float32, as the model's README specifies.
type rope struct {
	invFreq  []float64 // [dim/2]: 1 / theta^(2i/dim)
	cos, sin []float32 // [dim/2] of the position last set
}

func newRope(dim int, theta float64) *rope {
	r := &rope{invFreq: make([]float64, dim/2), cos: make([]float32, dim/2), sin: make([]float32, dim/2)}
	for i := range r.invFreq {
		r.invFreq[i] = 1 / math.Pow(theta, float64(2*i)/float64(dim))
	}
	return r
}

// at sets the angles of absolute position pos.
func (r *rope) at(pos int) {
	for i, f := range r.invFreq {
		s, c := math.Sincos(float64(pos) * f)
		r.cos[i], r.sin[i] = float32(c), float32(s)
	}
}

// rotate rotates each dim-element head of x in place by the angles set by at.
func (r *rope) rotate(x []float32) {
	half := len(r.cos)
	for h := 0; h < len(x); h += 2 * half {
		lo, hi := x[h:h+half], x[h+half:h+2*half]
		for i := range lo {
			a, b := lo[i], hi[i]
			lo[i] = a*r.cos[i] - b*r.sin[i]
			hi[i] = b*r.cos[i] + a*r.sin[i]
		}
	}
}
