/*
 * simd/avx2/intsum.h - horizontal sums of 32-bit integer lanes, shared by
 * the AVX2 quantized dot products and encoders.  Include only in files
 * compiled with the AVX2 level's flags.
 *
 * The sums wrap modulo 2^32 like the lanes' own additions; the kernels keep
 * them within int32_t (their bounds are stated where they are used), so
 * the order of the additions does not change the result.
 */
#ifndef GGML_BACKEND_SIMD_AVX2_INTSUM_H
#define GGML_BACKEND_SIMD_AVX2_INTSUM_H

#include <immintrin.h>
#include <stdint.h>

/* Sum of the four 32-bit lanes of s. */
static inline int32_t avx2_hsum_epi32_128(__m128i s)
{
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

/* Sum of the eight 32-bit lanes of v. */
static inline int32_t avx2_hsum_epi32(__m256i v)
{
    return avx2_hsum_epi32_128(_mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
}

/* [sum of a, sum of b, sum of c, sum of d]: the 32-bit lanes of four
   vectors added, in one vector (for four blocks or four rows at once). */
static inline __attribute__((always_inline)) __m128i avx2_hsum4_epi32(__m256i a, __m256i b, __m256i c, __m256i d)
{
    const __m256i abcd = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
    return _mm_add_epi32(_mm256_castsi256_si128(abcd), _mm256_extracti128_si256(abcd, 1));
}

#endif
