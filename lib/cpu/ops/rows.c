/*
 * ops/rows.c - GET_ROWS, SET_ROWS, SET, ACC and DIAG_MASK_INF.
 *
 * GET_ROWS  dst row (i, j, k) = src0 row (idx[i, j, k], j, k), converted to
 *           F32 (F32, F16, BF16 and every type with a to_float) or copied
 *           (I32).  Rows are decoded by the kernel table's to_float.  An index outside src0's rows leaves that dst row zero.
 * SET_ROWS  dst row (idx[i, j % nj, k % nk], j, k) = src0 row (i, j, k),
 *           converted from F32 to dst's type (F32, F16, BF16, I32 truncated
 *           and saturated, or any type with a from_float_ref).  An index
 *           outside dst's rows skips that source row.  When several rows
 *           name the same destination row, the last one (in row order)
 *           wins, whatever the thread count.
 * SET, ACC  dst = src0, then src1 written into (SET) or added to (ACC) the
 *           view of dst given by op_params { nb1, nb2, nb3, offset }.
 *           Parts of that view that overlap one another get an unspecified
 *           one of the values written there.
 * DIAG_MASK_INF  dst = src0 with element (i0, i1) of every matrix set to
 *           -INF where i0 > n_past + i1.
 *
 * Threads split rows; SET and ACC meet at one barrier between the copy of
 * src0 and the writes into it, so every thread of the job runs them.  Each
 * kernel has a plain reference path (params->use_ref: element by element,
 * following the strides) and a path for contiguous rows that works on
 * whole rows.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "cpu-private.h"

static bool float_type(enum ggml_type type)
{
    return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16;
}

/* True when d divides n (an extent of 0 divides only 0). */
static bool divides(int64_t d, int64_t n)
{
    return d > 0 ? n % d == 0 : n == 0;
}

/* Row r of t's rows in row-major order, as indices (i1, i2, i3). */
static void unravel_row(const struct ggml_tensor *t, int64_t r, int64_t *i1, int64_t *i2, int64_t *i3)
{
    *i1 = r % t->ne[1];
    *i2 = (r / t->ne[1]) % t->ne[2];
    *i3 = r / (t->ne[1] * t->ne[2]);
}

/* ---------------------------------------------------------------- get_rows */

static bool get_rows_source_ok(const struct ggml_tensor *src)
{
    if (float_type(src->type) || src->type == GGML_TYPE_I32)
        return true;
    return ggml_get_type_traits(src->type)->to_float != NULL && ggml_is_contiguous_rows(src);
}

static bool get_rows_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0], *idx = dst->src[1];
    if (src == NULL || idx == NULL || idx->type != GGML_TYPE_I32 || !get_rows_source_ok(src))
        return false;
    const enum ggml_type out_type = src->type == GGML_TYPE_I32 ? GGML_TYPE_I32 : GGML_TYPE_F32;
    return dst->type == out_type && dst->nb[0] == ggml_type_size(out_type) && dst->ne[0] == src->ne[0] &&
           dst->ne[1] == idx->ne[0] && dst->ne[2] == idx->ne[1] && dst->ne[3] == idx->ne[2] &&
           src->ne[2] == idx->ne[1] && src->ne[3] == idx->ne[2] && idx->ne[3] == 1;
}

/*
 * Converts n elements of src (stride nb0) into the packed row out: packed
 * F16, BF16 and quantized rows through the kernel table's to_float (the
 * type traits' decoder on the reference path).
 */
static void gather_row(const struct ggml__compute_params *params, const struct ggml_tensor *src, const char *in,
                       int64_t n, void *out)
{
    const size_t nb0 = src->nb[0];
    const bool packed = !params->use_ref && nb0 == ggml_type_size(src->type);
    switch (src->type) {
    case GGML_TYPE_F32:
    case GGML_TYPE_I32: /* both copied bit for bit */
        if (packed) {
            memmove(out, in, (size_t) n * 4);
        } else {
            for (int64_t i = 0; i < n; i++)
                memmove((char *) out + 4 * i, in + i * nb0, 4);
        }
        break;
    case GGML_TYPE_F16:
    case GGML_TYPE_BF16:
        if (packed)
            params->kernels->to_float[src->type](in, out, n);
        else
            ggml__load_row_float(src->type, in, nb0, n, out);
        break;
    default: { /* quantized: whole blocks, the only form they come in */
        const ggml_to_float_t to_float =
            params->use_ref ? ggml_get_type_traits(src->type)->to_float : params->kernels->to_float[src->type];
        to_float(in, out, n);
        break;
    }
    }
}

