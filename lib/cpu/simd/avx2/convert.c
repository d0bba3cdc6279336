/*
 * simd/avx2/convert.c - row conversions and activation encoders of the
 * AVX2 level.  Every function gives the generic level's result bit for
 * bit; the Q8 encoders for rows without NaN (a block holding a NaN is
 * encoded by rules of its own at each level), the Q4_0 .. Q5_1 encoders
 * for every row.
 */
#include "config.h"

#include <float.h>
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "avx2.h"
#include "intsum.h"

/* ------------------------------------------------------------ F16, BF16 */

void ggml__avx2_f16_to_f32(const void *restrict vx, float *restrict y, int64_t n)
{
    const ggml_fp16_t *x = vx;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (const void *) (x + i))));
    for (; i < n; i++)
        y[i] = ggml__fp16_to_fp32(x[i]);
}

/*
 * vcvtps2ph rounds to nearest even like the generic conversion and keeps a
 * NaN's upper payload bits, where the generic conversion gives the
 * canonical quiet NaN 0x7e00 with the sign: NaN lanes are made canonical
 * first.
 */
void ggml__avx2_f32_to_f16(const float *restrict x, void *restrict vy, int64_t n)
{
    ggml_fp16_t *y = vy;
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 quiet_nan = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000));
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
        v = _mm256_blendv_ps(v, _mm256_or_ps(_mm256_and_ps(v, sign), quiet_nan), nan);
        _mm_storeu_si128((__m128i *) (void *) (y + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i < n; i++)
        y[i] = ggml__fp32_to_fp16(x[i]);
}

void ggml__avx2_bf16_to_f32(const void *restrict vx, float *restrict y, int64_t n)
{
    const uint16_t *x = vx;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *) (const void *) (x + i)));
        _mm256_storeu_si256((__m256i *) (void *) (y + i), _mm256_slli_epi32(w, 16));
    }
    for (; i < n; i++)
        y[i] = ggml__fp32_from_bits((uint32_t) x[i] << 16);
}

/* Round to nearest even on the upper 16 bits; a NaN keeps its upper bits
   and gets the quiet bit (0x0040 of the result). */
void ggml__avx2_f32_to_bf16(const float *restrict x, void *restrict vy, int64_t n)
{
    uint16_t *y = vy;
    const __m256i bias = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1);
    const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
    const __m256i quiet = _mm256_set1_epi32(0x0040);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i w = _mm256_loadu_si256((const __m256i *) (const void *) (x + i));
        const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(w, 16), one);
        const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(w, bias), odd), 16);
        const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(w, abs_mask), inf);
        const __m256i nan_bits = _mm256_or_si256(_mm256_srli_epi32(w, 16), quiet);
        const __m256i h = _mm256_blendv_epi8(rounded, nan_bits, nan);
        /* 8 values below 0x10000 to 16 bits, in order */
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(h, h), 0x08);
        _mm_storeu_si128((__m128i *) (void *) (y + i), _mm256_castsi256_si128(packed));
    }
    for (; i < n; i++)
        y[i] = ggml__fp32_to_bf16(x[i]).bits;
}

/* ------------------------------------------------------------ Q8_0, Q8_1 */

/*
 * v rounded half away from zero (roundf), then saturated to int8's range,
 * as int32 lanes; NaN gives 0.  These are the reference encoder's rules
 * (ggml__float_to_int after roundf).
 */
static inline __m256i round_to_i8_range(__m256 v)
{
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256 frac = _mm256_andnot_ps(sign, _mm256_sub_ps(v, t));   /* exact; NaN for +-inf */
    const __m256 up = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
    const __m256 step = _mm256_and_ps(up, _mm256_or_ps(_mm256_and_ps(v, sign), _mm256_set1_ps(1.0f)));
    __m256 r = _mm256_add_ps(t, step);
    r = _mm256_and_ps(r, _mm256_cmp_ps(v, v, _CMP_ORD_Q));
    r = _mm256_min_ps(_mm256_max_ps(r, _mm256_set1_ps(-128.0f)), _mm256_set1_ps(127.0f));
    return _mm256_cvtps_epi32(r);
}

/* Largest |x[j]| of 32 values (NaN: as vmaxps orders it). */
static inline float block_absmax32(const float *x)
{
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 m = _mm256_andnot_ps(sign, _mm256_loadu_ps(x));
    m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + 8)));
    m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + 16)));
    m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + 24)));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}

