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
 * intermediate saturation), named ggml__avx512_vnni_*, and the multi-row
 * kernels of the 4-, 5- and 8-bit formats (vec_dot_rows).
 */
#include "config.h"

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ggml-impl.h"
#include "quants-impl.h"
#include "intrin.h"
#include "avx512.h"
#include "block-formats.h"
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

/* The contract of qdot.h's dot_u8, in one instruction. */
static inline __m512i dot_u8(__m512i u, __m512i a)
{
    return _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, a);
}

#define QDOT_NAME(name) ggml__avx512_vnni_##name
#include "qdot.h"

/*
 * Quantized rows against Q8_0 (Q4_0, Q5_0, Q8_0) or Q8_1 (Q4_1, Q5_1)
 * activations, four rows a step of two blocks.
 *
 * VPDPBUSD multiplies unsigned by signed bytes.  The unsigned side is the
 * weights' codes u = w + bias: Q8_0 codes with their sign bit flipped
 * (bias 128), 4- and 5-bit codes as stored (bias 8 for Q4_0, 16 for Q5_0,
 * 0 for the formats with a minimum).  Each row's accumulation starts from
 * -bias times the activation's sums of four bytes, computed once a step
 * for all rows, so every 32-bit lane ends as the exact sum of four w * y
 * products, whatever the bytes (no range condition on w or y).
 *
 * The four rows' lanes are then folded by unpacks into one vector whose
 * 128-bit quarter q holds the four rows' partial sums of block b (q = 0,
 * 1) or of block b + 1 (q = 2, 3), so that one conversion and one
 * multiply-add by the rows' scales serve all eight (row, block) pairs.
 * An odd last block is paired with itself at scale 0.  Fewer than four
 * rows: the missing rows read row 0 again and their sums are not stored.
 */

/* u of blocks p0 and p1 of one row (p0 in the low half), in element order. */
static inline __attribute__((always_inline)) __m512i biased_codes(enum ggml_type t, const char *p0, const char *p1)
{
#define FIELD(type, p, f) (((const type *) (const void *) (p))->f)
    switch (t) {
    case GGML_TYPE_Q8_0:
        return _mm512_xor_si512(q8_2(FIELD(block_q8_0, p0, qs), FIELD(block_q8_0, p1, qs)),
                                _mm512_set1_epi8((char) 0x80));
    case GGML_TYPE_Q4_0: return nibbles2(FIELD(block_q4_0, p0, qs), FIELD(block_q4_0, p1, qs));
    case GGML_TYPE_Q4_1: return nibbles2(FIELD(block_q4_1, p0, qs), FIELD(block_q4_1, p1, qs));
    case GGML_TYPE_Q5_0:
        return _mm512_or_si512(nibbles2(FIELD(block_q5_0, p0, qs), FIELD(block_q5_0, p1, qs)),
                               fifth_bits2(FIELD(block_q5_0, p0, qh), FIELD(block_q5_0, p1, qh)));
    default:
        return _mm512_or_si512(nibbles2(FIELD(block_q5_1, p0, qs), FIELD(block_q5_1, p1, qs)),
                               fifth_bits2(FIELD(block_q5_1, p0, qh), FIELD(block_q5_1, p1, qh)));
    }
#undef FIELD
}

/* The binary16 value at p (unaligned). */
static inline uint16_t half_at(const char *p)
{
    ggml_fp16_t h;
    memcpy(&h, p, sizeof h);
    return h;
}

/* The blocks of a step in each of the four rows (rows past nr: row 0's). */
struct four_blocks {
    const char *r0, *r1, *r2, *r3;
};

/* The halves at p and p + next as one 32-bit word, the first in the low half. */
static inline uint32_t half_pair(const char *p, size_t next)
{
    return (uint32_t) half_at(p) | (uint32_t) half_at(p + next) << 16;
}

/*
 * The halves at offset off of the four rows' blocks (p) and of the blocks
 * next bytes further, times those of the activation's blocks at y and y +
 * ynext (y_pair false: the second is 0), row by row: [r0 * y0, r0' * y1,
 * r1 * y0, r1' * y1, ...] (r' the next block of row r).  The halves are
 * gathered by scalar loads and shifts into two 64-bit words, two vector
 * inserts where eight 16-bit ones took the shuffle unit.
 */
