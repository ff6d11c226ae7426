// causal.c: a C yardstick for kernels.AttendCausal (fp16), timed beside
// BenchmarkPrefillAttention by bench/vs-c-causal.sh; a measuring tool, not part of the
// Go module (this directory has no Go files, and the module uses no cgo). It is the
// same causal (prefill) flash attention, with the same tiling, written in AVX2 + FMA +
// F16C intrinsics (AVX-512 where the compiler targets it: gcc -O3 -march=native on an
// AVX-512 host, or -mavx512f), for one KV head of G = 4 query rows, dim 128: q and out
// [G][m][dim] float32, k and v [n][dim] fp16, the queries the last m of n positions,
// query i seeing keys 0 … n−m+i.
//
// Tiling, as kernels/attend_causal.go: tiles of T = 64/G = 16 positions (64 query rows,
// tile row r = (position−P)·G + g), absolute (a tile starts at P = 16·⌊p/16⌋). Per tile:
//   - its queries transposed into Qt [dim][64], times scale;
//   - the keys 0 … P in blocks of B = 256 from key 0: the block's keys widened to
//     float32 once (Kf [key][dim]); S = Q·Kᵀ as St [key][64] (key-major: a key's 64
//     scores are 8 vectors); the online softmax on St, vertical across the keys (each
//     lane one query row: running max, rescale of the row's sum and accumulators by
//     exp(old − new), weights 2²⁴·exp(s − max) in place, their sum); then P·V with the
//     block's values widened (Vf [key][dim]), added to the accumulators Ot [dim][64];
//   - the diagonal keys P+1 … (tile end), scored for the whole tile, each row's scores
//     past its own position set to −Inf before the max (weight 0), then P·V;
//   - out = Ot / sum.
//
// Both products run on one register-blocked micro-kernel shape, C[6][MR] (+)=
// Σ_k A[k][MR]·B(k, 0 … 5): A is the 64-row-wide operand (Qt for Q·Kᵀ, St = P for P·V;
// MR of its rows loaded per step, rows 64 floats apart), B six keys (Q·Kᵀ: B(k, t) =
// Kf[j+t][k]) or six value columns (P·V: B(k, t) = Vf[k][c+t]) of the widened rows,
// broadcast straight from them (no packing: the six broadcasts are six streams for
// Q·Kᵀ, one for P·V). On AVX2 MR = 16 query rows (2 ymm) × 6 = 12 accumulators, 2
// loads and 6 broadcasts per 12 FMAs; on AVX-512 MR = 64 (4 zmm) × 6 = 24. A 256-key
// block is 42 panels of 6 keys and one of 4 (a 16 × 4 kernel); dim 128 is 20 panels of
// 6 columns and two of 4; only a short block's last panel (the diagonal, the first
// tile) scores zero keys of padding. Q·Kᵀ runs a query panel at a time over all the
// block's keys (its 8 KB of Qt stays in L1), P·V likewise (its 16 KB of weights). On
// this machine (Zen 3) the kernel runs at 93-99% of the FMA peak on data in L1, 75-78%
// at K = 256 from L2. The other P·V, O[q][d] over the values in their own layout (6
// rows × 16 columns, P broadcast), would need a second kernel and an O layout the
// rescale and the division read across; this one was kept.
//
// Its exponential is a Cody–Waite reduction and a degree-6 polynomial with 2^k scaling
// (relative error ~2e-7). It checks a few rows of each head against float64 and prints
// the worst error relative to Σⱼ pⱼ·|vⱼ|, and times an FMA loop in the same process (12
// independent chains of the build's widest vector, best of 20 runs of ~10 ms) for the
// ratio to peak. CAUSAL_CPUTIME=1 times the thread's CPU time instead of the wall's
// (for comparing variants on a busy machine; not for beside Go, which times the wall).
//
//	causal                  # check m = n = 1024, a chunk m = 512, n = 4096, and small shapes
//	causal <m> <n> <reps>   # time reps calls (after one warm-up), then check
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define D 128       // dim
#define G 4         // query rows per KV head
#define TR 64       // query rows of a tile
#define T (TR / G)  // query positions of a tile
#define B 256       // keys of a block
#define NK 6        // keys (or value columns) of a panel
#define MAXK (B + NK) // St's and Kf's rows, room for a padded last panel

