/*
 * ops/copy.c - DUP, CPY and CONT: element-wise copies with type conversion.
 *
 * Sources of type F32, F16, BF16, I32 (and the quantized types, through
 * their to_float) go to F32, F16, BF16, I32 or any type with a
 * from_float_ref; any type of single-element blocks (I8, I16, I64, F64)
 * is copied to its own type in any layout.  Shapes may differ as long as the element counts agree:
 * elements are taken and stored in row-major order of each tensor's own
 * shape, following its strides.
 *
 * Two paths with the same results, bit for bit:
 *   - the reference (params->use_ref): element by element through the
 *     scalar conversions, or row by row through the type traits for
 *     quantized rows;
 *   - the fast one: packed rows converted in bulk by the kernel table's
 *     to_float and from_float entries (through F32 when neither side is
 *     F32), whole tensors as one span when both are contiguous; and
 *     same-type copies between tensors of one shape whose packed
 *     dimensions differ (cont of a transpose or permute) as tiled matrix
 *     transposes (the table's transpose32 and transpose16).
 * Quantized destinations are encoded with from_float_ref on both paths:
 * the table's encoders may differ from it on blocks holding a NaN.
 *
 * Threads split the destination rows, the elements of a contiguous span,
 * or a transpose's strips of columns.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "ggml-impl.h"
#include "cpu-private.h"

static bool plain_type(enum ggml_type type)
{
    return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16 ||
           type == GGML_TYPE_I32;
}

/* A float-type element, or an I32 one, as F32. */
static float load_plain(enum ggml_type type, const char *p)
{
    return type == GGML_TYPE_I32 ? (float) *(const int32_t *) p : ggml__load_float(type, p);
}

static void store_plain(enum ggml_type type, char *p, float v)
{
    if (type == GGML_TYPE_I32)
        *(int32_t *) p = (int32_t) ggml__float_to_int(v, INT32_MIN, INT32_MAX);
    else
        ggml__store_float(type, p, v);
}

static bool copy_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    if (src == NULL || ggml_nelements(src) != ggml_nelements(dst))
        return false;
    const bool src_ok = plain_type(src->type) ||
                        (ggml_get_type_traits(src->type)->to_float != NULL && ggml_is_contiguous_rows(src) &&
                         src->ne[0] == dst->ne[0]);
    const bool dst_ok = plain_type(dst->type) ||
                        (ggml_get_type_traits(dst->type)->from_float_ref != NULL && ggml_is_contiguous_rows(dst) &&
                         src->ne[0] == dst->ne[0]);
    if (src->type == dst->type && ggml_blck_size(src->type) == 1)
        /* any type of single-element blocks (I8, I16, I64, F64 too): bytes, element by element */
        return true;
    if (src->type == dst->type && !plain_type(src->type))
        /* same quantized type: rows are copied as runs of adjacent blocks */
        return src->ne[0] == dst->ne[0] && ggml_is_contiguous_rows(src) && ggml_is_contiguous_rows(dst);
    return src_ok && dst_ok;
}

/*
 * Copies one element from s to d: byte for byte when the types agree (so
 * NaN payloads and integers beyond 2^24 survive), else through F32.
 */
static void copy_element(enum ggml_type src_type, const char *s, enum ggml_type dst_type, char *d)
{
    if (src_type == dst_type)
        memmove(d, s, ggml_type_size(src_type));
    else
        store_plain(dst_type, d, load_plain(src_type, s));
}

/* Floats of scratch per thread: a row, and at least a useful chunk of a span. */
static int64_t scratch_floats(const struct ggml_tensor *dst)
{
    return (dst->ne[0] > 1024 ? dst->ne[0] : 1024) + 16;
}

/* Scratch: one float row per thread for conversions through F32. */
static size_t copy_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    return (size_t) n_tasks * (size_t) scratch_floats(dst) * sizeof(float);
}

