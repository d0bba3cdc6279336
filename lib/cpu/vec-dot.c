/*
 * vec-dot.c - what the CPU backend knows about each type: row conversions
 * (ggml_cpu_fp32_to_*, ggml_cpu_*_to_fp32), dot products, and the table
 * behind ggml_get_type_traits_cpu().
 *
 * These are portable C written so that GCC and Clang vectorize them at
 * -O2: the work is done in steps of LANES elements with branch-free
 * bodies, and a scalar loop finishes the tail.  SIMD variants for
 * particular instruction sets can later replace the table's entries.
 *
 * Conversions give exactly the results of the scalar conversions of
 * fp16-impl.h (ggml_fp32_to_fp16() and friends), bit for bit, with one
 * assumption the scalar code does not make: fp32 -> fp16 rounds results in
 * the fp16 subnormal range with a floating-point addition, so it needs the
 * default rounding mode (round to nearest).
 *
 * Dot products follow ggml's block formats: a quantized row is multiplied
 * with a row of its vec_dot_type (Q8_0 or Q8_1) block by block in integer
 * arithmetic, and each block's integer sum is scaled by the two blocks'
 * scales.  Float rows are multiplied in single precision with 16 partial
 * sums.
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"
#include "vec-dot.h"

/* Elements per step of the vectorizable conversion loops. */
#define LANES 16

/* ----------------------------------------------------- one-lane conversions */

/*
 * The lane functions are branch-free so that loops over them vectorize.
 * A choice involving a floating-point result is written with select_u32()
 * rather than ?: because the compiler will not turn a conditional
 * floating-point operation into an unconditional one (it might trap).
 */
static inline uint32_t select_u32(bool cond, uint32_t if_true, uint32_t if_false)
{
    const uint32_t mask = 0u - (uint32_t) cond;
    return (if_true & mask) | (if_false & ~mask);
}

/*
 * binary16 -> binary32.  Normal numbers are rebiased in place; infinity
 * and NaN get the all-ones exponent (NaN also the quiet bit).  A subnormal
 * is its 10-bit integer m times 2^-24: converting m to float is exact and
 * normalizes it, and subtracting 24 from the exponent field scales it.
 */
static inline float f16_to_f32_lane(uint16_t h)
{
    const uint32_t em = h & 0x7fffu;
    const uint32_t sign = (uint32_t) (h & 0x8000u) << 16;
    const uint32_t normal = (em << 13) + (112u << 23);
    const uint32_t special = ((em << 13) + (224u << 23)) | (em > 0x7c00u ? 0x00400000u : 0u);
    const uint32_t tiny = select_u32(em == 0, 0u, ggml__fp32_bits((float) (int32_t) em) - (24u << 23));
    uint32_t bits = em >= 0x7c00u ? special : normal;
    bits = select_u32(em < 0x0400u, tiny, bits);
    return ggml__fp32_from_bits(bits | sign);
}

/*
 * binary32 -> binary16, round to nearest even.  Results in the fp16
 * subnormal range come from adding 0.5f: the sum's last mantissa bit is
 * then worth 2^-24, the fp16 subnormal step, so the addition rounds
 * exactly as required and the low bits of the sum are the result.
 * Everything else is the integer rounding of fp16-impl.h.
 */
static inline uint16_t f32_to_f16_lane(float f)
{
    const uint32_t w = ggml__fp32_bits(f);
    const uint32_t sign = (w >> 16) & 0x8000u;
    const uint32_t a = w & 0x7fffffffu;
    const uint32_t r = a - (112u << 23);
    const uint32_t normal = (r + 0x0fffu + ((r >> 13) & 1u)) >> 13;
    const uint32_t subnormal = ggml__fp32_bits(ggml__fp32_from_bits(a) + 0.5f) - 0x3f000000u;
    uint32_t h = select_u32(a < 0x38800000u, subnormal, normal);
    h = select_u32(a >= 0x477ff000u, 0x7c00u, h);     /* rounds past 65504: infinity */
    h = select_u32(a > 0x7f800000u, 0x7e00u, h);      /* NaN */
    return (uint16_t) (h | sign);
}

