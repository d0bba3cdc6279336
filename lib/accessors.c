/*
 * accessors.c - reading and writing single elements of tensors whose data
 * is in host memory (context memory or a host backend buffer).
 *
 * Supported element types: I8, I16, I32, F16, BF16, F32.  Every accessor
 * checks the type, that the data is reachable and the index range, logs
 * and returns 0 (or leaves the tensor untouched) otherwise.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>

#include "ggml-impl.h"
#include "ggml-cpu.h"
#include "backend-private.h"

static bool element_type_supported(enum ggml_type type)
{
    switch (type) {
    case GGML_TYPE_I8:
    case GGML_TYPE_I16:
    case GGML_TYPE_I32:
    case GGML_TYPE_F16:
    case GGML_TYPE_BF16:
    case GGML_TYPE_F32:
        return true;
    default:
        return false;
    }
}

/* Checks that tensor's elements can be accessed from the host. */
static bool check_host_tensor(const struct ggml_tensor *tensor, const char *func)
{
    if (tensor == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "tensor is NULL");
        return false;
    }
    if (!element_type_supported(tensor->type)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "element access to %s tensor '%s' is not supported",
                     ggml_type_name(tensor->type), tensor->name);
        return false;
    }
    if (tensor->data == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "tensor '%s' has no data", tensor->name);
        return false;
    }
    ggml_backend_buffer_t buffer = tensor->view_src ? tensor->view_src->buffer : tensor->buffer;
    if (buffer != NULL && !ggml_backend_buffer_is_host(buffer)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "tensor '%s' is in device memory (%s buffer): use ggml_backend_tensor_get/set",
                     tensor->name, ggml_backend_buffer_name(buffer));
        return false;
    }
    return true;
}

static bool check_coords(const struct ggml_tensor *tensor, const int64_t idx[GGML_MAX_DIMS],
                         const char *func)
{
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (idx[i] < 0 || idx[i] >= tensor->ne[i]) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                         "index %" PRId64 " of dimension %d is outside '%s' (extent %" PRId64 ")",
                         idx[i], i, tensor->name, tensor->ne[i]);
            return false;
        }
    }
    return true;
}

static void *element_ptr(const struct ggml_tensor *tensor, const int64_t idx[GGML_MAX_DIMS])
{
    char *p = tensor->data;
    for (int i = 0; i < GGML_MAX_DIMS; i++)
        p += (size_t) idx[i] * tensor->nb[i];
    return p;
}

static double load_element(enum ggml_type type, const void *p)
{
    switch (type) {
    case GGML_TYPE_I8:   return *(const int8_t *) p;
    case GGML_TYPE_I16:  return *(const int16_t *) p;
    case GGML_TYPE_I32:  return *(const int32_t *) p;
    case GGML_TYPE_F16:  return ggml_fp16_to_fp32(*(const ggml_fp16_t *) p);
    case GGML_TYPE_BF16: return ggml_bf16_to_fp32(*(const ggml_bf16_t *) p);
    case GGML_TYPE_F32:  return *(const float *) p;
    default:             return 0.0;
    }
}

/* The element at p as int32_t: a float one truncated, saturated, NaN 0. */
static int32_t load_i32(enum ggml_type type, const void *p)
{
    return (int32_t) ggml__float_to_int(load_element(type, p), INT32_MIN, INT32_MAX);
}

/* Integer types receive value converted as C converts float to integer. */
static void store_int(enum ggml_type type, void *p, int32_t value)
{
    switch (type) {
    case GGML_TYPE_I8:   *(int8_t *) p = (int8_t) value; break;
    case GGML_TYPE_I16:  *(int16_t *) p = (int16_t) value; break;
    case GGML_TYPE_I32:  *(int32_t *) p = value; break;
    case GGML_TYPE_F16:  *(ggml_fp16_t *) p = ggml_fp32_to_fp16((float) value); break;
    case GGML_TYPE_BF16: *(ggml_bf16_t *) p = ggml_fp32_to_bf16((float) value); break;
    case GGML_TYPE_F32:  *(float *) p = (float) value; break;
    default: break;
    }
}