#ifdef __AVX512F__
#define W 16 // floats of a vector
typedef __m512 vec;
#define VLOAD _mm512_loadu_ps
#define VSTORE _mm512_storeu_ps
#define VSET1 _mm512_set1_ps
#define VZERO _mm512_setzero_ps
#define VFMA _mm512_fmadd_ps
#define VMUL _mm512_mul_ps
#define VADD _mm512_add_ps
#define VSUB _mm512_sub_ps
#define VMAX _mm512_max_ps
#define VBCAST(p) _mm512_set1_ps(*(p))
#define VHALF(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define ISA "avx512"
#else
#define W 8
typedef __m256 vec;
#define VLOAD _mm256_loadu_ps
#define VSTORE _mm256_storeu_ps
#define VSET1 _mm256_set1_ps
#define VZERO _mm256_setzero_ps
#define VFMA _mm256_fmadd_ps
#define VMUL _mm256_mul_ps
#define VADD _mm256_add_ps
#define VSUB _mm256_sub_ps
#define VMAX _mm256_max_ps
#define VBCAST(p) _mm256_broadcast_ss(p)
#define VHALF(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define ISA "avx2"
#endif
#define QV (TR / W) // vectors across a tile's 64 rows
#if W == 16
#define NV 4 // vectors of rows per micro-kernel: 64 rows
#else
#define NV 2 // 16 rows
#endif
#define MR (NV * W) // query rows of the micro-kernel

#define INLINE static inline __attribute__((always_inline))

static clockid_t timer = CLOCK_MONOTONIC; // CLOCK_THREAD_CPUTIME_ID with CAUSAL_CPUTIME=1

