/*
 * simd/avx512/qdot.h - the quantized dot products of the AVX-512 level,
 * once for both forms of the integer sum.
 *
 * Not installed.  Included by dot.c and dot-vnni.c only (after <stdbool.h>,
 * <string.h>, quants-impl.h, intrin.h and avx512.h), once they define
 *   static inline __m512i dot_u8(__m512i u, __m512i a);
 * (the 64 unsigned bytes of u times the signed bytes of a, summed in
 * groups of four consecutive bytes into 16 int32 lanes, exactly when
 * u <= 128 and a in [-127, 127]) and QDOT_NAME(name), the public name of
 * a kernel.  dot.c sums with maddubs then madd, dot-vnni.c with VPDPBUSD.
 *
 * Each step takes two blocks of 32: the weights of blocks b and b + 1 as
 * the 64 bytes of one vector, block b in the low half, the activations
 * likewise, and the per-block scales d_x * d_y as 16 float lanes (lanes
 * 0-7: block b).  The products of a block are summed exactly in integers,
 * as in the generic level; only the scaling and the sum over blocks are in
 * floats.  An odd last block is paired with itself at scale 0 (its partial
 * sums are finite: they add zeros).  Signed weights are made unsigned by
 * moving their sign onto the activation (|w| * (sign(w) * a)), exact when
 * a is in [-127, 127], as the Q8 encoders make it.
 */
#ifndef GGML_BACKEND_SIMD_AVX512_QDOT_H
#define GGML_BACKEND_SIMD_AVX512_QDOT_H

/* Signed w times signed a, in dot_u8's lanes. */
static inline __m512i dot_i8(__m512i w, __m512i a)
{
    const __mmask64 negative = _mm512_movepi8_mask(w);
    return dot_u8(_mm512_abs_epi8(w), _mm512_mask_sub_epi8(a, negative, _mm512_setzero_si512(), a));
}

/* The 4-bit values of two blocks (16 bytes each: element j in the low
   nibble of byte j, element j + 16 in its high nibble), 0..15, in element
   order, block qs0 in the low half. */
static inline __m512i nibbles2(const uint8_t qs0[16], const uint8_t qs1[16])
{
    const __m256i q0 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) (const void *) qs0));
    const __m256i q1 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) (const void *) qs1));
    const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(q0), q1, 1);
    /* 128-bit lanes qs0, qs0, qs1, qs1: the second copy of each block moved to its high nibbles */
    const __m512i shifted = _mm512_srlv_epi64(q, _mm512_set_epi64(4, 4, 0, 0, 4, 4, 0, 0));
    return _mm512_and_si512(shifted, _mm512_set1_epi8(0x0f));
}

/* 0x10 in byte j of block b's half where bit j of its qh is set, else 0. */
static inline __m512i fifth_bits2(const uint8_t qh0[4], const uint8_t qh1[4])
{
    uint32_t lo, hi;
    memcpy(&lo, qh0, sizeof lo);
    memcpy(&hi, qh1, sizeof hi);
    return _mm512_maskz_mov_epi8(((__mmask64) hi << 32) | lo, _mm512_set1_epi8(0x10));
}

/* The 32 codes of two Q8 blocks, block qs0 in the low half. */
static inline __m512i q8_2(const int8_t qs0[32], const int8_t qs1[32])
{
    const __m256i a0 = _mm256_loadu_si256((const __m256i *) (const void *) qs0);
    const __m256i a1 = _mm256_loadu_si256((const __m256i *) (const void *) qs1);
    return _mm512_inserti64x4(_mm512_castsi256_si512(a0), a1, 1);
}

/* The scale of a block pair, a product of two binary16 values (exact). */
static inline float scale_of(ggml_fp16_t a, ggml_fp16_t b)
{
    return _cvtsh_ss(a) * _cvtsh_ss(b);
}

/* acc + (s0 in lanes 0-7, s1 in lanes 8-15) * isum */
static inline __m512 add_scaled(__m512 acc, float s0, float s1, __m512i isum)
{
    const __m512 scales = _mm512_mask_mov_ps(_mm512_set1_ps(s0), (__mmask16) 0xff00, _mm512_set1_ps(s1));
    return _mm512_fmadd_ps(scales, _mm512_cvtepi32_ps(isum), acc);
}

/* The scale of the second block of a pair: 0 unless it is a block of its
   own (not the odd last block paired with itself). */
static inline float second_scale(bool own, ggml_fp16_t a, ggml_fp16_t b)
{
    return own ? scale_of(a, b) : 0.0f;
}

