/*
 * simd/avx512/elementwise.c - the unary and glu entries of the AVX-512
 * level (contract: simd/kernels.h): the formulas of lib/cpu/ops/unary.c on
 * sixteen floats, from vmath.h (simd/vmath-template.h, shared with the
 * AVX2 level: the same bits as there).
 *
 * Every function writes the same formula for all lanes, the tail included
 * (masked loads and stores, which touch no memory outside the mask), so an
 * element's result does not depend on its position in the row.  Max
 * relative errors: those of the activations in simd/vmath-template.h
 * (checked by tests/test-kernels.c); a glu entry has its activation's
 * bound plus one rounding of the product (reglu: that rounding only).
 */
#include "config.h"

#include <stdint.h>

#include "ggml-impl.h"
#include "intrin.h"
#include "avx512.h"
#include "vmath.h"

/* Defines ggml__avx512_unary_<name>: y[i] = avx512_<name>(x[i]). */
#define DEFINE_UNARY(name)                                                                  \
    void ggml__avx512_unary_##name(int64_t n, float *y, const float *x)                     \
    {                                                                                       \
        int64_t i = 0;                                                                      \
        for (; i + 16 <= n; i += 16)                                                        \
            _mm512_storeu_ps(y + i, avx512_##name(_mm512_loadu_ps(x + i)));                 \
        if (i < n) {                                                                        \
            const __mmask16 m = ggml__avx512_first_lanes(n - i);                                  \
            _mm512_mask_storeu_ps(y + i, m, avx512_##name(_mm512_maskz_loadu_ps(m, x + i))); \
        }                                                                                   \
    }

/*
 * Defines ggml__avx512_unary_stream_<name>: ggml__avx512_unary_<name> with
 * non-temporal stores for the whole 64-byte lines of y (the ends through
 * the plain function: the same bits).
 */
#define DEFINE_UNARY_STREAM(name)                                                           \
    void ggml__avx512_unary_stream_##name(int64_t n, float *y, const float *x)               \
    {                                                                                       \
        const int64_t head = (int64_t) (((64u - ((uintptr_t) y & 63u)) & 63u) / sizeof(float)); \
        if (head >= n) {                                                                    \
            ggml__avx512_unary_##name(n, y, x);                                              \
            return;                                                                         \
        }                                                                                   \
        ggml__avx512_unary_##name(head, y, x);                                               \
        int64_t i = head;                                                                   \
        for (; i + 16 <= n; i += 16)                                                        \
            _mm512_stream_ps(y + i, avx512_##name(_mm512_loadu_ps(x + i)));                         \
        _mm_sfence();                                                                       \
        ggml__avx512_unary_##name(n - i, y + i, x + i);                                      \
    }

/* Defines ggml__avx512_glu_<glu>: y[i] = avx512_<act>(x[i]) * g[i]. */
#define DEFINE_GLU(glu, act)                                                                \
    void ggml__avx512_glu_##glu(int64_t n, float *y, const float *x, const float *g)        \
    {                                                                                       \
        int64_t i = 0;                                                                      \
        for (; i + 16 <= n; i += 16)                                                        \
            _mm512_storeu_ps(y + i, _mm512_mul_ps(avx512_##act(_mm512_loadu_ps(x + i)),     \
                                                  _mm512_loadu_ps(g + i)));                 \
        if (i < n) {                                                                        \
            const __mmask16 m = ggml__avx512_first_lanes(n - i);                                  \
            _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(avx512_##act(_mm512_maskz_loadu_ps(m, x + i)), \
                                                          _mm512_maskz_loadu_ps(m, g + i))); \
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
