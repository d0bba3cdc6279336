/*
 * quants-impl.h - block layouts of the quantized types and their reference
 * (de)quantizers.
 *
 * Not installed.  The layouts are a file format: GGUF files store these
 * blocks byte for byte, so every struct below must keep the exact size and
 * field offsets that ggml uses (checked with static assertions).  All
 * multi-byte fields are little-endian in files; like ggml, the library
 * reads them natively and so supports little-endian hosts only.
 *
 * Naming: QKx_y is the number of values a block encodes; "d" is the scale
 * (delta), "m" the minimum (offset), "s" the scale times the sum of the
 * quants; all three are binary16.  The reference functions produce the
 * same bytes as ggml's reference quantizers for every finite input, and
 * are what gets written to model files; the CPU backend may use faster
 * quantizers for activations.
 */
#ifndef GGML_BACKEND_QUANTS_IMPL_H
#define GGML_BACKEND_QUANTS_IMPL_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ggml.h"

/*
 * Sum of n float lanes (n a power of two, at most 16) as a fixed tree:
 * lane k with lane k + n/2, then k with k + n/4, and so on.  The
 * quantizers keep their sums in such lanes so that the compiler can
 * vectorize them without reordering a floating-point sum; the result
 * depends on n only.
 */
static inline float ggml__lanes_sum(const float *a, int n)
{
    float b[16];
    for (int k = 0; k < n; k++)
        b[k] = a[k];
    for (int half = n / 2; half >= 1; half /= 2)
        for (int k = 0; k < half; k++)
            b[k] += b[k + half];
    return b[0];
}

/*
 * The signed value of largest magnitude of the block x, from its largest
 * value p and its largest negated value m (both >= 0, NaN never counted):
 * the sign of the larger; on a tie the first element of that magnitude
 * decides; 0 when both are 0.  The reference encoders' rule (Q4_0, Q5_0).
 */
static inline float ggml__signed_absmax_of(const float *x, float p, float m)
{
    if (p != m)
        return p > m ? p : -m;
    if (p == 0.0f)
        return 0.0f;
    int at = 0;
    while (x[at] != p && x[at] != -p)
        at++;
    return x[at];
}

/* The first element of x equal to v (one is): the sign of a zero found by comparison. */
static inline float ggml__first_equal(const float *x, float v)
{
    int at = 0;
    while (x[at] != v)
        at++;
    return x[at];
}

#define QK4_0 32
#define QK4_1 32
#define QK5_0 32
#define QK5_1 32
#define QK8_0 32
#define QK8_1 32

/* 4-bit, symmetric: x = d * (q - 8); qs[j] holds value j (low nibble) and
   value j + 16 (high nibble). */
typedef struct {
    ggml_fp16_t d;
    uint8_t qs[QK4_0 / 2];
} block_q4_0;

/* 4-bit with minimum: x = d * q + m; nibbles as in q4_0. */
typedef struct {
    ggml_fp16_t d;
    ggml_fp16_t m;
    uint8_t qs[QK4_1 / 2];
} block_q4_1;

/* 5-bit, symmetric: x = d * (q - 16); the low four bits are packed as in
   q4_0 and bit 4 of value j is bit j of the little-endian word qh. */
typedef struct {
    ggml_fp16_t d;
    uint8_t qh[4];
    uint8_t qs[QK5_0 / 2];
} block_q5_0;

/* 5-bit with minimum: x = d * q + m; bits as in q5_0. */
typedef struct {
    ggml_fp16_t d;
    ggml_fp16_t m;
    uint8_t qh[4];
    uint8_t qs[QK5_1 / 2];
} block_q5_1;

/* 8-bit, symmetric: x = d * q. */
typedef struct {
    ggml_fp16_t d;
    int8_t qs[QK8_0];
} block_q8_0;

/* 8-bit with the block sum: x = d * q, and s = d * sum(q) for dot products. */
typedef struct {
    ggml_fp16_t d;
    ggml_fp16_t s;
    int8_t qs[QK8_1];
} block_q8_1;

static_assert(sizeof(block_q4_0) == 18, "block_q4_0 must be 18 bytes");
static_assert(sizeof(block_q4_1) == 20, "block_q4_1 must be 20 bytes");
static_assert(sizeof(block_q5_0) == 22, "block_q5_0 must be 22 bytes");
static_assert(sizeof(block_q5_1) == 24, "block_q5_1 must be 24 bytes");
static_assert(sizeof(block_q8_0) == 34, "block_q8_0 must be 34 bytes");
static_assert(sizeof(block_q8_1) == 36, "block_q8_1 must be 36 bytes");
static_assert(offsetof(block_q4_0, qs) == 2, "q4_0 layout");
static_assert(offsetof(block_q4_1, m) == 2 && offsetof(block_q4_1, qs) == 4, "q4_1 layout");
static_assert(offsetof(block_q5_0, qh) == 2 && offsetof(block_q5_0, qs) == 6, "q5_0 layout");
static_assert(offsetof(block_q5_1, qh) == 4 && offsetof(block_q5_1, qs) == 8, "q5_1 layout");
static_assert(offsetof(block_q8_0, qs) == 2, "q8_0 layout");
static_assert(offsetof(block_q8_1, s) == 2 && offsetof(block_q8_1, qs) == 4, "q8_1 layout");

/*
 * Row functions.  Their signatures are exactly ggml_from_float_t and
 * ggml_to_float_t so that the type traits table holds them without casts.
 * k is the number of values; it must be a non-negative multiple of the
 * block size and both pointers valid for k values (k / QK blocks).  A bad
 * k or a NULL pointer is logged and nothing is written.
 */
void ggml__quantize_row_q4_0_ref(const float *restrict x, void *restrict y, int64_t k);
void ggml__quantize_row_q4_1_ref(const float *restrict x, void *restrict y, int64_t k);
void ggml__quantize_row_q5_0_ref(const float *restrict x, void *restrict y, int64_t k);
void ggml__quantize_row_q5_1_ref(const float *restrict x, void *restrict y, int64_t k);
void ggml__quantize_row_q8_0_ref(const float *restrict x, void *restrict y, int64_t k);
void ggml__quantize_row_q8_1_ref(const float *restrict x, void *restrict y, int64_t k);

