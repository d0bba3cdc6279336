/*
 * simd/avx2/elementwise.c - the unary and glu entries of the AVX2 level
 * (contract: simd/kernels.h): the formulas of lib/cpu/ops/unary.c on eight
 * floats, with exp, tanh and erfc from vmath.h.
 *
 * Every function writes the same formula for all lanes, the tail included
 * (masked loads and stores), so an element's result does not depend on
 * its position in the row.  Max relative errors against the exact
 * function of the float input, over all finite inputs (checked by
 * tests/test-kernels.c):
 *   abs, neg, relu, reglu   exact (reglu: one rounding of the product)
 *   exp                     2.5e-7
 *   sigmoid, silu           5e-7
 *   tanh                    4e-7
 *   gelu (tanh form)        5e-7 (1 + |2u|), u = sqrt(2/pi) (x + 0.044715 x^3): u is
 *                           rounded in float before the exponential, as in the op
 *   gelu_quick              5e-7 (1 + |1.702 x|), for the same reason
 *   gelu_erf                1.5e-6
 *   glu ops                 the activation's bound plus one rounding
 * Special values as the op's scalar formulas give them (silu(-inf) is
 * NaN, like -inf / (1 + e^inf); relu(NaN) is 0, like x > 0 ? x : 0).
 */
#include "config.h"

#include <immintrin.h>
#include <stdint.h>

#include "ggml-impl.h"
#include "avx2.h"
#include "vmath.h"

#define GELU_SQRT_2_OVER_PI 0.79788456080286535588f
#define GELU_COEF_A         0.044715f
#define GELU_QUICK_COEF     1.702f

static inline __m256 v_abs(__m256 x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }
static inline __m256 v_neg(__m256 x) { return _mm256_xor_ps(_mm256_set1_ps(-0.0f), x); }
/* x > 0 ? x : +0 (maxps gives its second operand for NaN and for two zeros) */
static inline __m256 v_relu(__m256 x) { return _mm256_max_ps(x, _mm256_setzero_ps()); }
static inline __m256 v_tanh(__m256 x) { return avx2_tanh(x); }
static inline __m256 v_exp(__m256 x) { return avx2_exp(x); }

/* x / (1 + e^(-k x)), the common form of silu (k = 1) and gelu_quick */
static inline __m256 x_over_one_plus_exp(__m256 x, __m256 minus_arg)
{
    return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), avx2_exp(minus_arg)));
}

static inline __m256 v_sigmoid(__m256 x)
{
    return x_over_one_plus_exp(_mm256_set1_ps(1.0f), v_neg(x));
}

static inline __m256 v_silu(__m256 x)
{
    return x_over_one_plus_exp(x, v_neg(x));
}

static inline __m256 v_gelu_quick(__m256 x)
{
    return x_over_one_plus_exp(x, _mm256_mul_ps(_mm256_set1_ps(-GELU_QUICK_COEF), x));
}

/* x / (1 + e^(-2u)), u = sqrt(2/pi) x (1 + 0.044715 x^2) */
static inline __m256 v_gelu(__m256 x)
{
    const __m256 inner = _mm256_fmadd_ps(_mm256_set1_ps(GELU_COEF_A), _mm256_mul_ps(x, x), _mm256_set1_ps(1.0f));
    const __m256 minus_2u = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(-2.0f * GELU_SQRT_2_OVER_PI), x), inner);
    return x_over_one_plus_exp(x, minus_2u);
}

/*
 * 0.5 x erfc(-x / sqrt 2), with c = erfc(|x| / sqrt 2) = s e: (0.5 x s) e
 * for x < 0 (the tiny e multiplied last), 0.5 x (2 - c) for x >= 0.
 */
static inline __m256 v_gelu_erf(__m256 x)
{
    __m256 s;
    const __m256 e = avx2_erfc_parts(v_abs(x), &s);
    const __m256 half_x = _mm256_mul_ps(_mm256_set1_ps(0.5f), x);
    const __m256 negative = _mm256_mul_ps(_mm256_mul_ps(half_x, s), e);
    const __m256 positive = _mm256_mul_ps(half_x, _mm256_sub_ps(_mm256_set1_ps(2.0f), _mm256_mul_ps(s, e)));
    return _mm256_blendv_ps(negative, positive, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ));
}

/* Defines ggml__avx2_unary_<name>: y[i] = v_<name>(x[i]). */
#define DEFINE_UNARY(name)                                                                  \
    void ggml__avx2_unary_##name(int64_t n, float *y, const float *x)                      \
    {                                                                                       \
        int64_t i = 0;                                                                      \
        for (; i + 8 <= n; i += 8)                                                          \
            _mm256_storeu_ps(y + i, v_##name(_mm256_loadu_ps(x + i)));                      \
        if (i < n) {                                                                        \
            const __m256i m = avx2_first_lanes(n - i);                                      \
            _mm256_maskstore_ps(y + i, m, v_##name(_mm256_maskload_ps(x + i, m)));          \
        }                                                                                   \
    }

/* Defines ggml__avx2_glu_<glu>: y[i] = v_<act>(x[i]) * g[i]. */
#define DEFINE_GLU(glu, act)                                                                \
    void ggml__avx2_glu_##glu(int64_t n, float *y, const float *x, const float *g)         \
    {                                                                                       \
        int64_t i = 0;                                                                      \
        for (; i + 8 <= n; i += 8)                                                          \
            _mm256_storeu_ps(y + i, _mm256_mul_ps(v_##act(_mm256_loadu_ps(x + i)),         \
                                                  _mm256_loadu_ps(g + i)));                 \
        if (i < n) {                                                                        \
            const __m256i m = avx2_first_lanes(n - i);                                      \
            _mm256_maskstore_ps(y + i, m, _mm256_mul_ps(v_##act(_mm256_maskload_ps(x + i, m)), \
                                                        _mm256_maskload_ps(g + i, m)));     \
        }                                                                                   \
    }

DEFINE_UNARY(abs)
DEFINE_UNARY(neg)
DEFINE_UNARY(relu)
DEFINE_UNARY(tanh)
DEFINE_UNARY(exp)
DEFINE_UNARY(sigmoid)
DEFINE_UNARY(silu)
DEFINE_UNARY(gelu)
DEFINE_UNARY(gelu_quick)
DEFINE_UNARY(gelu_erf)

DEFINE_GLU(reglu, relu)
DEFINE_GLU(swiglu, silu)
DEFINE_GLU(geglu, gelu)
DEFINE_GLU(geglu_quick, gelu_quick)
DEFINE_GLU(geglu_erf, gelu_erf)
