/*
 * simd/neon/neon.h - the kernels of the NEON level (AArch64 Advanced SIMD,
 * baseline ARMv8-A flags).  The quantized dot products exist twice: with
 * base NEON widening multiplies (dot.c) and with the ARMv8.2 dot-product
 * instructions (dot-dotprod.c, compiled with +dotprod); simd/table.c
 * chooses the second when the CPU has them.  Contracts in simd/kernels.h.
 *
 * Not installed.  Include after config.h and ggml-impl.h.  Call these only
 * through the kernel table: the dotprod entries execute instructions that
 * a plain ARMv8.0 CPU lacks.
 */
#ifndef GGML_BACKEND_SIMD_NEON_H
#define GGML_BACKEND_SIMD_NEON_H

#include "kernels.h"

/* Every vec_dot here computes one dot product (nrc 1): the strides of
   further rows are unused. */
#define ONE_ROW_ONLY() ((void) bs, (void) bx, (void) by, (void) nrc)

/* dot.c */
void ggml__neon_vec_dot_f32(GGML__VEC_DOT_PARAMS);
void ggml__neon_vec_dot_f16(GGML__VEC_DOT_PARAMS);
void ggml__neon_vec_dot_bf16(GGML__VEC_DOT_PARAMS);
void ggml__neon_vec_dot_q4_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__neon_vec_dot_q4_1_q8_1(GGML__VEC_DOT_PARAMS);
void ggml__neon_vec_dot_q5_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__neon_vec_dot_q5_1_q8_1(GGML__VEC_DOT_PARAMS);
void ggml__neon_vec_dot_q8_0_q8_0(GGML__VEC_DOT_PARAMS);

/* gemm.c: the tile of the tiled F32 product (contract: kernels.h gemm_tile) */
enum { GGML__NEON_GEMM_MR = 16, GGML__NEON_GEMM_NR = 6, GGML__NEON_GEMM_LANES = 1 };
void ggml__neon_gemm_tile_f32(int kc, const float *restrict apack, const float *restrict bpack, float *const *c,
                              int mr, int nr, bool accumulate);

/* dot-dotprod.c: the same quantized products with SDOT (needs caps->dotprod) */
void ggml__neon_dotprod_vec_dot_q4_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__neon_dotprod_vec_dot_q4_1_q8_1(GGML__VEC_DOT_PARAMS);
void ggml__neon_dotprod_vec_dot_q5_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__neon_dotprod_vec_dot_q5_1_q8_1(GGML__VEC_DOT_PARAMS);
void ggml__neon_dotprod_vec_dot_q8_0_q8_0(GGML__VEC_DOT_PARAMS);

/* qgemm-dotprod.c: qgemm_tile and qgemm_packed_tile entries with SDOT (needs caps->dotprod) */
void ggml__neon_dotprod_qgemm_tile_q4_0(int nb, const void *a, size_t a_stride, int mr,
                                        const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__neon_dotprod_qgemm_tile_q8_0(int nb, const void *a, size_t a_stride, int mr,
                                        const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__neon_dotprod_qgemm_tile_iq4_nl(int nb, const void *a, size_t a_stride, int mr,
                                          const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__neon_dotprod_qgemm_packed_tile_q4_0(int nb, const void *a, size_t a_stride, int mr,
                                               const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__neon_dotprod_qgemm_packed_tile_q8_0(int nb, const void *a, size_t a_stride, int mr,
                                               const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__neon_dotprod_qgemm_packed_tile_iq4_nl(int nb, const void *a, size_t a_stride, int mr,
                                                 const struct ggml__qcolumn *cols, int nr, float *const *c);

/* convert.c */
void ggml__neon_f16_to_f32(const void *restrict x, float *restrict y, int64_t n);
void ggml__neon_f32_to_f16(const float *restrict x, void *restrict y, int64_t n);
void ggml__neon_bf16_to_f32(const void *restrict x, float *restrict y, int64_t n);
void ggml__neon_f32_to_bf16(const float *restrict x, void *restrict y, int64_t n);
void ggml__neon_quantize_row_q8_0(const float *restrict x, void *restrict vy, int64_t n);
void ggml__neon_quantize_row_q8_1(const float *restrict x, void *restrict vy, int64_t n);

#endif
