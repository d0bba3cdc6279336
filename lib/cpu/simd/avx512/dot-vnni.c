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

/* The contract of qdot.h's dot_u8, in one instruction. */
static inline __m512i dot_u8(__m512i u, __m512i a)
{
    return _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, a);
}

#define QDOT_NAME(name) ggml__avx512_vnni_##name
#include "qdot.h"
