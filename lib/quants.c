/*
 * quants.c - reference quantizers for the 32-value block formats, and the
 * public quantization entry points.
 *
 * Bit-identity.  Model files made by this library must be byte-for-byte
 * the files ggml makes, so each reference quantizer repeats ggml's float
 * arithmetic exactly: the same comparisons when searching the block's
 * extreme values (they decide which of several equal magnitudes wins, and
 * what a NaN does), the same single-precision operations in the same order,
 * and the same conversion of the scaled value to an integer (truncation of
 * x + 0.5 or x + 8.5, or roundf, as noted at each type).  This file must be
 * compiled without -ffast-math and without floating-point contraction
 * (GCC's default in ISO C mode), or results may change in the last bit.
 *
 * Non-finite input.  C leaves converting NaN, an infinity or a value
 * beyond the integer type undefined, and ggml converts its scaled values
 * without a check (only NaN or infinite input, or a block whose scale
 * overflows, gets there).  Here every conversion goes through
 * ggml__float_to_int into the range of quant levels it stores: such a
 * value saturates to the lowest or highest level and NaN gives level 0.
 * Inside that range this is C's truncation, so finite input quantizes
 * exactly as ggml quantizes it.
 */
#include "config.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "quants-impl.h"

/* GCC does not contract in ISO C mode; clang needs to be told. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* ------------------------------------------------------------ conversions */

/* The quant level of a scaled value v, truncated, in [lo, hi]. */
static inline int level(float v, int lo, int hi)
{
    return ggml__trunc_level(v, lo, hi);
}

/*
 * Checks a row call.  Returns the number of blocks, or -1 after logging
 * (as func) when k is negative or not a multiple of qk, or a pointer is
 * NULL while there is work to do.
 */
int64_t ggml__quant_row_blocks(const void *x, const void *y, int64_t k, int64_t qk, const char *func)
{
    if (k < 0 || k % qk != 0) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "row length %" PRId64 " is not a multiple of the block size %" PRId64, k, qk);
        return -1;
    }
    if (k > 0 && (x == NULL || y == NULL)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "NULL %s",
                     x == NULL ? "source" : "destination");
        return -1;
    }
    return k / qk;
}

static inline int64_t row_blocks(const void *x, const void *y, int64_t k, int64_t qk, const char *func)
{
    return ggml__quant_row_blocks(x, y, k, qk, func);
}

/* ------------------------------------------------------- symmetric 4/5-bit */

/*
 * The value of largest magnitude, first one wins on ties; NaN never wins.
 * Its sign matters: the scale is chosen so that this value maps exactly to
 * the most negative quant (-8 or -16), giving the other side one more level.
 */
static inline float signed_absmax(const float *x, int n)
{
    float amax = 0.0f;
    for (int j = 0; j < n; j++) {
        const float a = fabsf(x[j]);
        amax = a > amax ? a : amax;
    }
    if (amax == 0.0f)
        return 0.0f;
    int at = 0;
    while (fabsf(x[at]) != amax)
        at++;
    return x[at];
}

void ggml__quantize_row_q4_0_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    int64_t nb = row_blocks(x, vy, k, QK4_0, __func__);
    block_q4_0 *y = vy;

    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK4_0;
        const float max = signed_absmax(xb, QK4_0);
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;

        y[i].d = ggml__fp32_to_fp16(d);
        for (int j = 0; j < QK4_0 / 2; j++) {
            /* trunc(v + 8.5) rounds v half-up into 0..16; 16 is clamped */
            const uint8_t lo = (uint8_t) level(xb[j] * id + 8.5f, 0, 15);
            const uint8_t hi = (uint8_t) level(xb[j + QK4_0 / 2] * id + 8.5f, 0, 15);
            y[i].qs[j] = (uint8_t) (lo | (hi << 4));
        }
    }
}

void ggml__quantize_row_q5_0_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    int64_t nb = row_blocks(x, vy, k, QK5_0, __func__);
    block_q5_0 *y = vy;

    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK5_0;
        const float max = signed_absmax(xb, QK5_0);
        const float d = max / -16.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        uint32_t qh = 0;

        y[i].d = ggml__fp32_to_fp16(d);
        for (int j = 0; j < QK5_0 / 2; j++) {
            const uint8_t lo = (uint8_t) level(xb[j] * id + 16.5f, 0, 31);
            const uint8_t hi = (uint8_t) level(xb[j + QK5_0 / 2] * id + 16.5f, 0, 31);
            y[i].qs[j] = (uint8_t) ((lo & 0x0fu) | ((hi & 0x0fu) << 4));
            qh |= (uint32_t) ((lo >> 4) & 1u) << j;
            qh |= (uint32_t) ((hi >> 4) & 1u) << (j + QK5_0 / 2);
        }
        memcpy(y[i].qh, &qh, sizeof qh);
    }
}

