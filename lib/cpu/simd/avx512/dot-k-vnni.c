/*
 * simd/avx512/dot-k-vnni.c - the q4_K, q5_K and q6_K multi-row dot products
 * (vec_dot_rows) of the AVX-512 level with AVX512_VNNI: four weight rows a
 * call against one q8_K row.
 *
 * The integer sums are the generic level's (simd/generic/dot-k.c), 128
 * codes a step: one 64-byte load of a row's codes holds sub-blocks 4c ..
 * 4c + 3 (low nibbles of its halves: 4c and 4c + 2, high nibbles: 4c + 1
 * and 4c + 3); vpmaddubsw multiplies them (0..15) with the activations
 * loaded in the same order and adds pairs into 16-bit lanes (at most 2 *
 * 15 * 128, no saturation), vpdpwssd multiplies those with the
 * sub-blocks' 6-bit scales and adds them into 32-bit lanes.  The
 * minimums' term and the block's share are formed as the AVX2 rows do
 * (avx2/dot-k.c), one lane a row, with ggml__q4_K_block_dot's float
 * operations in block order: each s[r] is the generic vec_dot's value bit
 * for bit.  Fewer than four rows: the missing rows read row 0 again,
 * their sums are not stored.  q5_K: the same with each code's fifth bit
 * (bit s of qh for sub-block s) moved to bit 4 by per-half variable
 * shifts (codes 0..31: at most 2 * 31 * 128 a 16-bit lane).
 *
 * q6_K: one 64-byte load of the low four bits and the 32 bytes of the
 * two high bits (in both halves, shifted per half by vpsrlvw) make 64
 * consecutive codes (0..63) a vector; vpmaddubsw with the activations
 * (at most 2 * 63 * 128) and vpdpwssd with the signed scales of its four
 * groups of 16 (one a 128-bit quarter) sum them, and the offset of 32
 * comes out through the q8_K block's sums of 16, as in avx2/dot-k.c;
 * the block's share is ggml__q6_K_block_dot's.
 */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "intrin.h"
#include "ggml-impl.h"
#include "quants-impl.h"
#include "avx512.h"
#include "../avx2/intsum.h"
#include "../avx2/k-blocks.h"
#include "../prefetch-rows.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* The activations of sub-blocks 4c + half and 4c + 2 + half (half 0 or 1), in the codes' order. */
static inline __m512i activations(const block_q8_K *y, int c, int half)
{
    const int8_t *q = y->qs + 128 * c + 32 * half;
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *) (const void *) q)),
                              _mm256_loadu_si256((const __m256i *) (const void *) (q + 64)), 1);
}

/*
 * Every 16-bit lane of 128-bit quarter q: 16-bit lane k[q] of the same
 * quarter of scales (k[q] < 8; scales holds its eight 16-bit lanes in
 * each quarter), picked by vpshufb.
 */
static inline __m512i quarter_lanes(__m512i scales, int k0, int k1, int k2, int k3)
{
#define PICK(k) _mm_set1_epi16((short) (0x0100 * (2 * (k) + 1) + 2 * (k)))
    const __m512i index = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set_m128i(PICK(k1), PICK(k0))),
                                             _mm256_set_m128i(PICK(k3), PICK(k2)), 1);
#undef PICK
    return _mm512_shuffle_epi8(scales, index);
}

/*
 * q5_K is q4_K with the fifth bits (qh) between the scales and the low
 * four bits: d, dmin and the scales lie at the same offsets in both.
 */
_Static_assert(offsetof(block_q4_K, scales) == offsetof(block_q5_K, scales) &&
                   offsetof(block_q4_K, dmin) == offsetof(block_q5_K, dmin),
               "q4_K and q5_K share their first fields");

