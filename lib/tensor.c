/*
 * tensor.c - creating tensors, their names, flags, sizes and shape
 * predicates.
 *
 * Strides: nb[0] is the size of one block of the type, nb[1] the size of a
 * row (ne[0] / blck_size blocks), nb[i] = nb[i-1] * ne[i-1] for a tensor
 * the library lays out; views may carry any strides.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "ggml-impl.h"

/* Bytes spanned by a tensor (0 if empty); the constructors saw that they fit. */
static size_t extent_bytes(enum ggml_type type, const int64_t ne[GGML_MAX_DIMS],
                           const size_t nb[GGML_MAX_DIMS])
{
    size_t bytes;
    return ggml__extent_bytes(type, ne, nb, &bytes) ? bytes : SIZE_MAX;
}

size_t ggml_nbytes(const struct ggml_tensor *tensor)
{
    if (tensor == NULL) {
        ggml__error("tensor is NULL");
        return 0;
    }
    return extent_bytes(tensor->type, tensor->ne, tensor->nb);
}

size_t ggml__view_room(const struct ggml_tensor *t)
{
    if (t->view_src == NULL)
        return ggml_nbytes(t);
    const size_t src_bytes = ggml_nbytes(t->view_src);
    return t->view_offs < src_bytes ? src_bytes - t->view_offs : 0;
}

size_t ggml_nbytes_pad(const struct ggml_tensor *tensor)
{
    if (tensor == NULL) {
        ggml__error("tensor is NULL");
        return 0;
    }
    return GGML_PAD(ggml_nbytes(tensor), GGML_MEM_ALIGN);
}

int64_t ggml_nelements(const struct ggml_tensor *tensor)
{
    if (tensor == NULL) {
        ggml__error("tensor is NULL");
        return 0;
    }
    return tensor->ne[0] * tensor->ne[1] * tensor->ne[2] * tensor->ne[3];
}

int64_t ggml_nrows(const struct ggml_tensor *tensor)
{
    if (tensor == NULL) {
        ggml__error("tensor is NULL");
        return 0;
    }
    return tensor->ne[1] * tensor->ne[2] * tensor->ne[3];
}

size_t ggml_element_size(const struct ggml_tensor *tensor)
{
    if (tensor == NULL) {
        ggml__error("tensor is NULL");
        return 0;
    }
    return ggml_type_size(tensor->type);
}

/*
 * Checks a requested shape; on success fills ne_out (unused dims = 1) and
 * the contiguous data size.  Logs on behalf of func and returns false on a
 * bad type, dimension count, negative extent, partial block or overflow.
 */
static bool check_shape(enum ggml_type type, int n_dims, const int64_t *ne,
                        int64_t ne_out[GGML_MAX_DIMS], size_t *data_size, const char *func)
{
    if (!ggml__type_is_valid(type)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "invalid tensor type %d", (int) type);
        return false;
    }
    if (n_dims < 1 || n_dims > GGML_MAX_DIMS) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "n_dims must be 1..%d, got %d", GGML_MAX_DIMS, n_dims);
        return false;
    }
    if (ne == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "ne is NULL");
        return false;
    }
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        ne_out[i] = i < n_dims ? ne[i] : 1;
        if (ne_out[i] < 0) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "ne[%d] = %" PRId64 " is negative", i, ne_out[i]);
            return false;
        }
    }
    const int64_t blck_size = ggml_blck_size(type);
    if (ne_out[0] % blck_size != 0) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "ne[0] = %" PRId64 " is not a multiple of the %s block size %" PRId64,
                     ne_out[0], ggml_type_name(type), blck_size);
        return false;
    }
    /*
     * Row size, then rows, each step checked against SIZE_MAX, and the
     * element count against INT64_MAX, with empty extents counted as 1:
     * then any product of a tensor's extents fits in int64_t, even when
     * the tensor is empty.
     */
    bool empty = false;
    size_t size = ggml_type_size(type);
    int64_t count = blck_size;
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        int64_t step = i == 0 ? ne_out[0] / blck_size : ne_out[i];
        empty = empty || step == 0;
        step = step == 0 ? 1 : step;
        if (size > SIZE_MAX / (uint64_t) step || count > INT64_MAX / step)
            goto overflow;
        size *= (size_t) step;
        count *= step;
    }
    *data_size = empty ? 0 : size;
    return true;