void ggml__dequantize_row_q4_0(const void *restrict x, float *restrict y, int64_t k);
void ggml__dequantize_row_q4_1(const void *restrict x, float *restrict y, int64_t k);
void ggml__dequantize_row_q5_0(const void *restrict x, float *restrict y, int64_t k);
void ggml__dequantize_row_q5_1(const void *restrict x, float *restrict y, int64_t k);
void ggml__dequantize_row_q8_0(const void *restrict x, float *restrict y, int64_t k);
/* Not in the type traits (ggml gives q8_1 no to_float); for internal use. */
void ggml__dequantize_row_q8_1(const void *restrict x, float *restrict y, int64_t k);

/* ------------------------------------------------------------------------
 * Formats whose CPU dot product takes Q8_0 blocks: MXFP4, NVFP4, Q1_0,
 * Q2_0, IQ4_NL (lib/quants-small.c; generic dots in
 * lib/cpu/simd/generic/dot-small.c).
 * ------------------------------------------------------------------------ */

#define QK_MXFP4 32
#define QK_NVFP4 64
#define QK_NVFP4_SUB 16
#define QK1_0 128
#define QK2_0 64
#define QK4_NL 32

/* Microscaling FP4 (OCP MX): x = 2^(e - 127) * E2M1(q).  e is an E8M0
   exponent (0xff is NaN in the MX spec, rejected by validation); the
   4-bit codes pack as in q4_0 (value j low nibble, j + 16 high nibble). */
typedef struct {
    uint8_t e;
    uint8_t qs[QK_MXFP4 / 2];
} block_mxfp4;

/* NVIDIA FP4: four sub-blocks of 16 values, each with an unsigned E4M3
   scale d[s]; x = UE4M3(d[s]) * E2M1(q).  Sub-block s owns qs[8s..8s+7],
   value j of the sub-block in the low nibble of qs[8s + j % 8] for
   j < 8, in the high nibble for j >= 8. */
typedef struct {
    uint8_t d[QK_NVFP4 / QK_NVFP4_SUB];
    uint8_t qs[QK_NVFP4 / 2];
} block_nvfp4;

/* 1-bit: x = +d when bit j of the little-endian bit string qs is set,
   else -d. */
typedef struct {
    ggml_fp16_t d;
    uint8_t qs[QK1_0 / 8];
} block_q1_0;

/* 2-bit: x = d * (q - 1), q in 0..3; value j in bits 2 (j % 4) .. +1 of
   qs[j / 4]. */
typedef struct {
    ggml_fp16_t d;
    uint8_t qs[QK2_0 / 4];
} block_q2_0;

/* 4-bit non-linear: x = d * ggml__iq4nl_values[q]; nibbles as in q4_0. */
typedef struct {
    ggml_fp16_t d;
    uint8_t qs[QK4_NL / 2];
} block_iq4_nl;

static_assert(sizeof(block_mxfp4) == 17 && offsetof(block_mxfp4, qs) == 1, "mxfp4 layout");
static_assert(sizeof(block_nvfp4) == 36 && offsetof(block_nvfp4, qs) == 4, "nvfp4 layout");
static_assert(sizeof(block_q1_0) == 18 && offsetof(block_q1_0, qs) == 2, "q1_0 layout");
static_assert(sizeof(block_q2_0) == 18 && offsetof(block_q2_0, qs) == 2, "q2_0 layout");
static_assert(sizeof(block_iq4_nl) == 18 && offsetof(block_iq4_nl, qs) == 2, "iq4_nl layout");

/* E2M1 values doubled (so they are integers), indexed by the 4-bit code:
   sign bit 3, then 0, 0.5, 1, 1.5, 2, 3, 4, 6. */
extern const int8_t ggml__e2m1_doubled[16];
/* IQ4_NL's 16 levels, indexed by the 4-bit code. */
extern const int8_t ggml__iq4nl_values[16];

/* 2^(e - 128): half the E8M0 value, the factor of the doubled E2M1 values
   (exact for every e: 2^-128 and 2^-127 are the subnormals 2^21 and 2^22
   units of 2^-149, the others normal with biased exponent e - 1). */
static inline float ggml__e8m0_half_to_fp32(uint8_t e)
{
    const uint32_t bits = e >= 2 ? (uint32_t) (e - 1) << 23 : UINT32_C(0x00200000) << e;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}
/*
 * Half the value of a UE4M3 scale byte, as ggml reads it: bit 7 (the sign
 * in E4M3) is ignored, except that 0x7f (E4M3's NaN) reads as 0; exponent
 * bits 6..3 with bias 7, mantissa bits 2..0, exponent 0 subnormal
 * (m * 2^-9).  Halved, the factor of the doubled E2M1 values; exact.
 */
