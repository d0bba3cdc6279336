/*
 * simd/avx512/vector.c - vector updates of the AVX-512 level (axpy
 * entries): fused multiply-adds, so each element rounds once where the
 * generic level rounds the product and the sum.  16 lanes a step, the
 * last partial vector through a lane mask (nothing outside the rows is
 * read or written).
 */
#include "config.h"

#include <stdint.h>

#include "ggml-impl.h"
#include "intrin.h"
#include "avx512.h"

void ggml__avx512_axpy_f32(int64_t n, float *restrict acc, const void *restrict vx, float w)
{
    const float *x = vx;
    const __m512 vw = _mm512_set1_ps(w);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(acc + i, _mm512_fmadd_ps(vw, _mm512_loadu_ps(x + i), _mm512_loadu_ps(acc + i)));
    if (i < n) {
        const __mmask16 m = ggml__avx512_first_lanes(n - i);
        _mm512_mask_storeu_ps(acc + i, m,
                              _mm512_fmadd_ps(vw, _mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, acc + i)));
    }
}

void ggml__avx512_axpy_f16(int64_t n, float *restrict acc, const void *restrict vx, float w)
{
    const uint16_t *x = vx;
    const __m512 vw = _mm512_set1_ps(w);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (const void *) (x + i)));
        _mm512_storeu_ps(acc + i, _mm512_fmadd_ps(vw, v, _mm512_loadu_ps(acc + i)));
    }
    if (i < n) {
        const __mmask16 m = ggml__avx512_first_lanes(n - i);
        const __m512 v = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_maskz_loadu_epi16(m, x + i)));
        _mm512_mask_storeu_ps(acc + i, m, _mm512_fmadd_ps(vw, v, _mm512_maskz_loadu_ps(m, acc + i)));
    }
}
