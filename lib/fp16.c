/*
 * fp16.c - the public fp16 and bf16 conversions, one value or one row.
 *
 * The arithmetic lives in fp16-impl.h; this file only wraps it for callers
 * outside the library and checks row arguments.  The row functions are
 * portable loops: the CPU backend brings vector versions of its own, and
 * these stay the reference they are tested against.
 */
#include "config.h"

#include <inttypes.h>

#include "ggml-impl.h"
#include "fp16-impl.h"

float ggml_fp16_to_fp32(ggml_fp16_t x)
{
    return ggml__fp16_to_fp32(x);
}

ggml_fp16_t ggml_fp32_to_fp16(float x)
{
    return ggml__fp32_to_fp16(x);
}

float ggml_bf16_to_fp32(ggml_bf16_t x)
{
    return ggml__bf16_to_fp32(x);
}

ggml_bf16_t ggml_fp32_to_bf16(float x)
{
    return ggml__fp32_to_bf16(x);
}

/*
 * A row call with n <= 0 does nothing.  With n > 0 both pointers must be
 * valid for n elements; NULL is reported (as the public function) and
 * nothing is written.
 */
static bool row_args_ok(const void *x, const void *y, int64_t n, const char *func)
{
    if (n > 0 && (x == NULL || y == NULL)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "NULL %s with n = %" PRId64,
                     x == NULL ? "source" : "destination", n);
        return false;
    }
    return true;
}

void ggml_fp16_to_fp32_row(const ggml_fp16_t *x, float *y, int64_t n)
{
    if (!row_args_ok(x, y, n, __func__))
        return;
    for (int64_t i = 0; i < n; i++)
        y[i] = ggml__fp16_to_fp32(x[i]);
}

void ggml_fp32_to_fp16_row(const float *x, ggml_fp16_t *y, int64_t n)
{
    if (!row_args_ok(x, y, n, __func__))
        return;
    for (int64_t i = 0; i < n; i++)
        y[i] = ggml__fp32_to_fp16(x[i]);
}

void ggml_bf16_to_fp32_row(const ggml_bf16_t *x, float *y, int64_t n)
{
    if (!row_args_ok(x, y, n, __func__))
        return;
    for (int64_t i = 0; i < n; i++)
        y[i] = ggml__bf16_to_fp32(x[i]);
}

void ggml_fp32_to_bf16_row_ref(const float *x, ggml_bf16_t *y, int64_t n)
{
    if (!row_args_ok(x, y, n, __func__))
        return;
    for (int64_t i = 0; i < n; i++)
        y[i] = ggml__fp32_to_bf16(x[i]);
}

/*
 * Same result as the _ref variant for every input, subnormals included.
 * (Upstream builds made for AVX512-BF16 flush subnormal inputs to zero in
 * this function only; this library keeps one behaviour everywhere.)
 */
void ggml_fp32_to_bf16_row(const float *x, ggml_bf16_t *y, int64_t n)
{
    if (!row_args_ok(x, y, n, __func__))
        return;
    for (int64_t i = 0; i < n; i++)
        y[i] = ggml__fp32_to_bf16(x[i]);
}
