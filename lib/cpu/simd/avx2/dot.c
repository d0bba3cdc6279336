/*
 * simd/avx2/dot.c - dot products of the AVX2 level.
 *
 * Float rows: four accumulators of 8 lanes (fused multiply-add), a scalar
 * tail, then a fixed reduction.  The sums round differently from the
 * generic level's 16 partial sums; both are single-precision sums of exact
 * products.
 *
 * Quantized rows against Q8_0 / Q8_1 rows: the 32 products of a block are
 * summed exactly in integers (maddubs then madd), as in the generic level;
 * only the scaling and the sum over blocks are in floats.  maddubs takes
 * an unsigned and a signed operand: signed weights are made unsigned by
 * moving their sign onto the activation (|w| * (sign(w) * a)), which is
 * exact when a is in [-127, 127], as the Q8 encoders make it.
 */
#include "config.h"

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "avx2.h"
#include "prefetch-rows.h"
#include "block-formats.h"

#define QROWS_NAME(name) ggml__avx2_##name
#include "qrows.h"

#define ONE_ROW_ONLY() ((void) bs, (void) bx, (void) by, (void) nrc)

static inline float hsum_ps(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* ------------------------------------------------------------ float rows */

static inline __m256 load_f32(const void *p)
{
    return _mm256_loadu_ps(p);
}

static inline __m256 load_f16(const void *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128(p));
}

static inline __m256 load_bf16(const void *p)
{
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

/* The shape of the float dot products: 32 elements a step, x of type T, y of type TY. */
#define DOT_FLOAT_ROWS(T, load, scalar, TY, load_y, scalar_y)                             \
    do {                                                                                 \
        const T *x_ = vx;                                                                \
        const TY *y_ = vy;                                                               \
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;                      \
        int i_ = 0;                                                                      \
        for (; i_ + 32 <= n; i_ += 32) {                                                 \
            a0 = _mm256_fmadd_ps(load(x_ + i_), load_y(y_ + i_), a0);                    \
            a1 = _mm256_fmadd_ps(load(x_ + i_ + 8), load_y(y_ + i_ + 8), a1);            \
            a2 = _mm256_fmadd_ps(load(x_ + i_ + 16), load_y(y_ + i_ + 16), a2);          \
            a3 = _mm256_fmadd_ps(load(x_ + i_ + 24), load_y(y_ + i_ + 24), a3);          \
        }                                                                                \
        for (; i_ + 8 <= n; i_ += 8)                                                     \
            a0 = _mm256_fmadd_ps(load(x_ + i_), load_y(y_ + i_), a0);                    \
        float tail_ = 0.0f;                                                              \
        for (; i_ < n; i_++)                                                             \
            tail_ += scalar(x_[i_]) * scalar_y(y_[i_]);                                  \
        *s = hsum_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3))) + tail_; \
    } while (0)

static inline float f32_value(float v)
{
    return v;
}

/* F16C's scalar conversion: exact, as ggml__fp16_to_fp32. */
static inline float f16_value(ggml_fp16_t h)
{
    return _cvtsh_ss(h);
}

static inline float bf16_value(uint16_t h)
{
    return ggml__fp32_from_bits((uint32_t) h << 16);
}

void ggml__avx2_vec_dot_f32(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    DOT_FLOAT_ROWS(float, load_f32, f32_value, float, load_f32, f32_value);
}

void ggml__avx2_vec_dot_f16(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    DOT_FLOAT_ROWS(ggml_fp16_t, load_f16, f16_value, ggml_fp16_t, load_f16, f16_value);
}

/* -------------------------------------------------------- quantized rows */

/* Sum over the 32 lanes of signed w times signed a, as 8 int32 partial sums. */
static inline __m256i dot_i8(__m256i w, __m256i a)
{
    const __m256i wabs = _mm256_sign_epi8(w, w);
    const __m256i asgn = _mm256_sign_epi8(a, w);
    return _mm256_madd_epi16(_mm256_maddubs_epi16(wabs, asgn), _mm256_set1_epi16(1));
}

/* The same for unsigned w (0..31). */
static inline __m256i dot_u8(__m256i w, __m256i a)
{
    return _mm256_madd_epi16(_mm256_maddubs_epi16(w, a), _mm256_set1_epi16(1));
}

/* The 32 4-bit values of a block, unsigned 0..15, in element order. */
static inline __m256i unpack_nibbles(const uint8_t qs[16])
{
    const __m128i packed = _mm_loadu_si128((const __m128i *) (const void *) qs);
    const __m128i mask = _mm_set1_epi8(0x0f);
    const __m128i lo = _mm_and_si128(packed, mask);
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(packed, 4), mask);
    return _mm256_set_m128i(hi, lo);
}

static inline __m256i load_q8(const int8_t qs[32])
{
    return _mm256_loadu_si256((const __m256i *) (const void *) qs);
}