static double now(void) {
	struct timespec t;
	clock_gettime(timer, &t);
	return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

// 2^k·exp(x), 0 for x < −87 (−Inf included): x = r·ln2 + f, |f| ≤ ln2/2, exp(f) by
// its degree-6 Taylor polynomial (relative error ≤ 2e-7), 2^(r+k) into the exponent.
INLINE vec vexp(vec x, int k) {
#ifdef __AVX512F__
	__mmask16 live = _mm512_cmp_ps_mask(x, VSET1(-87.f), _CMP_GE_OQ);
	x = VMAX(x, VSET1(-87.f));
	vec r = _mm512_roundscale_ps(VMUL(x, VSET1(1.44269504f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#else
	vec live = _mm256_cmp_ps(x, VSET1(-87.f), _CMP_GE_OQ);
	x = VMAX(x, VSET1(-87.f));
	vec r = _mm256_round_ps(VMUL(x, VSET1(1.44269504f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#endif
	vec f = VFMA(r, VSET1(-0.693145752f), x); // ln2 = 0.693145752 + 1.42860677e-6
	f = VFMA(r, VSET1(-1.42860677e-6f), f);
	vec p = VSET1(1.f / 720);
	p = VFMA(p, f, VSET1(1.f / 120));
	p = VFMA(p, f, VSET1(1.f / 24));
	p = VFMA(p, f, VSET1(1.f / 6));
	p = VFMA(p, f, VSET1(0.5f));
	p = VFMA(p, f, VSET1(1.f));
	p = VFMA(p, f, VSET1(1.f));
#ifdef __AVX512F__
	__m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(r), _mm512_set1_epi32(127 + k)), 23);
	return _mm512_maskz_mul_ps(live, p, _mm512_castsi512_ps(e));
#else
	__m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(r), _mm256_set1_epi32(127 + k)), 23);
	return _mm256_and_ps(live, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
#endif
}

// The micro-kernel: for the MR rows a[kk][0 … MR−1] (A's rows TR floats apart) and nk
// ≤ 6 columns t of B: c[t][0 … MR−1] (+)= Σ_{kk<K} a[kk]·B(kk, t), c's rows TR floats
// apart. B is float32 rows of D: for Q·Kᵀ B(kk, t) = bp[t·D + kk], the block's keys
// widened (nk keys, dim kk); for P·V B(kk, t) = bp[kk·D + t], its values widened (key
// kk, nk columns). The accumulators are named, not an array, which gcc would keep in
// memory across the loop; the AVX2 shapes are 16 × 6 and 16 × 4, AVX-512's 64 × 6 and
// 64 × 4 (NV vectors of rows: A's NV loads and the nk broadcasts per step).
#if NV == 2
#define ROWS(X) X(0) X(1)
#else
#define ROWS(X) X(0) X(1) X(2) X(3)
#endif
#define DECL4(v) vec a##v, c0##v = VZERO(), c1##v = c0##v, c2##v = c0##v, c3##v = c0##v;
#define DECL6(v) DECL4(v) vec c4##v = c0##v, c5##v = c0##v;
#define LOADA(v) a##v = VLOAD(a + kk * TR + v * W);
#define FMA(t, v) c##t##v = VFMA(a##v, y, c##t##v);
#define STEP(t) y = VBCAST(bp + BAT(kk, t)); ROWS(FMA##t)
#define FMA0(v) FMA(0, v)
#define FMA1(v) FMA(1, v)
#define FMA2(v) FMA(2, v)
#define FMA3(v) FMA(3, v)
#define FMA4(v) FMA(4, v)
#define FMA5(v) FMA(5, v)
#define PUT(t, v) VSTORE(c + t * TR + v * W, add ? VADD(VLOAD(c + t * TR + v * W), c##t##v) : c##t##v);
#define PUT0(v) PUT(0, v)
#define PUT1(v) PUT(1, v)
#define PUT2(v) PUT(2, v)
#define PUT3(v) PUT(3, v)
#define PUT4(v) PUT(4, v)
#define PUT5(v) PUT(5, v)
#define MICRO6(name)                                                                                                    \
	__attribute__((noinline)) static void name(float *c, const float *a, const float *bp, int K, int add) {         \
		ROWS(DECL6)                                                                                             \
		for (int kk = 0; kk < K; kk++) {                                                                        \
			vec y;                                                                                          \
			ROWS(LOADA)                                                                                     \
			STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5)                                                 \
		}                                                                                                       \
		ROWS(PUT0) ROWS(PUT1) ROWS(PUT2) ROWS(PUT3) ROWS(PUT4) ROWS(PUT5)                                       \
	}
#define MICRO4(name)                                                                                                    \
	__attribute__((noinline)) static void name(float *c, const float *a, const float *bp, int K, int add) {         \
		ROWS(DECL4)                                                                                             \
		for (int kk = 0; kk < K; kk++) {                                                                        \
			vec y;                                                                                          \
			ROWS(LOADA)                                                                                     \
			STEP(0) STEP(1) STEP(2) STEP(3)                                                                 \
		}                                                                                                       \
		ROWS(PUT0) ROWS(PUT1) ROWS(PUT2) ROWS(PUT3)                                                             \
	}
#define BAT(kk, t) ((t) * D + (kk))
MICRO6(qk6)
MICRO4(qk4)
#undef BAT
#define BAT(kk, t) ((kk) * D + (t))
MICRO6(pv6)
MICRO4(pv4)
#undef BAT

// The panels of b ≤ 256 columns: 6 at a time while 6 remain, then one panel of 4, or
// of 6 for a remainder of 5. Returns the panel count, widths in w.
static int panels(int b, int *w) {
	int np = 0;
	while (b >= 6)
		w[np++] = 6, b -= 6;
	if (b > 4)
		w[np++] = 6;
	else if (b > 0)
		w[np++] = 4;
	return np;
}

// dst [rows][D] float32: b rows of D halves widened, then zero rows to pad.
static void widen(float *dst, const uint16_t *src, int b, int pad) {
	for (int j = 0; j < b; j++)
		for (int c = 0; c < D; c += 8)
			_mm256_storeu_ps(dst + j * D + c, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + (size_t)j * D + c))));
	memset(dst + (size_t)b * D, 0, sizeof(float) * D * pad);
}

// A tile's workspace.
static float Qt[D * TR], St[MAXK * TR], Ot[D * TR], Kf[MAXK * D], Vf[B * D];
static float mrow[TR], lrow[TR], posv[TR];
static int dimW[32], dimP;

