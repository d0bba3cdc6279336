/*
 * test-op-copy.c - DUP, CPY and CONT: conversions between F32, F16, BF16
 * and I32 in every direction, into and out of the quantized types, odd
 * shapes, non-contiguous sources and destinations, copies between shapes
 * that differ but hold the same number of elements, ggml_dup_inplace,
 * ggml_cast, thread counts, reference and fast kernels, what the CPU
 * backend refuses, and the constructors' error paths.
 *
 * Expectations are computed here from the source as stored, element by
 * element in row-major order of the source's own shape, which is the order
 * the destination receives them in (row-major order of its own shape):
 *   - plain destinations: the exact stored bits the conversion must give
 *     (a same-type copy gives the source's bits unchanged, as upstream's
 *     byte copy does; otherwise the value goes through F32 and is rounded
 *     to the destination: ggml_fp32_to_fp16, round-to-nearest-even BF16
 *     written here, truncation toward zero for I32), and a double
 *     reference for the NMSE;
 *   - quantized destinations: the blocks ggml_quantize_chunk makes from
 *     the source values, which the kernel must reproduce bit for bit, and
 *     their dequantization (to_float, or a decoder written here for Q8_1,
 *     which has none) as the NMSE reference.
 * Every destination is filled with a sentinel byte before each run, so a
 * run that writes nothing cannot pass on an earlier run's result, and the
 * bytes of a larger tensor that a destination view does not cover must
 * keep the sentinel.
 */
#include <stdio.h>

#include "tap.h"
#include "op-test.h"

#include "ggml-backend.h"

#define SENTINEL 0xA5

static ggml_backend_t cpu;

/* ------------------------------------------------------- type helpers */

static bool plain_type(enum ggml_type type)
{
    return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16 || type == GGML_TYPE_I32;
}

/* Round-to-nearest-even F32 -> BF16, written here to check the kernel's rounding independently. */
static uint16_t bf16_round(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t) ((u >> 16) | 0x40u); /* NaN stays NaN (made quiet) */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t) (u >> 16);
}

/* Stored bits of one element of a plain tensor, zero-extended. */
static uint32_t read_bits(const struct ggml_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    uint32_t bits = 0;
    memcpy(&bits, optest_elem(t, i0, i1, i2, i3), ggml_type_size(t->type));
    return bits;
}

/*
 * Element of a plain tensor as the F32 value a conversion starts from, read
 * without a detour through double (which would make a signalling NaN quiet):
 * BF16 widens by a shift, F16 as ggml_fp16_to_fp32 defines it, I32 rounds
 * to the nearest float.
 */