/* binary32 -> bfloat16, round to nearest even; NaN stays NaN (quiet). */
static inline uint16_t f32_to_bf16_lane(float f)
{
    const uint32_t w = ggml__fp32_bits(f);
    const uint32_t rounded = (w + 0x7fffu + ((w >> 16) & 1u)) >> 16;
    const uint32_t nan = (w >> 16) | 0x0040u;
    return (uint16_t) select_u32((w & 0x7fffffffu) > 0x7f800000u, nan, rounded);
}

static inline float bf16_to_f32_lane(uint16_t h)
{
    return ggml__fp32_from_bits((uint32_t) h << 16);
}

/* Truncated toward zero, saturated; NaN gives 0 (ggml__float_to_int). */
static inline int32_t f32_to_i32_lane(float f)
{
    return (int32_t) ggml__float_to_int(f, INT32_MIN, INT32_MAX);
}

/* ------------------------------------------------------- row conversions */

/* The loops below share one shape: LANES at a time, then the tail. */
#define CONVERT_ROW(n, expr)                                  \
    do {                                                      \
        int64_t i_ = 0;                                       \
        for (; i_ + LANES <= (n); i_ += LANES)                \
            for (int l_ = 0; l_ < LANES; l_++) {              \
                const int64_t i = i_ + l_;                    \
                expr;                                         \
            }                                                 \
        for (; i_ < (n); i_++) {                              \
            const int64_t i = i_;                             \
            expr;                                             \
        }                                                     \
    } while (0)

static void f16_to_f32_row(const uint16_t *restrict x, float *restrict y, int64_t n)
{
    CONVERT_ROW(n, y[i] = f16_to_f32_lane(x[i]));
}

static void f32_to_f16_row(const float *restrict x, uint16_t *restrict y, int64_t n)
{
    CONVERT_ROW(n, y[i] = f32_to_f16_lane(x[i]));
}

static void bf16_to_f32_row(const uint16_t *restrict x, float *restrict y, int64_t n)
{
    CONVERT_ROW(n, y[i] = bf16_to_f32_lane(x[i]));
}

static void f32_to_bf16_row(const float *restrict x, uint16_t *restrict y, int64_t n)
{
    CONVERT_ROW(n, y[i] = f32_to_bf16_lane(x[i]));
}

static void f32_to_i32_row(const float *restrict x, int32_t *restrict y, int64_t n)
{
    CONVERT_ROW(n, y[i] = f32_to_i32_lane(x[i]));
}

/* As fp16.c: n <= 0 does nothing; NULL with work to do is reported. */
static bool row_args_ok(const void *x, const void *y, int64_t n, const char *func)
{
    if (n > 0 && (x == NULL || y == NULL)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "NULL %s with n = %" PRId64,
                     x == NULL ? "source" : "destination", n);
        return false;
    }
    return n > 0;
}

void ggml_cpu_fp32_to_fp32(const float *x, float *y, int64_t n)
{
    if (row_args_ok(x, y, n, __func__) && x != y)
        memmove(y, x, (size_t) n * sizeof *y);
}

void ggml_cpu_fp32_to_i32(const float *x, int32_t *y, int64_t n)
{
    if (row_args_ok(x, y, n, __func__))
        f32_to_i32_row(x, y, n);
}

void ggml_cpu_fp32_to_fp16(const float *x, ggml_fp16_t *y, int64_t n)
{
    if (row_args_ok(x, y, n, __func__))
        f32_to_f16_row(x, y, n);
}

void ggml_cpu_fp16_to_fp32(const ggml_fp16_t *x, float *y, int64_t n)
{
    if (row_args_ok(x, y, n, __func__))
        f16_to_f32_row(x, y, n);
}

