/*
 * ops-image.c - constructors of the pooling and padding ops: POOL_1D,
 * POOL_2D, PAD (zero and circular, ggml_pad and ggml_pad_ext forms),
 * PAD_REFLECT_1D, ROLL and UPSCALE (ggml_upscale, ggml_upscale_ext,
 * ggml_interpolate).
 *
 * Parameters are stored in op_params as upstream lays them out:
 *   POOL_1D         { op, k0, s0, p0 }
 *   POOL_2D         { op, k0, k1, s0, s1, p0, p1 }  (p0, p1 truncated to int)
 *   PAD             { lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3, circular }
 *   PAD_REFLECT_1D  { p0, p1 }
 *   ROLL            { shift0, shift1, shift2, shift3 }
 *   UPSCALE         { mode }
 * A NULL input gives NULL without a message; a bad argument gives NULL and
 * one message.
 */
#include "config.h"

#include <inttypes.h>

#include "ggml-impl.h"

/* Number of windows of size k, stride s, over n elements padded by p on each side. */
static int64_t pool_output_size(int64_t n, int k, int s, float p)
{
    return ggml__float_to_int((float) n + 2.0f * p - (float) k, INT64_MIN, INT64_MAX) / s + 1;
}

/* Checks one pooling dimension; logs as func and returns false when bad. */
static bool check_pool_dim(const struct ggml_tensor *a, int dim, int k, int s, float p, const char *func)
{
    /* the padding is stored as an int32_t op parameter */
    if (k <= 0 || s <= 0 || !(p >= 0.0f && p < 2147483648.0f)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "dimension %d: kernel %d and stride %d must be positive "
                     "and padding %g in [0, 2^31)", dim, k, s, (double) p);
        return false;
    }
    if (!((float) a->ne[dim] + 2.0f * p < 0x1p62f)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "dimension %d: padding %g is too large (the padded extent of '%s' "
                     "must stay below 2^62)", dim, (double) p, a->name);
        return false;
    }
    if ((float) a->ne[dim] + 2.0f * p < (float) k) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "dimension %d: kernel %d is larger than '%s' extent %" PRId64
                     " plus padding", dim, k, a->name, a->ne[dim]);
        return false;
    }
    return true;
}

static bool check_pool_op(enum ggml_op_pool op, const char *func)
{
    if (op == GGML_OP_POOL_MAX || op == GGML_OP_POOL_AVG)
        return true;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "unknown pooling function %d", (int) op);
    return false;
}

struct ggml_tensor *ggml_pool_1d(struct ggml_context *ctx, struct ggml_tensor *a, enum ggml_op_pool op,
                                 int k0, int s0, int p0)
{
    if (a == NULL)
        return NULL;
    if (!check_pool_op(op, __func__) || !check_pool_dim(a, 0, k0, s0, (float) p0, __func__))
        return NULL;
    const int64_t ne[4] = { pool_output_size(a->ne[0], k0, s0, (float) p0), a->ne[1], a->ne[2], a->ne[3] };
    const int32_t params[] = { (int32_t) op, k0, s0, p0 };
    return ggml__new_op_node(ctx, GGML_OP_POOL_1D, GGML_TYPE_F32, 4, ne,
                             a, NULL, params, GGML__COUNT(params), __func__);
}

struct ggml_tensor *ggml_pool_2d(struct ggml_context *ctx, struct ggml_tensor *a, enum ggml_op_pool op,
                                 int k0, int k1, int s0, int s1, float p0, float p1)
{
    if (a == NULL)
        return NULL;
    if (!check_pool_op(op, __func__) || !check_pool_dim(a, 0, k0, s0, p0, __func__) ||
        !check_pool_dim(a, 1, k1, s1, p1, __func__))
        return NULL;
    const int64_t ne[4] = { pool_output_size(a->ne[0], k0, s0, p0), pool_output_size(a->ne[1], k1, s1, p1),
                            a->ne[2], a->ne[3] };
    const int32_t params[] = { (int32_t) op, k0, k1, s0, s1, (int32_t) ggml__float_to_int(p0, 0, INT32_MAX),
                               (int32_t) ggml__float_to_int(p1, 0, INT32_MAX) };
    return ggml__new_op_node(ctx, GGML_OP_POOL_2D, GGML_TYPE_F32, 4, ne,
                             a, NULL, params, GGML__COUNT(params), __func__);
}