overflow:
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "tensor of %" PRId64 "x%" PRId64 "x%" PRId64 "x%" PRId64
                 " %s elements is too large", ne_out[0], ne_out[1], ne_out[2], ne_out[3],
                 ggml_type_name(type));
    return false;
}

struct ggml_tensor *ggml__new_tensor_impl(struct ggml_context *ctx, enum ggml_type type,
                                          int n_dims, const int64_t *ne,
                                          struct ggml_tensor *view_src, size_t view_offs,
                                          const char *func)
{
    if (ctx == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "ctx is NULL");
        return NULL;
    }

    int64_t shape[GGML_MAX_DIMS];
    size_t data_size;
    if (!check_shape(type, n_dims, ne, shape, &data_size, func))
        return NULL;

    /* a view of a view aliases the base tensor directly */
    if (view_src != NULL && view_src->view_src != NULL) {
        view_offs += view_src->view_offs;
        view_src = view_src->view_src;
    }
    if (view_src != NULL && data_size != 0) {
        size_t src_size = ggml_nbytes(view_src);
        if (view_offs > src_size || data_size > src_size - view_offs) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                         "view of %zu bytes at offset %zu is outside its source '%s' (%zu bytes)",
                         data_size, view_offs, view_src->name, src_size);
            return NULL;
        }
    }

    const bool own_data = view_src == NULL && !ctx->no_alloc;
    struct ggml_object *obj = ggml__new_object(ctx, GGML_OBJECT_TYPE_TENSOR,
                                               sizeof(struct ggml_tensor) + (own_data ? data_size : 0),
                                               func);
    if (obj == NULL)
        return NULL;

    struct ggml_tensor *result = (struct ggml_tensor *) ((char *) ctx->mem_buffer + obj->offs);
    memset(result, 0, sizeof *result);
    result->type = type;
    /* a view gets its buffer when it is initialised in one (view_init) */
    result->buffer = NULL;
    result->op = GGML_OP_NONE;
    result->view_src = view_src;
    result->view_offs = view_offs;
    if (view_src != NULL)
        result->data = view_src->data ? (char *) view_src->data + view_offs : NULL;
    else
        result->data = own_data ? (void *) (result + 1) : NULL;

    for (int i = 0; i < GGML_MAX_DIMS; i++)
        result->ne[i] = shape[i];
    result->nb[0] = ggml_type_size(type);
    result->nb[1] = result->nb[0] * (size_t) (shape[0] / ggml_blck_size(type));
    for (int i = 2; i < GGML_MAX_DIMS; i++)
        result->nb[i] = result->nb[i - 1] * (size_t) shape[i - 1];
    return result;
}

struct ggml_tensor *ggml_new_tensor(struct ggml_context *ctx, enum ggml_type type,
                                    int n_dims, const int64_t *ne)
{
    return ggml__new_tensor_impl(ctx, type, n_dims, ne, NULL, 0, __func__);
}

struct ggml_tensor *ggml_new_tensor_1d(struct ggml_context *ctx, enum ggml_type type, int64_t ne0)
{
    return ggml__new_tensor_impl(ctx, type, 1, &ne0, NULL, 0, __func__);
}

struct ggml_tensor *ggml_new_tensor_2d(struct ggml_context *ctx, enum ggml_type type,
                                       int64_t ne0, int64_t ne1)
{
    const int64_t ne[2] = { ne0, ne1 };
    return ggml__new_tensor_impl(ctx, type, 2, ne, NULL, 0, __func__);
}

struct ggml_tensor *ggml_new_tensor_3d(struct ggml_context *ctx, enum ggml_type type,
                                       int64_t ne0, int64_t ne1, int64_t ne2)
{
    const int64_t ne[3] = { ne0, ne1, ne2 };
    return ggml__new_tensor_impl(ctx, type, 3, ne, NULL, 0, __func__);
}

struct ggml_tensor *ggml_new_tensor_4d(struct ggml_context *ctx, enum ggml_type type,
                                       int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3)
{
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return ggml__new_tensor_impl(ctx, type, 4, ne, NULL, 0, __func__);
}

struct ggml_tensor *ggml__new_op_node(struct ggml_context *ctx, enum ggml_op op, enum ggml_type type, int n_dims,
                                      const int64_t *ne, struct ggml_tensor *a, struct ggml_tensor *b,
                                      const int32_t *params, size_t n_params, const char *func)
{
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, type, n_dims, ne, NULL, 0, func);
    if (result == NULL)
        return NULL;
    if (n_params > 0)
        ggml__set_op_params(result, params, n_params * sizeof *params);
    result->op = op;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

