/*
 * ops/image.c - POOL_1D, POOL_2D, PAD, PAD_REFLECT_1D, ROLL and UPSCALE.
 *
 * Threads split the rows of dst (every index but the first).  Sources may
 * have any strides.  Types:
 *   POOL_1D, POOL_2D  src F32, F16 or BF16; dst F32.  Window i of a
 *                     dimension covers source indices i*s - p .. i*s - p + k - 1;
 *                     indices outside the source are skipped.  MAX is the
 *                     largest element seen (-FLT_MAX if none); AVG is the sum
 *                     of the elements seen divided by the whole window size
 *                     (padding counts as zeros).
 *   PAD               src and dst of the same type, F32, F16 or BF16; zero or
 *                     circular (index taken modulo the source extent).
 *   PAD_REFLECT_1D    F32, contiguous.
 *   ROLL              src and dst of the same type, F32, F16 or BF16.
 *   UPSCALE           src and dst of the same type, F32, F16 or BF16; modes
 *                     NEAREST, BILINEAR (without ANTIALIAS), BICUBIC, with
 *                     or without ALIGN_CORNERS.
 * Reference kernels convert element by element; the fast kernels work on
 * F32 rows with contiguous elements.
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "ggml-impl.h"
#include "cpu-private.h"

static bool float_type(enum ggml_type type)
{
    return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16;
}

/* Thread's share [first, last) of dst's rows, with the indices of the first one. */
static void my_rows(const struct ggml__compute_params *params, const struct ggml_tensor *dst, int64_t *first,
                    int64_t *last)
{
    ggml__split_rows(dst->ne[1] * dst->ne[2] * dst->ne[3], params->ith, params->nth, first, last);
}

static void row_indices(const struct ggml_tensor *dst, int64_t row, int64_t *i1, int64_t *i2, int64_t *i3)
{
    *i1 = row % dst->ne[1];
    *i2 = row / dst->ne[1] % dst->ne[2];
    *i3 = row / (dst->ne[1] * dst->ne[2]);
}

/* ------------------------------------------------------------------ pooling */

/* A pooling node the kernel can run: known mode, windows and strides of at least 1. */
static bool pool_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int32_t *p = dst->op_params;
    const bool two_d = dst->op == GGML_OP_POOL_2D;
    const int k0 = p[1], k1 = two_d ? p[2] : 1;
    const int s0 = two_d ? p[3] : p[2], s1 = two_d ? p[4] : 1;
    return src != NULL && dst->type == GGML_TYPE_F32 && float_type(src->type) &&
           (p[0] == GGML_OP_POOL_MAX || p[0] == GGML_OP_POOL_AVG) && k0 >= 1 && k1 >= 1 && s0 >= 1 && s1 >= 1 &&
           (int64_t) k0 * k1 <= INT32_MAX && (two_d || dst->ne[1] == src->ne[1]) && dst->ne[2] == src->ne[2] &&
           dst->ne[3] == src->ne[3];
}

/*
 * One output element: pools the window starting at (x0, y0) of the plane
 * (i2, i3) of src, k0 x k1 wide (k1 = 1 and y0 = 0 for 1-d pooling).
 */
static float pool_window(const struct ggml_tensor *src, bool is_max, int64_t x0, int64_t y0, int k0, int k1,
                         int64_t i2, int64_t i3, bool fast)
{
    float acc = is_max ? -FLT_MAX : 0.0f;
    for (int64_t y = y0 < 0 ? 0 : y0; y < y0 + k1 && y < src->ne[1]; y++) {
        const int64_t xb = x0 < 0 ? 0 : x0, xe = x0 + k0 < src->ne[0] ? x0 + k0 : src->ne[0];
        if (fast) {
            const float *row = (const float *) ggml__elem_ptr(src, 0, y, i2, i3);
            if (is_max) {
                for (int64_t x = xb; x < xe; x++)
                    acc = row[x] > acc ? row[x] : acc;
            } else {
                for (int64_t x = xb; x < xe; x++)
                    acc += row[x];
            }
        } else {
            for (int64_t x = xb; x < xe; x++) {
                const float v = ggml__load_float(src->type, ggml__elem_ptr(src, x, y, i2, i3));
                acc = is_max ? (v > acc ? v : acc) : acc + v;
            }
        }
    }
    return is_max ? acc : acc / (float) (k0 * k1);
}

