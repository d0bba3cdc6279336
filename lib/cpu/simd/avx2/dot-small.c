/*
 * simd/avx2/dot-small.c - AVX2 vec_dot entries of MXFP4 and IQ4_NL against
 * Q8_0 rows, bit for bit the generic level's (generic/dot-small.c).
 *
 * A block's 4-bit codes index a 16-entry table of small integers (doubled
 * E2M1 values, IQ4_NL's levels), which one byte shuffle looks up for all
 * 32 codes.  The 32 products are summed exactly as integers: maddubs takes
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

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define ONE_ROW_ONLY() ((void) bs, (void) bx, (void) by, (void) nrc)

/* The sum over j < 32 of table[code j] * y[j], codes packed as in Q4_0. */
static inline int32_t table_block_dot(__m256i table, const uint8_t qs[16], const int8_t y[32])
{
    const __m128i packed = _mm_loadu_si128((const __m128i *) (const void *) qs);
    const __m128i mask = _mm_set1_epi8(0x0f);
    const __m256i codes = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(packed, 4), mask),
                                           _mm_and_si128(packed, mask));
    const __m256i w = _mm256_shuffle_epi8(table, codes);
    const __m256i a = _mm256_loadu_si256((const __m256i *) (const void *) y);
    const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(a, a), _mm256_sign_epi8(w, a));
    const __m256i quads = _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(quads), _mm256_extracti128_si256(quads, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

static inline __m256i load_table(const int8_t values[16])
{
    return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) (const void *) values));
}

void ggml__avx2_vec_dot_mxfp4_q8_0(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    const block_mxfp4 *x = vx;
    const block_q8_0 *y = vy;
    const __m256i table = load_table(ggml__e2m1_doubled);
    float sum = 0.0f;
    for (int b = 0; b < n / QK_MXFP4; b++) {
        const int32_t isum = table_block_dot(table, x[b].qs, y[b].qs);
        sum += (float) isum * ggml__e8m0_half_to_fp32(x[b].e) * _cvtsh_ss(y[b].d);
    }
    *s = sum;
}

void ggml__avx2_vec_dot_iq4_nl_q8_0(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    const block_iq4_nl *x = vx;
    const block_q8_0 *y = vy;
    const __m256i table = load_table(ggml__iq4nl_values);
    float sum = 0.0f;
    for (int b = 0; b < n / QK4_NL; b++) {
        const int32_t isum = table_block_dot(table, x[b].qs, y[b].qs);
        sum += (float) isum * _cvtsh_ss(x[b].d) * _cvtsh_ss(y[b].d);
    }
    *s = sum;
}
