/*
 * simd/block-formats.h - facts about the 32-value block formats that the
 * integer kernels of every level read (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
 * IQ4_NL): their size, whether they carry a minimum, and the bias that
 * makes their weights' codes unsigned.  Each function is meant to be
 * called with a constant type, so that it folds away.
 */
#ifndef GGML_BACKEND_CPU_SIMD_BLOCK_FORMATS_H
#define GGML_BACKEND_CPU_SIMD_BLOCK_FORMATS_H

#include <stdbool.h>
#include <stddef.h>

#include "ggml.h"
#include "quants-impl.h"

/* Bytes of a block of type t (one of the types above). */
static inline __attribute__((always_inline)) size_t ggml__small_block_bytes(enum ggml_type t)
{
    switch (t) {
    case GGML_TYPE_Q4_0:   return sizeof(block_q4_0);
    case GGML_TYPE_Q4_1:   return sizeof(block_q4_1);
    case GGML_TYPE_Q5_0:   return sizeof(block_q5_0);
    case GGML_TYPE_Q5_1:   return sizeof(block_q5_1);
    case GGML_TYPE_IQ4_NL: return sizeof(block_iq4_nl);
    default:               return sizeof(block_q8_0);
    }
}

/* True for the formats with a minimum m after the scale d (weights d * u + m). */
static inline __attribute__((always_inline)) bool ggml__block_has_minimum(enum ggml_type t)
{
    return t == GGML_TYPE_Q4_1 || t == GGML_TYPE_Q5_1;
}

/*
 * The bias b that makes a block's weights unsigned codes u = w + b, as
 * the integer kernels multiply them: 8 for Q4_0's nibbles, 16 for Q5_0's
 * five bits, 128 for Q8_0's bytes (their sign bit flipped) and IQ4_NL's
 * levels; 0 for the formats with a minimum, whose codes are unsigned
 * already.
 */
static inline __attribute__((always_inline)) int ggml__code_bias(enum ggml_type t)
{
    switch (t) {
    case GGML_TYPE_Q4_0:   return 8;
    case GGML_TYPE_Q5_0:   return 16;
    case GGML_TYPE_Q8_0:
    case GGML_TYPE_IQ4_NL: return 128;
    default:               return 0;
    }
}

#endif