static void pool_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int32_t *p = dst->op_params;
    const bool two_d = dst->op == GGML_OP_POOL_2D;
    const bool is_max = p[0] == GGML_OP_POOL_MAX;
    const int k0 = p[1], k1 = two_d ? p[2] : 1;
    const int s0 = two_d ? p[3] : p[2], s1 = two_d ? p[4] : 1;
    const int p0 = two_d ? p[5] : p[3], p1 = two_d ? p[6] : 0;
    const bool fast = !params->use_ref && src->type == GGML_TYPE_F32 && src->nb[0] == sizeof(float);
    int64_t first, last;
    my_rows(params, dst, &first, &last);
    for (int64_t row = first; row < last; row++) {
        int64_t i1, i2, i3;
        row_indices(dst, row, &i1, &i2, &i3);
        /* 1-d pooling: each source row is pooled alone (dimension 1 passes through). */
        const int64_t y0 = two_d ? i1 * s1 - p1 : 0;
        struct ggml_tensor view = *src;
        if (!two_d) {
            /* a one-row plane: row i1 of src */
            view.data = (char *) src->data + i1 * src->nb[1];
            view.ne[1] = 1;
        }
        float *out = (float *) ((char *) dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3]);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            const float v = pool_window(&view, is_max, i0 * s0 - p0, y0, k0, k1, i2, i3, fast);
            *(float *) ((char *) out + i0 * dst->nb[0]) = v;
        }
    }
}

const struct ggml__op_impl ggml__op_pool_1d = {
    .kernel = pool_kernel,
    .supports = pool_supports,
};

const struct ggml__op_impl ggml__op_pool_2d = {
    .kernel = pool_kernel,
    .supports = pool_supports,
};

/* ---------------------------------------------------------------- padding */

static bool same_float_type_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    return src != NULL && float_type(dst->type) && src->type == dst->type;
}

/* Source index of destination index i padded by lp before an extent n; -1 for a zero. */
static int64_t pad_source_index(int64_t i, int64_t lp, int64_t n, bool circular)
{
    const int64_t j = i - lp;
    if (circular)
        return ((j % n) + n) % n;
    return j >= 0 && j < n ? j : -1;
}

static void pad_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int32_t *p = dst->op_params;
    const bool circular = p[8] != 0;
    const bool fast = !params->use_ref && src->type == GGML_TYPE_F32 && src->nb[0] == sizeof(float) &&
                      dst->nb[0] == sizeof(float);
    int64_t first, last;
    my_rows(params, dst, &first, &last);
    for (int64_t row = first; row < last; row++) {
        int64_t i1, i2, i3;
        row_indices(dst, row, &i1, &i2, &i3);
        char *out = (char *) dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3];
        const int64_t j1 = pad_source_index(i1, p[2], src->ne[1], circular);
        const int64_t j2 = pad_source_index(i2, p[4], src->ne[2], circular);
        const int64_t j3 = pad_source_index(i3, p[6], src->ne[3], circular);
        const bool zero_row = j1 < 0 || j2 < 0 || j3 < 0;
        if (fast) {
            float *o = (float *) out;
            if (zero_row) {
                memset(o, 0, (size_t) dst->ne[0] * sizeof(float));
                continue;
            }
            const float *in = (const float *) ggml__elem_ptr(src, 0, j1, j2, j3);
            const int64_t lp = p[0], n = src->ne[0];
            for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
                const int64_t j0 = pad_source_index(i0, lp, n, circular);
                o[i0] = j0 < 0 ? 0.0f : in[j0];
            }
            continue;
        }
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            const int64_t j0 = pad_source_index(i0, p[0], src->ne[0], circular);
            const float v =
                zero_row || j0 < 0 ? 0.0f : ggml__load_float(src->type, ggml__elem_ptr(src, j0, j1, j2, j3));
            ggml__store_float(dst->type, out + i0 * dst->nb[0], v);
        }
    }
}

/* What ggml_pad_ext makes: paddings >= 0, dst's extents the padded
   source's, and a circular pad wraps around a source with elements. */