static inline __m256 block_scale(ggml_fp16_t a, ggml_fp16_t b)
{
    return _mm256_set1_ps(f16_value(a) * f16_value(b));
}

void ggml__avx2_vec_dot_q4_0_q8_0(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    const block_q4_0 *x = vx;
    const block_q8_0 *y = vy;
    __m256 acc = _mm256_setzero_ps();
    for (int b = 0; b < n / QK4_0; b++) {
        const __m256i w = _mm256_sub_epi8(unpack_nibbles(x[b].qs), _mm256_set1_epi8(8));
        const __m256i isum = dot_i8(w, load_q8(y[b].qs));
        acc = _mm256_fmadd_ps(block_scale(x[b].d, y[b].d), _mm256_cvtepi32_ps(isum), acc);
    }
    *s = hsum_ps(acc);
}

void ggml__avx2_vec_dot_q4_1_q8_1(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    const block_q4_1 *x = vx;
    const block_q8_1 *y = vy;
    __m256 acc = _mm256_setzero_ps();
    float mins = 0.0f;
    for (int b = 0; b < n / QK4_1; b++) {
        const __m256i isum = dot_u8(unpack_nibbles(x[b].qs), load_q8(y[b].qs));
        acc = _mm256_fmadd_ps(block_scale(x[b].d, y[b].d), _mm256_cvtepi32_ps(isum), acc);
        mins += f16_value(x[b].m) * f16_value(y[b].s);
    }
    *s = hsum_ps(acc) + mins;
}

void ggml__avx2_vec_dot_q5_0_q8_0(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    const block_q5_0 *x = vx;
    const block_q8_0 *y = vy;
    __m256 acc = _mm256_setzero_ps();
    for (int b = 0; b < n / QK5_0; b++) {
        const __m256i u = _mm256_or_si256(unpack_nibbles(x[b].qs), fifth_bits(x[b].qh));
        const __m256i w = _mm256_sub_epi8(u, _mm256_set1_epi8(16));
        const __m256i isum = dot_i8(w, load_q8(y[b].qs));
        acc = _mm256_fmadd_ps(block_scale(x[b].d, y[b].d), _mm256_cvtepi32_ps(isum), acc);
    }
    *s = hsum_ps(acc);
}

void ggml__avx2_vec_dot_q5_1_q8_1(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    const block_q5_1 *x = vx;
    const block_q8_1 *y = vy;
    __m256 acc = _mm256_setzero_ps();
    float mins = 0.0f;
    for (int b = 0; b < n / QK5_1; b++) {
        const __m256i u = _mm256_or_si256(unpack_nibbles(x[b].qs), fifth_bits(x[b].qh));
        const __m256i isum = dot_u8(u, load_q8(y[b].qs));
        acc = _mm256_fmadd_ps(block_scale(x[b].d, y[b].d), _mm256_cvtepi32_ps(isum), acc);
        mins += f16_value(x[b].m) * f16_value(y[b].s);
    }
    *s = hsum_ps(acc) + mins;
}

void ggml__avx2_vec_dot_q8_0_q8_0(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    const block_q8_0 *x = vx;
    const block_q8_0 *y = vy;
    __m256 acc = _mm256_setzero_ps();
    for (int b = 0; b < n / QK8_0; b++) {
        const __m256i isum = dot_i8(load_q8(x[b].qs), load_q8(y[b].qs));
        acc = _mm256_fmadd_ps(block_scale(x[b].d, y[b].d), _mm256_cvtepi32_ps(isum), acc);
    }
    *s = hsum_ps(acc);
}

/* ------------------------------------------------ several rows, one y */

/*
 * Weight rows against one activation row, nr rows at once (1 <= nr <= 4):
 * every step reads the same stretch of each row, so nr streams of weights
 * are in flight, y's values are loaded (and converted) once for all rows,
 * and each row has accumulators of its own: independent chains of adds
 * that hide the latency of the fused multiply-adds.
 *
 * The kernels are written for a constant nr (the switch of EXPAND_ROWS)
 * with one named accumulator per row (FOR_EACH_ROW), never an array: the
 * compiler then keeps them all in registers.
 */
#define FOR_EACH_ROW(STEP, arg) STEP(0, arg) STEP(1, arg) STEP(2, arg) STEP(3, arg)

#define EXPAND_ROWS(kernel)                                                  \
    switch (nr) {                                                            \
    case 4: kernel(n, s, vx, bx, vy, 4); break;                              \
    case 3: kernel(n, s, vx, bx, vy, 3); break;                              \
    case 2: kernel(n, s, vx, bx, vy, 2); break;                              \
    default: kernel(n, s, vx, bx, vy, 1); break;                             \
    }

#define ALWAYS_INLINE static inline __attribute__((always_inline))

