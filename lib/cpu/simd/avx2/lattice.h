/*
 * simd/avx2/lattice.h - pieces shared by the AVX2 dot products of the
 * lattice types (dot-iq1.c, dot-iq2.c, dot-iq3.c): grid points widened to
 * bytes, sign bits widened to byte masks, exact signed products with q8
 * bytes (the horizontal sums are intsum.h's).  Include only in files
 * compiled with the AVX2 level's flags.
 */
#ifndef GGML_BACKEND_SIMD_AVX2_LATTICE_H
#define GGML_BACKEND_SIMD_AVX2_LATTICE_H

#include <immintrin.h>
#include <stdint.h>

#include "intsum.h"

/* Bytes of 0xff where bit i of bits is set, 0 elsewhere (byte i: bit i). */
static inline __m256i avx2_negative_mask(uint32_t bits)
{
    /* byte i of the broadcast word: byte i / 8 of bits, then its bit i % 8 */
    const __m256i spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32((int) bits),
        _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0x0000000000000000));
    const __m256i bit = _mm256_set1_epi64x((long long) 0x8040201008040201ull);
    return _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
}

/*
 * 16-bit lanes of sum sign * magnitude * y over pairs of the 32 bytes
 * (lane i: bytes 2 i, 2 i + 1), sign negative where byte i of negative is
 * all ones (0 elsewhere).  The positive and the negative magnitudes
 * (unsigned bytes) are multiplied separately by maddubs: exact for every
 * int8 y, -128 included, as long as 2 * magnitude * 128 and the lanes'
 * difference, at most 2 * magnitude * 128 too, stay below 2^15: magnitudes
 * up to 127.
 */
static inline __m256i avx2_signed_pairs(__m256i magnitudes, __m256i negative, const int8_t *q8)
{
    const __m256i y = _mm256_loadu_si256((const __m256i *) q8);
    const __m256i pos = _mm256_maddubs_epi16(_mm256_andnot_si256(negative, magnitudes), y);
    const __m256i neg = _mm256_maddubs_epi16(_mm256_and_si256(negative, magnitudes), y);
    return _mm256_sub_epi16(pos, neg);
}

/*
 * The byte masks of four groups' signs stored as seven bits each, the
 * eighth their parity (the number of negatives is even; IQ2_XXS, IQ2_XS
 * and IQ3_XXS store signs so, ggml__iq2_signs8): the seven bits of group l
 * in the low bits of field l (higher bits ignored), its mask in bytes
 * 8 l .. 8 l + 7 (all ones: negative).  A table of the 128 masks.
 */
#define LATTICE_PARITY(k) (((k) ^ (k) >> 1 ^ (k) >> 2 ^ (k) >> 3 ^ (k) >> 4 ^ (k) >> 5 ^ (k) >> 6) & 1)
#define LATTICE_SIGNS(k) ((k) | LATTICE_PARITY(k) << 7)
#define LATTICE_BYTE(k, j) ((unsigned long long) ((LATTICE_SIGNS(k) >> (j)) & 1) * (0xffull << (8 * (j))))
#define LATTICE_MASK1(k)                                                                                  \
    (LATTICE_BYTE(k, 0) | LATTICE_BYTE(k, 1) | LATTICE_BYTE(k, 2) | LATTICE_BYTE(k, 3) | LATTICE_BYTE(k, 4) | \
     LATTICE_BYTE(k, 5) | LATTICE_BYTE(k, 6) | LATTICE_BYTE(k, 7))
#define LATTICE_MASK4(k) LATTICE_MASK1(k), LATTICE_MASK1((k) + 1), LATTICE_MASK1((k) + 2), LATTICE_MASK1((k) + 3)
#define LATTICE_MASK16(k) LATTICE_MASK4(k), LATTICE_MASK4((k) + 4), LATTICE_MASK4((k) + 8), LATTICE_MASK4((k) + 12)
static inline __m256i avx2_parity_sign_masks(unsigned f0, unsigned f1, unsigned f2, unsigned f3)
{
    static const unsigned long long masks[128] = {
        LATTICE_MASK16(0),  LATTICE_MASK16(16), LATTICE_MASK16(32), LATTICE_MASK16(48),
        LATTICE_MASK16(64), LATTICE_MASK16(80), LATTICE_MASK16(96), LATTICE_MASK16(112),
    };
    return _mm256_set_epi64x((long long) masks[f3 & 0x7f], (long long) masks[f2 & 0x7f],
                             (long long) masks[f1 & 0x7f], (long long) masks[f0 & 0x7f]);
}
#undef LATTICE_MASK16
#undef LATTICE_MASK4
#undef LATTICE_MASK1
#undef LATTICE_BYTE
#undef LATTICE_SIGNS
#undef LATTICE_PARITY

/*
 * Four grid points of 2-bit codes (coordinate j of a point: bits 2 j,
 * 2 j + 1; point l in bits 16 l .. 16 l + 15 of points, as 64-bit lanes
 * hold them below) widened to 32 bytes, byte 8 l + j the level of that
 * code: levels is a 16-byte table (both 128-bit lanes alike) with the
 * level of code c at bytes c and 4 c (c = 1, 2, 3; byte 0 for code 0).
 *
 * Each byte takes the point's byte holding its code (j / 4), masks the
 * code's two bits in place (shift 2 (j % 4)) and folds the two high
 * positions down a nibble: the index is then c or 4 c, below 16.
 */
static inline __m256i avx2_grid_bytes(uint64_t p0, uint64_t p1, uint64_t p2, uint64_t p3, __m256i levels)
{
    const __m256i points = _mm256_set_epi64x((long long) p3, (long long) p2, (long long) p1, (long long) p0);
    const __m256i spread = _mm256_shuffle_epi8(
        points, _mm256_setr_epi8(0, 0, 0, 0, 1, 1, 1, 1, 8, 8, 8, 8, 9, 9, 9, 9,
                                 0, 0, 0, 0, 1, 1, 1, 1, 8, 8, 8, 8, 9, 9, 9, 9));
    /* bytes 0x03, 0x0c, 0x30, 0xc0 in each 32-bit lane */
    const __m256i code = _mm256_and_si256(spread, _mm256_set1_epi32((int) 0xc0300c03u));
    const __m256i index =
        _mm256_and_si256(_mm256_or_si256(code, _mm256_srli_epi16(code, 4)), _mm256_set1_epi8(0x0f));
    return _mm256_shuffle_epi8(levels, index);
}

#endif
