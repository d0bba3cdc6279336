/*
 * simd/avx2/dot-small.c - AVX2 vec_dot entries of MXFP4, NVFP4, Q1_0,
 * Q2_0 and IQ4_NL against Q8_0 rows, bit for bit the generic level's
 * (generic/dot-small.c).
 *
 * The 4-bit codes index a 16-entry table of small integers (doubled E2M1
 * values, IQ4_NL's levels), which one byte shuffle looks up for 32 codes;
 * Q1_0's bits become +-1 and Q2_0's codes q - 1.  The products with a Q8_0
 * block are summed exactly as integers: maddubs takes
 * an unsigned and a signed byte, so the activations' magnitudes (0..128,
 * -128 included) are the unsigned operand and their signs move onto the
 * weights (|w| <= 127, so -w fits), pair sums at most 2 * 128 * 127, below
 * int16's limit.  Each block's integer sum is then scaled and added in
 * the generic level's order, (float) isum * dx * dy, unfused.
 */
#include "config.h"

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "avx2.h"
#include "intsum.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define ONE_ROW_ONLY() ((void) bs, (void) bx, (void) by, (void) nrc)

/* Products w[j] * y[j] (|w| <= 127) summed in fours: 8 int32 lanes, lane
   l holding elements 4l..4l+3. */
static inline __m256i dot_quads(__m256i w, const int8_t y[32])
{
    const __m256i a = _mm256_loadu_si256((const __m256i *) (const void *) y);
    const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(a, a), _mm256_sign_epi8(w, a));
    return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
}

/* The sum over j < 32 of table[code j] * y[j], codes packed as in Q4_0. */
static inline __m256i table_block_quads(__m256i table, const uint8_t qs[16], const int8_t y[32])
{
    const __m128i packed = _mm_loadu_si128((const __m128i *) (const void *) qs);
    const __m128i mask = _mm_set1_epi8(0x0f);
    const __m256i codes = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(packed, 4), mask),
                                           _mm_and_si128(packed, mask));
    return dot_quads(_mm256_shuffle_epi8(table, codes), y);
}

/* sum + t[0] + t[1] + t[2] + t[3], added one at a time in that order. */
static inline float add_in_order(float sum, __m128 t)
{
    float v[4];
    _mm_storeu_ps(v, t);
    return sum + v[0] + v[1] + v[2] + v[3];
}

static inline __m256i load_table(const int8_t values[16])
{
    return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) (const void *) values));
}

/*
 * MXFP4 and IQ4_NL: four blocks a step, their integer sums converted and
 * scaled as a vector (each lane the scalar ((float) isum * dx) * dy) and
 * added to the sum one by one in block order; the other blocks one at a
 * time.  blocks: x's blocks; dx(b): block b's scale as a float.
 */
#define TABLE_DOT_ROW(T, values, dx)                                                                    \
    do {                                                                                              \
        const T *x = vx;                                                                              \
        const block_q8_0 *y = vy;                                                                     \
        const __m256i table = load_table(values);                                                    \
        const int nb = n / QK8_0;                                                                     \
        float sum = 0.0f;                                                                             \
        int b = 0;                                                                                    \
        for (; b + 4 <= nb; b += 4) {                                                                 \
            const __m128i isum = avx2_hsum4_epi32(                                                    \
                table_block_quads(table, x[b].qs, y[b].qs), table_block_quads(table, x[b + 1].qs, y[b + 1].qs), \
                table_block_quads(table, x[b + 2].qs, y[b + 2].qs),                                   \
                table_block_quads(table, x[b + 3].qs, y[b + 3].qs));                                  \
            const __m128 xs = _mm_setr_ps(dx(b), dx(b + 1), dx(b + 2), dx(b + 3));                    \
            const __m128 ys = _mm_setr_ps(_cvtsh_ss(y[b].d), _cvtsh_ss(y[b + 1].d), _cvtsh_ss(y[b + 2].d), \
                                          _cvtsh_ss(y[b + 3].d));                                     \
            sum = add_in_order(sum, _mm_mul_ps(_mm_mul_ps(_mm_cvtepi32_ps(isum), xs), ys));           \
        }                                                                                             \
        for (; b < nb; b++) {                                                                         \
            const int32_t isum = avx2_hsum_epi32(table_block_quads(table, x[b].qs, y[b].qs));              \
            sum += (float) isum * dx(b) * _cvtsh_ss(y[b].d);                                          \
        }                                                                                             \
        *s = sum;                                                                                     \
    } while (0)

void ggml__avx2_vec_dot_mxfp4_q8_0(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
#define MXFP4_SCALE(b) ggml__e8m0_half_to_fp32(x[b].e)
    TABLE_DOT_ROW(block_mxfp4, ggml__e2m1_doubled, MXFP4_SCALE);
#undef MXFP4_SCALE
}