/*
 * Float rows: 16 values of a row a step, as two vectors of 8 (lo, hi).
 * Which value goes to which lane is the loader's choice, the same for x
 * and y (BF16 puts the even elements in lo and the odd ones in hi: two
 * operations widen 16 values), so the lane products are still x[i] * y[i].
 */
ALWAYS_INLINE void load16_f32(const void *p, __m256 *lo, __m256 *hi)
{
    *lo = _mm256_loadu_ps(p);
    *hi = _mm256_loadu_ps((const float *) p + 8);
}

ALWAYS_INLINE void load16_f16(const void *p, __m256 *lo, __m256 *hi)
{
    *lo = load_f16(p);
    *hi = load_f16((const ggml_fp16_t *) p + 8);
}

ALWAYS_INLINE void load16_bf16(const void *p, __m256 *lo, __m256 *hi)
{
    /* a BF16 value is the high half of its float: the element in the low half of a 32-bit lane moves up */
    const __m256i w = _mm256_loadu_si256(p);
    *lo = _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
    *hi = _mm256_castsi256_ps(_mm256_and_si256(w, _mm256_set1_epi32((int) 0xffff0000u)));
}

/*
 * One BF16 row by a BF16 y: 32 values a step, each 16 widened by two
 * operations (load16_bf16) rather than the four of two zero-extensions
 * and shifts, into four accumulators: the widening, not the memory,
 * bounded the AVX2 matrix x vector product (4096 x 4096: 0.84 ms against
 * 0.62 for ik_llama.cpp at AVX2).
 */
void ggml__avx2_vec_dot_bf16(GGML__VEC_DOT_PARAMS)
{
    ONE_ROW_ONLY();
    const uint16_t *x = vx, *y = vy;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 xlo, xhi, ylo, yhi;
        load16_bf16(x + i, &xlo, &xhi);
        load16_bf16(y + i, &ylo, &yhi);
        a0 = _mm256_fmadd_ps(xlo, ylo, a0);
        a1 = _mm256_fmadd_ps(xhi, yhi, a1);
        load16_bf16(x + i + 16, &xlo, &xhi);
        load16_bf16(y + i + 16, &ylo, &yhi);
        a2 = _mm256_fmadd_ps(xlo, ylo, a2);
        a3 = _mm256_fmadd_ps(xhi, yhi, a3);
    }
    for (; i + 8 <= n; i += 8)
        a0 = _mm256_fmadd_ps(load_bf16(x + i), load_bf16(y + i), a0);
    float tail = 0.0f;
    for (; i < n; i++)
        tail += bf16_value(x[i]) * bf16_value(y[i]);
    *s = hsum_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3))) + tail;
}

/*
 * Defines name, the kernel of rows of type T against y of type TY: 16
 * values a step loaded by load16 and load16_y (which must put the same
 * elements in the same lanes), the last n % 16 by the scalar readers.
 */
#define FLOAT_ROWS_KERNEL(name, T, load16, scalar, TY, load16_y, scalar_y)                           \
    ALWAYS_INLINE void name(int n, float *s, const void *vx, size_t bx, const void *vy, const int nr) \
    {                                                                                               \
        const char *x = vx;                                                                         \
        const TY *y = vy;                                                                           \
        const size_t x_size = sizeof(T);                                                            \
        __m256 lo0 = _mm256_setzero_ps(), hi0 = lo0, lo1 = lo0, hi1 = lo0;                          \
        __m256 lo2 = lo0, hi2 = lo0, lo3 = lo0, hi3 = lo0;                                          \
        struct ggml__rows_prefetch ahead = ggml__rows_prefetch_init(vx, bx, nr, n / 16);            \
        int i = 0;                                                                                  \
        for (; i + 16 <= n; i += 16) {                                                              \
            __m256 ylo, yhi, xlo, xhi;                                                              \
            ggml__rows_prefetch_step(&ahead);                                                       \
            load16_y(y + i, &ylo, &yhi);                                                            \
            FOR_EACH_ROW(FLOAT_ROW_STEP, load16)                                                    \
        }                                                                                           \
        for (int r = 0; r < nr; r++) {                                                              \
            const T *row = (const T *) (const void *) (x + (size_t) r * bx);                        \
            float tail = 0.0f;                                                                      \
            for (int j = i; j < n; j++)                                                             \
                tail += scalar(row[j]) * scalar_y(y[j]);                                            \
            const __m256 acc = r == 0 ? _mm256_add_ps(lo0, hi0)                                     \
                             : r == 1 ? _mm256_add_ps(lo1, hi1)                                     \
                             : r == 2 ? _mm256_add_ps(lo2, hi2)                                     \
                                      : _mm256_add_ps(lo3, hi3);                                    \
            s[r] = hsum_ps(acc) + tail;                                                             \
        }                                                                                           \
    }

