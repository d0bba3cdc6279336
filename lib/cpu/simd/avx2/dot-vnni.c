/*
 * simd/avx2/dot-vnni.c - the AVX2 level's rows kernels for Q4_0, Q4_1,
 * Q5_0, Q5_1 and Q8_0 weights (kernels.h, vec_dot_rows: matrix x vector,
 * token generation) on processors with AVX-VNNI, chosen over dot.c's when
 * the CPU has it.  The kernels are qrows.h's; this file gives them the
 * integer sums of a block.
 *
 * vpdpbusd multiplies unsigned bytes by signed ones and adds each four
 * products, and a 32-bit accumulator, into a 32-bit lane without
 * saturation.  The weights' codes are the unsigned side, u = w + bias:
 * Q8_0's with their sign bit flipped (bias 128, exact for every code,
 * -128 included), the 4- and 5-bit codes as stored (bias 8 for Q4_0, 16
 * for Q5_0, 0 for the formats with a minimum; block-formats.h); the
 * activation's codes a stay signed:
 *   sum_i u_i a_i = sum_i w_i a_i + bias * sum_i a_i.
 * The offset depends on the activation block alone, so each block
 * computes it once (vpdpbusd of the bias by a, negated) and starts every
 * row's sum from it: a row then costs one vpdpbusd (and, for Q8_0, one
 * exclusive or), where dot.c's takes two or three operations more.  Every
 * sum is an exact integer (at most 32 * 255 * 128 in magnitude).
 */
#include "config.h"

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#include "ggml-impl.h"
#include "quants-impl.h"
#include "avx2.h"
#include "prefetch-rows.h"
#include "block-formats.h"

#define QROWS_NAME(name) ggml__avx2_vnni_##name
#include "qrows.h"

/* The rows kernels' hooks (qrows.h): every row's lanes start at minus the bias times y's sums of four codes. */
QROWS_INLINE __m256i qrows_block_start(enum ggml_type t, __m256i ya)
{
    const int bias = ggml__code_bias(t);
    if (bias == 0)
        return _mm256_setzero_si256();
    const __m256i offset = _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), _mm256_set1_epi8((char) bias), ya);
    return _mm256_sub_epi32(_mm256_setzero_si256(), offset);
}

QROWS_INLINE __m256i qrows_row_sums(enum ggml_type t, __m256i codes, __m256i ya, __m256i start)
{
    const __m256i u = t == GGML_TYPE_Q8_0 ? _mm256_xor_si256(codes, _mm256_set1_epi8((char) 0x80)) : codes;
    return _mm256_dpbusd_avx_epi32(start, u, ya);
}
