/*
 * simd/avx2/rows.c - the AVX2 level's row kernels of SOFT_MAX, the norms,
 * SUM and the binary ops (contracts: simd/kernels.h).
 *
 * Sums are kept in double lanes (each group of eight floats widened to two
 * vectors of four doubles, two groups per step: four accumulators), the
 * same precision as the generic level's; only the order of the additions
 * differs.  The binary ops are single IEEE operations, so they equal the
 * generic level bit for bit; softmax_exp_sum has the bound of vmath.h's
 * exp (2.5e-7 relative).
 */
#include "config.h"

#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "ggml-impl.h"
#include "avx2.h"
#include "vmath.h"

float ggml__avx2_reduce_max(int64_t n, const float *x)
{
    /* maxps gives its second operand when the first is NaN: NaN is skipped */
    __m256 acc0 = _mm256_set1_ps(-INFINITY), acc1 = acc0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        acc0 = _mm256_max_ps(_mm256_loadu_ps(x + i), acc0);
        acc1 = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), acc1);
    }
    for (; i + 8 <= n; i += 8)
        acc0 = _mm256_max_ps(_mm256_loadu_ps(x + i), acc0);
    acc0 = _mm256_max_ps(acc0, acc1);
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(acc0), _mm256_extractf128_ps(acc0, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    float max = _mm_cvtss_f32(m);
    for (; i < n; i++)
        max = x[i] > max ? x[i] : max;
    return max;
}

/* The sum of the four doubles of v. */
static inline double hsum_pd(__m256d v)
{
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
    return _mm_cvtsd_f64(s);
}

/* Adds the eight floats of v to two double accumulators. */
static inline void add_pd(__m256 v, __m256d *lo, __m256d *hi)
{
    *lo = _mm256_add_pd(*lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    *hi = _mm256_add_pd(*hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

double ggml__avx2_softmax_exp_sum(int64_t n, float *y, const float *x, float max)
{
    const __m256 vmax = _mm256_set1_ps(max);
    __m256d acc[4] = { _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd() };
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 e0 = avx2_exp(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmax));
        const __m256 e1 = avx2_exp(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), vmax));
        _mm256_storeu_ps(y + i, e0);
        _mm256_storeu_ps(y + i + 8, e1);
        add_pd(e0, &acc[0], &acc[1]);
        add_pd(e1, &acc[2], &acc[3]);
    }
    if (i < n) {
        /* the last 1..15 elements, eight at a time; masked lanes add exp(-inf) = 0 */
        for (; i < n; i += 8) {
            const __m256i m = avx2_first_lanes(n - i < 8 ? n - i : 8);
            const __m256 v = _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), _mm256_maskload_ps(x + i, m),
                                              _mm256_castsi256_ps(m));
            const __m256 e = avx2_exp(_mm256_sub_ps(v, vmax));
            _mm256_maskstore_ps(y + i, m, e);
            add_pd(e, &acc[0], &acc[1]);
        }
    }
    return hsum_pd(_mm256_add_pd(_mm256_add_pd(acc[0], acc[1]), _mm256_add_pd(acc[2], acc[3])));
}

void ggml__avx2_scale(int64_t n, float *y, const float *x, float s)
{
    const __m256 vs = _mm256_set1_ps(s);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), vs));
    for (; i < n; i++)
        y[i] = x[i] * s;
}

/*
 * Defines ggml__avx2_<name>: the sum in double of term(v) over the x[i]
 * widened to double (v a vector of four), then of the scalar term(t) over
 * the tail.
 */
#define DEFINE_PD_SUM(name, extra_param, setup, term, scalar_term)                           \
    double ggml__avx2_##name(int64_t n, const float *x extra_param)                         \
    {                                                                                        \
        setup;                                                                               \
        __m256d acc0 = _mm256_setzero_pd(), acc1 = acc0, acc2 = acc0, acc3 = acc0;           \
        int64_t i = 0;                                                                       \
        for (; i + 16 <= n; i += 16) {                                                       \
            __m256d v;                                                                       \
            v = _mm256_cvtps_pd(_mm_loadu_ps(x + i));                                        \
            acc0 = term(v, acc0);                                                            \
            v = _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4));                                    \
            acc1 = term(v, acc1);                                                            \
            v = _mm256_cvtps_pd(_mm_loadu_ps(x + i + 8));                                    \
            acc2 = term(v, acc2);                                                            \
            v = _mm256_cvtps_pd(_mm_loadu_ps(x + i + 12));                                   \
            acc3 = term(v, acc3);                                                            \
        }                                                                                    \
        for (; i + 4 <= n; i += 4) {                                                         \
            const __m256d v = _mm256_cvtps_pd(_mm_loadu_ps(x + i));                          \
            acc0 = term(v, acc0);                                                            \
        }                                                                                    \
        double sum = hsum_pd(_mm256_add_pd(_mm256_add_pd(acc0, acc1), _mm256_add_pd(acc2, acc3))); \
        for (; i < n; i++) {                                                                 \
            const double t = (double) x[i];                                                  \
            sum += scalar_term;                                                              \
        }                                                                                    \
        return sum;                                                                          \
    }