void ggml__avx2_vec_dot_iq4_nl_q8_0(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
#define IQ4_NL_SCALE(b) _cvtsh_ss(x[b].d)
    TABLE_DOT_ROW(block_iq4_nl, ggml__iq4nl_values, IQ4_NL_SCALE);
#undef IQ4_NL_SCALE
}

void ggml__avx2_vec_dot_nvfp4_q8_0(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    const block_nvfp4 *x = vx;
    const block_q8_0 *y = vy;
    const __m256i table = load_table(ggml__e2m1_doubled);
    const __m128i mask = _mm_set1_epi8(0x0f);
    float sum = 0.0f;
    for (int b = 0; b < n / QK8_0; b++) {
        /* this Q8_0 block's two sub-blocks: 8 code bytes each, low nibbles first */
        const block_nvfp4 *xb = &x[b / 2];
        const int s0 = (b % 2) * 2;
        const __m128i packed = _mm_loadu_si128((const __m128i *) (const void *) (xb->qs + s0 * (QK_NVFP4_SUB / 2)));
        const __m128i lo = _mm_and_si128(packed, mask), hi = _mm_and_si128(_mm_srli_epi16(packed, 4), mask);
        const __m256i codes = _mm256_set_m128i(_mm_unpackhi_epi64(lo, hi), _mm_unpacklo_epi64(lo, hi));
        const __m256i quads = dot_quads(_mm256_shuffle_epi8(table, codes), y[b].qs);
        const int32_t isum0 = avx2_hsum_epi32_128(_mm256_castsi256_si128(quads));
        const int32_t isum1 = avx2_hsum_epi32_128(_mm256_extracti128_si256(quads, 1));
        const float dy = _cvtsh_ss(y[b].d);
        sum += (float) isum0 * ggml__ue4m3_half_to_fp32(xb->d[s0]) * dy;
        sum += (float) isum1 * ggml__ue4m3_half_to_fp32(xb->d[s0 + 1]) * dy;
    }
    *s = sum;
}

void ggml__avx2_vec_dot_q1_0_q8_0(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    const block_q1_0 *x = vx;
    const block_q8_0 *y = vy;
    /* byte j of the vector takes bit j % 8 of code byte j / 8 */
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                            2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x((int64_t) UINT64_C(0x8040201008040201));
    const __m256i one = _mm256_set1_epi8(1);
    float sum = 0.0f;
    for (int b = 0; b < n / QK8_0; b++) {
        const block_q1_0 *xb = &x[b / (QK1_0 / QK8_0)];
        uint32_t word;
        memcpy(&word, xb->qs + (b % (QK1_0 / QK8_0)) * (QK8_0 / 8), sizeof word);
        const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32((int32_t) word), spread);
        const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit);   /* -1 or 0 */
        /* +1 where set, -1 elsewhere: (set | 1) is -1 or 1, negated */
        const __m256i w = _mm256_sub_epi8(_mm256_setzero_si256(), _mm256_or_si256(set, one));
        const int32_t isum = avx2_hsum_epi32(dot_quads(w, y[b].qs));
        sum += (float) isum * _cvtsh_ss(xb->d) * _cvtsh_ss(y[b].d);
    }
    *s = sum;
}

void ggml__avx2_vec_dot_q2_0_q8_0(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    const block_q2_0 *x = vx;
    const block_q8_0 *y = vy;
    const __m128i three = _mm_set1_epi8(3);
    const __m256i one = _mm256_set1_epi8(1);
    float sum = 0.0f;
    for (int b = 0; b < n / QK8_0; b++) {
        const block_q2_0 *xb = &x[b / (QK2_0 / QK8_0)];
        const uint8_t *codes8 = xb->qs + (b % (QK2_0 / QK8_0)) * (QK8_0 / 4);
        const __m128i packed = _mm_loadl_epi64((const __m128i *) (const void *) codes8);
        /* c_k[i]: the code in bits 2k..2k+1 of byte i, that of value 4i + k */
        const __m128i c0 = _mm_and_si128(packed, three);
        const __m128i c1 = _mm_and_si128(_mm_srli_epi16(packed, 2), three);
        const __m128i c2 = _mm_and_si128(_mm_srli_epi16(packed, 4), three);
        const __m128i c3 = _mm_and_si128(_mm_srli_epi16(packed, 6), three);
        const __m128i c01 = _mm_unpacklo_epi8(c0, c1), c23 = _mm_unpacklo_epi8(c2, c3);
        const __m256i codes = _mm256_set_m128i(_mm_unpackhi_epi16(c01, c23), _mm_unpacklo_epi16(c01, c23));
        const int32_t isum = avx2_hsum_epi32(dot_quads(_mm256_sub_epi8(codes, one), y[b].qs));
        sum += (float) isum * _cvtsh_ss(xb->d) * _cvtsh_ss(y[b].d);
    }
    *s = sum;
}