struct ggml_tensor *ggml__dup_tensor_impl(struct ggml_context *ctx, const struct ggml_tensor *src,
                                          const char *func)
{
    if (src == NULL)
        return NULL;
    return ggml__new_tensor_impl(ctx, src->type, GGML_MAX_DIMS, src->ne, NULL, 0, func);
}

struct ggml_tensor *ggml_dup_tensor(struct ggml_context *ctx, const struct ggml_tensor *src)
{
    return ggml__dup_tensor_impl(ctx, src, __func__);
}

struct ggml_tensor *ggml__view_tensor_impl(struct ggml_context *ctx, struct ggml_tensor *src,
                                           const char *func)
{
    if (src == NULL)
        return NULL;
    struct ggml_tensor *result =
        ggml__new_tensor_impl(ctx, src->type, GGML_MAX_DIMS, src->ne, src, 0, func);
    if (result == NULL)
        return NULL;
    ggml_format_name(result, "%s (view)", src->name);
    for (int i = 0; i < GGML_MAX_DIMS; i++)
        result->nb[i] = src->nb[i];
    return result;
}

struct ggml_tensor *ggml_view_tensor(struct ggml_context *ctx, struct ggml_tensor *src)
{
    return ggml__view_tensor_impl(ctx, src, __func__);
}

/* ------------------------------------------------------------------ names */

const char *ggml_get_name(const struct ggml_tensor *tensor)
{
    if (tensor == NULL) {
        ggml__error("tensor is NULL");
        return NULL;
    }
    return tensor->name;
}

struct ggml_tensor *ggml_set_name(struct ggml_tensor *tensor, const char *name)
{
    if (tensor == NULL)
        return NULL;
    if (name == NULL) {
        ggml__error("name is NULL");
        return tensor;
    }
    size_t len = strlen(name);
    if (len >= sizeof tensor->name)
        len = sizeof tensor->name - 1;
    memmove(tensor->name, name, len);
    tensor->name[len] = '\0';
    return tensor;
}

struct ggml_tensor *ggml_format_name(struct ggml_tensor *tensor, const char *fmt, ...)
{
    if (tensor == NULL)
        return NULL;
    if (fmt == NULL) {
        ggml__error("fmt is NULL");
        return tensor;
    }
    char name[sizeof tensor->name];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    memcpy(tensor->name, name, sizeof name);
    return tensor;
}

/* ------------------------------------------------------------------ flags */

static void set_flag(struct ggml_tensor *tensor, int32_t flag, const char *func)
{
    if (tensor == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "tensor is NULL");
        return;
    }
    tensor->flags |= flag;
}

void ggml_set_input(struct ggml_tensor *tensor)
{
    set_flag(tensor, GGML_TENSOR_FLAG_INPUT, __func__);
}

void ggml_set_output(struct ggml_tensor *tensor)
{
    set_flag(tensor, GGML_TENSOR_FLAG_OUTPUT, __func__);
}

void ggml_set_param(struct ggml_tensor *tensor)
{
    if (tensor != NULL && tensor->op != GGML_OP_NONE) {
        ggml__error("only leaf tensors (op NONE) can be parameters; '%s' is %s",
                    tensor->name, ggml_op_name(tensor->op));
        return;
    }
    set_flag(tensor, GGML_TENSOR_FLAG_PARAM, __func__);
}

void ggml_set_loss(struct ggml_tensor *tensor)
{
    if (tensor != NULL && (!ggml_is_scalar(tensor) || tensor->type != GGML_TYPE_F32)) {
        ggml__error("a loss must be an F32 scalar; '%s' is not", tensor->name);
        return;
    }
    set_flag(tensor, GGML_TENSOR_FLAG_LOSS, __func__);
}

/* ------------------------------------------------------------------- data */

void *ggml_get_data(const struct ggml_tensor *tensor)
{
    if (tensor == NULL) {
        ggml__error("tensor is NULL");
        return NULL;
    }
    return tensor->data;
}

float *ggml_get_data_f32(const struct ggml_tensor *tensor)
{
    if (tensor == NULL) {
        ggml__error("tensor is NULL");
        return NULL;
    }
    if (tensor->type != GGML_TYPE_F32) {
        ggml__error("tensor '%s' is %s, not f32", tensor->name, ggml_type_name(tensor->type));
        return NULL;
    }
    return (float *) tensor->data;
}