static inline __m256 eight_scales(struct four_blocks p, size_t next, size_t off, const char *y, size_t ynext,
                                  bool y_pair)
{
    const uint64_t r01 = (uint64_t) half_pair(p.r0 + off, next) | (uint64_t) half_pair(p.r1 + off, next) << 32;
    const uint64_t r23 = (uint64_t) half_pair(p.r2 + off, next) | (uint64_t) half_pair(p.r3 + off, next) << 32;
    const __m128i bits = _mm_set_epi64x((long long) r23, (long long) r01);
    const uint32_t ys = (uint32_t) half_at(y + off) | (y_pair ? (uint32_t) half_at(y + ynext + off) << 16 : 0u);
    const __m128 y01 = _mm_cvtph_ps(_mm_cvtsi32_si128((int) ys));   /* [y0, y1, 0, 0] */
    const __m256 y_rep = _mm256_castpd_ps(_mm256_broadcastsd_pd(_mm_castps_pd(y01)));
    return _mm256_mul_ps(_mm256_cvtph_ps(bits), y_rep);
}

/* Lanes 4q..4q+3 of the result: row r's lanes 4q..4q+3 summed, in lane 4q + r. */
static inline __m512i fold_four_rows(__m512i r0, __m512i r1, __m512i r2, __m512i r3)
{
    const __m512i t01 = _mm512_add_epi32(_mm512_unpacklo_epi32(r0, r1), _mm512_unpackhi_epi32(r0, r1));
    const __m512i t23 = _mm512_add_epi32(_mm512_unpacklo_epi32(r2, r3), _mm512_unpackhi_epi32(r2, r3));
    return _mm512_add_epi32(_mm512_unpacklo_epi64(t01, t23), _mm512_unpackhi_epi64(t01, t23));
}

/* The running sums of biased_rows: acc as the fold leaves them, mins as eight_scales' lanes. */
struct four_sums {
    __m512 acc;
    __m256 mins;
};

/*
 * One step of biased_rows: blocks p and the blocks next bytes further
 * (next = 0: the odd last block paired with itself) against the
 * activation blocks y0 and y0 + ynext; pair false gives the second half
 * scale 0.
 */
static inline __attribute__((always_inline)) struct four_sums biased_step(enum ggml_type t, struct four_blocks p,
                                                                         size_t next, const char *y0,
                                                                         size_t ynext, bool pair, struct four_sums sum)
{
    const size_t yqs = ggml__block_has_minimum(t) ? offsetof(block_q8_1, qs) : offsetof(block_q8_0, qs);
    /* lane 4q + r: eight_scales' lane 2r (the first blocks) for q = 0, 1, 2r + 1 (the next) for q = 2, 3 */
    const __m512i spread = _mm512_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6, 1, 3, 5, 7, 1, 3, 5, 7);
    const char *y1 = y0 + ynext;
    const __m512i ya = q8_2((const int8_t *) (const void *) (y0 + yqs), (const int8_t *) (const void *) (y1 + yqs));
    __m512i start = _mm512_setzero_si512();
    if (ggml__code_bias(t) != 0)
        start = _mm512_sub_epi32(start, _mm512_dpbusd_epi32(start, _mm512_set1_epi8((char) ggml__code_bias(t)), ya));
    const __m512i s0 = _mm512_dpbusd_epi32(start, biased_codes(t, p.r0, p.r0 + next), ya);
    const __m512i s1 = _mm512_dpbusd_epi32(start, biased_codes(t, p.r1, p.r1 + next), ya);
    const __m512i s2 = _mm512_dpbusd_epi32(start, biased_codes(t, p.r2, p.r2 + next), ya);
    const __m512i s3 = _mm512_dpbusd_epi32(start, biased_codes(t, p.r3, p.r3 + next), ya);
    const __m512i isum = fold_four_rows(s0, s1, s2, s3);
    /* d opens Q8_0 and Q8_1 blocks; s follows it in Q8_1 blocks as m does in Q4_1 and Q5_1 blocks */
    const __m256 sc = eight_scales(p, next, 0, y0, ynext, pair);
    sum.acc = _mm512_fmadd_ps(_mm512_permutexvar_ps(spread, _mm512_castps256_ps512(sc)), _mm512_cvtepi32_ps(isum),
                              sum.acc);
    if (ggml__block_has_minimum(t))
        sum.mins = _mm256_add_ps(sum.mins, eight_scales(p, next, 2, y0, ynext, pair));
    return sum;
}