static bool pad_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int32_t *p = dst->op_params;
    if (!same_float_type_supports(dst))
        return false;
    for (int d = 0; d < 4; d++) {
        int64_t ne;
        if (p[2 * d] < 0 || p[2 * d + 1] < 0 ||
            __builtin_add_overflow(src->ne[d], (int64_t) p[2 * d] + p[2 * d + 1], &ne) || ne != dst->ne[d] ||
            (p[8] != 0 && src->ne[d] == 0 && ne > 0))
            return false;
    }
    return true;
}

const struct ggml__op_impl ggml__op_pad = {
    .kernel = pad_kernel,
    .supports = pad_supports,
};

static bool pad_reflect_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    return src != NULL && src->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 &&
           src->nb[0] == sizeof(float) && dst->nb[0] == sizeof(float) &&
           dst->op_params[0] >= 0 && dst->op_params[1] >= 0 && dst->op_params[0] < src->ne[0] &&
           dst->op_params[1] < src->ne[0] && dst->ne[0] == src->ne[0] + dst->op_params[0] + dst->op_params[1] &&
           dst->ne[1] == src->ne[1] && dst->ne[2] == src->ne[2] && dst->ne[3] == src->ne[3];
}

/* Source index of destination index i mirrored around both ends of [0, n), lp before. */
static int64_t reflect_index(int64_t i, int64_t lp, int64_t n)
{
    const int64_t j = i - lp;
    if (j < 0)
        return -j;
    if (j >= n)
        return 2 * (n - 1) - j;
    return j;
}

static void pad_reflect_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int64_t lp = dst->op_params[0], n = src->ne[0];
    int64_t first, last;
    my_rows(params, dst, &first, &last);
    for (int64_t row = first; row < last; row++) {
        int64_t i1, i2, i3;
        row_indices(dst, row, &i1, &i2, &i3);
        float *out = (float *) ((char *) dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3]);
        const float *in = (const float *) ggml__elem_ptr(src, 0, i1, i2, i3);
        if (params->use_ref) {
            for (int64_t i0 = 0; i0 < dst->ne[0]; i0++)
                out[i0] = in[reflect_index(i0, lp, n)];
        } else {
            for (int64_t i0 = 0; i0 < lp; i0++)
                out[i0] = in[lp - i0];
            memmove(out + lp, in, (size_t) n * sizeof(float));
            for (int64_t i0 = lp + n; i0 < dst->ne[0]; i0++)
                out[i0] = in[2 * (n - 1) - (i0 - lp)];
        }
    }
}

const struct ggml__op_impl ggml__op_pad_reflect_1d = {
    .kernel = pad_reflect_kernel,
    .supports = pad_reflect_supports,
};

/* ------------------------------------------------------------------- roll */

static void roll_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int32_t *shift = dst->op_params;
    const bool fast = !params->use_ref && src->type == GGML_TYPE_F32 && src->nb[0] == sizeof(float) &&
                      dst->nb[0] == sizeof(float);
    int64_t first, last;
    my_rows(params, dst, &first, &last);
    for (int64_t row = first; row < last; row++) {
        int64_t i1, i2, i3;
        row_indices(dst, row, &i1, &i2, &i3);
        char *out = (char *) dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3];
        /* element i of dst comes from element i - shift (cyclically) of src */
        const int64_t j1 = pad_source_index(i1, shift[1], src->ne[1], true);
        const int64_t j2 = pad_source_index(i2, shift[2], src->ne[2], true);
        const int64_t j3 = pad_source_index(i3, shift[3], src->ne[3], true);
        const int64_t n = src->ne[0];
        const int64_t s = ((shift[0] % n) + n) % n;
        if (fast) {
            const float *in = (const float *) ggml__elem_ptr(src, 0, j1, j2, j3);
            float *o = (float *) out;
            memmove(o + s, in, (size_t) (n - s) * sizeof(float));
            memmove(o, in + (n - s), (size_t) s * sizeof(float));
            continue;
        }
        for (int64_t i0 = 0; i0 < n; i0++) {
            const int64_t j0 = pad_source_index(i0, s, n, true);
            ggml__store_float(dst->type, out + i0 * dst->nb[0],
                              ggml__load_float(src->type, ggml__elem_ptr(src, j0, j1, j2, j3)));
        }
    }
}

