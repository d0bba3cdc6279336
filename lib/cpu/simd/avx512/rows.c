/*
 * simd/avx512/rows.c - the AVX-512 level's row kernels of SOFT_MAX, the
 * norms, SUM and the binary ops (contracts: simd/kernels.h).
 *
 * Sums are kept in double lanes (each group of eight floats widened to a
 * vector of eight doubles, four accumulators), the same precision as the
 * other levels'; only the order of the additions differs.  The binary ops
 * and scale are single IEEE operations, so they equal the generic level
 * bit for bit; softmax_exp_sum has the bound of vmath.h's exp (2.5e-7
 * relative).  The last partial vector of a row goes through a lane mask:
 * no memory outside the row is read or written.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>

#include "ggml-impl.h"
#include "intrin.h"
#include "avx512.h"
#include "vmath.h"

float ggml__avx512_reduce_max(int64_t n, const float *x)
{
    /* vmaxps gives its second operand when the first is NaN: NaN is skipped,
       and no lane of the accumulators is ever NaN */
    __m512 acc0 = _mm512_set1_ps(-INFINITY), acc1 = acc0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        acc0 = _mm512_max_ps(_mm512_loadu_ps(x + i), acc0);
        acc1 = _mm512_max_ps(_mm512_loadu_ps(x + i + 16), acc1);
    }
    for (; i + 16 <= n; i += 16)
        acc0 = _mm512_max_ps(_mm512_loadu_ps(x + i), acc0);
    if (i < n) {
        /* the lanes outside the mask keep acc1 */
        const __mmask16 m = ggml__avx512_first_lanes(n - i);
        acc1 = _mm512_mask_max_ps(acc1, m, _mm512_maskz_loadu_ps(m, x + i), acc1);
    }
    return _mm512_reduce_max_ps(_mm512_max_ps(acc0, acc1));
}

/* The upper eight floats of v. */
static inline __m256 upper_half(__m512 v)
{
    return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

/* The sum of the eight doubles of v. */
static inline double hsum_pd(__m512d v)
{
    const __m256d s4 = _mm256_add_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd(v, 1));
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd(s4, 1));
    s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
    return _mm_cvtsd_f64(s);
}

/* Adds the sixteen floats of v to two double accumulators. */
static inline void add_pd(__m512 v, __m512d *lo, __m512d *hi)
{
    *lo = _mm512_add_pd(*lo, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    *hi = _mm512_add_pd(*hi, _mm512_cvtps_pd(upper_half(v)));
}

double ggml__avx512_softmax_exp_sum(int64_t n, float *y, const float *x, float max)
{
    const __m512 vmax = _mm512_set1_ps(max);
    __m512d acc[4] = { _mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd() };
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512 e0 = avx512_exp(_mm512_sub_ps(_mm512_loadu_ps(x + i), vmax));
        const __m512 e1 = avx512_exp(_mm512_sub_ps(_mm512_loadu_ps(x + i + 16), vmax));
        _mm512_storeu_ps(y + i, e0);
        _mm512_storeu_ps(y + i + 16, e1);
        add_pd(e0, &acc[0], &acc[1]);
        add_pd(e1, &acc[2], &acc[3]);
    }
    /* the last 1..31 elements, sixteen at a time; lanes outside the row add 0 */
    for (; i < n; i += 16) {
        const __mmask16 m = ggml__avx512_first_lanes(n - i < 16 ? n - i : 16);
        const __m512 e = _mm512_maskz_mov_ps(m, avx512_exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vmax)));
        _mm512_mask_storeu_ps(y + i, m, e);
        add_pd(e, &acc[0], &acc[1]);
    }
    return hsum_pd(_mm512_add_pd(_mm512_add_pd(acc[0], acc[1]), _mm512_add_pd(acc[2], acc[3])));
}

void ggml__avx512_scale(int64_t n, float *y, const float *x, float s)
{
    const __m512 vs = _mm512_set1_ps(s);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(x + i), vs));
    if (i < n) {
        const __mmask16 m = ggml__avx512_first_lanes(n - i);
        _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), vs));
    }
}

/*
 * Defines ggml__avx512_<name>: the sum in double of term(v, acc, k) over
 * the x[i] widened to double, eight at a time (v a vector of eight, k the
 * mask of its lanes inside the row: a term adds 0 for the lanes outside).
 */
#define DEFINE_PD_SUM(name, extra_param, setup, term)                                        \
    double ggml__avx512_##name(int64_t n, const float *x extra_param)                       \
    {                                                                                        \
        setup;                                                                               \
        const __mmask8 all = 0xff;                                                           \
        __m512d acc0 = _mm512_setzero_pd(), acc1 = acc0, acc2 = acc0, acc3 = acc0;           \
        int64_t i = 0;                                                                       \
        for (; i + 32 <= n; i += 32) {                                                       \
            acc0 = term(_mm512_cvtps_pd(_mm256_loadu_ps(x + i)), acc0, all);                 \
            acc1 = term(_mm512_cvtps_pd(_mm256_loadu_ps(x + i + 8)), acc1, all);             \
            acc2 = term(_mm512_cvtps_pd(_mm256_loadu_ps(x + i + 16)), acc2, all);            \
            acc3 = term(_mm512_cvtps_pd(_mm256_loadu_ps(x + i + 24)), acc3, all);            \
        }                                                                                    \
        for (; i + 8 <= n; i += 8)                                                           \
            acc0 = term(_mm512_cvtps_pd(_mm256_loadu_ps(x + i)), acc0, all);                 \
        if (i < n) {                                                                         \
            /* 1..7 elements: masked lanes load as 0 */                                      \
            const __mmask16 m = ggml__avx512_first_lanes(n - i);                                   \
            const __m512 v = _mm512_maskz_loadu_ps(m, x + i);                                \
            acc1 = term(_mm512_cvtps_pd(_mm512_castps512_ps256(v)), acc1, (__mmask8) m);     \
        }                                                                                    \
        return hsum_pd(_mm512_add_pd(_mm512_add_pd(acc0, acc1), _mm512_add_pd(acc2, acc3))); \
    }

