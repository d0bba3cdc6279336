/*
 * simd/sse2/sse2.h - the kernels of the SSE2 level: the x86-64 baseline,
 * which every x86-64 processor has (compiled with -msse2 only).
 * simd/table.c puts them in the table; contracts in simd/kernels.h.
 *
 * Not installed.  Include after config.h and ggml-impl.h.
 */
#ifndef GGML_BACKEND_SIMD_SSE2_H
#define GGML_BACKEND_SIMD_SSE2_H

#include "kernels.h"

/* dot.c: F16 rows and the Q8_0 dot product */
void ggml__sse2_vec_dot_f16(GGML__VEC_DOT_PARAMS);
void ggml__sse2_vec_dot_q8_0_q8_0(GGML__VEC_DOT_PARAMS);
void ggml__sse2_rows_by_f32_f16(int n, float *s, const void *x, size_t bx, const float *y, int nr);
void ggml__sse2_f16_to_f32(const void *restrict x, float *restrict y, int64_t n);

/* elementwise.c: unary and glu entries (all but those of gelu_erf) */
void ggml__sse2_unary_abs(int64_t n, float *y, const float *x);
void ggml__sse2_unary_neg(int64_t n, float *y, const float *x);
void ggml__sse2_unary_relu(int64_t n, float *y, const float *x);
void ggml__sse2_unary_tanh(int64_t n, float *y, const float *x);
void ggml__sse2_unary_exp(int64_t n, float *y, const float *x);
void ggml__sse2_unary_sigmoid(int64_t n, float *y, const float *x);
void ggml__sse2_unary_silu(int64_t n, float *y, const float *x);
void ggml__sse2_unary_gelu(int64_t n, float *y, const float *x);
void ggml__sse2_unary_gelu_quick(int64_t n, float *y, const float *x);
void ggml__sse2_unary_stream_abs(int64_t n, float *y, const float *x);
void ggml__sse2_unary_stream_neg(int64_t n, float *y, const float *x);
void ggml__sse2_unary_stream_relu(int64_t n, float *y, const float *x);
void ggml__sse2_unary_stream_tanh(int64_t n, float *y, const float *x);
void ggml__sse2_unary_stream_exp(int64_t n, float *y, const float *x);
void ggml__sse2_unary_stream_sigmoid(int64_t n, float *y, const float *x);
void ggml__sse2_unary_stream_silu(int64_t n, float *y, const float *x);
void ggml__sse2_unary_stream_gelu(int64_t n, float *y, const float *x);
void ggml__sse2_unary_stream_gelu_quick(int64_t n, float *y, const float *x);
void ggml__sse2_glu_reglu(int64_t n, float *y, const float *x, const float *g);
void ggml__sse2_glu_swiglu(int64_t n, float *y, const float *x, const float *g);
void ggml__sse2_glu_geglu(int64_t n, float *y, const float *x, const float *g);
void ggml__sse2_glu_geglu_quick(int64_t n, float *y, const float *x, const float *g);

/* rows.c: SOFT_MAX's rows, scale, the streaming forms of the binary ops */
float ggml__sse2_reduce_max(int64_t n, const float *x);
double ggml__sse2_softmax_exp_sum(int64_t n, float *y, const float *x, float max);
void ggml__sse2_scale(int64_t n, float *y, const float *x, float s);
void ggml__sse2_add_stream(int64_t n, float *z, const float *x, const float *y);
void ggml__sse2_sub_stream(int64_t n, float *z, const float *x, const float *y);
void ggml__sse2_mul_stream(int64_t n, float *z, const float *x, const float *y);
void ggml__sse2_div_stream(int64_t n, float *z, const float *x, const float *y);

#endif