static void get_rows_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0], *idx = dst->src[1];
    const int64_t ne0 = src->ne[0];
    const size_t out_row_size = (size_t) ne0 * ggml_type_size(dst->type);

    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i10, i11, i12; /* the index's position = the dst row */
        unravel_row(dst, r, &i10, &i11, &i12);
        const int64_t row = *(const int32_t *) ((const char *) idx->data + i10 * idx->nb[0] +
                                                i11 * idx->nb[1] + i12 * idx->nb[2]);
        char *out = (char *) dst->data + i10 * dst->nb[1] + i11 * dst->nb[2] + i12 * dst->nb[3];
        if (row < 0 || row >= src->ne[1]) {
            memset(out, 0, out_row_size); /* no such row: zeros */
            continue;
        }
        const char *in = (const char *) src->data + row * src->nb[1] + i11 * src->nb[2] + i12 * src->nb[3];
        gather_row(params, src, in, ne0, out);
    }
}

const struct ggml__op_impl ggml__op_get_rows = {
    .kernel = get_rows_kernel,
    .supports = get_rows_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* ---------------------------------------------------------------- set_rows */

static bool set_rows_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0], *idx = dst->src[1];
    if (src == NULL || idx == NULL || (src->type != GGML_TYPE_F32 && src->type != GGML_TYPE_F16) ||
        !ggml_is_contiguous_rows(src))
        return false;
    if (idx->type != GGML_TYPE_I32 && idx->type != GGML_TYPE_I64)
        return false;
    if (!ggml_is_contiguous_rows(dst) || !(float_type(dst->type) || dst->type == GGML_TYPE_I32 ||
                                           ggml_get_type_traits(dst->type)->from_float_ref != NULL))
        return false;
    return dst->ne[0] == src->ne[0] && dst->ne[2] == src->ne[2] && dst->ne[3] == src->ne[3] &&
           src->ne[1] == idx->ne[0] && divides(idx->ne[1], src->ne[2]) && divides(idx->ne[2], src->ne[3]) &&
           idx->ne[3] == 1;
}

/*
 * Stores the n floats of x into the row out of dst's type: F16 and BF16
 * through the kernel table's from_float unless use_ref.
 */
static void scatter_row(const struct ggml__cpu_kernels *kernels, enum ggml_type type, const float *x, void *out,
                        int64_t n, bool use_ref)
{
    switch (type) {
    case GGML_TYPE_F32:
        if (use_ref) {
            for (int64_t i = 0; i < n; i++)
                ((float *) out)[i] = x[i];
        } else {
            memmove(out, x, (size_t) n * sizeof(float));
        }
        break;
    case GGML_TYPE_F16:
    case GGML_TYPE_BF16:
        if (use_ref)
            ggml__store_row_float(type, out, ggml_type_size(type), n, x);
        else
            kernels->from_float[type](x, out, n);
        break;
    case GGML_TYPE_I32: {
        int32_t *y = out;
        for (int64_t i = 0; i < n; i++)
            y[i] = (int32_t) ggml__float_to_int(x[i], INT32_MIN, INT32_MAX);
        break;
    }
    default:
        ggml_get_type_traits(type)->from_float_ref(x, out, n);
        break;
    }
}

/* An F16 source row goes through floats (a thread's scratch row) unless
   the destination is F16 too (then its bytes are copied). */
static bool set_rows_widens(const struct ggml_tensor *dst)
{
    return dst->src[0]->type == GGML_TYPE_F16 && dst->type != GGML_TYPE_F16;
}

static size_t set_rows_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    return set_rows_widens(dst) ? (size_t) n_tasks * (size_t) (dst->src[0]->ne[0] + 16) * sizeof(float) : 0;
}

/*
 * Each destination row has one owner thread (rows are dealt round-robin
 * over the threads), and every thread scans all indices in order, writing
 * only the rows it owns: repeated indices resolve as in a sequential pass.
 */
