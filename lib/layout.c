/*
 * layout.c - constructors of the ops that change how data is viewed or laid
 * out: VIEW, RESHAPE, PERMUTE, TRANSPOSE, CONT, CPY, DUP.
 *
 * Every constructor returns NULL without logging when an input is NULL (the
 * error was reported where the NULL came from), and NULL after logging one
 * message when its own arguments are wrong.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "ggml-impl.h"

/* ------------------------------------------------------------------ views */

/*
 * A view of a with shape ne[0..n_dims) and the given strides (nb[0] is
 * always the element size), starting offset bytes into a's data.
 */
static struct ggml_tensor *view_impl(struct ggml_context *ctx, struct ggml_tensor *a, int n_dims,
                                     const int64_t *ne, const size_t *nb_in, size_t offset,
                                     const char *func)
{
    if (a == NULL)
        return NULL;

    /* the view must stay inside a, whatever its strides */
    int64_t shape[GGML_MAX_DIMS];
    size_t nb[GGML_MAX_DIMS];
    for (int i = 0; i < GGML_MAX_DIMS; i++)
        shape[i] = i < n_dims ? ne[i] : 1;
    nb[0] = ggml_type_size(a->type);
    for (int i = 1; i < GGML_MAX_DIMS; i++)
        nb[i] = i < n_dims ? nb_in[i - 1] : nb[i - 1] * (size_t) shape[i - 1];

    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (shape[i] < 0) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "ne[%d] = %" PRId64 " is negative", i, shape[i]);
            return NULL;
        }
    }
    /* every element of the view starts where one of a's elements (or blocks) does */
    for (int i = 1; i <= n_dims; i++) {
        const size_t value = i < n_dims ? nb[i] : offset;
        if (value % nb[0] != 0) {
            char what[8] = "offset";
            if (i < n_dims)
                snprintf(what, sizeof what, "nb%d", i);
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s = %zu is not a multiple of %zu, the size of one %s %s",
                         what, value, nb[0], ggml_type_name(a->type),
                         ggml_is_quantized(a->type) ? "block" : "element");
            return NULL;
        }
    }
    size_t span;
    if (!ggml__extent_bytes(a->type, shape, nb, &span)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "view with strides %zu, %zu, %zu spans more than SIZE_MAX bytes",
                     nb[1], nb[2], nb[3]);
        return NULL;
    }
    /* a's own extent, but never past its source's memory (ggml_nbytes of a
     * transposed block-quantized view exceeds that memory); even an empty
     * view's data pointer (a's data + offset) stays inside it */
    size_t src_size = ggml_nbytes(a);
    const size_t room = ggml__view_room(a);
    if (room < src_size)
        src_size = room;
    if (offset > src_size || span > src_size - offset) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "view of %zu bytes at offset %zu is outside '%s' (%zu bytes)",
                     span, offset, a->name, src_size);
        return NULL;
    }

    struct ggml_tensor *result =
        ggml__new_tensor_impl(ctx, a->type, GGML_MAX_DIMS, shape, a, offset, func);
    if (result == NULL)
        return NULL;
    ggml_format_name(result, "%s (view)", a->name);
    memcpy(result->nb, nb, sizeof nb);
    ggml__set_op_params(result, &offset, sizeof offset);
    result->op = GGML_OP_VIEW;
    result->src[0] = a;
    return result;
}

struct ggml_tensor *ggml_view_1d(struct ggml_context *ctx, struct ggml_tensor *a,
                                 int64_t ne0, size_t offset)
{
    return view_impl(ctx, a, 1, &ne0, NULL, offset, __func__);
}

struct ggml_tensor *ggml_view_2d(struct ggml_context *ctx, struct ggml_tensor *a,
                                 int64_t ne0, int64_t ne1, size_t nb1, size_t offset)
{
    const int64_t ne[2] = { ne0, ne1 };
    const size_t nb[1] = { nb1 };
    return view_impl(ctx, a, 2, ne, nb, offset, __func__);
}

struct ggml_tensor *ggml_view_3d(struct ggml_context *ctx, struct ggml_tensor *a,
                                 int64_t ne0, int64_t ne1, int64_t ne2,
                                 size_t nb1, size_t nb2, size_t offset)
{
    const int64_t ne[3] = { ne0, ne1, ne2 };
    const size_t nb[2] = { nb1, nb2 };
    return view_impl(ctx, a, 3, ne, nb, offset, __func__);
}

