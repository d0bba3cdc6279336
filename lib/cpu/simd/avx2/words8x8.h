/*
 * simd/avx2/words8x8.h - the 8 x 8 transpose of 32-bit words in eight
 * 256-bit vectors, shared by the AVX2 interleaving of weight rows
 * (qgemm.c) and the AVX512_VNNI tile's per-block transpose
 * (avx512/qgemm-vnni.c).
 *
 * Not installed.  Included after <immintrin.h> (or intrin.h) by files
 * compiled with AVX2.
 */
#ifndef GGML_BACKEND_SIMD_AVX2_WORDS8X8_H
#define GGML_BACKEND_SIMD_AVX2_WORDS8X8_H

/* v[q] lane r = 32-bit word q of v[r] on return. */
static inline void ggml__transpose_words8(__m256i v[8])
{
    __m256i t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_epi32(v[i], v[i + 1]);
        t[i + 1] = _mm256_unpackhi_epi32(v[i], v[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
        u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
        u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
        u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    for (int q = 0; q < 4; q++) {
        v[q] = _mm256_permute2x128_si256(u[q], u[q + 4], 0x20);
        v[q + 4] = _mm256_permute2x128_si256(u[q], u[q + 4], 0x31);
    }
}

#endif