/* True when the elements of t's rows are adjacent (blocks of several always are). */
static bool packed_rows(const struct ggml_tensor *t)
{
    return ggml_blck_size(t->type) > 1 || t->nb[0] == ggml_type_size(t->type);
}

/* F32 from n packed elements of a type with a decoder (not F32, not I32). */
static void decode_span(const struct ggml__cpu_kernels *k, enum ggml_type type, const void *x, float *y, int64_t n)
{
    k->to_float[type](x, y, n);
}

/* n F32 values into packed elements of dst_type (not F32). */
static void encode_span(const struct ggml__cpu_kernels *k, enum ggml_type type, const float *x, void *y, int64_t n)
{
    if (plain_type(type) && k->from_float[type] != NULL)
        k->from_float[type](x, y, n);
    else
        ggml_get_type_traits(type)->from_float_ref(x, y, n);
}

/*
 * Converts n packed elements (whole blocks for block types) from s to d,
 * in bulk; scratch holds scratch_n floats for conversions through F32.
 * Same types are copied byte for byte.
 */
static void convert_span(const struct ggml__cpu_kernels *k, enum ggml_type src_type, const char *s,
                         enum ggml_type dst_type, char *d, int64_t n, float *scratch, int64_t scratch_n)
{
    if (src_type == dst_type) {
        memmove(d, s, ggml_row_size(src_type, n));
        return;
    }
    if (src_type == GGML_TYPE_F32) {
        encode_span(k, dst_type, (const float *) (const void *) s, d, n);
        return;
    }
    if (dst_type == GGML_TYPE_F32 && src_type != GGML_TYPE_I32) {
        decode_span(k, src_type, s, (float *) (void *) d, n);
        return;
    }
    /* through F32 in chunks of whole blocks of both types */
    const int64_t blck = ggml_blck_size(src_type) > ggml_blck_size(dst_type) ? ggml_blck_size(src_type)
                                                                            : ggml_blck_size(dst_type);
    int64_t chunk = scratch_n / blck * blck;
    if (chunk <= 0 || chunk > n)
        chunk = n;
    for (int64_t i = 0; i < n; i += chunk) {
        const int64_t m = n - i < chunk ? n - i : chunk;
        const char *sp = s + ggml_row_size(src_type, i);
        if (src_type == GGML_TYPE_I32)
            for (int64_t j = 0; j < m; j++)
                scratch[j] = (float) ((const int32_t *) (const void *) sp)[j];
        else
            decode_span(k, src_type, sp, scratch, m);
        if (dst_type == GGML_TYPE_F32)
            memcpy(d + (size_t) i * sizeof(float), scratch, (size_t) m * sizeof(float));
        else
            encode_span(k, dst_type, scratch, d + ggml_row_size(dst_type, i), m);
    }
}

/*
 * Both tensors contiguous and of element-sized blocks: one span, split
 * across the threads in pieces of whole cache lines.
 */
static void copy_span(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int64_t n = ggml_nelements(dst), step = 64;
    int64_t first, last;
    ggml__split_rows((n + step - 1) / step, params->ith, params->nth, &first, &last);
    first *= step;
    last = last * step < n ? last * step : n;
    if (first >= last)
        return;
    const int64_t scratch_n = scratch_floats(dst);
    float *scratch = (float *) params->wdata + (size_t) params->ith * (size_t) scratch_n;
    convert_span(params->kernels, src->type, (const char *) src->data + first * (int64_t) ggml_type_size(src->type),
                 dst->type, (char *) dst->data + first * (int64_t) ggml_type_size(dst->type), last - first, scratch,
                 scratch_n);
}

/* Columns of a transpose strip: a multiple of the transpose's tile. */
#define TRANSPOSE_STRIP 64

/*
 * The dimension along which t's elements are adjacent (nb == the element
 * size, extent > 1), or -1.
 */
static int packed_dim(const struct ggml_tensor *t)
{
    for (int d = 0; d < GGML_MAX_DIMS; d++)
        if (t->ne[d] > 1 && t->nb[d] == ggml_type_size(t->type))
            return d;
    return -1;
}

