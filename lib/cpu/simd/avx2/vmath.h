/*
 * simd/avx2/vmath.h - exp, tanh and erfc on eight floats, for the AVX2
 * element-wise kernels (elementwise.c, rows.c).  Include only in files
 * compiled with the AVX2 level's flags.
 *
 * Each function states its largest relative error over all finite float
 * inputs, measured against double precision by tests/test-kernels.c, which
 * checks these bounds over a dense sweep of the float line.  A result in
 * the subnormal range carries in addition an absolute error of at most
 * 2^-148 (two roundings to the subnormal grid).  Special values follow the
 * C library: exp(+inf) = +inf, exp(-inf) = 0, overflow gives +inf,
 * underflow 0, NaN gives NaN.
 */
#ifndef GGML_BACKEND_SIMD_AVX2_VMATH_H
#define GGML_BACKEND_SIMD_AVX2_VMATH_H

#include <immintrin.h>

/*
 * e^(hi + lo), where lo is a correction of at most a few units (the part
 * of the argument hi cannot hold; 0 for a plain exp).  Max relative error
 * 2.5e-7 (about 2 ulp).
 *
 * hi is clamped to [-104, 89]: beyond it the result is 0 or +inf anyway
 * (a NaN goes through the clamp and the polynomial).  n = round((hi + lo)
 * / ln 2) and r = hi - n ln 2 + lo, with ln 2 in two parts (ln2_hi holds
 * its leading 15 bits, so n * ln2_hi is exact for |n| < 2^9 and the fused
 * subtraction is exact); then e^r, |r| <= ln2 / 2 + tiny, by its Taylor
 * polynomial of degree 7 (truncation below 6e-9), and 2^n applied as two
 * factors 2^(n/2) and 2^(n - n/2), both normal for n in [-152, 130], so
 * that a result near the overflow or subnormal range is rounded once.
 */
static inline __m256 avx2_exp_parts(__m256 hi, __m256 lo)
{
    const __m256 ln2_hi = _mm256_set1_ps(0.693145751953125f); /* 15 significant bits */
    const __m256 ln2_lo = _mm256_set1_ps(1.42860682030941723212e-6f);
    hi = _mm256_min_ps(_mm256_set1_ps(89.0f), _mm256_max_ps(_mm256_set1_ps(-104.0f), hi));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(_mm256_add_ps(hi, lo), _mm256_set1_ps(1.44269504088896340736f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, ln2_hi, hi);
    r = _mm256_fnmadd_ps(n, ln2_lo, r);
    r = _mm256_add_ps(r, lo);

    __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));

    /* a NaN's n converts to INT_MIN: the factors are then garbage, p is NaN */
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    const __m256 f1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const __m256 f2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, f1), f2);
}

/* e^x; max relative error 2.5e-7 (avx2_exp_parts). */
static inline __m256 avx2_exp(__m256 x)
{
    return avx2_exp_parts(x, _mm256_setzero_ps());
}

/*
 * tanh(x); max relative error 4e-7.  For |x| < 0.4 the odd Taylor
 * polynomial to x^13 (truncation below 4e-9); above, with e = e^(-2|x|),
 * (1 - e) / (1 + e) with the sign of x (the subtraction loses at most a
 * factor 1.2 of e's error there).  tanh(+-inf) = +-1, tanh(-0) = -0.
 */
static inline __m256 avx2_tanh(__m256 x)
{
    const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
    const __m256 ax = _mm256_andnot_ps(sign, x);
    const __m256 e = avx2_exp(_mm256_mul_ps(_mm256_set1_ps(-2.0f), ax));
    const __m256 far = _mm256_or_ps(_mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e)),
                                    _mm256_and_ps(sign, x));
    const __m256 x2 = _mm256_mul_ps(x, x);
    __m256 q = _mm256_set1_ps((float) (21844.0 / 6081075.0));
    q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps((float) (-1382.0 / 155925.0)));
    q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps((float) (62.0 / 2835.0)));
    q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps((float) (-17.0 / 315.0)));
    q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps((float) (2.0 / 15.0)));
    q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps((float) (-1.0 / 3.0)));
    /* the sign of x put back: x + x^3 q(x^2) is +0 for x = -0 */
    const __m256 near = _mm256_or_ps(_mm256_fmadd_ps(_mm256_mul_ps(x, x2), q, x), _mm256_and_ps(sign, x));
    return _mm256_blendv_ps(far, near, _mm256_cmp_ps(ax, _mm256_set1_ps(0.4f), _CMP_LT_OQ));
}

/*
 * erfc(a / sqrt(2)) = *s * e for a >= 0 (or NaN), as two factors so that
 * a caller can scale s before the product (a tiny e multiplied by a small
 * s would be rounded twice on the subnormal grid).  Max relative error of
 * the product 1e-6.
 *
 * With t = a / sqrt(2) and s = 2 / (2 + t) in (0, 1]:
 * erfc(t) = s * e^(g(s) - t^2), where g is smooth on [0, 1]; here g is a
 * degree-12 Chebyshev fit (made for this file with mpmath, max error 7e-9
 * on [0, 1]).  t^2 = a^2 / 2 enters the exponent as an exact sum of two
 * floats (a fused multiply-add gives the rounding error of a * a), so the
 * result keeps its relative accuracy where it is tiny.  a is clamped to
 * 20, where erfc has long underflowed to 0.
 */
static inline __m256 avx2_erfc_parts(__m256 a, __m256 *s)
{
    a = _mm256_min_ps(_mm256_set1_ps(20.0f), a);
    const __m256 two = _mm256_set1_ps(2.0f);
    const __m256 t = _mm256_mul_ps(a, _mm256_set1_ps(0.70710678118654752440f));
    *s = _mm256_div_ps(two, _mm256_add_ps(two, t));
    static const float g_coef[13] = {
        0.06308584359f, -0.5567954857f, 1.982286548f, -3.696915256f, 3.82257739f,
        -2.122718045f, 0.7125918328f, -0.3379492492f, -0.05647743427f, 0.08070750306f,
        0.3751206317f, 0.9999978344f, -1.265512117f,
    };
    __m256 g = _mm256_set1_ps(g_coef[0]);
    for (int k = 1; k < 13; k++)
        g = _mm256_fmadd_ps(g, *s, _mm256_set1_ps(g_coef[k]));
    const __m256 half = _mm256_set1_ps(0.5f);
    const __m256 sq = _mm256_mul_ps(a, a);
    const __m256 sq_err = _mm256_fmsub_ps(a, a, sq); /* a * a - sq, exactly */
    const __m256 hi = _mm256_mul_ps(half, sq), lo = _mm256_fnmadd_ps(half, sq_err, g);
    return avx2_exp_parts(_mm256_sub_ps(_mm256_setzero_ps(), hi), lo);
}

/* Mask of the first k lanes (0 <= k <= 8), for the tail of a row. */
static inline __m256i avx2_first_lanes(int64_t k)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int) k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

#endif