static float source_float(const struct ggml_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    const char *p = optest_elem(t, i0, i1, i2, i3);
    switch (t->type) {
    case GGML_TYPE_F16: {
        ggml_fp16_t h;
        memcpy(&h, p, sizeof h);
        return ggml_fp16_to_fp32(h);
    }
    case GGML_TYPE_BF16: {
        uint16_t b;
        memcpy(&b, p, sizeof b);
        const uint32_t u = (uint32_t) b << 16;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    case GGML_TYPE_I32: {
        int32_t i;
        memcpy(&i, p, sizeof i);
        return (float) i;
    }
    default: {
        float f;
        memcpy(&f, p, sizeof f);
        return f;
    }
    }
}

/* The bits a conversion of the F32 value f to the plain type must store. */
static uint32_t convert_bits(enum ggml_type type, float f)
{
    uint32_t bits = 0;
    switch (type) {
    case GGML_TYPE_F32: memcpy(&bits, &f, sizeof f); break;
    case GGML_TYPE_F16: {
        ggml_fp16_t h = ggml_fp32_to_fp16(f);
        memcpy(&bits, &h, sizeof h);
        break;
    }
    case GGML_TYPE_BF16: {
        uint16_t h = bf16_round(f);
        memcpy(&bits, &h, sizeof h);
        break;
    }
    default: {
        int32_t i = (int32_t) f; /* toward zero, as upstream's float -> int32 conversion */
        memcpy(&bits, &i, sizeof i);
        break;
    }
    }
    return bits;
}

/* Dequantizes one row of n values; Q8_1 (no to_float) is decoded here: d (f16), s (f16), 32 x int8. */
static void dequant_row(enum ggml_type type, const void *row, float *y, int64_t n)
{
    if (type == GGML_TYPE_Q8_1) {
        const uint8_t *b = row;
        for (int64_t k = 0; k < n / 32; k++, b += 36) {
            ggml_fp16_t d16;
            memcpy(&d16, b, sizeof d16);
            const float d = ggml_fp16_to_fp32(d16);
            for (int j = 0; j < 32; j++)
                y[k * 32 + j] = d * (float) (int8_t) b[4 + j];
        }
        return;
    }
    ggml_get_type_traits(type)->to_float(row, y, n);
}

static char *row_ptr(const struct ggml_tensor *t, int64_t r)
{
    const int64_t i1 = r % t->ne[1], i2 = (r / t->ne[1]) % t->ne[2], i3 = r / (t->ne[1] * t->ne[2]);
    return (char *) t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

/* Values of t in row-major order of its shape, as doubles. */
static double *read_values(const struct ggml_tensor *t)
{
    const int64_t n = ggml_nelements(t);
    double *v = malloc((size_t) n * sizeof *v);
    if (plain_type(t->type)) {
        int64_t k = 0;
        for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
            for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
                for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
                    for (int64_t i0 = 0; i0 < t->ne[0]; i0++)
                        v[k++] = optest_get(t, i0, i1, i2, i3);
        return v;
    }
    /* quantized: rows are block-contiguous (every quantized tensor used here has nb[0] = type size) */
    float *row = malloc((size_t) t->ne[0] * sizeof *row);
    for (int64_t r = 0; r < n / t->ne[0]; r++) {
        dequant_row(t->type, row_ptr(t, r), row, t->ne[0]);
        for (int64_t i = 0; i < t->ne[0]; i++)
            v[r * t->ne[0] + i] = row[i];
    }
    free(row);
    return v;
}

static double nmse(const double *got, const double *ref, int64_t n)
{
    double err = 0.0, norm = 0.0;
    for (int64_t k = 0; k < n; k++) {
        err += (got[k] - ref[k]) * (got[k] - ref[k]);
        norm += ref[k] * ref[k];
    }
    if (isnan(err))
        return INFINITY;
    return norm > 0.0 ? err / norm : err;
}

/*
 * NMSE thresholds against the double reference (the source value, or its
 * truncation for an I32 destination) for plain destinations:
 *   - F32 and I32 destinations, and same-type copies: 0.  Every value used
 *     in these tests is exact in F32 (F16 and BF16 are subsets of F32, the
 *     I32 values are below 2^24, dequantized values are floats), and the
 *     truncation is compared with the truncation;
 *   - F16: round to nearest with 11 significant bits, so each element's
 *     relative error is at most 2^-11 and the NMSE at most 2^-22 (values
 *     below the F16 normal range would only add absolute errors of 2^-25,
 *     negligible against the sum of squares);
 *   - BF16: 8 significant bits, relative error at most 2^-8, NMSE at most
 *     2^-16.
 */
static double plain_threshold(enum ggml_type src, enum ggml_type dst)
{
    if (src == dst || dst == GGML_TYPE_F32 || dst == GGML_TYPE_I32)
        return 0.0;
    return dst == GGML_TYPE_F16 ? 0x1p-22 : 0x1p-16;
}

/*
 * NMSE of a quantized destination against the source values themselves
 * (a sanity check of the quantization; the copy itself is checked bit for
 * bit).  For data uniform in [-a, a) the expected NMSE is step^2 / 12
 * over a^2 / 3: about 3.9e-3 (Q4_0, step a/8), 4.4e-3 (Q4_1, step
 * 2a/15), 1e-3 (Q5_0, Q5_1), 1.6e-5 (Q8_0, Q8_1).  The bound of the
 * rounding error (half a step) over a mean square no smaller than a^2 / 5
 * (every case has at least 32 values) gives the limits below.
 */
static double quant_threshold(enum ggml_type type)
{
    switch (type) {
    case GGML_TYPE_Q4_0:
    case GGML_TYPE_Q4_1:
    case GGML_TYPE_Q4_K:
    case GGML_TYPE_IQ4_XS: return 0.025;
    /* ternary (step a): uniform data gives 1/12 over 1/3, 0.25 */
    case GGML_TYPE_TQ1_0:
    case GGML_TYPE_TQ2_0: return 0.5;
    case GGML_TYPE_Q5_0:
    case GGML_TYPE_Q5_1:
    case GGML_TYPE_Q5_K:
    case GGML_TYPE_Q6_K: return 0.006;
    case GGML_TYPE_Q3_K: return 0.14;   /* step up to a/3: (a/6)^2 / (a^2/5) */
    case GGML_TYPE_Q2_K: return 0.56;   /* 4 levels over 2a: step 2a/3 */
    default:             return 1e-4;
    }
}

/* ------------------------------------------------------------ expectations */

struct expectation {
    int64_t n;
    double *ref;       /* double reference, row-major in the destination's shape */
    double *src_vals;  /* the source values as stored, same order */
    uint32_t *bits;    /* plain destination: the bits each element must hold */
    uint8_t *blocks;   /* quantized destination: every row's blocks, rows in order */
    size_t row_size;   /* quantized destination: bytes a row */
    double threshold;  /* NMSE of the destination against ref */
};

static void expectation_free(struct expectation *e)
{
    free(e->ref);
    free(e->src_vals);
    free(e->bits);
    free(e->blocks);
}

/* What copying src into a tensor of type dst_type with dst_ne0 values a row must give. */
static struct expectation expect(const struct ggml_tensor *src, enum ggml_type dst_type, int64_t dst_ne0)
{
    struct expectation e = { .n = ggml_nelements(src) };
    e.src_vals = read_values(src);
    e.ref = malloc((size_t) e.n * sizeof *e.ref);
    if (plain_type(dst_type)) {
        e.bits = malloc((size_t) e.n * sizeof *e.bits);
        int64_t k = 0;
        for (int64_t i3 = 0; i3 < src->ne[3]; i3++)
            for (int64_t i2 = 0; i2 < src->ne[2]; i2++)
                for (int64_t i1 = 0; i1 < src->ne[1]; i1++)
                    for (int64_t i0 = 0; i0 < src->ne[0]; i0++, k++) {
                        const double v = e.src_vals[k];
                        const float f = plain_type(src->type) ? source_float(src, i0, i1, i2, i3) : (float) v;
                        e.bits[k] = src->type == dst_type ? read_bits(src, i0, i1, i2, i3)
                                                          : convert_bits(dst_type, f);
                        e.ref[k] = dst_type == GGML_TYPE_I32 && src->type != GGML_TYPE_I32 ? trunc(v) : v;
                    }
        e.threshold = plain_threshold(ggml_is_quantized(src->type) ? GGML_TYPE_F32 : src->type, dst_type);
        return e;
    }
    const int64_t nrows = e.n / dst_ne0;
    e.row_size = ggml_row_size(dst_type, dst_ne0);
    e.blocks = malloc((size_t) nrows * e.row_size);
    if (src->type == dst_type) {
        /* same quantized type: the blocks themselves move */
        for (int64_t r = 0; r < nrows; r++)
            memcpy(e.blocks + r * e.row_size, row_ptr(src, r), e.row_size);
    } else {
        float *f = malloc((size_t) e.n * sizeof *f);
        for (int64_t k = 0; k < e.n; k++)
            f[k] = (float) e.src_vals[k];
        ggml_quantize_chunk(dst_type, f, e.blocks, 0, nrows, dst_ne0, NULL);
        free(f);
    }
    float *row = malloc((size_t) dst_ne0 * sizeof *row);
    for (int64_t r = 0; r < nrows; r++) {
        dequant_row(dst_type, e.blocks + r * e.row_size, row, dst_ne0);
        for (int64_t i = 0; i < dst_ne0; i++)
            e.ref[r * dst_ne0 + i] = row[i];
    }
    free(row);
    e.threshold = 0.0; /* the blocks must be identical, so must their values */
    return e;
}

/* Elements (plain) or rows (quantized) of out that differ from the expectation. */
static int64_t mismatches(const struct ggml_tensor *out, const struct expectation *e)
{
    int64_t bad = 0;
    if (e->bits != NULL) {
        int64_t k = 0;
        for (int64_t i3 = 0; i3 < out->ne[3]; i3++)
            for (int64_t i2 = 0; i2 < out->ne[2]; i2++)
                for (int64_t i1 = 0; i1 < out->ne[1]; i1++)
                    for (int64_t i0 = 0; i0 < out->ne[0]; i0++, k++)
                        bad += read_bits(out, i0, i1, i2, i3) != e->bits[k];
        return bad;
    }
    for (int64_t r = 0; r < e->n / out->ne[0]; r++)
        bad += memcmp(row_ptr(out, r), e->blocks + r * e->row_size, e->row_size) != 0;
    return bad;
}

/* Bytes of base outside out's elements that lost the sentinel. */
static int64_t damage_outside(const struct ggml_tensor *out, const struct ggml_tensor *base)
{
    const size_t size = ggml_nbytes(base);
    const size_t offs = (size_t) ((const char *) out->data - (const char *) base->data);
    uint8_t *covered = calloc(size, 1);
    const bool quant = !plain_type(out->type);
    const size_t unit = quant ? ggml_row_size(out->type, out->ne[0]) : ggml_type_size(out->type);
    for (int64_t i3 = 0; i3 < out->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < out->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < out->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < (quant ? 1 : out->ne[0]); i0++) {
                    size_t at = offs + (size_t) (i0 * out->nb[0] + i1 * out->nb[1] + i2 * out->nb[2] +
                                                 i3 * out->nb[3]);
                    memset(covered + at, 1, unit);
                }
    int64_t bad = 0;
    const uint8_t *bytes = base->data;
    for (size_t i = 0; i < size; i++)
        bad += !covered[i] && bytes[i] != SENTINEL;
    free(covered);
    return bad;
}

static const char *shape_str(const struct ggml_tensor *t, char *buf, size_t size)
{
    snprintf(buf, size, "[%lld,%lld,%lld,%lld]", (long long) t->ne[0], (long long) t->ne[1],
             (long long) t->ne[2], (long long) t->ne[3]);
    return buf;
}

/*
 * Computes out (a copy of src whose memory is in base) for 1..4 threads
 * with the reference kernels on and off and checks every run.
 */
static void run_case_flags(struct ggml_context *ctx, struct ggml_tensor *src, struct ggml_tensor *out,
                           struct ggml_tensor *base, bool bits_only, const char *what)
{
    char ss[64], ds[64];
    shape_str(src, ss, sizeof ss);
    if (out == NULL) {
        ok(false, "%s %s %s: the constructor gives a node", what, ggml_type_name(src->type), ss);
        return;
    }
    shape_str(out, ds, sizeof ds);
    if (!ok(ggml_backend_supports_op(cpu, out), "%s %s %s -> %s %s: supported", what, ggml_type_name(src->type), ss,
            ggml_type_name(out->type), ds))
        return;
    if (base == NULL)
        base = out;
    struct expectation e = expect(src, out->type, out->ne[0]);
    const bool quant = !plain_type(out->type);
    for (int use_ref = 0; use_ref <= 1; use_ref++) {
        for (int n_threads = 1; n_threads <= 4; n_threads++) {
            memset(base->data, SENTINEL, ggml_nbytes(base));
            enum ggml_status status = optest_compute(ctx, out, n_threads, use_ref != 0);
            const int64_t bad = mismatches(out, &e);
            const int64_t outside = damage_outside(out, base);
            double *got = read_values(out);
            const double err = bits_only ? 0.0 : nmse(got, e.ref, e.n);
            const double qerr = quant && !bits_only ? nmse(got, e.src_vals, e.n) : 0.0;
            free(got);
            const bool good = status == GGML_STATUS_SUCCESS && bad == 0 && outside == 0 && err <= e.threshold &&
                              (!quant || qerr <= quant_threshold(out->type));
            char verdict[64];
            if (bits_only)
                snprintf(verdict, sizeof verdict, "exact bits");
            else
                snprintf(verdict, sizeof verdict, "exact %s, nmse %.3g", quant ? "blocks" : "bits", err);
            if (!ok(good, "%s %s %s -> %s %s, %d threads, %s: %s", what, ggml_type_name(src->type), ss,
                    ggml_type_name(out->type), ds, n_threads, use_ref ? "reference" : "fast", verdict))
                tap_diag("status %d, %lld %s differ from the expected bits, %lld bytes outside the destination "
                         "changed, nmse %.3g (limit %.3g), nmse against the source %.3g (limit %.3g)",
                         (int) status, (long long) bad, quant ? "rows" : "elements", (long long) outside, err,
                         e.threshold, qerr, quant ? quant_threshold(out->type) : 0.0);
        }
    }
    expectation_free(&e);
}

/* A case checked bit for bit and by NMSE. */
static void run_case(struct ggml_context *ctx, struct ggml_tensor *src, struct ggml_tensor *out,
                     struct ggml_tensor *base, const char *what)
{
    run_case_flags(ctx, src, out, base, false, what);
}

/* A case of special values (infinities, NaN, integers beyond F32's): the bits alone decide. */
static void run_case_bits(struct ggml_context *ctx, struct ggml_tensor *src, struct ggml_tensor *out,
                          struct ggml_tensor *base, const char *what)
{
    run_case_flags(ctx, src, out, base, true, what);
}

/* ------------------------------------------------------ building blocks */

enum src_layout { SRC_CONTIG, SRC_TRANSPOSED, SRC_PERMUTED, SRC_STRIDED, SRC_LAYOUTS };
static const char *const layout_names[] = { "contiguous", "transposed", "permuted", "row-strided view" };

/*
 * A source of logical shape ne in the given layout, filled with values
 * uniform in [lo, hi).  Quantized sources keep their rows block-contiguous
 * (the permutation leaves dim 0 alone; there is no transposed form).
 */
static struct ggml_tensor *make_source(struct ggml_context *ctx, enum ggml_type type, const int64_t ne[4],
                                       enum src_layout layout, double lo, double hi, uint64_t *seed)
{
    const bool quant = ggml_is_quantized(type);
    struct ggml_tensor *base, *t;
    switch (layout) {
    case SRC_TRANSPOSED:
        base = ggml_new_tensor_4d(ctx, type, ne[1], ne[0], ne[2], ne[3]);
        t = ggml_transpose(ctx, base);
        break;
    case SRC_PERMUTED:
        if (quant) {
            base = ggml_new_tensor_4d(ctx, type, ne[0], ne[2], ne[1], ne[3]);
            t = ggml_permute(ctx, base, 0, 2, 1, 3);
        } else {
            base = ggml_new_tensor_4d(ctx, type, ne[1], ne[3], ne[0], ne[2]);
            t = ggml_permute(ctx, base, 1, 3, 0, 2);
        }
        break;
    case SRC_STRIDED: {
        /* a window one element (one block) in and one row down, in a tensor with longer rows */
        const int64_t pad0 = quant ? ggml_blck_size(type) : 5;
        base = ggml_new_tensor_4d(ctx, type, ne[0] + pad0, ne[1] + 2, ne[2], ne[3]);
        t = ggml_view_4d(ctx, base, ne[0], ne[1], ne[2], ne[3], base->nb[1], base->nb[2], base->nb[3],
                         ggml_type_size(type) + base->nb[1]);
        break;
    }
    default:
        base = t = ggml_new_tensor(ctx, type, 4, ne);
        break;
    }
    optest_fill(base, seed, lo, hi);
    return t;
}

enum dst_kind { DST_NEW, DST_CAST, DST_DUP, DST_CONT, DST_VIEW, DST_TRANSPOSED };
static const char *const dst_names[] = { "cpy", "cast", "dup", "cont", "cpy into a view", "cpy into a transposed view" };

/* The copy node of src into a destination of dst_type made the given way; *base gets its memory. */
static struct ggml_tensor *make_copy(struct ggml_context *ctx, struct ggml_tensor *src, enum ggml_type dst_type,
                                     enum dst_kind kind, struct ggml_tensor **base)
{
    const int64_t *ne = src->ne;
    struct ggml_tensor *b, *out;
    switch (kind) {
    case DST_CAST:
        out = *base = ggml_cast(ctx, src, dst_type);
        return out;
    case DST_DUP:
        out = *base = ggml_dup(ctx, src);
        return out;
    case DST_CONT:
        out = *base = ggml_cont(ctx, src);
        return out;
    case DST_VIEW: {
        /* a window of a larger tensor: rows one block/element in and one row down, a spare batch */
        const int64_t pad0 = ggml_is_quantized(dst_type) ? ggml_blck_size(dst_type) : 3;
        *base = ggml_new_tensor_4d(ctx, dst_type, ne[0] + pad0, ne[1] + 1, ne[2], ne[3] + 1);
        b = ggml_view_4d(ctx, *base, ne[0], ne[1], ne[2], ne[3], (*base)->nb[1], (*base)->nb[2], (*base)->nb[3],
                         ggml_type_size(dst_type) + (*base)->nb[1]);
        break;
    }
    case DST_TRANSPOSED:
        *base = ggml_new_tensor_4d(ctx, dst_type, ne[1], ne[0], ne[2], ne[3]);
        b = ggml_transpose(ctx, *base);
        break;
    default:
        b = *base = ggml_new_tensor(ctx, dst_type, 4, ne);
        break;
    }
    return ggml_cpy(ctx, src, b);
}

static struct ggml_context *new_context(size_t mib)
{
    struct ggml_init_params params = { mib << 20, NULL, false };
    return ggml_init(params);
}

/* --------------------------------------------------------------- tests */

static const enum ggml_type plain_types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_I32 };
static const enum ggml_type quant_types[] = { GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0,
                                              GGML_TYPE_Q5_1, GGML_TYPE_Q8_0, GGML_TYPE_Q8_1 };

/* Value range of a source: integers for I32, wider floats when truncation to I32 is tested. */
static void source_range(enum ggml_type src, enum ggml_type dst, double *lo, double *hi)
{
    if (src == GGML_TYPE_I32) {
        *lo = -1000.0, *hi = 1000.0;
    } else if (dst == GGML_TYPE_I32) {
        *lo = -300.0, *hi = 300.0;
    } else {
        *lo = -2.0, *hi = 2.0;
    }
}

/* Every pair of plain types, every odd ne0, every source layout; destinations made every way. */
static void test_plain_matrix(void)
{
    uint64_t seed = 0xc0b1e5;
    const int64_t shapes[][4] = {
        { 1, 4, 3, 2 }, { 3, 5, 2, 2 }, { 31, 3, 2, 1 }, { 33, 7, 1, 3 }, { 257, 3, 2, 1 },
    };
    for (size_t si = 0; si < 4; si++) {
        for (size_t di = 0; di < 4; di++) {
            const enum ggml_type st = plain_types[si], dt = plain_types[di];
            /* same type: dup, cont and cpy; otherwise cpy and cast; both into views too */
            const enum dst_kind same[] = { DST_DUP, DST_CONT, DST_NEW, DST_VIEW, DST_TRANSPOSED };
            const enum dst_kind conv[] = { DST_NEW, DST_CAST, DST_VIEW, DST_TRANSPOSED };
            const enum dst_kind *kinds = st == dt ? same : conv;
            const size_t n_kinds = st == dt ? 5 : 4;
            struct ggml_context *ctx = new_context(32);
            size_t c = si + di;
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                for (int layout = 0; layout < SRC_LAYOUTS; layout++, c++) {
                    double lo, hi;
                    source_range(st, dt, &lo, &hi);
                    struct ggml_tensor *src = make_source(ctx, st, shapes[s], layout, lo, hi, &seed);
                    const enum dst_kind kind = kinds[c % n_kinds];
                    struct ggml_tensor *base = NULL;
                    struct ggml_tensor *out = make_copy(ctx, src, dt, kind, &base);
                    char what[96];
                    snprintf(what, sizeof what, "%s, %s source:", dst_names[kind], layout_names[layout]);
                    run_case(ctx, src, out, base, what);
                }
            }
            ggml_free(ctx);
        }
    }
}