/*
 * A same-type copy between tensors of one shape whose elements are packed
 * along different dimensions (cont of a transpose or a permute, cpy into a
 * transposed view) is a matrix transpose in each plane of the two other
 * dimensions: returns false when dst is not one.  Rows of the transpose run
 * along dst's packed dimension, columns along src's; the columns of every
 * plane are cut in strips that the threads share out.
 */
static bool copy_transposed(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const size_t es = ggml_type_size(dst->type);
    if (src->type != dst->type || ggml_blck_size(dst->type) != 1 || !ggml_are_same_shape(src, dst))
        return false;
    const int rd = packed_dim(dst), cd = packed_dim(src);
    if (rd < 0 || cd < 0 || rd == cd)
        return false;
    void (*transpose)(int64_t, int64_t, const void *, ptrdiff_t, void *, ptrdiff_t) =
        es == 4 ? params->kernels->transpose32 : es == 2 ? params->kernels->transpose16 : NULL;
    if (transpose == NULL)
        return false;

    int outer[2], n_outer = 0;
    for (int d = 0; d < GGML_MAX_DIMS; d++)
        if (d != rd && d != cd)
            outer[n_outer++] = d;
    const int64_t strips = (dst->ne[cd] + TRANSPOSE_STRIP - 1) / TRANSPOSE_STRIP;
    const int64_t n_units = strips * dst->ne[outer[0]] * dst->ne[outer[1]];
    int64_t first, last;
    ggml__split_rows(n_units, params->ith, params->nth, &first, &last);
    for (int64_t u = first; u < last; u++) {
        const int64_t strip = u % strips, plane = u / strips;
        const int64_t j0 = plane % dst->ne[outer[0]], j1 = plane / dst->ne[outer[0]];
        const int64_t c0 = strip * TRANSPOSE_STRIP;
        const int64_t n_cols = dst->ne[cd] - c0 < TRANSPOSE_STRIP ? dst->ne[cd] - c0 : TRANSPOSE_STRIP;
        const char *s = (const char *) src->data + j0 * src->nb[outer[0]] + j1 * src->nb[outer[1]] +
                        c0 * src->nb[cd];
        char *d = (char *) dst->data + j0 * dst->nb[outer[0]] + j1 * dst->nb[outer[1]] + c0 * dst->nb[cd];
        transpose(dst->ne[rd], n_cols, s, (ptrdiff_t) src->nb[rd], d, (ptrdiff_t) dst->nb[cd]);
    }
    return true;
}

/*
 * Destination rows whose elements map row-for-row onto source rows (same
 * ne[0]): block copies or one row conversion per row.
 */
static void copy_rows(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int64_t nrows = ggml_nrows(dst);
    int64_t first, last;
    ggml__split_rows(nrows, params->ith, params->nth, &first, &last);
    const int64_t scratch_n = scratch_floats(dst);
    float *row = (float *) params->wdata + (size_t) params->ith * (size_t) scratch_n;
    /* the fast path converts packed rows in bulk */
    const bool bulk = !params->use_ref && packed_rows(src) && packed_rows(dst);

    const struct ggml_type_traits *st = ggml_get_type_traits(src->type);
    const struct ggml_type_traits *dt = ggml_get_type_traits(dst->type);
    for (int64_t r = first; r < last; r++) {
        /* the r-th row in each tensor's own shape */
        const int64_t d1 = r % dst->ne[1], d2 = (r / dst->ne[1]) % dst->ne[2], d3 = r / (dst->ne[1] * dst->ne[2]);
        const int64_t s1 = r % src->ne[1], s2 = (r / src->ne[1]) % src->ne[2], s3 = r / (src->ne[1] * src->ne[2]);
        const char *s = (const char *) src->data + s1 * src->nb[1] + s2 * src->nb[2] + s3 * src->nb[3];
        char *d = (char *) dst->data + d1 * dst->nb[1] + d2 * dst->nb[2] + d3 * dst->nb[3];

        if (bulk) {
            convert_span(params->kernels, src->type, s, dst->type, d, src->ne[0], row, scratch_n);
            continue;
        }
        if (src->type == dst->type) {
            if (ggml_blck_size(src->type) == 1)
                for (int64_t i = 0; i < src->ne[0]; i++)
                    copy_element(src->type, s + i * src->nb[0], dst->type, d + i * dst->nb[0]);
            else
                memmove(d, s, ggml_row_size(src->type, src->ne[0]));
            continue;
        }
        if (plain_type(src->type)) {
            for (int64_t i = 0; i < src->ne[0]; i++)
                row[i] = load_plain(src->type, s + i * src->nb[0]);
        } else {
            st->to_float(s, row, src->ne[0]);
        }
        if (plain_type(dst->type)) {
            for (int64_t i = 0; i < dst->ne[0]; i++)
                store_plain(dst->type, d + i * dst->nb[0], row[i]);
        } else {
            dt->from_float_ref(row, d, dst->ne[0]);
        }
    }
}

