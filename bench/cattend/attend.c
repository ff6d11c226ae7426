// attend.c: a C yardstick for kernels.Attend, timed beside BenchmarkDecodeAttention by
// bench/vs-c-attend.sh; a measuring tool, not part of the Go module (this directory has
// no Go files, and the module uses no cgo). It is the same fused decode attention
// written with AVX-512 intrinsics: fp16 keys and values, 8 KV heads of G = 4 query rows,
// dim 128, head-major ([heads][n][dim], a head at a time, as kernels.Attend) or
// token-major ([n][heads][dim], a head's rows 8·128 halves apart, a block at a time
// across the heads, as kernels.AttendHeads), and the read limit timed as the Go
// benchmark times it (a dot product of K with V over the same bytes), alternating with
// the kernel.
//
// The kernel is the flash-decoding loop of kernels/attend.go in blocks of B keys:
// score the block 4 keys × 4 rows at a time (prefetching the keys 16 ahead and the
// block's value rows), turn the scores into weights against each row's running
// maximum, and add the block's value rows, weighted, in two column passes of 64
// (prefetching the next block's keys). Its exponential is a plain polynomial, cheaper
// than the library's: the yardstick errs on the fast side. It prints its error against
// float64 on the first head, so that a fast wrong kernel shows.
//
//	attend [n] [B] [token]   # n keys per head (65536), blocks of B keys (256)
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define D 128     // dim
#define G 4       // query rows per KV head
#define HEADS 8   // KV heads
#define MAXB 1024 // largest block

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define KERNEL __attribute__((noinline)) AVX512
#define INLINE static inline __attribute__((always_inline)) AVX512

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
	qsort(v, n, sizeof *v, cmp);
	return n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

INLINE __m512 load16(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }

INLINE void prefetchRow(const uint16_t *row) { // a row of D halves: 4 lines
	const char *p = (const char *)row;
	_mm_prefetch(p, _MM_HINT_T0);
	_mm_prefetch(p + 64, _MM_HINT_T0);
	_mm_prefetch(p + 128, _MM_HINT_T0);
	_mm_prefetch(p + 192, _MM_HINT_T0);
}

// The read limit: Σ k·v over one head, the bytes of K and V once.
KERNEL float dotKV(const uint16_t *k, const uint16_t *v, size_t n) {
	__m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
	for (size_t i = 0; i < n; i += 64) {
		s0 = _mm512_fmadd_ps(load16(k + i), load16(v + i), s0);
		s1 = _mm512_fmadd_ps(load16(k + i + 16), load16(v + i + 16), s1);
		s2 = _mm512_fmadd_ps(load16(k + i + 32), load16(v + i + 32), s2);
		s3 = _mm512_fmadd_ps(load16(k + i + 48), load16(v + i + 48), s3);
	}
	return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

// exp(x) for x ≤ 0 (to within a few ulp; timing only).
INLINE __m512 exp512(__m512 x) {
	x = _mm512_max_ps(x, _mm512_set1_ps(-87.f));
	__m512 t = _mm512_mul_ps(x, _mm512_set1_ps(1.44269504f));
	__m512 r = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512 f = _mm512_sub_ps(t, r), p = _mm512_set1_ps(1.3333558e-3f);
	p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.6181291e-3f));
	p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.5504109e-2f));
	p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.4022651e-1f));
	p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.9314718e-1f));
	p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.f));
	return _mm512_scalef_ps(p, r);
}

