// avx2.h: what bench/cattend's AVX2 C studies share (interleave_avx2.c, layout_avx2.c):
// the shape (fp16 K and V, G = 4 query rows a KV head, dim 128, blocks of B keys, 8
// heads), the clock, fp16 loads and row prefetches, the scoring and adding steps, the exponential, the running state
// of a head's rows and the turn of a block's scores into weights, the read limit's dot
// and the FMA peak. Not part of the Go module.
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define D 128
#define B 256
#define G 4
#define HEADS 8

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + 1e-9 * t.tv_nsec;
}

static inline __m256 load8(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }

static inline void prefetchRow(const uint16_t *p) {
	const char *c = (const char *)p;
	_mm_prefetch(c, _MM_HINT_T0), _mm_prefetch(c + 64, _MM_HINT_T0);
	_mm_prefetch(c + 128, _MM_HINT_T0), _mm_prefetch(c + 192, _MM_HINT_T0);
}

// The sums of x0 … x7 in lanes 0 … 7.
static inline __m256 reduce8(__m256 x0, __m256 x1, __m256 x2, __m256 x3, __m256 x4, __m256 x5, __m256 x6, __m256 x7) {
	__m256 a0 = _mm256_hadd_ps(x0, x1), a1 = _mm256_hadd_ps(x2, x3), a2 = _mm256_hadd_ps(x4, x5), a3 = _mm256_hadd_ps(x6, x7);
	__m256 b0 = _mm256_hadd_ps(a0, a1), b1 = _mm256_hadd_ps(a2, a3);
	return _mm256_add_ps(_mm256_permute2f128_ps(b0, b1, 0x20), _mm256_permute2f128_ps(b0, b1, 0x31));
}

// s[r*B + j], s[r*B + j+1] = scale·q_r·k0, scale·q_r·k1 for the 4 rows (k0, k1: keys j,
// j+1, wherever they lie).
static inline void score2(float *s, const float *q, const uint16_t *k0, const uint16_t *k1, int j, float scale) {
	__m256 a[8];
	for (int i = 0; i < 8; i++)
		a[i] = _mm256_setzero_ps();
	for (int c = 0; c < D; c += 8) {
		__m256 x0 = load8(k0 + c), x1 = load8(k1 + c);
		for (int r = 0; r < G; r++) {
			__m256 qr = _mm256_loadu_ps(q + r * D + c);
			a[r] = _mm256_fmadd_ps(x0, qr, a[r]);
			a[4 + r] = _mm256_fmadd_ps(x1, qr, a[4 + r]);
		}
	}
	float o[8];
	_mm256_storeu_ps(o, _mm256_mul_ps(reduce8(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]), _mm256_set1_ps(scale)));
	for (int r = 0; r < G; r++)
		s[r * B + j] = o[r], s[r * B + j + 1] = o[4 + r];
}

// acc rows g, g+1, columns c … c+31 += Σ w·v over keys j0 … j1−1, whose value rows lie
// at vrow[j] where a table is given, else stride halves apart from v.
static inline void addPass(float *acc, const float *w, const uint16_t *v, size_t stride, const uint16_t *const *vrow,
                           int g, int c, int j0, int j1) {
	__m256 a[2][4];
	for (int r = 0; r < 2; r++)
		for (int x = 0; x < 4; x++)
			a[r][x] = _mm256_loadu_ps(acc + (g + r) * D + c + 8 * x);
	for (int j = j0; j < j1; j++) {
		const uint16_t *vj = (vrow ? vrow[j] : v + j * stride) + c;
		__m256 v0 = load8(vj), v1 = load8(vj + 8), v2 = load8(vj + 16), v3 = load8(vj + 24);
		for (int r = 0; r < 2; r++) {
			__m256 p = _mm256_broadcast_ss(w + (g + r) * B + j);
			a[r][0] = _mm256_fmadd_ps(p, v0, a[r][0]), a[r][1] = _mm256_fmadd_ps(p, v1, a[r][1]);
			a[r][2] = _mm256_fmadd_ps(p, v2, a[r][2]), a[r][3] = _mm256_fmadd_ps(p, v3, a[r][3]);
		}
	}
	for (int r = 0; r < 2; r++)
		for (int x = 0; x < 4; x++)
			_mm256_storeu_ps(acc + (g + r) * D + c + 8 * x, a[r][x]);
}

