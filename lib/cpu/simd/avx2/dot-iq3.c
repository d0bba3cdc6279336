/*
 * simd/avx2/dot-iq3.c - dot products of IQ3_XXS and IQ3_S with q8_K rows at
 * the AVX2 level.
 *
 * Each block's integer sum is the generic level's (simd/generic/dot-iq3.c),
 * computed a sub-block of 32 values at a time: the eight codebook entries
 * give 32 magnitudes (0..62) as bytes, the signs expand to a byte mask of
 * the negative ones (lattice.h), and avx2_signed_pairs (lattice.h) multiplies them
 * exactly; madd scales.  The 32-bit lanes are summed over the block; the
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
#include "lattice.h"

/* FMA is available here: keep clang from fusing the block shares. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* 32-bit lanes of scale * sum sign * magnitude * y over 32 values
   (magnitudes 0..62: avx2_signed_pairs is exact; madd scales into 32-bit
   lanes). */
static inline __m256i sub_block_dot(__m256i magnitudes, __m256i negative, const int8_t *q8, int scale)
{
    return _mm256_madd_epi16(avx2_signed_pairs(magnitudes, negative, q8), _mm256_set1_epi16((short) scale));
}

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
            const __m256i negative = avx2_parity_sign_masks(word, word >> 7, word >> 14, word >> 21);
            acc = _mm256_add_epi32(acc, sub_block_dot(xxs_entries(x[b].qs + 8 * sub), negative,
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
            acc = _mm256_add_epi32(acc, sub_block_dot(s_entries(idx), avx2_negative_mask(sign_bits),
                                                      y[b].qs + 32 * sub, 2 * l + 1));
        }
        sum += ggml__q6_K_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), avx2_hsum_epi32(acc));
    }
    *s = sum;
}