// The sums of x[0..15], lane 4·(i%4) + i/4 holding x[i]'s: 4 rows of 4 keys.
INLINE __m512 reduce16(const __m512 x[16]) {
	__m512 a[8], b[4], c[2];
	for (int i = 0; i < 8; i++) // lanes 4l..4l+3: x[2i] 0+1, x[2i+1] 0+1, x[2i] 2+3, x[2i+1] 2+3 of 128-bit lane l
		a[i] = _mm512_add_ps(_mm512_unpacklo_ps(x[2 * i], x[2 * i + 1]), _mm512_unpackhi_ps(x[2 * i], x[2 * i + 1]));
	for (int i = 0; i < 4; i++) // 128-bit lane l: x[4i..4i+3], each summed over its lane l
		b[i] = _mm512_add_ps(_mm512_shuffle_ps(a[2 * i], a[2 * i + 1], 0x44), _mm512_shuffle_ps(a[2 * i], a[2 * i + 1], 0xee));
	for (int i = 0; i < 2; i++)
		c[i] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], 0x88), _mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], 0xdd));
	return _mm512_add_ps(_mm512_shuffle_f32x4(c[0], c[1], 0x88), _mm512_shuffle_f32x4(c[0], c[1], 0xdd));
}

static int laneOf[16]; // laneOf[i]: the lane of reduce16 holding x[i]'s sum

static void findLanes(void) AVX512;
static void findLanes(void) {
	__m512 x[16];
	float o[16];
	for (int i = 0; i < 16; i++)
		x[i] = _mm512_set1_ps(i); // sums to 16·i
	_mm512_storeu_ps(o, reduce16(x));
	for (int l = 0; l < 16; l++)
		laneOf[(int)(o[l] / 16)] = l;
}

// s[r*MAXB + j] = scale·q_r·k_j for the nb keys of a block (nb a multiple of 4),
// prefetching the keys 16 ahead and the value rows v_j.
KERNEL void score(float *s, const float *q, const uint16_t *k, const uint16_t *v, int nb, size_t stride, float scale) {
	for (int j = 0; j < nb; j += 4) {
		__m512 acc[16];
		for (int t = 0; t < 4; t++) {
			prefetchRow(k + (j + t + 16) * stride);
			prefetchRow(v + (j + t) * stride);
		}
		for (int i = 0; i < 16; i++)
			acc[i] = _mm512_setzero_ps();
		for (int c = 0; c < D; c += 16) {
			__m512 q0 = _mm512_loadu_ps(q + c), q1 = _mm512_loadu_ps(q + D + c);
			__m512 q2 = _mm512_loadu_ps(q + 2 * D + c), q3 = _mm512_loadu_ps(q + 3 * D + c);
			for (int t = 0; t < 4; t++) {
				__m512 kv = load16(k + (j + t) * stride + c);
				acc[4 * t] = _mm512_fmadd_ps(kv, q0, acc[4 * t]);
				acc[4 * t + 1] = _mm512_fmadd_ps(kv, q1, acc[4 * t + 1]);
				acc[4 * t + 2] = _mm512_fmadd_ps(kv, q2, acc[4 * t + 2]);
				acc[4 * t + 3] = _mm512_fmadd_ps(kv, q3, acc[4 * t + 3]);
			}
		}
		float o[16];
		_mm512_storeu_ps(o, _mm512_mul_ps(reduce16(acc), _mm512_set1_ps(scale)));
		for (int i = 0; i < 16; i++) // acc[i] is key i/4, row i%4
			s[(i % 4) * MAXB + j + i / 4] = o[laneOf[i]];
	}
}

// Turns each row's block of scores into weights against its running maximum m,
// rescaling the row's sum l and accumulator first if the block raises m.
KERNEL void weights(float *s, int nb, float *m, float *l, float *acc) {
	for (int r = 0; r < G; r++) {
		float *x = s + r * MAXB;
		__m512 mx = _mm512_set1_ps(m[r]), sum = _mm512_setzero_ps();
		for (int j = 0; j < nb; j += 16)
			mx = _mm512_max_ps(mx, _mm512_loadu_ps(x + j));
		float top = _mm512_reduce_max_ps(mx);
		if (top > m[r]) {
			float f = expf(m[r] - top);
			l[r] *= f;
			for (int d = 0; d < D; d++)
				acc[r * D + d] *= f;
			m[r] = top;
		}
		mx = _mm512_set1_ps(m[r]);
		for (int j = 0; j < nb; j += 16) {
			__m512 e = exp512(_mm512_sub_ps(_mm512_loadu_ps(x + j), mx));
			_mm512_storeu_ps(x + j, e);
			sum = _mm512_add_ps(sum, e);
		}
		l[r] += _mm512_reduce_add_ps(sum);
	}
}