static inline __attribute__((always_inline)) void biased_rows(enum ggml_type t, int n, float *s, const void *vx,
                                                             size_t bx, const void *vy, int nr)
{
    const char *x = vx;
    struct four_blocks p = { x, nr > 1 ? x + bx : x, nr > 2 ? x + 2 * bx : x, nr > 3 ? x + 3 * bx : x };
    const size_t step = ggml__small_block_bytes(t);
    const size_t ystep = ggml__block_has_minimum(t) ? sizeof(block_q8_1) : sizeof(block_q8_0);
    const char *y = vy;
    const int nb = n / 32;
    struct four_sums sum = { _mm512_setzero_ps(), _mm256_setzero_ps() };
    struct ggml__rows_prefetch ahead = ggml__rows_prefetch_init(vx, bx, nr, (nb + 1) / 2);
    int b = 0;
    for (; b + 1 < nb; b += 2) {
        ggml__rows_prefetch_step(&ahead);
        sum = biased_step(t, p, step, y, ystep, true, sum);
        p.r0 += 2 * step, p.r1 += 2 * step, p.r2 += 2 * step, p.r3 += 2 * step;
        y += 2 * ystep;
    }
    if (b < nb)
        sum = biased_step(t, p, 0, y, 0, false, sum);
    __m128 total = _mm_add_ps(_mm_add_ps(_mm512_extractf32x4_ps(sum.acc, 0), _mm512_extractf32x4_ps(sum.acc, 1)),
                              _mm_add_ps(_mm512_extractf32x4_ps(sum.acc, 2), _mm512_extractf32x4_ps(sum.acc, 3)));
    if (ggml__block_has_minimum(t)) {
        /* row r's two lanes 2r, 2r + 1 added: [R0 R1 R0 R1 | R2 R3 R2 R3] */
        const __m256 pairs = _mm256_hadd_ps(sum.mins, sum.mins);
        total = _mm_add_ps(total, _mm_shuffle_ps(_mm256_castps256_ps128(pairs), _mm256_extractf128_ps(pairs, 1),
                                                 _MM_SHUFFLE(1, 0, 1, 0)));
    }
    float four[4];
    _mm_storeu_ps(four, total);
    for (int r = 0; r < nr; r++)
        s[r] = four[r];
}

void ggml__avx512_vnni_vec_dot_rows_q4_0(int n, float *s, const void *x, size_t bx, const void *y, int nr)
{
    biased_rows(GGML_TYPE_Q4_0, n, s, x, bx, y, nr);
}

void ggml__avx512_vnni_vec_dot_rows_q4_1(int n, float *s, const void *x, size_t bx, const void *y, int nr)
{
    biased_rows(GGML_TYPE_Q4_1, n, s, x, bx, y, nr);
}

void ggml__avx512_vnni_vec_dot_rows_q5_0(int n, float *s, const void *x, size_t bx, const void *y, int nr)
{
    biased_rows(GGML_TYPE_Q5_0, n, s, x, bx, y, nr);
}

void ggml__avx512_vnni_vec_dot_rows_q5_1(int n, float *s, const void *x, size_t bx, const void *y, int nr)
{
    biased_rows(GGML_TYPE_Q5_1, n, s, x, bx, y, nr);
}

void ggml__avx512_vnni_vec_dot_rows_q8_0(int n, float *s, const void *x, size_t bx, const void *y, int nr)
{
    biased_rows(GGML_TYPE_Q8_0, n, s, x, bx, y, nr);
}
