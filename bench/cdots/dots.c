// dots.c: the C side of two dot-product comparisons that ../../shared/tools/cref/run does
// not make, timed as it times its kernels (median of 11 reps of at least 2 ms, one
// volatile float accumulating the results). bench/vs-c.sh builds and runs it with the
// C reference's flags when gcc is present; it is a measuring tool, not part of the Go
// module (this directory has no Go files, and the module uses no cgo).
//
// 1. A C twin of DotF32F16 (float32 · fp16, converted with F16C), which the C
//    reference lacks, in AVX-512 and AVX2, and an AVX2 fp32 · fp32 dot for DotF32's
//    AVX2 row. Each keeps 64 elements per iteration in four (AVX-512) or eight (AVX2)
//    accumulators, like the C reference's AVX-512 fp32 dot.
//
// 2. The AVX-512 dots (the C reference's fp32 loop, written out again here, and the
//    twin), each timed as a plain C call and called the way Go calls an assembly
//    function (ABI0), as kvsimd's dot products call theirs: the caller stores the
//    arguments, four words (two pointers, a length, and the variant's number with the
//    difference of the lengths), into its frame, the callee loads them from there,
//    checks the variant and the lengths with one comparison, and stores its result
//    into the frame, from which the caller loads it. A Go benchmark loop also keeps
//    its loop counter in memory, which this does not copy. The ratio of the two is
//    what the calling convention alone costs C's own kernel.
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define REPS 11
#define TARGET512 target("avx512f,avx512bw,avx512vl,avx512dq")
#define AVX512 __attribute__((noinline, TARGET512))
// BODY512 is inlined into both the plain function and its ABI0 frame twin.
#define BODY512 static inline __attribute__((always_inline, TARGET512))

volatile float sinkf;

static double now_s(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static float *afloats(size_t n) {
	float *p;
	if (posix_memalign((void **)&p, 4096, n * 4)) abort();
	for (size_t i = 0; i < n; i++) p[i] = (float)rand() / RAND_MAX - 0.5f;
	return p;
}

static uint16_t *ahalves(size_t n) {
	uint16_t *p;
	if (posix_memalign((void **)&p, 4096, n * 2)) abort();
	for (size_t i = 0; i < n; i++) p[i] = _cvtss_sh((float)rand() / RAND_MAX - 0.5f, 0);
	return p;
}

// The AVX-512 bodies: the C reference's fp32 dot, four accumulators of sixteen lanes,
// with b loaded by LOADB: a float32 load or an fp16 load and conversion.
#define FMA16(L, j) s##j = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16 * j), L(b + i + 16 * j), s##j)
#define DOT_AVX512(name, T, LOADB, SCALARB)                                                    \
	BODY512 float name(const float *a, const T *b, size_t n) {                                 \
		__m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;                            \
		size_t i = 0;                                                                          \
		for (; i + 64 <= n; i += 64) {                                                         \
			FMA16(LOADB, 0); FMA16(LOADB, 1); FMA16(LOADB, 2); FMA16(LOADB, 3);                 \
		}                                                                                      \
		float r = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3))); \
		for (; i < n; i++) r += a[i] * SCALARB(b[i]);                                          \
		return r;                                                                              \
	}
#define LOADF512(p) _mm512_loadu_ps(p)
#define LOADH512(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define SAME(x) (x)
DOT_AVX512(f32_avx512, float, LOADF512, SAME)
DOT_AVX512(f32f16_avx512, uint16_t, LOADH512, _cvtsh_ss)

static inline float hsum256(__m256 v) {
	__m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	x = _mm_add_ps(x, _mm_movehl_ps(x, x));
	return _mm_cvtss_f32(_mm_add_ss(x, _mm_movehdup_ps(x)));
}

// The AVX2 dots: eight accumulators of eight lanes, 64 elements per iteration (named
// ones: gcc keeps an array of them in memory). Bodies, inlined into the plain
// functions and into their ABI0 frame twins, as the AVX-512 ones are.
#define FMA8(L, j) s##j = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8 * j), L(b + i + 8 * j), s##j)
#define DOT_AVX2(name, T, LOADB, SCALARB)                                                     \
	static inline __attribute__((always_inline)) float name(const float *a, const T *b, size_t n) { \
		__m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0; \
		size_t i = 0;                                                                          \
		for (; i + 64 <= n; i += 64) {                                                         \
			FMA8(LOADB, 0); FMA8(LOADB, 1); FMA8(LOADB, 2); FMA8(LOADB, 3);                     \
			FMA8(LOADB, 4); FMA8(LOADB, 5); FMA8(LOADB, 6); FMA8(LOADB, 7);                     \
		}                                                                                      \
		s0 = _mm256_add_ps(_mm256_add_ps(s0, s4), _mm256_add_ps(s1, s5));                      \
		s2 = _mm256_add_ps(_mm256_add_ps(s2, s6), _mm256_add_ps(s3, s7));                      \
		float r = hsum256(_mm256_add_ps(s0, s2));                                              \
		for (; i < n; i++) r += a[i] * SCALARB(b[i]);                                          \
		return r;                                                                              \
	}
