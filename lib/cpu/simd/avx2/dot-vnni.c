/*
 * simd/avx2/dot-vnni.c - the AVX2 level's Q8_0 rows kernel (kernels.h,
 * vec_dot_rows) on processors with AVX-VNNI, chosen over dot.c's when the
 * CPU has it: matrix x vector for Q8_0 weights (token generation).
 *
 * vpdpbusd multiplies unsigned bytes by signed ones and adds each four
 * products, and a 32-bit accumulator, into a 32-bit lane without
 * saturation.  The weights are made unsigned, u = w + 128 (an exclusive
 * or of the sign bit, exact for every code, -128 included), and the
 * activation's codes a stay signed:
 *   sum_i u_i a_i = sum_i w_i a_i + 128 sum_i a_i.
 * The offset depends on the activation block alone, so each step computes
 * it once (vpdpbusd of 128s by a, negated) and starts every row's sum
 * from it: a row then costs one exclusive or and one vpdpbusd, where
 * dot.c's takes two sign operations, vpmaddubsw and vpmaddwd.  Every sum
 * is an exact integer (at most 32 * 255 * 127 in magnitude) and the float
 * steps are qrows.h's, as for dot.c's kernel.
 */
#include "config.h"

#include <immintrin.h>
#include <string.h>

#include "ggml-impl.h"
#include "quants-impl.h"
#include "avx2.h"
#include "prefetch-rows.h"

/* The Q8_0 rows kernel's hooks (qrows.h): every row's lanes start at minus 128 times y's codes' part. */
static inline __attribute__((always_inline)) __m256i q8_block_start(__m256i ya)
{
    const __m256i offset = _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), _mm256_set1_epi8((char) 0x80), ya);
    return _mm256_sub_epi32(_mm256_setzero_si256(), offset);
}

static inline __attribute__((always_inline)) __m256i q8_row_sums(const block_q8_0 *x, __m256i ya, __m256i start)
{
    const __m256i w = _mm256_loadu_si256((const __m256i *) (const void *) x->qs);
    return _mm256_dpbusd_avx_epi32(start, _mm256_xor_si256(w, _mm256_set1_epi8((char) 0x80)), ya);
}

#define QROWS_NAME(name) ggml__avx2_vnni_##name
#include "qrows.h"
