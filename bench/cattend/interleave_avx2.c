// interleave_avx2.c: a C study for issue 42 on AVX2 hosts (no AVX-512 needed), not part
// of the Go module: is one instruction stream that scores block b+1 while it adds block
// b's value rows faster than the two phases kernels.Attend runs? The same flash-decoding
// loop as bench/cattend/attend.c in AVX2 + FMA + F16C intrinsics (fp16 K and V, 8 KV
// heads of G = 4 query rows, dim 128, head-major, blocks of 256 keys):
//
//   - phased: score the block 2 keys × 4 rows at a time, take its exponentials, add its
//     value rows in passes of 2 rows × 32 columns (AVX2's register file);
//   - phased+prefetch: the same, prefetching the keys 16 ahead and the block's value rows
//     while scoring and the next block's keys while adding, as kernels.Attend does;
//   - interleaved: while the passes add block b's values, every 32 keys of a pass score 2
//     keys of block b+1 (the blocks' work alternates at that grain in one stream).
//
// Each kernel's time is the best of 15 layer calls; the FMA limit is 4·dim·G flops a key
// at the peak of 12 independent FMA chains timed here, and the read limit K+V's bytes at
// the speed of a dot of K with V over the same bytes. It checks every kernel's output
// against float64 (worst error relative to Σⱼ pⱼ·|vⱼ|).
//
//	gcc -O3 -mavx2 -mfma -mf16c bench/cattend/interleave_avx2.c -lm && ./a.out [n]
#include "avx2.h"

static float sA[G * B], sB[G * B];

__attribute__((noinline)) static void phased(struct state *st, const float *q, const uint16_t *k, const uint16_t *v, int n, float scale, int prefetch) {
	for (int j0 = 0; j0 < n; j0 += B) {
		const uint16_t *kb = k + (size_t)j0 * D, *vb = v + (size_t)j0 * D;
		for (int j = 0; j < B; j += 2) {
			if (prefetch) {
				if (j0 + j + 17 < n)
					prefetchRow(kb + (j + 16) * D), prefetchRow(kb + (j + 17) * D);
				prefetchRow(vb + j * D), prefetchRow(vb + (j + 1) * D);
			}
			score2(sA, q, kb + j * D, kb + (j + 1) * D, j, scale);
		}
		weights(st, sA);
		for (int g = 0; g < G; g += 2)
			for (int c = 0; c < D; c += 32) {
				if (prefetch && g == 0 && c == 0 && j0 + B < n)
					for (int j = 0; j < B; j++)
						prefetchRow(kb + (B + j) * D);
				addPass(st->acc, sA, vb, D, NULL, g, c, 0, B);
			}
	}
}

__attribute__((noinline)) static void interleaved(struct state *st, const float *q, const uint16_t *k, const uint16_t *v, int n, float scale) {
	float *cur = sA, *next = sB;
	for (int j = 0; j < B; j += 2)
		score2(cur, q, k + j * D, k + (j + 1) * D, j, scale);
	for (int j0 = 0; j0 < n; j0 += B) {
		weights(st, cur);
		const uint16_t *vb = v + (size_t)j0 * D, *kn = j0 + B < n ? k + (size_t)(j0 + B) * D : NULL;
		int scored = 0;
		for (int g = 0; g < G; g += 2)
			for (int c = 0; c < D; c += 32)
				for (int j = 0; j < B; j += 32) {
					addPass(st->acc, cur, vb, D, NULL, g, c, j, j + 32);
					if (kn && scored < B)
						score2(next, q, kn + scored * D, kn + (scored + 1) * D, scored, scale), scored += 2;
				}
		while (kn && scored < B)
			score2(next, q, kn + scored * D, kn + (scored + 1) * D, scored, scale), scored += 2;
		float *t = cur;
		cur = next, next = t;
	}
}

static double check(const struct state *st, const float *q, const uint16_t *k, const uint16_t *v, int n, float scale) {
	double worst = 0, *p = malloc(sizeof(double) * n);
	for (int r = 0; r < G; r++) {
		double top = -INFINITY, l = 0;
		for (int j = 0; j < n; j++) {
			double d = 0;
			for (int c = 0; c < D; c++)
				d += (double)q[r * D + c] * _cvtsh_ss(k[(size_t)j * D + c]);
			p[j] = scale * d, top = fmax(top, p[j]);
		}
		for (int j = 0; j < n; j++)
			l += p[j] = exp(p[j] - top);
		for (int c = 0; c < D; c++) {
			double o = 0, mag = 0;
			for (int j = 0; j < n; j++) {
				double x = _cvtsh_ss(v[(size_t)j * D + c]);
				o += p[j] / l * x, mag += p[j] / l * fabs(x);
			}
			worst = fmax(worst, fabs(st->acc[r * D + c] / st->l[r] - o) / mag);
		}
	}
	free(p);
	return worst;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 2048;
	if (n < B || n % B) {
		fprintf(stderr, "want n a multiple of %d\n", B);
		return 2;
	}
	size_t per = (size_t)n * D;
	uint16_t *K = aligned_alloc(4096, per * HEADS * 2), *V = aligned_alloc(4096, per * HEADS * 2);
	uint64_t x = 88172645463325252ull; // xorshift: halves in ±[0.25, 2)
	for (size_t i = 0; i < per * HEADS; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		K[i] = 0x3400 + (x & 0x7ff) + (x >> 63 << 15);
		V[i] = 0x3400 + (x >> 16 & 0x7ff) + (x >> 62 << 15);
	}
	static float q[HEADS * G * D];
	for (int i = 0; i < HEADS * G * D; i++)
		q[i] = (float)((i * 7919) % 200 - 100) / 100.f;
	float scale = 1 / sqrtf(D);
	double fmaPeak = peak(), read = 1e9;
	volatile float sink = 0;
	for (int rep = 0; rep < 15; rep++) {
		double t = now();
		for (int h = 0; h < HEADS; h++)
			sink += dotKV(K + h * per, V + h * per, per);
		read = fmin(read, now() - t);
	}
	double flopLimit = 4.0 * D * G * n * HEADS / fmaPeak, roof = fmax(flopLimit, read);
	printf("n=%d: FMA peak %.1f GFLOP/s, FMA limit %.3f ms, read %.3f ms (%.1f GB/s), roofline %.3f ms\n", n, fmaPeak / 1e9,
	       flopLimit * 1e3, read * 1e3, per * HEADS * 4 / read / 1e9, roof * 1e3);
	const char *names[] = {"phased", "phased+prefetch", "interleaved"};
	for (int kind = 0; kind < 3; kind++) {
		static struct state st[HEADS];
		double best = 1e9;
		for (int rep = 0; rep < 15; rep++) {
			for (int h = 0; h < HEADS; h++) {
				for (int r = 0; r < G; r++)
					st[h].m[r] = -INFINITY, st[h].l[r] = 0;
				memset(st[h].acc, 0, sizeof st[h].acc);
			}
			double t = now();
			for (int h = 0; h < HEADS; h++)
				if (kind < 2)
					phased(&st[h], q + h * G * D, K + h * per, V + h * per, n, scale, kind);
				else
					interleaved(&st[h], q + h * G * D, K + h * per, V + h * per, n, scale);
			best = fmin(best, now() - t);
		}
		printf("  %-16s %.3f ms, %.1f ns a key, %.2f × roofline; worst rel. error %.1e\n", names[kind], best * 1e3,
		       best / ((double)n * HEADS) * 1e9, best / roof, check(&st[0], q, K, V, n, scale));
	}
	return 0;
}
