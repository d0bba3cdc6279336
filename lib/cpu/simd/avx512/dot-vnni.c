/*
 * simd/avx512/dot-vnni.c - dot products of the AVX-512 level that need
 * AVX512_VNNI or AVX512_BF16 (compiled with both; simd/table.c takes each
 * kernel only when the CPU has its extension).
 *
 * BF16 rows: VDPBF16PS multiplies pairs of BF16 values (exact in single
 * precision) and adds both products to a 32-bit lane, treating subnormal
 * inputs as zero; the sums round differently from the generic level's.
 *
 * Quantized rows: the kernels of qdot.h with VPDPBUSD summing four
 * unsigned-times-signed byte products into each 32-bit lane (no
 * intermediate saturation), named ggml__avx512_vnni_*.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ggml-impl.h"
#include "quants-impl.h"
#include "intrin.h"
#include "avx512.h"
#include "prefetch-rows.h"

void ggml__avx512_bf16_vec_dot_bf16(GGML__VEC_DOT_PARAMS)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const uint16_t *x = vx, *y = vy;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0;
    int i = 0;
    for (; i + 64 <= n; i += 64) {
        a0 = _mm512_dpbf16_ps(a0, (__m512bh) _mm512_loadu_si512(x + i), (__m512bh) _mm512_loadu_si512(y + i));
        a1 = _mm512_dpbf16_ps(a1, (__m512bh) _mm512_loadu_si512(x + i + 32),
                              (__m512bh) _mm512_loadu_si512(y + i + 32));
    }
    if (i + 32 <= n) {
        a0 = _mm512_dpbf16_ps(a0, (__m512bh) _mm512_loadu_si512(x + i), (__m512bh) _mm512_loadu_si512(y + i));
        i += 32;
    }
    if (i < n) {
        /* the last 1..31 elements, the lanes past n zero in both rows */
        const __mmask32 m = (__mmask32) ((1ull << (n - i)) - 1u);
        a1 = _mm512_dpbf16_ps(a1, (__m512bh) _mm512_maskz_loadu_epi16(m, x + i),
                              (__m512bh) _mm512_maskz_loadu_epi16(m, y + i));
    }
    *s = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
}

/*
 * BF16 rows against one activation row, nr at once (a constant after
 * inlining, at most 4): each row's sums are those of
 * ggml__avx512_bf16_vec_dot_bf16, in the same order, and y's values are
 * loaded once for all rows.
 */
static inline __attribute__((always_inline)) void bf16_rows(int n, float *s, const char *x, size_t bx,
                                                            const uint16_t *y, const int nr)
{
    __m512 a0[4], a1[4];
    for (int r = 0; r < nr; r++)
        a0[r] = a1[r] = _mm512_setzero_ps();
    struct ggml__rows_prefetch ahead = ggml__rows_prefetch_init(x, bx, nr, n / 64);
    int i = 0;
    for (; i + 64 <= n; i += 64) {
        const __m512bh y0 = (__m512bh) _mm512_loadu_si512(y + i), y1 = (__m512bh) _mm512_loadu_si512(y + i + 32);
        ggml__rows_prefetch_step(&ahead);
        for (int r = 0; r < nr; r++) {
            const uint16_t *row = (const uint16_t *) (const void *) (x + (size_t) r * bx);
            a0[r] = _mm512_dpbf16_ps(a0[r], (__m512bh) _mm512_loadu_si512(row + i), y0);
            a1[r] = _mm512_dpbf16_ps(a1[r], (__m512bh) _mm512_loadu_si512(row + i + 32), y1);
        }
    }
    if (i + 32 <= n) {
        const __m512bh y0 = (__m512bh) _mm512_loadu_si512(y + i);
        for (int r = 0; r < nr; r++) {
            const uint16_t *row = (const uint16_t *) (const void *) (x + (size_t) r * bx);
            a0[r] = _mm512_dpbf16_ps(a0[r], (__m512bh) _mm512_loadu_si512(row + i), y0);
        }
        i += 32;
    }
    if (i < n) {
        const __mmask32 m = (__mmask32) ((1ull << (n - i)) - 1u);
        const __m512bh y1 = (__m512bh) _mm512_maskz_loadu_epi16(m, y + i);
        for (int r = 0; r < nr; r++) {
            const uint16_t *row = (const uint16_t *) (const void *) (x + (size_t) r * bx);
            a1[r] = _mm512_dpbf16_ps(a1[r], (__m512bh) _mm512_maskz_loadu_epi16(m, row + i), y1);
        }
    }
    for (int r = 0; r < nr; r++)
        s[r] = _mm512_reduce_add_ps(_mm512_add_ps(a0[r], a1[r]));
}

void ggml__avx512_bf16_vec_dot_rows_bf16(int n, float *s, const void *vx, size_t bx, const void *vy, int nr)
{
    switch (nr) {
    case 4: bf16_rows(n, s, vx, bx, vy, 4); break;
    case 3: bf16_rows(n, s, vx, bx, vy, 3); break;
    case 2: bf16_rows(n, s, vx, bx, vy, 2); break;
    default: bf16_rows(n, s, vx, bx, vy, 1); break;
    }
}

/* The contract of qdot.h's dot_u8, in one instruction. */
static inline __m512i dot_u8(__m512i u, __m512i a)
{
    return _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, a);
}

#define QDOT_NAME(name) ggml__avx512_vnni_##name
#include "qdot.h"
