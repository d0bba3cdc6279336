/*
 * simd/avx2/vmath.h - exp, tanh, erfc and the activations on eight floats
 * (avx2_exp, avx2_tanh, avx2_erfc_parts, avx2_silu, avx2_gelu, ...), for
 * the AVX2 element-wise kernels (elementwise.c, rows.c).  Include only in
 * files compiled with the AVX2 level's flags.
 *
 * The functions are those of simd/vmath-template.h (methods and maximum
 * errors stated there), instantiated here for __m256.
 */
#ifndef GGML_BACKEND_SIMD_AVX2_VMATH_H
#define GGML_BACKEND_SIMD_AVX2_VMATH_H

#include <immintrin.h>
#include <stdint.h>

#define VM_F                __m256
#define VM_I                __m256i
#define VM_NAME(name)       avx2_##name
#define VM_SET1(c)          _mm256_set1_ps(c)
#define VM_I_SET1(c)        _mm256_set1_epi32(c)
#define VM_ADD(a, b)        _mm256_add_ps(a, b)
#define VM_SUB(a, b)        _mm256_sub_ps(a, b)
#define VM_MUL(a, b)        _mm256_mul_ps(a, b)
#define VM_DIV(a, b)        _mm256_div_ps(a, b)
#define VM_MIN(a, b)        _mm256_min_ps(a, b)
#define VM_MAX(a, b)        _mm256_max_ps(a, b)
#define VM_FMADD(a, b, c)   _mm256_fmadd_ps(a, b, c)
#define VM_FNMADD(a, b, c)  _mm256_fnmadd_ps(a, b, c)
#define VM_FMSUB(a, b, c)   _mm256_fmsub_ps(a, b, c)
#define VM_AND(a, b)        _mm256_and_ps(a, b)
#define VM_OR(a, b)         _mm256_or_ps(a, b)
#define VM_XOR(a, b)        _mm256_xor_ps(a, b)
#define VM_ANDNOT(a, b)     _mm256_andnot_ps(a, b)
#define VM_LT(a, b)         _mm256_cmp_ps(a, b, _CMP_LT_OQ)
#define VM_GE(a, b)         _mm256_cmp_ps(a, b, _CMP_GE_OQ)
#define VM_SELECT(m, a, b)  _mm256_blendv_ps(b, a, m)
#define VM_NONE(m)          (_mm256_movemask_ps(m) == 0)
#define VM_ROUND(x)         _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define VM_CVT_I(x)         _mm256_cvtps_epi32(x)
#define VM_I_ADD(a, b)      _mm256_add_epi32(a, b)
#define VM_I_SUB(a, b)      _mm256_sub_epi32(a, b)
#define VM_I_SRAI(v, k)     _mm256_srai_epi32(v, k)
#define VM_I_SLLI(v, k)     _mm256_slli_epi32(v, k)
#define VM_I_AS_F(v)        _mm256_castsi256_ps(v)
#include "vmath-template.h"

/* Mask of the first k lanes (0 <= k <= 8), for the tail of a row. */
static inline __m256i avx2_first_lanes(int64_t k)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int) k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

#endif