/*
 * Encodes 32 values with scale d (the reference's d = amax / 127 and
 * id = 1 / d or 0) into qs; returns the sum of the 32 codes.
 */
static inline int encode_block32(const float *x, float d, int8_t qs[32])
{
    const __m256 id = _mm256_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
    const __m256i q0 = round_to_i8_range(_mm256_mul_ps(_mm256_loadu_ps(x), id));
    const __m256i q1 = round_to_i8_range(_mm256_mul_ps(_mm256_loadu_ps(x + 8), id));
    const __m256i q2 = round_to_i8_range(_mm256_mul_ps(_mm256_loadu_ps(x + 16), id));
    const __m256i q3 = round_to_i8_range(_mm256_mul_ps(_mm256_loadu_ps(x + 24), id));
    /* packs interleave 128-bit lanes; the permutation restores the order */
    const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(q0, q1), _mm256_packs_epi32(q2, q3));
    const __m256i ordered = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256((__m256i *) (void *) qs, ordered);
    const __m256i sum8 = _mm256_add_epi32(_mm256_add_epi32(q0, q1), _mm256_add_epi32(q2, q3));
    return avx2_hsum_epi32(sum8);
}

void ggml__avx2_quantize_row_q8_0(const float *restrict x, void *restrict vy, int64_t n)
{
    block_q8_0 *y = vy;
    for (int64_t b = 0; b < n / QK8_0; b++) {
        const float *xb = x + b * QK8_0;
        const float d = block_absmax32(xb) / 127.0f;
        y[b].d = ggml__fp32_to_fp16(d);
        (void) encode_block32(xb, d, y[b].qs);
    }
}

void ggml__avx2_quantize_row_q8_1(const float *restrict x, void *restrict vy, int64_t n)
{
    block_q8_1 *y = vy;
    for (int64_t b = 0; b < n / QK8_1; b++) {
        const float *xb = x + b * QK8_1;
        const float d = block_absmax32(xb) / 127.0f;
        y[b].d = ggml__fp32_to_fp16(d);
        const int sum = encode_block32(xb, d, y[b].qs);
        y[b].s = ggml__fp32_to_fp16((float) sum * d);
    }
}

/* ------------------------------------------------------ Q4_0 .. Q5_1 */

/*
 * The encoders of the 4- and 5-bit formats, the reference quantizers'
 * arithmetic lane by lane (lib/quants.c): every product, sum and
 * quotient is the same single-precision operation, maxima and minima
 * keep the reference's choice for NaN (vmaxps/vminps return their second
 * operand when either is NaN, as the reference's "v > m ? v : m" does),
 * and the cases where a lane order could show (a tie of opposite signs,
 * a zero's sign) are settled in scalar code as the reference settles them.
 */

/* Largest lane of m (no NaN in m). */
static inline float hmax8(__m256 m)
{
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
}

/* Smallest lane of m (no NaN in m). */
static inline float hmin8(__m256 m)
{
    __m128 h = _mm_min_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_min_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_min_ss(h, _mm_movehdup_ps(h)));
}

/*
 * The value of largest magnitude of 32 (NaN never wins; the first wins a
 * tie of opposite signs; 0 when all are 0 or NaN).
 */
static inline float signed_absmax32(const float *x)
{
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 pos = _mm256_setzero_ps(), neg = _mm256_setzero_ps();
    for (int j = 0; j < 32; j += 8) {
        const __m256 v = _mm256_loadu_ps(x + j);
        pos = _mm256_max_ps(v, pos);
        neg = _mm256_max_ps(_mm256_xor_ps(v, sign), neg);
    }
    return ggml__signed_absmax_of(x, hmax8(pos), hmax8(neg));
}

/* Smallest and largest of 32 values (NaN skipped; a zero's sign: the first zero's). */
static inline void min_max32(const float *x, float *minp, float *maxp)
{
    __m256 lo = _mm256_set1_ps(FLT_MAX), hi = _mm256_set1_ps(-FLT_MAX);
    for (int j = 0; j < 32; j += 8) {
        const __m256 v = _mm256_loadu_ps(x + j);
        lo = _mm256_min_ps(v, lo);
        hi = _mm256_max_ps(v, hi);
    }
    const float min = hmin8(lo), max = hmax8(hi);
    *minp = min == 0.0f ? ggml__first_equal(x, 0.0f) : min;
    *maxp = max == 0.0f ? ggml__first_equal(x, 0.0f) : max;
}