static void set_rows_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0], *idx = dst->src[1];
    const int64_t n_src_rows = src->ne[1], n_dst_rows = dst->ne[1];
    const bool wide = idx->type == GGML_TYPE_I64;
    float *widened = set_rows_widens(dst) ? (float *) params->wdata + (size_t) params->ith * (size_t) (src->ne[0] + 16)
                                          : NULL;

    for (int64_t i3 = 0; i3 < src->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < src->ne[2]; i2++) {
            const int64_t plane = i3 * src->ne[2] + i2;
            const char *idx_row = (const char *) idx->data + (i2 % idx->ne[1]) * idx->nb[1] +
                                  (i3 % idx->ne[2]) * idx->nb[2];
            for (int64_t i = 0; i < n_src_rows; i++) {
                const char *p = idx_row + i * idx->nb[0];
                const int64_t target = wide ? *(const int64_t *) p : *(const int32_t *) p;
                if (target < 0 || target >= n_dst_rows)
                    continue; /* no such row: skipped */
                if ((plane * n_dst_rows + target) % params->nth != params->ith)
                    continue;
                const char *in = (const char *) src->data + i * src->nb[1] + i2 * src->nb[2] + i3 * src->nb[3];
                char *out = (char *) dst->data + target * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3];
                if (src->type == GGML_TYPE_F32) {
                    scatter_row(params->kernels, dst->type, (const float *) in, out, src->ne[0], params->use_ref);
                } else if (widened == NULL) {
                    memmove(out, in, (size_t) src->ne[0] * sizeof(ggml_fp16_t));   /* F16 to F16 */
                } else {
                    ggml__load_row_float(GGML_TYPE_F16, in, sizeof(ggml_fp16_t), src->ne[0], widened);
                    scatter_row(params->kernels, dst->type, widened, out, src->ne[0], params->use_ref);
                }
            }
        }
    }
}

const struct ggml__op_impl ggml__op_set_rows = {
    .kernel = set_rows_kernel,
    .supports = set_rows_supports,
    .n_tasks = NULL,
    .work_size = set_rows_work_size,
};

/* ---------------------------------------------------------------- set, acc */

/* The view of dst that SET and ACC write, from op_params. */
struct view_region {
    int64_t nb1, nb2, nb3, offset;
};

static struct view_region view_region_of(const struct ggml_tensor *dst)
{
    const struct view_region v = {
        ggml__get_op_params_i32(dst, 0), ggml__get_op_params_i32(dst, 1),
        ggml__get_op_params_i32(dst, 2), ggml__get_op_params_i32(dst, 3),
    };
    return v;
}

/*
 * True when the region (b's extents, dst's element size, the strides of
 * op_params) is aligned to the element size and lies inside dst.
 */
static bool view_region_ok(const struct ggml_tensor *dst, const struct ggml_tensor *b)
{
    const struct view_region v = view_region_of(dst);
    const uint64_t es = ggml_type_size(dst->type);
    const int64_t params[4] = { v.nb1, v.nb2, v.nb3, v.offset };
    for (int i = 0; i < 4; i++)
        if (params[i] < 0 || (uint64_t) params[i] % es != 0)
            return false;
    if (ggml_nelements(b) == 0)
        return true;
    /* byte just past the last element, computed without overflow */
    const uint64_t limit = ggml_nbytes(dst);
    const uint64_t strides[4] = { es, (uint64_t) v.nb1, (uint64_t) v.nb2, (uint64_t) v.nb3 };
    uint64_t end = (uint64_t) v.offset + es;
    if (end > limit)
        return false;
    for (int i = 0; i < 4; i++) {
        const uint64_t steps = (uint64_t) (b->ne[i] - 1);
        if (strides[i] != 0 && steps > (limit - end) / strides[i])
            return false;
        end += steps * strides[i];
    }
    return true;
}

static bool view_write_supports(const struct ggml_tensor *dst, bool acc)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    if (a == NULL || b == NULL || a->type != dst->type || b->type != dst->type)
        return false;
    if (acc ? dst->type != GGML_TYPE_F32 : ggml_blck_size(dst->type) != 1)
        return false;
    return ggml_are_same_shape(a, dst) && ggml_is_contiguous(a) && ggml_is_contiguous(dst) &&
           view_region_ok(dst, b);
}

static bool set_supports(const struct ggml_tensor *dst)
{
    return view_write_supports(dst, false);
}

static bool acc_supports(const struct ggml_tensor *dst)
{
    return view_write_supports(dst, true);
}

/*
 * Copies src0 into dst unless they share memory (in place), then waits at
 * the barrier so that no thread writes the view before the copy is whole.
 */
static void copy_source_then_wait(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0];
    if (a->data == dst->data)
        return;
    int64_t first, last;
    ggml__split_rows((int64_t) ggml_nbytes(dst), params->ith, params->nth, &first, &last);
    memmove((char *) dst->data + first, (const char *) a->data + first, (size_t) (last - first));
    ggml__threadpool_barrier(params->pool);
}