enum ggml_unary_op ggml_get_unary_op(const struct ggml_tensor *tensor)
{
    if (tensor == NULL || tensor->op != GGML_OP_UNARY) {
        ggml__error("tensor is %s, not a UNARY op", tensor ? ggml_op_name(tensor->op) : "NULL");
        return GGML_UNARY_OP_COUNT;
    }
    return (enum ggml_unary_op) ggml__get_op_params_i32(tensor, 0);
}

enum ggml_glu_op ggml_get_glu_op(const struct ggml_tensor *tensor)
{
    if (tensor == NULL || tensor->op != GGML_OP_GLU) {
        ggml__error("tensor is %s, not a GLU op", tensor ? ggml_op_name(tensor->op) : "NULL");
        return GGML_GLU_OP_COUNT;
    }
    return (enum ggml_glu_op) ggml__get_op_params_i32(tensor, 0);
}

void ggml_unravel_index(const struct ggml_tensor *tensor, int64_t i,
                        int64_t *i0, int64_t *i1, int64_t *i2, int64_t *i3)
{
    if (tensor == NULL) {
        ggml__error("tensor is NULL");
        return;
    }
    const int64_t ne0 = tensor->ne[0], ne1 = tensor->ne[1], ne2 = tensor->ne[2];
    if (i < 0 || i >= ggml_nelements(tensor)) {
        ggml__error("index %" PRId64 " is outside tensor '%s' (%" PRId64 " elements)",
                    i, tensor->name, ggml_nelements(tensor));
        return;
    }
    const int64_t c3 = i / (ne2 * ne1 * ne0);
    const int64_t c2 = (i - c3 * ne2 * ne1 * ne0) / (ne1 * ne0);
    const int64_t c1 = (i - c3 * ne2 * ne1 * ne0 - c2 * ne1 * ne0) / ne0;
    const int64_t c0 = i - c3 * ne2 * ne1 * ne0 - c2 * ne1 * ne0 - c1 * ne0;
    if (i0) *i0 = c0;
    if (i1) *i1 = c1;
    if (i2) *i2 = c2;
    if (i3) *i3 = c3;
}

/* ------------------------------------------------------------- predicates */

/*
 * The predicates return false (after logging) for a NULL tensor, so that
 * a caller's "if (ggml_is_x(t))" never follows a NULL.
 */
#define REQUIRE_TENSOR(t)                    \
    do {                                     \
        if ((t) == NULL) {                   \
            ggml__error("tensor is NULL");   \
            return false;                    \
        }                                    \
    } while (0)

bool ggml_is_empty(const struct ggml_tensor *tensor)
{
    REQUIRE_TENSOR(tensor);
    return ggml__has_no_elements(tensor);
}

bool ggml_is_view(const struct ggml_tensor *tensor)
{
    REQUIRE_TENSOR(tensor);
    return tensor->view_src != NULL;
}

bool ggml_is_scalar(const struct ggml_tensor *tensor)
{
    REQUIRE_TENSOR(tensor);
    return tensor->ne[0] == 1 && tensor->ne[1] == 1 && tensor->ne[2] == 1 && tensor->ne[3] == 1;
}

bool ggml_is_vector(const struct ggml_tensor *tensor)
{
    REQUIRE_TENSOR(tensor);
    return tensor->ne[1] == 1 && tensor->ne[2] == 1 && tensor->ne[3] == 1;
}

bool ggml_is_matrix(const struct ggml_tensor *tensor)
{
    REQUIRE_TENSOR(tensor);
    return tensor->ne[2] == 1 && tensor->ne[3] == 1;
}

bool ggml_is_3d(const struct ggml_tensor *tensor)
{
    REQUIRE_TENSOR(tensor);
    return tensor->ne[3] == 1;
}

int ggml_n_dims(const struct ggml_tensor *tensor)
{
    if (tensor == NULL) {
        ggml__error("tensor is NULL");
        return 0;
    }
    for (int i = GGML_MAX_DIMS - 1; i >= 1; i--)
        if (tensor->ne[i] > 1)
            return i + 1;
    return 1;
}

bool ggml_is_transposed(const struct ggml_tensor *tensor)
{
    REQUIRE_TENSOR(tensor);
    return tensor->nb[0] > tensor->nb[1];
}

bool ggml_is_permuted(const struct ggml_tensor *tensor)
{
    REQUIRE_TENSOR(tensor);
    return tensor->nb[0] > tensor->nb[1] || tensor->nb[1] > tensor->nb[2] ||
           tensor->nb[2] > tensor->nb[3];
}