#define LOADF256(p) _mm256_loadu_ps(p)
#define LOADH256(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
DOT_AVX2(f32_avx2, float, LOADF256, SAME)
DOT_AVX2(f32f16_avx2, uint16_t, LOADH256, _cvtsh_ss)
__attribute__((noinline)) float dot_f32_avx2(const float *a, const float *b, size_t n) { return f32_avx2(a, b, n); }
__attribute__((noinline)) float dot_f32f16_avx2(const float *a, const uint16_t *b, size_t n) {
	return f32f16_avx2(a, b, n);
}

AVX512 float dot_f32_avx512(const float *a, const float *b, size_t n) { return f32_avx512(a, b, n); }

AVX512 float dot_f32f16_avx512(const float *a, const uint16_t *b, size_t n) { return f32f16_avx512(a, b, n); }

// goFrame is the argument frame of the assembly entry asm.DotF32(a, b *float32, n int,
// sel int64) float32 under ABI0, and of asm.DotF32F16, whose b is a *uint16. sel is the
// variant's number with len(b) − len(a) above its low byte (asm.Select): one comparison
// checks both.
struct goFrame {
	const float *a;
	const void *b;
	size_t n;
	int64_t sel;
	float ret;
};

// The AVX2 twins check for the AVX2 variant's number, 1. DotF16's twin runs the C
// reference's fp16 dot loop (kern.c's dot_avx2: four accumulators, 32 halves per
// iteration), written out again here with its a and b both halves.
static inline __attribute__((always_inline)) float f16_avx2(const uint16_t *a, const uint16_t *b, size_t n) {
	__m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
	size_t i = 0;
#define H8(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
	for (; i + 32 <= n; i += 32) {
		s0 = _mm256_fmadd_ps(H8(a + i), H8(b + i), s0);
		s1 = _mm256_fmadd_ps(H8(a + i + 8), H8(b + i + 8), s1);
		s2 = _mm256_fmadd_ps(H8(a + i + 16), H8(b + i + 16), s2);
		s3 = _mm256_fmadd_ps(H8(a + i + 24), H8(b + i + 24), s3);
	}
#undef H8
	float r = hsum256(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
	for (; i < n; i++) r += _cvtsh_ss(a[i]) * _cvtsh_ss(b[i]);
	return r;
}
__attribute__((noinline)) float dot_f16_avx2(const uint16_t *a, const uint16_t *b, size_t n) { return f16_avx2(a, b, n); }
__attribute__((noinline)) void dot_f32_avx2_abi0(volatile struct goFrame *f) {
	if (f->sel != 1) return;
	f->ret = f32_avx2(f->a, f->b, f->n);
}
__attribute__((noinline)) void dot_f32f16_avx2_abi0(volatile struct goFrame *f) {
	if (f->sel != 1) return;
	f->ret = f32f16_avx2(f->a, f->b, f->n);
}
__attribute__((noinline)) void dot_f16_avx2_abi0(volatile struct goFrame *f) {
	if (f->sel != 1) return;
	f->ret = f16_avx2((const uint16_t *)f->a, f->b, f->n);
}
AVX512 void dot_f32_avx512_abi0(volatile struct goFrame *f) {
	if (f->sel != 2) return;
	f->ret = f32_avx512(f->a, f->b, f->n);
}

AVX512 void dot_f32f16_avx512_abi0(volatile struct goFrame *f) {
	if (f->sel != 2) return;
	f->ret = f32f16_avx512(f->a, f->b, f->n);
}

// callABI0 computes sel and stores the arguments into a frame on the stack, as the
// inlined Go kernel does before each call, calls body, and loads the result.
static inline float callABI0(void (*body)(volatile struct goFrame *), int isa, const void *a, const void *b,
                             size_t na, size_t nb) {
	volatile struct goFrame f;
	f.a = a, f.b = b, f.n = na, f.sel = isa | (int64_t)(nb - na) << 8;
	body(&f);
	return f.ret;
}

#define TIME(label, CALL)                                                                   \
	do {                                                                                    \
		double v[REPS], t0 = now_s();                                                       \
		CALL;                                                                               \
		double one = now_s() - t0;                                                          \
		long it = (long)(2e-3 / (one < 1e-9 ? 1e-9 : one));                                 \
		if (it < 1) it = 1;                                                                 \
		for (int r = 0; r < REPS; r++) {                                                    \
			double ta = now_s();                                                            \
			for (long k = 0; k < it; k++) { CALL; }                                         \
			v[r] = (now_s() - ta) / it;                                                     \
		}                                                                                   \
		qsort(v, REPS, sizeof v[0], cmp);                                                   \
		printf("%-40s %12.1f ns/call\n", label, v[REPS / 2] * 1e9);                        \
		fflush(stdout);                                                                     \
	} while (0)

int main(void) {
	int has512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
	srand(1);
	// The first timings of a fresh process ran up to three times slower in one round out
	// of three: warm the core up for 0.2 s first, as the C reference's clock measurement
	// does before its timings.
	{
		volatile size_t n = 1024; // not a constant gcc could specialise the kernel for
		float *a = afloats(n), *b = afloats(n);
		for (double t0 = now_s(); now_s() - t0 < 0.2;)
			for (int k = 0; k < 1000; k++) sinkf += dot_f32_avx2(a, b, n);
		free(a), free(b);
	}
	size_t sizes[] = {128, 1024};
	for (int t = 0; t < 2; t++) {
		size_t n = sizes[t];
		float *a = afloats(n), *b = afloats(n);
		uint16_t *h = ahalves(n);
		// The twins must compute what they are timed for: a scalar float64 reference.
		uint16_t *g = ahalves(n);
		double want = 0, wanth = 0, wanthh = 0;
		for (size_t i = 0; i < n; i++)
			want += (double)a[i] * b[i], wanth += (double)a[i] * _cvtsh_ss(h[i]),
				wanthh += (double)_cvtsh_ss(g[i]) * _cvtsh_ss(h[i]);
		float got[] = {
			dot_f32_avx2(a, b, n),
			dot_f32f16_avx2(a, h, n),
			has512 ? dot_f32_avx512(a, b, n) : (float)want,
			has512 ? dot_f32f16_avx512(a, h, n) : (float)wanth,
			has512 ? callABI0(dot_f32_avx512_abi0, 2, a, b, n, n) : (float)want,
			has512 ? callABI0(dot_f32f16_avx512_abi0, 2, a, h, n, n) : (float)wanth,
			callABI0(dot_f32_avx2_abi0, 1, a, b, n, n),
			callABI0(dot_f32f16_avx2_abi0, 1, a, h, n, n),
			callABI0(dot_f16_avx2_abi0, 1, g, h, n, n),
		};
		double ref[] = {want, wanth, want, wanth, want, wanth, want, wanth, wanthh};
		for (int i = 0; i < 9; i++)
			if (got[i] - ref[i] > 1e-3 || ref[i] - got[i] > 1e-3) {
				fprintf(stderr, "dots.c: n=%zu: dot %d = %g, want %g\n", n, i, got[i], ref[i]);
				return 1;
			}
		printf("-- cdots n=%zu\n", n);
		TIME("dot_f32_avx2(C)", sinkf += dot_f32_avx2(a, b, n));
		TIME("dot_f32f16_avx2(C)", sinkf += dot_f32f16_avx2(a, h, n));
		TIME("dot_f16_avx2(C)", sinkf += dot_f16_avx2(g, h, n));
		TIME("dot_f32f16_avx2(C, Go ABI0 frame)", sinkf += callABI0(dot_f32f16_avx2_abi0, 1, a, h, n, n));
		TIME("dot_f32_avx2(C, Go ABI0 frame)", sinkf += callABI0(dot_f32_avx2_abi0, 1, a, b, n, n));
		TIME("dot_f16_avx2(C, Go ABI0 frame)", sinkf += callABI0(dot_f16_avx2_abi0, 1, g, h, n, n));
		if (has512) {
			TIME("dot_f32f16_avx512(C)", sinkf += dot_f32f16_avx512(a, h, n));
			TIME("dot_f32_avx512(C)", sinkf += dot_f32_avx512(a, b, n));
			TIME("dot_f32f16_avx512(C, Go ABI0 frame)", sinkf += callABI0(dot_f32f16_avx512_abi0, 2, a, h, n, n));
			TIME("dot_f32_avx512(C, Go ABI0 frame)", sinkf += callABI0(dot_f32_avx512_abi0, 2, a, b, n, n));
		}
		free(a), free(b), free(h), free(g);
	}
	return 0;
}