/* Integer types receive value truncated, saturated to their range, NaN 0. */
static void store_float(enum ggml_type type, void *p, float value)
{
    switch (type) {
    case GGML_TYPE_I8:   *(int8_t *) p = (int8_t) ggml__float_to_int(value, INT8_MIN, INT8_MAX); break;
    case GGML_TYPE_I16:  *(int16_t *) p = (int16_t) ggml__float_to_int(value, INT16_MIN, INT16_MAX); break;
    case GGML_TYPE_I32:  *(int32_t *) p = (int32_t) ggml__float_to_int(value, INT32_MIN, INT32_MAX); break;
    case GGML_TYPE_F16:  *(ggml_fp16_t *) p = ggml_fp32_to_fp16(value); break;
    case GGML_TYPE_BF16: *(ggml_bf16_t *) p = ggml_fp32_to_bf16(value); break;
    case GGML_TYPE_F32:  *(float *) p = value; break;
    default: break;
    }
}

/* Coordinates of the i-th element in row-major order of the logical shape. */
static bool flat_to_coords(const struct ggml_tensor *tensor, int i, int64_t idx[GGML_MAX_DIMS],
                           const char *func)
{
    if (i < 0 || i >= ggml_nelements(tensor)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "index %d is outside '%s' (%" PRId64 " elements)",
                     i, tensor->name, ggml_nelements(tensor));
        return false;
    }
    int64_t rest = i;
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        idx[d] = rest % tensor->ne[d];
        rest /= tensor->ne[d];
    }
    return true;
}

/* ----------------------------------------------------------- whole tensor */

/* Stores one value (integer or float, as is_int says) into every element. */
static void fill_elements(struct ggml_tensor *tensor, bool is_int, int32_t ivalue, float fvalue)
{
    int64_t idx[GGML_MAX_DIMS];
    for (idx[3] = 0; idx[3] < tensor->ne[3]; idx[3]++)
        for (idx[2] = 0; idx[2] < tensor->ne[2]; idx[2]++)
            for (idx[1] = 0; idx[1] < tensor->ne[1]; idx[1]++)
                for (idx[0] = 0; idx[0] < tensor->ne[0]; idx[0]++) {
                    void *p = element_ptr(tensor, idx);
                    if (is_int)
                        store_int(tensor->type, p, ivalue);
                    else
                        store_float(tensor->type, p, fvalue);
                }
}

struct ggml_tensor *ggml_set_i32(struct ggml_tensor *tensor, int32_t value)
{
    if (check_host_tensor(tensor, __func__))
        fill_elements(tensor, true, value, 0.0f);
    return tensor;
}

struct ggml_tensor *ggml_set_f32(struct ggml_tensor *tensor, float value)
{
    if (check_host_tensor(tensor, __func__))
        fill_elements(tensor, false, 0, value);
    return tensor;
}

struct ggml_tensor *ggml_set_zero(struct ggml_tensor *tensor)
{
    if (tensor == NULL) {
        ggml__error("tensor is NULL");
        return NULL;
    }
    if (ggml_is_empty(tensor))
        return tensor;
    if (tensor->data == NULL) {
        ggml__error("tensor '%s' has no data", tensor->name);
        return tensor;
    }
    /* device memory is reached through its buffer */
    if (tensor->buffer != NULL || (tensor->view_src != NULL && tensor->view_src->buffer != NULL))
        ggml_backend_tensor_memset(tensor, 0, 0, ggml_nbytes(tensor));
    else
        memset(tensor->data, 0, ggml_nbytes(tensor));
    return tensor;
}

/*
 * A one-element tensor with its own data, also in a no_alloc context (the
 * value has to live somewhere): the context's mode is restored after.
 */