// acc[r] += Σ_j w[r*MAXB + j]·v_j in two column passes of 64 (16 accumulators each),
// prefetching the next block's keys (next, or NULL) in the first.
KERNEL void add(float *acc, const float *w, const uint16_t *v, const uint16_t *next, int nb, size_t stride) {
	for (int c = 0; c < D; c += 64) {
		__m512 a[G][4];
		for (int r = 0; r < G; r++)
			for (int x = 0; x < 4; x++)
				a[r][x] = _mm512_loadu_ps(acc + r * D + c + 16 * x);
		for (int j = 0; j < nb; j++) {
			const uint16_t *vj = v + j * stride + c;
			if (next && c == 0)
				prefetchRow(next + j * stride);
			__m512 v0 = load16(vj), v1 = load16(vj + 16), v2 = load16(vj + 32), v3 = load16(vj + 48);
			for (int r = 0; r < G; r++) {
				__m512 p = _mm512_set1_ps(w[r * MAXB + j]);
				a[r][0] = _mm512_fmadd_ps(p, v0, a[r][0]);
				a[r][1] = _mm512_fmadd_ps(p, v1, a[r][1]);
				a[r][2] = _mm512_fmadd_ps(p, v2, a[r][2]);
				a[r][3] = _mm512_fmadd_ps(p, v3, a[r][3]);
			}
		}
		for (int r = 0; r < G; r++)
			for (int x = 0; x < 4; x++)
				_mm512_storeu_ps(acc + r * D + c + 16 * x, a[r][x]);
	}
}

// One KV head's running state: per row the maximum, the sum of weights, the weighted sum.
struct state {
	float m[G], l[G], acc[G * D];
};

static void reset(struct state *st) {
	for (int r = 0; r < G; r++)
		st->m[r] = -INFINITY, st->l[r] = 0;
	memset(st->acc, 0, sizeof st->acc);
}

// The B keys and values of one block of one head into st, prefetching next's keys.
KERNEL void block(struct state *st, const float *q, const uint16_t *kb, const uint16_t *vb, const uint16_t *next, int B,
                  size_t stride, float scale) {
	static float s[G * MAXB];
	score(s, q, kb, vb, B, stride, scale);
	weights(s, B, st->m, st->l, st->acc);
	add(st->acc, s, vb, next, B, stride);
}

static void finish(const struct state *st, float *out) {
	for (int r = 0; r < G; r++)
		for (int d = 0; d < D; d++)
			out[r * D + d] = st->acc[r * D + d] / st->l[r];
}

// Every KV head: out[h][r] = Σ_j softmax_j(scale·q[h][r]·k_hj)·v_hj over n keys (n a
// multiple of B), head h's rows at K + h·head, stride halves apart. Head-major takes
// the heads one after another (kernels.Attend per head); token-major a block at a time
// across the heads, prefetching the next head's block (kernels.AttendHeads).
static void attendLayer(float *out, const float *q, const uint16_t *K, const uint16_t *V, int n, size_t head, size_t stride,
                        int B, int token, float scale) {
	static struct state st[HEADS];
	for (int h = 0; h < HEADS; h++)
		reset(&st[h]);
	if (!token)
		for (int h = 0; h < HEADS; h++)
			for (int j0 = 0; j0 < n; j0 += B) {
				const uint16_t *kb = K + h * head + j0 * stride;
				block(&st[h], q + h * G * D, kb, V + h * head + j0 * stride, j0 + B < n ? kb + B * stride : NULL, B, stride, scale);
			}
	else
		for (int j0 = 0; j0 < n; j0 += B)
			for (int h = 0; h < HEADS; h++) {
				const uint16_t *kb = K + h * head + j0 * stride, *next = NULL;
				if (h + 1 < HEADS)
					next = kb + head;
				else if (j0 + B < n)
					next = K + (j0 + B) * stride;
				block(&st[h], q + h * G * D, kb, V + h * head + j0 * stride, next, B, stride, scale);
			}
	for (int h = 0; h < HEADS; h++)
		finish(&st[h], out + h * G * D);
}