/* F32, F16 and BF16 sources in every layout into each of the n_types
   quantized types (with a from_float_ref), in the n_shapes shapes. */
static void copy_into_quantized(const enum ggml_type *types, size_t n_types, const int64_t (*shapes)[4],
                                size_t n_shapes, uint64_t seed)
{
    const enum dst_kind kinds[] = { DST_NEW, DST_CAST, DST_VIEW };
    size_t c = 0;
    for (size_t si = 0; si < 3; si++) {
        for (size_t q = 0; q < n_types; q++) {
            ok(ggml_get_type_traits(types[q])->from_float_ref != NULL, "%s has a from_float_ref",
               ggml_type_name(types[q]));
            struct ggml_context *ctx = new_context(16);
            for (size_t s = 0; s < n_shapes; s++, c++) {
                const enum src_layout layout = (enum src_layout) (c % SRC_LAYOUTS);
                struct ggml_tensor *src = make_source(ctx, plain_types[si], shapes[s], layout, -2.0, 2.0, &seed);
                const enum dst_kind kind = kinds[c % 3];
                struct ggml_tensor *base = NULL;
                struct ggml_tensor *out = make_copy(ctx, src, types[q], kind, &base);
                char what[96];
                snprintf(what, sizeof what, "%s, %s source:", dst_names[kind], layout_names[layout]);
                run_case(ctx, src, out, base, what);
            }
            ggml_free(ctx);
        }
    }
}