static struct ggml_tensor *new_scalar(struct ggml_context *ctx, enum ggml_type type, const char *func)
{
    if (ctx == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "ctx is NULL");
        return NULL;
    }
    const bool no_alloc = ctx->no_alloc;
    const int64_t one = 1;
    ctx->no_alloc = false;
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, type, 1, &one, NULL, 0, func);
    ctx->no_alloc = no_alloc;
    return result;
}

struct ggml_tensor *ggml_new_i32(struct ggml_context *ctx, int32_t value)
{
    struct ggml_tensor *result = new_scalar(ctx, GGML_TYPE_I32, __func__);
    if (result)
        *(int32_t *) result->data = value;
    return result;
}

struct ggml_tensor *ggml_new_f32(struct ggml_context *ctx, float value)
{
    struct ggml_tensor *result = new_scalar(ctx, GGML_TYPE_F32, __func__);
    if (result)
        *(float *) result->data = value;
    return result;
}

/* -------------------------------------------------------- single elements */

int32_t ggml_get_i32_1d(const struct ggml_tensor *tensor, int i)
{
    int64_t idx[GGML_MAX_DIMS];
    if (!check_host_tensor(tensor, __func__) || !flat_to_coords(tensor, i, idx, __func__))
        return 0;
    return load_i32(tensor->type, element_ptr(tensor, idx));
}

void ggml_set_i32_1d(const struct ggml_tensor *tensor, int i, int32_t value)
{
    int64_t idx[GGML_MAX_DIMS];
    if (!check_host_tensor(tensor, __func__) || !flat_to_coords(tensor, i, idx, __func__))
        return;
    store_int(tensor->type, element_ptr(tensor, idx), value);
}

float ggml_get_f32_1d(const struct ggml_tensor *tensor, int i)
{
    int64_t idx[GGML_MAX_DIMS];
    if (!check_host_tensor(tensor, __func__) || !flat_to_coords(tensor, i, idx, __func__))
        return 0.0f;
    return (float) load_element(tensor->type, element_ptr(tensor, idx));
}

void ggml_set_f32_1d(const struct ggml_tensor *tensor, int i, float value)
{
    int64_t idx[GGML_MAX_DIMS];
    if (!check_host_tensor(tensor, __func__) || !flat_to_coords(tensor, i, idx, __func__))
        return;
    store_float(tensor->type, element_ptr(tensor, idx), value);
}

int32_t ggml_get_i32_nd(const struct ggml_tensor *tensor, int i0, int i1, int i2, int i3)
{
    const int64_t idx[GGML_MAX_DIMS] = { i0, i1, i2, i3 };
    if (!check_host_tensor(tensor, __func__) || !check_coords(tensor, idx, __func__))
        return 0;
    return load_i32(tensor->type, element_ptr(tensor, idx));
}

void ggml_set_i32_nd(const struct ggml_tensor *tensor, int i0, int i1, int i2, int i3, int32_t value)
{
    const int64_t idx[GGML_MAX_DIMS] = { i0, i1, i2, i3 };
    if (!check_host_tensor(tensor, __func__) || !check_coords(tensor, idx, __func__))
        return;
    store_int(tensor->type, element_ptr(tensor, idx), value);
}

float ggml_get_f32_nd(const struct ggml_tensor *tensor, int i0, int i1, int i2, int i3)
{
    const int64_t idx[GGML_MAX_DIMS] = { i0, i1, i2, i3 };
    if (!check_host_tensor(tensor, __func__) || !check_coords(tensor, idx, __func__))
        return 0.0f;
    return (float) load_element(tensor->type, element_ptr(tensor, idx));
}

void ggml_set_f32_nd(const struct ggml_tensor *tensor, int i0, int i1, int i2, int i3, float value)
{
    const int64_t idx[GGML_MAX_DIMS] = { i0, i1, i2, i3 };
    if (!check_host_tensor(tensor, __func__) || !check_coords(tensor, idx, __func__))
        return;
    store_float(tensor->type, element_ptr(tensor, idx), value);
}
