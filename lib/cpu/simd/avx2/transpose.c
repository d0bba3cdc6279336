/*
 * simd/avx2/transpose.c - matrix transposes of 4- and 2-byte elements for
 * the AVX2 level (the transpose32 and transpose16 entries): 8 x 8 blocks
 * transposed in registers, walked in square tiles that fit the L1 cache
 * (simd/transpose-tiles.h).
 * Bits are moved unchanged, so the results are the generic level's.
 */
#include "config.h"

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "ggml-impl.h"
#include "avx2.h"
#include "transpose-tiles.h"

/* The 8 x 8 block of 4-byte elements at s (rows ss bytes apart) into d (rows ds apart). */
static inline void block8x8_32(const char *s, ptrdiff_t ss, char *d, ptrdiff_t ds)
{
    const __m256 r0 = _mm256_loadu_ps((const float *) (const void *) (s + 0 * ss));
    const __m256 r1 = _mm256_loadu_ps((const float *) (const void *) (s + 1 * ss));
    const __m256 r2 = _mm256_loadu_ps((const float *) (const void *) (s + 2 * ss));
    const __m256 r3 = _mm256_loadu_ps((const float *) (const void *) (s + 3 * ss));
    const __m256 r4 = _mm256_loadu_ps((const float *) (const void *) (s + 4 * ss));
    const __m256 r5 = _mm256_loadu_ps((const float *) (const void *) (s + 5 * ss));
    const __m256 r6 = _mm256_loadu_ps((const float *) (const void *) (s + 6 * ss));
    const __m256 r7 = _mm256_loadu_ps((const float *) (const void *) (s + 7 * ss));
    /* rows a..h: pairs interleaved, a0 b0 a1 b1 | a4 b4 a5 b5 and so on */
    const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    /* quads: a0 b0 c0 d0 | a4 b4 c4 d4 and so on */
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
    /* columns: the low halves give columns 0..3, the high halves 4..7 */
    _mm256_storeu_ps((float *) (void *) (d + 0 * ds), _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps((float *) (void *) (d + 1 * ds), _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps((float *) (void *) (d + 2 * ds), _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps((float *) (void *) (d + 3 * ds), _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps((float *) (void *) (d + 4 * ds), _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps((float *) (void *) (d + 5 * ds), _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps((float *) (void *) (d + 6 * ds), _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps((float *) (void *) (d + 7 * ds), _mm256_permute2f128_ps(u3, u7, 0x31));
}

/* The same for 2-byte elements, in 128-bit registers. */
static inline void block8x8_16(const char *s, ptrdiff_t ss, char *d, ptrdiff_t ds)
{
    const __m128i r0 = _mm_loadu_si128((const __m128i *) (const void *) (s + 0 * ss));
    const __m128i r1 = _mm_loadu_si128((const __m128i *) (const void *) (s + 1 * ss));
    const __m128i r2 = _mm_loadu_si128((const __m128i *) (const void *) (s + 2 * ss));
    const __m128i r3 = _mm_loadu_si128((const __m128i *) (const void *) (s + 3 * ss));
    const __m128i r4 = _mm_loadu_si128((const __m128i *) (const void *) (s + 4 * ss));
    const __m128i r5 = _mm_loadu_si128((const __m128i *) (const void *) (s + 5 * ss));
    const __m128i r6 = _mm_loadu_si128((const __m128i *) (const void *) (s + 6 * ss));
    const __m128i r7 = _mm_loadu_si128((const __m128i *) (const void *) (s + 7 * ss));
    /* pairs: a0 b0 a1 b1 a2 b2 a3 b3 and so on */
    const __m128i t0 = _mm_unpacklo_epi16(r0, r1), t1 = _mm_unpackhi_epi16(r0, r1);
    const __m128i t2 = _mm_unpacklo_epi16(r2, r3), t3 = _mm_unpackhi_epi16(r2, r3);
    const __m128i t4 = _mm_unpacklo_epi16(r4, r5), t5 = _mm_unpackhi_epi16(r4, r5);
    const __m128i t6 = _mm_unpacklo_epi16(r6, r7), t7 = _mm_unpackhi_epi16(r6, r7);
    /* quads: a0 b0 c0 d0 a1 b1 c1 d1 and so on */
    const __m128i u0 = _mm_unpacklo_epi32(t0, t2), u1 = _mm_unpackhi_epi32(t0, t2);
    const __m128i u2 = _mm_unpacklo_epi32(t1, t3), u3 = _mm_unpackhi_epi32(t1, t3);
    const __m128i u4 = _mm_unpacklo_epi32(t4, t6), u5 = _mm_unpackhi_epi32(t4, t6);
    const __m128i u6 = _mm_unpacklo_epi32(t5, t7), u7 = _mm_unpackhi_epi32(t5, t7);
    _mm_storeu_si128((__m128i *) (void *) (d + 0 * ds), _mm_unpacklo_epi64(u0, u4));
    _mm_storeu_si128((__m128i *) (void *) (d + 1 * ds), _mm_unpackhi_epi64(u0, u4));
    _mm_storeu_si128((__m128i *) (void *) (d + 2 * ds), _mm_unpacklo_epi64(u1, u5));
    _mm_storeu_si128((__m128i *) (void *) (d + 3 * ds), _mm_unpackhi_epi64(u1, u5));
    _mm_storeu_si128((__m128i *) (void *) (d + 4 * ds), _mm_unpacklo_epi64(u2, u6));
    _mm_storeu_si128((__m128i *) (void *) (d + 5 * ds), _mm_unpackhi_epi64(u2, u6));
    _mm_storeu_si128((__m128i *) (void *) (d + 6 * ds), _mm_unpacklo_epi64(u3, u7));
    _mm_storeu_si128((__m128i *) (void *) (d + 7 * ds), _mm_unpackhi_epi64(u3, u7));
}

void ggml__avx2_transpose32(int64_t rows, int64_t cols, const void *restrict src, ptrdiff_t src_stride,
                            void *restrict dst, ptrdiff_t dst_stride)
{
    TRANSPOSE_TILES(block8x8_32, 8, 4);
}

void ggml__avx2_transpose16(int64_t rows, int64_t cols, const void *restrict src, ptrdiff_t src_stride,
                            void *restrict dst, ptrdiff_t dst_stride)
{
    TRANSPOSE_TILES(block8x8_16, 8, 2);
}