// St [b][64] = Qt · keys ᵀ for b keys from k (rows past b: padding, unused).
static void scoreBlock(const uint16_t *k, int b) {
	int w[64], np = panels(b, w), padded = 0;
	for (int p = 0; p < np; p++)
		padded += w[p];
	widen(Kf, k, b, padded - b);
	for (int r = 0; r < TR; r += MR)
		for (int p = 0, j = 0; p < np; j += w[p], p++)
			if (w[p] == 6)
				qk6(St + j * TR + r, Qt + r, Kf + j * D, D, 0);
			else
				qk4(St + j * TR + r, Qt + r, Kf + j * D, D, 0);
}

// Ot += St[0 … b−1]ᵀ · values, for the b values from v: a query panel at a time (its
// weights, b·MR floats, stay in L1 while the value columns stream).
static void addProduct(const uint16_t *v, int b) {
	widen(Vf, v, b, 0);
	for (int r = 0; r < TR; r += MR)
		for (int p = 0, c = 0; p < dimP; c += dimW[p], p++)
			if (dimW[p] == 6)
				pv6(Ot + c * TR + r, St + r, Vf + c, b, 1);
			else
				pv4(Ot + c * TR + r, St + r, Vf + c, b, 1);
}

// The online softmax of a block of b keys' scores in St, vertical: lane r of a vector
// is tile row r, and St is read a key at a time, 4 vectors (half a key's row on AVX2)
// per pass. first: the first key's position, for diag (keys past a row's own
// position get −Inf, weight 0).
#define QH 4
static void weights(int b, int diag, int first) {
	for (int h = 0; h < QV; h += QH) {
		vec pos[QH], mx[QH], f[QH], sum[QH];
		for (int u = 0; u < QH; u++)
			pos[u] = VLOAD(posv + (h + u) * W), mx[u] = VLOAD(mrow + (h + u) * W);
		for (int j = 0; j < b; j++)
			for (int u = 0; u < QH; u++) {
				float *x = St + j * TR + (h + u) * W;
				vec s = VLOAD(x);
				if (diag) { // key first+j is past row r when first+j > pos[r]
#ifdef __AVX512F__
					__mmask16 past = _mm512_cmp_ps_mask(VSET1(first + j), pos[u], _CMP_GT_OQ);
					s = _mm512_mask_mov_ps(s, past, VSET1(-INFINITY));
#else
					s = _mm256_blendv_ps(s, VSET1(-INFINITY), _mm256_cmp_ps(VSET1(first + j), pos[u], _CMP_GT_OQ));
#endif
					VSTORE(x, s);
				}
				mx[u] = VMAX(mx[u], s);
			}
		for (int u = 0; u < QH; u++) {
			f[u] = vexp(VSUB(VLOAD(mrow + (h + u) * W), mx[u]), 0); // 0 on the first block (−Inf before)
			VSTORE(mrow + (h + u) * W, mx[u]);
			sum[u] = VZERO();
		}
		for (int c = 0; c < D; c++)
			for (int u = 0; u < QH; u++)
				VSTORE(Ot + c * TR + (h + u) * W, VMUL(VLOAD(Ot + c * TR + (h + u) * W), f[u]));
		for (int j = 0; j < b; j++)
			for (int u = 0; u < QH; u++) {
				float *x = St + j * TR + (h + u) * W;
				vec e = vexp(VSUB(VLOAD(x), mx[u]), 24);
				VSTORE(x, e);
				sum[u] = VADD(sum[u], e);
			}
		for (int u = 0; u < QH; u++)
			VSTORE(lrow + (h + u) * W, VADD(VMUL(VLOAD(lrow + (h + u) * W), f[u]), sum[u]));
	}
}

