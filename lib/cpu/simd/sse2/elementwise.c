/*
 * simd/sse2/elementwise.c - the unary and glu entries of the SSE2 level
 * (contract: simd/kernels.h): the formulas of lib/cpu/ops/unary.c on four
 * floats, from vmath.h (simd/vmath-template.h without fused operations).
 *
 * Every function applies the same formula to all lanes, the tail included
 * (through sse2_load_first / sse2_store_first), so an element's result
 * does not depend on its position in the row, nor on whether the stream
 * form wrote it.  gelu_erf and geglu_erf are
 * not here (vmath.h says why).
 */
#include "config.h"

#include <emmintrin.h>
#include <stdint.h>

#include "ggml-impl.h"
#include "sse2.h"
#include "vmath.h"

/* Defines ggml__sse2_unary_<name>: y[i] = sse2_<name>(x[i]). */
#define DEFINE_UNARY(name)                                                                  \
    void ggml__sse2_unary_##name(int64_t n, float *y, const float *x)                       \
    {                                                                                       \
        int64_t i = 0;                                                                      \
        for (; i + 8 <= n; i += 8) { /* two independent vectors a step */                   \
            const __m128 lo = sse2_##name(_mm_loadu_ps(x + i));                             \
            const __m128 hi = sse2_##name(_mm_loadu_ps(x + i + 4));                         \
            _mm_storeu_ps(y + i, lo);                                                       \
            _mm_storeu_ps(y + i + 4, hi);                                                   \
        }                                                                                   \
        for (; i + 4 <= n; i += 4)                                                          \
            _mm_storeu_ps(y + i, sse2_##name(_mm_loadu_ps(x + i)));                         \
        if (i < n)                                                                          \
            sse2_store_first(y + i, n - i, sse2_##name(sse2_load_first(x + i, n - i, 0.0f))); \
    }

/*
 * Defines ggml__sse2_unary_stream_<name>: ggml__sse2_unary_<name> with
 * non-temporal stores for the whole 16-byte lines of y (the ends through
 * the plain function: the same bits).
 */
#define DEFINE_UNARY_STREAM(name)                                                           \
    void ggml__sse2_unary_stream_##name(int64_t n, float *y, const float *x)               \
    {                                                                                       \
        const int64_t head = (int64_t) (((16u - ((uintptr_t) y & 15u)) & 15u) / sizeof(float)); \
        if (head >= n) {                                                                    \
            ggml__sse2_unary_##name(n, y, x);                                              \
            return;                                                                         \
        }                                                                                   \
        ggml__sse2_unary_##name(head, y, x);                                               \
        int64_t i = head;                                                                   \
        for (; i + 8 <= n; i += 8) {                                                        \
            const __m128 lo = sse2_##name(_mm_loadu_ps(x + i));                             \
            const __m128 hi = sse2_##name(_mm_loadu_ps(x + i + 4));                         \
            _mm_stream_ps(y + i, lo);                                                       \
            _mm_stream_ps(y + i + 4, hi);                                                   \
        }                                                                                   \
        _mm_sfence();                                                                       \
        ggml__sse2_unary_##name(n - i, y + i, x + i);                                      \
    }

/* Defines ggml__sse2_glu_<glu>: y[i] = sse2_<act>(x[i]) * g[i]. */
#define DEFINE_GLU(glu, act)                                                                \
    void ggml__sse2_glu_##glu(int64_t n, float *y, const float *x, const float *g)          \
    {                                                                                       \
        int64_t i = 0;                                                                      \
        for (; i + 4 <= n; i += 4)                                                          \
            _mm_storeu_ps(y + i, _mm_mul_ps(sse2_##act(_mm_loadu_ps(x + i)), _mm_loadu_ps(g + i))); \
        if (i < n)                                                                          \
            sse2_store_first(y + i, n - i,                                                  \
                             _mm_mul_ps(sse2_##act(sse2_load_first(x + i, n - i, 0.0f)),    \
                                        sse2_load_first(g + i, n - i, 0.0f)));              \
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

DEFINE_GLU(reglu, relu)
DEFINE_GLU(swiglu, silu)
DEFINE_GLU(geglu, gelu)
DEFINE_GLU(geglu_quick, gelu_quick)
