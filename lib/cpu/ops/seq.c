/*
 * ops/seq.c - ARANGE, TIMESTEP_EMBEDDING, CUMSUM, TRI, FILL, DIAG,
 * DIAG_MASK_ZERO, REPEAT_BACK and ADD_ID.
 *
 * Types: F32 everywhere (ADD_ID's ids I32), except DIAG_MASK_ZERO, which
 * takes F32, F16 or BF16 (zero is all-zero bits in each).  Every kernel
 * splits the rows of dst between threads; each has a reference path
 * (params->use_ref: element by element through the strides) and a faster
 * path for rows whose elements are packed.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "ggml-impl.h"
#include "cpu-private.h"

/* Indices (i1, i2, i3) of row r of t. */
static void row_index(const struct ggml_tensor *t, int64_t r, int64_t *i1, int64_t *i2, int64_t *i3)
{
    *i1 = r % t->ne[1];
    *i2 = (r / t->ne[1]) % t->ne[2];
    *i3 = r / (t->ne[1] * t->ne[2]);
}

static char *row_ptr(const struct ggml_tensor *t, int64_t i1, int64_t i2, int64_t i3)
{
    return (char *) t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

#define F32_AT(row, t, i) (*(float *) ((row) + (i) * (t)->nb[0]))

/* dst and src[0] F32 of the same shape. */
static bool unary_f32_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    return src != NULL && src->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 && ggml_are_same_shape(src, dst);
}

/* ---------------------------------------------------------------- arange */

static bool arange_supports(const struct ggml_tensor *dst)
{
    return dst->type == GGML_TYPE_F32;
}

/* dst[i] = start + i * step, for every element of dst taken as a vector. */
static void arange_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const float start = ggml__get_op_params_f32(dst, 0), step = ggml__get_op_params_f32(dst, 2);
    const int64_t n = dst->ne[0];
    int64_t first, last;
    ggml__split_rows(n, params->ith, params->nth, &first, &last);
    if (params->use_ref || dst->nb[0] != sizeof(float)) {
        for (int64_t i = first; i < last; i++)
            F32_AT((char *) dst->data, dst, i) = start + step * (float) i;
        return;
    }
    float *y = (float *) dst->data;
    for (int64_t i = first; i < last; i++)
        y[i] = start + step * (float) i;
}

const struct ggml__op_impl ggml__op_arange = {
    .kernel = arange_kernel,
    .supports = arange_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* ---------------------------------------------------- timestep_embedding */

static bool timestep_embedding_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    return src != NULL && src->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 &&
           dst->ne[0] == ggml__get_op_params_i32(dst, 0) && ggml__get_op_params_i32(dst, 1) > 0 &&
           dst->ne[1] == src->ne[0] && dst->ne[2] == 1 && dst->ne[3] == 1;
}

/*
 * Row j of dst for timestep t: with half = dim / 2 and
 * f_k = exp(-ln(max_period) * k / half), cos(t f_k) at k and sin(t f_k) at
 * half + k; an odd dim leaves a last 0.
 */
static void timestep_embedding_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int64_t dim = dst->ne[0], half = dim / 2;
    const float log_period = logf((float) ggml__get_op_params_i32(dst, 1));
    int64_t first, last;
    ggml__split_rows(dst->ne[1], params->ith, params->nth, &first, &last);
    for (int64_t j = first; j < last; j++) {
        const float t = *(const float *) ((const char *) src->data + j * src->nb[0]);
        char *row = (char *) dst->data + j * dst->nb[1];
        for (int64_t k = 0; k < half; k++) {
            const float arg = t * expf(-log_period * (float) k / (float) half);
            F32_AT(row, dst, k) = cosf(arg);
            F32_AT(row, dst, half + k) = sinf(arg);
        }
        if (dim % 2 != 0)
            F32_AT(row, dst, dim - 1) = 0.0f;
    }
}

const struct ggml__op_impl ggml__op_timestep_embedding = {
    .kernel = timestep_embedding_kernel,
    .supports = timestep_embedding_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* ---------------------------------------------------------------- cumsum */

/* Inclusive running sum along each row, accumulated in F32. */
static void cumsum_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int64_t ne0 = dst->ne[0];
    const bool packed = !params->use_ref && src->nb[0] == sizeof(float) && dst->nb[0] == sizeof(float);
    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i1, i2, i3;
        row_index(dst, r, &i1, &i2, &i3);
        char *in = row_ptr(src, i1, i2, i3), *out = row_ptr(dst, i1, i2, i3);
        float acc = 0.0f;
        if (packed) {
            const float *x = (const float *) in;
            float *y = (float *) out;
            for (int64_t i = 0; i < ne0; i++) {
                acc += x[i];
                y[i] = acc;
            }
            continue;
        }
        for (int64_t i = 0; i < ne0; i++) {
            acc += F32_AT(in, src, i);
            F32_AT(out, dst, i) = acc;
        }
    }
}

