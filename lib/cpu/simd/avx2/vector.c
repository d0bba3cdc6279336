/*
 * simd/avx2/vector.c - vector updates of the AVX2 level (axpy entries):
 * fused multiply-adds, so each element rounds once where the generic level
 * rounds the product and the sum.
 */
#include "config.h"

#include <immintrin.h>
#include <stdint.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "avx2.h"

void ggml__avx2_axpy_f32(int64_t n, float *restrict acc, const void *restrict vx, float w)
{
    const float *x = vx;
    const __m256 vw = _mm256_set1_ps(w);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(acc + i, _mm256_fmadd_ps(vw, _mm256_loadu_ps(x + i), _mm256_loadu_ps(acc + i)));
    for (; i < n; i++)
        acc[i] += w * x[i];
}

void ggml__avx2_axpy_f16(int64_t n, float *restrict acc, const void *restrict vx, float w)
{
    const ggml_fp16_t *x = vx;
    const __m256 vw = _mm256_set1_ps(w);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (const void *) (x + i)));
        _mm256_storeu_ps(acc + i, _mm256_fmadd_ps(vw, v, _mm256_loadu_ps(acc + i)));
    }
    for (; i < n; i++)
        acc[i] += w * ggml__fp16_to_fp32(x[i]);
}
