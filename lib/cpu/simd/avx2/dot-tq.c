/*
 * simd/avx2/dot-tq.c - dot products of TQ1_0, TQ2_0 and IQ4_XS rows with
 * q8_K rows at the AVX2 level.
 *
 * Each block's integer sum is the generic level's (simd/generic/dot-tq.c),
 * computed 32 values at a time, and is scaled by ggml__q6_K_block_dot and
 * added in block order as there, so the results are the generic ones bit
 * for bit.
 *   TQ1_0, TQ2_0: the digits or codes (0..3) are unsigned bytes, which
 *     maddubs multiplies with the signed activations, pair sums at most
 *     2 * 3 * 128; the offset of 1 comes off through the block's sums of
 *     16 activations.  A TQ1_0 digit n of byte b is the high byte of
 *     ((b 3^n) mod 256) * 3, formed in 16-bit lanes: mullo keeps each
 *     byte's product modulo 256 in place (the other byte's carry lands
 *     above it), mulhi by 3 of the product in the lane's high byte takes
 *     the digit out.
 *   IQ4_XS: a byte shuffle looks the levels up; maddubs takes the
 *     activations' magnitudes (0..128, -128 included) as the unsigned
 *     operand and moves their signs onto the levels (|level| <= 127),
 *     pair sums at most 2 * 128 * 127; madd multiplies them with the
 *     sub-block's scale ls - 32.
 */
#include "config.h"

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "avx2.h"
#include "intsum.h"

/* FMA is available here: keep clang from fusing the block shares. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

static inline __m256i load32(const void *p)
{
    return _mm256_loadu_si256((const __m256i *) p);
}

/* sum codes[j] * y[j] (codes unsigned, at most 3) in eight 32-bit lanes. */
static inline __m256i unsigned_dot(__m256i codes, const int8_t *y)
{
    return _mm256_madd_epi16(_mm256_maddubs_epi16(codes, load32(y)), _mm256_set1_epi16(1));
}

/* The sums of the 16 groups of a q8_K block, in eight 32-bit lanes. */
static inline __m256i group_sums(const block_q8_K *y)
{
    return _mm256_madd_epi16(load32(y->bsums), _mm256_set1_epi16(1));
}

/* Digit ((b power) mod 256) * 3 >> 8 of each byte b of bytes, power the
   16-bit lane's multiplier (the same for both its bytes). */
static inline __m256i base3_digits(__m256i bytes, __m256i power)
{
    const __m256i three = _mm256_set1_epi16(3);
    const __m256i low = _mm256_mulhi_epu16(_mm256_slli_epi16(_mm256_mullo_epi16(bytes, power), 8), three);
    const __m256i high_bytes = _mm256_and_si256(bytes, _mm256_set1_epi16((short) 0xff00));
    const __m256i high = _mm256_mulhi_epu16(_mm256_mullo_epi16(high_bytes, power), three);
    return _mm256_or_si256(low, _mm256_slli_epi16(high, 8));
}

void ggml__avx2_vec_dot_tq1_0_q8_K(GGML__VEC_DOT_PARAMS)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_tq1_0 *x = vx;
    const block_q8_K *y = vy;
    static const short pow3[5] = { 1, 3, 9, 27, 81 };
    /* values 160..191 and 192..223: two digits of bytes 32..47 at once */
    const __m256i power01 = _mm256_setr_epi16(1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i power23 = _mm256_setr_epi16(9, 9, 9, 9, 9, 9, 9, 9, 27, 27, 27, 27, 27, 27, 27, 27);
    /* values 224..239 (digit 4 of bytes 32..47), then 240..255: digit n
       of qh[j] for bytes 4 n + j of the qh word repeated */
    const __m256i power4h = _mm256_setr_epi16(81, 81, 81, 81, 81, 81, 81, 81, 1, 1, 3, 3, 9, 9, 27, 27);
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        const int8_t *q8 = y[b].qs;
        __m256i acc = _mm256_sub_epi32(_mm256_setzero_si256(), group_sums(&y[b]));
        const __m256i first = load32(x[b].qs);
        for (int d = 0; d < 5; d++)
            acc = _mm256_add_epi32(acc, unsigned_dot(base3_digits(first, _mm256_set1_epi16(pow3[d])), q8 + 32 * d));
        const __m128i middle = _mm_loadu_si128((const __m128i *) (const void *) (x[b].qs + 32));
        const __m256i middle2 = _mm256_broadcastsi128_si256(middle);
        acc = _mm256_add_epi32(acc, unsigned_dot(base3_digits(middle2, power01), q8 + 160));
        acc = _mm256_add_epi32(acc, unsigned_dot(base3_digits(middle2, power23), q8 + 192));
        uint32_t qh;
        memcpy(&qh, x[b].qh, sizeof qh);
        const __m256i last = _mm256_inserti128_si256(_mm256_castsi128_si256(middle), _mm_set1_epi32((int) qh), 1);
        acc = _mm256_add_epi32(acc, unsigned_dot(base3_digits(last, power4h), q8 + 224));
        sum += ggml__q6_K_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), avx2_hsum_epi32(acc));
    }
    *s = sum;
}

void ggml__avx2_vec_dot_tq2_0_q8_K(GGML__VEC_DOT_PARAMS)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_tq2_0 *x = vx;
    const block_q8_K *y = vy;
    const __m256i two_bits = _mm256_set1_epi8(3);
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        __m256i acc = _mm256_sub_epi32(_mm256_setzero_si256(), group_sums(&y[b]));
        for (int c = 0; c < 2; c++) {
            const __m256i q = load32(x[b].qs + 32 * c);
            for (int p = 0; p < 4; p++) {
                const __m256i codes = _mm256_and_si256(_mm256_srli_epi16(q, 2 * p), two_bits);
                acc = _mm256_add_epi32(acc, unsigned_dot(codes, y[b].qs + 128 * c + 32 * p));
            }
        }
        sum += ggml__q6_K_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), avx2_hsum_epi32(acc));
    }
    *s = sum;
}

void ggml__avx2_vec_dot_iq4_xs_q8_K(GGML__VEC_DOT_PARAMS)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_iq4_xs *x = vx;
    const block_q8_K *y = vy;
    const __m256i levels = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) (const void *) ggml__iq4nl_values));
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    float sum = 0.0f;
    for (int b = 0; b < n / QK_K; b++) {
        __m256i acc = _mm256_setzero_si256();
        /* two sub-blocks a step: bytes 0..15 of q are sub-block s, 16..31 s + 1 */
        for (int s2 = 0; s2 < QK_K / 32; s2 += 2) {
            const __m256i q = load32(x[b].qs + 16 * s2);
            const __m256i lo = _mm256_and_si256(q, low4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
            for (int k = 0; k < 2; k++) {
                const __m256i codes = k == 0 ? _mm256_permute2x128_si256(lo, hi, 0x20)
                                             : _mm256_permute2x128_si256(lo, hi, 0x31);
                const __m256i w = _mm256_shuffle_epi8(levels, codes);
                const __m256i a = load32(y[b].qs + 32 * (s2 + k));
                const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(a, a), _mm256_sign_epi8(w, a));
                const short scale = (short) (ggml__iq4_xs_scale(&x[b], s2 + k) - 32);
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(scale)));
            }
        }
        sum += ggml__q6_K_block_dot(y[b].d, ggml__fp16_to_fp32(x[b].d), avx2_hsum_epi32(acc));
    }
    *s = sum;
}
