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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "avx2.h"
#include "intsum.h"
#include "../prefetch-rows.h"

/* FMA is available here: keep clang from fusing the block shares. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

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
    const int32_t mins = avx2_hsum_epi32(_mm256_madd_epi16(bsums, mins16));

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
    return ggml__q4_K_block_dot(y->d, ggml__fp16_to_fp32(d), ggml__fp16_to_fp32(dmin), avx2_hsum_epi32(acc), mins);
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
        const int32_t offset = 32 * avx2_hsum_epi32(_mm256_madd_epi16(bsums, sc16));

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
        sum += ggml__q6_K_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), avx2_hsum_epi32(acc) - offset);
    }
    *s = sum;
}

/* ------------------------------------------------ several rows a call */

/*
 * vec_dot_rows entries: four weight rows a call against one q8_K row, so
 * that the activations are loaded once for the four rows, the horizontal
 * sums of four rows share their instructions, and the rows after this
 * call's are prefetched (prefetch-rows.h).  Each row's block shares are
 * the integer sums of the single-row kernels above, combined by the same
 * float operations as ggml__q4_K_block_dot / ggml__q6_K_block_dot (one
 * lane a row, no fused multiply-add) and added in block order: each s[r]
 * is the generic level's result bit for bit.  Fewer than four rows: the
 * missing rows read row 0 again, their sums are not stored.
 */

#include "k-blocks.h"

/*
 * The rows of q4_K (fifth false) or q5_K (fifth true); the q5_K block is
 * q4_K's with qh between the scales and the low nibbles.  Per block and
 * row: scaled[r], eight 32-bit lanes adding to
 * sum_s sc[s] * sum_{j in s} q[j] y[j], and mins[r], four adding to
 * sum_s mn[s] * (the activations' sum over s).  The steps of 64 values
 * run over the four rows in turn, the activations read from memory as
 * operands (the registers hold the rows' scales and sums).
 */
ALWAYS_INLINE void affine_k_rows(bool fifth, int n, float *s, const void *vx, size_t bx, const void *vy, int nr)
{
    const char *row[4];
    rows_of_call(row, vx, bx, nr);
    const size_t step = fifth ? sizeof(block_q5_K) : sizeof(block_q4_K);
    const size_t qs_at = fifth ? offsetof(block_q5_K, qs) : offsetof(block_q4_K, qs);
    const __m256i low4 = _mm256_set1_epi8(0x0f), bit4 = _mm256_set1_epi8(0x10);
    const block_q8_K *y = vy;
    __m128 sum = _mm_setzero_ps();
    struct ggml__rows_prefetch ahead = ggml__rows_prefetch_init(vx, bx, nr, n / QK_K);
    for (int b = 0; b < n / QK_K; b++) {
        ggml__rows_prefetch_step(&ahead);
        /* the activations' sums of 32 in the upper lane, against the minimums */
        const __m256i ysub = _mm256_inserti128_si256(_mm256_setzero_si256(), q8_K_sums32(&y[b]), 1);
        const char *blk[4], *dmin[4];
        __m256i scaled[4], mins[4];
        GGML__UNROLL
        for (int r = 0; r < 4; r++) {
            blk[r] = row[r] + (size_t) b * step;
            dmin[r] = blk[r] + offsetof(block_q4_K, dmin);   /* the same place in q5_K */
            const __m256i sc_mn = q4_K_scales_mins((const uint8_t *) blk[r] + offsetof(block_q4_K, scales));
            mins[r] = _mm256_madd_epi16(sc_mn, ysub);
            /* the scales in both lanes; byte pairs picked by shuffles */
            const __m256i sc16 = _mm256_permute4x64_epi64(sc_mn, _MM_SHUFFLE(1, 0, 1, 0));
            __m256i acc = _mm256_setzero_si256();
            GGML__UNROLL
            for (int c = 0; c < 4; c++) {
                /* the 16-bit scale of sub-block 2c and of 2c + 1 in every lane */
                const __m256i pick_lo = _mm256_set1_epi16((short) (0x0100 * (4 * c + 1) + 4 * c));
                const __m256i pick_hi = _mm256_set1_epi16((short) (0x0100 * (4 * c + 3) + 4 * c + 2));
                const __m256i *a = (const __m256i *) (const void *) (y[b].qs + 64 * c);
                const __m256i q = _mm256_loadu_si256((const __m256i *) (const void *) (blk[r] + qs_at + 32 * c));
                __m256i lo = _mm256_and_si256(q, low4);
                __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
                if (fifth) {   /* bit 4: bits 2c and 2c + 1 of qh[l] */
                    const __m256i h = _mm256_srli_epi16(
                        _mm256_loadu_si256((const __m256i *) (const void *) (blk[r] + offsetof(block_q5_K, qh))), 2 * c);
                    lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_slli_epi16(h, 4), bit4));
                    hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_slli_epi16(h, 3), bit4));
                }
                const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, _mm256_loadu_si256(a)),
                                                     _mm256_shuffle_epi8(sc16, pick_lo));
                const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, _mm256_loadu_si256(a + 1)),
                                                     _mm256_shuffle_epi8(sc16, pick_hi));
                acc = _mm256_add_epi32(acc, _mm256_add_epi32(p0, p1));
            }
            scaled[r] = acc;
        }
        const __m128i isum = avx2_hsum4_epi32(scaled[0], scaled[1], scaled[2], scaled[3]);
        const __m128i imin = avx2_hsum4_epi32(mins[0], mins[1], mins[2], mins[3]);
        /* ggml__q4_K_block_dot in four lanes */
        const __m128 dy = _mm_set1_ps(y[b].d);
        const __m128 scale = _mm_mul_ps(dy, four_f16(blk)), min_scale = _mm_mul_ps(dy, four_f16(dmin));
        const __m128 product = _mm_mul_ps(scale, _mm_cvtepi32_ps(isum));
        const __m128 min_product = _mm_mul_ps(min_scale, _mm_cvtepi32_ps(imin));
        sum = _mm_add_ps(sum, _mm_sub_ps(product, min_product));
    }
    store_sums(s, sum, nr);
}