void ggml_cpu_fp32_to_bf16(const float *x, ggml_bf16_t *y, int64_t n)
{
    /* ggml_bf16_t is a struct holding one uint16_t: same size and layout */
    if (row_args_ok(x, y, n, __func__))
        f32_to_bf16_row(x, (uint16_t *) (void *) y, n);
}

void ggml_cpu_bf16_to_fp32(const ggml_bf16_t *x, float *y, int64_t n)
{
    if (row_args_ok(x, y, n, __func__))
        bf16_to_f32_row((const uint16_t *) (const void *) x, y, n);
}

/* The from_float members: exactly ggml_from_float_t, no argument checks
   (the CPU backend calls them with valid rows). */
static void from_float_f32(const float *restrict x, void *restrict y, int64_t k)
{
    memcpy(y, x, (size_t) k * sizeof *x);
}

static void from_float_f16(const float *restrict x, void *restrict y, int64_t k)
{
    f32_to_f16_row(x, y, k);
}

static void from_float_bf16(const float *restrict x, void *restrict y, int64_t k)
{
    f32_to_bf16_row(x, y, k);
}

static void from_float_i32(const float *restrict x, void *restrict y, int64_t k)
{
    f32_to_i32_row(x, y, k);
}

/* ------------------------------------------------------ float dot products */

/* Every vec_dot here computes one dot product: nrc is 1 and the strides
   of further rows are unused. */
#define ONE_ROW_ONLY() ((void) bs, (void) bx, (void) by, (void) nrc)

/*
 * The float dot products share one shape: two groups of 8 partial sums
 * (four vector registers of SSE width, enough to hide the adder's
 * latency), then the tail, then a fixed pairwise reduction.
 */
#define DOT_ROW(n, load_x, load_y)                                            \
    do {                                                                      \
        float lo_[8] = { 0 }, hi_[8] = { 0 };                                 \
        int64_t i_ = 0;                                                       \
        for (; i_ + 16 <= (n); i_ += 16) {                                    \
            for (int l_ = 0; l_ < 8; l_++)                                    \
                lo_[l_] += load_x(i_ + l_) * load_y(i_ + l_);                 \
            for (int l_ = 0; l_ < 8; l_++)                                    \
                hi_[l_] += load_x(i_ + 8 + l_) * load_y(i_ + 8 + l_);         \
        }                                                                     \
        float tail_ = 0.0f;                                                   \
        for (; i_ < (n); i_++)                                                \
            tail_ += load_x(i_) * load_y(i_);                                 \
        for (int l_ = 0; l_ < 8; l_++)                                        \
            lo_[l_] += hi_[l_];                                               \
        for (int w_ = 4; w_ >= 1; w_ /= 2)                                    \
            for (int l_ = 0; l_ < w_; l_++)                                   \
                lo_[l_] += lo_[l_ + w_];                                      \
        *s = lo_[0] + tail_;                                                  \
    } while (0)

void ggml__vec_dot_f32(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                       const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const float *x = vx, *y = vy;
#define LOAD_X(i) x[i]
#define LOAD_Y(i) y[i]
    DOT_ROW(n, LOAD_X, LOAD_Y);
#undef LOAD_X
#undef LOAD_Y
}

void ggml__vec_dot_f16(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                       const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const uint16_t *x = vx, *y = vy;
#define LOAD_X(i) f16_to_f32_lane(x[i])
#define LOAD_Y(i) f16_to_f32_lane(y[i])
    DOT_ROW(n, LOAD_X, LOAD_Y);
#undef LOAD_X
#undef LOAD_Y
}

void ggml__vec_dot_bf16(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                        const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const uint16_t *x = vx, *y = vy;
#define LOAD_X(i) bf16_to_f32_lane(x[i])
#define LOAD_Y(i) bf16_to_f32_lane(y[i])
    DOT_ROW(n, LOAD_X, LOAD_Y);
#undef LOAD_X
#undef LOAD_Y
}