// The same in float64, for one head: the yardstick's worst error relative to Σⱼ pⱼ·|vⱼ|.
static double check(const float *out, const float *q, const uint16_t *k, const uint16_t *v, int n, size_t stride, float scale) {
	double worst = 0, *p = malloc(sizeof(double) * n);
	for (int r = 0; r < G; r++) {
		double top = -INFINITY, l = 0;
		for (int j = 0; j < n; j++) {
			double d = 0;
			for (int c = 0; c < D; c++)
				d += (double)q[r * D + c] * _cvtsh_ss(k[j * stride + c]);
			p[j] = scale * d;
			top = fmax(top, p[j]);
		}
		for (int j = 0; j < n; j++)
			l += p[j] = exp(p[j] - top);
		for (int c = 0; c < D; c++) {
			double o = 0, mag = 0;
			for (int j = 0; j < n; j++)
				o += p[j] / l * _cvtsh_ss(v[j * stride + c]), mag += p[j] / l * fabs(_cvtsh_ss(v[j * stride + c]));
			worst = fmax(worst, fabs(out[r * D + c] - o) / mag);
		}
	}
	free(p);
	return worst;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 65536, B = argc > 2 ? atoi(argv[2]) : 256, reps = 15;
	int token = argc > 3 && !strcmp(argv[3], "token");
	if (!__builtin_cpu_supports("avx512f")) {
		printf("no AVX-512 here: nothing to time\n");
		return 0;
	}
	if (B < 4 || B > MAXB || B % 16 || n % B) {
		fprintf(stderr, "want 16 | B ≤ %d and B | n\n", MAXB);
		return 2;
	}
	findLanes();
	size_t per = (size_t)n * D, total = per * HEADS;
	size_t head = token ? D : per, stride = token ? HEADS * D : D; // head h's rows: K + h·head, stride apart
	uint16_t *K = aligned_alloc(4096, total * 2), *V = aligned_alloc(4096, total * 2);
	uint64_t x = 88172645463325252ull; // xorshift: halves in ±[0.25, 2)
	for (size_t i = 0; i < total; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		K[i] = 0x3400 + (x & 0x7ff) + (x >> 63 << 15);
		V[i] = 0x3400 + (x >> 16 & 0x7ff) + (x >> 62 << 15);
	}
	static float q[HEADS * G * D], out[HEADS * G * D];
	for (int i = 0; i < HEADS * G * D; i++)
		q[i] = (float)((i * 7919) % 200 - 100) / 100.f;
	float scale = 1 / sqrtf(D);
	double tr[15], ta[15];
	volatile float sink = 0;
	int calls = n < 65536 ? 65536 / n : 1; // calls per timing, so that each takes a few ms
	for (int rep = 0; rep < reps; rep++) { // alternate, so that both see the same memory
		double t0 = now();
		for (int c = 0; c < calls; c++)
			for (int h = 0; h < HEADS; h++)
				sink += dotKV(K + h * per, V + h * per, per);
		tr[rep] = (now() - t0) / calls;
		t0 = now();
		for (int c = 0; c < calls; c++)
			attendLayer(out, q, K, V, n, head, stride, B, token, scale);
		ta[rep] = (now() - t0) / calls;
	}
	double r = median(tr, reps), a = median(ta, reps);
	printf("C fp16 %s Hkv=%d G=%d dim=%d n=%d B=%d: read %.3f ms (%.1f GB/s), fused %.3f ms = %.2f × read; worst rel. error %.1e\n",
	       token ? "token" : "head", HEADS, G, D, n, B, r * 1e3, total * 4 / r / 1e9, a * 1e3, a / r, check(out, q, K, V, n, stride, scale));
	return 0;
}