// The causal attention of the m queries over the n keys (m ≤ n, dim 128, G = 4).
static void attendCausal(float *out, const float *q, const uint16_t *k, const uint16_t *v, int m, int n, float scale) {
	int first = n - m;
	dimP = panels(D, dimW);
	for (int p0 = first - first % T; p0 < n; p0 += T) {
		int lo = p0 > first ? p0 : first, hi = p0 + T < n ? p0 + T : n;
		for (int r = 0; r < TR; r++) {
			int i = p0 + r / G, g = r % G;
			posv[r] = i;
			mrow[r] = -INFINITY, lrow[r] = 0;
			for (int c = 0; c < D; c++)
				Qt[c * TR + r] = i >= lo && i < hi ? scale * q[((size_t)g * m + i - first) * D + c] : 0;
		}
		memset(Ot, 0, sizeof Ot);
		for (int j0 = 0; j0 <= p0; j0 += B) {
			int b = p0 + 1 - j0 < B ? p0 + 1 - j0 : B;
			scoreBlock(k + (size_t)j0 * D, b);
			weights(b, 0, 0);
			addProduct(v + (size_t)j0 * D, b);
		}
		int d = hi - 1 - p0;
		if (d > 0) {
			scoreBlock(k + (size_t)(p0 + 1) * D, d);
			weights(d, 1, p0 + 1);
			addProduct(v + (size_t)(p0 + 1) * D, d);
		}
		for (int r = 0; r < TR; r++) {
			int i = p0 + r / G, g = r % G;
			if (i < lo || i >= hi)
				continue;
			float inv = 1 / lrow[r], *o = out + ((size_t)g * m + i - first) * D;
			for (int c = 0; c < D; c++)
				o[c] = Ot[c * TR + r] * inv;
		}
	}
}

// The worst error of query row (g, i) against float64, relative to Σⱼ pⱼ·|vⱼ|.
static double checkRow(const float *out, const float *q, const uint16_t *k, const uint16_t *v, int m, int n, int g, int i,
                       float scale) {
	int keys = n - m + i + 1;
	double *p = malloc(sizeof(double) * keys), top = -INFINITY, l = 0, worst = 0;
	const float *qr = q + ((size_t)g * m + i) * D, *o = out + ((size_t)g * m + i) * D;
	for (int j = 0; j < keys; j++) {
		double s = 0;
		for (int c = 0; c < D; c++)
			s += (double)qr[c] * _cvtsh_ss(k[(size_t)j * D + c]);
		p[j] = (double)scale * s;
		top = fmax(top, p[j]);
	}
	for (int j = 0; j < keys; j++)
		l += p[j] = exp(p[j] - top);
	for (int c = 0; c < D; c++) {
		double x = 0, mag = 0;
		for (int j = 0; j < keys; j++) {
			double y = _cvtsh_ss(v[(size_t)j * D + c]);
			x += p[j] / l * y, mag += p[j] / l * fabs(y);
		}
		worst = fmax(worst, fabs(o[c] - x) / mag);
	}
	free(p);
	return worst;
}

// A few rows of each head: the first few and last few queries, and some between.
static double check(const float *out, const float *q, const uint16_t *k, const uint16_t *v, int m, int n, float scale) {
	int at[] = {0, 1, 2, 15, 16, 17, m / 3, m / 2 + 5, m - 17, m - 2, m - 1};
	double worst = 0;
	for (int g = 0; g < G; g++)
		for (size_t x = 0; x < sizeof at / sizeof at[0]; x++)
			if (at[x] >= 0 && at[x] < m)
				worst = fmax(worst, checkRow(out, q, k, v, m, n, g, at[x], scale));
	return worst;
}

