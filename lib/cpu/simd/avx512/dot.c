/*
 * simd/avx512/dot.c - dot products of the AVX-512 level.
 *
 * Float rows: four accumulators of 16 lanes (fused multiply-add), the
 * last partial vector through a lane mask, then a fixed reduction.  The
 * sums round differently from the other levels'; all are single-precision
 * sums of exact products.
 */
#include "config.h"

#include <stdint.h>

#include "ggml-impl.h"
#include "intrin.h"
#include "avx512.h"

/* The lanes [0, n) of a 16-lane vector, n <= 16. */
static inline __mmask16 first_lanes(int n)
{
    return (__mmask16) ((1u << n) - 1u);
}

void ggml__avx512_vec_dot_f32(GGML__VEC_DOT_PARAMS)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const float *x = vx, *y = vy;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    int i = 0;
    for (; i + 64 <= n; i += 64) {
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i), a0);
        a1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(y + i + 16), a1);
        a2 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 32), _mm512_loadu_ps(y + i + 32), a2);
        a3 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 48), _mm512_loadu_ps(y + i + 48), a3);
    }
    for (; i + 16 <= n; i += 16)
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i), a0);
    if (i < n) {
        const __mmask16 m = first_lanes(n - i);
        a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i), a1);
    }
    *s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}
