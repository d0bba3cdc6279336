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

/* dot.c (quantized ones: qdot.h) */
void ggml__avx512_vec_dot_f32(GGML__VEC_DOT_PARAMS);
void ggml__avx512_vec_dot_f16(GGML__VEC_DOT_PARAMS);
void ggml__avx512_vec_dot_bf16(GGML__VEC_DOT_PARAMS);
void ggml__avx512_dot_tile_f32(int n, const void *a, size_t bx, int mr, const float *const *b, int nc,
                               float *const *c);
void ggml__avx512_dot_tile_f16(int n, const void *a, size_t bx, int mr, const float *const *b, int nc,
                               float *const *c);
void ggml__avx512_dot_tile_bf16(int n, const void *a, size_t bx, int mr, const float *const *b, int nc,
                                float *const *c);
void ggml__avx512_vec_dot_q4_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__avx512_vec_dot_q4_1_q8_1(GGML__VEC_DOT_PARAMS);
void ggml__avx512_vec_dot_q5_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__avx512_vec_dot_q5_1_q8_1(GGML__VEC_DOT_PARAMS);
void ggml__avx512_vec_dot_q8_0_q8_0(GGML__VEC_DOT_PARAMS);

void ggml__avx512_rows_by_f32_f16(int n, float *s, const void *x, size_t bx, const float *y, int nr);

/* convert.c */
void ggml__avx512_f16_to_f32(const void *restrict x, float *restrict y, int64_t n);
void ggml__avx512_f32_to_f16(const float *restrict x, void *restrict y, int64_t n);
void ggml__avx512_bf16_to_f32(const void *restrict x, float *restrict y, int64_t n);
void ggml__avx512_f32_to_bf16(const float *restrict x, void *restrict y, int64_t n);
void ggml__avx512_quantize_row_q8_0(const float *restrict x, void *restrict y, int64_t n);
void ggml__avx512_quantize_row_q8_1(const float *restrict x, void *restrict y, int64_t n);

/* vector.c */
void ggml__avx512_axpy_f32(int64_t n, float *restrict acc, const void *restrict x, float w);
void ggml__avx512_axpy_f16(int64_t n, float *restrict acc, const void *restrict x, float w);

/* dot-vnni.c (AVX512_VNNI, AVX512_BF16) */
void ggml__avx512_bf16_vec_dot_bf16(GGML__VEC_DOT_PARAMS);
void ggml__avx512_vnni_vec_dot_q4_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__avx512_vnni_vec_dot_q4_1_q8_1(GGML__VEC_DOT_PARAMS);
void ggml__avx512_vnni_vec_dot_q5_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__avx512_vnni_vec_dot_q5_1_q8_1(GGML__VEC_DOT_PARAMS);
void ggml__avx512_vnni_vec_dot_q8_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__avx512_vnni_vec_dot_rows_q4_0(int n, float *s, const void *x, size_t bx, const void *y, int nr);
void ggml__avx512_vnni_vec_dot_rows_q4_1(int n, float *s, const void *x, size_t bx, const void *y, int nr);
void ggml__avx512_vnni_vec_dot_rows_q5_0(int n, float *s, const void *x, size_t bx, const void *y, int nr);
void ggml__avx512_vnni_vec_dot_rows_q5_1(int n, float *s, const void *x, size_t bx, const void *y, int nr);
void ggml__avx512_vnni_vec_dot_rows_q8_0(int n, float *s, const void *x, size_t bx, const void *y, int nr);
/* dot-k-vnni.c (AVX512_VNNI): the q4_K, q5_K and q6_K vec_dot_rows entries */
void ggml__avx512_vnni_vec_dot_rows_q4_K(int n, float *s, const void *x, size_t bx, const void *y, int nr);
void ggml__avx512_vnni_vec_dot_rows_q5_K(int n, float *s, const void *x, size_t bx, const void *y, int nr);
void ggml__avx512_vnni_vec_dot_rows_q6_K(int n, float *s, const void *x, size_t bx, const void *y, int nr);