const struct ggml__op_impl ggml__op_cumsum = {
    .kernel = cumsum_kernel,
    .supports = unary_f32_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* ------------------------------------------------------------------- tri */

static bool tri_supports(const struct ggml_tensor *dst)
{
    const int32_t type = ggml__get_op_params_i32(dst, 0);
    return unary_f32_supports(dst) && dst->ne[0] == dst->ne[1] && type >= GGML_TRI_TYPE_UPPER_DIAG &&
           type <= GGML_TRI_TYPE_LOWER;
}

/* Columns [begin, end) of row i1 that the triangle keeps (i0 column, i1 row). */
static void tri_kept(int32_t type, int64_t i1, int64_t ne0, int64_t *begin, int64_t *end)
{
    switch (type) {
    case GGML_TRI_TYPE_UPPER_DIAG: *begin = i1;     *end = ne0;    break;
    case GGML_TRI_TYPE_UPPER:      *begin = i1 + 1; *end = ne0;    break;
    case GGML_TRI_TYPE_LOWER_DIAG: *begin = 0;      *end = i1 + 1; break;
    default:                       *begin = 0;      *end = i1;     break;
    }
    if (*begin > ne0)
        *begin = ne0;
    if (*end > ne0)
        *end = ne0;
}

static void tri_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int32_t type = ggml__get_op_params_i32(dst, 0);
    const int64_t ne0 = dst->ne[0];
    const bool packed = !params->use_ref && src->nb[0] == sizeof(float) && dst->nb[0] == sizeof(float);
    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i1, i2, i3, begin, end;
        row_index(dst, r, &i1, &i2, &i3);
        tri_kept(type, i1, ne0, &begin, &end);
        char *in = row_ptr(src, i1, i2, i3), *out = row_ptr(dst, i1, i2, i3);
        if (packed) {
            const float *x = (const float *) in;
            float *y = (float *) out;
            for (int64_t i = 0; i < begin; i++)
                y[i] = 0.0f;
            for (int64_t i = begin; i < end; i++)
                y[i] = x[i];
            for (int64_t i = end; i < ne0; i++)
                y[i] = 0.0f;
            continue;
        }
        for (int64_t i = 0; i < ne0; i++)
            F32_AT(out, dst, i) = i >= begin && i < end ? F32_AT(in, src, i) : 0.0f;
    }
}

const struct ggml__op_impl ggml__op_tri = {
    .kernel = tri_kernel,
    .supports = tri_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* ------------------------------------------------------------------ fill */

static bool fill_supports(const struct ggml_tensor *dst)
{
    return dst->type == GGML_TYPE_F32;
}

static void fill_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const float c = ggml__get_op_params_f32(dst, 0);
    const int64_t ne0 = dst->ne[0];
    const bool packed = !params->use_ref && dst->nb[0] == sizeof(float);
    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i1, i2, i3;
        row_index(dst, r, &i1, &i2, &i3);
        char *out = row_ptr(dst, i1, i2, i3);
        if (packed) {
            float *y = (float *) out;
            for (int64_t i = 0; i < ne0; i++)
                y[i] = c;
            continue;
        }
        for (int64_t i = 0; i < ne0; i++)
            F32_AT(out, dst, i) = c;
    }
}

const struct ggml__op_impl ggml__op_fill = {
    .kernel = fill_kernel,
    .supports = fill_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* ------------------------------------------------------------------ diag */

static bool diag_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    return src != NULL && src->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 && src->ne[1] == 1 &&
           dst->ne[0] == src->ne[0] && dst->ne[1] == src->ne[0] && dst->ne[2] == src->ne[2] &&
           dst->ne[3] == src->ne[3];
}

/* Row i1 of dst: zero but for src's element i1 at column i1. */
static void diag_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int64_t ne0 = dst->ne[0];
    const bool packed = !params->use_ref && dst->nb[0] == sizeof(float);
    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i1, i2, i3;
        row_index(dst, r, &i1, &i2, &i3);
        char *in = row_ptr(src, 0, i2, i3), *out = row_ptr(dst, i1, i2, i3);
        const float v = F32_AT(in, src, i1);
        if (packed) {
            float *y = (float *) out;
            for (int64_t i = 0; i < ne0; i++)
                y[i] = 0.0f;
            y[i1] = v;
            continue;
        }
        for (int64_t i = 0; i < ne0; i++)
            F32_AT(out, dst, i) = i == i1 ? v : 0.0f;
    }
}

const struct ggml__op_impl ggml__op_diag = {
    .kernel = diag_kernel,
    .supports = diag_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* -------------------------------------------------------- diag_mask_zero */

static bool diag_mask_zero_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const enum ggml_type t = dst->type;
    return src != NULL && (t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_BF16) && src->type == t &&
           ggml_are_same_shape(src, dst) && ggml__get_op_params_i32(dst, 0) >= 0;
}

