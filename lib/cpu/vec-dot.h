/*
 * vec-dot.h - dot products of the CPU backend, for kernels that need them
 * without a trip through ggml_get_type_traits_cpu().
 *
 * Not installed.  Include after config.h and ggml-impl.h.  The functions
 * are the vec_dot members of the CPU type traits of F32, F16 and BF16
 * (lib/cpu/vec-dot.c), with the ggml_vec_dot_t signature:
 *
 *   *s = sum of x[i] * y[i] for i < n, both rows of the named type,
 *
 * computed in single precision (several partial sums, added at the end).
 * n >= 0; nrc must be 1 (the traits' nrows), and bs, bx, by are then
 * unused.  x and y may be any alignment.
 */
#ifndef GGML_BACKEND_CPU_VEC_DOT_H
#define GGML_BACKEND_CPU_VEC_DOT_H

#include <stddef.h>

#include "ggml-cpu.h"

void ggml__vec_dot_f32(int n, float *restrict s, size_t bs, const void *restrict x, size_t bx,
                       const void *restrict y, size_t by, int nrc);
void ggml__vec_dot_f16(int n, float *restrict s, size_t bs, const void *restrict x, size_t bx,
                       const void *restrict y, size_t by, int nrc);
void ggml__vec_dot_bf16(int n, float *restrict s, size_t bs, const void *restrict x, size_t bx,
                        const void *restrict y, size_t by, int nrc);

#endif
