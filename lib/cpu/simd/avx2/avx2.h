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

/* dot-vnni.c (AVX-VNNI): vec_dot_rows for Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 */
void ggml__avx2_vnni_vec_dot_rows_q4_0(int n, float *s, const void *x, size_t bx, const void *y, int nr);
void ggml__avx2_vnni_vec_dot_rows_q4_1(int n, float *s, const void *x, size_t bx, const void *y, int nr);
void ggml__avx2_vnni_vec_dot_rows_q5_0(int n, float *s, const void *x, size_t bx, const void *y, int nr);
void ggml__avx2_vnni_vec_dot_rows_q5_1(int n, float *s, const void *x, size_t bx, const void *y, int nr);
void ggml__avx2_vnni_vec_dot_rows_q8_0(int n, float *s, const void *x, size_t bx, const void *y, int nr);
/* qgemm-vnni.c (AVX-VNNI): the Q4_0 and Q8_0 qgemm_tile and qgemm_packed_tile */
void ggml__avx2_vnni_qgemm_tile_q4_0(int nb, const void *a, size_t a_stride, int mr, const struct ggml__qcolumn *cols,
                                     int nr, float *const *c);
void ggml__avx2_vnni_qgemm_packed_tile_q4_0(int nb, const void *a, size_t a_stride, int mr,
                                            const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__avx2_vnni_qgemm_tile_q8_0(int nb, const void *a, size_t a_stride, int mr, const struct ggml__qcolumn *cols,
                                     int nr, float *const *c);
void ggml__avx2_vnni_qgemm_packed_tile_q8_0(int nb, const void *a, size_t a_stride, int mr,
                                            const struct ggml__qcolumn *cols, int nr, float *const *c);

/* qgemm.c: qgemm_tile and qgemm_packed_tile entries for Q4_0 (maddubs) and Q8_0 (16-bit products), no VNNI */
void ggml__avx2_qgemm_tile_q4_0(int nb, const void *a, size_t a_stride, int mr, const struct ggml__qcolumn *cols,
                                int nr, float *const *c);
void ggml__avx2_qgemm_pack_q4_0(int64_t nb, const char *rows, size_t stride, int mr, char *group);
void ggml__avx2_qgemm_pack_q8_0(int64_t nb, const char *rows, size_t stride, int mr, char *group);
void ggml__avx2_qgemm_packed_tile_q4_0(int nb, const void *a, size_t a_stride, int mr,
                                       const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__avx2_qgemm_tile_q8_0(int nb, const void *a, size_t a_stride, int mr, const struct ggml__qcolumn *cols,
                                int nr, float *const *c);
void ggml__avx2_qgemm_packed_tile_q8_0(int nb, const void *a, size_t a_stride, int mr,
                                       const struct ggml__qcolumn *cols, int nr, float *const *c);
/* dot.c */
void ggml__avx2_vec_dot_f32(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_f16(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_bf16(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_q4_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_q4_1_q8_1(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_q5_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_q5_1_q8_1(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_q8_0_q8_0(GGML__VEC_DOT_PARAMS);
/* dot-small.c: the generic level's bits */
void ggml__avx2_vec_dot_mxfp4_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_iq4_nl_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_nvfp4_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_q1_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_q2_0_q8_0(GGML__VEC_DOT_PARAMS);
/* dot-k.c: the K-quants against q8_K (the generic results bit for bit) */
void ggml__avx2_vec_dot_q4_K_q8_K(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_q5_K_q8_K(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_q6_K_q8_K(GGML__VEC_DOT_PARAMS);
/* dot-k23.c: q2_K and q3_K against q8_K (the generic results bit for bit) */
void ggml__avx2_vec_dot_q2_K_q8_K(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_q3_K_q8_K(GGML__VEC_DOT_PARAMS);
/* dot-tq.c: TQ1_0, TQ2_0, IQ4_XS against q8_K (the generic results bit for bit) */
void ggml__avx2_vec_dot_tq1_0_q8_K(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_tq2_0_q8_K(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_iq4_xs_q8_K(GGML__VEC_DOT_PARAMS);
/* dot-iq3.c: IQ3_XXS and IQ3_S against q8_K (the generic results bit for bit) */
void ggml__avx2_vec_dot_iq3_xxs_q8_K(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_iq3_s_q8_K(GGML__VEC_DOT_PARAMS);
/* dot-iq1.c: IQ1_S and IQ1_M against q8_K (the generic results bit for bit) */
void ggml__avx2_vec_dot_iq1_s_q8_K(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_iq1_m_q8_K(GGML__VEC_DOT_PARAMS);
/* dot-iq2.c: IQ2_XXS, IQ2_XS and IQ2_S against q8_K (the generic results bit for bit) */
void ggml__avx2_vec_dot_iq2_xxs_q8_K(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_iq2_xs_q8_K(GGML__VEC_DOT_PARAMS);
void ggml__avx2_vec_dot_iq2_s_q8_K(GGML__VEC_DOT_PARAMS);

void ggml__avx2_vec_dot_rows_f32(int n, float *s, const void *x, size_t bx, const void *y, int nr);
void ggml__avx2_rows_by_f32_f16(int n, float *s, const void *x, size_t bx, const float *y, int nr);
void ggml__avx2_vec_dot_rows_bf16(int n, float *s, const void *x, size_t bx, const void *y, int nr);
void ggml__avx2_vec_dot_rows_q4_0(int n, float *s, const void *x, size_t bx, const void *y, int nr);
void ggml__avx2_vec_dot_rows_q4_1(int n, float *s, const void *x, size_t bx, const void *y, int nr);
void ggml__avx2_vec_dot_rows_q5_0(int n, float *s, const void *x, size_t bx, const void *y, int nr);
void ggml__avx2_vec_dot_rows_q5_1(int n, float *s, const void *x, size_t bx, const void *y, int nr);
void ggml__avx2_vec_dot_rows_q8_0(int n, float *s, const void *x, size_t bx, const void *y, int nr);
/* dot-k.c */
void ggml__avx2_vec_dot_rows_q4_K(int n, float *s, const void *x, size_t bx, const void *y, int nr);
void ggml__avx2_vec_dot_rows_q5_K(int n, float *s, const void *x, size_t bx, const void *y, int nr);
void ggml__avx2_vec_dot_rows_q6_K(int n, float *s, const void *x, size_t bx, const void *y, int nr);

/* convert.c */
void ggml__avx2_f16_to_f32(const void *restrict x, float *restrict y, int64_t n);
void ggml__avx2_f32_to_f16(const float *restrict x, void *restrict y, int64_t n);
void ggml__avx2_bf16_to_f32(const void *restrict x, float *restrict y, int64_t n);
void ggml__avx2_f32_to_bf16(const float *restrict x, void *restrict y, int64_t n);
void ggml__avx2_quantize_row_q8_0(const float *restrict x, void *restrict y, int64_t n);
void ggml__avx2_quantize_row_q8_1(const float *restrict x, void *restrict y, int64_t n);
void ggml__avx2_quantize_row_q4_0(const float *restrict x, void *restrict y, int64_t n);
void ggml__avx2_quantize_row_q4_1(const float *restrict x, void *restrict y, int64_t n);
void ggml__avx2_quantize_row_q5_0(const float *restrict x, void *restrict y, int64_t n);
void ggml__avx2_quantize_row_q5_1(const float *restrict x, void *restrict y, int64_t n);

/* vector.c */
void ggml__avx2_axpy_f32(int64_t n, float *restrict acc, const void *restrict x, float w);
void ggml__avx2_axpy_f16(int64_t n, float *restrict acc, const void *restrict x, float w);
/* elementwise.c: unary and glu entries (approximation bounds there) */
void ggml__avx2_unary_abs(int64_t n, float *y, const float *x);
void ggml__avx2_unary_neg(int64_t n, float *y, const float *x);
void ggml__avx2_unary_relu(int64_t n, float *y, const float *x);
void ggml__avx2_unary_tanh(int64_t n, float *y, const float *x);
void ggml__avx2_unary_sigmoid(int64_t n, float *y, const float *x);
void ggml__avx2_unary_exp(int64_t n, float *y, const float *x);
void ggml__avx2_unary_silu(int64_t n, float *y, const float *x);
void ggml__avx2_unary_gelu(int64_t n, float *y, const float *x);
void ggml__avx2_unary_gelu_quick(int64_t n, float *y, const float *x);
void ggml__avx2_unary_gelu_erf(int64_t n, float *y, const float *x);
/* ... with non-temporal stores (the unary_stream entries) */
void ggml__avx2_unary_stream_abs(int64_t n, float *y, const float *x);
void ggml__avx2_unary_stream_neg(int64_t n, float *y, const float *x);
void ggml__avx2_unary_stream_relu(int64_t n, float *y, const float *x);
void ggml__avx2_unary_stream_tanh(int64_t n, float *y, const float *x);
void ggml__avx2_unary_stream_sigmoid(int64_t n, float *y, const float *x);
void ggml__avx2_unary_stream_exp(int64_t n, float *y, const float *x);
void ggml__avx2_unary_stream_silu(int64_t n, float *y, const float *x);
void ggml__avx2_unary_stream_gelu(int64_t n, float *y, const float *x);
void ggml__avx2_unary_stream_gelu_quick(int64_t n, float *y, const float *x);
void ggml__avx2_unary_stream_gelu_erf(int64_t n, float *y, const float *x);
void ggml__avx2_glu_reglu(int64_t n, float *y, const float *x, const float *g);
void ggml__avx2_glu_swiglu(int64_t n, float *y, const float *x, const float *g);
void ggml__avx2_glu_geglu(int64_t n, float *y, const float *x, const float *g);
void ggml__avx2_glu_geglu_quick(int64_t n, float *y, const float *x, const float *g);
void ggml__avx2_glu_geglu_erf(int64_t n, float *y, const float *x, const float *g);

/* rows.c: soft_max, norm, sum and binary entries */
float ggml__avx2_reduce_max(int64_t n, const float *x);
double ggml__avx2_softmax_exp_sum(int64_t n, float *y, const float *x, float max);
void ggml__avx2_scale(int64_t n, float *y, const float *x, float s);
double ggml__avx2_sum(int64_t n, const float *x);
double ggml__avx2_sum_sq(int64_t n, const float *x);
double ggml__avx2_sum_sq_dev(int64_t n, const float *x, double mean);
void ggml__avx2_add(int64_t n, float *z, const float *x, const float *y);
void ggml__avx2_sub(int64_t n, float *z, const float *x, const float *y);
void ggml__avx2_mul(int64_t n, float *z, const float *x, const float *y);
void ggml__avx2_div(int64_t n, float *z, const float *x, const float *y);
void ggml__avx2_add_scalar(int64_t n, float *z, const float *x, float s);
void ggml__avx2_sub_scalar(int64_t n, float *z, const float *x, float s);
void ggml__avx2_mul_scalar(int64_t n, float *z, const float *x, float s);
void ggml__avx2_div_scalar(int64_t n, float *z, const float *x, float s);
/* ... the binary_stream entries (non-temporal stores) */
void ggml__avx2_add_stream(int64_t n, float *z, const float *x, const float *y);
void ggml__avx2_sub_stream(int64_t n, float *z, const float *x, const float *y);
void ggml__avx2_mul_stream(int64_t n, float *z, const float *x, const float *y);
void ggml__avx2_div_stream(int64_t n, float *z, const float *x, const float *y);
/* transpose.c */
void ggml__avx2_transpose32(int64_t rows, int64_t cols, const void *restrict src, ptrdiff_t src_stride,
                            void *restrict dst, ptrdiff_t dst_stride);
void ggml__avx2_transpose16(int64_t rows, int64_t cols, const void *restrict src, ptrdiff_t src_stride,
                            void *restrict dst, ptrdiff_t dst_stride);

/* gemm.c: the tile of the tiled F32 product (contract: kernels.h gemm_tile) */
enum { GGML__AVX2_GEMM_MR = 16, GGML__AVX2_GEMM_NR = 6, GGML__AVX2_GEMM_LANES = 1 };
void ggml__avx2_gemm_tile_f32(int kc, const float *restrict apack, const float *restrict bpack, float *const *c,
                              int mr, int nr, bool accumulate);

#endif