static void test_into_quantized(void)
{
    const int64_t shapes[][4] = { { 32, 1, 1, 1 }, { 64, 3, 2, 1 }, { 96, 5, 1, 2 }, { 256, 2, 1, 2 } };
    copy_into_quantized(quant_types, sizeof quant_types / sizeof quant_types[0], shapes,
                        sizeof shapes / sizeof shapes[0], 0x9a47);
    /* the K-quants and the other 256-value blocks */
    static const enum ggml_type k_types[] = {
        GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K,
        GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0, GGML_TYPE_IQ4_XS,
    };
    const int64_t k_shapes[][4] = { { 256, 1, 1, 1 }, { 512, 3, 2, 1 }, { 768, 2, 1, 2 } };
    copy_into_quantized(k_types, sizeof k_types / sizeof k_types[0], k_shapes, sizeof k_shapes / sizeof k_shapes[0], 0x9a48);
}

/* Quantized sources (the types with to_float) into every plain type, the same type and another one. */
static void test_from_quantized(void)
{
    uint64_t seed = 0xde90;
    const int64_t shapes[][4] = { { 32, 1, 1, 1 }, { 64, 3, 2, 1 }, { 96, 2, 3, 2 } };
    const enum src_layout layouts[] = { SRC_CONTIG, SRC_PERMUTED, SRC_STRIDED };
    size_t c = 0;
    for (size_t q = 0; q < 5; q++) {
        const enum ggml_type qt = quant_types[q];
        struct ggml_context *ctx = new_context(16);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            for (size_t d = 0; d < 7; d++, c++) {
                const enum src_layout layout = layouts[(s + d) % 3];
                struct ggml_tensor *src = make_source(ctx, qt, shapes[s], layout, -4.0, 4.0, &seed);
                enum ggml_type dt;
                enum dst_kind kind;
                if (d < 4) { /* every plain type */
                    dt = plain_types[d];
                    kind = c % 2 ? DST_CAST : DST_NEW;
                } else if (d < 6) { /* the same type: the blocks move unchanged */
                    dt = qt;
                    kind = d == 4 ? (s % 2 ? DST_DUP : DST_CONT) : DST_VIEW;
                } else { /* another quantized type */
                    dt = qt == GGML_TYPE_Q8_0 ? GGML_TYPE_Q4_0 : GGML_TYPE_Q8_0;
                    kind = s % 2 ? DST_VIEW : DST_NEW;
                }
                struct ggml_tensor *base = NULL;
                struct ggml_tensor *out = make_copy(ctx, src, dt, kind, &base);
                char what[96];
                snprintf(what, sizeof what, "%s, %s source:", dst_names[kind], layout_names[layout]);
                run_case(ctx, src, out, base, what);
            }
        }
        ggml_free(ctx);
    }
}

/* Copies between shapes that differ but hold as many elements: row-major order of each shape. */
static void test_reshaping_copies(void)
{
    uint64_t seed = 0x5a9e;
    struct ggml_context *ctx = new_context(16);
    struct ggml_tensor *src, *out, *b;

    const int64_t s1[4] = { 33, 7, 1, 1 };
    src = make_source(ctx, GGML_TYPE_F32, s1, SRC_TRANSPOSED, -2.0, 2.0, &seed);
    out = ggml_cont_2d(ctx, src, 21, 11);
    run_case(ctx, src, out, out, "cont_2d of a transposed source:");

    const int64_t s2[4] = { 3, 5, 4, 2 };
    src = make_source(ctx, GGML_TYPE_F16, s2, SRC_PERMUTED, -2.0, 2.0, &seed);
    out = ggml_cont_4d(ctx, src, 5, 3, 8, 1);
    run_case(ctx, src, out, out, "cont_4d of a permuted source:");

    const int64_t s3[4] = { 31, 3, 2, 1 };
    src = make_source(ctx, GGML_TYPE_BF16, s3, SRC_STRIDED, -2.0, 2.0, &seed);
    out = ggml_cont_1d(ctx, src, 31 * 3 * 2);
    run_case(ctx, src, out, out, "cont_1d of a row-strided view:");

    const int64_t s4[4] = { 1, 257, 1, 1 };
    src = make_source(ctx, GGML_TYPE_I32, s4, SRC_CONTIG, -1000.0, 1000.0, &seed);
    out = ggml_cont_3d(ctx, src, 257, 1, 1);
    run_case(ctx, src, out, out, "cont_3d of a column:");

    const int64_t s5[4] = { 31, 3, 1, 1 };
    src = make_source(ctx, GGML_TYPE_F16, s5, SRC_TRANSPOSED, -2.0, 2.0, &seed);
    b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 31);
    run_case(ctx, src, ggml_cpy(ctx, src, b), b, "cpy into a reshaped destination:");

    const int64_t s6[4] = { 8, 6, 2, 1 };
    src = make_source(ctx, GGML_TYPE_F32, s6, SRC_CONTIG, -2.0, 2.0, &seed);
    b = ggml_new_tensor_3d(ctx, GGML_TYPE_BF16, 8, 3, 4);
    run_case(ctx, src, ggml_cpy(ctx, src, b), b, "cpy, same rows regrouped:");

    const int64_t s7[4] = { 5, 4, 3, 1 };
    src = make_source(ctx, GGML_TYPE_I32, s7, SRC_PERMUTED, -1000.0, 1000.0, &seed);
    b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 10, 6);
    run_case(ctx, src, ggml_cpy(ctx, src, b), b, "cpy into a reshaped destination:");

    /* destination a transposed view with another shape: strided writes in another row order */
    const int64_t s8[4] = { 6, 10, 1, 1 };
    src = make_source(ctx, GGML_TYPE_F32, s8, SRC_CONTIG, -2.0, 2.0, &seed);
    struct ggml_tensor *big = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 12, 5);
    run_case(ctx, src, ggml_cpy(ctx, src, ggml_transpose(ctx, big)), big, "cpy into a reshaped transposed view:");

    const int64_t s9[4] = { 257, 2, 1, 1 };
    src = make_source(ctx, GGML_TYPE_F32, s9, SRC_STRIDED, -300.0, 300.0, &seed);
    b = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 2, 257);
    run_case(ctx, src, ggml_cpy(ctx, src, b), b, "cpy into a reshaped destination:");

    /* quantized destinations with the same rows regrouped */
    const int64_t s10[4] = { 64, 3, 2, 1 };
    src = make_source(ctx, GGML_TYPE_F32, s10, SRC_PERMUTED, -2.0, 2.0, &seed);
    b = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 64, 6);
    run_case(ctx, src, ggml_cpy(ctx, src, b), b, "cpy, same rows regrouped:");

    const int64_t s11[4] = { 64, 4, 1, 1 };
    src = make_source(ctx, GGML_TYPE_F16, s11, SRC_TRANSPOSED, -2.0, 2.0, &seed);
    b = ggml_new_tensor_3d(ctx, GGML_TYPE_Q4_0, 64, 2, 2);
    run_case(ctx, src, ggml_cpy(ctx, src, b), b, "cpy, same rows regrouped:");

    /* attention's heads merged: rows of 7 packed values, heads permuted, regrouped into rows of 21 */
    {
        struct ggml_tensor *heads = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 7, 3, 5);
        optest_fill(heads, &seed, -2.0, 2.0);
        src = ggml_permute(ctx, heads, 0, 2, 1, 3);
        out = ggml_cont_2d(ctx, src, 21, 5);
        run_case(ctx, src, out, out, "cont_2d of heads permuted (runs of whole source rows):");
        out = ggml_cont_2d(ctx, src, 5, 21);
        run_case(ctx, src, out, out, "cont_2d of heads permuted (runs across both rows):");
        b = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 3, 35);
        run_case(ctx, src, ggml_cpy(ctx, src, b), b, "cpy of heads permuted into shorter F16 rows:");
    }

    const int64_t s12[4] = { 32, 4, 3, 1 };
    src = make_source(ctx, GGML_TYPE_Q5_1, s12, SRC_PERMUTED, -2.0, 2.0, &seed);
    out = ggml_cont_2d(ctx, src, 32, 12);
    run_case(ctx, src, out, out, "cont_2d, same rows regrouped:");
    ggml_free(ctx);
}