/* What ggml_roll makes: dst shaped as its source, which has contiguous
   rows, and every shift smaller in magnitude than its extent. */
static bool roll_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    if (!same_float_type_supports(dst) || !ggml__same_shape(src, dst) ||
        src->nb[0] != ggml_type_size(src->type))
        return false;
    for (int d = 0; d < 4; d++) {
        const int64_t shift = dst->op_params[d];
        if ((shift < 0 ? -shift : shift) >= src->ne[d])
            return false;
    }
    return true;
}

const struct ggml__op_impl ggml__op_roll = {
    .kernel = roll_kernel,
    .supports = roll_supports,
};

/* ---------------------------------------------------------------- upscale */

static bool upscale_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const uint32_t mode = (uint32_t) dst->op_params[0];
    const uint32_t base = mode & 0xFF;
    return src != NULL && float_type(dst->type) && src->type == dst->type && !ggml_is_empty(src) &&
           (base == GGML_SCALE_MODE_NEAREST || base == GGML_SCALE_MODE_BILINEAR ||
            base == GGML_SCALE_MODE_BICUBIC) &&
           (mode & ~(0xFFu | GGML_SCALE_FLAG_ALIGN_CORNERS | GGML_SCALE_FLAG_ANTIALIAS)) == 0 &&
           (!(mode & GGML_SCALE_FLAG_ANTIALIAS) || base == GGML_SCALE_MODE_BILINEAR);
}

static inline float load_src(const struct ggml_tensor *src, bool f32, int64_t i0, int64_t i1, int64_t i2,
                             int64_t i3)
{
    const char *p = ggml__elem_ptr(src, i0, i1, i2, i3);
    return f32 ? *(const float *) p : ggml__load_float(src->type, p);
}

