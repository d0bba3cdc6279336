/*
 * simd/sse2/dot.c - the SSE2 level's F16 rows (conversion, dot products,
 * matrix x vector rows) and the Q8_0 dot product.  Contracts in
 * simd/kernels.h.
 *
 * SSE2 has no F16 conversion instruction: f16x8_to_f32 widens eight
 * binary16 values with integer operations, exactly (every value,
 * subnormals, infinities and NaN included, as ggml__fp16_to_fp32 does).
 * Float sums are single precision in four vectors of partial sums; the
 * products are exact (a binary16 times a binary16 or an F16-valued float
 * fits in a float), so each result is within vec_dot's bound.
 */
#include "config.h"

#include <emmintrin.h>
#include <stdint.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "sse2.h"

/*
 * Four binary16 values, each in the upper half of a 32-bit lane of x (the
 * lower half zero), as floats.  A value with a zero exponent field (zero
 * or subnormal, m * 2^-24) is built as 2^-14 * (1 + m / 1024) and then
 * 2^-14 subtracted, exactly; an all-ones exponent gets float's all-ones
 * exponent, and a NaN the quiet bit.
 */
static inline __m128 f16x4_to_f32_any(__m128i x)
{
    const __m128i sign = _mm_and_si128(x, _mm_set1_epi32((int) 0x80000000u));
    const __m128i em = _mm_srli_epi32(_mm_and_si128(x, _mm_set1_epi32(0x7fff0000)), 3);   /* (h & 0x7fff) << 13 */
    const __m128i exponent = _mm_and_si128(em, _mm_set1_epi32(0x0f800000));
    const __m128i tiny = _mm_cmpeq_epi32(exponent, _mm_setzero_si128());
    const __m128i special = _mm_cmpeq_epi32(exponent, _mm_set1_epi32(0x0f800000));
    const __m128i nan = _mm_cmpgt_epi32(em, _mm_set1_epi32(0x0f800000));
    __m128i bits = _mm_add_epi32(em, _mm_set1_epi32(112 << 23));
    bits = _mm_add_epi32(bits, _mm_and_si128(special, _mm_set1_epi32(112 << 23)));
    bits = _mm_add_epi32(bits, _mm_and_si128(tiny, _mm_set1_epi32(1 << 23)));
    bits = _mm_or_si128(bits, _mm_and_si128(nan, _mm_set1_epi32(0x00400000)));
    const __m128 offset = _mm_castsi128_ps(_mm_and_si128(tiny, _mm_set1_epi32(113 << 23)));
    const __m128 value = _mm_sub_ps(_mm_castsi128_ps(bits), offset);
    return _mm_or_ps(value, _mm_castsi128_ps(sign));
}

/* The same for values known to be normal numbers: the exponent rebiased. */
static inline __m128 f16x4_to_f32_normal(__m128i x)
{
    const __m128i sign = _mm_and_si128(x, _mm_set1_epi32((int) 0x80000000u));
    const __m128i em = _mm_srli_epi32(_mm_and_si128(x, _mm_set1_epi32(0x7fff0000)), 3);
    return _mm_castsi128_ps(_mm_or_si128(_mm_add_epi32(em, _mm_set1_epi32(112 << 23)), sign));
}

/* The eight binary16 values of h as floats: values 0..3 in *lo, 4..7 in *hi. */
static inline void f16x8_to_f32(__m128i h, __m128 *lo, __m128 *hi)
{
    const __m128i zero = _mm_setzero_si128();
    const __m128i exponent = _mm_and_si128(h, _mm_set1_epi16(0x7c00));
    const __m128i odd = _mm_or_si128(_mm_cmpeq_epi16(exponent, zero),
                                     _mm_cmpeq_epi16(exponent, _mm_set1_epi16(0x7c00)));
    const __m128i x_lo = _mm_unpacklo_epi16(zero, h), x_hi = _mm_unpackhi_epi16(zero, h);
    if (_mm_movemask_epi8(odd) == 0) {
        *lo = f16x4_to_f32_normal(x_lo);
        *hi = f16x4_to_f32_normal(x_hi);
    } else {
        *lo = f16x4_to_f32_any(x_lo);
        *hi = f16x4_to_f32_any(x_hi);
    }
}

static inline __m128i load8_f16(const ggml_fp16_t *x)
{
    return _mm_loadu_si128((const __m128i *) (const void *) x);
}

static inline float hsum_ps(__m128 v)
{
    v = _mm_add_ps(v, _mm_movehl_ps(v, v));
    v = _mm_add_ss(v, _mm_shuffle_ps(v, v, 1));
    return _mm_cvtss_f32(v);
}

void ggml__sse2_f16_to_f32(const void *restrict vx, float *restrict y, int64_t n)
{
    const ggml_fp16_t *x = vx;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128 lo, hi;
        f16x8_to_f32(load8_f16(x + i), &lo, &hi);
        _mm_storeu_ps(y + i, lo);
        _mm_storeu_ps(y + i + 4, hi);
    }
    for (; i < n; i++)
        y[i] = ggml__fp16_to_fp32(x[i]);
}

