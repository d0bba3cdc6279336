/*
 * simd/avx2/dot-iq1.c - dot products of IQ1_S and IQ1_M with q8_K rows at
 * the AVX2 level.
 *
 * Each block's integer total is the generic level's (simd/generic/dot-iq1.c:
 * the values times q8 in eighths of d), computed 32 values (four groups)
 * at a time.  The four grid points widen to bytes c = v + 1 (0..2, code 3
 * kept as 3 as the generic level reads it), so with a = maddubs(c, y) and
 * s = maddubs(1, y) (16-bit lanes of byte pairs) a pair's eighths are
 * w = 8 (a - s) +- s (|a - s| <= 2 * 2 * 128, |w| <= 4352: exact in 16
 * bits), the sign applied to s as (s ^ m) - m with m all ones where the
 * shift is -1/8; madd multiplies w by 2 s + 1 into 32-bit lanes.  The lanes
 * are summed over the block (|total| < 2^24) and ggml__iq1_block_dot scales
 * it; blocks are added in order as the generic level does: the generic
 * results bit for bit.
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

/* The byte of a 2-bit grid code is the code itself (lattice.h's layout). */
static inline __m256i grid_code_levels(void)
{
    return _mm256_setr_epi8(0, 1, 2, 3, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0,
                            0, 1, 2, 3, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0);
}

/*
 * 32-bit lanes of the eighths of 32 values (grid indices i0..i3 of four
 * groups) times y, scaled: negative and scales are 16-bit lanes, all ones
 * where the group's shift is -1/8 and 2 s + 1 (see the file comment).
 */
static inline __m256i four_groups(unsigned i0, unsigned i1, unsigned i2, unsigned i3, const int8_t *q8,
                                  __m256i negative, __m256i scales)
{
    const uint16_t *grid = ggml__iq1_grid;
    const __m256i c = avx2_grid_bytes(grid[i0], grid[i1], grid[i2], grid[i3], grid_code_levels());
    const __m256i y = _mm256_loadu_si256((const __m256i *) q8);
    const __m256i a = _mm256_maddubs_epi16(c, y);
    const __m256i s = _mm256_maddubs_epi16(_mm256_set1_epi8(1), y);
    const __m256i shift = _mm256_sub_epi16(_mm256_xor_si256(s, negative), negative);
    const __m256i w = _mm256_add_epi16(_mm256_slli_epi16(_mm256_sub_epi16(a, s), 3), shift);
    return _mm256_madd_epi16(w, scales);
}

void ggml__avx2_vec_dot_iq1_s_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                   const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_iq1_s *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK_K; i++) {
        __m256i acc = _mm256_setzero_si256();
        for (int b = 0; b < QK_K / 32; b++) {
            const unsigned qh = x[i].qh[b];
            const uint8_t *qs = x[i].qs + 4 * b;
            acc = _mm256_add_epi32(
                acc, four_groups(qs[0] | (qh & 7) << 8, qs[1] | ((qh >> 3) & 7) << 8, qs[2] | ((qh >> 6) & 7) << 8,
                                 qs[3] | ((qh >> 9) & 7) << 8, y[i].qs + 32 * b,
                                 _mm256_set1_epi16((short) (qh & 0x8000u ? -1 : 0)),
                                 _mm256_set1_epi16((short) (2 * ((qh >> 12) & 7) + 1))));
        }
        sum += ggml__iq1_block_dot(y[i].d, ggml__fp16_to_fp32(x[i].d), avx2_hsum_epi32(acc));
    }
    *s = sum;
}

void ggml__avx2_vec_dot_iq1_m_q8_K(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                                   const void *restrict vy, size_t by, int nrc)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_iq1_m *x = vx;
    const block_q8_K *y = vy;
    float sum = 0.0f;
    for (int i = 0; i < n / QK_K; i++) {
        __m256i acc = _mm256_setzero_si256();
        for (int b = 0; b < QK_K / 32; b++) {
            /* groups 4 b .. 4 b + 3: nibbles of qh[2 b], qh[2 b + 1]; the
               16-value halves 2 b, 2 b + 1 have their scales in word b / 2 */
            const unsigned nibbles = (unsigned) x[i].qh[2 * b] | (unsigned) x[i].qh[2 * b + 1] << 8;
            const unsigned word = (unsigned) x[i].scales[2 * (b / 2)] | (unsigned) x[i].scales[2 * (b / 2) + 1] << 8;
            const int lo = (int) (2 * ((word >> (6 * (b % 2))) & 7) + 1);
            const int hi = (int) (2 * ((word >> (6 * (b % 2) + 3)) & 7) + 1);
            const uint8_t *qs = x[i].qs + 4 * b;
            /* bit 3 of each group's nibble, in the group's four 16-bit lanes */
            const __m256i sign_bit = _mm256_setr_epi16(0x8, 0x8, 0x8, 0x8, 0x80, 0x80, 0x80, 0x80, 0x800, 0x800, 0x800,
                                                       0x800, (short) 0x8000, (short) 0x8000, (short) 0x8000,
                                                       (short) 0x8000);
            const __m256i negative =
                _mm256_cmpeq_epi16(_mm256_and_si256(_mm256_set1_epi16((short) nibbles), sign_bit), sign_bit);
            acc = _mm256_add_epi32(
                acc, four_groups(qs[0] | (nibbles & 7) << 8, qs[1] | ((nibbles >> 4) & 7) << 8,
                                 qs[2] | ((nibbles >> 8) & 7) << 8, qs[3] | ((nibbles >> 12) & 7) << 8,
                                 y[i].qs + 32 * b, negative,
                                 _mm256_set_m128i(_mm_set1_epi16((short) hi), _mm_set1_epi16((short) lo))));
        }
        sum += ggml__iq1_block_dot(y[i].d, ggml__fp16_to_fp32(ggml__iq1_m_scale(x[i].scales)), avx2_hsum_epi32(acc));
    }
    *s = sum;
}