/* ggml_dup_inplace copies a tensor onto itself: a view of it, values unchanged. */
/*
 * Same-type copies between tensors packed along different dimensions (the
 * fast path's tiled transposes): cont of a transpose and cpy into a
 * transposed view, for 4- and 2-byte types, on shapes that are no multiple
 * of any tile (1 x 1 up to 257 x 31), from views at an offset into a larger
 * tensor with padded rows, and cont of 3-d permutations.
 */
static void test_transposes(void)
{
    uint64_t seed = 0x7a05e;
    struct ggml_context *ctx = new_context(32);
    static const int64_t shapes[][2] = { { 1, 1 }, { 15, 33 }, { 257, 31 }, { 31, 257 }, { 64, 65 } };
    static const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_I32 };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const enum ggml_type type = types[t];
        const double range = type == GGML_TYPE_I32 ? 1e6 : 2.0;
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            const int64_t ne0 = shapes[i][0], ne1 = shapes[i][1];
            /* a view of ne0 x ne1 at an offset of 3 elements into rows of ne0 + 5 */
            struct ggml_tensor *big = ggml_new_tensor_2d(ctx, type, ne0 + 5, ne1 + 1);
            optest_fill(big, &seed, -range, range);
            const size_t es = ggml_type_size(type);
            struct ggml_tensor *view = ggml_view_2d(ctx, big, ne0, ne1, big->nb[1], 3 * es);
            struct ggml_tensor *src = ggml_transpose(ctx, view);
            run_case_bits(ctx, src, ggml_cont(ctx, src), NULL, "cont of a transposed view at an offset:");
            /* the other way: a packed source into a transposed view at an offset */
            struct ggml_tensor *plain = ggml_new_tensor_2d(ctx, type, ne1, ne0);
            optest_fill(plain, &seed, -range, range);
            struct ggml_tensor *target = ggml_new_tensor_2d(ctx, type, ne0 + 4, ne1 + 2);
            struct ggml_tensor *into = ggml_transpose(ctx, ggml_view_2d(ctx, target, ne0, ne1, target->nb[1],
                                                                        target->nb[1] + 2 * es));
            run_case_bits(ctx, plain, ggml_cpy(ctx, plain, into), target, "cpy into a transposed view at an offset:");
        }
        const int64_t ne[4] = { 15, 33, 3, 2 };
        struct ggml_tensor *src3 = make_source(ctx, type, ne, SRC_CONTIG, -range, range, &seed);
        struct ggml_tensor *p = ggml_permute(ctx, src3, 2, 0, 1, 3);
        run_case_bits(ctx, p, ggml_cont(ctx, p), NULL, "cont of a 3-d permutation:");
        p = ggml_permute(ctx, src3, 1, 2, 0, 3);
        run_case_bits(ctx, p, ggml_cont(ctx, p), NULL, "cont of a 3-d permutation:");
    }
    ggml_free(ctx);
}

static void test_dup_inplace(void)
{
    uint64_t seed = 0x1d;
    struct ggml_context *ctx = new_context(4);
    const int64_t ne[4] = { 33, 5, 1, 1 };
    for (int layout = 0; layout < 2; layout++) {
        const enum ggml_type type = layout ? GGML_TYPE_F16 : GGML_TYPE_F32;
        struct ggml_tensor *a = make_source(ctx, type, ne, layout ? SRC_TRANSPOSED : SRC_CONTIG, -2.0, 2.0, &seed);
        struct ggml_tensor *owner = a->view_src ? a->view_src : a;
        uint8_t *before = malloc(ggml_nbytes(owner));
        memcpy(before, owner->data, ggml_nbytes(owner));
        struct ggml_tensor *r = ggml_dup_inplace(ctx, a);
        ok(r != NULL && r->op == GGML_OP_DUP && r->src[0] == a && r->view_src == owner && r->data == a->data &&
               ggml_are_same_shape(r, a) && r->type == type,
           "dup_inplace of a %s %s tensor is a DUP view of it", layout ? "transposed" : "contiguous",
           ggml_type_name(type));
        for (int n_threads = 1; n_threads <= 4; n_threads++)
            for (int use_ref = 0; use_ref <= 1; use_ref++)
                ok(r != NULL && optest_compute(ctx, r, n_threads, use_ref) == GGML_STATUS_SUCCESS &&
                       memcmp(before, owner->data, ggml_nbytes(owner)) == 0,
                   "dup_inplace, %s %s, %d threads, %s: every byte unchanged", layout ? "transposed" : "contiguous",
                   ggml_type_name(type), n_threads, use_ref ? "reference" : "fast");
        free(before);
    }
    struct ggml_tensor *d = ggml_dup(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_BF16, 3, 2));
    ok(d != NULL && d->op == GGML_OP_DUP && d->view_src == NULL && d->type == GGML_TYPE_BF16,
       "dup makes a new tensor of the same type");
    ggml_free(ctx);
}

/*
 * Edge values.  Same-type copies are byte copies (upstream copies the bytes
 * when the types agree): every F16 and BF16 bit pattern, NaN payloads
 * included, and I32 values beyond 2^24 come through unchanged.
 * Conversions of every F16 / BF16 pattern to F32 are exact; F32 specials
 * (infinities, NaN, signed zero, overflow, subnormals) follow the
 * conversion functions; large I32 values round to the nearest F32.
 */
static void test_edge_values(void)
{
    struct ggml_context *ctx = new_context(16);
    struct ggml_tensor *h = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 256, 256);
    struct ggml_tensor *bh = ggml_new_tensor_2d(ctx, GGML_TYPE_BF16, 256, 256);
    for (int i = 0; i < 65536; i++) {
        ((uint16_t *) h->data)[i] = (uint16_t) i;
        ((uint16_t *) bh->data)[i] = (uint16_t) i;
    }
    struct ggml_tensor *i32 = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 37, 9);
    const int32_t specials[] = { INT32_MAX, INT32_MIN, INT32_MIN + 1, (1 << 24) + 1, -(1 << 24) - 1, 123456789 };
    for (int64_t i = 0; i < ggml_nelements(i32); i++)
        ((int32_t *) i32->data)[i] = i < 6 ? specials[i] : (int32_t) ((i * 2654435761u) ^ 0x5bd1e995u);
    struct ggml_tensor *f = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 19);
    const float fv[] = { INFINITY, -INFINITY, NAN, -0.0f, 0.0f, 65504.0f, 65519.0f, 65520.0f, -1e9f,
                         1e-8f, -6e-8f, 6.1e-5f, 3.0e-39f, 1.0f + 0x1p-11f, 1.0f + 0x1p-8f, 1.0f + 0x1.8p-8f,
                         3.3895e38f, 1e-45f, -1.0f };
    memcpy(f->data, fv, sizeof fv);

    struct ggml_tensor *b;
    run_case_bits(ctx, h, ggml_dup(ctx, h), NULL, "dup of every f16 pattern:");
    run_case_bits(ctx, bh, ggml_cont(ctx, bh), NULL, "cont of every bf16 pattern:");
    run_case_bits(ctx, i32, ggml_cont(ctx, i32), NULL, "cont of large i32 values:");
    struct ggml_tensor *it = ggml_transpose(ctx, i32);
    b = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 9, 37);
    run_case_bits(ctx, it, ggml_cpy(ctx, it, b), b, "cpy of transposed large i32 values:");
    b = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 9, 37);
    run_case_bits(ctx, i32, ggml_cpy(ctx, i32, b), b, "cpy of large i32 values, reshaped:");
    run_case_bits(ctx, h, ggml_cast(ctx, h, GGML_TYPE_F32), NULL, "cast of every f16 pattern:");
    run_case_bits(ctx, bh, ggml_cast(ctx, bh, GGML_TYPE_F32), NULL, "cast of every bf16 pattern:");
    run_case_bits(ctx, i32, ggml_cast(ctx, i32, GGML_TYPE_F32), NULL, "cast of large i32 values:");
    run_case_bits(ctx, f, ggml_cast(ctx, f, GGML_TYPE_F16), NULL, "cast of f32 specials:");
    run_case_bits(ctx, f, ggml_cast(ctx, f, GGML_TYPE_BF16), NULL, "cast of f32 specials:");
    ggml_free(ctx);
}