/* ------------------------------------------------------ 4/5-bit with a min */

/* Smallest and largest values of a block (NaN is skipped by both tests). */
static inline void block_min_max(const float *x, int n, float *minp, float *maxp)
{
    float min = FLT_MAX;
    float max = -FLT_MAX;
    for (int j = 0; j < n; j++) {
        min = x[j] < min ? x[j] : min;
        max = x[j] > max ? x[j] : max;
    }
    *minp = min;
    *maxp = max;
}

void ggml__quantize_row_q4_1_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    int64_t nb = row_blocks(x, vy, k, QK4_1, __func__);
    block_q4_1 *y = vy;

    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK4_1;
        float min, max;
        block_min_max(xb, QK4_1, &min, &max);
        const float d = (max - min) / 15.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;

        y[i].d = ggml__fp32_to_fp16(d);
        y[i].m = ggml__fp32_to_fp16(min);
        for (int j = 0; j < QK4_1 / 2; j++) {
            const uint8_t lo = (uint8_t) level((xb[j] - min) * id + 0.5f, 0, 15);
            const uint8_t hi = (uint8_t) level((xb[j + QK4_1 / 2] - min) * id + 0.5f, 0, 15);
            y[i].qs[j] = (uint8_t) (lo | (hi << 4));
        }
    }
}

void ggml__quantize_row_q5_1_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    int64_t nb = row_blocks(x, vy, k, QK5_1, __func__);
    block_q5_1 *y = vy;

    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK5_1;
        float min, max;
        block_min_max(xb, QK5_1, &min, &max);
        const float d = (max - min) / 31.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        uint32_t qh = 0;

        y[i].d = ggml__fp32_to_fp16(d);
        y[i].m = ggml__fp32_to_fp16(min);
        for (int j = 0; j < QK5_1 / 2; j++) {
            /* upstream does not clamp: finite input never exceeds 31 */
            const unsigned lo = (unsigned) level((xb[j] - min) * id + 0.5f, 0, 31);
            const unsigned hi = (unsigned) level((xb[j + QK5_1 / 2] - min) * id + 0.5f, 0, 31);
            y[i].qs[j] = (uint8_t) ((lo & 0x0fu) | ((hi & 0x0fu) << 4));
            qh |= ((lo >> 4) & 1u) << j;
            qh |= ((hi >> 4) & 1u) << (j + QK5_1 / 2);
        }
        memcpy(y[i].qh, &qh, sizeof qh);
    }
}

/* ------------------------------------------------------------------ 8-bit */

/*
 * Largest magnitude, computed as upstream's MAX(amax, |x|) macro does:
 * a NaN replaces the running value and is itself replaced by the next
 * element, so only a NaN in the last position survives.
 */
static inline float block_absmax(const float *x, int n)
{
    float amax = 0.0f;
    for (int j = 0; j < n; j++) {
        const float a = fabsf(x[j]);
        amax = amax > a ? amax : a;
    }
    return amax;
}

void ggml__quantize_row_q8_0_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    int64_t nb = row_blocks(x, vy, k, QK8_0, __func__);
    block_q8_0 *y = vy;

    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK8_0;
        const float d = block_absmax(xb, QK8_0) / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;

        y[i].d = ggml__fp32_to_fp16(d);
        for (int j = 0; j < QK8_0; j++)
            y[i].qs[j] = (int8_t) ggml__round_level(xb[j] * id, INT8_MIN, INT8_MAX);   /* halves away from zero */
    }
}

void ggml__quantize_row_q8_1_ref(const float *restrict x, void *restrict vy, int64_t k)
{
    int64_t nb = row_blocks(x, vy, k, QK8_1, __func__);
    block_q8_1 *y = vy;

    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK8_1;
        const float d = block_absmax(xb, QK8_1) / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        int sum = 0;

        y[i].d = ggml__fp32_to_fp16(d);
        for (int j = 0; j < QK8_1; j++) {
            y[i].qs[j] = (int8_t) ggml__round_level(xb[j] * id, INT8_MIN, INT8_MAX);
            sum += y[i].qs[j];
        }
        /* the sum is scaled by the unrounded d, in single precision */
        y[i].s = ggml__fp32_to_fp16((float) sum * d);
    }
}

/* ---------------------------------------------------------- dequantizers */