/* Columns i0 > n_past + i1 become 0; the others are copied bit for bit. */
static void diag_mask_zero_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int64_t n_past = ggml__get_op_params_i32(dst, 0);
    const int64_t ne0 = dst->ne[0];
    const size_t es = ggml_type_size(dst->type);
    const bool packed = !params->use_ref && src->nb[0] == es && dst->nb[0] == es;
    static const char zero[8];
    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i1, i2, i3;
        row_index(dst, r, &i1, &i2, &i3);
        const char *in = row_ptr(src, i1, i2, i3);
        char *out = row_ptr(dst, i1, i2, i3);
        const int64_t kept = n_past + i1 + 1 < ne0 ? n_past + i1 + 1 : ne0;
        if (packed) {
            if (out != in)
                memmove(out, in, (size_t) kept * es);
            memset(out + (size_t) kept * es, 0, (size_t) (ne0 - kept) * es);
            continue;
        }
        for (int64_t i = 0; i < ne0; i++)
            memmove(out + i * dst->nb[0], i < kept ? in + i * src->nb[0] : zero, es);
    }
}

const struct ggml__op_impl ggml__op_diag_mask_zero = {
    .kernel = diag_mask_zero_kernel,
    .supports = diag_mask_zero_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* ----------------------------------------------------------- repeat_back */

static bool repeat_back_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    return src != NULL && src->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 && ggml_can_repeat(dst, src);
}

/*
 * dst[i] = sum of src over every tile: the elements whose indices are i
 * plus multiples of dst's extents.  Each thread owns rows of dst, so no
 * two threads write the same element.
 */
static void repeat_back_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    if (ggml_is_empty(dst))
        return; /* then src is empty too: nothing to sum, and no tile count */
    const int64_t ne0 = dst->ne[0];
    const int64_t k0 = src->ne[0] / dst->ne[0], k1 = src->ne[1] / dst->ne[1];
    const int64_t k2 = src->ne[2] / dst->ne[2], k3 = src->ne[3] / dst->ne[3];
    const bool packed = !params->use_ref && src->nb[0] == sizeof(float) && dst->nb[0] == sizeof(float);
    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i1, i2, i3;
        row_index(dst, r, &i1, &i2, &i3);
        char *out = row_ptr(dst, i1, i2, i3);
        for (int64_t i = 0; i < ne0; i++)
            F32_AT(out, dst, i) = 0.0f;
        if (k0 == 0)
            continue; /* empty tiles: as many as src has rows, each adding nothing */
        for (int64_t t3 = 0; t3 < k3; t3++)
            for (int64_t t2 = 0; t2 < k2; t2++)
                for (int64_t t1 = 0; t1 < k1; t1++) {
                    char *in = row_ptr(src, i1 + t1 * dst->ne[1], i2 + t2 * dst->ne[2], i3 + t3 * dst->ne[3]);
                    for (int64_t t0 = 0; t0 < k0; t0++) {
                        if (packed) {
                            float *y = (float *) out;
                            const float *x = (const float *) in + t0 * ne0;
                            for (int64_t i = 0; i < ne0; i++)
                                y[i] += x[i];
                            continue;
                        }
                        for (int64_t i = 0; i < ne0; i++)
                            F32_AT(out, dst, i) += F32_AT(in, src, t0 * ne0 + i);
                    }
                }
    }
}

const struct ggml__op_impl ggml__op_repeat_back = {
    .kernel = repeat_back_kernel,
    .supports = repeat_back_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* ---------------------------------------------------------------- add_id */

static bool add_id_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1], *ids = dst->src[2];
    return a != NULL && b != NULL && ids != NULL && a->type == GGML_TYPE_F32 && b->type == GGML_TYPE_F32 &&
           ids->type == GGML_TYPE_I32 && dst->type == GGML_TYPE_F32 && ggml_are_same_shape(a, dst) &&
           a->ne[0] == b->ne[0] && a->ne[1] == ids->ne[0] && a->ne[2] == ids->ne[1];
}

/*
 * dst[:, i1, i2, i3] = a[:, i1, i2, i3] + b[:, ids[i1, i2]] (b's planes
 * i2, i3 = 0).  An id outside [0, b->ne[1]) adds nothing: the row of a is
 * copied unchanged.
 */
static void add_id_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1], *ids = dst->src[2];
    const int64_t ne0 = dst->ne[0];
    const bool packed = !params->use_ref && a->nb[0] == sizeof(float) && b->nb[0] == sizeof(float) &&
                        dst->nb[0] == sizeof(float);
    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i1, i2, i3;
        row_index(dst, r, &i1, &i2, &i3);
        const int32_t id = *(const int32_t *) ((const char *) ids->data + i1 * ids->nb[0] + i2 * ids->nb[1]);
        char *in = row_ptr(a, i1, i2, i3), *out = row_ptr(dst, i1, i2, i3);
        if (id < 0 || id >= b->ne[1]) {
            for (int64_t i = 0; i < ne0; i++)
                F32_AT(out, dst, i) = F32_AT(in, a, i);
            continue;
        }
        char *brow = (char *) b->data + id * b->nb[1];
        if (packed) {
            const float *x = (const float *) in, *y = (const float *) brow;
            float *z = (float *) out;
            for (int64_t i = 0; i < ne0; i++)
                z[i] = x[i] + y[i];
            continue;
        }
        for (int64_t i = 0; i < ne0; i++)
            F32_AT(out, dst, i) = F32_AT(in, a, i) + F32_AT(brow, b, i);
    }
}

const struct ggml__op_impl ggml__op_add_id = {
    .kernel = add_id_kernel,
    .supports = add_id_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};
