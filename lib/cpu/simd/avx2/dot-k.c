/*
 * simd/avx2/dot-k.c - dot products of the K-quants (q4_K, q5_K, q6_K) with q8_K
 * rows at the AVX2 level.
 *
 * Each block's integer sums are the generic level's (simd/generic/dot-k.c),
 * computed 32 values at a time: maddubs multiplies the unsigned codes
 * (0..15, 0..31 or 0..63) with the signed activations and adds pairs into 16-bit
 * lanes (at most 2 * 63 * 128, no saturation), madd multiplies those with
 * the sub-block scales into 32-bit lanes.  q6_K's offset of 32 is taken
 * out afterwards through the q8_K block's sums of 16 codes:
 *     sum_j sc (q_j - 32) y_j = sc sum_j q_j y_j - 32 sc bsum.
 * The block's share is then formed by ggml__q4_K_block_dot /
 * ggml__q6_K_block_dot and added in block order, as the generic level
 * does, so the results are the generic ones bit for bit.
 */
#include "config.h"

#include <immintrin.h>
#include <stdint.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "avx2.h"

/* FMA is available here: keep clang from fusing the block shares. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

static inline int32_t hsum_epi32(__m256i v)
{
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

/* 16-bit lanes 0..7 = lo, 8..15 = hi: the scales of two sub-blocks of 16. */
static inline __m256i two_scales(int lo, int hi)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_set1_epi16((short) lo)), _mm_set1_epi16((short) hi), 1);
}

/*
 * One q4_K or q5_K block (qh NULL for q4_K: 4-bit codes) against a q8_K
 * block: its share of the dot product.
 */
static inline float affine_k_block(ggml_fp16_t d, ggml_fp16_t dmin, const uint8_t *scales, const uint8_t *qs,
                                   const uint8_t *qh, const block_q8_K *y)
{
    const __m256i low4 = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi8(1);
    int sc[8], mn[8];
    for (int s8 = 0; s8 < 8; s8++)
        ggml__q4_K_scale_min(scales, s8, &sc[s8], &mn[s8]);

    /* minimum: mn[s] times the two group sums of sub-block s */
    const __m256i mins16 = _mm256_setr_epi16((short) mn[0], (short) mn[0], (short) mn[1], (short) mn[1],
                                             (short) mn[2], (short) mn[2], (short) mn[3], (short) mn[3],
                                             (short) mn[4], (short) mn[4], (short) mn[5], (short) mn[5],
                                             (short) mn[6], (short) mn[6], (short) mn[7], (short) mn[7]);
    const __m256i bsums = _mm256_loadu_si256((const __m256i *) (const void *) y->bsums);
    const int32_t mins = hsum_epi32(_mm256_madd_epi16(bsums, mins16));

    /* 64 values a step: the low nibbles are sub-block 2c, the high ones 2c + 1 */
    const __m256i high = qh != NULL ? _mm256_loadu_si256((const __m256i *) (const void *) qh) : _mm256_setzero_si256();
    __m256i acc = _mm256_setzero_si256();
    for (int c = 0; c < 4; c++) {
        const __m256i q = _mm256_loadu_si256((const __m256i *) (const void *) (qs + 32 * c));
        __m256i lo = _mm256_and_si256(q, low4);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
        if (qh != NULL) {   /* bit 4: bits 2c and 2c + 1 of qh[l] */
            lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 2 * c), one), 4));
            hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 2 * c + 1), one), 4));
        }
        const __m256i a0 = _mm256_loadu_si256((const __m256i *) (const void *) (y->qs + 64 * c));
        const __m256i a1 = _mm256_loadu_si256((const __m256i *) (const void *) (y->qs + 64 * c + 32));
        const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, a0), _mm256_set1_epi16((short) sc[2 * c]));
        const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, a1), _mm256_set1_epi16((short) sc[2 * c + 1]));
        acc = _mm256_add_epi32(acc, _mm256_add_epi32(p0, p1));
    }
    return ggml__q4_K_block_dot(y->d, ggml__fp16_to_fp32(d), ggml__fp16_to_fp32(dmin), hsum_epi32(acc), mins);
}

void ggml__avx2_vec_dot_q4_K_q8_K(GGML__VEC_DOT_PARAMS)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_q4_K *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++)
        sum += affine_k_block(x[b].d, x[b].dmin, x[b].scales, x[b].qs, NULL, &y[b]);
    *s = sum;
}

void ggml__avx2_vec_dot_q5_K_q8_K(GGML__VEC_DOT_PARAMS)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_q5_K *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++)
        sum += affine_k_block(x[b].d, x[b].dmin, x[b].scales, x[b].qs, x[b].qh, &y[b]);
    *s = sum;
}

void ggml__avx2_vec_dot_q6_K_q8_K(GGML__VEC_DOT_PARAMS)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_q6_K *x = vx;
    const block_q8_K *y = vy;
    const __m256i low4 = _mm256_set1_epi8(0x0f), two = _mm256_set1_epi8(3);
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        const int8_t *sc = x[b].scales;

        /* the offset: 32 * sum_s sc[s] * bsum[s] (sub-blocks are the groups of 16) */
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) (const void *) sc));
        const __m256i bsums = _mm256_loadu_si256((const __m256i *) (const void *) y[b].bsums);
        const int32_t offset = 32 * hsum_epi32(_mm256_madd_epi16(bsums, sc16));

        __m256i acc = _mm256_setzero_si256();
        for (int half = 0; half < 2; half++) {
            const uint8_t *ql = x[b].ql + 64 * half;
            const __m256i qh = _mm256_loadu_si256((const __m256i *) (const void *) (x[b].qh + 32 * half));
            const __m256i ql0 = _mm256_loadu_si256((const __m256i *) (const void *) ql);
            const __m256i ql1 = _mm256_loadu_si256((const __m256i *) (const void *) (ql + 32));
            /* part p: values 32 p .. 32 p + 31 of this half */
            for (int part = 0; part < 4; part++) {
                const __m256i src = (part & 1) ? ql1 : ql0;
                const __m256i nib = part < 2 ? _mm256_and_si256(src, low4)
                                             : _mm256_and_si256(_mm256_srli_epi16(src, 4), low4);
                const __m256i high = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * part), two);
                const __m256i code = _mm256_or_si256(nib, _mm256_slli_epi16(high, 4));
                const __m256i a = _mm256_loadu_si256((const __m256i *) (const void *) (y[b].qs + 128 * half + 32 * part));
                const int s16 = 8 * half + 2 * part;
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(code, a), two_scales(sc[s16], sc[s16 + 1])));
            }
        }
        sum += ggml__q6_K_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), hsum_epi32(acc) - offset);
    }
    *s = sum;
}