static struct ggml_tensor *pad_impl(struct ggml_context *ctx, struct ggml_tensor *a, const int lp[4],
                                    const int rp[4], bool circular, const char *func)
{
    if (a == NULL)
        return NULL;
    for (int d = 0; d < 4; d++) {
        if (lp[d] < 0 || rp[d] < 0) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "dimension %d: negative padding %d, %d", d, lp[d], rp[d]);
            return NULL;
        }
        if (circular && a->ne[d] == 0 && (lp[d] > 0 || rp[d] > 0)) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "dimension %d of '%s' is empty: there is nothing to wrap around",
                         d, a->name);
            return NULL;
        }
    }
    int64_t ne[4];
    for (int d = 0; d < 4; d++) {
        if (__builtin_add_overflow(a->ne[d], (int64_t) lp[d] + rp[d], &ne[d])) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "dimension %d of '%s' padded by %d, %d exceeds INT64_MAX", d,
                         a->name, lp[d], rp[d]);
            return NULL;
        }
    }
    const int32_t params[] = { lp[0], rp[0], lp[1], rp[1], lp[2], rp[2], lp[3], rp[3], circular ? 1 : 0 };
    return ggml__new_op_node(ctx, GGML_OP_PAD, a->type, 4, ne, a, NULL, params, GGML__COUNT(params), func);
}

struct ggml_tensor *ggml_pad(struct ggml_context *ctx, struct ggml_tensor *a, int p0, int p1, int p2, int p3)
{
    const int lp[4] = { 0, 0, 0, 0 }, rp[4] = { p0, p1, p2, p3 };
    return pad_impl(ctx, a, lp, rp, false, __func__);
}

struct ggml_tensor *ggml_pad_circular(struct ggml_context *ctx, struct ggml_tensor *a, int p0, int p1, int p2,
                                      int p3)
{
    const int lp[4] = { 0, 0, 0, 0 }, rp[4] = { p0, p1, p2, p3 };
    return pad_impl(ctx, a, lp, rp, true, __func__);
}

struct ggml_tensor *ggml_pad_ext(struct ggml_context *ctx, struct ggml_tensor *a, int lp0, int rp0, int lp1,
                                 int rp1, int lp2, int rp2, int lp3, int rp3)
{
    const int lp[4] = { lp0, lp1, lp2, lp3 }, rp[4] = { rp0, rp1, rp2, rp3 };
    return pad_impl(ctx, a, lp, rp, false, __func__);
}

struct ggml_tensor *ggml_pad_ext_circular(struct ggml_context *ctx, struct ggml_tensor *a, int lp0, int rp0,
                                          int lp1, int rp1, int lp2, int rp2, int lp3, int rp3)
{
    const int lp[4] = { lp0, lp1, lp2, lp3 }, rp[4] = { rp0, rp1, rp2, rp3 };
    return pad_impl(ctx, a, lp, rp, true, __func__);
}

struct ggml_tensor *ggml_pad_reflect_1d(struct ggml_context *ctx, struct ggml_tensor *a, int p0, int p1)
{
    if (a == NULL)
        return NULL;
    if (p0 < 0 || p1 < 0 || p0 >= a->ne[0] || p1 >= a->ne[0]) {
        ggml__error("padding %d, %d must be in [0, %" PRId64 ") (the extent of '%s')", p0, p1, a->ne[0], a->name);
        return NULL;
    }
    if (a->type != GGML_TYPE_F32 || !ggml_is_contiguous(a)) {
        ggml__error("'%s' must be a contiguous F32 tensor", a->name);
        return NULL;
    }
    const int64_t ne[4] = { a->ne[0] + p0 + p1, a->ne[1], a->ne[2], a->ne[3] };
    const int32_t params[] = { p0, p1 };
    return ggml__new_op_node(ctx, GGML_OP_PAD_REFLECT_1D, a->type, 4, ne,
                             a, NULL, params, GGML__COUNT(params), __func__);
}

struct ggml_tensor *ggml_roll(struct ggml_context *ctx, struct ggml_tensor *a, int shift0, int shift1,
                              int shift2, int shift3)
{
    if (a == NULL)
        return NULL;
    const int shift[4] = { shift0, shift1, shift2, shift3 };
    if (a->nb[0] != ggml_type_size(a->type)) {
        ggml__error("'%s' must have contiguous rows", a->name);
        return NULL;
    }
    for (int d = 0; d < 4; d++) {
        const int64_t magnitude = shift[d] < 0 ? -(int64_t) shift[d] : shift[d];
        if (magnitude >= a->ne[d]) {
            ggml__error("dimension %d: shift %d not smaller in magnitude than the extent %" PRId64, d, shift[d],
                        a->ne[d]);
            return NULL;
        }
    }
    struct ggml_tensor *result = ggml__dup_tensor_impl(ctx, a, __func__);
    if (result == NULL)
        return NULL;
    ggml__set_op_params(result, shift, sizeof shift);
    result->op = GGML_OP_ROLL;
    result->src[0] = a;
    return result;
}

