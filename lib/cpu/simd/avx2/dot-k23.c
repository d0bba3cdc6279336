/*
 * simd/avx2/dot-k23.c - dot products of q2_K and q3_K with q8_K rows at
 * the AVX2 level.
 *
 * Each block's integer sums are the generic level's (simd/generic/
 * dot-k23.c), computed 32 values at a time: the 2-bit fields of a run of
 * 32 values sit at one bit position of 32 consecutive bytes, so a shift
 * and a mask give them as unsigned bytes (q3_K adds its third bit from
 * hmask the same way); maddubs multiplies them with the signed
 * activations and adds pairs into 16-bit lanes (at most 2 * 7 * 128, no
 * saturation), madd multiplies those with the scales of the two
 * sub-blocks of 16 into 32-bit lanes.  q3_K's offset of 4 is taken out
 * through the q8_K block's sums of 16 codes:
 *     sum_j sc (q_j - 4) y_j = sc sum_j q_j y_j - 4 sc bsum,
 * and q2_K's minimums come from those sums too.  The block's share is
 * then formed by ggml__q4_K_block_dot / ggml__q6_K_block_dot and added in
 * block order, as the generic level does, so the results are the generic
 * ones bit for bit.
 */
#include "config.h"

#include <immintrin.h>
#include <stdint.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "avx2.h"
#include "intsum.h"

/* FMA is available here: keep clang from fusing the block shares. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* 16-bit lanes 0..7 = lanes[s] and 8..15 = lanes[s + 1] of a vector of 16 scales. */
static inline __m256i two_scales(const int16_t lanes[16], int s)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_set1_epi16(lanes[s])), _mm_set1_epi16(lanes[s + 1]), 1);
}

/* sum_s scales[s] * (sum of the 2-bit (q2_K) or 3-bit (q3_K: hmask not NULL) codes of sub-block s times y) */
static inline int32_t k23_scaled_sum(const uint8_t *qs, const uint8_t *hmask, const int16_t scales[16],
                                     const block_q8_K *y)
{
    const __m256i three = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
    const __m256i high = hmask != NULL ? _mm256_loadu_si256((const __m256i *) (const void *) hmask)
                                       : _mm256_setzero_si256();
    __m256i acc = _mm256_setzero_si256();
    for (int half = 0; half < 2; half++) {
        const __m256i q = _mm256_loadu_si256((const __m256i *) (const void *) (qs + 32 * half));
        /* part p: values 128 half + 32 p + l, bits 2 p of byte l; third bit at bit 4 half + p of hmask[l] */
        for (int part = 0; part < 4; part++) {
            __m256i code = _mm256_and_si256(_mm256_srli_epi16(q, 2 * part), three);
            if (hmask != NULL) {
                const __m256i bit = _mm256_and_si256(_mm256_srli_epi16(high, 4 * half + part), one);
                code = _mm256_or_si256(code, _mm256_slli_epi16(bit, 2));
            }
            const __m256i a = _mm256_loadu_si256((const __m256i *) (const void *) (y->qs + 128 * half + 32 * part));
            const __m256i sc = two_scales(scales, 8 * half + 2 * part);
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(code, a), sc));
        }
    }
    return avx2_hsum_epi32(acc);
}

void ggml__avx2_vec_dot_q2_K_q8_K(GGML__VEC_DOT_PARAMS)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_q2_K *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        const __m256i packed = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *) (const void *) x[b].scales));
        const __m256i mins16 = _mm256_srli_epi16(packed, 4);
        const __m256i bsums = _mm256_loadu_si256((const __m256i *) (const void *) y[b].bsums);
        const int32_t mins = avx2_hsum_epi32(_mm256_madd_epi16(bsums, mins16));
        int16_t sc[16];
        _mm256_storeu_si256((__m256i *) (void *) sc, _mm256_and_si256(packed, _mm256_set1_epi16(0x0f)));
        const int32_t scaled = k23_scaled_sum(x[b].qs, NULL, sc, &y[b]);
        sum += ggml__q4_K_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), ggml__fp16_to_fp32(x[b].dmin), scaled, mins);
    }
    *s = sum;
}

void ggml__avx2_vec_dot_q3_K_q8_K(GGML__VEC_DOT_PARAMS)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_q3_K *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        int16_t sc[16];
        for (int s16 = 0; s16 < 16; s16++)
            sc[s16] = (int16_t) (ggml__q3_K_scale(x[b].scales, s16) - 32);
        const __m256i sc16 = _mm256_loadu_si256((const __m256i *) (const void *) sc);
        const __m256i bsums = _mm256_loadu_si256((const __m256i *) (const void *) y[b].bsums);
        const int32_t offset = 4 * avx2_hsum_epi32(_mm256_madd_epi16(bsums, sc16));
        const int32_t scaled = k23_scaled_sum(x[b].qs, x[b].hmask, sc, &y[b]) - offset;
        sum += ggml__q6_K_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), scaled);
    }
    *s = sum;
}
