/*
 * ops-rope.c - constructors of the rotary position embedding (ROPE) and of
 * the row sorts (ARGSORT, TOP_K), ggml_rope_set_offset and
 * ggml_rope_yarn_corr_dims.
 *
 * Shapes, op_params layouts and source slots are upstream ggml's:
 *   ROPE and ROPE_BACK (the same layout)
 *            src[0] a [head_dim, n_head, n_tokens, n_seq], src[1] b I32
 *            positions (n_tokens of them, 4 * n_tokens for the
 *            multi-section modes), src[2] c F32 frequency factors
 *            (optional); op_params int32 { 0, n_dims, mode, 0, n_ctx_orig },
 *            then float { freq_base, freq_scale, ext_factor, attn_factor,
 *            beta_fast, beta_slow } in slots 5..10, then int32 sections[4]
 *            in slots 11..14 (zero unless the mode is multi-section),
 *            then int32 n_offs in slot 15 (0; ggml_rope_set_offset)
 *   ARGSORT  src[0] a; op_params int32 { order }; result I32, a's shape
 *   TOP_K    src[0] a; no op_params; result I32 [k, ne1, ne2, ne3]
 * Constructors follow the library's rules: a NULL input gives NULL without
 * a message; a bad argument gives NULL and one message.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>

#include "ggml-impl.h"

#define SHAPE_FMT "[%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]"
#define SHAPE_ARGS(t) (t)->ne[0], (t)->ne[1], (t)->ne[2], (t)->ne[3]

/* True for the element types a rotation or a sort can be defined on. */
static bool float_type(enum ggml_type type)
{
    return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16;
}

/* ------------------------------------------------------------------- rope */

/* True for the rope modes some backend computes. */
static bool rope_mode_known(int mode)
{
    return mode == GGML_ROPE_TYPE_NORMAL || mode == GGML_ROPE_TYPE_NEOX || mode == GGML_ROPE_TYPE_MROPE ||
           mode == GGML_ROPE_TYPE_VISION || mode == GGML_ROPE_TYPE_IMROPE;
}

/*
 * Checks the multi-section layout: every section non-negative, at least one
 * of the first three positive, and all of them together no wider than a row
 * of head_dim values (the kernel walks ne0 / 2 pairs through the sections).
 */
static bool check_sections(const int *sections, int64_t head_dim, const char *func)
{
    if (sections == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "a multi-section rope mode needs sections (use ggml_rope_multi)");
        return false;
    }
    int64_t total = 0;
    for (int i = 0; i < GGML_MROPE_SECTIONS; i++) {
        if (sections[i] < 0) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "sections[%d] = %d is negative", i, sections[i]);
            return false;
        }
        total += sections[i];
    }
    if (sections[0] + (int64_t) sections[1] + sections[2] == 0) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "sections %d, %d, %d, %d: one of the first three must be positive",
                     sections[0], sections[1], sections[2], sections[3]);
        return false;
    }
    if (total > head_dim) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "sections %d, %d, %d, %d add up to %" PRId64 ", more than the %" PRId64 " values of a row",
                     sections[0], sections[1], sections[2], sections[3], total, head_dim);
        return false;
    }
    return true;
}

/*
 * A ROPE node, or with back a ROPE_BACK node (the same parameters; the
 * kernel rotates by the opposite angles, the transpose of the forward
 * rotation: the gradient of rope with respect to its input).
 */