/*
 * UPSCALE: a resampled to ne0 x ne1 x ne2 x ne3; op_params { mode } (a
 * ggml_scale_mode or-ed with ggml_scale_flag bits).
 */
static struct ggml_tensor *interpolate_impl(struct ggml_context *ctx, struct ggml_tensor *a, const int64_t ne[4],
                                            uint32_t mode, const char *func)
{
    if (a == NULL)
        return NULL;
    const uint32_t known_flags = GGML_SCALE_FLAG_ALIGN_CORNERS | GGML_SCALE_FLAG_ANTIALIAS;
    if ((mode & 0xFF) >= GGML_SCALE_MODE_COUNT || (mode & ~(0xFFu | known_flags)) != 0) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "unknown scale mode 0x%x", (unsigned) mode);
        return NULL;
    }
    if ((mode & GGML_SCALE_FLAG_ANTIALIAS) && (mode & 0xFF) != GGML_SCALE_MODE_BILINEAR) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "antialiasing applies to bilinear mode only");
        return NULL;
    }
    for (int d = 0; d < 4; d++) {
        if (ne[d] <= 0) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "dimension %d: extent %" PRId64 " is not positive", d, ne[d]);
            return NULL;
        }
    }
    /* every element of the (non-empty) result is sampled from a */
    if (ggml_is_empty(a)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s' has no elements to resample", a->name);
        return NULL;
    }
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, a->type, 4, ne, NULL, 0, func);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_i32(result, 0, (int32_t) mode);
    result->op = GGML_OP_UPSCALE;
    result->src[0] = a;
    return result;
}

struct ggml_tensor *ggml_upscale(struct ggml_context *ctx, struct ggml_tensor *a, int scale_factor,
                                 enum ggml_scale_mode mode)
{
    if (a == NULL)
        return NULL;
    if (scale_factor <= 0) {
        ggml__error("scale factor %d is not positive", scale_factor);
        return NULL;
    }
    int64_t ne[4] = { 0, 0, a->ne[2], a->ne[3] };
    if (__builtin_mul_overflow(a->ne[0], scale_factor, &ne[0]) || __builtin_mul_overflow(a->ne[1], scale_factor, &ne[1])) {
        ggml__error("'%s' scaled by %d has more than INT64_MAX elements along a dimension", a->name, scale_factor);
        return NULL;
    }
    return interpolate_impl(ctx, a, ne, (uint32_t) mode, __func__);
}

struct ggml_tensor *ggml_upscale_ext(struct ggml_context *ctx, struct ggml_tensor *a, int ne0, int ne1, int ne2,
                                     int ne3, enum ggml_scale_mode mode)
{
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return interpolate_impl(ctx, a, ne, (uint32_t) mode, __func__);
}

struct ggml_tensor *ggml_interpolate(struct ggml_context *ctx, struct ggml_tensor *a, int64_t ne0, int64_t ne1,
                                     int64_t ne2, int64_t ne3, uint32_t mode)
{
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return interpolate_impl(ctx, a, ne, mode, __func__);
}

/*
 * WIN_PART: a [C, W, H, 1] cut into w x w windows [C, w, w, npx*npy],
 * window (px, py) at index py*npx + px, zero beyond the plane; op_params
 * { npx, npy, w }.
 */
struct ggml_tensor *ggml_win_part(struct ggml_context *ctx, struct ggml_tensor *a, int w)
{
    if (a == NULL)
        return NULL;
    if (w <= 0) {
        ggml__error("window size %d is not positive", w);
        return NULL;
    }
    if (a->type != GGML_TYPE_F32 || a->ne[3] != 1) {
        ggml__error("'%s' must be F32 with ne[3] == 1", a->name);
        return NULL;
    }
    const int64_t npx = (a->ne[1] + w - 1) / w, npy = (a->ne[2] + w - 1) / w;
    const int64_t ne[4] = { a->ne[0], w, w, npx * npy };
    const int32_t params[] = { (int32_t) npx, (int32_t) npy, w };
    return ggml__new_op_node(ctx, GGML_OP_WIN_PART, GGML_TYPE_F32, 4, ne,
                             a, NULL, params, GGML__COUNT(params), __func__);
}