/* i clamped to [0, n); n >= 1 (upscale_supports refuses an empty source). */
static int64_t clamp_index(int64_t i, int64_t n)
{
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

/* The source index nearest-neighbour sampling takes for dst index i. */
static int64_t nearest_index(int64_t i, float sf, int64_t n)
{
    return clamp_index(ggml__float_to_int((float) i / sf, INT64_MIN, INT64_MAX), n);
}

/* Keys' cubic convolution weights (a = -0.75) for the 4 samples around a point at fraction t. */
static void cubic_weights(float t, float w[4])
{
    const float a = -0.75f;
    const float far0 = t + 1.0f, near0 = t, near1 = 1.0f - t, far1 = 2.0f - t;
    w[0] = ((a * far0 - 5.0f * a) * far0 + 8.0f * a) * far0 - 4.0f * a;
    w[1] = ((a + 2.0f) * near0 - (a + 3.0f)) * near0 * near0 + 1.0f;
    w[2] = ((a + 2.0f) * near1 - (a + 3.0f)) * near1 * near1 + 1.0f;
    w[3] = ((a * far1 - 5.0f * a) * far1 + 8.0f * a) * far1 - 4.0f * a;
}

/*
 * Antialiased bilinear sampling along one axis: a triangle filter as wide
 * as one destination sample covers when shrinking (support max(1, 1/sf)
 * source samples each side).  Destination index i is centred at source
 * position c = (i + offset) / sf, and source sample s weighs
 * max(0, 1 - |s + offset - c| / support), for s in
 * [max(0, floor(c - support + offset)), min(n, floor(c + support + offset))).
 */
struct antialias_axis {
    int64_t lo, hi;          /* the source samples that may weigh */
    float centre, inv_support;
};

static struct antialias_axis antialias_axis(int64_t i, float sf, float offset, int64_t n)
{
    const float support = sf < 1.0f ? 1.0f / sf : 1.0f;
    const float c = ((float) i + offset) / sf;
    const int64_t lo = ggml__float_to_int(floorf(c - support + offset), INT64_MIN, INT64_MAX);
    const int64_t hi = ggml__float_to_int(floorf(c + support + offset), INT64_MIN, INT64_MAX);
    return (struct antialias_axis) { lo < 0 ? 0 : lo, hi > n ? n : hi, c, 1.0f / support };
}

static float antialias_weight(const struct antialias_axis *a, int64_t s, float offset)
{
    const float t = fabsf(((float) s + offset - a->centre) * a->inv_support);
    return t < 1.0f ? 1.0f - t : 0.0f;
}

/* The normalised triangle-filtered value at dst (ax, ay) of plane (j2, j3); 0 when no sample weighs. */
static float antialias_sample(const struct ggml_tensor *src, bool f32, const struct antialias_axis *ax,
                              const struct antialias_axis *ay, float offset, int64_t j2, int64_t j3)
{
    float sum = 0.0f, weight_x = 0.0f, weight_y = 0.0f;
    for (int64_t sx = ax->lo; sx < ax->hi; sx++)
        weight_x += antialias_weight(ax, sx, offset);
    for (int64_t sy = ay->lo; sy < ay->hi; sy++) {
        const float wy = antialias_weight(ay, sy, offset);
        if (wy <= 0.0f)
            continue;
        float line = 0.0f;
        for (int64_t sx = ax->lo; sx < ax->hi; sx++)
            line += antialias_weight(ax, sx, offset) * load_src(src, f32, sx, sy, j2, j3);
        sum += wy * line;
        weight_y += wy;
    }
    const float total = weight_x * weight_y;
    return total > 0.0f ? sum / total : 0.0f;
}

/*
 * Scale factors are dst extent / src extent in F32.  NEAREST takes source
 * index (int) (i / sf) in every dimension.  BILINEAR and BICUBIC map dst
 * index i of dimensions 0 and 1 to source position (i + 0.5) / sf - 0.5
 * (with ALIGN_CORNERS: i / sf, sf = (dst - 1) / (src - 1)), clamping
 * sample indices to the source; dimensions 2 and 3 use NEAREST.
 * BILINEAR with ANTIALIAS filters as antialias_axis says.
 */
static void upscale_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const uint32_t mode = (uint32_t) dst->op_params[0];
    const uint32_t base = mode & 0xFF;
    const bool f32 = !params->use_ref && src->type == GGML_TYPE_F32;
    float sf[4];
    for (int d = 0; d < 4; d++)
        sf[d] = (float) dst->ne[d] / (float) src->ne[d];
    float offset = 0.5f;
    if (mode & GGML_SCALE_FLAG_ALIGN_CORNERS) {
        offset = 0.0f;
        for (int d = 0; d < 2; d++)
            if (dst->ne[d] > 1 && src->ne[d] > 1)
                sf[d] = (float) (dst->ne[d] - 1) / (float) (src->ne[d] - 1);
    }
    int64_t first, last;
    my_rows(params, dst, &first, &last);
    for (int64_t row = first; row < last; row++) {
        int64_t i1, i2, i3;
        row_indices(dst, row, &i1, &i2, &i3);
        char *out = (char *) dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3];
        /* nearest indices clamped against F32 rounding at huge extents */
        const int64_t j2 = nearest_index(i2, sf[2], src->ne[2]);
        const int64_t j3 = nearest_index(i3, sf[3], src->ne[3]);
        if (base == GGML_SCALE_MODE_NEAREST) {
            const int64_t j1 = nearest_index(i1, sf[1], src->ne[1]);
            for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
                const int64_t j0 = nearest_index(i0, sf[0], src->ne[0]);
                ggml__store_float(dst->type, out + i0 * dst->nb[0], load_src(src, f32, j0, j1, j2, j3));
            }
            continue;
        }
        if (mode & GGML_SCALE_FLAG_ANTIALIAS) {
            const struct antialias_axis ay = antialias_axis(i1, sf[1], offset, src->ne[1]);
            for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
                const struct antialias_axis ax = antialias_axis(i0, sf[0], offset, src->ne[0]);
                const float v = antialias_sample(src, f32, &ax, &ay, offset, j2, j3);
                ggml__store_float(dst->type, out + i0 * dst->nb[0], v);
            }
            continue;
        }
        const float y = ((float) i1 + offset) / sf[1] - offset;
        const float y_floor = floorf(y);
        const int64_t y0 = ggml__float_to_int(y_floor, INT64_MIN, INT64_MAX);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            const float x = ((float) i0 + offset) / sf[0] - offset;
            const float x_floor = floorf(x);
            const int64_t x0 = ggml__float_to_int(x_floor, INT64_MIN, INT64_MAX);
            float v;
            if (base == GGML_SCALE_MODE_BILINEAR) {
                float dx = x - x_floor, dy = y - y_floor;
                dx = dx < 0.0f ? 0.0f : dx > 1.0f ? 1.0f : dx;
                dy = dy < 0.0f ? 0.0f : dy > 1.0f ? 1.0f : dy;
                const int64_t xa = clamp_index(x0, src->ne[0]), xb = clamp_index(x0 + 1, src->ne[0]);
                const int64_t ya = clamp_index(y0, src->ne[1]), yb = clamp_index(y0 + 1, src->ne[1]);
                v = load_src(src, f32, xa, ya, j2, j3) * (1.0f - dx) * (1.0f - dy) +
                    load_src(src, f32, xb, ya, j2, j3) * dx * (1.0f - dy) +
                    load_src(src, f32, xa, yb, j2, j3) * (1.0f - dx) * dy +
                    load_src(src, f32, xb, yb, j2, j3) * dx * dy;
            } else {
                float wx[4], wy[4];
                cubic_weights(x - x_floor, wx);
                cubic_weights(y - y_floor, wy);
                v = 0.0f;
                for (int r = 0; r < 4; r++) {
                    const int64_t yr = clamp_index(y0 - 1 + r, src->ne[1]);
                    float line = 0.0f;
                    for (int c = 0; c < 4; c++)
                        line += wx[c] * load_src(src, f32, clamp_index(x0 - 1 + c, src->ne[0]), yr, j2, j3);
                    v += wy[r] * line;
                }
            }
            ggml__store_float(dst->type, out + i0 * dst->nb[0], v);
        }
    }
}

