// layout_avx2.c: a C floor on AVX2 hosts (no AVX-512 needed) for kvsimd's issue 42 item
// 2, token-major ÷ head-major, and issue 43, pages of 16 rows ÷ contiguous; not part of
// the Go module. What does the memory layout of a KV cache cost one flash-decoding loop
// on this host? The loop is interleave_avx2.c's phased+prefetch (fp16 K and V, 8 KV heads
// of G = 4 query rows, dim 128, blocks of B = 256 keys: scores 2 keys × 4 rows at a time,
// prefetching the keys 16 ahead and the block's value rows; weights; the value rows added
// in passes of 2 rows × 32 columns, prefetching the next block's keys), over the same
// keys and values laid out as
//
//   - head: each head's n rows contiguous, head after head ([heads][n][dim]); exactly
//     interleave_avx2.c's phased+prefetch;
//   - token: [n][heads][dim], a head's rows heads·dim halves (2 KiB) apart, taken a block
//     at a time across the heads as kernels.AttendHeads takes them; the add phase
//     prefetches the next head's block (after the last head, the first head's next);
//   - pages16, pages64: each head's rows in pages of P rows (P×dim halves of K and the
//     same of V), the pages of all heads in the slots of one K arena and one V arena (a
//     page's K and V in the same slot of each) in a fixed-seed shuffled order, as a page
//     pool leaves them after churn. A head at a time, each block read through tables of
//     its rows' addresses, listed from the head's page list before the block is scored,
//     as the Go paged kernels list them: the block's keys and values and the next
//     block's keys, which the scores' look-ahead and the add phase's prefetch read;
//   - pages16-own: pages of 16 rows, each its own aligned_alloc(64, …), in the order a
//     growing cache allocates them (page p of every head, K then V, then page p+1), with
//     small allocations of random size in between.
//
// Timings drift by ±20 % over seconds here, so each rep runs every layout (and the read
// limit's dot) once in a fresh random order, after a warm-up run of each, each timed run
// right after an untimed one of the same layout (the same cache state whatever the
// order), and a layout is compared with head by the median of their ratios in the same
// rep, beside the best and median times. The FMA limit is 4·dim·G flops a key at the
// peak of 12 independent FMA chains timed here, the read limit K+V's bytes at the speed
// of a dot of K with V head-major (its median over the reps). Every layout's output is checked against
// float64 (worst error relative to Σⱼ pⱼ·|vⱼ|) and, since all do the same operations in
// the same order, against head's bit for bit.
//
//	gcc -O3 -mavx2 -mfma -mf16c bench/cattend/layout_avx2.c -lm && ./a.out [n]
#include "avx2.h"

#define REPS 41

static uint64_t rng = 88172645463325252ull; // xorshift