/* WIN_UNPART: windows [C, w, w, npx*npy] joined into [C, w0, h0]; op_params { w }. */
struct ggml_tensor *ggml_win_unpart(struct ggml_context *ctx, struct ggml_tensor *a, int w0, int h0, int w)
{
    if (a == NULL)
        return NULL;
    if (w <= 0 || w0 <= 0 || h0 <= 0) {
        ggml__error("window size %d and plane %d x %d must be positive", w, w0, h0);
        return NULL;
    }
    if (a->type != GGML_TYPE_F32) {
        ggml__error("'%s' must be F32", a->name);
        return NULL;
    }
    const int64_t npx = ((int64_t) w0 + w - 1) / w, npy = ((int64_t) h0 + w - 1) / w;
    if (a->ne[1] != w || a->ne[2] != w || a->ne[3] != npx * npy) {
        ggml__error("'%s' [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] is not %" PRId64
                    " windows of %d x %d", a->name, a->ne[0], a->ne[1], a->ne[2], a->ne[3], npx * npy, w, w);
        return NULL;
    }
    const int64_t ne[4] = { a->ne[0], w0, h0, 1 };
    struct ggml_tensor *result = ggml__new_tensor_impl(ctx, GGML_TYPE_F32, 3, ne, NULL, 0, __func__);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_i32(result, 0, w);
    result->op = GGML_OP_WIN_UNPART;
    result->src[0] = a;
    return result;
}

/*
 * GET_REL_POS: from a table a [C, 2*qh - 1], the F16 tensor [C, kh, qh]
 * whose row (k, q) is row (kh - 1 - k) + q of a.
 */
struct ggml_tensor *ggml_get_rel_pos(struct ggml_context *ctx, struct ggml_tensor *a, int qh, int kh)
{
    if (a == NULL)
        return NULL;
    if (qh <= 0 || qh != kh || a->ne[1] != 2 * (int64_t) qh - 1) {
        ggml__error("qh %d and kh %d must be equal and positive, and '%s' must have 2*qh - 1 rows (has %" PRId64
                    ")", qh, kh, a->name, a->ne[1]);
        return NULL;
    }
    const int64_t ne[4] = { a->ne[0], kh, qh, 1 };
    return ggml__new_op_node(ctx, GGML_OP_GET_REL_POS, GGML_TYPE_F16, 3, ne, a, NULL, NULL, 0, __func__);
}

/*
 * ADD_REL_POS: a [W*W, Q, N] plus, at key (kr, kc) of query q, ph[kr, q] +
 * pw[kc, q] (pw, ph [W, Q1, Q2, N], Q = Q1*Q2); op_params { inplace }.
 */
static struct ggml_tensor *add_rel_pos_impl(struct ggml_context *ctx, struct ggml_tensor *a,
                                            struct ggml_tensor *pw, struct ggml_tensor *ph, bool inplace,
                                            const char *func)
{
    if (a == NULL || pw == NULL || ph == NULL)
        return NULL;
    if (a->type != GGML_TYPE_F32 || pw->type != GGML_TYPE_F32 || ph->type != GGML_TYPE_F32 ||
        !ggml_is_contiguous(a) || !ggml_is_contiguous(pw) || !ggml_is_contiguous(ph)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "'%s', '%s' and '%s' must be contiguous F32 tensors", a->name,
                     pw->name, ph->name);
        return NULL;
    }
    if (!ggml__add_rel_pos_fits(a, pw, ph)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "shapes of '%s', '%s' and '%s' do not match", a->name, pw->name,
                     ph->name);
        return NULL;
    }
    struct ggml_tensor *result = inplace ? ggml__view_tensor_impl(ctx, a, func) : ggml__dup_tensor_impl(ctx, a, func);
    if (result == NULL)
        return NULL;
    ggml__set_op_params_i32(result, 0, inplace ? 1 : 0);
    result->op = GGML_OP_ADD_REL_POS;
    result->src[0] = a;
    result->src[1] = pw;
    result->src[2] = ph;
    return result;
}

struct ggml_tensor *ggml_add_rel_pos(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *pw,
                                     struct ggml_tensor *ph)
{
    return add_rel_pos_impl(ctx, a, pw, ph, false, __func__);
}

struct ggml_tensor *ggml_add_rel_pos_inplace(struct ggml_context *ctx, struct ggml_tensor *a,
                                             struct ggml_tensor *pw, struct ggml_tensor *ph)
{
    return add_rel_pos_impl(ctx, a, pw, ph, true, __func__);
}
