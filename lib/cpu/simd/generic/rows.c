/*
 * simd/generic/rows.c - the generic level's row kernels of SOFT_MAX, the
 * norms, SUM and the binary ops (contracts: simd/kernels.h), in portable
 * C.  The sums keep SUM_LANES independent double accumulators so that the
 * loops vectorize; the arithmetic is that of the scalar expressions.
 */
#include "config.h"

#include <math.h>

#include "ggml-impl.h"
#include "generic.h"

/* Independent accumulators of the sums (a multiple of the vector width). */
#define SUM_LANES 8

float ggml__generic_reduce_max(int64_t n, const float *x)
{
    float max = -INFINITY;
    for (int64_t i = 0; i < n; i++)
        max = x[i] > max ? x[i] : max;
    return max;
}

double ggml__generic_softmax_exp_sum(int64_t n, float *y, const float *x, float max)
{
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const float e = expf(x[i] - max);
        y[i] = e;
        sum += e;
    }
    return sum;
}

void ggml__generic_scale(int64_t n, float *y, const float *x, float s)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] * s;
}

/*
 * Defines ggml__generic_<name>: the sum over i < n of term(i) (a double
 * expression of x[i] and of the extra argument), on SUM_LANES lanes, then
 * the lanes in order, then the tail.
 */
#define DEFINE_LANE_SUM(name, extra_param, term)                                \
    double ggml__generic_##name(int64_t n, const float *x extra_param)          \
    {                                                                          \
        double lane[SUM_LANES] = { 0.0 };                                      \
        int64_t i = 0;                                                         \
        for (; i + SUM_LANES <= n; i += SUM_LANES)                             \
            for (int j = 0; j < SUM_LANES; j++) {                              \
                const double v = (double) x[i + j];                            \
                lane[j] += term;                                               \
            }                                                                  \
        double sum = 0.0;                                                      \
        for (int j = 0; j < SUM_LANES; j++)                                    \
            sum += lane[j];                                                    \
        for (; i < n; i++) {                                                   \
            const double v = (double) x[i];                                    \
            sum += term;                                                       \
        }                                                                      \
        return sum;                                                            \
    }

#define NO_PARAM
#define MEAN_PARAM , double mean
DEFINE_LANE_SUM(sum, NO_PARAM, v)
DEFINE_LANE_SUM(sum_sq, NO_PARAM, v * v)
DEFINE_LANE_SUM(sum_sq_dev, MEAN_PARAM, (v - mean) * (v - mean))

/* Defines the binary and binary_scalar entries of one operator. */
#define DEFINE_BINARY(name, OP)                                                           \
    void ggml__generic_##name(int64_t n, float *z, const float *x, const float *y)        \
    {                                                                                     \
        for (int64_t i = 0; i < n; i++)                                                   \
            z[i] = x[i] OP y[i];                                                          \
    }                                                                                     \
    void ggml__generic_##name##_scalar(int64_t n, float *z, const float *x, float s)      \
    {                                                                                     \
        for (int64_t i = 0; i < n; i++)                                                   \
            z[i] = x[i] OP s;                                                             \
    }

DEFINE_BINARY(add, +)
DEFINE_BINARY(sub, -)
DEFINE_BINARY(mul, *)
DEFINE_BINARY(div, /)