const struct ggml__op_impl ggml__op_upscale = {
    .kernel = upscale_kernel,
    .supports = upscale_supports,
};

/* ------------------------------------------------------ windows, rel pos */

/* F32 in and out; the kernels write dst's rows as float arrays */
static bool win_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    return src != NULL && src->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 && dst->nb[0] == sizeof(float);
}

/* The number of windows of w along an extent of n. */
static int64_t windows_along(int64_t n, int64_t w)
{
    return n / w + (n % w != 0);
}

/* What ggml_win_part makes: op_params { npx, npy, w }, w >= 1, a plane
   source [C, W, H, 1] and dst [C, w, w, npx*npy] with npx, npy its
   windows. */
static bool win_part_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int64_t npx = dst->op_params[0], npy = dst->op_params[1], w = dst->op_params[2];
    return win_supports(dst) && w >= 1 && src->ne[3] == 1 && npx == windows_along(src->ne[1], w) &&
           npy == windows_along(src->ne[2], w) && dst->ne[0] == src->ne[0] && dst->ne[1] == w && dst->ne[2] == w &&
           dst->ne[3] == npx * npy;
}

/* What ggml_win_unpart makes: op_params { w }, w >= 1, dst [C, w0, h0, 1]
   with w0, h0 >= 1 and a source of its windows [C, w, w, npx*npy]. */
static bool win_unpart_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int64_t w = dst->op_params[0];
    return win_supports(dst) && w >= 1 && dst->ne[1] >= 1 && dst->ne[2] >= 1 && dst->ne[3] == 1 &&
           src->ne[0] == dst->ne[0] && src->ne[1] == w && src->ne[2] == w &&
           src->ne[3] == windows_along(dst->ne[1], w) * windows_along(dst->ne[2], w);
}

/* dst row (i1, i2, window i3) is row (px*w + i1, py*w + i2) of src, or zeros past its plane. */
static void win_part_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int64_t npx = dst->op_params[0], w = dst->op_params[2];
    int64_t first, last;
    my_rows(params, dst, &first, &last);
    for (int64_t row = first; row < last; row++) {
        int64_t i1, i2, i3;
        row_indices(dst, row, &i1, &i2, &i3);
        float *out = (float *) ((char *) dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3]);
        const int64_t j1 = (i3 % npx) * w + i1, j2 = (i3 / npx) * w + i2;
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++)
            out[i0] = j1 < src->ne[1] && j2 < src->ne[2] ? *(const float *) ggml__elem_ptr(src, i0, j1, j2, 0) : 0.0f;
    }
}