/* -------------------------------------------------- quantized dot products */

/*
 * Each function takes n values (a multiple of 32) of a quantized row x and
 * of a row y in the type's vec_dot_type, and adds up, block by block,
 *     d_x * d_y * sum_j q_x[j] * q_y[j]        (symmetric formats)
 *   + m_x * s_y                                (formats with a minimum)
 * where s_y = d_y * sum_j q_y[j] is stored in the Q8_1 block.  The sums
 * over j are exact integers.
 */

static inline uint32_t load_qh(const uint8_t qh[4])
{
    uint32_t v;
    memcpy(&v, qh, sizeof v);   /* little-endian, as everywhere in ggml */
    return v;
}

static void vec_dot_q4_0_q8_0(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                              const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const block_q4_0 *x = vx;
    const block_q8_0 *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK4_0; b++) {
        int32_t isum = 0;
        for (int j = 0; j < QK4_0 / 2; j++) {
            const int lo = (x[b].qs[j] & 0x0f) - 8;
            const int hi = (x[b].qs[j] >> 4) - 8;
            isum += lo * y[b].qs[j] + hi * y[b].qs[j + QK4_0 / 2];
        }
        sum += (float) isum * ggml__fp16_to_fp32(x[b].d) * ggml__fp16_to_fp32(y[b].d);
    }
    *s = sum;
}

static void vec_dot_q4_1_q8_1(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                              const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const block_q4_1 *x = vx;
    const block_q8_1 *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK4_1; b++) {
        int32_t isum = 0;
        for (int j = 0; j < QK4_1 / 2; j++)
            isum += (x[b].qs[j] & 0x0f) * y[b].qs[j] + (x[b].qs[j] >> 4) * y[b].qs[j + QK4_1 / 2];
        sum += ggml__fp16_to_fp32(x[b].d) * ggml__fp16_to_fp32(y[b].d) * (float) isum +
               ggml__fp16_to_fp32(x[b].m) * ggml__fp16_to_fp32(y[b].s);
    }
    *s = sum;
}

/* Value j (0..31) of a 5-bit block without its offset: 0..31. */
#define Q5_VALUE(qs, qh, j) \
    ((((j) < 16 ? (qs)[(j)] & 0x0f : (qs)[(j) - 16] >> 4)) | (int) ((((qh) >> (j)) & 1u) << 4))

static void vec_dot_q5_0_q8_0(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                              const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const block_q5_0 *x = vx;
    const block_q8_0 *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK5_0; b++) {
        const uint32_t qh = load_qh(x[b].qh);
        int32_t isum = 0;
        for (int j = 0; j < QK5_0; j++)
            isum += (Q5_VALUE(x[b].qs, qh, j) - 16) * y[b].qs[j];
        sum += (float) isum * ggml__fp16_to_fp32(x[b].d) * ggml__fp16_to_fp32(y[b].d);
    }
    *s = sum;
}

static void vec_dot_q5_1_q8_1(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                              const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const block_q5_1 *x = vx;
    const block_q8_1 *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK5_1; b++) {
        const uint32_t qh = load_qh(x[b].qh);
        int32_t isum = 0;
        for (int j = 0; j < QK5_1; j++)
            isum += Q5_VALUE(x[b].qs, qh, j) * y[b].qs[j];
        sum += ggml__fp16_to_fp32(x[b].d) * ggml__fp16_to_fp32(y[b].d) * (float) isum +
               ggml__fp16_to_fp32(x[b].m) * ggml__fp16_to_fp32(y[b].s);
    }
    *s = sum;
}

