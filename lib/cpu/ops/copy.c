/*
 * ops/copy.c - DUP, CPY and CONT: element-wise copies with type conversion.
 *
 * Sources of type F32, F16, BF16, I32 (and the quantized types, through
 * their to_float) go to F32, F16, BF16, I32 or any type with a
 * from_float_ref.  Shapes may differ as long as the element counts agree:
 * elements are taken and stored in row-major order of each tensor's own
 * shape, following its strides.  Threads split the destination rows.
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
        memcpy(d, s, ggml_type_size(src_type));
    else
        store_plain(dst_type, d, load_plain(src_type, s));
}

/* Scratch: one float row per thread for conversions through F32. */
static size_t copy_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    return (size_t) n_tasks * (size_t) (dst->ne[0] + 16) * sizeof(float);
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
    float *row = (float *) params->wdata + (size_t) params->ith * (size_t) (dst->ne[0] + 16);

    const struct ggml_type_traits *st = ggml_get_type_traits(src->type);
    const struct ggml_type_traits *dt = ggml_get_type_traits(dst->type);
    for (int64_t r = first; r < last; r++) {
        /* the r-th row in each tensor's own shape */
        const int64_t d1 = r % dst->ne[1], d2 = (r / dst->ne[1]) % dst->ne[2], d3 = r / (dst->ne[1] * dst->ne[2]);
        const int64_t s1 = r % src->ne[1], s2 = (r / src->ne[1]) % src->ne[2], s3 = r / (src->ne[1] * src->ne[2]);
        const char *s = (const char *) src->data + s1 * src->nb[1] + s2 * src->nb[2] + s3 * src->nb[3];
        char *d = (char *) dst->data + d1 * dst->nb[1] + d2 * dst->nb[2] + d3 * dst->nb[3];

        if (src->type == dst->type) {
            if (plain_type(src->type))
                for (int64_t i = 0; i < src->ne[0]; i++)
                    copy_element(src->type, s + i * src->nb[0], dst->type, d + i * dst->nb[0]);
            else
                memcpy(d, s, ggml_row_size(src->type, src->ne[0]));
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

/* Shapes that differ row-wise: element by element in row-major order. */
static void copy_elements(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int64_t n = ggml_nelements(dst);
    int64_t first, last;
    ggml__split_rows(n, params->ith, params->nth, &first, &last);
    for (int64_t i = first; i < last; i++) {
        int64_t si[4], di[4];
        ggml_unravel_index(src, i, &si[0], &si[1], &si[2], &si[3]);
        ggml_unravel_index(dst, i, &di[0], &di[1], &di[2], &di[3]);
        const char *s = (const char *) src->data + si[0] * src->nb[0] + si[1] * src->nb[1] +
                        si[2] * src->nb[2] + si[3] * src->nb[3];
        char *d = (char *) dst->data + di[0] * dst->nb[0] + di[1] * dst->nb[1] + di[2] * dst->nb[2] +
                  di[3] * dst->nb[3];
        copy_element(src->type, s, dst->type, d);
    }
}

static void copy_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    if (dst->src[0]->ne[0] == dst->ne[0])
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
