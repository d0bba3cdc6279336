/*
 * simd/neon/quant-dot.h - the NEON level's quantized dot products (Q4_0,
 * Q4_1, Q5_0, Q5_1 and Q8_0 rows against Q8_0 / Q8_1 rows), written once
 * and compiled twice: by dot.c with base NEON and by dot-dotprod.c with
 * the dot-product instructions.
 *
 * Not installed.  Include once per file, after config.h, ggml-impl.h,
 * fp16-impl.h, quants-impl.h and <arm_neon.h>, with two definitions in
 * place:
 *   QDOT_NAME(f)   the name of the entry for the pair f (q4_0_q8_0, ...)
 *   block_isum(x_lo, x_hi, y)   a static inline function returning the
 *                  exact sum over j < 32 of x[j] * y[j] as four int32
 *                  partial sums, where x[0..15] = x_lo, x[16..31] = x_hi
 *                  (int8, in -16..31 for 4- and 5-bit blocks) and y is a
 *                  block's 32 int8 codes (read bytewise).
 *
 * Each block's integer sum is exact, as in the generic level; only the
 * scaling by the two blocks' scales and the sum over blocks are in
 * single precision (one fused multiply-add per block into four lanes).
 */
/* The 16 low nibbles (values 0..15 of elements 0..15) and the 16 high
   ones (elements 16..31) of a block's packed bytes. */
static inline uint8x16_t low_nibbles(uint8x16_t packed)
{
    return vandq_u8(packed, vdupq_n_u8(0x0f));
}

static inline uint8x16_t high_nibbles(uint8x16_t packed)
{
    return vshrq_n_u8(packed, 4);
}

/*
 * 0x10 in byte j (elements 16*half + j) where bit 16*half + j of the
 * block's little-endian qh is set, else 0: each qh byte is spread over 8
 * lanes and tested against that lane's bit.
 */
static inline uint8x16_t fifth_bits(const uint8_t qh[4], int half)
{
    static const uint8_t lane_bit[16] = { 1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128 };
    const uint8x16_t spread = vcombine_u8(vdup_n_u8(qh[2 * half]), vdup_n_u8(qh[2 * half + 1]));
    return vandq_u8(vtstq_u8(spread, vld1q_u8(lane_bit)), vdupq_n_u8(0x10));
}

/* acc + isum * (d_x * d_y), the four partial sums kept apart. */
static inline float32x4_t add_scaled_block(float32x4_t acc, int32x4_t isum, ggml_fp16_t dx, ggml_fp16_t dy)
{
    return vfmaq_n_f32(acc, vcvtq_f32_s32(isum), ggml__fp16_to_fp32(dx) * ggml__fp16_to_fp32(dy));
}

/* m_x * s_y: the minimum's term of a Q4_1 / Q5_1 block (kernels.h). */
static inline float block_min_term(ggml_fp16_t m, ggml_fp16_t s)
{
    return ggml__fp16_to_fp32(m) * ggml__fp16_to_fp32(s);
}

/* The entries (QDOT_NAME gives each including file its own names). */

void QDOT_NAME(q4_0_q8_0)(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    const block_q4_0 *x = vx;
    const block_q8_0 *y = vy;
    const int8x16_t eight = vdupq_n_s8(8);
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (int b = 0; b < n / QK4_0; b++) {
        const uint8x16_t packed = vld1q_u8(x[b].qs);
        const int8x16_t lo = vsubq_s8(vreinterpretq_s8_u8(low_nibbles(packed)), eight);
        const int8x16_t hi = vsubq_s8(vreinterpretq_s8_u8(high_nibbles(packed)), eight);
        acc = add_scaled_block(acc, block_isum(lo, hi, y[b].qs), x[b].d, y[b].d);
    }
    *s = vaddvq_f32(acc);
}

void QDOT_NAME(q4_1_q8_1)(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    const block_q4_1 *x = vx;
    const block_q8_1 *y = vy;
    float32x4_t acc = vdupq_n_f32(0.0f);
    float mins = 0.0f;
    for (int b = 0; b < n / QK4_1; b++) {
        const uint8x16_t packed = vld1q_u8(x[b].qs);
        const int8x16_t lo = vreinterpretq_s8_u8(low_nibbles(packed));
        const int8x16_t hi = vreinterpretq_s8_u8(high_nibbles(packed));
        acc = add_scaled_block(acc, block_isum(lo, hi, y[b].qs), x[b].d, y[b].d);
        mins += block_min_term(x[b].m, y[b].s);
    }
    *s = vaddvq_f32(acc) + mins;
}

void QDOT_NAME(q5_0_q8_0)(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    const block_q5_0 *x = vx;
    const block_q8_0 *y = vy;
    const int8x16_t sixteen = vdupq_n_s8(16);
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (int b = 0; b < n / QK5_0; b++) {
        const uint8x16_t packed = vld1q_u8(x[b].qs);
        const uint8x16_t lo = vorrq_u8(low_nibbles(packed), fifth_bits(x[b].qh, 0));
        const uint8x16_t hi = vorrq_u8(high_nibbles(packed), fifth_bits(x[b].qh, 1));
        const int8x16_t lo_s = vsubq_s8(vreinterpretq_s8_u8(lo), sixteen);
        const int8x16_t hi_s = vsubq_s8(vreinterpretq_s8_u8(hi), sixteen);
        acc = add_scaled_block(acc, block_isum(lo_s, hi_s, y[b].qs), x[b].d, y[b].d);
    }
    *s = vaddvq_f32(acc);
}

void QDOT_NAME(q5_1_q8_1)(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    const block_q5_1 *x = vx;
    const block_q8_1 *y = vy;
    float32x4_t acc = vdupq_n_f32(0.0f);
    float mins = 0.0f;
    for (int b = 0; b < n / QK5_1; b++) {
        const uint8x16_t packed = vld1q_u8(x[b].qs);
        const uint8x16_t lo = vorrq_u8(low_nibbles(packed), fifth_bits(x[b].qh, 0));
        const uint8x16_t hi = vorrq_u8(high_nibbles(packed), fifth_bits(x[b].qh, 1));
        acc = add_scaled_block(acc, block_isum(vreinterpretq_s8_u8(lo), vreinterpretq_s8_u8(hi), y[b].qs),
                               x[b].d, y[b].d);
        mins += block_min_term(x[b].m, y[b].s);
    }
    *s = vaddvq_f32(acc) + mins;
}

void QDOT_NAME(q8_0_q8_0)(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    const block_q8_0 *x = vx;
    const block_q8_0 *y = vy;
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (int b = 0; b < n / QK8_0; b++) {
        const int8x16_t lo = vld1q_s8(x[b].qs), hi = vld1q_s8(x[b].qs + 16);
        acc = add_scaled_block(acc, block_isum(lo, hi, y[b].qs), x[b].d, y[b].d);
    }
    *s = vaddvq_f32(acc);
}