struct ggml_tensor *ggml_view_4d(struct ggml_context *ctx, struct ggml_tensor *a,
                                 int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                                 size_t nb1, size_t nb2, size_t nb3, size_t offset)
{
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    const size_t nb[3] = { nb1, nb2, nb3 };
    return view_impl(ctx, a, 4, ne, nb, offset, __func__);
}

/* ---------------------------------------------------------------- reshape */

/* True when shape ne[0..n_dims) holds as many elements as a (else logs). */
static bool same_element_count(const struct ggml_tensor *a, int n_dims, const int64_t *ne,
                               const char *func)
{
    int64_t n = 1;
    for (int i = 0; i < n_dims; i++) {
        if (__builtin_mul_overflow(n, ne[i], &n)) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "new shape has more than INT64_MAX elements, '%s' has %" PRId64,
                         a->name, ggml_nelements(a));
            return false;
        }
    }
    if (n != ggml_nelements(a)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "new shape has %" PRId64 " elements, '%s' has %" PRId64,
                     n, a->name, ggml_nelements(a));
        return false;
    }
    return true;
}

static struct ggml_tensor *reshape_impl(struct ggml_context *ctx, struct ggml_tensor *a,
                                        int n_dims, const int64_t *ne, const char *func)
{
    if (a == NULL)
        return NULL;
    if (!ggml_is_contiguous(a)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "'%s' is not contiguous; make it so with ggml_cont first", a->name);
        return NULL;
    }
    if (!same_element_count(a, n_dims, ne, func))
        return NULL;
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, a->type, n_dims, ne, a, 0, func);
    if (result == NULL)
        return NULL;
    ggml_format_name(result, "%s (reshaped)", a->name);
    result->op = GGML_OP_RESHAPE;
    result->src[0] = a;
    return result;
}

struct ggml_tensor *ggml_reshape(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    if (a == NULL || b == NULL)
        return NULL;
    return reshape_impl(ctx, a, GGML_MAX_DIMS, b->ne, __func__);
}

struct ggml_tensor *ggml_reshape_1d(struct ggml_context *ctx, struct ggml_tensor *a, int64_t ne0)
{
    return reshape_impl(ctx, a, 1, &ne0, __func__);
}

struct ggml_tensor *ggml_reshape_2d(struct ggml_context *ctx, struct ggml_tensor *a,
                                    int64_t ne0, int64_t ne1)
{
    const int64_t ne[2] = { ne0, ne1 };
    return reshape_impl(ctx, a, 2, ne, __func__);
}

struct ggml_tensor *ggml_reshape_3d(struct ggml_context *ctx, struct ggml_tensor *a,
                                    int64_t ne0, int64_t ne1, int64_t ne2)
{
    const int64_t ne[3] = { ne0, ne1, ne2 };
    return reshape_impl(ctx, a, 3, ne, __func__);
}

struct ggml_tensor *ggml_reshape_4d(struct ggml_context *ctx, struct ggml_tensor *a,
                                    int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return reshape_impl(ctx, a, 4, ne, __func__);
}

/* -------------------------------------------------------- permute/transpose */

struct ggml_tensor *ggml_permute(struct ggml_context *ctx, struct ggml_tensor *a,
                                 int axis0, int axis1, int axis2, int axis3)
{
    if (a == NULL)
        return NULL;
    const int axes[GGML_MAX_DIMS] = { axis0, axis1, axis2, axis3 };
    bool seen[GGML_MAX_DIMS] = { false };
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (axes[i] < 0 || axes[i] >= GGML_MAX_DIMS || seen[axes[i]]) {
            ggml__error("axes (%d, %d, %d, %d) are not a permutation of 0..3",
                        axis0, axis1, axis2, axis3);
            return NULL;
        }
        seen[axes[i]] = true;
    }

    struct ggml_tensor *result = ggml__view_tensor_impl(ctx, a, __func__);
    if (result == NULL)
        return NULL;
    ggml_format_name(result, "%s (permuted)", a->name);
    /* source dimension i becomes result dimension axes[i] */
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        result->ne[axes[i]] = a->ne[i];
        result->nb[axes[i]] = a->nb[i];
    }
    result->op = GGML_OP_PERMUTE;
    result->src[0] = a;
    ggml__set_op_params(result, axes, sizeof axes);
    return result;
}

