/*
 * simd/avx2/dot-iq3.c - dot products of IQ3_XXS and IQ3_S with q8_K rows at
 * the AVX2 level.
 *
 * Each block's integer sum is the generic level's (simd/generic/dot-iq3.c),
 * computed a sub-block of 32 values at a time: the eight codebook entries
 * give 32 magnitudes (0..62) as bytes, the sign bits expand to a byte mask
 * of the negative ones, and sub_block_dot multiplies and scales them
 * exactly (see there).  The 32-bit lanes are summed over the block; the
 * block's share is then ggml__q6_K_block_dot of that
 * sum, added in block order as the generic level does, so the results are
 * the generic ones bit for bit.
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

/* Bytes of 0xff where bit i of bits is set, 0 elsewhere (byte i: bit i). */
static inline __m256i negative_mask(uint32_t bits)
{
    /* byte i of the broadcast word: byte i / 8 of bits, then its bit i % 8 */
    const __m256i spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32((int) bits),
        _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0x0000000000000000));
    const __m256i bit = _mm256_set1_epi64x((long long) 0x8040201008040201ull);
    return _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
}

/*
 * 32-bit lanes of scale * sum sign * magnitude * y over 32 values.  The
 * positive and the negative magnitudes are multiplied separately (maddubs:
 * unsigned by signed bytes, pairs added: |sum| <= 2 * 62 * 128, exact for
 * every int8 y, -128 included), their difference (at most 4 * 62 * 128 in
 * magnitude) still fits 16 bits, and madd scales it into 32-bit lanes.
 */
static inline __m256i sub_block_dot(__m256i magnitudes, uint32_t sign_bits, const int8_t *q8, int scale)
{
    const __m256i negative = negative_mask(sign_bits);
    const __m256i y = _mm256_loadu_si256((const __m256i *) q8);
    const __m256i pos = _mm256_maddubs_epi16(_mm256_andnot_si256(negative, magnitudes), y);
    const __m256i neg = _mm256_maddubs_epi16(_mm256_and_si256(negative, magnitudes), y);
    return _mm256_madd_epi16(_mm256_sub_epi16(pos, neg), _mm256_set1_epi16((short) scale));
}

/* ggml__iq3_xxs_signs(k) for k = 0..127, as a constant table */
#define XXS_PARITY(k) (((k) ^ (k) >> 1 ^ (k) >> 2 ^ (k) >> 3 ^ (k) >> 4 ^ (k) >> 5 ^ (k) >> 6) & 1)
#define XXS_SIGNS1(k) (uint8_t) ((k) | XXS_PARITY(k) << 7)
#define XXS_SIGNS4(k) XXS_SIGNS1(k), XXS_SIGNS1((k) + 1), XXS_SIGNS1((k) + 2), XXS_SIGNS1((k) + 3)
#define XXS_SIGNS16(k) XXS_SIGNS4(k), XXS_SIGNS4((k) + 4), XXS_SIGNS4((k) + 8), XXS_SIGNS4((k) + 12)
static const uint8_t xxs_signs[128] = {
    XXS_SIGNS16(0),  XXS_SIGNS16(16), XXS_SIGNS16(32), XXS_SIGNS16(48),
    XXS_SIGNS16(64), XXS_SIGNS16(80), XXS_SIGNS16(96), XXS_SIGNS16(112),
};

/* The eight codebook entries grid[qs[g]] of IQ3_XXS (scalar loads: faster
   than a gather for byte indices here) and of IQ3_S (9-bit indices built
   in 32-bit lanes: gathered). */
static inline __m256i xxs_entries(const uint8_t *qs)
{
    const uint32_t *grid = ggml__iq3_xxs_grid;
    return _mm256_set_epi32((int) grid[qs[7]], (int) grid[qs[6]], (int) grid[qs[5]], (int) grid[qs[4]],
                            (int) grid[qs[3]], (int) grid[qs[2]], (int) grid[qs[1]], (int) grid[qs[0]]);
}

static inline __m256i s_entries(__m256i idx)
{
    return _mm256_i32gather_epi32((const int *) ggml__iq3_s_grid, idx, 4);
}

void ggml__avx2_vec_dot_iq3_xxs_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                     const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_iq3_xxs *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        __m256i acc = _mm256_setzero_si256();
        for (int sub = 0; sub < QK_K / 32; sub++) {
            uint32_t word;
            memcpy(&word, x[b].qs + QK_K / 4 + 4 * sub, sizeof word);
            const uint32_t sign_bits = (uint32_t) xxs_signs[word & 0x7f] | (uint32_t) xxs_signs[(word >> 7) & 0x7f] << 8 |
                                       (uint32_t) xxs_signs[(word >> 14) & 0x7f] << 16 |
                                       (uint32_t) xxs_signs[(word >> 21) & 0x7f] << 24;
            acc = _mm256_add_epi32(acc, sub_block_dot(xxs_entries(x[b].qs + 8 * sub), sign_bits,
                                                      y[b].qs + 32 * sub, (int) (2 * (word >> 28) + 1)));
        }
        sum += ggml__q6_K_block_dot(y[b].d, 0.25f * ggml__fp16_to_fp32(x[b].d), avx2_hsum_epi32(acc));
    }
    *s = sum;
}

void ggml__avx2_vec_dot_iq3_s_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                   const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_iq3_s *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        __m256i acc = _mm256_setzero_si256();
        for (int sub = 0; sub < QK_K / 32; sub++) {
            /* the eight 9-bit indices: low bytes, bit g of qh[sub] as bit 8 of index g */
            int64_t low;
            memcpy(&low, x[b].qs + 8 * sub, sizeof low);
            const __m256i ninth = _mm256_and_si256(
                _mm256_sllv_epi32(_mm256_set1_epi32(x[b].qh[sub]), _mm256_setr_epi32(8, 7, 6, 5, 4, 3, 2, 1)),
                _mm256_set1_epi32(0x100));
            const __m256i idx = _mm256_or_si256(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(low)), ninth);
            uint32_t sign_bits;
            memcpy(&sign_bits, x[b].signs + 4 * sub, sizeof sign_bits);
            const int l = (x[b].scales[sub / 2] >> (4 * (sub % 2))) & 0x0f;
            acc = _mm256_add_epi32(acc, sub_block_dot(s_entries(idx), sign_bits,
                                                      y[b].qs + 32 * sub, 2 * l + 1));
        }
        sum += ggml__q6_K_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), avx2_hsum_epi32(acc));
    }
    *s = sum;
}
