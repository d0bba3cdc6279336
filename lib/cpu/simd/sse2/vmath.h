/*
 * simd/sse2/vmath.h - exp, tanh and the activations on four floats
 * (sse2_exp, sse2_tanh, sse2_silu, sse2_gelu, ...), for the SSE2
 * element-wise kernels (elementwise.c, rows.c).  Include only in files of
 * the SSE2 level.
 *
 * The functions are those of simd/vmath-template.h, instantiated for
 * __m128.  SSE2 has no fused multiply-add: VM_FMADD and its kin round the
 * product and then the sum, so the results are not the bits of the AVX2
 * and AVX-512 levels, and each polynomial step adds up to half an ulp of
 * error (tests/test-kernels.c checks the template's bounds here as at
 * every level).  erfc_parts needs the exact error of a square, which only
 * a fused operation gives: this level has no gelu_erf entries and leaves
 * those ops to their portable row functions.
 *
 * VM_ROUND and VM_CVT_I round by the MXCSR rounding mode, nearest even
 * unless a program changed it; VM_ROUND holds for |x| < 2^22 only, all
 * that the template asks of it.
 */
#ifndef GGML_BACKEND_SIMD_SSE2_VMATH_H
#define GGML_BACKEND_SIMD_SSE2_VMATH_H

#include <emmintrin.h>
#include <stdint.h>

/* a where m holds, b elsewhere */
static inline __m128 sse2_select(__m128 m, __m128 a, __m128 b)
{
    return _mm_or_ps(_mm_and_ps(m, a), _mm_andnot_ps(m, b));
}

/*
 * x rounded to an integer value, nearest even, for |x| < 2^22: adding
 * 1.5 * 2^23 leaves no fraction bits, and subtracting it again is exact.
 * The template rounds only exp's clamped argument (|x| < 151) with it.
 */
static inline __m128 sse2_round_small(__m128 x)
{
    const __m128 shift = _mm_set1_ps(0x1.8p23f);
    return _mm_sub_ps(_mm_add_ps(x, shift), shift);
}

#define VM_F                __m128
#define VM_I                __m128i
#define VM_NAME(name)       sse2_##name
#define VM_SET1(c)          _mm_set1_ps(c)
#define VM_I_SET1(c)        _mm_set1_epi32(c)
#define VM_ADD(a, b)        _mm_add_ps(a, b)
#define VM_SUB(a, b)        _mm_sub_ps(a, b)
#define VM_MUL(a, b)        _mm_mul_ps(a, b)
#define VM_DIV(a, b)        _mm_div_ps(a, b)
#define VM_MIN(a, b)        _mm_min_ps(a, b)
#define VM_MAX(a, b)        _mm_max_ps(a, b)
#define VM_FMADD(a, b, c)   _mm_add_ps(_mm_mul_ps(a, b), c)
#define VM_FNMADD(a, b, c)  _mm_sub_ps(c, _mm_mul_ps(a, b))
#define VM_FMSUB(a, b, c)   _mm_sub_ps(_mm_mul_ps(a, b), c)
#define VM_AND(a, b)        _mm_and_ps(a, b)
#define VM_OR(a, b)         _mm_or_ps(a, b)
#define VM_XOR(a, b)        _mm_xor_ps(a, b)
#define VM_ANDNOT(a, b)     _mm_andnot_ps(a, b)
#define VM_LT(a, b)         _mm_cmplt_ps(a, b)
#define VM_GE(a, b)         _mm_cmpge_ps(a, b)
#define VM_SELECT(m, a, b)  sse2_select(m, a, b)
#define VM_NONE(m)          (_mm_movemask_ps(m) == 0)
#define VM_ROUND(x)         sse2_round_small(x)
#define VM_CVT_I(x)         _mm_cvtps_epi32(x)
#define VM_I_ADD(a, b)      _mm_add_epi32(a, b)
#define VM_I_SUB(a, b)      _mm_sub_epi32(a, b)
#define VM_I_SRAI(v, k)     _mm_srai_epi32(v, k)
#define VM_I_SLLI(v, k)     _mm_slli_epi32(v, k)
#define VM_I_AS_F(v)        _mm_castsi128_ps(v)
#include "vmath-template.h"

/*
 * The first k floats at x (0 <= k <= 4) in a vector whose other lanes
 * are fill, and the first k lanes of v stored at y: the tails of rows,
 * through a buffer (SSE2 has no masked loads and stores).
 */
static inline __m128 sse2_load_first(const float *x, int64_t k, float fill)
{
    float lanes[4] = { fill, fill, fill, fill };
    for (int64_t i = 0; i < k; i++)
        lanes[i] = x[i];
    return _mm_loadu_ps(lanes);
}

static inline void sse2_store_first(float *y, int64_t k, __m128 v)
{
    float lanes[4];
    _mm_storeu_ps(lanes, v);
    for (int64_t i = 0; i < k; i++)
        y[i] = lanes[i];
}

#endif