static inline float ggml__ue4m3_half_to_fp32(uint8_t d)
{
    const uint32_t exponent = (d >> 3) & 0x0fu, mantissa = d & 0x07u;
    if (d == 0x7f)
        return 0.0f;
    if (exponent == 0)
        return (float) mantissa * (1.0f / 1024.0f);
    /* (1 + m / 8) * 2^(exponent - 7) / 2: binary32 biased exponent exponent + 119 */
    const uint32_t bits = (exponent + 119u) << 23 | mantissa << 20;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

void ggml__quantize_row_mxfp4_ref(const float *restrict x, void *restrict y, int64_t k);
void ggml__quantize_row_nvfp4_ref(const float *restrict x, void *restrict y, int64_t k);
void ggml__quantize_row_q1_0_ref(const float *restrict x, void *restrict y, int64_t k);
void ggml__quantize_row_q2_0_ref(const float *restrict x, void *restrict y, int64_t k);
void ggml__quantize_row_iq4_nl_ref(const float *restrict x, void *restrict y, int64_t k);

void ggml__dequantize_row_mxfp4(const void *restrict x, float *restrict y, int64_t k);
void ggml__dequantize_row_nvfp4(const void *restrict x, float *restrict y, int64_t k);
void ggml__dequantize_row_q1_0(const void *restrict x, float *restrict y, int64_t k);
void ggml__dequantize_row_q2_0(const void *restrict x, float *restrict y, int64_t k);
void ggml__dequantize_row_iq4_nl(const void *restrict x, float *restrict y, int64_t k);

/*
 * ggml_quantize_chunk's quantizer for IQ4_NL: nrows rows of n_per_row
 * values (a multiple of QK4_NL) from x into y, searching each block's
 * scale; imatrix (n_per_row importance weights, or NULL) weighs the error.
 */
void ggml__quantize_rows_iq4_nl(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                                const float *imatrix);
/* ------------------------------------------------------------ K-quants */

/*
 * Super-block formats of QK_K = 256 values (lib/quants-k.c).  Value v of a
 * block belongs to sub-block v / 32 (q4_K) or v / 16 (q6_K, q8_K sums).
 */
#define QK_K 256
#define K_SCALE_BYTES 12

/*
 * 4-bit with per-sub-block scale and minimum: value v of sub-block s is
 *     x = d * sc[s] * q - dmin * mn[s],   q in 0..15,
 * sc and mn 6-bit, packed in scales[12]: for s < 4, sc[s] is the low six
 * bits of scales[s] and mn[s] those of scales[s + 4]; for s >= 4, the low
 * nibble of scales[s + 4] holds the low four bits of sc[s] and its high
 * nibble those of mn[s], while their two high bits are the top two bits of
 * scales[s - 4] (sc) and scales[s] (mn).  qs: each run of 64 values uses
 * 32 bytes, the first 32 values in the low nibbles, the next 32 in the high.
 */
typedef struct {
    ggml_fp16_t d;
    ggml_fp16_t dmin;
    uint8_t scales[K_SCALE_BYTES];
    uint8_t qs[QK_K / 2];
} block_q4_K;

/*
 * 5-bit with per-sub-block scale and minimum: as q4_K with q in 0..31;
 * the low four bits are packed as q4_K's codes, bit 4 of value v is bit
 * v / 32 of qh[v % 32].
 */
typedef struct {
    ggml_fp16_t d;
    ggml_fp16_t dmin;
    uint8_t scales[K_SCALE_BYTES];
    uint8_t qh[QK_K / 8];
    uint8_t qs[QK_K / 2];
} block_q5_K;

/*
 * 6-bit, symmetric: x = d * scales[v / 16] * (q - 32), q in 0..63.  In
 * each half of 128 values (ql + 64 h, qh + 32 h), value 32 p + l (p 0..3,
 * l 0..31) has its low four bits in ql[l + 32 (p & 1)] (low nibble for
 * p < 2, high nibble otherwise) and its two high bits at bit 2 p of qh[l].
 */
typedef struct {
    uint8_t ql[QK_K / 2];
    uint8_t qh[QK_K / 4];
    int8_t scales[QK_K / 16];
    ggml_fp16_t d;
} block_q6_K;

/* 8-bit activations of the K-quants: x = d * q (d in single precision);
   bsums[g] is the sum of the 16 quants of group g. */
typedef struct {
    float d;
    int8_t qs[QK_K];
    int16_t bsums[QK_K / 16];
} block_q8_K;

static_assert(sizeof(block_q4_K) == 144, "block_q4_K must be 144 bytes");
static_assert(sizeof(block_q5_K) == 176, "block_q5_K must be 176 bytes");
static_assert(sizeof(block_q6_K) == 210, "block_q6_K must be 210 bytes");
static_assert(sizeof(block_q8_K) == 292, "block_q8_K must be 292 bytes");
static_assert(offsetof(block_q4_K, dmin) == 2 && offsetof(block_q4_K, scales) == 4 &&
              offsetof(block_q4_K, qs) == 16, "q4_K layout");
static_assert(offsetof(block_q5_K, dmin) == 2 && offsetof(block_q5_K, scales) == 4 &&
              offsetof(block_q5_K, qh) == 16 && offsetof(block_q5_K, qs) == 48, "q5_K layout");
static_assert(offsetof(block_q6_K, qh) == 128 && offsetof(block_q6_K, scales) == 192 &&
              offsetof(block_q6_K, d) == 208, "q6_K layout");
static_assert(offsetof(block_q8_K, qs) == 4 && offsetof(block_q8_K, bsums) == 260, "q8_K layout");

/* The 6-bit scale and minimum of sub-block s (0..7) of a q4_K or q5_K block. */
static inline void ggml__q4_K_scale_min(const uint8_t scales[K_SCALE_BYTES], int s, int *sc, int *mn)
{
    if (s < 4) {
        *sc = scales[s] & 63;
        *mn = scales[s + 4] & 63;
    } else {
        *sc = (scales[s + 4] & 0x0f) | ((scales[s - 4] >> 6) << 4);
        *mn = (scales[s + 4] >> 4) | ((scales[s] >> 6) << 4);
    }
}

/*
 * One block's share of a K-quant dot product with a q8_K block, from the
 * block's exact integer sums (see simd/generic/dot-k.c): every kernel
 * level combines them with these operations in this order, so that the
 * levels agree bit for bit (no floating-point contraction inside).
 */
static inline float ggml__q4_K_block_dot(float dy, float d, float dmin, int32_t scaled, int32_t mins)
{
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif
    /* one rounding a statement: no fused multiply-add at any level */
    const float scale = dy * d, min_scale = dy * dmin;
    const float product = scale * (float) scaled;
    const float min_product = min_scale * (float) mins;
    return product - min_product;
}

/* q4_K's form serves q5_K too. */
static inline float ggml__q6_K_block_dot(float dy, float d, int32_t scaled)
{
    const float scale = dy * d;
    return scale * (float) scaled;
}

/*
 * The conversions of ggml's simple encoders, in single precision and
 * without library calls (lo <= 0 <= hi, small integers): a scaled value v
 * truncated toward zero (ggml__trunc_level) or rounded with halves away
 * from zero as roundf does (ggml__round_level), clamped to [lo, hi]; NaN
 * gives 0.  The rounding: i = trunc(v) and v - i are exact for |v| < 2^23.
 */
static inline float ggml__clamp_level(float v, int lo, int hi)
{
    v = v == v ? v : 0.0f;
    v = v > (float) lo ? v : (float) lo;
    return v < (float) hi ? v : (float) hi;
}

static inline int ggml__trunc_level(float v, int lo, int hi)
{
    return (int) ggml__clamp_level(v, lo, hi);
}

static inline int ggml__round_level(float v, int lo, int hi)
{
    v = ggml__clamp_level(v, lo, hi);
    const int i = (int) v;
    const float fraction = v - (float) i;
    return i + (fraction >= 0.5f) - (fraction <= -0.5f);
}

/*
 * The number of blocks of qk values in a row of k values, or -1 after
 * logging (as func) when k is negative or not a multiple of qk, or a
 * pointer is NULL while there is work to do (lib/quants.c).
 */
int64_t ggml__quant_row_blocks(const void *x, const void *y, int64_t k, int64_t qk, const char *func);

/* Row functions as above.  The weighted quantizers take the importance
   weights of ggml_quantize_chunk (n_per_row values, NULL: none) and
   quantize nrows rows of n_per_row values; they return nothing. */
void ggml__quantize_row_q8_K(const float *restrict x, void *restrict y, int64_t k);
void ggml__quantize_row_q4_K_ref(const float *restrict x, void *restrict y, int64_t k);
void ggml__quantize_row_q5_K_ref(const float *restrict x, void *restrict y, int64_t k);
void ggml__quantize_row_q6_K_ref(const float *restrict x, void *restrict y, int64_t k);
void ggml__quantize_q4_K(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                         const float *imatrix);
void ggml__quantize_q5_K(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                         const float *imatrix);
void ggml__quantize_q6_K(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                         const float *imatrix);
void ggml__dequantize_row_q4_K(const void *restrict x, float *restrict y, int64_t k);
void ggml__dequantize_row_q5_K(const void *restrict x, float *restrict y, int64_t k);
void ggml__dequantize_row_q6_K(const void *restrict x, float *restrict y, int64_t k);
/* Not in the type traits (ggml gives q8_K none); for internal use. */
void ggml__dequantize_row_q8_K(const void *restrict x, float *restrict y, int64_t k);

/* ------------------------------------------------------ q2_K and q3_K */

/*
 * 2-bit with per-sub-block scale and minimum (lib/quants-k23.c): value v
 * of sub-block s = v / 16 is
 *     x = d * (scales[s] & 15) * q - dmin * (scales[s] >> 4),   q in 0..3,
 * in bits 2 p .. 2 p + 1 of qs[32 h + l] for v = 128 h + 32 p + l.
 */
typedef struct {
    uint8_t scales[QK_K / 16];
    uint8_t qs[QK_K / 4];
    ggml_fp16_t d;
    ggml_fp16_t dmin;
} block_q2_K;

/*
 * 3-bit, symmetric (lib/quants-k23.c): value v = 128 h + 32 p + l of
 * sub-block s = v / 16 is x = d * (sc[s] - 32) * q, q in -4..3, where
 * q + 4 has its low two bits at bits 2 p .. 2 p + 1 of qs[32 h + l] and
 * its third bit at bit 4 h + p of hmask[l].  The 6-bit sc[s] has its low
 * four bits in nibble s / 8 of scales[s % 8] and its high two at bits
 * 2 (s / 4) .. + 1 of scales[8 + s % 4].
 */
typedef struct {
    uint8_t hmask[QK_K / 8];
    uint8_t qs[QK_K / 4];
    uint8_t scales[K_SCALE_BYTES];
    ggml_fp16_t d;
} block_q3_K;

static_assert(sizeof(block_q2_K) == 84, "block_q2_K must be 84 bytes");
static_assert(sizeof(block_q3_K) == 110, "block_q3_K must be 110 bytes");
static_assert(offsetof(block_q2_K, qs) == 16 && offsetof(block_q2_K, d) == 80 && offsetof(block_q2_K, dmin) == 82,
              "q2_K layout");
static_assert(offsetof(block_q3_K, qs) == 32 && offsetof(block_q3_K, scales) == 96 &&
              offsetof(block_q3_K, d) == 108, "q3_K layout");

/* The 6-bit stored scale (0..63; the factor is it minus 32) of sub-block s (0..15) of a q3_K block. */
static inline int ggml__q3_K_scale(const uint8_t scales[K_SCALE_BYTES], int s)
{
    return ((scales[s % 8] >> (4 * (s / 8))) & 0x0f) | (((scales[8 + s % 4] >> (2 * (s / 4))) & 3) << 4);
}

/*
 * The shared scale searches of lib/quants-k.c.  An affine K format (q2_K,
 * q4_K, q5_K) has QK_K / sub_len sub-blocks, value = d * sc * q - dmin *
 * mn with q in 0..nmax and sc, mn in 0..scale_max; the super-block scales
 * tried are (largest sub-block fit / scale_max) times each of the first
 * n_d_factors (d) and n_min_factors (dmin) of factors[].  A sub-block's
 * fit starts from fit_steps (>= 2) steps, range / (nmax + 0.6) up to
 * range / (nmax - 0.6), each refined by up to fit_rounds least-squares
 * lines through its levels.  The result:
 */
struct ggml__affine_k {
    float d, dmin;                       /* as stored (binary16 values) */
    int sc[QK_K / 16], mn[QK_K / 16];    /* the first QK_K / sub_len used */
    uint8_t q[QK_K];                     /* codes 0..nmax */
};
struct ggml__affine_k_format {
    int sub_len, nmax, scale_max;
    const float *factors;
    int n_d_factors, n_min_factors;
    int fit_steps, fit_rounds;
};
/* x: QK_K values, w: their positive weights. */
void ggml__quantize_affine_k(const float *x, const float *w, const struct ggml__affine_k_format *f,
                             struct ggml__affine_k *k);

/*
 * A symmetric K format (q3_K, q6_K): 16 sub-blocks of 16 values, value =
 * d * sc * q, q in lo..hi, sc in scale_lo..scale_hi.  Each sub-block's
 * scale is fitted from fit_tries inverse scales that map its largest value
 * to lo - 1/2 (and, with fit_sides 2, to hi + 1/2) times 1 - fit_spread *
 * t / (fit_tries - 1), t = 0 .. fit_tries - 1, each re-rounded once with
 * the fitted scale; d is tried as the largest sub-block scale over
 * scale_lo (and, with d_sides 2, scale_hi) times each of factors[0 ..
 * n_factors - 1], the one with the least error kept; the final codes also
 * try each sub-block's other neighbouring integer scale.  Returns d (as
 * stored), fills sc and the levels q.
 */
struct ggml__symmetric_k_format {
    int lo, hi, scale_lo, scale_hi;
    const float *factors;
    int n_factors;
    int fit_tries;   /* (>= 1) inverse scales a sub-block's fit tries on each side */
    float fit_spread;
    int fit_sides, d_sides;   /* 1: from the lower end only, 2: from both */
};
float ggml__quantize_symmetric_k(const float *x, const float *w, const struct ggml__symmetric_k_format *f,
                                 int sc[QK_K / 16], int8_t q[QK_K]);

/*
 * Quantizes nrows rows of n_per_row values (a multiple of block_len, at
 * most QK_K; else logged as func) into blocks of block_size bytes, one
 * quantize call per block with the block's importance weights (imatrix
 * NULL: all 1; a weight that is not a positive finite number counts
 * almost nothing).  ggml__quantize_k_rows: blocks of QK_K values.
 */
typedef void (*ggml__k_block_quantizer)(const float *x, const float *w, void *y);
void ggml__quantize_block_rows(ggml__k_block_quantizer quantize, int block_len, size_t block_size, const float *x,
                               void *y, int64_t nrows, int64_t n_per_row, const float *imatrix, const char *func);
void ggml__quantize_k_rows(ggml__k_block_quantizer quantize, size_t block_size, const float *x, void *y,
                           int64_t nrows, int64_t n_per_row, const float *imatrix, const char *func);

void ggml__quantize_row_q2_K_ref(const float *restrict x, void *restrict y, int64_t k);
void ggml__quantize_row_q3_K_ref(const float *restrict x, void *restrict y, int64_t k);
void ggml__quantize_q2_K(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                         const float *imatrix);
void ggml__quantize_q3_K(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                         const float *imatrix);
void ggml__dequantize_row_q2_K(const void *restrict x, float *restrict y, int64_t k);
void ggml__dequantize_row_q3_K(const void *restrict x, float *restrict y, int64_t k);

/* ------------------------------------------------- TQ1_0, TQ2_0, IQ4_XS */

/*
 * Super-blocks of QK_K values (lib/quants-tq.c; generic dots in
 * lib/cpu/simd/generic/dot-tq.c), all taking q8_K activations.
 *
 * TQ1_0, ternary: x = d * (t - 1), t a base-3 digit (trit) 0..2.  A byte
 * holds up to five trits as the number N = sum_n t_n 3^(4 - n) (digit 0
 * the most significant) stored as ceil(N * 256 / 243); digit n is then
 * ((uint8_t) (byte * 3^n) * 3) >> 8.  Byte m of qs[0..31] holds values
 * m + 32 n (n 0..4), byte 32 + m of qs[32..47] values 160 + m + 16 n, and
 * qh[j] (j 0..3) values 240 + j + 4 n in its digits 0..3 (digit 4 zero).
 */
typedef struct {
    uint8_t qs[48];
    uint8_t qh[4];
    ggml_fp16_t d;
} block_tq1_0;

/* TQ2_0, ternary in 2-bit codes: x = d * (q - 1), q 0..3 (the quantizer
   writes 0..2); value 128 c + 32 n + m in bits 2n..2n+1 of qs[32 c + m]. */
typedef struct {
    uint8_t qs[QK_K / 4];
    ggml_fp16_t d;
} block_tq2_0;

/*
 * IQ4_XS: eight sub-blocks of 32 values on IQ4_NL's levels, value j of
 * sub-block s: x = d * (ls[s] - 32) * ggml__iq4nl_values[q].  The 6-bit
 * ls[s] has its low four bits in the nibble s % 2 of scales_l[s / 2] (low
 * nibble for even s) and its two high bits at bit 2 s of scales_h.  Codes:
 * qs[16 s + j] holds value j (low nibble) and value j + 16 (high nibble).
 */
typedef struct {
    ggml_fp16_t d;
    uint16_t scales_h;
    uint8_t scales_l[QK_K / 64];
    uint8_t qs[QK_K / 2];
} block_iq4_xs;

static_assert(sizeof(block_tq1_0) == 54 && offsetof(block_tq1_0, qh) == 48 && offsetof(block_tq1_0, d) == 52,
              "tq1_0 layout");
static_assert(sizeof(block_tq2_0) == 66 && offsetof(block_tq2_0, d) == 64, "tq2_0 layout");
static_assert(sizeof(block_iq4_xs) == 136 && offsetof(block_iq4_xs, scales_h) == 2 &&
              offsetof(block_iq4_xs, scales_l) == 4 && offsetof(block_iq4_xs, qs) == 8, "iq4_xs layout");

/* The 6-bit scale ls (0..63) of sub-block s (0..7) of an IQ4_XS block. */
static inline int ggml__iq4_xs_scale(const block_iq4_xs *b, int s)
{
    return ((b->scales_l[s / 2] >> (4 * (s % 2))) & 0x0f) | (((b->scales_h >> (2 * s)) & 3) << 4);
}

void ggml__quantize_row_tq1_0_ref(const float *restrict x, void *restrict y, int64_t k);
void ggml__quantize_row_tq2_0_ref(const float *restrict x, void *restrict y, int64_t k);
void ggml__quantize_row_iq4_xs_ref(const float *restrict x, void *restrict y, int64_t k);
/* IQ4_XS with importance weights (as the K-quants' weighted quantizers). */
void ggml__quantize_iq4_xs(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                           const float *imatrix);
void ggml__dequantize_row_tq1_0(const void *restrict x, float *restrict y, int64_t k);
void ggml__dequantize_row_tq2_0(const void *restrict x, float *restrict y, int64_t k);
void ggml__dequantize_row_iq4_xs(const void *restrict x, float *restrict y, int64_t k);

/* ---------------------------------------------- grids of 8 x 3 levels */

/*
 * IQ1 and IQ2 code a group of 8 values as a point of a grid whose
 * coordinates take one of three levels: the level index (0, 1 or 2) of
 * coordinate j of point p is bits 2 j .. 2 j + 1 of points[p].  Their
 * quantizers round each value to its nearest level and look the vector of
 * level indices up here (lib/quants-grid8.c).
 *
 * map[key], key = sum t[j] 3^j of level indices t: the index of the point
 * t when t is one, else -1 - o where neighbours[o] is the count n of the
 * points at squared level distance at most the nearest point's plus the
 * slack given to the builder, neighbours[o + 1 .. o + n] their indices.
 * A builder's owner keeps it under a lock of its own; read-only once built.
 */
#define GGML__GRID8_KEYS 6561   /* 3^8 */
#define GGML__GRID8_MAX_POINTS 2048

struct ggml__grid8 {
    const uint16_t *points;
    int n_points;
    int32_t map[GGML__GRID8_KEYS];
    uint16_t *neighbours;
};

/* Level index j of a point. */
static inline int ggml__grid8_level(uint16_t point, int j)
{
    return (point >> (2 * j)) & 3;
}

/* The map's key of the level indices t[0..7] (each 0, 1 or 2). */
static inline int ggml__grid8_key(const int t[8])
{
    int key = 0;
    for (int j = 7; j >= 0; j--)
        key = key * 3 + t[j];
    return key;
}

/* Fills g for at most GGML__GRID8_MAX_POINTS points (the map inline, the
   lists allocated); false when memory runs out (nothing to release then).
   Release frees the lists. */
bool ggml__grid8_build(struct ggml__grid8 *g, const uint16_t *points, int n_points, int slack);
void ggml__grid8_release(struct ggml__grid8 *g);

/* The point minimising sum_j e[j][level j] among points[list[0 .. n-1]]
   (among points[0 .. n-1] when list is NULL): its index (the first of
   equals) in *index, its error returned. */
float ggml__grid8_best(const uint16_t *points, const uint16_t *list, int n, const float e[8][4], unsigned *index);

/* ------------------------------------------------------------ IQ1_S, IQ1_M */

/*
 * 1.5625 and 1.75 bits a value over super-blocks of QK_K values
 * (lib/quants-iq1.c; generic dots in lib/cpu/simd/generic/dot-iq1.c).
 * Both code each group of 8 values as a point v of ggml__iq1_grid and a
 * shift sign: x = dl * (v[j] + delta), delta = +-1/8 (IQ1_DELTA_EIGHTHS
 * eighths), dl = d * (2 s + 1) with a 3-bit sub-block scale s.
 */
#define IQ1_GRID_POINTS 2048
#define IQ1_DELTA_EIGHTHS 1

/*
 * IQ1_S: sub-block b (values 32 b .. 32 b + 31) is groups 4 b + l, l 0..3;
 * group g's grid index is qs[g] | (bits 3 l .. 3 l + 2 of qh[b]) << 8; bits
 * 12..14 of qh[b] are s, bit 15 set makes delta -1/8 for the whole
 * sub-block.
 */
typedef struct {
    ggml_fp16_t d;
    uint8_t qs[QK_K / 8];
    uint16_t qh[QK_K / 32];
} block_iq1_s;

/*
 * IQ1_M: group g's grid index is qs[g] | (bits 0..2 of nibble g of qh) << 8
 * (nibble g: the low one of qh[g / 2] for even g, else the high one); bit
 * 3 of that nibble set makes the group's delta -1/8.  Each 16 values h
 * (groups 2 h, 2 h + 1) have their s: bits 3 (h % 4) .. +2 of the
 * little-endian 16-bit word h / 4 of scales.  The binary16 d is spread
 * over the top nibbles of those four words: word w holds bits 4 w .. 4 w + 3
 * of d.
 */
typedef struct {
    uint8_t qs[QK_K / 8];
    uint8_t qh[QK_K / 16];
    uint8_t scales[QK_K / 32];
} block_iq1_m;

static_assert(sizeof(block_iq1_s) == 50 && offsetof(block_iq1_s, qs) == 2 &&
              offsetof(block_iq1_s, qh) == 34, "iq1_s layout");
static_assert(sizeof(block_iq1_m) == 56 && offsetof(block_iq1_m, qh) == 32 &&
              offsetof(block_iq1_m, scales) == 48, "iq1_m layout");

/* Point g of the grid: v[j] + 1 in bits 2 j .. 2 j + 1 of entry g (format
   data of ggml 0.21.0, lib/quants-iq1-grid.h). */
extern const uint16_t ggml__iq1_grid[IQ1_GRID_POINTS];

/* v[j] (-1, 0 or +1) of grid entry code. */
static inline int ggml__iq1_grid_value(uint16_t code, int j)
{
    return (int) ((code >> (2 * j)) & 3) - 1;
}

/* IQ1_M's binary16 block scale, gathered from the top nibbles of scales. */
static inline ggml_fp16_t ggml__iq1_m_scale(const uint8_t scales[QK_K / 32])
{
    return (ggml_fp16_t) ((scales[1] >> 4) | (scales[3] & 0xf0) | (scales[5] >> 4) << 8 | (scales[7] & 0xf0) << 8);
}

/*
 * One block's share of an IQ1 dot product with a q8_K block, from the exact
 * integer total = sum of the block's values times q8 in eighths of d (every
 * kernel level forms the same total and calls this: results agree bit for
 * bit).
 */
static inline float ggml__iq1_block_dot(float dy, float d, int32_t total)
{
    const float scale = dy * d;
    return scale * ((float) total * 0.125f);
}

/*
 * The quantizers' lookup tables (every vector of eight values in
 * {-1, 0, +1} to its grid index or its nearest grid points), built once
 * under a lock of their own: init returns false after logging when memory
 * runs out; free releases them (the next init builds them again).
 */
bool ggml__iq1_tables_init(void);
void ggml__iq1_tables_free(void);

void ggml__dequantize_row_iq1_s(const void *restrict x, float *restrict y, int64_t k);
void ggml__dequantize_row_iq1_m(const void *restrict x, float *restrict y, int64_t k);
/* ggml_quantize_chunk's quantizers (imatrix: n_per_row importance weights,
   NULL: none, which IQ1_S refuses); false after logging one error. */
bool ggml__quantize_iq1_s(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                          const float *imatrix);
bool ggml__quantize_iq1_m(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                          const float *imatrix);

/* ------------------------------------------------------ IQ3_XXS, IQ3_S */

/*
 * 3-bit codebook formats of QK_K = 256 values (lib/quants-iq3.c; generic
 * dots in lib/cpu/simd/generic/dot-iq3.c).  Both cut a block into eight
 * sub-blocks of 32 values and those into groups of four; each group is
 * one point of a codebook of four magnitudes (ggml__iq3_xxs_grid,
 * ggml__iq3_s_grid: byte j of the entry is value j's magnitude), each
 * value has a sign bit, each sub-block a 4-bit scale l.
 */

/*
 * IQ3_XXS: qs[0..63] are the codebook indices, group g (values 4g..4g+3)
 * at qs[g]; qs[64 + 4s .. 64 + 4s + 3] is sub-block s's little-endian
 * word w: bits 7h..7h+6 (h 0..3) give the signs of values 8h..8h+7 of the
 * sub-block (bit j for value 8h + j; value 8h + 7's sign is the parity of
 * the seven bits), bits 28..31 are l.  Value v of sub-block s:
 *     x = (d * (0.5 + l)) * 0.5 * grid[v] (negated when its sign is set).
 */
typedef struct {
    ggml_fp16_t d;
    uint8_t qs[3 * QK_K / 8];
} block_iq3_xxs;

/*
 * IQ3_S: group g's 9-bit codebook index is qs[g] | bit (g % 8) of
 * qh[g / 8] << 8; value v's sign is bit v % 8 of signs[v / 8]; sub-block
 * s's l is the low (s even) or high (s odd) nibble of scales[s / 2].
 *     x = d * (1 + 2 l) * grid[v] (negated when its sign is set).
 */
typedef struct {
    ggml_fp16_t d;
    uint8_t qs[QK_K / 4];
    uint8_t qh[QK_K / 32];
    uint8_t signs[QK_K / 8];
    uint8_t scales[QK_K / 64];
} block_iq3_s;

static_assert(sizeof(block_iq3_xxs) == 98 && offsetof(block_iq3_xxs, qs) == 2, "iq3_xxs layout");
static_assert(sizeof(block_iq3_s) == 110 && offsetof(block_iq3_s, qs) == 2 && offsetof(block_iq3_s, qh) == 66 &&
              offsetof(block_iq3_s, signs) == 74 && offsetof(block_iq3_s, scales) == 106, "iq3_s layout");

/* The codebooks (lib/quants-iq3-grids.h). */
extern const uint32_t ggml__iq3_xxs_grid[256];
extern const uint32_t ggml__iq3_s_grid[512];

/* The eight signs of IQ3_XXS's 7-bit sign field k: bit 7 completes an
   even number of set bits. */
static inline uint8_t ggml__iq3_xxs_signs(uint32_t k)
{
    k &= 0x7f;
    uint32_t parity = k ^ (k >> 4);
    parity ^= parity >> 2;
    parity ^= parity >> 1;
    return (uint8_t) (k | (parity & 1u) << 7);
}

/*
 * The quantizers' lookup tables: built by ggml_quantize_init (or on first
 * use), released by ggml_quantize_free.  init returns false after logging
 * when memory runs out; both may be called any number of times, from any
 * thread.
 */
bool ggml__iq3_tables_init(void);
void ggml__iq3_tables_free(void);

void ggml__dequantize_row_iq3_xxs(const void *restrict x, float *restrict y, int64_t k);
void ggml__dequantize_row_iq3_s(const void *restrict x, float *restrict y, int64_t k);
void ggml__quantize_row_iq3_xxs_ref(const float *restrict x, void *restrict y, int64_t k);
void ggml__quantize_row_iq3_s_ref(const float *restrict x, void *restrict y, int64_t k);
/* ggml_quantize_chunk's quantizers (weights as for the K-quants); false
   after logging when the lookup tables cannot be built. */
bool ggml__quantize_iq3_xxs(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                            const float *imatrix);
bool ggml__quantize_iq3_s(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                          const float *imatrix);

/* ---------------------------------------------------------------- IQ2 */

/*
 * The 2-bit lattice formats IQ2_XXS, IQ2_XS, IQ2_S (lib/quants-iq2.c;
 * generic dots in lib/cpu/simd/generic/dot-iq2.c), super-blocks of QK_K
 * values.  Each group of 8 values is one point of a format-specific list
 * of lattice points (coordinates 8, 25 or 43: ggml__iq2*_points) with a
 * sign per value; each run of 32 values (sub-block) has a 4-bit scale s,
 * or two (one per 16 values) for XS and S:
 *     x = d * (2 s + 1) / 8 * point[j] * (sign j ? -1 : 1).
 * Sign bytes of XXS and XS store seven signs; the eighth is their parity
 * (the number of negatives is even).
 */

/*
 * IQ2_XXS: sub-block b uses qs[4b..4b+3] as two little-endian 32-bit
 * words: the four bytes of the first are the point indices (0..255) of
 * its groups; bits 7g..7g+6 of the second the seven signs of group g,
 * bits 28..31 the scale s.
 */
typedef struct {
    ggml_fp16_t d;
    uint16_t qs[QK_K / 8];
} block_iq2_xxs;

/*
 * IQ2_XS: qs[4b + g] is group g of sub-block b: point index (0..511) in
 * bits 0..8, seven signs in bits 9..15; scales[b] holds s of the first 16
 * values in its low nibble, of the last 16 in its high nibble.
 */
typedef struct {
    ggml_fp16_t d;
    uint16_t qs[QK_K / 8];
    uint8_t scales[QK_K / 32];
} block_iq2_xs;

/*
 * IQ2_S: group g of sub-block b has point index (0..1023)
 * qs[4b + g] | ((qh[b] >> 2g) & 3) << 8 and its eight signs (bit j:
 * value j negative) in qs[32 + 4b + g]; scales as in IQ2_XS.
 */
typedef struct {
    ggml_fp16_t d;
    uint8_t qs[QK_K / 4];
    uint8_t qh[QK_K / 32];
    uint8_t scales[QK_K / 32];
} block_iq2_s;

static_assert(sizeof(block_iq2_xxs) == 66 && offsetof(block_iq2_xxs, qs) == 2, "iq2_xxs layout");
static_assert(sizeof(block_iq2_xs) == 74 && offsetof(block_iq2_xs, qs) == 2 &&
              offsetof(block_iq2_xs, scales) == 66, "iq2_xs layout");
static_assert(sizeof(block_iq2_s) == 82 && offsetof(block_iq2_s, qs) == 2 &&
              offsetof(block_iq2_s, qh) == 66 && offsetof(block_iq2_s, scales) == 74, "iq2_s layout");

/* The lattice points: coordinate j of a point is level code (p >> 2j) & 3
   (lib/iq2-grids.h). */
extern const uint16_t ggml__iq2xxs_points[256];
extern const uint16_t ggml__iq2xs_points[512];
extern const uint16_t ggml__iq2s_points[1024];

/* The magnitude of coordinate j of a lattice point (8, 25 or 43). */
static inline int ggml__iq2_coord(uint16_t point, int j)
{
    static const uint8_t level[4] = { 8, 25, 43, 0 };
    return level[(point >> (2 * j)) & 3];
}

/* The seven sign bits in the low bits of field (higher bits ignored),
   widened to eight signs (the eighth their parity). */
static inline uint8_t ggml__iq2_signs8(unsigned field)
{
    const unsigned seven = field & 0x7fu;
    unsigned parity = seven ^ (seven >> 4);
    parity ^= parity >> 2;
    parity ^= parity >> 1;
    return (uint8_t) (seven | (parity & 1u) << 7);
}

/* Group g (0..31, values 8g..8g+7) of an IQ2 block, unpacked: its point
   (level codes), its eight signs (bit j: value j negative), its scale s. */
struct ggml__iq2_group {
    uint16_t point;
    uint8_t signs;
    uint8_t scale;
};

static inline struct ggml__iq2_group ggml__iq2_xxs_group(const block_iq2_xxs *b, int g)
{
    uint32_t words[2];
    memcpy(words, b->qs + 4 * (g / 4), sizeof words);
    const int l = g % 4;
    struct ggml__iq2_group r = {
        ggml__iq2xxs_points[(words[0] >> (8 * l)) & 0xffu],
        ggml__iq2_signs8(words[1] >> (7 * l)),
        (uint8_t) (words[1] >> 28),
    };
    return r;
}

static inline struct ggml__iq2_group ggml__iq2_xs_group(const block_iq2_xs *b, int g)
{
    struct ggml__iq2_group r = {
        ggml__iq2xs_points[b->qs[g] & 0x1ffu],
        ggml__iq2_signs8((unsigned) b->qs[g] >> 9),
        (uint8_t) ((b->scales[g / 4] >> (4 * ((g % 4) / 2))) & 0x0fu),
    };
    return r;
}

static inline struct ggml__iq2_group ggml__iq2_s_group(const block_iq2_s *b, int g)
{
    struct ggml__iq2_group r = {
        ggml__iq2s_points[b->qs[g] | ((b->qh[g / 4] >> (2 * (g % 4))) & 3u) << 8],
        b->qs[QK_K / 8 + g],
        (uint8_t) ((b->scales[g / 4] >> (4 * ((g % 4) / 2))) & 0x0fu),
    };
    return r;
}

/*
 * One block's share of an IQ2 dot product with a q8_K block, from the
 * exact integer sum_b sum_g (2 s + 1) * sum_j point[j] sign_j q8_j (every
 * kernel level forms the same sum and calls this: results agree bit for
 * bit).
 */
static inline float ggml__iq2_block_dot(float dy, float d, int32_t sum)
{
    const float scale = dy * d;
    const float product = scale * (float) sum;
    return product * 0.125f;
}

void ggml__dequantize_row_iq2_xxs(const void *restrict x, float *restrict y, int64_t k);
void ggml__dequantize_row_iq2_xs(const void *restrict x, float *restrict y, int64_t k);
void ggml__dequantize_row_iq2_s(const void *restrict x, float *restrict y, int64_t k);
/* ggml_quantize_chunk's quantizers: nrows rows of n_per_row values (a
   multiple of QK_K); imatrix: n_per_row importance weights or NULL (IQ2_XXS
   and IQ2_XS are only called with weights, as ggml requires them). */
void ggml__quantize_iq2_xxs(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                            const float *imatrix);
void ggml__quantize_iq2_xs(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                           const float *imatrix);
void ggml__quantize_iq2_s(const float *restrict x, void *restrict y, int64_t nrows, int64_t n_per_row,
                          const float *imatrix);
/* The IQ2 quantizers' lookup tables (struct ggml__grid8) of the format
   type, built once under a lock of their own: init returns false after
   logging when memory runs out (the quantizers then search exhaustively);
   free releases all three (the next init builds them again). */
bool ggml__iq2_tables_init(enum ggml_type type);
void ggml__iq2_tables_free(void);
/* IQ2_S without weights (its from_float_ref, as in ggml). */
void ggml__quantize_row_iq2_s_ref(const float *restrict x, void *restrict y, int64_t k);

#endif