// exp(x) for x ≤ 0, to a few ulp (timing; cheaper than the library's).
static inline __m256 exp8(__m256 x) {
	x = _mm256_max_ps(x, _mm256_set1_ps(-87.f));
	__m256 t = _mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)), r = _mm256_round_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m256 f = _mm256_sub_ps(t, r), p = _mm256_set1_ps(1.3333558e-3f);
	p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(9.6181291e-3f));
	p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(5.5504109e-2f));
	p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(2.4022651e-1f));
	p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(6.9314718e-1f));
	p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.f));
	__m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(r), _mm256_set1_epi32(127)), 23);
	return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

struct state {
	float m[G], l[G], acc[G * D];
};

// The block's scores s into weights against each row's running maximum.
static void weights(struct state *st, float *s) {
	for (int r = 0; r < G; r++) {
		float *x = s + r * B, t[8];
		__m256 mx = _mm256_set1_ps(st->m[r]), sum = _mm256_setzero_ps();
		for (int j = 0; j < B; j += 8)
			mx = _mm256_max_ps(mx, _mm256_loadu_ps(x + j));
		_mm256_storeu_ps(t, mx);
		float top = t[0];
		for (int i = 1; i < 8; i++)
			top = fmaxf(top, t[i]);
		if (top > st->m[r]) {
			float f = expf(st->m[r] - top);
			st->l[r] *= f;
			for (int d = 0; d < D; d++)
				st->acc[r * D + d] *= f;
			st->m[r] = top;
		}
		mx = _mm256_set1_ps(st->m[r]);
		for (int j = 0; j < B; j += 8) {
			__m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + j), mx));
			_mm256_storeu_ps(x + j, e);
			sum = _mm256_add_ps(sum, e);
		}
		_mm256_storeu_ps(t, sum);
		for (int i = 0; i < 8; i++)
			st->l[r] += t[i];
	}
}

// Σ k·v over the bytes of one head: the read limit.
__attribute__((noinline)) static float dotKV(const uint16_t *k, const uint16_t *v, size_t n) {
	__m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
	for (size_t i = 0; i < n; i += 32) {
		s0 = _mm256_fmadd_ps(load8(k + i), load8(v + i), s0), s1 = _mm256_fmadd_ps(load8(k + i + 8), load8(v + i + 8), s1);
		s2 = _mm256_fmadd_ps(load8(k + i + 16), load8(v + i + 16), s2), s3 = _mm256_fmadd_ps(load8(k + i + 24), load8(v + i + 24), s3);
	}
	float o[8];
	_mm256_storeu_ps(o, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
	return o[0] + o[1] + o[2] + o[3] + o[4] + o[5] + o[6] + o[7];
}

// The FMA peak: 12 independent chains of 8 lanes, flops a second.
__attribute__((noinline)) static double peak(void) {
	__m256 a[12], x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(1e-3f);
	for (int i = 0; i < 12; i++)
		a[i] = _mm256_set1_ps(i);
	const int iters = 1 << 22;
	double t = now();
	for (int it = 0; it < iters; it++)
		for (int i = 0; i < 12; i++)
			a[i] = _mm256_fmadd_ps(a[i], x, y);
	t = now() - t;
	float o[8];
	__m256 s = a[0];
	for (int i = 1; i < 12; i++)
		s = _mm256_add_ps(s, a[i]);
	_mm256_storeu_ps(o, s);
	return o[0] > -1 ? 12.0 * 16 * iters / t : 0;
}
