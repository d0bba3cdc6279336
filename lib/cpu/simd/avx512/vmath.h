/*
 * simd/avx512/vmath.h - exp, tanh, erfc and the activations on sixteen
 * floats (avx512_exp, avx512_tanh, avx512_silu, avx512_gelu, ...), for the
 * AVX-512 element-wise kernels (elementwise.c, rows.c).  Include only in
 * files of the AVX-512 level, after intrin.h.
 *
 * The functions are those of simd/vmath-template.h (methods and maximum
 * errors stated there), instantiated here for __m512: the same operations
 * as the AVX2 level's, so both levels give the same bits.  (AVX-512 has
 * VSCALEFPS for the 2^n step; the template's integer form is kept so that
 * one piece of code serves both widths.)
 */
#ifndef GGML_BACKEND_SIMD_AVX512_VMATH_H
#define GGML_BACKEND_SIMD_AVX512_VMATH_H

#include <stdint.h>

#include "intrin.h"

#define VM_F                __m512
#define VM_I                __m512i
#define VM_NAME(name)       avx512_##name
#define VM_SET1(c)          _mm512_set1_ps(c)
#define VM_I_SET1(c)        _mm512_set1_epi32(c)
#define VM_ADD(a, b)        _mm512_add_ps(a, b)
#define VM_SUB(a, b)        _mm512_sub_ps(a, b)
#define VM_MUL(a, b)        _mm512_mul_ps(a, b)
#define VM_DIV(a, b)        _mm512_div_ps(a, b)
#define VM_MIN(a, b)        _mm512_min_ps(a, b)
#define VM_MAX(a, b)        _mm512_max_ps(a, b)
#define VM_FMADD(a, b, c)   _mm512_fmadd_ps(a, b, c)
#define VM_FNMADD(a, b, c)  _mm512_fnmadd_ps(a, b, c)
#define VM_FMSUB(a, b, c)   _mm512_fmsub_ps(a, b, c)
#define VM_AND(a, b)        _mm512_and_ps(a, b)
#define VM_OR(a, b)         _mm512_or_ps(a, b)
#define VM_XOR(a, b)        _mm512_xor_ps(a, b)
#define VM_ANDNOT(a, b)     _mm512_andnot_ps(a, b)
#define VM_LT(a, b)         _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ)
#define VM_GE(a, b)         _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ)
#define VM_SELECT(m, a, b)  _mm512_mask_blend_ps(m, b, a)
#define VM_NONE(m)          ((m) == 0)
#define VM_ROUND(x)         _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define VM_CVT_I(x)         _mm512_cvtps_epi32(x)
#define VM_I_ADD(a, b)      _mm512_add_epi32(a, b)
#define VM_I_SUB(a, b)      _mm512_sub_epi32(a, b)
#define VM_I_SRAI(v, k)     _mm512_srai_epi32(v, k)
#define VM_I_SLLI(v, k)     _mm512_slli_epi32(v, k)
#define VM_I_AS_F(v)        _mm512_castsi512_ps(v)
#include "vmath-template.h"

#endif