void ggml__dequantize_row_q4_0(const void *restrict vx, float *restrict y, int64_t k)
{
    int64_t nb = row_blocks(vx, y, k, QK4_0, __func__);
    const block_q4_0 *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        float *yb = y + i * QK4_0;
        for (int j = 0; j < QK4_0 / 2; j++) {
            yb[j] = (float) ((x[i].qs[j] & 0x0f) - 8) * d;
            yb[j + QK4_0 / 2] = (float) ((x[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void ggml__dequantize_row_q4_1(const void *restrict vx, float *restrict y, int64_t k)
{
    int64_t nb = row_blocks(vx, y, k, QK4_1, __func__);
    const block_q4_1 *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        const float m = ggml__fp16_to_fp32(x[i].m);
        float *yb = y + i * QK4_1;
        for (int j = 0; j < QK4_1 / 2; j++) {
            yb[j] = (float) (x[i].qs[j] & 0x0f) * d + m;
            yb[j + QK4_1 / 2] = (float) (x[i].qs[j] >> 4) * d + m;
        }
    }
}

/* The 5-bit value j of a q5 block: four low bits from qs, bit 4 from qh. */
static inline int q5_value(const uint8_t *qs, uint32_t qh, int j)
{
    const int low = j < 16 ? (qs[j] & 0x0f) : (qs[j - 16] >> 4);
    return low | (int) (((qh >> j) & 1u) << 4);
}

void ggml__dequantize_row_q5_0(const void *restrict vx, float *restrict y, int64_t k)
{
    int64_t nb = row_blocks(vx, y, k, QK5_0, __func__);
    const block_q5_0 *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        uint32_t qh;
        memcpy(&qh, x[i].qh, sizeof qh);
        for (int j = 0; j < QK5_0; j++)
            y[i * QK5_0 + j] = (float) (q5_value(x[i].qs, qh, j) - 16) * d;
    }
}

void ggml__dequantize_row_q5_1(const void *restrict vx, float *restrict y, int64_t k)
{
    int64_t nb = row_blocks(vx, y, k, QK5_1, __func__);
    const block_q5_1 *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        const float m = ggml__fp16_to_fp32(x[i].m);
        uint32_t qh;
        memcpy(&qh, x[i].qh, sizeof qh);
        for (int j = 0; j < QK5_1; j++)
            y[i * QK5_1 + j] = (float) q5_value(x[i].qs, qh, j) * d + m;
    }
}

void ggml__dequantize_row_q8_0(const void *restrict vx, float *restrict y, int64_t k)
{
    int64_t nb = row_blocks(vx, y, k, QK8_0, __func__);
    const block_q8_0 *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK8_0; j++)
            y[i * QK8_0 + j] = (float) x[i].qs[j] * d;
    }
}

void ggml__dequantize_row_q8_1(const void *restrict vx, float *restrict y, int64_t k)
{
    int64_t nb = row_blocks(vx, y, k, QK8_1, __func__);
    const block_q8_1 *x = vx;

    for (int64_t i = 0; i < nb; i++) {
        const float d = ggml__fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK8_1; j++)
            y[i * QK8_1 + j] = (float) x[i].qs[j] * d;
    }
}

/* ------------------------------------------------------- public interface */

/*
 * Lookup tables that some quantizers build on first use are created and
 * released under this lock (the IQ1, IQ2 and IQ3 quantizers build theirs
 * on first use too); init and free may be called any number of times from
 * any thread.
 */
static pthread_mutex_t quant_lock = PTHREAD_MUTEX_INITIALIZER;

void ggml_quantize_init(enum ggml_type type)
{
    if (!ggml__type_is_valid(type)) {
        ggml__error("invalid type %d", (int) type);
        return;
    }
    pthread_mutex_lock(&quant_lock);
    if (type == GGML_TYPE_IQ1_S || type == GGML_TYPE_IQ1_M)
        ggml__iq1_tables_init();
    if (type == GGML_TYPE_IQ2_XXS || type == GGML_TYPE_IQ2_XS || type == GGML_TYPE_IQ2_S)
        ggml__iq2_tables_init(type);
    if (type == GGML_TYPE_IQ3_XXS || type == GGML_TYPE_IQ3_S)
        ggml__iq3_tables_init();
    pthread_mutex_unlock(&quant_lock);
}

void ggml_quantize_free(void)
{
    pthread_mutex_lock(&quant_lock);
    ggml__iq1_tables_free();
    ggml__iq2_tables_free();
    ggml__iq3_tables_free();
    pthread_mutex_unlock(&quant_lock);
}