#define NO_PARAM
#define NO_SETUP (void) 0
#define MEAN_PARAM , double mean
#define MEAN_SETUP const __m512d vmean = _mm512_set1_pd(mean)
/* a masked-out lane is 0: it adds 0 to a sum and to a sum of squares */
#define TERM_SUM(v, acc, k) ((void) (k), _mm512_add_pd(acc, v))
#define TERM_SQ(v, acc, k)  ((void) (k), _mm512_fmadd_pd(v, v, acc))
/* but 0 - mean is not 0: the difference is zeroed outside k */
#define TERM_SQ_DEV(v, acc, k) sq_dev_term(v, acc, k, vmean)

static inline __m512d sq_dev_term(__m512d v, __m512d acc, __mmask8 k, __m512d vmean)
{
    const __m512d d = _mm512_maskz_sub_pd(k, v, vmean);
    return _mm512_fmadd_pd(d, d, acc);
}

DEFINE_PD_SUM(sum, NO_PARAM, NO_SETUP, TERM_SUM)
DEFINE_PD_SUM(sum_sq, NO_PARAM, NO_SETUP, TERM_SQ)
DEFINE_PD_SUM(sum_sq_dev, MEAN_PARAM, MEAN_SETUP, TERM_SQ_DEV)

/* Defines the binary and binary_scalar entries of one operator (vop: the 16-lane operation). */
#define DEFINE_BINARY(name, vop)                                                               \
    void ggml__avx512_##name(int64_t n, float *z, const float *x, const float *y)              \
    {                                                                                          \
        int64_t i = 0;                                                                         \
        for (; i + 32 <= n; i += 32) {                                                         \
            const __m512 a0 = vop(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i));             \
            const __m512 a1 = vop(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(y + i + 16));   \
            _mm512_storeu_ps(z + i, a0);                                                       \
            _mm512_storeu_ps(z + i + 16, a1);                                                  \
        }                                                                                      \
        for (; i < n; i += 16) {                                                               \
            const __mmask16 m = ggml__avx512_first_lanes(n - i < 16 ? n - i : 16);                  \
            _mm512_mask_storeu_ps(z + i, m, vop(_mm512_maskz_loadu_ps(m, x + i),               \
                                                _mm512_maskz_loadu_ps(m, y + i)));             \
        }                                                                                      \
    }                                                                                          \
    void ggml__avx512_##name##_scalar(int64_t n, float *z, const float *x, float s)            \
    {                                                                                          \
        const __m512 vs = _mm512_set1_ps(s);                                                   \
        int64_t i = 0;                                                                         \
        for (; i + 16 <= n; i += 16)                                                           \
            _mm512_storeu_ps(z + i, vop(_mm512_loadu_ps(x + i), vs));                          \
        if (i < n) {                                                                           \
            const __mmask16 m = ggml__avx512_first_lanes(n - i);                                     \
            _mm512_mask_storeu_ps(z + i, m, vop(_mm512_maskz_loadu_ps(m, x + i), vs));         \
        }                                                                                      \
    }

DEFINE_BINARY(add, _mm512_add_ps)
DEFINE_BINARY(sub, _mm512_sub_ps)
DEFINE_BINARY(mul, _mm512_mul_ps)
DEFINE_BINARY(div, _mm512_div_ps)

/*
 * Defines ggml__avx512_<name>_stream, the binary_stream entry: the binary
 * entry with non-temporal stores for the whole 64-byte lines of z (the
 * ends through the plain function: the same bits).
 */
#define DEFINE_BINARY_STREAM(name, vop)                                                       \
    void ggml__avx512_##name##_stream(int64_t n, float *z, const float *x, const float *y)     \
    {                                                                                         \
        const int64_t head = (int64_t) (((64u - ((uintptr_t) z & 63u)) & 63u) / sizeof(float)); \
        if (head >= n) {                                                                      \
            ggml__avx512_##name(n, z, x, y);                                                   \
            return;                                                                           \
        }                                                                                     \
        ggml__avx512_##name(head, z, x, y);                                                    \
        int64_t i = head;                                                                     \
        for (; i + 16 <= n; i += 16)                                                          \
            _mm512_stream_ps(z + i, vop(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));                     \
        _mm_sfence();                                                                         \
        ggml__avx512_##name(n - i, z + i, x + i, y + i);                                       \
    }

DEFINE_BINARY_STREAM(add, _mm512_add_ps)
DEFINE_BINARY_STREAM(sub, _mm512_sub_ps)
DEFINE_BINARY_STREAM(mul, _mm512_mul_ps)
DEFINE_BINARY_STREAM(div, _mm512_div_ps)