/* The q4_K rows (five false) or the q5_K rows. */
static inline __attribute__((always_inline)) void q45_K_rows(bool five, int n, float *s, const void *vx, size_t bx,
                                                             const void *vy, int nr)
{
    const size_t block_bytes = five ? sizeof(block_q5_K) : sizeof(block_q4_K);
    const size_t qs_at = five ? offsetof(block_q5_K, qs) : offsetof(block_q4_K, qs);
    const char *row[4];
    rows_of_call(row, vx, bx, nr);
    const __m512i low4 = _mm512_set1_epi8(0x0f), bit4 = _mm512_set1_epi8(0x10);
    /*
     * q5_K: bit sub of qh[j] to bit 4 of the codes of sub-block sub: for
     * 64-byte chunk c, the low nibbles' halves are sub-blocks 4c and 4c + 2,
     * the high nibbles' 4c + 1 and 4c + 3 (shifts per 256-bit half)
     */
    const __m512i fifth_shift[2][2] = {
        { _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1),      /* c 0, left */
          _mm512_inserti64x4(_mm512_set1_epi16(3), _mm256_set1_epi16(1), 1) },
        { _mm512_inserti64x4(_mm512_set1_epi16(0), _mm256_set1_epi16(2), 1),      /* c 1, right */
          _mm512_inserti64x4(_mm512_set1_epi16(1), _mm256_set1_epi16(3), 1) },
    };
    const block_q8_K *y = vy;
    __m128 sum = _mm_setzero_ps();
    struct ggml__rows_prefetch ahead = ggml__rows_prefetch_init(vx, bx, nr, n / QK_K);
    for (int b = 0; b < n / QK_K; b++) {
        ggml__rows_prefetch_step(&ahead);
        /* the activations' sums of 32 in the upper lane, against the minimums */
        const __m256i ysub = _mm256_inserti128_si256(_mm256_setzero_si256(), q8_K_sums32(&y[b]), 1);
        const __m512i ya[2][2] = {
            { activations(&y[b], 0, 0), activations(&y[b], 0, 1) },
            { activations(&y[b], 1, 0), activations(&y[b], 1, 1) },
        };
        const char *blk[4], *dmin[4];
        __m256i scaled[4], mins[4];
        GGML__UNROLL
        for (int r = 0; r < 4; r++) {
            /* the fields shared with q5_K (the assertion above) */
            blk[r] = row[r] + (size_t) b * block_bytes;
            dmin[r] = blk[r] + offsetof(block_q4_K, dmin);
            const __m256i sc_mn = q4_K_scales_mins((const uint8_t *) blk[r] + offsetof(block_q4_K, scales));
            mins[r] = _mm256_madd_epi16(sc_mn, ysub);
            const __m512i sc = _mm512_broadcast_i32x4(_mm256_castsi256_si128(sc_mn));
            __m512i qh = _mm512_setzero_si512();
            if (five)
                qh = _mm512_broadcast_i64x4(
                    _mm256_loadu_si256((const __m256i *) (const void *) (blk[r] + offsetof(block_q5_K, qh))));
            __m512i acc = _mm512_setzero_si512();
            GGML__UNROLL
            for (int c = 0; c < 2; c++) {
                const __m512i q = _mm512_loadu_si512(blk[r] + qs_at + 64 * c);
                __m512i lo = _mm512_and_si512(q, low4), hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), low4);
                if (five) {
                    const __m512i lo5 = c ? _mm512_srlv_epi16(qh, fifth_shift[1][0])
                                          : _mm512_sllv_epi16(qh, fifth_shift[0][0]);
                    const __m512i hi5 = c ? _mm512_srlv_epi16(qh, fifth_shift[1][1])
                                          : _mm512_sllv_epi16(qh, fifth_shift[0][1]);
                    lo = _mm512_ternarylogic_epi32(lo, lo5, bit4, 0xf8);   /* a | (b & c) */
                    hi = _mm512_ternarylogic_epi32(hi, hi5, bit4, 0xf8);
                }
                /* low nibbles: sub-blocks 4c (lower half), 4c + 2; high nibbles: 4c + 1, 4c + 3 */
                acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(lo, ya[c][0]),
                                          quarter_lanes(sc, 4 * c, 4 * c, 4 * c + 2, 4 * c + 2));
                acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(hi, ya[c][1]),
                                          quarter_lanes(sc, 4 * c + 1, 4 * c + 1, 4 * c + 3, 4 * c + 3));
            }
            scaled[r] = _mm256_add_epi32(_mm512_castsi512_si256(acc), _mm512_extracti64x4_epi64(acc, 1));
        }
        const __m128i isum = avx2_hsum4_epi32(scaled[0], scaled[1], scaled[2], scaled[3]);
        const __m128i imin = avx2_hsum4_epi32(mins[0], mins[1], mins[2], mins[3]);
        /* ggml__q4_K_block_dot in four lanes */
        const __m128 dy = _mm_set1_ps(y[b].d);
        const __m128 scale = _mm_mul_ps(dy, four_f16(blk)), min_scale = _mm_mul_ps(dy, four_f16(dmin));
        const __m128 product = _mm_mul_ps(scale, _mm_cvtepi32_ps(isum));
        const __m128 min_product = _mm_mul_ps(min_scale, _mm_cvtepi32_ps(imin));
        sum = _mm_add_ps(sum, _mm_sub_ps(product, min_product));
    }
    store_sums(s, sum, nr);
}