/*
 * qgemm-k-vnni.c (AVX512_VNNI): the q4_K, q5_K and q6_K qgemm_tile,
 * qgemm_packed_tile, qgemm_pack and qgemm_unpack entries (q8_K columns;
 * layouts of this level)
 */
void ggml__avx512_vnni_qgemm_tile_q4_K(int nb, const void *a, size_t a_stride, int mr,
                                       const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__avx512_vnni_qgemm_packed_tile_q4_K(int nb, const void *a, size_t a_stride, int mr,
                                              const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__avx512_vnni_qgemm_pack_q4_K(int64_t nb, const char *rows, size_t stride, int mr, char *group);
void ggml__avx512_vnni_qgemm_unpack_q4_K(int64_t nb, const char *group, char *rows, size_t stride);
void ggml__avx512_vnni_qgemm_tile_q5_K(int nb, const void *a, size_t a_stride, int mr,
                                       const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__avx512_vnni_qgemm_packed_tile_q5_K(int nb, const void *a, size_t a_stride, int mr,
                                              const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__avx512_vnni_qgemm_pack_q5_K(int64_t nb, const char *rows, size_t stride, int mr, char *group);
void ggml__avx512_vnni_qgemm_unpack_q5_K(int64_t nb, const char *group, char *rows, size_t stride);
void ggml__avx512_vnni_qgemm_tile_q6_K(int nb, const void *a, size_t a_stride, int mr,
                                       const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__avx512_vnni_qgemm_packed_tile_q6_K(int nb, const void *a, size_t a_stride, int mr,
                                              const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__avx512_vnni_qgemm_pack_q6_K(int64_t nb, const char *rows, size_t stride, int mr, char *group);
void ggml__avx512_vnni_qgemm_unpack_q6_K(int64_t nb, const char *group, char *rows, size_t stride);

/* qgemm-vnni.c (AVX512_VNNI): qgemm_tile entries */
void ggml__avx512_vnni_qgemm_tile_q8_0(int nb, const void *a, size_t a_stride, int mr,
                                       const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__avx512_vnni_qgemm_tile_q4_0(int nb, const void *a, size_t a_stride, int mr,
                                       const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__avx512_vnni_qgemm_tile_q5_0(int nb, const void *a, size_t a_stride, int mr,
                                       const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__avx512_vnni_qgemm_tile_iq4_nl(int nb, const void *a, size_t a_stride, int mr,
                                         const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__avx512_vnni_qgemm_packed_tile_q8_0(int nb, const void *a, size_t a_stride, int mr,
                                              const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__avx512_vnni_qgemm_packed_tile_q4_0(int nb, const void *a, size_t a_stride, int mr,
                                              const struct ggml__qcolumn *cols, int nr, float *const *c);
void ggml__avx512_vnni_qgemm_packed_tile_iq4_nl(int nb, const void *a, size_t a_stride, int mr,
                                                const struct ggml__qcolumn *cols, int nr, float *const *c);

/* elementwise.c: unary and glu entries (approximation bounds: simd/vmath-template.h) */
void ggml__avx512_unary_abs(int64_t n, float *y, const float *x);
void ggml__avx512_unary_neg(int64_t n, float *y, const float *x);
void ggml__avx512_unary_relu(int64_t n, float *y, const float *x);
void ggml__avx512_unary_tanh(int64_t n, float *y, const float *x);
void ggml__avx512_unary_sigmoid(int64_t n, float *y, const float *x);
void ggml__avx512_unary_exp(int64_t n, float *y, const float *x);
void ggml__avx512_unary_silu(int64_t n, float *y, const float *x);
void ggml__avx512_unary_gelu(int64_t n, float *y, const float *x);
void ggml__avx512_unary_gelu_quick(int64_t n, float *y, const float *x);
void ggml__avx512_unary_gelu_erf(int64_t n, float *y, const float *x);
/* ... with non-temporal stores (the unary_stream entries) */
void ggml__avx512_unary_stream_abs(int64_t n, float *y, const float *x);
void ggml__avx512_unary_stream_neg(int64_t n, float *y, const float *x);
void ggml__avx512_unary_stream_relu(int64_t n, float *y, const float *x);
void ggml__avx512_unary_stream_tanh(int64_t n, float *y, const float *x);
void ggml__avx512_unary_stream_sigmoid(int64_t n, float *y, const float *x);
void ggml__avx512_unary_stream_exp(int64_t n, float *y, const float *x);
void ggml__avx512_unary_stream_silu(int64_t n, float *y, const float *x);
void ggml__avx512_unary_stream_gelu(int64_t n, float *y, const float *x);
void ggml__avx512_unary_stream_gelu_quick(int64_t n, float *y, const float *x);
void ggml__avx512_unary_stream_gelu_erf(int64_t n, float *y, const float *x);
void ggml__avx512_glu_reglu(int64_t n, float *y, const float *x, const float *g);
void ggml__avx512_glu_swiglu(int64_t n, float *y, const float *x, const float *g);
void ggml__avx512_glu_geglu(int64_t n, float *y, const float *x, const float *g);
void ggml__avx512_glu_geglu_quick(int64_t n, float *y, const float *x, const float *g);
void ggml__avx512_glu_geglu_erf(int64_t n, float *y, const float *x, const float *g);

/* rows.c: soft_max, norm, sum and binary entries */
float ggml__avx512_reduce_max(int64_t n, const float *x);
double ggml__avx512_softmax_exp_sum(int64_t n, float *y, const float *x, float max);
void ggml__avx512_scale(int64_t n, float *y, const float *x, float s);
double ggml__avx512_sum(int64_t n, const float *x);
double ggml__avx512_sum_sq(int64_t n, const float *x);
double ggml__avx512_sum_sq_dev(int64_t n, const float *x, double mean);
void ggml__avx512_add(int64_t n, float *z, const float *x, const float *y);
void ggml__avx512_sub(int64_t n, float *z, const float *x, const float *y);
void ggml__avx512_mul(int64_t n, float *z, const float *x, const float *y);
void ggml__avx512_div(int64_t n, float *z, const float *x, const float *y);
void ggml__avx512_add_scalar(int64_t n, float *z, const float *x, float s);
void ggml__avx512_sub_scalar(int64_t n, float *z, const float *x, float s);
void ggml__avx512_mul_scalar(int64_t n, float *z, const float *x, float s);
void ggml__avx512_div_scalar(int64_t n, float *z, const float *x, float s);
/* ... the binary_stream entries (non-temporal stores) */
void ggml__avx512_add_stream(int64_t n, float *z, const float *x, const float *y);
void ggml__avx512_sub_stream(int64_t n, float *z, const float *x, const float *y);
void ggml__avx512_mul_stream(int64_t n, float *z, const float *x, const float *y);
void ggml__avx512_div_stream(int64_t n, float *z, const float *x, const float *y);

/* transpose.c (transpose16: the AVX2 level's, see there) */
void ggml__avx512_transpose32(int64_t rows, int64_t cols, const void *restrict src, ptrdiff_t src_stride,
                              void *restrict dst, ptrdiff_t dst_stride);

/* gemm-bf16.c (AVX512_BF16): the tile of the tiled product in BF16 pairs (kernels.h gemm_bf16_tile) */
void ggml__avx512_bf16_gemm_tile(int kp, const uint32_t *restrict apack, const uint32_t *restrict bpack,
                                 float *const *c, int mr, int nr, bool accumulate);

/* gemm.c: the tile of the tiled F32 product (contract: kernels.h gemm_tile) */
enum { GGML__AVX512_GEMM_MR = 32, GGML__AVX512_GEMM_NR = 12, GGML__AVX512_GEMM_LANES = 1 };
void ggml__avx512_gemm_tile_f32(int kc, const float *restrict apack, const float *restrict bpack, float *const *c,
                                int mr, int nr, bool accumulate);

#endif