/*
 * The 32 codes trunc(clamp((x[j] - offset) * scale + bias, 0, hi)) (NaN:
 * 0) as bytes in order; with offset 0 the subtraction is x[j] - 0 = x[j]
 * (also for -0 and NaN, which it leaves as they are).
 */
static inline __m256i codes32(const float *x, float offset, float scale, float bias, int hi)
{
    const __m256 o = _mm256_set1_ps(offset), s = _mm256_set1_ps(scale), b = _mm256_set1_ps(bias);
    const __m256 top = _mm256_set1_ps((float) hi), zero = _mm256_setzero_ps();
    __m256i q[4];
    for (int k = 0; k < 4; k++) {
        __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + 8 * k), o), s), b);
        v = _mm256_min_ps(_mm256_max_ps(v, zero), top);
        q[k] = _mm256_cvttps_epi32(v);
    }
    /* packs interleave 128-bit lanes; the permutation restores the order */
    const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
    return _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* Low nibbles of codes 0..15 and 16..31 as the formats pack them. */
static inline void store_nibbles(__m256i codes, uint8_t qs[16])
{
    const __m128i mask = _mm_set1_epi8(0x0f);
    const __m128i lo = _mm_and_si128(_mm256_castsi256_si128(codes), mask);
    const __m128i hi = _mm_and_si128(_mm256_extracti128_si256(codes, 1), mask);
    _mm_storeu_si128((__m128i *) (void *) qs, _mm_or_si128(lo, _mm_slli_epi16(hi, 4)));
}

/* Bit 4 of each code as bit j of the little-endian word qh. */
static inline void store_fifth_bits(__m256i codes, uint8_t qh[4])
{
    const uint32_t bits = (uint32_t) _mm256_movemask_epi8(_mm256_slli_epi16(codes, 3));
    memcpy(qh, &bits, sizeof bits);
}

/* The symmetric formats: d = max / -levels, codes of x / d + levels + 0.5. */
static inline __m256i symmetric_block(const float *x, float levels, ggml_fp16_t *d_out)
{
    const float d = signed_absmax32(x) / -levels;
    *d_out = ggml__fp32_to_fp16(d);
    return codes32(x, 0.0f, d != 0.0f ? 1.0f / d : 0.0f, levels + 0.5f, 2 * (int) levels - 1);
}

/* The formats with a minimum: d = (max - min) / steps, codes of (x - min) / d + 0.5. */
static inline __m256i affine_block(const float *x, int steps, ggml_fp16_t *d_out, ggml_fp16_t *m_out)
{
    float min, max;
    min_max32(x, &min, &max);
    const float d = (max - min) / (float) steps;
    *d_out = ggml__fp32_to_fp16(d);
    *m_out = ggml__fp32_to_fp16(min);
    return codes32(x, min, d != 0.0f ? 1.0f / d : 0.0f, 0.5f, steps);
}

void ggml__avx2_quantize_row_q4_0(const float *restrict x, void *restrict vy, int64_t n)
{
    block_q4_0 *y = vy;
    for (int64_t b = 0; b < n / QK4_0; b++)
        store_nibbles(symmetric_block(x + b * QK4_0, 8.0f, &y[b].d), y[b].qs);
}

void ggml__avx2_quantize_row_q5_0(const float *restrict x, void *restrict vy, int64_t n)
{
    block_q5_0 *y = vy;
    for (int64_t b = 0; b < n / QK5_0; b++) {
        const __m256i codes = symmetric_block(x + b * QK5_0, 16.0f, &y[b].d);
        store_nibbles(codes, y[b].qs);
        store_fifth_bits(codes, y[b].qh);
    }
}

void ggml__avx2_quantize_row_q4_1(const float *restrict x, void *restrict vy, int64_t n)
{
    block_q4_1 *y = vy;
    for (int64_t b = 0; b < n / QK4_1; b++)
        store_nibbles(affine_block(x + b * QK4_1, 15, &y[b].d, &y[b].m), y[b].qs);
}

void ggml__avx2_quantize_row_q5_1(const float *restrict x, void *restrict vy, int64_t n)
{
    block_q5_1 *y = vy;
    for (int64_t b = 0; b < n / QK5_1; b++) {
        const __m256i codes = affine_block(x + b * QK5_1, 31, &y[b].d, &y[b].m);
        store_nibbles(codes, y[b].qs);
        store_fifth_bits(codes, y[b].qh);
    }
}
