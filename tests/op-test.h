/*
 * op-test.h - shared harness for the op tests (include after tap.h).
 *
 * An op test builds its inputs in a context that holds their data, fills
 * them with seeded random values, builds the op, computes it on the CPU
 * engine for 1..4 threads with and without the reference kernels, and
 * compares every result with a double-precision reference the test computes
 * itself from the inputs (read back through optest_get).  The comparison is
 * the normalised mean squared error
 *     NMSE = sum (out - ref)^2 / sum ref^2
 * against a per-op threshold.
 */
#ifndef GGML_BACKEND_TESTS_OP_TEST_H
#define GGML_BACKEND_TESTS_OP_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-cpu.h"

/* ------------------------------------------------------------- randomness */

/* xorshift64*: deterministic across platforms. */
static inline uint64_t optest_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in [lo, hi). */
static inline double optest_uniform(uint64_t *state, double lo, double hi)
{
    return lo + (hi - lo) * (double) (optest_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* ------------------------------------------------------------ element I/O */

/* Byte address of element (i0, i1, i2, i3), for types with 1-element blocks. */
static inline char *optest_elem(const struct ggml_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    return (char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

/*
 * Element (i0, i1, i2, i3) as a double: F32, F16, BF16, F64, I8, I16, I32,
 * I64 directly; quantized types by dequantizing the block that holds it.
 */
static inline double optest_get(const struct ggml_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    switch (t->type) {
    case GGML_TYPE_F32:  return *(const float *) optest_elem(t, i0, i1, i2, i3);
    case GGML_TYPE_F16:  return ggml_fp16_to_fp32(*(const ggml_fp16_t *) optest_elem(t, i0, i1, i2, i3));
    case GGML_TYPE_BF16: return ggml_bf16_to_fp32(*(const ggml_bf16_t *) optest_elem(t, i0, i1, i2, i3));
    case GGML_TYPE_F64:  return *(const double *) optest_elem(t, i0, i1, i2, i3);
    case GGML_TYPE_I8:   return *(const int8_t *) optest_elem(t, i0, i1, i2, i3);
    case GGML_TYPE_I16:  return *(const int16_t *) optest_elem(t, i0, i1, i2, i3);
    case GGML_TYPE_I32:  return *(const int32_t *) optest_elem(t, i0, i1, i2, i3);
    case GGML_TYPE_I64:  return (double) *(const int64_t *) optest_elem(t, i0, i1, i2, i3);
    default: {
        const int64_t blck = ggml_blck_size(t->type);
        const struct ggml_type_traits *tr = ggml_get_type_traits(t->type);
        float block[256];
        const char *p = (const char *) t->data + (i0 / blck) * t->nb[0] + i1 * t->nb[1] +
                        i2 * t->nb[2] + i3 * t->nb[3];
        if (tr->to_float == NULL || blck > 256)
            return NAN;
        tr->to_float(p, block, blck);
        return block[i0 % blck];
    }
    }
}

/* Stores v into element (i0, i1, i2, i3) of a non-quantized tensor. */
static inline void optest_set(struct ggml_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, double v)
{
    char *p = optest_elem(t, i0, i1, i2, i3);
    switch (t->type) {
    case GGML_TYPE_F32:  *(float *) p = (float) v; break;
    case GGML_TYPE_F16:  *(ggml_fp16_t *) p = ggml_fp32_to_fp16((float) v); break;
    case GGML_TYPE_BF16: *(ggml_bf16_t *) p = ggml_fp32_to_bf16((float) v); break;
    case GGML_TYPE_F64:  *(double *) p = v; break;
    case GGML_TYPE_I8:   *(int8_t *) p = (int8_t) v; break;
    case GGML_TYPE_I16:  *(int16_t *) p = (int16_t) v; break;
    case GGML_TYPE_I32:  *(int32_t *) p = (int32_t) v; break;
    case GGML_TYPE_I64:  *(int64_t *) p = (int64_t) v; break;
    default: break;
    }
}

/*
 * ggml_quantize_chunk of nrows rows of n_per_row values from src into dst,
 * with importance weights 1 for the types that require weights.
 */
static inline void optest_quantize(enum ggml_type type, const float *src, void *dst, int64_t nrows,
                                   int64_t n_per_row)
{
    float *ones = NULL;
    if (ggml_quantize_requires_imatrix(type)) {
        ones = malloc((size_t) n_per_row * sizeof *ones);
        for (int64_t i = 0; i < n_per_row; i++)
            ones[i] = 1.0f;
    }
    ggml_quantize_chunk(type, src, dst, 0, nrows, n_per_row, ones);
    free(ones);
}

/*
 * Fills t with uniform values in [lo, hi); quantized tensors (contiguous)
 * are filled by quantizing random rows (with importance weights of 1 for
 * the types that require them).
 */
static inline void optest_fill(struct ggml_tensor *t, uint64_t *seed, double lo, double hi)
{
    if (ggml_is_quantized(t->type)) {
        const int64_t n = ggml_nelements(t);
        float *tmp = malloc((size_t) n * sizeof *tmp);
        for (int64_t i = 0; i < n; i++)
            tmp[i] = (float) optest_uniform(seed, lo, hi);
        optest_quantize(t->type, tmp, t->data, n / t->ne[0], t->ne[0]);
        free(tmp);
        return;
    }
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < t->ne[0]; i0++)
                    optest_set(t, i0, i1, i2, i3, optest_uniform(seed, lo, hi));
}

/* -------------------------------------------------------------- compute */

/*
 * Computes the graph ending at out on the CPU engine with n_threads and
 * the reference kernels on or off.  Scratch memory comes from malloc.
 */
static inline enum ggml_status optest_compute(struct ggml_context *ctx, struct ggml_tensor *out,
                                              int n_threads, bool use_ref)
{
    struct ggml_cgraph *graph = ggml_new_graph_custom(ctx, 1024, false);
    if (graph == NULL)
        return GGML_STATUS_FAILED;
    ggml_build_forward_expand(graph, out);
    struct ggml_cplan plan = ggml_graph_plan(graph, n_threads, NULL);
    plan.use_ref = use_ref;
    void *work = plan.work_size ? malloc(plan.work_size) : NULL;
    plan.work_data = work;
    enum ggml_status status = ggml_graph_compute(graph, &plan);
    free(work);
    return status;
}

/* y = W x, with W row-major [n_out][n_in]. */
static inline void optest_matvec(const double *w, int n_out, int n_in, const double *x, double *y)
{
    for (int r = 0; r < n_out; r++) {
        double s = 0.0;
        for (int c = 0; c < n_in; c++)
            s += w[r * n_in + c] * x[c];
        y[r] = s;
    }
}

/* y = x / sqrt(mean(x^2) + eps) * weight, over n values. */
static inline void optest_rms_norm(const double *x, const double *weight, int n, double eps, double *y)
{
    double ss = 0.0;
    for (int i = 0; i < n; i++)
        ss += x[i] * x[i];
    const double inv = 1.0 / sqrt(ss / n + eps);
    for (int i = 0; i < n; i++)
        y[i] = x[i] * inv * weight[i];
}

/* NMSE of t against ref (ref laid out in row-major order of t's shape). */
static inline double optest_nmse(const struct ggml_tensor *t, const double *ref)
{
    double err = 0.0, norm = 0.0;
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < t->ne[0]; i0++, k++) {
                    const double d = optest_get(t, i0, i1, i2, i3) - ref[k];
                    err += d * d;
                    norm += ref[k] * ref[k];
                }
    if (isnan(err))
        return INFINITY;
    return norm > 0.0 ? err / norm : err;
}

/*
 * Computes out for 1..4 threads, reference and fast kernels, each time
 * from a result filled with NaN (every element must be written), and
 * reports one TAP line a run: success and the NMSE against ref (out's
 * row-major order) at most threshold.
 */
static inline void optest_check_all(struct ggml_context *ctx, struct ggml_tensor *out, const double *ref,
                                    double threshold, const char *what)
{
    for (int use_ref = 0; use_ref <= 1; use_ref++)
        for (int n_threads = 1; n_threads <= 4; n_threads++) {
            memset(out->data, 0xff, ggml_nbytes(out));
            enum ggml_status status = optest_compute(ctx, out, n_threads, use_ref);
            double nmse = optest_nmse(out, ref);
            ok(status == GGML_STATUS_SUCCESS && nmse <= threshold, "%s, %d threads, %s: nmse %.3g", what,
               n_threads, use_ref ? "reference" : "fast", nmse);
        }
}

#endif
