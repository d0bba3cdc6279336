/*
 * simd/avx512/convert.c - row conversions and activation encoders of the
 * AVX-512 level.  Every function gives the generic level's result bit for
 * bit; the Q8 encoders for rows without NaN (a block holding a NaN is
 * encoded by rules of its own at each level).  16 lanes a step, the last
 * partial vector through a lane mask (nothing outside the row is read or
 * written).
 */
#include "config.h"

#include <stdint.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "intrin.h"
#include "avx512.h"

/* 16 lanes of 16 bits at p: the first count ones (count <= 16), the others zero. */
static inline __m256i load_first_u16(const uint16_t *p, int64_t count)
{
    return _mm512_castsi512_si256(_mm512_maskz_loadu_epi16(ggml__avx512_first_lanes(count), p));
}

/* Stores the first count (<= 16) of 16 lanes of 16 bits at p. */
static inline void store_first_u16(uint16_t *p, int64_t count, __m256i v)
{
    _mm512_mask_storeu_epi16(p, ggml__avx512_first_lanes(count), _mm512_castsi256_si512(v));
}

/* ------------------------------------------------------------------ F16 */

void ggml__avx512_f16_to_f32(const void *restrict vx, float *restrict y, int64_t n)
{
    const uint16_t *x = vx;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (const void *) (x + i))));
    if (i < n)
        _mm512_mask_storeu_ps(y + i, ggml__avx512_first_lanes(n - i), _mm512_cvtph_ps(load_first_u16(x + i, n - i)));
}

/*
 * VCVTPS2PH rounds to nearest even like the generic conversion and keeps a
 * NaN's upper payload bits, where the generic conversion gives the
 * canonical quiet NaN 0x7e00 with the sign: NaN lanes are made canonical
 * first.
 */
static inline __m256i encode_f16(__m512 v)
{
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    const __m512 canonical = _mm512_or_ps(_mm512_and_ps(v, _mm512_set1_ps(-0.0f)),
                                          _mm512_castsi512_ps(_mm512_set1_epi32(0x7fc00000)));
    return _mm512_cvtps_ph(_mm512_mask_mov_ps(v, nan, canonical), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

void ggml__avx512_f32_to_f16(const float *restrict x, void *restrict vy, int64_t n)
{
    uint16_t *y = vy;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *) (void *) (y + i), encode_f16(_mm512_loadu_ps(x + i)));
    if (i < n)
        store_first_u16(y + i, n - i, encode_f16(_mm512_maskz_loadu_ps(ggml__avx512_first_lanes(n - i), x + i)));
}

/* ----------------------------------------------------------------- BF16 */

/* 16 bfloat16 values widened to float bits: exact. */
static inline __m512 decode_bf16(__m256i h)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

void ggml__avx512_bf16_to_f32(const void *restrict vx, float *restrict y, int64_t n)
{
    const uint16_t *x = vx;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, decode_bf16(_mm256_loadu_si256((const __m256i *) (const void *) (x + i))));
    if (i < n)
        _mm512_mask_storeu_ps(y + i, ggml__avx512_first_lanes(n - i), decode_bf16(load_first_u16(x + i, n - i)));
}

/*
 * The generic encoder's rules in integers: round to nearest even on the
 * upper 16 bits (add 0x7fff plus the lowest kept bit, which also takes
 * the largest finite values to infinity); a NaN keeps its upper bits and
 * gets the quiet bit (0x0040 of the result).  Not VCVTNEPS2BF16: that
 * flushes subnormal inputs to zero.
 */
static inline __m256i encode_bf16(__m512 v)
{
    const __m512i w = _mm512_castps_si512(v);
    const __m512i upper = _mm512_srli_epi32(w, 16);
    const __m512i odd = _mm512_and_si512(upper, _mm512_set1_epi32(1));
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(w, _mm512_set1_epi32(0x7fff)), odd), 16);
    const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(w, _mm512_set1_epi32(0x7fffffff)),
                                                  _mm512_set1_epi32(0x7f800000));
    const __m512i nan_bits = _mm512_or_si512(upper, _mm512_set1_epi32(0x0040));
    /* values below 0x10000: VPMOVDW's truncation keeps them */
    return _mm512_cvtepi32_epi16(_mm512_mask_mov_epi32(rounded, nan, nan_bits));
}