bool ggml_quantize_requires_imatrix(enum ggml_type type)
{
    return type == GGML_TYPE_IQ2_XXS || type == GGML_TYPE_IQ2_XS || type == GGML_TYPE_IQ1_S;
}

static void f32_copy_row(const float *restrict x, void *restrict y, int64_t k)
{
    memcpy(y, x, (size_t) k * sizeof(float));
}

static void f16_row(const float *restrict x, void *restrict y, int64_t k)
{
    ggml_fp16_t *h = y;
    for (int64_t i = 0; i < k; i++)
        h[i] = ggml__fp32_to_fp16(x[i]);
}

static void bf16_row(const float *restrict x, void *restrict y, int64_t k)
{
    ggml_bf16_t *h = y;
    for (int64_t i = 0; i < k; i++)
        h[i] = ggml__fp32_to_bf16(x[i]);
}

/* The row quantizer ggml_quantize_chunk uses for type, or NULL. */
static ggml_from_float_t chunk_quantizer(enum ggml_type type)
{
    switch (type) {
    case GGML_TYPE_F32:  return f32_copy_row;
    case GGML_TYPE_F16:  return f16_row;
    case GGML_TYPE_BF16: return bf16_row;
    case GGML_TYPE_Q4_0: return ggml__quantize_row_q4_0_ref;
    case GGML_TYPE_Q4_1: return ggml__quantize_row_q4_1_ref;
    case GGML_TYPE_Q5_0: return ggml__quantize_row_q5_0_ref;
    case GGML_TYPE_Q5_1: return ggml__quantize_row_q5_1_ref;
    case GGML_TYPE_Q8_0: return ggml__quantize_row_q8_0_ref;
    case GGML_TYPE_Q8_1: return ggml__quantize_row_q8_1_ref;
    case GGML_TYPE_MXFP4: return ggml__quantize_row_mxfp4_ref;
    case GGML_TYPE_NVFP4: return ggml__quantize_row_nvfp4_ref;
    case GGML_TYPE_Q1_0: return ggml__quantize_row_q1_0_ref;
    case GGML_TYPE_Q2_0: return ggml__quantize_row_q2_0_ref;
    case GGML_TYPE_IQ4_NL: return ggml__quantize_row_iq4_nl_ref;
    case GGML_TYPE_Q4_K: return ggml__quantize_row_q4_K_ref;
    case GGML_TYPE_Q5_K: return ggml__quantize_row_q5_K_ref;
    case GGML_TYPE_Q6_K: return ggml__quantize_row_q6_K_ref;
    case GGML_TYPE_Q2_K: return ggml__quantize_row_q2_K_ref;
    case GGML_TYPE_Q3_K: return ggml__quantize_row_q3_K_ref;
    case GGML_TYPE_TQ1_0: return ggml__quantize_row_tq1_0_ref;
    case GGML_TYPE_TQ2_0: return ggml__quantize_row_tq2_0_ref;
    case GGML_TYPE_IQ4_XS: return ggml__quantize_row_iq4_xs_ref;
    case GGML_TYPE_IQ3_XXS: return ggml__quantize_row_iq3_xxs_ref;
    case GGML_TYPE_IQ3_S: return ggml__quantize_row_iq3_s_ref;
    case GGML_TYPE_IQ2_S: return ggml__quantize_row_iq2_s_ref;
    default:             return NULL;
    }
}

/* The quantizer of the formats that use importance weights, or NULL. */
static void (*weighted_chunk_quantizer(enum ggml_type type))(const float *restrict, void *restrict, int64_t,
                                                               int64_t, const float *)
{
    switch (type) {
    case GGML_TYPE_Q4_K: return ggml__quantize_q4_K;
    case GGML_TYPE_Q5_K: return ggml__quantize_q5_K;
    case GGML_TYPE_Q6_K: return ggml__quantize_q6_K;
    case GGML_TYPE_Q2_K: return ggml__quantize_q2_K;
    case GGML_TYPE_Q3_K: return ggml__quantize_q3_K;
    case GGML_TYPE_IQ4_XS: return ggml__quantize_iq4_xs;
    case GGML_TYPE_IQ2_XXS: return ggml__quantize_iq2_xxs;
    case GGML_TYPE_IQ2_XS: return ggml__quantize_iq2_xs;
    case GGML_TYPE_IQ2_S: return ggml__quantize_iq2_s;
    default:             return NULL;
    }
}

/*
 * The quantizer of the formats whose lookup tables are built on first use
 * (false: they could not be, logged), or NULL.
 */
