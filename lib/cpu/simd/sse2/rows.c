/*
 * simd/sse2/rows.c - the SSE2 level's row kernels of SOFT_MAX (contracts:
 * simd/kernels.h) and the streaming forms of the binary ops.  The sum of
 * the exponentials is kept in double lanes, as at the other levels; only
 * the order of the additions differs.  The binary ops are single IEEE
 * operations: the streaming forms give the generic level's bits.
 */
#include "config.h"

#include <emmintrin.h>
#include <math.h>
#include <stdint.h>

#include "ggml-impl.h"
#include "generic/generic.h"
#include "sse2.h"
#include "vmath.h"

float ggml__sse2_reduce_max(int64_t n, const float *x)
{
    /* maxps gives its second operand when the first is NaN: NaN is skipped */
    __m128 acc0 = _mm_set1_ps(-INFINITY), acc1 = acc0;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        acc0 = _mm_max_ps(_mm_loadu_ps(x + i), acc0);
        acc1 = _mm_max_ps(_mm_loadu_ps(x + i + 4), acc1);
    }
    for (; i + 4 <= n; i += 4)
        acc0 = _mm_max_ps(_mm_loadu_ps(x + i), acc0);
    acc0 = _mm_max_ps(acc0, acc1);
    acc0 = _mm_max_ps(acc0, _mm_movehl_ps(acc0, acc0));
    acc0 = _mm_max_ss(acc0, _mm_shuffle_ps(acc0, acc0, 1));
    float max = _mm_cvtss_f32(acc0);
    for (; i < n; i++)
        max = x[i] > max ? x[i] : max;
    return max;
}

/* Adds the four floats of v to two double accumulators. */
static inline void add_pd(__m128 v, __m128d *lo, __m128d *hi)
{
    *lo = _mm_add_pd(*lo, _mm_cvtps_pd(v));
    *hi = _mm_add_pd(*hi, _mm_cvtps_pd(_mm_movehl_ps(v, v)));
}

double ggml__sse2_softmax_exp_sum(int64_t n, float *y, const float *x, float max)
{
    const __m128 vmax = _mm_set1_ps(max);
    __m128d acc[4] = { _mm_setzero_pd(), _mm_setzero_pd(), _mm_setzero_pd(), _mm_setzero_pd() };
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128 e0 = sse2_exp(_mm_sub_ps(_mm_loadu_ps(x + i), vmax));
        const __m128 e1 = sse2_exp(_mm_sub_ps(_mm_loadu_ps(x + i + 4), vmax));
        _mm_storeu_ps(y + i, e0);
        _mm_storeu_ps(y + i + 4, e1);
        add_pd(e0, &acc[0], &acc[1]);
        add_pd(e1, &acc[2], &acc[3]);
    }
    /* the last 1..7 elements, four at a time; the lanes past n add exp(-inf) = 0 */
    for (; i < n; i += 4) {
        const int64_t k = n - i < 4 ? n - i : 4;
        const __m128 e = sse2_exp(_mm_sub_ps(sse2_load_first(x + i, k, -INFINITY), vmax));
        sse2_store_first(y + i, k, e);
        add_pd(e, &acc[0], &acc[1]);
    }
    __m128d s = _mm_add_pd(_mm_add_pd(acc[0], acc[1]), _mm_add_pd(acc[2], acc[3]));
    s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
    return _mm_cvtsd_f64(s);
}

void ggml__sse2_scale(int64_t n, float *y, const float *x, float s)
{
    const __m128 vs = _mm_set1_ps(s);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        _mm_storeu_ps(y + i, _mm_mul_ps(_mm_loadu_ps(x + i), vs));
    for (; i < n; i++)
        y[i] = x[i] * s;
}

/*
 * Defines ggml__sse2_<name>_stream, the binary_stream entry: z = x op y
 * with non-temporal stores for the whole 16-byte lines of z, the ends
 * through the generic level's entry.
 */
#define DEFINE_BINARY_STREAM(name, vop)                                                       \
    void ggml__sse2_##name##_stream(int64_t n, float *z, const float *x, const float *y)     \
    {                                                                                         \
        const int64_t head = (int64_t) (((16u - ((uintptr_t) z & 15u)) & 15u) / sizeof(float)); \
        if (head >= n) {                                                                      \
            ggml__generic_##name(n, z, x, y);                                                 \
            return;                                                                           \
        }                                                                                     \
        ggml__generic_##name(head, z, x, y);                                                  \
        int64_t i = head;                                                                     \
        for (; i + 8 <= n; i += 8) {                                                          \
            _mm_stream_ps(z + i, vop(_mm_loadu_ps(x + i), _mm_loadu_ps(y + i)));              \
            _mm_stream_ps(z + i + 4, vop(_mm_loadu_ps(x + i + 4), _mm_loadu_ps(y + i + 4)));  \
        }                                                                                     \
        _mm_sfence();                                                                         \
        ggml__generic_##name(n - i, z + i, x + i, y + i);                                     \
    }

DEFINE_BINARY_STREAM(add, _mm_add_ps)
DEFINE_BINARY_STREAM(sub, _mm_sub_ps)
DEFINE_BINARY_STREAM(mul, _mm_mul_ps)
DEFINE_BINARY_STREAM(div, _mm_div_ps)