void ggml__avx512_f32_to_bf16(const float *restrict x, void *restrict vy, int64_t n)
{
    uint16_t *y = vy;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *) (void *) (y + i), encode_bf16(_mm512_loadu_ps(x + i)));
    if (i < n)
        store_first_u16(y + i, n - i, encode_bf16(_mm512_maskz_loadu_ps(ggml__avx512_first_lanes(n - i), x + i)));
}

/* ------------------------------------------------------------ Q8_0, Q8_1 */

/*
 * v rounded half away from zero (roundf), then saturated to int8's range,
 * as int32 lanes; NaN gives 0.  These are the reference encoder's rules
 * (ggml__float_to_int after roundf).  Saturating first changes no result
 * and makes the truncation to integers exact; the dropped fraction is then
 * exact too.
 */
static inline __m512i round_to_i8_range(__m512 v)
{
    const __mmask16 number = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
    /* (NaN lanes get -128 here, and 0 at the end) */
    const __m512 c = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-128.0f)), _mm512_set1_ps(127.0f));
    const __m512i t = _mm512_cvttps_epi32(c);
    const __m512 frac = _mm512_sub_ps(c, _mm512_cvtepi32_ps(t));   /* in (-1, 1), same sign as c */
    const __mmask16 up = _mm512_cmp_ps_mask(frac, _mm512_set1_ps(0.5f), _CMP_GE_OQ);
    const __mmask16 down = _mm512_cmp_ps_mask(frac, _mm512_set1_ps(-0.5f), _CMP_LE_OQ);
    const __m512i one = _mm512_set1_epi32(1);
    const __m512i r = _mm512_mask_sub_epi32(_mm512_mask_add_epi32(t, up, t, one), down, t, one);
    return _mm512_maskz_mov_epi32(number, r);
}

/* Largest |x[j]| of 32 values (NaN: as vmaxps orders it). */
static inline float block_absmax32(const float *x)
{
    const __m512 sign = _mm512_set1_ps(-0.0f);
    const __m512 m = _mm512_max_ps(_mm512_andnot_ps(sign, _mm512_loadu_ps(x)),
                                   _mm512_andnot_ps(sign, _mm512_loadu_ps(x + 16)));
    return _mm512_reduce_max_ps(m);
}

/*
 * Encodes 32 values with scale d (the reference's d = amax / 127 and
 * id = 1 / d or 0) into qs; returns the sum of the 32 codes.
 */
static inline int encode_block32(const float *x, float d, int8_t qs[32])
{
    const __m512 id = _mm512_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
    const __m512i q0 = round_to_i8_range(_mm512_mul_ps(_mm512_loadu_ps(x), id));
    const __m512i q1 = round_to_i8_range(_mm512_mul_ps(_mm512_loadu_ps(x + 16), id));
    /* codes in [-128, 127]: VPMOVDB's truncation keeps them */
    _mm_storeu_si128((__m128i *) (void *) qs, _mm512_cvtepi32_epi8(q0));
    _mm_storeu_si128((__m128i *) (void *) (qs + 16), _mm512_cvtepi32_epi8(q1));
    return _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
}

void ggml__avx512_quantize_row_q8_0(const float *restrict x, void *restrict vy, int64_t n)
{
    block_q8_0 *y = vy;
    for (int64_t b = 0; b < n / QK8_0; b++) {
        const float *xb = x + b * QK8_0;
        const float d = block_absmax32(xb) / 127.0f;
        y[b].d = ggml__fp32_to_fp16(d);
        (void) encode_block32(xb, d, y[b].qs);
    }
}

void ggml__avx512_quantize_row_q8_1(const float *restrict x, void *restrict vy, int64_t n)
{
    block_q8_1 *y = vy;
    for (int64_t b = 0; b < n / QK8_1; b++) {
        const float *xb = x + b * QK8_1;
        const float d = block_absmax32(xb) / 127.0f;
        y[b].d = ggml__fp32_to_fp16(d);
        const int sum = encode_block32(xb, d, y[b].qs);
        /* the sum is scaled by the unrounded d, in single precision, as the reference does */
        y[b].s = ggml__fp32_to_fp16((float) sum * d);
    }
}