void ggml__avx2_vec_dot_rows_q4_K(int n, float *s, const void *vx, size_t bx, const void *vy, int nr)
{
    affine_k_rows(false, n, s, vx, bx, vy, nr);
}

void ggml__avx2_vec_dot_rows_q5_K(int n, float *s, const void *vx, size_t bx, const void *vy, int nr)
{
    affine_k_rows(true, n, s, vx, bx, vy, nr);
}

/*
 * The integer sum of one q6_K block against the activations at y (eight
 * lanes adding to sum_s sc[s] * sum_{j in s} (q[j] - 32) y[j]): the
 * codes' products, minus 32 times the scaled group sums.  Value 32 p + l
 * of a half takes its two high bits from bits 2p, 2p + 1 of qh[l], moved
 * to bits 4, 5 by one shift of 4 - 2p (every other bit masked off).
 */
ALWAYS_INLINE __m256i q6_K_sums(const block_q6_K *x, const block_q8_K *y, __m256i bsums)
{
    const __m256i low4 = _mm256_set1_epi8(0x0f), bits45 = _mm256_set1_epi8(0x30);
    const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) (const void *) x->scales));
    __m256i acc = _mm256_slli_epi32(_mm256_madd_epi16(bsums, sc16), 5);
    acc = _mm256_sub_epi32(_mm256_setzero_si256(), acc);
    GGML__UNROLL
    for (int half = 0; half < 2; half++) {
        /* the half's eight scales in both 128-bit lanes */
        const __m256i sc = _mm256_broadcastsi128_si256(half ? _mm256_extracti128_si256(sc16, 1)
                                                             : _mm256_castsi256_si128(sc16));
        const uint8_t *ql = x->ql + 64 * half;
        const __m256i qh = _mm256_loadu_si256((const __m256i *) (const void *) (x->qh + 32 * half));
        const __m256i ql0 = _mm256_loadu_si256((const __m256i *) (const void *) ql);
        const __m256i ql1 = _mm256_loadu_si256((const __m256i *) (const void *) (ql + 32));
        GGML__UNROLL
        for (int part = 0; part < 4; part++) {
            const __m256i src = (part & 1) ? ql1 : ql0;
            const __m256i nib = part < 2 ? _mm256_and_si256(src, low4) : _mm256_and_si256(_mm256_srli_epi16(src, 4), low4);
            const __m256i h = part == 0 ? _mm256_slli_epi16(qh, 4) : part == 1 ? _mm256_slli_epi16(qh, 2)
                            : part == 2 ? qh : _mm256_srli_epi16(qh, 2);
            const __m256i code = _mm256_or_si256(nib, _mm256_and_si256(h, bits45));
            const __m256i a = _mm256_loadu_si256((const __m256i *) (const void *) (y->qs + 128 * half + 32 * part));
            /* lanes 0..7: the scale of group 2 part, lanes 8..15: of group 2 part + 1 (of this half) */
            const __m256i pick = _mm256_setr_epi8(4 * part, 4 * part + 1, 4 * part, 4 * part + 1, 4 * part,
                                                  4 * part + 1, 4 * part, 4 * part + 1, 4 * part, 4 * part + 1,
                                                  4 * part, 4 * part + 1, 4 * part, 4 * part + 1, 4 * part,
                                                  4 * part + 1, 4 * part + 2, 4 * part + 3, 4 * part + 2,
                                                  4 * part + 3, 4 * part + 2, 4 * part + 3, 4 * part + 2,
                                                  4 * part + 3, 4 * part + 2, 4 * part + 3, 4 * part + 2,
                                                  4 * part + 3, 4 * part + 2, 4 * part + 3, 4 * part + 2,
                                                  4 * part + 3);
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(code, a), _mm256_shuffle_epi8(sc, pick)));
        }
    }
    return acc;
}

void ggml__avx2_vec_dot_rows_q6_K(int n, float *s, const void *vx, size_t bx, const void *vy, int nr)
{
    const char *row[4];
    rows_of_call(row, vx, bx, nr);
    const block_q8_K *y = vy;
    __m128 sum = _mm_setzero_ps();
    struct ggml__rows_prefetch ahead = ggml__rows_prefetch_init(vx, bx, nr, n / QK_K);
    for (int b = 0; b < n / QK_K; b++) {
        ggml__rows_prefetch_step(&ahead);
        const __m256i bsums = _mm256_loadu_si256((const __m256i *) (const void *) y[b].bsums);
        const block_q6_K *x[4];
        const char *d[4];
        GGML__UNROLL
        for (int r = 0; r < 4; r++) {
            x[r] = (const block_q6_K *) (const void *) row[r] + b;
            d[r] = (const char *) x[r] + offsetof(block_q6_K, d);
        }
        const __m128i isum = avx2_hsum4_epi32(q6_K_sums(x[0], &y[b], bsums), q6_K_sums(x[1], &y[b], bsums),
                                        q6_K_sums(x[2], &y[b], bsums), q6_K_sums(x[3], &y[b], bsums));
        /* ggml__q6_K_block_dot in four lanes */
        const __m128 scale = _mm_mul_ps(_mm_set1_ps(y[b].d), four_f16(d));
        sum = _mm_add_ps(sum, _mm_mul_ps(scale, _mm_cvtepi32_ps(isum)));
    }
    store_sums(s, sum, nr);
}