static struct ggml_tensor *rope_node(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                     struct ggml_tensor *c, int n_dims, const int *sections, int mode,
                                     int n_ctx_orig, float freq_base, float freq_scale, float ext_factor,
                                     float attn_factor, float beta_fast, float beta_slow, bool inplace, bool back,
                                     const char *func)
{
    if (a == NULL || b == NULL)
        return NULL;
    if (mode & 1) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "mode %d: bit 0 of the mode is no longer supported", mode);
        return NULL;
    }
    if (!rope_mode_known(mode)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "mode %d is not a GGML_ROPE_TYPE_* value (0, 2, 8, 24 or 40)", mode);
        return NULL;
    }
    if (!float_type(a->type)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' is %s; rope needs f32, f16 or bf16 values",
                     a->name, ggml_type_name(a->type));
        return NULL;
    }
    if (b->type != GGML_TYPE_I32 || !ggml_is_vector(b)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "the positions '%s' (%s " SHAPE_FMT ") must be an i32 vector",
                     b->name, ggml_type_name(b->type), SHAPE_ARGS(b));
        return NULL;
    }
    const bool multi = (mode & GGML_ROPE_TYPE_MROPE) != 0;
    int64_t n_pos = a->ne[2];
    if ((multi && __builtin_mul_overflow(a->ne[2], 4, &n_pos)) || b->ne[0] != n_pos) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "'%s' holds %" PRId64 " positions; '%s' " SHAPE_FMT " needs %" PRId64 "%s",
                     b->name, b->ne[0], a->name, SHAPE_ARGS(a), n_pos,
                     multi ? " (4 per token in a multi-section mode)" : " (one per token, ne[2])");
        return NULL;
    }
    if (n_dims < 0 || n_dims % 2 != 0 || n_dims > a->ne[0]) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "n_dims = %d must be even and between 0 and the row length %" PRId64, n_dims, a->ne[0]);
        return NULL;
    }
    if (mode == GGML_ROPE_TYPE_VISION && 2 * (int64_t) n_dims != a->ne[0]) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "vision mode rotates whole rows: n_dims = %d must be half the row length %" PRId64,
                     n_dims, a->ne[0]);
        return NULL;
    }
    if (multi && !check_sections(sections, a->ne[0], func))
        return NULL;
    if (c != NULL) {
        /* one factor per rotated pair */
        const int64_t n_pairs = mode == GGML_ROPE_TYPE_VISION ? n_dims : n_dims / 2;
        if (c->type != GGML_TYPE_F32 || c->ne[0] < n_pairs) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                         "the frequency factors '%s' (%s, %" PRId64 " values) must be f32 with at least %" PRId64
                         " values", c->name, ggml_type_name(c->type), c->ne[0], n_pairs);
            return NULL;
        }
    }

    struct ggml_tensor *result = inplace ? ggml__view_tensor_impl(ctx, a, func) : ggml__dup_tensor_impl(ctx, a, func);
    if (result == NULL)
        return NULL;
    const int32_t ints[5] = { 0, n_dims, mode, 0, n_ctx_orig };
    ggml__set_op_params(result, ints, sizeof ints);
    ggml__set_op_params_f32(result, 5, freq_base);
    ggml__set_op_params_f32(result, 6, freq_scale);
    ggml__set_op_params_f32(result, 7, ext_factor);
    ggml__set_op_params_f32(result, 8, attn_factor);
    ggml__set_op_params_f32(result, 9, beta_fast);
    ggml__set_op_params_f32(result, 10, beta_slow);
    for (int i = 0; i < GGML_MROPE_SECTIONS; i++)
        ggml__set_op_params_i32(result, 11 + i, multi ? sections[i] : 0);
    result->op = back ? GGML_OP_ROPE_BACK : GGML_OP_ROPE;
    result->src[0] = a;
    result->src[1] = b;
    result->src[2] = c;
    return result;
}

static struct ggml_tensor *rope_impl(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                     struct ggml_tensor *c, int n_dims, const int *sections, int mode,
                                     int n_ctx_orig, float freq_base, float freq_scale, float ext_factor,
                                     float attn_factor, float beta_fast, float beta_slow, bool inplace,
                                     const char *func)
{
    return rope_node(ctx, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale, ext_factor,
                     attn_factor, beta_fast, beta_slow, inplace, false, func);
}

struct ggml_tensor *ggml_rope_ext_back(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                       struct ggml_tensor *c, int n_dims, int mode, int n_ctx_orig, float freq_base,
                                       float freq_scale, float ext_factor, float attn_factor, float beta_fast,
                                       float beta_slow)
{
    return rope_node(ctx, a, b, c, n_dims, NULL, mode, n_ctx_orig, freq_base, freq_scale, ext_factor,
                     attn_factor, beta_fast, beta_slow, false, true, __func__);
}

struct ggml_tensor *ggml_rope_multi_back(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                         struct ggml_tensor *c, int n_dims, int sections[GGML_MROPE_SECTIONS],
                                         int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                         float ext_factor, float attn_factor, float beta_fast, float beta_slow)
{
    return rope_node(ctx, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale, ext_factor,
                     attn_factor, beta_fast, beta_slow, false, true, __func__);
}

