/*
 * simd/avx512/dot.c - dot products of the AVX-512 level.
 *
 * Float rows (F32, F16, BF16 without the BF16 extension): four
 * accumulators of 16 lanes (fused multiply-add), the last partial vector
 * through a lane mask, then a fixed reduction.  F16 values are widened
 * by VCVTPH2PS, BF16 values by a 16-bit shift, both exact.  The sums
 * round differently from the other levels'; all are single-precision sums
 * of exact products.
 *
 * Quantized rows: qdot.h, with the integer block sums of maddubs then
 * madd here (dot-vnni.c: the same kernels with VPDPBUSD).
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ggml-impl.h"
#include "quants-impl.h"
#include "intrin.h"
#include "avx512.h"
#include "prefetch-rows.h"

#define ONE_ROW_ONLY() ((void) bs, (void) bx, (void) by, (void) nrc)

/* ------------------------------------------------------------ float rows */

/* The element types of float rows. */
enum elem { ELEM_F32, ELEM_F16, ELEM_BF16 };

/* 16 bfloat16 values (as 16-bit lanes) widened to floats: exact. */
static inline __m512 bf16_widen(__m256i h)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* Elements i .. i + 15 of a row of type e, as floats. */
static inline __m512 load16(const void *row, int i, enum elem e)
{
    switch (e) {
    case ELEM_F16:  return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (const void *) ((const uint16_t *) row + i)));
    case ELEM_BF16: return bf16_widen(_mm256_loadu_si256((const __m256i *) (const void *) ((const uint16_t *) row + i)));
    default:        return _mm512_loadu_ps((const float *) row + i);
    }
}

/* Elements i .. i + count - 1 (count < 16) as floats, the other lanes
   zero; nothing past them is read. */
static inline __m512 load_first(const void *row, int i, int count, enum elem e)
{
    const __mmask16 m = ggml__avx512_first_lanes(count);
    switch (e) {
    case ELEM_F16:
        return _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_maskz_loadu_epi16(m, (const uint16_t *) row + i)));
    case ELEM_BF16:
        return bf16_widen(_mm512_castsi512_si256(_mm512_maskz_loadu_epi16(m, (const uint16_t *) row + i)));
    default:
        return _mm512_maskz_loadu_ps(m, (const float *) row + i);
    }
}

/* The dot product of a row of type ex with a row of type ey. */
static inline __attribute__((always_inline)) float dot_float_rows(int n, const void *x, const void *y, enum elem ex,
                                                                  enum elem ey)
{
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    int i = 0;
    for (; i + 64 <= n; i += 64) {
        a0 = _mm512_fmadd_ps(load16(x, i, ex), load16(y, i, ey), a0);
        a1 = _mm512_fmadd_ps(load16(x, i + 16, ex), load16(y, i + 16, ey), a1);
        a2 = _mm512_fmadd_ps(load16(x, i + 32, ex), load16(y, i + 32, ey), a2);
        a3 = _mm512_fmadd_ps(load16(x, i + 48, ex), load16(y, i + 48, ey), a3);
    }
    for (; i + 16 <= n; i += 16)
        a0 = _mm512_fmadd_ps(load16(x, i, ex), load16(y, i, ey), a0);
    if (i < n)
        a1 = _mm512_fmadd_ps(load_first(x, i, n - i, ex), load_first(y, i, n - i, ey), a1);
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

void ggml__avx512_vec_dot_f32(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    *s = dot_float_rows(n, vx, vy, ELEM_F32, ELEM_F32);
}

void ggml__avx512_vec_dot_f16(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    *s = dot_float_rows(n, vx, vy, ELEM_F16, ELEM_F16);
}

void ggml__avx512_vec_dot_bf16(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    *s = dot_float_rows(n, vx, vy, ELEM_BF16, ELEM_BF16);
}

/* ------------------------------------------------ several rows, one y */

/*
 * Float rows of type ex against one activation row of type ey, nr rows at
 * once: each step loads 32 values of every row (two accumulators per
 * row), so nr streams of weights are in flight, and y's values are
 * loaded once for all rows.  Written for a constant nr (expanded below),
 * its loops over the rows unrolled, so that the accumulators stay in
 * registers (4 rows: 8 accumulators and 2 vectors of y).  GCC at -O2 left
 * those loops rolled, the accumulators in memory, a store and a load for
 * every multiply-add: 1024-wide F16 rows x a vector took 0.111 ms
 * instead of 0.075.
 */
#define MAX_ROWS 4

static inline __attribute__((always_inline)) void float_rows(int n, float *s, const char *x, size_t bx,
                                                             const void *y, enum elem ex, enum elem ey, const int nr)
{
    __m512 acc0[MAX_ROWS], acc1[MAX_ROWS];
#pragma GCC unroll 4
    for (int r = 0; r < nr; r++)
        acc0[r] = acc1[r] = _mm512_setzero_ps();
    struct ggml__rows_prefetch ahead = ggml__rows_prefetch_init(x, bx, nr, n / 32);
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512 y0 = load16(y, i, ey), y1 = load16(y, i + 16, ey);
        ggml__rows_prefetch_step(&ahead);
#pragma GCC unroll 4
        for (int r = 0; r < nr; r++) {
            const char *row = x + (size_t) r * bx;
            acc0[r] = _mm512_fmadd_ps(load16(row, i, ex), y0, acc0[r]);
            acc1[r] = _mm512_fmadd_ps(load16(row, i + 16, ex), y1, acc1[r]);
        }
    }
    if (i + 16 <= n) {
        const __m512 y0 = load16(y, i, ey);
#pragma GCC unroll 4
        for (int r = 0; r < nr; r++)
            acc0[r] = _mm512_fmadd_ps(load16(x + (size_t) r * bx, i, ex), y0, acc0[r]);
        i += 16;
    }
    if (i < n) {
        const __m512 y1 = load_first(y, i, n - i, ey);
#pragma GCC unroll 4
        for (int r = 0; r < nr; r++)
            acc1[r] = _mm512_fmadd_ps(load_first(x + (size_t) r * bx, i, n - i, ex), y1, acc1[r]);
    }
#pragma GCC unroll 4
    for (int r = 0; r < nr; r++)
        s[r] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[r], acc1[r]));
}

