/*
 * simd/avx2/elementwise.c - the unary and glu entries of the AVX2 level
 * (contract: simd/kernels.h): the formulas of lib/cpu/ops/unary.c on eight
 * floats, from vmath.h (simd/vmath-template.h, shared with the AVX-512 level).
 *
 * Every function writes the same formula for all lanes, the tail included
 * (masked loads and stores), so an element's result does not depend on
 * its position in the row.  Max relative errors: those of the activations
 * in simd/vmath-template.h (checked by tests/test-kernels.c); a glu entry
 * has its activation's bound plus one rounding of the product (reglu: that
 * rounding only).
 */
#include "config.h"

#include <immintrin.h>
#include <stdint.h>

#include "ggml-impl.h"
#include "avx2.h"
#include "vmath.h"

/* Defines ggml__avx2_unary_<name>: y[i] = avx2_<name>(x[i]). */
#define DEFINE_UNARY(name)                                                                  \
    void ggml__avx2_unary_##name(int64_t n, float *y, const float *x)                       \
    {                                                                                       \
        int64_t i = 0;                                                                      \
        for (; i + 8 <= n; i += 8)                                                          \
            _mm256_storeu_ps(y + i, avx2_##name(_mm256_loadu_ps(x + i)));                   \
        if (i < n) {                                                                        \
            const __m256i m = avx2_first_lanes(n - i);                                      \
            _mm256_maskstore_ps(y + i, m, avx2_##name(_mm256_maskload_ps(x + i, m)));       \
        }                                                                                   \
    }

/*
 * Defines ggml__avx2_unary_stream_<name>: ggml__avx2_unary_<name> with
 * non-temporal stores for the whole 32-byte lines of y (the ends through
 * the plain function: the same bits).
 */
#define DEFINE_UNARY_STREAM(name)                                                           \
    void ggml__avx2_unary_stream_##name(int64_t n, float *y, const float *x)               \
    {                                                                                       \
        const int64_t head = (int64_t) (((32u - ((uintptr_t) y & 31u)) & 31u) / sizeof(float)); \
        if (head >= n) {                                                                    \
            ggml__avx2_unary_##name(n, y, x);                                              \
            return;                                                                         \
        }                                                                                   \
        ggml__avx2_unary_##name(head, y, x);                                               \
        int64_t i = head;                                                                   \
        for (; i + 8 <= n; i += 8)                                                        \
            _mm256_stream_ps(y + i, avx2_##name(_mm256_loadu_ps(x + i)));                         \
        _mm_sfence();                                                                       \
        ggml__avx2_unary_##name(n - i, y + i, x + i);                                      \
    }

/* Defines ggml__avx2_glu_<glu>: y[i] = avx2_<act>(x[i]) * g[i]. */
#define DEFINE_GLU(glu, act)                                                                \
    void ggml__avx2_glu_##glu(int64_t n, float *y, const float *x, const float *g)          \
    {                                                                                       \
        int64_t i = 0;                                                                      \
        for (; i + 8 <= n; i += 8)                                                          \
            _mm256_storeu_ps(y + i, _mm256_mul_ps(avx2_##act(_mm256_loadu_ps(x + i)),       \
                                                  _mm256_loadu_ps(g + i)));                 \
        if (i < n) {                                                                        \
            const __m256i m = avx2_first_lanes(n - i);                                      \
            _mm256_maskstore_ps(y + i, m, _mm256_mul_ps(avx2_##act(_mm256_maskload_ps(x + i, m)), \
                                                        _mm256_maskload_ps(g + i, m)));     \
        }                                                                                   \
    }

DEFINE_UNARY(abs)
DEFINE_UNARY_STREAM(abs)
DEFINE_UNARY(neg)
DEFINE_UNARY_STREAM(neg)
DEFINE_UNARY(relu)
DEFINE_UNARY_STREAM(relu)
DEFINE_UNARY(tanh)
DEFINE_UNARY_STREAM(tanh)
DEFINE_UNARY(exp)
DEFINE_UNARY_STREAM(exp)
DEFINE_UNARY(sigmoid)
DEFINE_UNARY_STREAM(sigmoid)
DEFINE_UNARY(silu)
DEFINE_UNARY_STREAM(silu)
DEFINE_UNARY(gelu)
DEFINE_UNARY_STREAM(gelu)
DEFINE_UNARY(gelu_quick)
DEFINE_UNARY_STREAM(gelu_quick)
DEFINE_UNARY(gelu_erf)
DEFINE_UNARY_STREAM(gelu_erf)

DEFINE_GLU(reglu, relu)
DEFINE_GLU(swiglu, silu)
DEFINE_GLU(geglu, gelu)
DEFINE_GLU(geglu_quick, gelu_quick)
DEFINE_GLU(geglu_erf, gelu_erf)