/* What the kernel cannot do is refused by supports_op and by the engine, with one message. */
static void test_refused(void)
{
    struct ggml_context *ctx = new_context(4);
    tap_log_errors();
    struct ggml_tensor *f64x2 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 2);
    struct ggml_tensor *q64x2 = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 2);
    struct ggml_tensor *q8 = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 64, 2);
    struct ggml_tensor *q81 = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_1, 64, 2);
    struct ggml_tensor *i64 = ggml_new_tensor_2d(ctx, GGML_TYPE_I64, 8, 2);
    struct ggml_tensor *f256 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 256);
    memset(f64x2->data, 0, ggml_nbytes(f64x2));
    memset(q64x2->data, 0, ggml_nbytes(q64x2));
    memset(q8->data, 0, ggml_nbytes(q8));
    memset(q81->data, 0, ggml_nbytes(q81));
    memset(i64->data, 0, ggml_nbytes(i64));
    memset(f256->data, 0, ggml_nbytes(f256));
    const struct {
        const char *what;
        struct ggml_tensor *node;
    } cases[] = {
        { "f32 [64,2] into q8_0 [32,4] (quantized rows not lined up)",
          ggml_cpy(ctx, f64x2, ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 32, 4)) },
        { "q8_0 [64,2] into f32 [32,4] (quantized source rows not lined up)",
          ggml_cpy(ctx, q8, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 32, 4)) },
        { "cont_2d of q4_0 [64,2] as [32,4]", ggml_cont_2d(ctx, q64x2, 32, 4) },
        { "cast of f32 to i64", ggml_cast(ctx, f64x2, GGML_TYPE_I64) },
        { "cast of f32 to f64", ggml_cast(ctx, f64x2, GGML_TYPE_F64) },
        { "cast of f32 to i16", ggml_cast(ctx, f64x2, GGML_TYPE_I16) },
        { "cast of i64 to f32", ggml_cast(ctx, i64, GGML_TYPE_F32) },
        { "cast of q8_1 to f32 (no to_float)", ggml_cast(ctx, q81, GGML_TYPE_F32) },
        { "cast of f32 to iq1_m (no from_float_ref)", ggml_cast(ctx, f256, GGML_TYPE_IQ1_M) },
        { "q4_0 [64,2] into q8_0 [32,4] (rows not lined up)", ggml_cpy(ctx, q64x2, ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 32, 4)) },
    };
    is_int(tap_log_errors(), 0, "building the refused nodes logged nothing");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (!ok(cases[c].node != NULL, "%s: the constructor accepts it", cases[c].what))
            continue;
        ok(!ggml_backend_supports_op(cpu, cases[c].node), "%s: the CPU backend does not support it", cases[c].what);
        is_int(optest_compute(ctx, cases[c].node, 2, false), GGML_STATUS_FAILED, "%s: computing it fails",
               cases[c].what);
        logged_one_error("%s: with one message", cases[c].what);
    }

    /*
     * A same-type copy of a quantized tensor whose blocks are not adjacent
     * (a transposed Q8_0 tensor, 2 blocks a row, nb[0] = the base's row
     * size): refused, or copied following nb[0] as the block stride (what
     * upstream's byte copy and optest_get read).
     */
    struct ggml_tensor *qb = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 64, 64);
    uint64_t seed = 0x7a;
    optest_fill(qb, &seed, -1.0, 1.0);
    struct ggml_tensor *qt = ggml_transpose(ctx, qb);
    struct ggml_tensor *node = ggml_cont(ctx, qt);
    tap_log_errors();
    if (node != NULL && ggml_backend_supports_op(cpu, node)) {
        const enum ggml_status status = optest_compute(ctx, node, 2, false);
        int64_t bad = 0;
        for (int64_t i1 = 0; i1 < qt->ne[1]; i1++)
            for (int64_t k = 0; k < qt->ne[0] / 32; k++)
                bad += memcmp((char *) node->data + i1 * node->nb[1] + k * node->nb[0],
                              (char *) qt->data + i1 * qt->nb[1] + k * qt->nb[0], ggml_type_size(GGML_TYPE_Q8_0)) != 0;
        if (!ok(status == GGML_STATUS_SUCCESS && bad == 0,
                "cont of a q8_0 tensor with strided blocks is refused or follows nb[0]"))
            tap_diag("supported; status %d, %lld of %lld blocks differ from the blocks nb[0] points at", (int) status,
                     (long long) bad, (long long) (qt->ne[1] * qt->ne[0] / 32));
    } else {
        ok(node != NULL && optest_compute(ctx, node, 2, false) == GGML_STATUS_FAILED,
           "cont of a q8_0 tensor with strided blocks is refused or follows nb[0]");
        logged_one_error("refusing it logs one message");
    }
    ggml_free(ctx);
}

/*
 * A transposed or permuted view of a block-quantized tensor splits its
 * blocks across dimensions: ggml_nbytes of the view exceeds its source's
 * memory and a kernel walking its rows would read past it.  supports_op
 * refuses every op on such a view (one message when computed); the view
 * ops themselves stay allowed, and so do permutations that keep dimension 0.
 */
static void test_split_blocks_refused(void)
{
    struct ggml_context *ctx = new_context(1);
    struct ggml_tensor *q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 32, 2);
    struct ggml_tensor *q4 = ggml_new_tensor_3d(ctx, GGML_TYPE_Q4_0, 32, 2, 3);
    memset(q->data, 0, ggml_nbytes(q));
    memset(q4->data, 0, ggml_nbytes(q4));
    struct ggml_tensor *t = ggml_transpose(ctx, q);
    struct ggml_tensor *p = ggml_permute(ctx, q4, 2, 0, 1, 3);
    struct ggml_tensor *rows = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 2);
    memset(rows->data, 0, ggml_nbytes(rows));
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 3);
    memset(b->data, 0, ggml_nbytes(b));
    const struct {
        const char *what;
        struct ggml_tensor *node;
    } cases[] = {
        { "cast of a transposed q8_0 [32,2] to f32", ggml_cast(ctx, t, GGML_TYPE_F32) },
        { "cpy of it into f16", ggml_cpy(ctx, t, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 2, 32)) },
        { "get_rows of it", ggml_get_rows(ctx, t, rows) },
        { "mul_mat of it", ggml_mul_mat(ctx, t, b) },
        { "cast of a permuted q4_0 [32,2,3] to f32", ggml_cast(ctx, p, GGML_TYPE_F32) },
        { "mul_mat of it", ggml_mul_mat(ctx, p, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 2, 3, 32)) },
    };
    tap_log_errors();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (!ok(cases[c].node != NULL, "%s: the constructor accepts it", cases[c].what))
            continue;
        ok(!ggml_backend_supports_op(cpu, cases[c].node), "%s: the CPU backend does not support it",
           cases[c].what);
        is_int(optest_compute(ctx, cases[c].node, 2, false), GGML_STATUS_FAILED, "%s: computing it fails",
               cases[c].what);
        logged_one_error("%s: with one message", cases[c].what);
    }
    ok(ggml_backend_supports_op(cpu, t) && ggml_backend_supports_op(cpu, p),
       "the transposing and permuting view nodes themselves are supported");
    struct ggml_tensor *kept = ggml_cont(ctx, ggml_permute(ctx, q4, 0, 2, 1, 3));
    ok(kept != NULL && ggml_backend_supports_op(cpu, kept) &&
           optest_compute(ctx, kept, 2, false) == GGML_STATUS_SUCCESS,
       "cont of a q4_0 permutation that keeps dimension 0 is supported and computes");
    ggml_free(ctx);
}