void ggml__sse2_vec_dot_f16(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                            const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;   /* one dot product */
    const ggml_fp16_t *x = vx, *y = vy;
    __m128 acc[4] = { _mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps() };
    int i = 0;
    for (; i + 16 <= n; i += 16)
        for (int half = 0; half < 2; half++) {
            __m128 x_lo, x_hi, y_lo, y_hi;
            f16x8_to_f32(load8_f16(x + i + 8 * half), &x_lo, &x_hi);
            f16x8_to_f32(load8_f16(y + i + 8 * half), &y_lo, &y_hi);
            acc[2 * half] = _mm_add_ps(acc[2 * half], _mm_mul_ps(x_lo, y_lo));
            acc[2 * half + 1] = _mm_add_ps(acc[2 * half + 1], _mm_mul_ps(x_hi, y_hi));
        }
    float sum = hsum_ps(_mm_add_ps(_mm_add_ps(acc[0], acc[1]), _mm_add_ps(acc[2], acc[3])));
    for (; i < n; i++)
        sum += ggml__fp16_to_fp32(x[i]) * ggml__fp16_to_fp32(y[i]);
    *s = sum;
}

/*
 * NR rows of F16 weights against the floats y, eight values a step, each
 * step of y loaded once for all rows.  Written for a constant NR (the
 * switch below) so that the accumulators stay in registers.
 */
static inline __attribute__((always_inline)) void rows_f16_by_f32(int n, float *s, const void *vx, size_t bx,
                                                                  const float *y, int nr)
{
    const ggml_fp16_t *row[4];
    __m128 acc_lo[4], acc_hi[4];
    for (int r = 0; r < nr; r++) {
        row[r] = (const ggml_fp16_t *) (const void *) ((const char *) vx + (size_t) r * bx);
        acc_lo[r] = acc_hi[r] = _mm_setzero_ps();
    }
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128 y_lo = _mm_loadu_ps(y + i), y_hi = _mm_loadu_ps(y + i + 4);
        for (int r = 0; r < nr; r++) {
            __m128 lo, hi;
            f16x8_to_f32(load8_f16(row[r] + i), &lo, &hi);
            acc_lo[r] = _mm_add_ps(acc_lo[r], _mm_mul_ps(lo, y_lo));
            acc_hi[r] = _mm_add_ps(acc_hi[r], _mm_mul_ps(hi, y_hi));
        }
    }
    for (int r = 0; r < nr; r++) {
        float sum = hsum_ps(_mm_add_ps(acc_lo[r], acc_hi[r]));
        for (int j = i; j < n; j++)
            sum += ggml__fp16_to_fp32(row[r][j]) * y[j];
        s[r] = sum;
    }
}

void ggml__sse2_rows_by_f32_f16(int n, float *s, const void *x, size_t bx, const float *y, int nr)
{
    switch (nr) {
    case 4: rows_f16_by_f32(n, s, x, bx, y, 4); break;
    case 3: rows_f16_by_f32(n, s, x, bx, y, 3); break;
    case 2: rows_f16_by_f32(n, s, x, bx, y, 2); break;
    default: rows_f16_by_f32(n, s, x, bx, y, 1); break;
    }
}

/* The sums of the products of the 16 signed bytes of a and b, in four int32 lanes. */
static inline __m128i dot_i8x16(__m128i a, __m128i b)
{
    /* a byte in the upper half of a 16-bit lane, shifted down arithmetically: sign-extended */
    const __m128i a_lo = _mm_srai_epi16(_mm_unpacklo_epi8(a, a), 8), a_hi = _mm_srai_epi16(_mm_unpackhi_epi8(a, a), 8);
    const __m128i b_lo = _mm_srai_epi16(_mm_unpacklo_epi8(b, b), 8), b_hi = _mm_srai_epi16(_mm_unpackhi_epi8(b, b), 8);
    return _mm_add_epi32(_mm_madd_epi16(a_lo, b_lo), _mm_madd_epi16(a_hi, b_hi));
}

/* Each block's integer sum is exact (at most 32 * 127 * 128); its scale is d_x * d_y, as at the generic level. */
void ggml__sse2_vec_dot_q8_0_q8_0(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                  const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;   /* one dot product */
    const block_q8_0 *x = vx, *y = vy;
    __m128 acc = _mm_setzero_ps();
    for (int b = 0; b < n / QK8_0; b++) {
        const __m128i *xq = (const __m128i *) (const void *) x[b].qs, *yq = (const __m128i *) (const void *) y[b].qs;
        const __m128i isum = _mm_add_epi32(dot_i8x16(_mm_loadu_si128(xq), _mm_loadu_si128(yq)),
                                           dot_i8x16(_mm_loadu_si128(xq + 1), _mm_loadu_si128(yq + 1)));
        const float d = ggml__fp16_to_fp32(x[b].d) * ggml__fp16_to_fp32(y[b].d);
        acc = _mm_add_ps(acc, _mm_mul_ps(_mm_cvtepi32_ps(isum), _mm_set1_ps(d)));
    }
    *s = hsum_ps(acc);
}
