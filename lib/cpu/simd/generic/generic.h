/*
 * simd/generic/generic.h - the kernels of the generic level (portable C,
 * compiled with the library's own flags).  simd/table.c puts them in the
 * table; every other level is tested against them.
 *
 * Not installed.  Include after config.h and ggml-impl.h.
 */
#ifndef GGML_BACKEND_SIMD_GENERIC_H
#define GGML_BACKEND_SIMD_GENERIC_H

#include "kernels.h"

/* dot.c: vec_dot entries (contract: kernels.h) */
void ggml__generic_vec_dot_f32(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_f16(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_bf16(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_q4_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_q4_1_q8_1(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_q5_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_q5_1_q8_1(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_q8_0_q8_0(GGML__VEC_DOT_PARAMS);
/* dot-small.c: vec_dot entries of MXFP4, NVFP4, Q1_0, Q2_0, IQ4_NL against Q8_0 */
void ggml__generic_vec_dot_mxfp4_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_nvfp4_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_q1_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_q2_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_iq4_nl_q8_0(GGML__VEC_DOT_PARAMS);
/* dot-k.c: vec_dot entries of the K-quants (against q8_K) */
void ggml__generic_vec_dot_q4_K_q8_K(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_q5_K_q8_K(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_q6_K_q8_K(GGML__VEC_DOT_PARAMS);
/* dot-k23.c: q2_K and q3_K against q8_K */
void ggml__generic_vec_dot_q2_K_q8_K(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_q3_K_q8_K(GGML__VEC_DOT_PARAMS);
/* dot-tq.c: vec_dot entries of TQ1_0, TQ2_0, IQ4_XS (against q8_K) */
void ggml__generic_vec_dot_tq1_0_q8_K(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_tq2_0_q8_K(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_iq4_xs_q8_K(GGML__VEC_DOT_PARAMS);
/* dot-iq1.c: vec_dot entries of IQ1_S and IQ1_M (against q8_K) */
void ggml__generic_vec_dot_iq1_s_q8_K(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_iq1_m_q8_K(GGML__VEC_DOT_PARAMS);
/* dot-iq3.c: vec_dot entries of IQ3_XXS and IQ3_S (against q8_K) */
void ggml__generic_vec_dot_iq3_xxs_q8_K(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_iq3_s_q8_K(GGML__VEC_DOT_PARAMS);
/* dot-iq2.c: vec_dot entries of IQ2_XXS, IQ2_XS, IQ2_S (against q8_K) */
void ggml__generic_vec_dot_iq2_xxs_q8_K(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_iq2_xs_q8_K(GGML__VEC_DOT_PARAMS);
void ggml__generic_vec_dot_iq2_s_q8_K(GGML__VEC_DOT_PARAMS);

/* convert.c: to_float and from_float entries */
void ggml__generic_f16_to_f32(const void *restrict x, float *restrict y, int64_t n);
void ggml__generic_f32_to_f16(const float *restrict x, void *restrict y, int64_t n);
void ggml__generic_bf16_to_f32(const void *restrict x, float *restrict y, int64_t n);
void ggml__generic_f32_to_bf16(const float *restrict x, void *restrict y, int64_t n);
void ggml__generic_f32_to_i32(const float *restrict x, void *restrict y, int64_t n);
void ggml__generic_f32_to_f32(const float *restrict x, void *restrict y, int64_t n);

/* vector.c: axpy entries */
void ggml__generic_axpy_f32(int64_t n, float *restrict acc, const void *restrict x, float w);
void ggml__generic_axpy_f16(int64_t n, float *restrict acc, const void *restrict x, float w);
/* rows.c: soft_max, norm, sum and binary entries */
float ggml__generic_reduce_max(int64_t n, const float *x);
double ggml__generic_softmax_exp_sum(int64_t n, float *y, const float *x, float max);
void ggml__generic_scale(int64_t n, float *y, const float *x, float s);
double ggml__generic_sum(int64_t n, const float *x);
double ggml__generic_sum_sq(int64_t n, const float *x);
double ggml__generic_sum_sq_dev(int64_t n, const float *x, double mean);
void ggml__generic_add(int64_t n, float *z, const float *x, const float *y);
void ggml__generic_sub(int64_t n, float *z, const float *x, const float *y);
void ggml__generic_mul(int64_t n, float *z, const float *x, const float *y);
void ggml__generic_div(int64_t n, float *z, const float *x, const float *y);
void ggml__generic_add_scalar(int64_t n, float *z, const float *x, float s);
void ggml__generic_sub_scalar(int64_t n, float *z, const float *x, float s);
void ggml__generic_mul_scalar(int64_t n, float *z, const float *x, float s);
void ggml__generic_div_scalar(int64_t n, float *z, const float *x, float s);
/* transpose.c: transpose32 and transpose16 entries */
void ggml__generic_transpose32(int64_t rows, int64_t cols, const void *restrict src, ptrdiff_t src_stride,
                               void *restrict dst, ptrdiff_t dst_stride);
void ggml__generic_transpose16(int64_t rows, int64_t cols, const void *restrict src, ptrdiff_t src_stride,
                               void *restrict dst, ptrdiff_t dst_stride);

/* gemm.c: the tile of the tiled F32 product (contract: kernels.h gemm_tile) */
enum { GGML__GENERIC_GEMM_MR = 8, GGML__GENERIC_GEMM_NR = 6, GGML__GENERIC_GEMM_LANES = 4 };
void ggml__generic_gemm_tile_f32(int kc, const float *restrict apack, const float *restrict bpack, float *const *c,
                                 int mr, int nr, bool accumulate);

/* qgemm.c: qgemm_packed_tile entries (contract: kernels.h) */
void ggml__generic_qgemm_packed_tile_q4_0(int nb, const void *a, size_t a_stride, int mr,
                                         const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__generic_qgemm_packed_tile_q8_0(int nb, const void *a, size_t a_stride, int mr,
                                         const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__generic_qgemm_packed_tile_iq4_nl(int nb, const void *a, size_t a_stride, int mr,
                                           const struct ggml__qcolumn *cols, int nr, float *const *c);
/* qgemm.c: qgemm_pack entries (IQ4_NL takes Q4_0's: the same block size) */
void ggml__generic_qgemm_pack_q4_0(int64_t nb, const char *rows, size_t stride, int mr, char *group);
void ggml__generic_qgemm_pack_q8_0(int64_t nb, const char *rows, size_t stride, int mr, char *group);

#endif