static void vec_dot_q8_0_q8_0(int n, float *restrict s, size_t bs, const void *restrict vx, size_t bx,
                              const void *restrict vy, size_t by, int nrc)
{
    ONE_ROW_ONLY();
    const block_q8_0 *x = vx;
    const block_q8_0 *y = vy;
    float sum = 0.0f;
    for (int b = 0; b < n / QK8_0; b++) {
        int32_t isum = 0;
        for (int j = 0; j < QK8_0; j++)
            isum += x[b].qs[j] * y[b].qs[j];
        sum += (float) isum * ggml__fp16_to_fp32(x[b].d) * ggml__fp16_to_fp32(y[b].d);
    }
    *s = sum;
}

/* ------------------------------------------------------------ the table */

/*
 * Types without an entry (zeroed: no from_float, no vec_dot, vec_dot_type
 * F32, nrows 0) are those the CPU backend has no kernels for yet, the
 * integer types other than I32, and the removed slots.  Q8_1 and I32 only
 * have an encoder: they are what other rows are converted to.
 */
static const struct ggml_type_traits_cpu type_traits_cpu[GGML_TYPE_COUNT] = {
    [GGML_TYPE_F32] = {
        .from_float = from_float_f32,
        .vec_dot = ggml__vec_dot_f32,
        .vec_dot_type = GGML_TYPE_F32,
        .nrows = 1,
    },
    [GGML_TYPE_F16] = {
        .from_float = from_float_f16,
        .vec_dot = ggml__vec_dot_f16,
        .vec_dot_type = GGML_TYPE_F16,
        .nrows = 1,
    },
    [GGML_TYPE_BF16] = {
        .from_float = from_float_bf16,
        .vec_dot = ggml__vec_dot_bf16,
        .vec_dot_type = GGML_TYPE_BF16,
        .nrows = 1,
    },
    [GGML_TYPE_Q4_0] = {
        .from_float = ggml__quantize_row_q4_0_ref,
        .vec_dot = vec_dot_q4_0_q8_0,
        .vec_dot_type = GGML_TYPE_Q8_0,
        .nrows = 1,
    },
    [GGML_TYPE_Q4_1] = {
        .from_float = ggml__quantize_row_q4_1_ref,
        .vec_dot = vec_dot_q4_1_q8_1,
        .vec_dot_type = GGML_TYPE_Q8_1,
        .nrows = 1,
    },
    [GGML_TYPE_Q5_0] = {
        .from_float = ggml__quantize_row_q5_0_ref,
        .vec_dot = vec_dot_q5_0_q8_0,
        .vec_dot_type = GGML_TYPE_Q8_0,
        .nrows = 1,
    },
    [GGML_TYPE_Q5_1] = {
        .from_float = ggml__quantize_row_q5_1_ref,
        .vec_dot = vec_dot_q5_1_q8_1,
        .vec_dot_type = GGML_TYPE_Q8_1,
        .nrows = 1,
    },
    [GGML_TYPE_Q8_0] = {
        .from_float = ggml__quantize_row_q8_0_ref,
        .vec_dot = vec_dot_q8_0_q8_0,
        .vec_dot_type = GGML_TYPE_Q8_0,
        .nrows = 1,
    },
    [GGML_TYPE_Q8_1] = {
        .from_float = ggml__quantize_row_q8_1_ref,
        .vec_dot_type = GGML_TYPE_Q8_1,
        .nrows = 1,
    },
    [GGML_TYPE_I32] = {
        .from_float = from_float_i32,
    },
};

/*
 * Arguments: type  any value of enum ggml_type.
 * Returns:   the type's CPU traits (a zeroed entry for a type without CPU
 *            kernels or a removed slot), or NULL after logging one error
 *            when type lies outside the enumeration.
 */
const struct ggml_type_traits_cpu *ggml_get_type_traits_cpu(enum ggml_type type)
{
    if ((int) type < 0 || (int) type >= GGML_TYPE_COUNT) {
        ggml__error("invalid type %d", (int) type);
        return NULL;
    }
    return &type_traits_cpu[type];
}