const struct ggml__op_impl ggml__op_win_part = {
    .kernel = win_part_kernel,
    .supports = win_part_supports,
};

/* dst row (i1, i2) is row (i1 % w, i2 % w) of window (i2 / w) * npx + i1 / w of src. */
static void win_unpart_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int64_t w = dst->op_params[0], npx = (dst->ne[1] + w - 1) / w;
    int64_t first, last;
    my_rows(params, dst, &first, &last);
    for (int64_t row = first; row < last; row++) {
        int64_t i1, i2, i3;
        row_indices(dst, row, &i1, &i2, &i3);
        float *out = (float *) ((char *) dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3]);
        const int64_t window = (i2 / w) * npx + i1 / w;
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++)
            out[i0] = *(const float *) ggml__elem_ptr(src, i0, i1 % w, i2 % w, window);
    }
}

const struct ggml__op_impl ggml__op_win_unpart = {
    .kernel = win_unpart_kernel,
    .supports = win_unpart_supports,
};

static bool get_rel_pos_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    const int64_t kh = dst->ne[1], qh = dst->ne[2];
    return src != NULL && float_type(src->type) && dst->type == GGML_TYPE_F16 && qh >= 1 && kh == qh &&
           src->ne[1] == 2 * qh - 1 && dst->ne[0] == src->ne[0] && dst->ne[3] == 1;
}

/* dst row (k, q) is row (kh - 1 - k) + q of src, converted to F16. */
static void get_rel_pos_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *src = dst->src[0];
    int64_t first, last;
    my_rows(params, dst, &first, &last);
    for (int64_t row = first; row < last; row++) {
        int64_t i1, i2, i3;
        row_indices(dst, row, &i1, &i2, &i3);
        char *out = (char *) dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3];
        const int64_t j1 = dst->ne[1] - 1 - i1 + i2;
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++)
            ggml__store_float(GGML_TYPE_F16, out + i0 * dst->nb[0],
                              ggml__load_float(src->type, ggml__elem_ptr(src, i0, j1, 0, 0)));
    }
}

const struct ggml__op_impl ggml__op_get_rel_pos = {
    .kernel = get_rel_pos_kernel,
    .supports = get_rel_pos_supports,
};

static bool add_rel_pos_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *pw = dst->src[1], *ph = dst->src[2];
    return a != NULL && pw != NULL && ph != NULL && dst->type == GGML_TYPE_F32 && a->type == GGML_TYPE_F32 &&
           pw->type == GGML_TYPE_F32 && ph->type == GGML_TYPE_F32 && ggml_is_contiguous(a) &&
           ggml_is_contiguous(pw) && ggml_is_contiguous(ph) && ggml_is_contiguous(dst) &&
           ggml__add_rel_pos_fits(a, pw, ph) && ggml__same_shape(dst, a);
}

/*
 * Row (q, n) of dst (W*W keys) is row (q, n) of a plus ph[kr] + pw[kc] at
 * key kr*W + kc, pw and ph read at (q, n).  In place, a and dst share data:
 * each row is read before it is written, by one thread.
 */
static void add_rel_pos_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *pw = dst->src[1], *ph = dst->src[2];
    const int64_t width = pw->ne[0];
    int64_t first, last;
    my_rows(params, dst, &first, &last);
    for (int64_t row = first; row < last; row++) {
        const float *in = (const float *) a->data + row * a->ne[0];
        float *out = (float *) dst->data + row * dst->ne[0];
        const float *w_terms = (const float *) pw->data + row * width;
        const float *h_terms = (const float *) ph->data + row * width;
        for (int64_t kr = 0; kr < width; kr++)
            for (int64_t kc = 0; kc < width; kc++)
                out[kr * width + kc] = in[kr * width + kc] + h_terms[kr] + w_terms[kc];
    }
}

const struct ggml__op_impl ggml__op_add_rel_pos = {
    .kernel = add_rel_pos_kernel,
    .supports = add_rel_pos_supports,
};