struct ggml_tensor *ggml_rope_set_offset(struct ggml_tensor *a, int n_offs)
{
    if (a == NULL)
        return NULL;
    if (a->op != GGML_OP_ROPE && a->op != GGML_OP_ROPE_BACK) {
        ggml__error("'%s' is a %s node, not a ROPE one", a->name, ggml_op_name(a->op));
        return NULL;
    }
    const int32_t n_dims = ggml__get_op_params_i32(a, 1), mode = ggml__get_op_params_i32(a, 2);
    if (mode == GGML_ROPE_TYPE_VISION) {
        ggml__error("'%s' rotates whole rows (vision mode): no offset", a->name);
        return NULL;
    }
    if (n_offs < 0 || n_offs % 2 != 0 || (int64_t) n_offs + n_dims > a->ne[0]) {
        ggml__error("offset %d: want an even offset with %d rotated values inside rows of %" PRId64, n_offs,
                    n_dims, a->ne[0]);
        return NULL;
    }
    ggml__set_op_params_i32(a, 15, n_offs);
    return a;
}

/* The defaults of the plain forms: base 10000, no scaling, no YaRN. */
#define ROPE_PLAIN 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f

struct ggml_tensor *ggml_rope(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                              int n_dims, int mode)
{
    return rope_impl(ctx, a, b, NULL, n_dims, NULL, mode, ROPE_PLAIN, false, __func__);
}

struct ggml_tensor *ggml_rope_inplace(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                      int n_dims, int mode)
{
    return rope_impl(ctx, a, b, NULL, n_dims, NULL, mode, ROPE_PLAIN, true, __func__);
}

struct ggml_tensor *ggml_rope_ext(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                  struct ggml_tensor *c, int n_dims, int mode, int n_ctx_orig, float freq_base,
                                  float freq_scale, float ext_factor, float attn_factor, float beta_fast,
                                  float beta_slow)
{
    return rope_impl(ctx, a, b, c, n_dims, NULL, mode, n_ctx_orig, freq_base, freq_scale, ext_factor,
                     attn_factor, beta_fast, beta_slow, false, __func__);
}

struct ggml_tensor *ggml_rope_ext_inplace(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                          struct ggml_tensor *c, int n_dims, int mode, int n_ctx_orig,
                                          float freq_base, float freq_scale, float ext_factor, float attn_factor,
                                          float beta_fast, float beta_slow)
{
    return rope_impl(ctx, a, b, c, n_dims, NULL, mode, n_ctx_orig, freq_base, freq_scale, ext_factor,
                     attn_factor, beta_fast, beta_slow, true, __func__);
}

struct ggml_tensor *ggml_rope_multi(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                    struct ggml_tensor *c, int n_dims, int sections[GGML_MROPE_SECTIONS],
                                    int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                    float ext_factor, float attn_factor, float beta_fast, float beta_slow)
{
    return rope_impl(ctx, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale, ext_factor,
                     attn_factor, beta_fast, beta_slow, false, __func__);
}

struct ggml_tensor *ggml_rope_multi_inplace(struct ggml_context *ctx, struct ggml_tensor *a,
                                            struct ggml_tensor *b, struct ggml_tensor *c, int n_dims,
                                            int sections[GGML_MROPE_SECTIONS], int mode, int n_ctx_orig,
                                            float freq_base, float freq_scale, float ext_factor,
                                            float attn_factor, float beta_fast, float beta_slow)
{
    return rope_impl(ctx, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale, ext_factor,
                     attn_factor, beta_fast, beta_slow, true, __func__);
}

struct ggml_tensor *ggml_rope_custom(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b,
                                     int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                     float ext_factor, float attn_factor, float beta_fast, float beta_slow)
{
    return rope_impl(ctx, a, b, NULL, n_dims, NULL, mode, n_ctx_orig, freq_base, freq_scale, ext_factor,
                     attn_factor, beta_fast, beta_slow, false, __func__);
}

struct ggml_tensor *ggml_rope_custom_inplace(struct ggml_context *ctx, struct ggml_tensor *a,
                                             struct ggml_tensor *b, int n_dims, int mode, int n_ctx_orig,
                                             float freq_base, float freq_scale, float ext_factor,
                                             float attn_factor, float beta_fast, float beta_slow)
{
    return rope_impl(ctx, a, b, NULL, n_dims, NULL, mode, n_ctx_orig, freq_base, freq_scale, ext_factor,
                     attn_factor, beta_fast, beta_slow, true, __func__);
}

