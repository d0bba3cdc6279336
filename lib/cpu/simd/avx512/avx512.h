/*
 * simd/avx512/avx512.h - the kernels of the AVX-512 level (x86-64 with
 * AVX-512 F, BW, DQ and VL on top of the AVX2 level's AVX2, FMA and F16C;
 * compiled with those flags).  The files named *-vnni.c are compiled with
 * AVX512_VNNI and AVX512_BF16 as well, and table.c takes their kernels
 * only when the CPU has those extensions.  simd/table.c puts the kernels
 * in the table over the AVX2 level's; contracts in simd/kernels.h.
 *
 * Not installed.  Include after config.h and ggml-impl.h.  Call these only
 * through the kernel table: they execute AVX-512 instructions.  Files of
 * the level include "intrin.h", never <immintrin.h> (see there: the
 * emulated test build).
 */
#ifndef GGML_BACKEND_SIMD_AVX512_H
#define GGML_BACKEND_SIMD_AVX512_H

#include "kernels.h"

/* dot.c */
void ggml__avx512_vec_dot_f32(GGML__VEC_DOT_PARAMS);

/* dot-vnni.c (AVX512_VNNI, AVX512_BF16) */
void ggml__avx512_bf16_vec_dot_bf16(GGML__VEC_DOT_PARAMS);

#endif