// The FMA ceiling: 12 independent chains of the widest vector, best of 20 runs.
__attribute__((noinline)) static double peakGFLOPS(void) {
	volatile float seed = 1e-7f;
	double best = 0;
	const long iters = 1 << 17;
	for (int run = 0; run < 20; run++) {
		vec a = VSET1(seed), b = VSET1(1.f + seed);
		vec c0 = VZERO(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0, c8 = c0, c9 = c0, c10 = c0, c11 = c0;
		double t0 = now();
		for (long i = 0; i < iters; i++) {
			c0 = VFMA(a, b, c0), c1 = VFMA(a, b, c1), c2 = VFMA(a, b, c2), c3 = VFMA(a, b, c3);
			c4 = VFMA(a, b, c4), c5 = VFMA(a, b, c5), c6 = VFMA(a, b, c6), c7 = VFMA(a, b, c7);
			c8 = VFMA(a, b, c8), c9 = VFMA(a, b, c9), c10 = VFMA(a, b, c10), c11 = VFMA(a, b, c11);
			__asm__ volatile("" : "+x"(c0), "+x"(c1), "+x"(c2), "+x"(c3), "+x"(c4), "+x"(c5), "+x"(c6), "+x"(c7), "+x"(c8),
			                 "+x"(c9), "+x"(c10), "+x"(c11));
		}
		double t = now() - t0;
		vec s = VADD(VADD(VADD(c0, c1), VADD(c2, c3)), VADD(VADD(c4, c5), VADD(c6, c7)));
		s = VADD(s, VADD(VADD(c8, c9), VADD(c10, c11)));
		float o[W];
		VSTORE(o, s);
		seed = seed + o[0] * 0; // keep the chains live
		double g = iters * 12.0 * 2 * W / t / 1e9;
		if (g > best)
			best = g;
	}
	return best;
}

// FLOPs of a call: 4·dim per query row and visible key.
static double flops(int m, int n) { return 4.0 * D * G * ((double)m * (2.0 * (n - m) + m + 1) / 2); }

static void fill(uint16_t *k, uint16_t *v, float *q, int m, int n) {
	uint64_t x = 88172645463325252ull; // xorshift: halves in ±[0.25, 2)
	for (size_t i = 0; i < (size_t)n * D; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		k[i] = 0x3400 + (x & 0x7ff) + (x >> 63 << 15);
		v[i] = 0x3400 + (x >> 16 & 0x7ff) + (x >> 62 << 15);
	}
	for (size_t i = 0; i < (size_t)G * m * D; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		q[i] = (float)((double)(x >> 11) / (1ull << 53) * 2 - 1);
	}
}

static int run(int m, int n, int reps) {
	uint16_t *k = malloc((size_t)n * D * 2), *v = malloc((size_t)n * D * 2);
	float *q = malloc(sizeof(float) * G * m * D), *out = malloc(sizeof(float) * G * m * D);
	fill(k, v, q, m, n);
	float scale = 1 / sqrtf(D);
	attendCausal(out, q, k, v, m, n, scale); // warm-up
	double err = check(out, q, k, v, m, n, scale);
	if (reps > 0) {
		double peak = peakGFLOPS(), *t = malloc(sizeof(double) * reps), sum = 0;
		for (int r = 0; r < reps; r++) {
			double t0 = now();
			attendCausal(out, q, k, v, m, n, scale);
			t[r] = now() - t0, sum += t[r];
		}
		qsort(t, reps, sizeof *t, cmp);
		double med = reps & 1 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2, g = flops(m, n) / med / 1e9;
		printf("C causal %s G=%d dim=%d m=%d n=%d reps=%d: %.0f ns/call (median; mean %.0f, best %.0f), %.2f GFLOP/s, "
		       "peak %.2f GFLOP/s (%d-bit FMA), %.1f %%peak, max rel err %.2e\n",
		       ISA, G, D, m, n, reps, med * 1e9, sum / reps * 1e9, t[0] * 1e9, g, peak, 32 * W, 100 * g / peak, err);
		free(t);
	} else
		printf("C causal %s G=%d dim=%d m=%d n=%d: max rel err %.2e\n", ISA, G, D, m, n, err);
	free(k), free(v), free(q), free(out);
	return err < 1e-4 ? 0 : 1;
}

int main(int argc, char **argv) {
	if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || !__builtin_cpu_supports("f16c")) {
		printf("no AVX2/FMA/F16C here: nothing to time\n");
		return 0;
	}
#ifdef __AVX512F__
	if (!__builtin_cpu_supports("avx512f")) {
		printf("built for AVX-512, which this CPU lacks\n");
		return 0;
	}
#endif
	if (getenv("CAUSAL_CPUTIME") && !strcmp(getenv("CAUSAL_CPUTIME"), "1"))
		timer = CLOCK_THREAD_CPUTIME_ID; // a shared machine: the thread's CPU time, not the wall's
	if (argc == 4) {
		int m = atoi(argv[1]), n = atoi(argv[2]), reps = atoi(argv[3]);
		if (m < 1 || n < m) {
			fprintf(stderr, "want 1 ≤ m ≤ n\n");
			return 2;
		}
		return run(m, n, reps);
	}
	if (argc != 1) {
		fprintf(stderr, "usage: causal [<m> <n> <reps>]\n");
		return 2;
	}
	return run(1024, 1024, 0) | run(512, 4096, 0) | run(37, 100, 0) | run(5, 5, 0);
}