/*
 * The elements of a row are adjacent (whole blocks for block types), and
 * each dimension i with free < i < end follows the one below it without a
 * gap; dimensions up to free may be strided, those from end on are not
 * looked at.  Dimensions of extent 1 never break contiguity.
 */
static bool is_contiguous_dims(const struct ggml_tensor *tensor, int free, int end)
{
    size_t next_nb = ggml_type_size(tensor->type);
    if (tensor->ne[0] != ggml_blck_size(tensor->type) && tensor->nb[0] != next_nb)
        return false;
    next_nb *= (size_t) (tensor->ne[0] / ggml_blck_size(tensor->type));
    for (int i = 1; i < end; i++) {
        if (tensor->ne[i] != 1) {
            if (i > free) {
                if (tensor->nb[i] != next_nb)
                    return false;
                next_nb *= (size_t) tensor->ne[i];
            } else {
                /* this dimension need not be dense with the ones below */
                next_nb = (size_t) tensor->ne[i] * tensor->nb[i];
            }
        }
    }
    return true;
}

/* Contiguous from dimension n upwards: the dims below n may be strided. */
static bool is_contiguous_from(const struct ggml_tensor *tensor, int n)
{
    return is_contiguous_dims(tensor, n, GGML_MAX_DIMS);
}

bool ggml_is_contiguous(const struct ggml_tensor *tensor)
{
    REQUIRE_TENSOR(tensor);
    return is_contiguous_from(tensor, 0);
}

bool ggml_is_contiguous_0(const struct ggml_tensor *tensor)
{
    REQUIRE_TENSOR(tensor);
    return is_contiguous_from(tensor, 0);
}

bool ggml_is_contiguous_1(const struct ggml_tensor *tensor)
{
    REQUIRE_TENSOR(tensor);
    return is_contiguous_from(tensor, 1);
}

bool ggml_is_contiguous_2(const struct ggml_tensor *tensor)
{
    REQUIRE_TENSOR(tensor);
    return is_contiguous_from(tensor, 2);
}

bool ggml_is_contiguous_to_1(const struct ggml_tensor *tensor)
{
    REQUIRE_TENSOR(tensor);
    return is_contiguous_dims(tensor, 0, 1);
}

bool ggml_is_contiguous_to_2(const struct ggml_tensor *tensor)
{
    REQUIRE_TENSOR(tensor);
    return is_contiguous_dims(tensor, 0, 2);
}

bool ggml_is_contiguous_to_3(const struct ggml_tensor *tensor)
{
    REQUIRE_TENSOR(tensor);
    return is_contiguous_dims(tensor, 0, 3);
}

bool ggml_is_contiguously_allocated(const struct ggml_tensor *tensor)
{
    REQUIRE_TENSOR(tensor);
    return ggml_nbytes(tensor) ==
           (size_t) ggml_nelements(tensor) * ggml_type_size(tensor->type) /
               (size_t) ggml_blck_size(tensor->type);
}

bool ggml_is_contiguous_channels(const struct ggml_tensor *tensor)
{
    REQUIRE_TENSOR(tensor);
    return tensor->nb[0] > tensor->nb[2] && tensor->nb[1] > tensor->nb[0] &&
           tensor->nb[2] == ggml_type_size(tensor->type);
}

bool ggml_is_contiguous_rows(const struct ggml_tensor *tensor)
{
    REQUIRE_TENSOR(tensor);
    return ggml__rows_contiguous(tensor);
}

bool ggml_are_same_shape(const struct ggml_tensor *t0, const struct ggml_tensor *t1)
{
    REQUIRE_TENSOR(t0);
    REQUIRE_TENSOR(t1);
    return ggml__same_shape(t0, t1);
}

bool ggml_are_same_stride(const struct ggml_tensor *t0, const struct ggml_tensor *t1)
{
    REQUIRE_TENSOR(t0);
    REQUIRE_TENSOR(t1);
    for (int i = 0; i < GGML_MAX_DIMS; i++)
        if (t0->nb[i] != t1->nb[i])
            return false;
    return true;
}

bool ggml_can_repeat(const struct ggml_tensor *t0, const struct ggml_tensor *t1)
{
    REQUIRE_TENSOR(t0);
    REQUIRE_TENSOR(t1);
    if (ggml_is_empty(t0))
        return ggml_is_empty(t1);
    for (int i = 0; i < GGML_MAX_DIMS; i++)
        if (t1->ne[i] % t0->ne[i] != 0)
            return false;
    return true;
}