/*
 * A position in a tensor's row-major order (indices i[0..3]), moved
 * forward by runs that stay inside one row.
 */
struct walk {
    const struct ggml_tensor *t;
    int64_t i[4];
};

static struct walk walk_at(const struct ggml_tensor *t, int64_t flat)
{
    struct walk w = { t, { 0, 0, 0, 0 } };
    ggml_unravel_index(t, flat, &w.i[0], &w.i[1], &w.i[2], &w.i[3]);
    return w;
}

static char *walk_address(const struct walk *w)
{
    return ggml__elem_ptr(w->t, w->i[0], w->i[1], w->i[2], w->i[3]);
}

/* Moves n <= ne[0] - i[0] elements on: to the next row when the run ends one. */
static void walk_forward(struct walk *w, int64_t n)
{
    w->i[0] += n;
    for (int d = 0; d < 3 && w->i[d] == w->t->ne[d]; d++) {
        w->i[d] = 0;
        w->i[d + 1]++;
    }
}

/*
 * Shapes that differ row-wise (types of single-element blocks): in
 * row-major order, by runs that lie in one row of the source and one of
 * the destination, each a strided copy (a block move where both rows
 * are packed and the types agree).
 */
static void copy_elements(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const size_t size = ggml_type_size(src->type);
    const bool moves = src->type == dst->type && src->nb[0] == size && dst->nb[0] == size;
    int64_t first, last;
    ggml__split_rows(ggml_nelements(dst), params->ith, params->nth, &first, &last);
    struct walk s = walk_at(src, first), d = walk_at(dst, first);
    for (int64_t i = first; i < last;) {
        int64_t run = last - i;
        run = src->ne[0] - s.i[0] < run ? src->ne[0] - s.i[0] : run;
        run = dst->ne[0] - d.i[0] < run ? dst->ne[0] - d.i[0] : run;
        const char *from = walk_address(&s);
        char *to = walk_address(&d);
        if (moves)
            memmove(to, from, (size_t) run * size);
        else
            for (int64_t k = 0; k < run; k++)
                copy_element(src->type, from + k * src->nb[0], dst->type, to + k * dst->nb[0]);
        walk_forward(&s, run);
        walk_forward(&d, run);
        i += run;
    }
}

static void copy_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    if (!params->use_ref) {
        if (ggml_is_contiguous(src) && ggml_is_contiguous(dst) && ggml_blck_size(src->type) == 1 &&
            ggml_blck_size(dst->type) == 1) {
            copy_span(params, dst);
            return;
        }
        if (copy_transposed(params, dst))
            return;
    }
    if (src->ne[0] == dst->ne[0])
        copy_rows(params, dst);
    else
        copy_elements(params, dst);
}

const struct ggml__op_impl ggml__op_copy = {
    .kernel = copy_kernel,
    .supports = copy_supports,
    .n_tasks = NULL,
    .work_size = copy_work_size,
};