#define EXPAND_ROWS(ex, ey)                                                 \
    switch (nr) {                                                           \
    case 4: float_rows(n, s, vx, bx, vy, ex, ey, 4); break;                 \
    case 3: float_rows(n, s, vx, bx, vy, ex, ey, 3); break;                 \
    case 2: float_rows(n, s, vx, bx, vy, ex, ey, 2); break;                 \
    default: float_rows(n, s, vx, bx, vy, ex, ey, 1); break;                \
    }

/*
 * F16 rows by F32 values: half the widenings of F16 by F16.  Rows whose
 * group spans more than PREFETCH_ROWS_MAX_BYTES are taken one at a time
 * by the single-row loop, whose four accumulators hide the latency of the
 * multiply-adds where the rows kernel's two would not, one sequential
 * stream per thread: 4096-wide rows x a vector took 0.545 ms so, 0.584
 * four at a time (4096 rows, 2 threads, Emerald Rapids; on Zen 4 0.51
 * against 0.65).  Shorter rows gain from the prefetch of the rows that
 * follow: 1024-wide ones took 0.075 ms four at a time, 0.123 one by one
 * (Zen 4).
 */
void ggml__avx512_rows_by_f32_f16(int n, float *s, const void *vx, size_t bx, const float *vy, int nr)
{
    if (nr == 1 || (size_t) nr * (size_t) n * sizeof(ggml_fp16_t) > PREFETCH_ROWS_MAX_BYTES) {
        for (int r = 0; r < nr; r++)
            s[r] = dot_float_rows(n, (const char *) vx + (size_t) r * bx, vy, ELEM_F16, ELEM_F32);
        return;
    }
    EXPAND_ROWS(ELEM_F16, ELEM_F32)
}

/* ------------------------------------------- four rows by four columns */

/*
 * The dot tile (kernels.h, dot_tile): four rows of A against four F32
 * columns, sixteen accumulators of 16 lanes; each step of 16 values loads
 * four vectors of A and four of B for sixteen fused multiply-adds, where a
 * row against one column at a time loads five vectors for four.  Fewer
 * rows or columns: the missing ones repeat the first, their sums are not
 * stored.  The sums are reduced by the unpack fold of dot-vnni.c's rows:
 * one vector per column holds the four rows' sums.
 */

/* Lane r of the result: the sum of all lanes of v_r. */
static inline __m128 sum_four(__m512 v0, __m512 v1, __m512 v2, __m512 v3)
{
    const __m512 t01 = _mm512_add_ps(_mm512_unpacklo_ps(v0, v1), _mm512_unpackhi_ps(v0, v1));
    const __m512 t23 = _mm512_add_ps(_mm512_unpacklo_ps(v2, v3), _mm512_unpackhi_ps(v2, v3));
    const __m512 f = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t01), _mm512_castps_pd(t23))),
                                   _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t01), _mm512_castps_pd(t23))));
    return _mm_add_ps(_mm_add_ps(_mm512_castps512_ps128(f), _mm512_extractf32x4_ps(f, 1)),
                      _mm_add_ps(_mm512_extractf32x4_ps(f, 2), _mm512_extractf32x4_ps(f, 3)));
}

