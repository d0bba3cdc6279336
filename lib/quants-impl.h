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

#endif