void ggml__avx512_vnni_vec_dot_rows_q4_K(int n, float *s, const void *vx, size_t bx, const void *vy, int nr)
{
    q45_K_rows(false, n, s, vx, bx, vy, nr);
}

void ggml__avx512_vnni_vec_dot_rows_q5_K(int n, float *s, const void *vx, size_t bx, const void *vy, int nr)
{
    q45_K_rows(true, n, s, vx, bx, vy, nr);
}

/*
 * Row x's integer sum over a q8_K block y, sum_s sc[s] (sum_{j in s} q_j
 * y_j - 32 bsum_s), in the 16 lanes (bsums: y's sums of 16).
 */
static inline __attribute__((always_inline)) __m512i q6_K_sums(const block_q6_K *x, const block_q8_K *y,
                                                               __m256i bsums)
{
    const __m512i low4 = _mm512_set1_epi8(0x0f), bits45 = _mm512_set1_epi8(0x30);
    const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) (const void *) x->scales));
    /* -32 sum_s sc[s] bsum_s, in the low eight lanes */
    const __m256i bias = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(bsums, sc16), 5));
    __m512i acc = _mm512_castsi256_si512(bias);
    acc = _mm512_inserti64x4(acc, _mm256_setzero_si256(), 1);
    /* bits 4, 5 of the codes: bits 0-1, 2-3 of qh (low nibbles' halves), bits 4-5, 6-7 (high nibbles') */
    const __m512i low_shift = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);   /* left */
    const __m512i high_shift = _mm512_inserti64x4(_mm512_set1_epi16(0), _mm256_set1_epi16(2), 1);  /* right */
#pragma GCC unroll 2
    for (int half = 0; half < 2; half++) {
        const __m512i ql = _mm512_loadu_si512(x->ql + 64 * half);
        const __m256i qh_half = _mm256_loadu_si256((const __m256i *) (const void *) (x->qh + 32 * half));
        const __m512i qh = _mm512_broadcast_i64x4(qh_half);
        const __m512i lo = _mm512_or_si512(_mm512_and_si512(ql, low4),
                                           _mm512_and_si512(_mm512_sllv_epi16(qh, low_shift), bits45));
        const __m512i hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low4),
                                           _mm512_and_si512(_mm512_srlv_epi16(qh, high_shift), bits45));
        /* the half's eight scales in every 128-bit quarter; quarter q of part p takes scale 4 p + q */
        const __m512i sc =
            _mm512_broadcast_i32x4(half ? _mm256_extracti128_si256(sc16, 1) : _mm256_castsi256_si128(sc16));
#pragma GCC unroll 2
        for (int part = 0; part < 2; part++) {
            const __m512i code = part ? hi : lo;
            const __m512i a = _mm512_loadu_si512(y->qs + 128 * half + 64 * part);
            acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(code, a),
                                      quarter_lanes(sc, 4 * part, 4 * part + 1, 4 * part + 2, 4 * part + 3));
        }
    }
    return acc;
}

void ggml__avx512_vnni_vec_dot_rows_q6_K(int n, float *s, const void *vx, size_t bx, const void *vy, int nr)
{
    const char *row[4];
    rows_of_call(row, vx, bx, nr);
    const block_q8_K *y = vy;
    __m128 sum = _mm_setzero_ps();
    struct ggml__rows_prefetch ahead = ggml__rows_prefetch_init(vx, bx, nr, n / QK_K);
    for (int b = 0; b < n / QK_K; b++) {
        ggml__rows_prefetch_step(&ahead);
        const __m256i bsums = _mm256_loadu_si256((const __m256i *) (const void *) y[b].bsums);
        const char *d[4];
        __m256i sums[4];
        GGML__UNROLL
        for (int r = 0; r < 4; r++) {
            const block_q6_K *x = (const block_q6_K *) (const void *) row[r] + b;
            d[r] = (const char *) x + offsetof(block_q6_K, d);
            const __m512i acc = q6_K_sums(x, &y[b], bsums);
            sums[r] = _mm256_add_epi32(_mm512_castsi512_si256(acc), _mm512_extracti64x4_epi64(acc, 1));
        }
        const __m128i isum = avx2_hsum4_epi32(sums[0], sums[1], sums[2], sums[3]);
        /* ggml__q6_K_block_dot in four lanes */
        const __m128 scale = _mm_mul_ps(_mm_set1_ps(y[b].d), four_f16(d));
        sum = _mm_add_ps(sum, _mm_mul_ps(scale, _mm_cvtepi32_ps(isum)));
    }
    store_sums(s, sum, nr);
}
