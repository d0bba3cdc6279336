/*
 * simd/avx2/dot-iq2.c - dot products of IQ2_XXS, IQ2_XS and IQ2_S with q8_K
 * rows at the AVX2 level.
 *
 * Each block's integer sum is the generic level's (simd/generic/dot-iq2.c),
 * computed a sub-block of 32 values (four groups) at a time: the four
 * lattice points widen to magnitudes 8, 25, 43 (or 0) as bytes, the signs
 * to a byte mask (XXS, XS: from a table of the masks of seven bits and
 * parity), avx2_signed_pairs (lattice.h) multiplies them with the q8 bytes
 * exactly, and madd scales the pairs by 2 s + 1 (per 32 values for XXS, per
 * 16 for XS and S: one scale per 128-bit lane) into 32-bit lanes.  The
 * lanes are summed over the block (below 2^31, see the generic file) and
 * ggml__iq2_block_dot scales it; blocks are added in order as the generic
 * level does: the generic results bit for bit.
 */
#include "config.h"

#include <immintrin.h>
#include <stdint.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "avx2.h"
#include "lattice.h"

/* FMA is available here: keep clang from fusing the block shares. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* The magnitude of each 2-bit level code (ggml__iq2_coord), laid out for
   avx2_grid_bytes. */
static inline __m256i level_magnitudes(void)
{
    return _mm256_setr_epi8(8, 25, 43, 0, 25, 0, 0, 0, 43, 0, 0, 0, 0, 0, 0, 0,
                            8, 25, 43, 0, 25, 0, 0, 0, 43, 0, 0, 0, 0, 0, 0, 0);
}

/* 32-bit lanes of the scaled signed products of four groups (points
   p0..p3; negative: byte mask of the negative values) with 32 q8 bytes;
   scales: 16-bit lanes of 2 s + 1. */
static inline __m256i four_groups(uint16_t p0, uint16_t p1, uint16_t p2, uint16_t p3, __m256i negative,
                                  const int8_t *q8, __m256i scales)
{
    const __m256i magnitudes = avx2_grid_bytes(p0, p1, p2, p3, level_magnitudes());
    return _mm256_madd_epi16(avx2_signed_pairs(magnitudes, negative, q8), scales);
}

/* 16-bit lanes of 2 s + 1 for the two halves of sub-block b of an IQ2_XS or
   IQ2_S block (low nibble of scales[b]: the first 16 values). */
static inline __m256i half_scales(uint8_t scales)
{
    return _mm256_set_m128i(_mm_set1_epi16((short) (2 * (scales >> 4) + 1)),
                            _mm_set1_epi16((short) (2 * (scales & 0x0f) + 1)));
}

void ggml__avx2_vec_dot_iq2_xxs_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                     const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_iq2_xxs *x = vx;
    const block_q8_K *y = vy;
    const uint16_t *points = ggml__iq2xxs_points;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        __m256i acc = _mm256_setzero_si256();
        for (int sub = 0; sub < QK_K / 32; sub++) {
            /* word 0: the four point indices; word 1: 4 x 7 signs, the scale */
            uint32_t words[2];
            memcpy(words, x[b].qs + 4 * sub, sizeof words);
            const __m256i negative =
                avx2_parity_sign_masks(words[1], words[1] >> 7, words[1] >> 14, words[1] >> 21);
            acc = _mm256_add_epi32(
                acc, four_groups(points[words[0] & 0xff], points[(words[0] >> 8) & 0xff],
                                 points[(words[0] >> 16) & 0xff], points[words[0] >> 24], negative,
                                 y[b].qs + 32 * sub, _mm256_set1_epi16((short) (2 * (words[1] >> 28) + 1))));
        }
        sum += ggml__iq2_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), avx2_hsum_epi32(acc));
    }
    *s = sum;
}

void ggml__avx2_vec_dot_iq2_xs_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                    const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_iq2_xs *x = vx;
    const block_q8_K *y = vy;
    const uint16_t *points = ggml__iq2xs_points;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        __m256i acc = _mm256_setzero_si256();
        for (int sub = 0; sub < QK_K / 32; sub++) {
            /* per group: point index in bits 0..8, seven signs above */
            const uint16_t *q = x[b].qs + 4 * sub;
            const __m256i negative = avx2_parity_sign_masks(q[0] >> 9u, q[1] >> 9u, q[2] >> 9u, q[3] >> 9u);
            acc = _mm256_add_epi32(acc, four_groups(points[q[0] & 0x1ff], points[q[1] & 0x1ff], points[q[2] & 0x1ff],
                                                    points[q[3] & 0x1ff], negative, y[b].qs + 32 * sub,
                                                    half_scales(x[b].scales[sub])));
        }
        sum += ggml__iq2_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), avx2_hsum_epi32(acc));
    }
    *s = sum;
}

void ggml__avx2_vec_dot_iq2_s_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                   const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_iq2_s *x = vx;
    const block_q8_K *y = vy;
    const uint16_t *points = ggml__iq2s_points;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        __m256i acc = _mm256_setzero_si256();
        for (int sub = 0; sub < QK_K / 32; sub++) {
            /* point index: low byte qs[4 sub + l], bits 2 l of qh[sub] above; signs: a byte per group */
            const uint8_t *q = x[b].qs + 4 * sub;
            const unsigned high = x[b].qh[sub];
            uint32_t sign_bits;
            memcpy(&sign_bits, x[b].qs + QK_K / 8 + 4 * sub, sizeof sign_bits);
            acc = _mm256_add_epi32(
                acc, four_groups(points[q[0] | (high & 3) << 8], points[q[1] | ((high >> 2) & 3) << 8],
                                 points[q[2] | ((high >> 4) & 3) << 8], points[q[3] | (high >> 6) << 8],
                                 avx2_negative_mask(sign_bits),
                                 y[b].qs + 32 * sub, half_scales(x[b].scales[sub])));
        }
        sum += ggml__iq2_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), avx2_hsum_epi32(acc));
    }
    *s = sum;
}