/*
 * Float to integer: what C leaves undefined is defined here.  A value in
 * the destination's range is truncated toward zero (C's conversion, and
 * upstream's); one beyond it saturates to the minimum or maximum, the
 * infinities too; NaN gives 0.
 */
static int64_t ref_to_int(double v, int64_t min, int64_t max)
{
    if (isnan(v))
        return 0;
    const double t = trunc(v);
    return t < (double) min ? min : t > (double) max ? max : (int64_t) t;
}

static const float conversion_inputs[] = {
    NAN, -NAN, INFINITY, -INFINITY, 1e20f, -1e20f, 2147483647.0f /* = 2^31 */, 2147483648.0f, -2147483648.0f,
    -2147483904.0f, 2147483520.0f, 16777217.0f, 0.7f, -0.7f, 2.5f, -2.5f, 1.999f, -1.999f, 3.0f, -0.0f,
    65504.0f, -65504.0f, 1e-30f, 123456.789f,
};
#define N_CONVERSION_INPUTS ((int64_t) (sizeof conversion_inputs / sizeof conversion_inputs[0]))

static void test_float_to_int(void)
{
    struct ggml_context *ctx = new_context(1);
    const enum ggml_type from[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16 };
    for (size_t t = 0; t < sizeof from / sizeof from[0]; t++) {
        struct ggml_tensor *src = ggml_new_tensor_1d(ctx, from[t], N_CONVERSION_INPUTS);
        for (int64_t i = 0; i < N_CONVERSION_INPUTS; i++) {
            if (from[t] == GGML_TYPE_F32)
                ((float *) src->data)[i] = conversion_inputs[i];
            else if (from[t] == GGML_TYPE_F16)
                ((ggml_fp16_t *) src->data)[i] = ggml_fp32_to_fp16(conversion_inputs[i]);
            else
                ((ggml_bf16_t *) src->data)[i] = ggml_fp32_to_bf16(conversion_inputs[i]);
        }
        /* what the source holds, as a double (F16 overflows 1e20 to infinity, BF16 rounds) */
        double held[N_CONVERSION_INPUTS];
        for (int64_t i = 0; i < N_CONVERSION_INPUTS; i++)
            held[i] = from[t] == GGML_TYPE_F32  ? (double) ((float *) src->data)[i]
                      : from[t] == GGML_TYPE_F16 ? (double) ggml_fp16_to_fp32(((ggml_fp16_t *) src->data)[i])
                                                 : (double) ggml_bf16_to_fp32(((ggml_bf16_t *) src->data)[i]);
        struct ggml_tensor *dst = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, N_CONVERSION_INPUTS);
        struct ggml_tensor *nodes[] = { ggml_cast(ctx, src, GGML_TYPE_I32), ggml_cpy(ctx, src, dst) };
        for (int n = 0; n < 2; n++) {
            for (int use_ref = 0; use_ref <= 1; use_ref++) {
                memset(nodes[n]->data, 0x5a, ggml_nbytes(nodes[n]));
                const enum ggml_status status = optest_compute(ctx, nodes[n], 2, use_ref);
                int64_t bad = 0;
                for (int64_t i = 0; i < N_CONVERSION_INPUTS; i++) {
                    const int32_t got = ((int32_t *) nodes[n]->data)[i];
                    const int64_t want = ref_to_int(held[i], INT32_MIN, INT32_MAX);
                    if (got != want) {
                        if (bad++ == 0)
                            tap_diag("input %.9g: got %" PRId32 ", want %" PRId64, held[i], got, want);
                    }
                }
                ok(status == GGML_STATUS_SUCCESS && bad == 0, "%s of %s to i32 (%s): truncated, saturated, NaN 0",
                   n == 0 ? "cast" : "cpy", ggml_type_name(from[t]), use_ref ? "reference" : "fast");
            }
        }
    }

    /* the CPU's row conversion and the element setters follow the same rule */
    int32_t row[N_CONVERSION_INPUTS];
    ggml_cpu_fp32_to_i32(conversion_inputs, row, N_CONVERSION_INPUTS);
    int64_t bad = 0;
    for (int64_t i = 0; i < N_CONVERSION_INPUTS; i++)
        bad += row[i] != ref_to_int(conversion_inputs[i], INT32_MIN, INT32_MAX);
    is_int(bad, 0, "ggml_cpu_fp32_to_i32: truncated, saturated, NaN 0");
    const struct {
        enum ggml_type type;
        int64_t min, max;
    } ints[] = { { GGML_TYPE_I8, INT8_MIN, INT8_MAX },
                 { GGML_TYPE_I16, INT16_MIN, INT16_MAX },
                 { GGML_TYPE_I32, INT32_MIN, INT32_MAX } };
    for (size_t t = 0; t < sizeof ints / sizeof ints[0]; t++) {
        struct ggml_tensor *it = ggml_new_tensor_1d(ctx, ints[t].type, N_CONVERSION_INPUTS);
        bad = 0;
        for (int i = 0; i < (int) N_CONVERSION_INPUTS; i++) {
            ggml_set_f32_1d(it, i, conversion_inputs[i]);
            const int64_t got = ints[t].type == GGML_TYPE_I8    ? ((int8_t *) it->data)[i]
                                : ints[t].type == GGML_TYPE_I16 ? ((int16_t *) it->data)[i]
                                                                : ((int32_t *) it->data)[i];
            bad += got != ref_to_int(conversion_inputs[i], ints[t].min, ints[t].max);
        }
        is_int(bad, 0, "ggml_set_f32_1d into %s: truncated, saturated, NaN 0", ggml_type_name(ints[t].type));
    }
    struct ggml_tensor *f = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N_CONVERSION_INPUTS);
    memcpy(f->data, conversion_inputs, sizeof conversion_inputs);
    bad = 0;
    for (int i = 0; i < (int) N_CONVERSION_INPUTS; i++)
        bad += ggml_get_i32_1d(f, i) != ref_to_int(conversion_inputs[i], INT32_MIN, INT32_MAX);
    is_int(bad, 0, "ggml_get_i32_1d of f32: truncated, saturated, NaN 0");
    is_int(tap_log_errors(), 0, "no conversion logs an error");
    ggml_free(ctx);
}

/*
 * Quantizing rows with NaN and infinities, and a block of values so small
 * that the reciprocal of its scale overflows: defined results (every level
 * saturated into its range, NaN to level 0; the sanitizer build checks
 * that no conversion is undefined), and a whole row written.
 */
static void test_quantize_non_finite(void)
{
    float x[4 * 32];
    for (int i = 0; i < 4 * 32; i++)
        x[i] = (float) (i % 7) - 3.0f;
    x[1] = NAN;
    x[33] = INFINITY;
    x[65] = -INFINITY;
    x[66] = NAN;
    x[67] = INFINITY;
    for (int i = 96; i < 128; i++)
        x[i] = i % 2 ? 1e-40f : -1e-40f;
    for (size_t t = 0; t < sizeof quant_types / sizeof quant_types[0]; t++) {
        const enum ggml_type type = quant_types[t];
        uint8_t y[4 * 64];
        memset(y, 0xa5, sizeof y);
        const size_t size = ggml_quantize_chunk(type, x, y, 0, 1, 4 * 32, NULL);
        ok(size == ggml_row_size(type, 4 * 32) && tap_log_errors() == 0, "%s: a row with NaN and infinities quantizes",
           ggml_type_name(type));
    }
    /*
     * Q4_0 of the tiny block: its extreme -1e-40 (the first of the largest
     * magnitudes) gives the scale 1e-40 / 8, whose reciprocal overflows to
     * +inf: -1e-40 scales to -inf, the lowest level 0, and 1e-40 to +inf,
     * saturated to the top level 15.
     */
    uint8_t q[4 * 18];
    ggml_quantize_chunk(GGML_TYPE_Q4_0, x, q, 0, 1, 4 * 32, NULL);
    const uint8_t *tiny = q + 3 * 18 + 2;
    ok((tiny[0] & 0x0f) == 0 && (tiny[1] & 0x0f) == 15,
       "q4_0: a block whose scale's reciprocal overflows saturates its levels (got %u, %u)", tiny[0] & 0x0fu,
       tiny[1] & 0x0fu);
}