typedef bool (*ggml__fallible_quantizer)(const float *restrict, void *restrict, int64_t, int64_t, const float *);
static ggml__fallible_quantizer fallible_chunk_quantizer(enum ggml_type type)
{
    switch (type) {
    case GGML_TYPE_IQ1_S:   return ggml__quantize_iq1_s;
    case GGML_TYPE_IQ1_M:   return ggml__quantize_iq1_m;
    case GGML_TYPE_IQ3_XXS: return ggml__quantize_iq3_xxs;
    case GGML_TYPE_IQ3_S:   return ggml__quantize_iq3_s;
    default:                return NULL;
    }
}

/*
 * Arguments: type    the format to write;
 *            src     nrows * n_per_row values are read from src + start;
 *            dst     the whole destination tensor: rows are written from
 *                    row start / n_per_row on;
 *            start   index of the first value, a multiple of n_per_row;
 *            nrows, n_per_row  the chunk's shape; n_per_row a multiple of
 *                    the type's block size;
 *            imatrix importance weights of the n_per_row columns (NULL:
 *                    none): the K-quants, IQ4_NL, IQ4_XS and the
 *                    lattice (IQ1, IQ2, IQ3) formats minimise the error
 *                    weighted by them (IQ1_S, IQ2_XXS and IQ2_XS require
 *                    them, as in ggml); the other formats ignore them, as
 *                    ggml's do.
 * Returns:   bytes written (nrows * ggml_row_size(type, n_per_row)), or 0
 *            after logging one error.
 */
size_t ggml_quantize_chunk(enum ggml_type type, const float *src, void *dst, int64_t start,
                           int64_t nrows, int64_t n_per_row, const float *imatrix)
{
    if (!ggml__type_is_valid(type)) {
        ggml__error("invalid type %d", (int) type);
        return 0;
    }
    ggml_from_float_t quantize = chunk_quantizer(type);
    const ggml__fallible_quantizer fallible = fallible_chunk_quantizer(type);
    if (quantize == NULL && fallible == NULL && weighted_chunk_quantizer(type) == NULL) {
        ggml__error("quantization to %s is not implemented", ggml_type_name(type));
        return 0;
    }
    if (imatrix == NULL && ggml_quantize_requires_imatrix(type)) {
        ggml__error("quantization to %s requires an importance matrix", ggml_type_name(type));
        return 0;
    }

    const int64_t blck = ggml_blck_size(type);
    const size_t type_size = ggml_type_size(type);

    if (n_per_row <= 0 || nrows < 0) {
        ggml__error("bad chunk shape: %" PRId64 " rows of %" PRId64 " values", nrows, n_per_row);
        return 0;
    }
    if (n_per_row % blck != 0) {
        ggml__error("row length %" PRId64 " is not a multiple of the %s block size %" PRId64,
                    n_per_row, ggml_type_name(type), blck);
        return 0;
    }
    if (start < 0 || start % n_per_row != 0) {
        ggml__error("start %" PRId64 " is not a non-negative multiple of the row length %" PRId64,
                    start, n_per_row);
        return 0;
    }
    if (nrows == 0)
        return 0;
    if (src == NULL || dst == NULL) {
        ggml__error("NULL %s", src == NULL ? "source" : "destination");
        return 0;
    }

    /* every size below must fit: n values, the byte offset and the result */
    const uint64_t blocks_per_row = (uint64_t) (n_per_row / blck);
    const uint64_t start_row = (uint64_t) (start / n_per_row);
    if ((uint64_t) nrows > (uint64_t) INT64_MAX / (uint64_t) n_per_row ||
        (uint64_t) start > (uint64_t) INT64_MAX - (uint64_t) nrows * (uint64_t) n_per_row ||
        blocks_per_row > SIZE_MAX / type_size ||
        start_row + (uint64_t) nrows > SIZE_MAX / (blocks_per_row * type_size)) {
        ggml__error("chunk of %" PRId64 " rows of %" PRId64 " values at %" PRId64 " is too large",
                    nrows, n_per_row, start);
        return 0;
    }

    const size_t row_size = (size_t) blocks_per_row * type_size;
    char *out = (char *) dst + (size_t) start_row * row_size;
    if (fallible != NULL) {
        if (!fallible(src + start, out, nrows, n_per_row, imatrix))
            return 0;
    } else if (type == GGML_TYPE_IQ4_NL && imatrix != NULL)
        ggml__quantize_rows_iq4_nl(src + start, out, nrows, n_per_row, imatrix);
    else if (weighted_chunk_quantizer(type) != NULL)
        weighted_chunk_quantizer(type)(src + start, out, nrows, n_per_row, imatrix);
    else
        quantize(src + start, out, nrows * n_per_row);
    return (size_t) nrows * row_size;
}
