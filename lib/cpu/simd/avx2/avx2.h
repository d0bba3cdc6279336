/*
 * simd/avx2/avx2.h - the kernels of the AVX2 level (x86-64 with AVX2, FMA
 * and F16C; compiled with -mavx2 -mfma -mf16c).  simd/table.c puts them in
 * the table; contracts in simd/kernels.h.
 *
 * Not installed.  Include after config.h and ggml-impl.h.  Call these only
 * through the kernel table: they execute AVX2 instructions.
 */
#ifndef GGML_BACKEND_SIMD_AVX2_H
#define GGML_BACKEND_SIMD_AVX2_H

#include "kernels.h"

/* dot.c */
void ggml__avx2_vec_dot_f32(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_f16(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_bf16(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_q4_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_q4_1_q8_1(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_q5_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_q5_1_q8_1(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_q8_0_q8_0(GGML__VEC_DOT_PARAMS);

/* convert.c */
void ggml__avx2_f16_to_f32(const void *restrict x, float *restrict y, int64_t n);
void ggml__avx2_f32_to_f16(const float *restrict x, void *restrict y, int64_t n);
void ggml__avx2_bf16_to_f32(const void *restrict x, float *restrict y, int64_t n);
void ggml__avx2_f32_to_bf16(const float *restrict x, void *restrict y, int64_t n);
void ggml__avx2_quantize_row_q8_0(const float *restrict x, void *restrict y, int64_t n);
void ggml__avx2_quantize_row_q8_1(const float *restrict x, void *restrict y, int64_t n);

/* transpose.c */
void ggml__avx2_transpose32(int64_t rows, int64_t cols, const void *restrict src, ptrdiff_t src_stride,
                            void *restrict dst, ptrdiff_t dst_stride);
void ggml__avx2_transpose16(int64_t rows, int64_t cols, const void *restrict src, ptrdiff_t src_stride,
                            void *restrict dst, ptrdiff_t dst_stride);

#endif