/* c[0..mr) = the first mr lanes of v. */
static inline void store_rows(float *c, __m128 v, int mr)
{
    if (mr == 4) {
        _mm_storeu_ps(c, v);
        return;
    }
    float four[4];
    _mm_storeu_ps(four, v);
    for (int i = 0; i < mr; i++)
        c[i] = four[i];
}

#define TILE_STEP(load_a, load_b)                                                        \
    do {                                                                                 \
        const __m512 x0 = load_a(a0), x1 = load_a(a1), x2 = load_a(a2), x3 = load_a(a3); \
        __m512 y = load_b(b0);                                                           \
        c00 = _mm512_fmadd_ps(x0, y, c00), c10 = _mm512_fmadd_ps(x1, y, c10);            \
        c20 = _mm512_fmadd_ps(x2, y, c20), c30 = _mm512_fmadd_ps(x3, y, c30);            \
        y = load_b(b1);                                                                  \
        c01 = _mm512_fmadd_ps(x0, y, c01), c11 = _mm512_fmadd_ps(x1, y, c11);            \
        c21 = _mm512_fmadd_ps(x2, y, c21), c31 = _mm512_fmadd_ps(x3, y, c31);            \
        y = load_b(b2);                                                                  \
        c02 = _mm512_fmadd_ps(x0, y, c02), c12 = _mm512_fmadd_ps(x1, y, c12);            \
        c22 = _mm512_fmadd_ps(x2, y, c22), c32 = _mm512_fmadd_ps(x3, y, c32);            \
        y = load_b(b3);                                                                  \
        c03 = _mm512_fmadd_ps(x0, y, c03), c13 = _mm512_fmadd_ps(x1, y, c13);            \
        c23 = _mm512_fmadd_ps(x2, y, c23), c33 = _mm512_fmadd_ps(x3, y, c33);            \
    } while (0)

static inline __attribute__((always_inline)) void float_tile(int n, const char *a, size_t bx, int mr,
                                                             const float *const *b, int nc, float *const *c,
                                                             enum elem e)
{
    const char *a0 = a, *a1 = mr > 1 ? a + bx : a, *a2 = mr > 2 ? a + 2 * bx : a, *a3 = mr > 3 ? a + 3 * bx : a;
    const float *b0 = b[0], *b1 = nc > 1 ? b[1] : b[0], *b2 = nc > 2 ? b[2] : b[0], *b3 = nc > 3 ? b[3] : b[0];
    __m512 c00 = _mm512_setzero_ps(), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    __m512 c20 = c00, c21 = c00, c22 = c00, c23 = c00, c30 = c00, c31 = c00, c32 = c00, c33 = c00;
    int i = 0;
#define LOAD_A(row) load16(row, i, e)
#define LOAD_B(col) _mm512_loadu_ps(col + i)
    for (; i + 16 <= n; i += 16)
        TILE_STEP(LOAD_A, LOAD_B);
#undef LOAD_A
#undef LOAD_B
    if (i < n) {
#define LOAD_A(row) load_first(row, i, n - i, e)
#define LOAD_B(col) load_first(col, i, n - i, ELEM_F32)
        TILE_STEP(LOAD_A, LOAD_B);
#undef LOAD_A
#undef LOAD_B
    }
    store_rows(c[0], sum_four(c00, c10, c20, c30), mr);
    if (nc > 1)
        store_rows(c[1], sum_four(c01, c11, c21, c31), mr);
    if (nc > 2)
        store_rows(c[2], sum_four(c02, c12, c22, c32), mr);
    if (nc > 3)
        store_rows(c[3], sum_four(c03, c13, c23, c33), mr);
}

#undef TILE_STEP

void ggml__avx512_dot_tile_f32(int n, const void *a, size_t bx, int mr, const float *const *b, int nc,
                               float *const *c)
{
    float_tile(n, a, bx, mr, b, nc, c, ELEM_F32);
}

void ggml__avx512_dot_tile_f16(int n, const void *a, size_t bx, int mr, const float *const *b, int nc,
                               float *const *c)
{
    float_tile(n, a, bx, mr, b, nc, c, ELEM_F16);
}

void ggml__avx512_dot_tile_bf16(int n, const void *a, size_t bx, int mr, const float *const *b, int nc,
                                float *const *c)
{
    float_tile(n, a, bx, mr, b, nc, c, ELEM_BF16);
}

/* -------------------------------------------------------- quantized rows */

/*
 * The 32 lanes of u (unsigned, u * a pairs summed without saturation:
 * |u| <= 128 and a in [-127, 127]) times the signed a, summed in groups of
 * four consecutive bytes: 16 int32 lanes, lanes 0-7 of the first 32 bytes.
 */
static inline __m512i dot_u8(__m512i u, __m512i a)
{
    return _mm512_madd_epi16(_mm512_maddubs_epi16(u, a), _mm512_set1_epi16(1));
}

#define QDOT_NAME(name) ggml__avx512_##name
#include "qdot.h"