static uint64_t next64(void) {
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

// p[0] … p[n−1] in a random order (Fisher–Yates).
static void shuffle(int *p, int n) {
	for (int i = n - 1; i > 0; i--) {
		int j = next64() % (i + 1), t = p[i];
		p[i] = p[j], p[j] = t;
	}
}

static float sA[G * B];

// One block of B keys whose rows lie stride halves apart from kb and vb: phased+prefetch.
// left is the number of the head's keys from kb on (the look-ahead stops at the last),
// next the first of the B rows (stride apart) the add phase prefetches, or NULL.
static inline void blockStrided(struct state *st, const float *q, const uint16_t *kb, const uint16_t *vb, size_t stride, int left,
                                const uint16_t *next, float scale) {
	for (int j = 0; j < B; j += 2) {
		if (j + 17 < left)
			prefetchRow(kb + (j + 16) * stride), prefetchRow(kb + (j + 17) * stride);
		prefetchRow(vb + j * stride), prefetchRow(vb + (j + 1) * stride);
		score2(sA, q, kb + j * stride, kb + (j + 1) * stride, j, scale);
	}
	weights(st, sA);
	for (int g = 0; g < G; g += 2)
		for (int c = 0; c < D; c += 32) {
			if (next && g == 0 && c == 0)
				for (int j = 0; j < B; j++)
					prefetchRow(next + j * stride);
			addPass(st->acc, sA, vb, stride, NULL, g, c, 0, B);
		}
}

// Head-major: head h's rows at k + h·n·D, a head at a time.
__attribute__((noinline)) static void layoutHead(struct state *st, const float *q, const uint16_t *k, const uint16_t *v, int n, float scale) {
	for (int h = 0; h < HEADS; h++) {
		const uint16_t *kh = k + (size_t)h * n * D, *vh = v + (size_t)h * n * D;
		for (int j0 = 0; j0 < n; j0 += B) {
			const uint16_t *kb = kh + (size_t)j0 * D;
			blockStrided(&st[h], q + h * G * D, kb, vh + (size_t)j0 * D, D, n - j0, j0 + B < n ? kb + B * D : NULL, scale);
		}
	}
}

// Token-major: head h's row j at k + (j·HEADS + h)·D, a block at a time across the heads.
__attribute__((noinline)) static void layoutToken(struct state *st, const float *q, const uint16_t *k, const uint16_t *v, int n, float scale) {
	const size_t stride = HEADS * D;
	for (int j0 = 0; j0 < n; j0 += B)
		for (int h = 0; h < HEADS; h++) {
			size_t at = (size_t)j0 * stride + h * D;
			const uint16_t *next = h + 1 < HEADS ? k + at + D : j0 + B < n ? k + (size_t)(j0 + B) * stride : NULL;
			blockStrided(&st[h], q + h * G * D, k + at, v + at, stride, n - j0, next, scale);
		}
}

// t[i] = the address of row j0+i, i < B, in pages of P rows (as the Go listRows: a page's
// rows by adding the row size to its first).
static void listRows(const uint16_t **t, const uint16_t *const *pages, int j0, int P) {
	int p = j0 / P, at = j0 % P;
	for (int i = 0; i < B;) {
		const uint16_t *row = pages[p] + (size_t)at * D;
		for (int c = P - at < B - i ? P - at : B - i; c > 0; c--, i++, row += D)
			t[i] = row;
		p++, at = 0;
	}
}

// Paged: head h's page p at kp[h·n/P + p] and vp[h·n/P + p], a head at a time, each
// block through tables of its rows' addresses.
__attribute__((noinline)) static void layoutPages(struct state *st, const float *q, const uint16_t *const *kp, const uint16_t *const *vp, int P,
                                                  int n, float scale) {
	static const uint16_t *keys[2][B], *values[B];
	for (int h = 0; h < HEADS; h++) {
		const uint16_t *const *kh = kp + (size_t)h * (n / P), *const *vh = vp + (size_t)h * (n / P);
		const float *qh = q + h * G * D;
		const uint16_t **kt = keys[0], **kn = keys[1], **swap;
		listRows(kt, kh, 0, P);
		for (int j0 = 0; j0 < n; j0 += B) {
			int more = j0 + B < n;
			listRows(values, vh, j0, P);
			if (more)
				listRows(kn, kh, j0 + B, P);
			for (int j = 0; j < B; j += 2) {
				if (j + 17 < n - j0) { // j even: keys j+16 and j+17 lie in one table
					const uint16_t *const *ahead = j + 16 < B ? kt + j + 16 : kn + j + 16 - B;
					prefetchRow(ahead[0]), prefetchRow(ahead[1]);
				}
				prefetchRow(values[j]), prefetchRow(values[j + 1]);
				score2(sA, qh, kt[j], kt[j + 1], j, scale);
			}
			weights(&st[h], sA);
			for (int g = 0; g < G; g += 2)
				for (int c = 0; c < D; c += 32) {
					if (more && g == 0 && c == 0)
						for (int j = 0; j < B; j++)
							prefetchRow(kn[j]);
					addPass(st[h].acc, sA, NULL, 0, values, g, c, 0, B);
				}
			swap = kt, kt = kn, kn = swap;
		}
	}
}

// The outputs in float64 (want) and Σⱼ pⱼ·|vⱼ| (mag), [HEADS][G][D], from head-major k, v:
// check's reference, computed once for all layouts.
static void reference(double *want, double *mag, const float *q, const uint16_t *k, const uint16_t *v, int n, float scale) {
	double *p = malloc(sizeof(double) * n);
	for (int h = 0; h < HEADS; h++)
		for (int r = 0; r < G; r++) {
			const float *qr = q + (h * G + r) * D;
			const uint16_t *kh = k + (size_t)h * n * D, *vh = v + (size_t)h * n * D;
			double top = -INFINITY, l = 0, *o = want + (h * G + r) * D, *m = mag + (h * G + r) * D;
			for (int j = 0; j < n; j++) {
				double d = 0;
				for (int c = 0; c < D; c++)
					d += (double)qr[c] * _cvtsh_ss(kh[(size_t)j * D + c]);
				p[j] = scale * d, top = fmax(top, p[j]);
			}
			for (int j = 0; j < n; j++)
				l += p[j] = exp(p[j] - top);
			for (int c = 0; c < D; c++)
				o[c] = m[c] = 0;
			for (int j = 0; j < n; j++)
				for (int c = 0; c < D; c++) {
					double x = _cvtsh_ss(vh[(size_t)j * D + c]);
					o[c] += p[j] / l * x, m[c] += p[j] / l * fabs(x);
				}
		}
	free(p);
}

// The worst error of the states st[0 … HEADS−1] relative to Σⱼ pⱼ·|vⱼ|.
static double check(const struct state *st, const double *want, const double *mag) {
	double worst = 0;
	for (int h = 0; h < HEADS; h++)
		for (int r = 0; r < G; r++)
			for (int c = 0; c < D; c++) {
				int i = (h * G + r) * D + c;
				worst = fmax(worst, fabs(st[h].acc[r * D + c] / st[h].l[r] - want[i]) / mag[i]);
			}
	return worst;
}

static int cmpDouble(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

// The q-quantile of x[0 … n−1] (0.5: the median), by the nearest rank.
static double quantile(const double *x, int n, double q) {
	double s[REPS];
	memcpy(s, x, sizeof(double) * n);
	qsort(s, n, sizeof(double), cmpDouble);
	return s[(int)(q * (n - 1) + 0.5)];
}

enum { HEAD, TOKEN, PAGES16, PAGES64, OWN16, READ, KINDS };
static const char *names[KINDS] = {"head", "token", "pages16", "pages64", "pages16-own", "read"};

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 2048;
	if (n < B || n % B) {
		fprintf(stderr, "want n a multiple of %d\n", B);
		return 2;
	}
	size_t per = (size_t)n * D, all = per * HEADS;
	uint16_t *K = aligned_alloc(4096, all * 2), *V = aligned_alloc(4096, all * 2);
	uint64_t x = 88172645463325252ull; // xorshift: halves in ±[0.25, 2), as interleave_avx2.c
	for (size_t i = 0; i < all; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		K[i] = 0x3400 + (x & 0x7ff) + (x >> 63 << 15);
		V[i] = 0x3400 + (x >> 16 & 0x7ff) + (x >> 62 << 15);
	}
	static float q[HEADS * G * D];
	for (int i = 0; i < HEADS * G * D; i++)
		q[i] = (float)((i * 7919) % 200 - 100) / 100.f;
	float scale = 1 / sqrtf(D);

	// Token-major copies.
	uint16_t *Kt = aligned_alloc(4096, all * 2), *Vt = aligned_alloc(4096, all * 2);
	for (int h = 0; h < HEADS; h++)
		for (int j = 0; j < n; j++) {
			memcpy(Kt + ((size_t)j * HEADS + h) * D, K + h * per + (size_t)j * D, D * 2);
			memcpy(Vt + ((size_t)j * HEADS + h) * D, V + h * per + (size_t)j * D, D * 2);
		}

	// Pages in shuffled slots of one K arena and one V arena: page p of head h (entry
	// h·n/P + p of the page lists) in slot perm[h·n/P + p] of both.
	const int sizes[2] = {16, 64};
	const uint16_t **kp[3], **vp[3];
	for (int s = 0; s < 2; s++) {
		int P = sizes[s], pages = HEADS * (n / P), *perm = malloc(sizeof(int) * pages);
		uint16_t *ka = aligned_alloc(4096, all * 2), *va = aligned_alloc(4096, all * 2);
		kp[s] = malloc(sizeof(uint16_t *) * pages), vp[s] = malloc(sizeof(uint16_t *) * pages);
		for (int i = 0; i < pages; i++)
			perm[i] = i;
		shuffle(perm, pages);
		for (int i = 0; i < pages; i++) { // page i is rows i·P … of head-major K and V
			uint16_t *kd = ka + (size_t)perm[i] * P * D, *vd = va + (size_t)perm[i] * P * D;
			memcpy(kd, K + (size_t)i * P * D, (size_t)P * D * 2), memcpy(vd, V + (size_t)i * P * D, (size_t)P * D * 2);
			kp[s][i] = kd, vp[s][i] = vd;
		}
		free(perm);
	}
	// Pages of 16 rows, each its own allocation, in the order a growing cache makes them,
	// 0–3 small allocations of 16–1024 bytes after each (never freed, as a heap in use).
	{
		int P = 16, pages = n / P;
		kp[2] = malloc(sizeof(uint16_t *) * HEADS * pages), vp[2] = malloc(sizeof(uint16_t *) * HEADS * pages);
		for (int p = 0; p < pages; p++)
			for (int h = 0; h < HEADS; h++)
				for (int kv = 0; kv < 2; kv++) {
					uint16_t *d = aligned_alloc(64, P * D * 2);
					memcpy(d, (kv ? V : K) + h * per + (size_t)p * P * D, P * D * 2);
					(kv ? vp : kp)[2][h * pages + p] = d;
					for (int extra = next64() % 4; extra > 0; extra--)
						memset(malloc(16 + next64() % 1009), 1, 16);
				}
	}

	static double want[HEADS * G * D], mag[HEADS * G * D];
	reference(want, mag, q, K, V, n, scale);

	static struct state st[KINDS][HEADS];
	volatile float sink = 0;
	double t[KINDS][REPS];
	double fmaPeak = peak();
	// Rep −1 is the warm-up. Each timed run follows an untimed run of the same layout, so
	// that where K+V fit in the L3 (n = 2,048: 8 MiB) every run starts warm: after the
	// other layouts' 32 MiB a run found its data there or not depending on the order
	// (0.53 or 0.9 ms for head here). Where they do not (16,384), it changes nothing.
	for (int rep = -1; rep < REPS; rep++) {
		int order[KINDS];
		for (int i = 0; i < KINDS; i++)
			order[i] = i;
		if (rep >= 0)
			shuffle(order, KINDS);
		for (int i = 0; i < 2 * KINDS; i++) {
			int kind = order[i / 2];
			struct state *s = st[kind];
			for (int h = 0; h < HEADS; h++) {
				for (int r = 0; r < G; r++)
					s[h].m[r] = -INFINITY, s[h].l[r] = 0;
				memset(s[h].acc, 0, sizeof s[h].acc);
			}
			double t0 = now();
			switch (kind) {
			case HEAD:
				layoutHead(s, q, K, V, n, scale);
				break;
			case TOKEN:
				layoutToken(s, q, Kt, Vt, n, scale);
				break;
			case PAGES16:
			case PAGES64:
				layoutPages(s, q, kp[kind - PAGES16], vp[kind - PAGES16], sizes[kind - PAGES16], n, scale);
				break;
			case OWN16:
				layoutPages(s, q, kp[2], vp[2], 16, n, scale);
				break;
			case READ:
				for (int h = 0; h < HEADS; h++)
					sink += dotKV(K + h * per, V + h * per, per);
				break;
			}
			if (rep >= 0 && i % 2)
				t[kind][rep] = now() - t0;
		}
	}

	double flopLimit = 4.0 * D * G * n * HEADS / fmaPeak, read = quantile(t[READ], REPS, 0.5), roof = fmax(flopLimit, read);
	printf("n=%d (K+V %.0f MiB): FMA peak %.1f GFLOP/s, FMA limit %.3f ms; read median %.3f ms (%.1f GB/s), best %.3f ms; "
	       "roofline %.3f ms; %d reps in random order\n",
	       n, all * 4 / 1048576.0, fmaPeak / 1e9, flopLimit * 1e3, read * 1e3, all * 4 / read / 1e9, quantile(t[READ], REPS, 0) * 1e3,
	       roof * 1e3, REPS);
	printf("  %-12s %9s %6s %9s %6s %22s %7s %9s %s\n", "layout", "best ms", "÷head", "median ms", "÷head", "rep ratio med [IQR]",
	       "÷roof", "rel. err", "bits = head");
	double headBest = quantile(t[HEAD], REPS, 0), headMed = quantile(t[HEAD], REPS, 0.5);
	for (int kind = 0; kind < READ; kind++) {
		double ratio[REPS];
		for (int rep = 0; rep < REPS; rep++)
			ratio[rep] = t[kind][rep] / t[HEAD][rep];
		double best = quantile(t[kind], REPS, 0), med = quantile(t[kind], REPS, 0.5);
		int same = memcmp(st[kind], st[HEAD], sizeof st[HEAD]) == 0;
		printf("  %-12s %9.3f %6.3f %9.3f %6.3f %6.3f [%6.3f, %6.3f] %7.2f %9.1e %s\n", names[kind], best * 1e3, best / headBest, med * 1e3,
		       med / headMed, quantile(ratio, REPS, 0.5), quantile(ratio, REPS, 0.25), quantile(ratio, REPS, 0.75), med / roof,
		       check(st[kind], want, mag), same ? "yes" : "NO");
	}
	return 0;
}