/*
 * The pair index at which a rotation of n_rot turns over the original
 * context makes: the dimension d where n_ctx_orig / (2 pi base^(2d/n_dims))
 * equals n_rot, solved for d.
 */
static float yarn_corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base)
{
    return (float) n_dims * logf((float) n_ctx_orig / (n_rot * 2.0f * (float) M_PI)) / (2.0f * logf(base));
}

void ggml_rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow,
                              float dims[2])
{
    if (dims == NULL) {
        ggml__error("dims is NULL");
        return;
    }
    const float start = floorf(yarn_corr_dim(n_dims, n_ctx_orig, beta_fast, freq_base));
    const float end = ceilf(yarn_corr_dim(n_dims, n_ctx_orig, beta_slow, freq_base));
    const float last = (float) (n_dims - 1);
    /* written as comparisons so that a NaN bound passes through unchanged */
    dims[0] = 0.0f > start ? 0.0f : start;
    dims[1] = last < end ? last : end;
}

/* --------------------------------------------------------------- sorting */

/* Checks that a holds sortable values in rows an int32 can index. */
static bool check_sort_input(const struct ggml_tensor *a, const char *func)
{
    if (!float_type(a->type)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' is %s; sorting needs f32, f16 or bf16 values",
                     a->name, ggml_type_name(a->type));
        return false;
    }
    if (a->ne[0] > INT32_MAX) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "rows of %" PRId64 " values cannot be indexed by i32", a->ne[0]);
        return false;
    }
    return true;
}

static struct ggml_tensor *argsort_impl(struct ggml_context *ctx, struct ggml_tensor *a,
                                        enum ggml_sort_order order, const char *func)
{
    if (a == NULL)
        return NULL;
    if (!check_sort_input(a, func))
        return NULL;
    if (order != GGML_SORT_ORDER_ASC && order != GGML_SORT_ORDER_DESC) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "order %d is neither GGML_SORT_ORDER_ASC nor _DESC", (int) order);
        return NULL;
    }
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, GGML_TYPE_I32, GGML_MAX_DIMS, a->ne, NULL, 0, func);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_i32(result, 0, (int32_t) order);
    result->op = GGML_OP_ARGSORT;
    result->src[0] = a;
    return result;
}

/* Checks 0 <= k <= the row length of a. */
static bool check_k(const struct ggml_tensor *a, int k, const char *func)
{
    if (k < 0 || k > a->ne[0]) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "k = %d is outside 0..%" PRId64 ", the row length of '%s'",
                     k, a->ne[0], a->name);
        return false;
    }
    return true;
}

struct ggml_tensor *ggml_argsort(struct ggml_context *ctx, struct ggml_tensor *a, enum ggml_sort_order order)
{
    return argsort_impl(ctx, a, order, __func__);
}

struct ggml_tensor *ggml_argsort_top_k(struct ggml_context *ctx, struct ggml_tensor *a, int k)
{
    if (a == NULL)
        return NULL;
    if (!check_sort_input(a, __func__) || !check_k(a, k, __func__))
        return NULL;
    struct ggml_tensor *sorted = argsort_impl(ctx, a, GGML_SORT_ORDER_DESC, __func__);
    if (sorted == NULL)
        return NULL;

    /* the first k columns of the descending argsort, as a view */
    const int64_t ne[4] = { k, sorted->ne[1], sorted->ne[2], sorted->ne[3] };
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, GGML_TYPE_I32, GGML_MAX_DIMS, ne, sorted, 0, __func__);
    if (result == NULL)
        return NULL;
    const size_t offset = 0;
    ggml_format_name(result, "%s (view)", sorted->name);
    for (int i = 1; i < GGML_MAX_DIMS; i++)
        result->nb[i] = sorted->nb[i];
    ggml__set_op_params(result, &offset, sizeof offset);
    result->op = GGML_OP_VIEW;
    result->src[0] = sorted;
    return result;
}

struct ggml_tensor *ggml_top_k(struct ggml_context *ctx, struct ggml_tensor *a, int k)
{
    if (a == NULL)
        return NULL;
    if (!check_sort_input(a, __func__) || !check_k(a, k, __func__))
        return NULL;
    const int64_t ne[4] = { k, a->ne[1], a->ne[2], a->ne[3] };
    return ggml__new_op_node(ctx, GGML_OP_TOP_K, GGML_TYPE_I32, GGML_MAX_DIMS, ne, a, NULL, NULL, 0, __func__);
}