static void view_write_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const bool acc = dst->op == GGML_OP_ACC;
    const struct view_region v = view_region_of(dst);
    const size_t es = ggml_type_size(dst->type);
    const int64_t ne0 = b->ne[0];

    copy_source_then_wait(params, dst);
    if (ggml_is_empty(b))
        return; /* nothing to write, however many empty rows b counts */

    int64_t first, last;
    ggml__split_rows(ggml_nrows(b), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i1, i2, i3;
        unravel_row(b, r, &i1, &i2, &i3);
        const int64_t at = v.offset + i1 * v.nb1 + i2 * v.nb2 + i3 * v.nb3;
        const char *in = (const char *) b->data + i1 * b->nb[1] + i2 * b->nb[2] + i3 * b->nb[3];
        char *out = (char *) dst->data + at;
        const bool packed = !params->use_ref && b->nb[0] == es;
        if (!acc) {
            if (packed) {
                memmove(out, in, (size_t) ne0 * es);
            } else {
                for (int64_t i = 0; i < ne0; i++)
                    memmove(out + i * (int64_t) es, in + i * b->nb[0], es);
            }
            continue;
        }
        /* ACC reads src0, which is dst itself when in place */
        const float *base = (const float *) ((const char *) a->data + at);
        float *y = (float *) out;
        if (packed) {
            const float *x = (const float *) in;
            for (int64_t i = 0; i < ne0; i++)
                y[i] = base[i] + x[i];
        } else {
            for (int64_t i = 0; i < ne0; i++)
                y[i] = base[i] + *(const float *) (in + i * b->nb[0]);
        }
    }
}

/* Both meet at a barrier inside the kernel: every thread must run them. */
const struct ggml__op_impl ggml__op_set = {
    .kernel = view_write_kernel,
    .supports = set_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

const struct ggml__op_impl ggml__op_acc = {
    .kernel = view_write_kernel,
    .supports = acc_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};

/* ----------------------------------------------------------- diag_mask_inf */

static bool diag_mask_inf_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    return src != NULL && float_type(dst->type) && src->type == dst->type && ggml_are_same_shape(src, dst) &&
           ggml__get_op_params_i32(dst, 0) >= 0;
}

/* Kept elements are copied bit for bit; the others get the encoding of -INF. */
static void diag_mask_inf_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int64_t n_past = ggml__get_op_params_i32(dst, 0);
    const int64_t ne0 = dst->ne[0];
    const size_t es = ggml_type_size(dst->type);
    const float neg_inf32 = -INFINITY;
    const uint16_t neg_inf16 = dst->type == GGML_TYPE_F16 ? ggml__fp32_to_fp16(-INFINITY)
                                                          : ggml__fp32_to_bf16(-INFINITY).bits;
    const void *neg_inf = dst->type == GGML_TYPE_F32 ? (const void *) &neg_inf32 : (const void *) &neg_inf16;
    const bool packed = !params->use_ref && src->nb[0] == es && dst->nb[0] == es;

    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        int64_t i1, i2, i3;
        unravel_row(dst, r, &i1, &i2, &i3);
        const char *in = (const char *) src->data + i1 * src->nb[1] + i2 * src->nb[2] + i3 * src->nb[3];
        char *out = (char *) dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3];
        /* columns [0, kept) keep their values */
        const int64_t kept = n_past + i1 + 1 < ne0 ? n_past + i1 + 1 : ne0;
        if (!packed) {
            for (int64_t i = 0; i < ne0; i++)
                memmove(out + i * dst->nb[0], i < kept ? in + i * src->nb[0] : neg_inf, es);
            continue;
        }
        if (out != in)
            memmove(out, in, (size_t) kept * es);
        if (dst->type == GGML_TYPE_F32) {
            float *y = (float *) out;
            for (int64_t i = kept; i < ne0; i++)
                y[i] = -INFINITY;
        } else {
            uint16_t *y = (uint16_t *) out;
            for (int64_t i = kept; i < ne0; i++)
                y[i] = neg_inf16;
        }
    }
}

const struct ggml__op_impl ggml__op_diag_mask_inf = {
    .kernel = diag_mask_inf_kernel,
    .supports = diag_mask_inf_supports,
    .n_tasks = NULL,
    .work_size = NULL,
};
