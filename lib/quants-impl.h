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
/* IQ2_S without weights (its from_float_ref, as in ggml). */
void ggml__quantize_row_iq2_s_ref(const float *restrict x, void *restrict y, int64_t k);

#endif