struct ggml_tensor *ggml_transpose(struct ggml_context *ctx, struct ggml_tensor *a)
{
    if (a == NULL)
        return NULL;
    struct ggml_tensor *result = ggml__view_tensor_impl(ctx, a, __func__);
    if (result == NULL)
        return NULL;
    ggml_format_name(result, "%s (transposed)", a->name);
    result->ne[0] = a->ne[1];
    result->ne[1] = a->ne[0];
    result->nb[0] = a->nb[1];
    result->nb[1] = a->nb[0];
    result->op = GGML_OP_TRANSPOSE;
    result->src[0] = a;
    const int32_t axes[GGML_MAX_DIMS] = { 1, 0, 2, 3 };
    ggml__set_op_params(result, axes, sizeof axes);
    return result;
}

/* ------------------------------------------------------------ cont/cpy/dup */

static struct ggml_tensor *cont_impl(struct ggml_context *ctx, struct ggml_tensor *a,
                                     int n_dims, const int64_t *ne, const char *func)
{
    if (a == NULL)
        return NULL;
    if (!same_element_count(a, n_dims, ne, func))
        return NULL;
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, a->type, n_dims, ne, NULL, 0, func);
    if (result == NULL)
        return NULL;
    ggml_format_name(result, "%s (cont)", a->name);
    result->op = GGML_OP_CONT;
    result->src[0] = a;
    return result;
}

struct ggml_tensor *ggml_cont(struct ggml_context *ctx, struct ggml_tensor *a)
{
    if (a == NULL)
        return NULL;
    return cont_impl(ctx, a, GGML_MAX_DIMS, a->ne, __func__);
}

struct ggml_tensor *ggml_cont_1d(struct ggml_context *ctx, struct ggml_tensor *a, int64_t ne0)
{
    return cont_impl(ctx, a, 1, &ne0, __func__);
}

struct ggml_tensor *ggml_cont_2d(struct ggml_context *ctx, struct ggml_tensor *a,
                                 int64_t ne0, int64_t ne1)
{
    const int64_t ne[2] = { ne0, ne1 };
    return cont_impl(ctx, a, 2, ne, __func__);
}

struct ggml_tensor *ggml_cont_3d(struct ggml_context *ctx, struct ggml_tensor *a,
                                 int64_t ne0, int64_t ne1, int64_t ne2)
{
    const int64_t ne[3] = { ne0, ne1, ne2 };
    return cont_impl(ctx, a, 3, ne, __func__);
}

struct ggml_tensor *ggml_cont_4d(struct ggml_context *ctx, struct ggml_tensor *a,
                                 int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return cont_impl(ctx, a, 4, ne, __func__);
}

struct ggml_tensor *ggml_cpy(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (ggml_nelements(a) != ggml_nelements(b)) {
        ggml__error("'%s' has %" PRId64 " elements, destination '%s' has %" PRId64,
                    a->name, ggml_nelements(a), b->name, ggml_nelements(b));
        return NULL;
    }
    /* the result aliases b, so that the copy lands in b's memory */
    struct ggml_tensor *result = ggml__view_tensor_impl(ctx, b, __func__);
    if (result == NULL)
        return NULL;
    if (b->name[0] != '\0')
        ggml_format_name(result, "%s (copy of %s)", b->name, a->name);
    else
        ggml_format_name(result, "%s (copy)", a->name);
    result->op = GGML_OP_CPY;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

struct ggml_tensor *ggml_cast(struct ggml_context *ctx, struct ggml_tensor *a, enum ggml_type type)
{
    if (a == NULL)
        return NULL;
    struct ggml_tensor *result =
        ggml__new_tensor_impl(ctx, type, GGML_MAX_DIMS, a->ne, NULL, 0, __func__);
    if (result == NULL)
        return NULL;
    ggml_format_name(result, "%s (copy)", a->name);
    result->op = GGML_OP_CPY;
    result->src[0] = a;
    result->src[1] = result;
    return result;
}

static struct ggml_tensor *dup_impl(struct ggml_context *ctx, struct ggml_tensor *a, bool inplace,
                                    const char *func)
{
    if (a == NULL)
        return NULL;
    struct ggml_tensor *result = inplace ? ggml__view_tensor_impl(ctx, a, func)
                                         : ggml__dup_tensor_impl(ctx, a, func);
    if (result == NULL)
        return NULL;
    result->op = GGML_OP_DUP;
    result->src[0] = a;
    return result;
}

struct ggml_tensor *ggml_dup(struct ggml_context *ctx, struct ggml_tensor *a)
{
    return dup_impl(ctx, a, false, __func__);
}

struct ggml_tensor *ggml_dup_inplace(struct ggml_context *ctx, struct ggml_tensor *a)
{
    return dup_impl(ctx, a, true, __func__);
}