void QDOT_NAME(vec_dot_q4_0_q8_0)(GGML__VEC_DOT_PARAMS)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_q4_0 *x = vx;
    const block_q8_0 *y = vy;
    __m512 acc = _mm512_setzero_ps();
    for (int b = 0; b < n / QK4_0; b += 2) {
        const int b1 = b + 1 < n / QK4_0 ? b + 1 : b;
        const __m512i w = _mm512_sub_epi8(nibbles2(x[b].qs, x[b1].qs), _mm512_set1_epi8(8));
        const __m512i isum = dot_i8(w, q8_2(y[b].qs, y[b1].qs));
        acc = add_scaled(acc, scale_of(x[b].d, y[b].d), second_scale(b1 != b, x[b1].d, y[b1].d), isum);
    }
    *s = _mm512_reduce_add_ps(acc);
}

void QDOT_NAME(vec_dot_q4_1_q8_1)(GGML__VEC_DOT_PARAMS)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_q4_1 *x = vx;
    const block_q8_1 *y = vy;
    __m512 acc = _mm512_setzero_ps();
    float mins = 0.0f;
    for (int b = 0; b < n / QK4_1; b += 2) {
        const int b1 = b + 1 < n / QK4_1 ? b + 1 : b;
        const __m512i isum = dot_u8(nibbles2(x[b].qs, x[b1].qs), q8_2(y[b].qs, y[b1].qs));
        acc = add_scaled(acc, scale_of(x[b].d, y[b].d), second_scale(b1 != b, x[b1].d, y[b1].d), isum);
        mins += scale_of(x[b].m, y[b].s);
        if (b1 != b)
            mins += scale_of(x[b1].m, y[b1].s);
    }
    *s = _mm512_reduce_add_ps(acc) + mins;
}

void QDOT_NAME(vec_dot_q5_0_q8_0)(GGML__VEC_DOT_PARAMS)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_q5_0 *x = vx;
    const block_q8_0 *y = vy;
    __m512 acc = _mm512_setzero_ps();
    for (int b = 0; b < n / QK5_0; b += 2) {
        const int b1 = b + 1 < n / QK5_0 ? b + 1 : b;
        const __m512i u = _mm512_or_si512(nibbles2(x[b].qs, x[b1].qs), fifth_bits2(x[b].qh, x[b1].qh));
        const __m512i w = _mm512_sub_epi8(u, _mm512_set1_epi8(16));
        const __m512i isum = dot_i8(w, q8_2(y[b].qs, y[b1].qs));
        acc = add_scaled(acc, scale_of(x[b].d, y[b].d), second_scale(b1 != b, x[b1].d, y[b1].d), isum);
    }
    *s = _mm512_reduce_add_ps(acc);
}

void QDOT_NAME(vec_dot_q5_1_q8_1)(GGML__VEC_DOT_PARAMS)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_q5_1 *x = vx;
    const block_q8_1 *y = vy;
    __m512 acc = _mm512_setzero_ps();
    float mins = 0.0f;
    for (int b = 0; b < n / QK5_1; b += 2) {
        const int b1 = b + 1 < n / QK5_1 ? b + 1 : b;
        const __m512i u = _mm512_or_si512(nibbles2(x[b].qs, x[b1].qs), fifth_bits2(x[b].qh, x[b1].qh));
        const __m512i isum = dot_u8(u, q8_2(y[b].qs, y[b1].qs));
        acc = add_scaled(acc, scale_of(x[b].d, y[b].d), second_scale(b1 != b, x[b1].d, y[b1].d), isum);
        mins += scale_of(x[b].m, y[b].s);
        if (b1 != b)
            mins += scale_of(x[b1].m, y[b1].s);
    }
    *s = _mm512_reduce_add_ps(acc) + mins;
}

void QDOT_NAME(vec_dot_q8_0_q8_0)(GGML__VEC_DOT_PARAMS)
{
    (void) bs, (void) bx, (void) by, (void) nrc;
    const block_q8_0 *x = vx;
    const block_q8_0 *y = vy;
    __m512 acc = _mm512_setzero_ps();
    for (int b = 0; b < n / QK8_0; b += 2) {
        const int b1 = b + 1 < n / QK8_0 ? b + 1 : b;
        const __m512i isum = dot_i8(q8_2(x[b].qs, x[b1].qs), q8_2(y[b].qs, y[b1].qs));
        acc = add_scaled(acc, scale_of(x[b].d, y[b].d), second_scale(b1 != b, x[b1].d, y[b1].d), isum);
    }
    *s = _mm512_reduce_add_ps(acc);
}

#endif