/* One step of row r in FLOAT_ROWS_KERNEL: values i..i+15 of the row (x_size bytes each) times ylo, yhi. */
#define FLOAT_ROW_STEP(r, load16)                                                             \
    if ((r) < nr) {                                                                           \
        load16((const void *) (x + (size_t) (r) * bx + (size_t) i * x_size), &xlo, &xhi);     \
        lo##r = _mm256_fmadd_ps(xlo, ylo, lo##r);                                             \
        hi##r = _mm256_fmadd_ps(xhi, yhi, hi##r);                                             \
    }

FLOAT_ROWS_KERNEL(rows_f32, float, load16_f32, f32_value, float, load16_f32, f32_value)
FLOAT_ROWS_KERNEL(rows_bf16, uint16_t, load16_bf16, bf16_value, uint16_t, load16_bf16, bf16_value)
FLOAT_ROWS_KERNEL(rows_f16_by_f32, ggml_fp16_t, load16_f16, f16_value, float, load16_f32, f32_value)

/*
 * Whether a multi-row call takes its rows one by one (the single-row
 * loops, one sequential stream per thread): rows whose group spans more
 * than PREFETCH_ROWS_MAX_BYTES, which the hardware prefetchers follow
 * alone.  On Zen 5 (2 threads, GGML_CPU_ISA=avx2, A/B medians of 105)
 * 4096 x 4096 F16 weights by a vector took 0.73 ms so against 0.94 four
 * rows at a time, 11008 x 4096 2.39 against 2.74; rows of 2048 F16 values
 * (16 KiB a group of four) keep the rows kernel and its prefetch.
 */
static inline bool rows_one_by_one(int n, size_t value_size, int nr)
{
    return nr == 1 || (size_t) nr * (size_t) n * value_size > PREFETCH_ROWS_MAX_BYTES;
}

void ggml__avx2_vec_dot_rows_f32(int n, float *s, const void *vx, size_t bx, const void *vy, int nr)
{
    if (rows_one_by_one(n, sizeof(float), nr)) {
        for (int r = 0; r < nr; r++)
            ggml__avx2_vec_dot_f32(n, s + r, 0, (const char *) vx + (size_t) r * bx, 0, vy, 0, 1);
        return;
    }
    EXPAND_ROWS(rows_f32)
}

void ggml__avx2_vec_dot_rows_bf16(int n, float *s, const void *vx, size_t bx, const void *vy, int nr)
{
    if (rows_one_by_one(n, sizeof(uint16_t), nr)) {
        for (int r = 0; r < nr; r++)
            ggml__avx2_vec_dot_bf16(n, s + r, 0, (const char *) vx + (size_t) r * bx, 0, vy, 0, 1);
        return;
    }
    EXPAND_ROWS(rows_bf16)
}

/* F16 rows by F32 values: half the widenings of F16 by F16.  Rows taken
   one by one (rows_one_by_one) go through the single-row loop, whose four
   accumulators hide the latency of the multiply-adds where the rows
   kernel's two would not. */
static float f16_row_by_f32(int n, const void *vx, const float *vy)
{
    float sum, *s = &sum;
    DOT_FLOAT_ROWS(ggml_fp16_t, load_f16, f16_value, float, load_f32, f32_value);
    return sum;
}

void ggml__avx2_rows_by_f32_f16(int n, float *s, const void *vx, size_t bx, const float *vy, int nr)
{
    if (rows_one_by_one(n, sizeof(ggml_fp16_t), nr)) {
        for (int r = 0; r < nr; r++)
            s[r] = f16_row_by_f32(n, (const char *) vx + (size_t) r * bx, vy);
        return;
    }
    EXPAND_ROWS(rows_f16_by_f32)
}

/*
 * The rows kernels' hooks (qrows.h).  Q8_0: dot_i8's lanes.  The 4- and
 * 5-bit codes: vpmaddubsw's pair sums u * a, at most 2 * 31 * 127 in
 * magnitude, less those of the bias (2 * 16 * 127 at most) for the
 * symmetric formats, so inside 16 bits; vpmaddwd by ones widens them.
 */
QROWS_INLINE __m256i qrows_block_start(enum ggml_type t, __m256i ya)
{
    if (t == GGML_TYPE_Q8_0 || ggml__code_bias(t) == 0)
        return _mm256_setzero_si256();
    return _mm256_maddubs_epi16(_mm256_set1_epi8((char) ggml__code_bias(t)), ya);
}

QROWS_INLINE __m256i qrows_row_sums(enum ggml_type t, __m256i codes, __m256i ya, __m256i start)
{
    if (t == GGML_TYPE_Q8_0)
        return dot_i8(codes, ya);
    __m256i pairs = _mm256_maddubs_epi16(codes, ya);
    if (ggml__code_bias(t) != 0)
        pairs = _mm256_sub_epi16(pairs, start);
    return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
}
