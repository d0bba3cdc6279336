/*
 * simd/avx2/k-blocks.h - helpers of the K-quant multi-row dot products,
 * shared by the AVX2 kernels (dot-k.c) and the AVX512-VNNI ones
 * (avx512/dot-k-vnni.c): the rows of a call, four rows' F16 scales, the
 * q4_K/q5_K 6-bit scales and minimums, the q8_K block's sums of 32.
 *
 * Not installed.  Include after the level's intrinsics header, config.h,
 * ggml-impl.h and quants-impl.h.
 */
#ifndef GGML_BACKEND_SIMD_AVX2_K_BLOCKS_H
#define GGML_BACKEND_SIMD_AVX2_K_BLOCKS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ALWAYS_INLINE static inline __attribute__((always_inline))
/* Loops of a constant count of vector steps, written out (registers, constant shifts and masks). */
#define GGML__UNROLL _Pragma("GCC unroll 8")

/* The rows of a call (rows past nr alias row 0). */
ALWAYS_INLINE void rows_of_call(const char *row[4], const void *vx, size_t bx, int nr)
{
    const char *x = vx;
    for (int r = 0; r < 4; r++)
        row[r] = r < nr ? x + (size_t) r * bx : x;
}

/*
 * The scales of four rows' blocks (F16 values at p[r]) in four float
 * lanes.  The four halves go to the vector as values: gathered through
 * memory (four 2-byte stores read back as one 8-byte load), they made the
 * load wait for the stores to retire (no store forwarding), and the q4_K
 * and q5_K rows with GCC took 40% longer.
 */
ALWAYS_INLINE __m128 four_f16(const char *const p[4])
{
    uint16_t h0, h1, h2, h3;
    memcpy(&h0, p[0], sizeof h0);
    memcpy(&h1, p[1], sizeof h1);
    memcpy(&h2, p[2], sizeof h2);
    memcpy(&h3, p[3], sizeof h3);
    return _mm_cvtph_ps(_mm_setr_epi16((short) h0, (short) h1, (short) h2, (short) h3, 0, 0, 0, 0));
}

/* s[r] = lane r of sums, r < nr. */
ALWAYS_INLINE void store_sums(float *s, __m128 sums, int nr)
{
    float lanes[4];
    _mm_storeu_ps(lanes, sums);
    for (int r = 0; r < nr; r++)
        s[r] = lanes[r];
}

/*
 * The eight 6-bit scales and minimums of a q4_K / q5_K block's 12 scale
 * bytes (ggml__q4_K_scale_min's values) as 16-bit lanes, scales in the
 * lower 128-bit lane and minimums in the upper one, in sub-block order.
 * Bytes 0..3 of the scales hold the low six bits of scales 0..3, bytes
 * 4..7 those of minimums 0..3, bytes 8..11 the low four bits of scale
 * 4 + i (low nibble) and minimum 4 + i (high nibble), whose two high bits
 * are the top bits of bytes i and 4 + i.  The 16 bytes read are within
 * the block (the first four bytes of what follows the scales).
 */
ALWAYS_INLINE __m256i q4_K_scales_mins(const uint8_t *scales)
{
    const __m128i v = _mm_loadu_si128((const __m128i *) (const void *) scales);
    /* 32-bit lanes: bytes 0..3 | 8..11 | 4..7 | 8..11, the last shifted down by 4 */
    __m128i low = _mm_shuffle_epi8(v, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
    low = _mm_and_si128(_mm_srlv_epi32(low, _mm_setr_epi32(0, 0, 0, 4)),
                        _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
    /* the top two bits of bytes 0..3 and 4..7 at bits 4, 5 of lanes 1 and 3 */
    __m128i top = _mm_shuffle_epi8(v, _mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
    top = _mm_and_si128(_mm_srli_epi32(top, 2), _mm_set1_epi8(0x30));
    return _mm256_cvtepu8_epi16(_mm_or_si128(low, top));
}

/* The q8_K block's eight sums of 32 activations as 16-bit lanes (each |sum| <= 32 * 128). */
ALWAYS_INLINE __m128i q8_K_sums32(const block_q8_K *y)
{
    const __m256i pairs = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *) (const void *) y->bsums),
                                            _mm256_set1_epi16(1));
    return _mm_packs_epi32(_mm256_castsi256_si128(pairs), _mm256_extracti128_si256(pairs, 1));
}

#endif