#define NO_PARAM
#define NO_SETUP (void) 0
#define MEAN_PARAM , double mean
#define MEAN_SETUP const __m256d vmean = _mm256_set1_pd(mean)
#define TERM_SUM(v, acc)    _mm256_add_pd(acc, v)
#define TERM_SQ(v, acc)     _mm256_fmadd_pd(v, v, acc)
#define TERM_SQ_DEV(v, acc) _mm256_fmadd_pd(_mm256_sub_pd(v, vmean), _mm256_sub_pd(v, vmean), acc)

DEFINE_PD_SUM(sum, NO_PARAM, NO_SETUP, TERM_SUM, t)
DEFINE_PD_SUM(sum_sq, NO_PARAM, NO_SETUP, TERM_SQ, t * t)
DEFINE_PD_SUM(sum_sq_dev, MEAN_PARAM, MEAN_SETUP, TERM_SQ_DEV, (t - mean) * (t - mean))

/* Defines the binary and binary_scalar entries of one operator. */
#define DEFINE_BINARY(name, vop, OP)                                                          \
    void ggml__avx2_##name(int64_t n, float *z, const float *x, const float *y)               \
    {                                                                                         \
        int64_t i = 0;                                                                        \
        for (; i + 16 <= n; i += 16) {                                                        \
            const __m256 a0 = vop(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i));            \
            const __m256 a1 = vop(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8));    \
            _mm256_storeu_ps(z + i, a0);                                                      \
            _mm256_storeu_ps(z + i + 8, a1);                                                  \
        }                                                                                     \
        for (; i < n; i++)                                                                    \
            z[i] = x[i] OP y[i];                                                              \
    }                                                                                         \
    void ggml__avx2_##name##_scalar(int64_t n, float *z, const float *x, float s)             \
    {                                                                                         \
        const __m256 vs = _mm256_set1_ps(s);                                                  \
        int64_t i = 0;                                                                        \
        for (; i + 8 <= n; i += 8)                                                            \
            _mm256_storeu_ps(z + i, vop(_mm256_loadu_ps(x + i), vs));                         \
        for (; i < n; i++)                                                                    \
            z[i] = x[i] OP s;                                                                 \
    }

DEFINE_BINARY(add, _mm256_add_ps, +)
DEFINE_BINARY(sub, _mm256_sub_ps, -)
DEFINE_BINARY(mul, _mm256_mul_ps, *)
DEFINE_BINARY(div, _mm256_div_ps, /)

/*
 * Defines ggml__avx2_<name>_stream, the binary_stream entry: the binary
 * entry with non-temporal stores for the whole 32-byte lines of z (the
 * ends through the plain function: the same bits).
 */
#define DEFINE_BINARY_STREAM(name, vop)                                                       \
    void ggml__avx2_##name##_stream(int64_t n, float *z, const float *x, const float *y)     \
    {                                                                                         \
        const int64_t head = (int64_t) (((32u - ((uintptr_t) z & 31u)) & 31u) / sizeof(float)); \
        if (head >= n) {                                                                      \
            ggml__avx2_##name(n, z, x, y);                                                   \
            return;                                                                           \
        }                                                                                     \
        ggml__avx2_##name(head, z, x, y);                                                    \
        int64_t i = head;                                                                     \
        for (; i + 8 <= n; i += 8)                                                          \
            _mm256_stream_ps(z + i, vop(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));                     \
        _mm_sfence();                                                                         \
        ggml__avx2_##name(n - i, z + i, x + i, y + i);                                       \
    }

DEFINE_BINARY_STREAM(add, _mm256_add_ps)
DEFINE_BINARY_STREAM(sub, _mm256_sub_ps)
DEFINE_BINARY_STREAM(mul, _mm256_mul_ps)
DEFINE_BINARY_STREAM(div, _mm256_div_ps)