/* Constructors: bad shapes log one error and give NULL; NULL inputs give NULL silently. */
static void test_constructor_errors(void)
{
    struct ggml_context *ctx = new_context(1);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 6, 4);
    struct ggml_tensor *b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 23);
    tap_log_errors();

    ok(ggml_cpy(ctx, a, b) == NULL, "cpy into a destination with another element count gives NULL");
    logged_one_error("cpy with mismatched element counts logs one error");
    ok(ggml_cont_1d(ctx, a, 23) == NULL, "cont_1d with another element count gives NULL");
    logged_one_error("cont_1d with a bad count logs one error");
    ok(ggml_cont_2d(ctx, a, 5, 5) == NULL, "cont_2d with another element count gives NULL");
    logged_one_error("cont_2d with a bad count logs one error");
    ok(ggml_cont_3d(ctx, a, 2, 2, 5) == NULL, "cont_3d with another element count gives NULL");
    logged_one_error("cont_3d with a bad count logs one error");
    ok(ggml_cont_4d(ctx, a, 2, 3, 2, 3) == NULL, "cont_4d with another element count gives NULL");
    logged_one_error("cont_4d with a bad count logs one error");
    ok(ggml_cast(ctx, a, GGML_TYPE_Q4_0) == NULL, "cast of rows of 6 to q4_0 (blocks of 32) gives NULL");
    logged_one_error("cast to a block size the rows do not fill logs one error");

    ok(ggml_cpy(ctx, NULL, a) == NULL && ggml_cpy(ctx, a, NULL) == NULL && ggml_cont(ctx, NULL) == NULL &&
           ggml_cont_1d(ctx, NULL, 24) == NULL && ggml_cont_2d(ctx, NULL, 6, 4) == NULL &&
           ggml_cont_3d(ctx, NULL, 6, 4, 1) == NULL && ggml_cont_4d(ctx, NULL, 6, 4, 1, 1) == NULL &&
           ggml_dup(ctx, NULL) == NULL && ggml_dup_inplace(ctx, NULL) == NULL &&
           ggml_cast(ctx, NULL, GGML_TYPE_F16) == NULL,
       "a NULL input gives NULL from every copy constructor");
    is_int(tap_log_errors(), 0, "a NULL input logs nothing");

    struct ggml_tensor *c = ggml_cast(ctx, a, GGML_TYPE_F16);
    ok(c != NULL && c->op == GGML_OP_CPY && c->src[0] == a && c->src[1] == c && c->type == GGML_TYPE_F16 &&
           ggml_are_same_shape(c, a),
       "cast is a CPY into a new tensor of the given type (src[1] is the result, as upstream)");
    struct ggml_tensor *d = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 6);
    struct ggml_tensor *r = ggml_cpy(ctx, a, d);
    ok(r != NULL && r->op == GGML_OP_CPY && r->view_src == d && r->data == d->data && ggml_are_same_shape(r, d) &&
           r->src[0] == a && r->src[1] == d,
       "cpy gives a view of the destination");
    ggml_free(ctx);
}

/* Element (i0, i1) of a 2-d tensor of a single-element type, as a 64-bit pattern of its bytes. */
static uint64_t element_bits(const struct ggml_tensor *t, int64_t i0, int64_t i1)
{
    uint64_t v = 0;
    memcpy(&v, (const char *) t->data + i0 * t->nb[0] + i1 * t->nb[1], ggml_type_size(t->type));
    return v;
}

/*
 * Same-type copies of the types with single-element blocks that are not
 * converted (I8, I16, I64, F64), in every layout, as upstream's test-dup
 * does: a [10, 11] source holding a distinct byte pattern in every
 * element, a row and a column of it copied into a row and a column of a
 * zeroed destination; then cont of its transpose.  Every element is
 * checked, at both paths and 1 to 3 threads.
 */
static void test_byte_types(void)
{
    static const enum ggml_type types[] = { GGML_TYPE_I8, GGML_TYPE_I16, GGML_TYPE_I64, GGML_TYPE_F64 };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const enum ggml_type type = types[t];
        const size_t es = ggml_type_size(type);
        struct ggml_context *ctx = new_context(2);
        struct ggml_tensor *src = ggml_new_tensor_2d(ctx, type, 10, 11);
        for (int64_t i = 0; i < 110; i++) {
            const uint64_t pattern = 0x0101010101010101ull * (uint64_t) (i + 1) ^ 0x8040201008040201ull;
            memcpy((char *) src->data + (size_t) i * es, &pattern, es);
        }
        struct ggml_tensor *row = ggml_view_1d(ctx, src, 10, src->nb[1] * 2);              /* row 2 */
        struct ggml_tensor *col = ggml_view_2d(ctx, src, 1, 10, src->nb[1], 3 * es);       /* column 3 */
        bool right = true;
        for (int use_ref = 0; use_ref <= 1; use_ref++)
            for (int n_threads = 1; n_threads <= 3; n_threads++) {
                struct ggml_tensor *dst = ggml_new_tensor_2d(ctx, type, 10, 11);
                memset(dst->data, 0, ggml_nbytes(dst));
                struct ggml_tensor *out[4] = {
                    ggml_cpy(ctx, row, ggml_view_1d(ctx, dst, 10, dst->nb[1] * 5)),
                    ggml_cpy(ctx, col, ggml_view_1d(ctx, dst, 10, dst->nb[1] * 6)),
                    ggml_cpy(ctx, row, ggml_view_2d(ctx, dst, 1, 10, dst->nb[1], 7 * es)),
                    ggml_cpy(ctx, col, ggml_view_2d(ctx, dst, 1, 10, dst->nb[1], 8 * es)),
                };
                for (int k = 0; k < 4; k++)
                    right = right && out[k] != NULL &&
                            optest_compute(ctx, out[k], n_threads, use_ref) == GGML_STATUS_SUCCESS;
                for (int64_t i1 = 0; right && i1 < 11; i1++)
                    for (int64_t i0 = 0; i0 < 10; i0++) {
                        uint64_t want = 0;
                        if (i1 == 5 && i0 < 10)
                            want = element_bits(src, i0, 2);
                        else if (i1 == 6)
                            want = element_bits(src, 3, i0);
                        else if (i0 == 7 && i1 < 10)
                            want = element_bits(src, i1, 2);
                        else if (i0 == 8 && i1 < 10)
                            want = element_bits(src, 3, i1);
                        if (i1 == 5 && (i0 == 7 || i0 == 8)) /* the columns were written after the row */
                            want = i0 == 7 ? element_bits(src, 5, 2) : element_bits(src, 3, 5);
                        if (i1 == 6 && (i0 == 7 || i0 == 8))
                            want = i0 == 7 ? element_bits(src, 6, 2) : element_bits(src, 3, 6);
                        right = right && element_bits(dst, i0, i1) == want;
                    }
                struct ggml_tensor *tr = ggml_cont(ctx, ggml_transpose(ctx, src));
                right = right && tr != NULL && optest_compute(ctx, tr, n_threads, use_ref) == GGML_STATUS_SUCCESS;
                for (int64_t i1 = 0; right && i1 < 10; i1++)
                    for (int64_t i0 = 0; i0 < 11; i0++)
                        right = right && element_bits(tr, i0, i1) == element_bits(src, i1, i0);
            }
        ok(right, "%s: rows and columns copied into rows and columns, and cont of the transpose, bit for bit",
           ggml_type_name(type));
        ggml_free(ctx);
    }
}

int main(void)
{
    tap_capture_log();
    cpu = ggml_backend_cpu_init();
    if (cpu == NULL) {
        ok(false, "the CPU backend initialises");
        return tap_done();
    }
    test_plain_matrix();
    test_into_quantized();
    test_from_quantized();
    test_reshaping_copies();
    test_transposes();
    test_dup_inplace();
    test_byte_types();
    test_edge_values();
    test_refused();
    test_split_blocks_refused();
    test_float_to_int();
    test_quantize_non_finite();
    test_constructor_errors();
    ggml_backend_free(cpu);
    return tap_done();
}
