/*
 * ops/rope.c - ROPE: rotary position embedding, with YaRN scaling,
 * frequency factors and the multi-section (MROPE, IMROPE, VISION) modes.
 *
 * src[0] a holds rows of head_dim values, one per (head, token, sequence);
 * src[1] the I32 positions, indexed by token (ne[2]); src[2] optional F32
 * frequency factors, one per rotated pair.  dst has a's type and shape.
 * Pair i of a row is rotated by the angle theta_i (below), scaled by the
 * magnitude mscale:
 *     y0 = mscale (x0 cos theta_i - x1 sin theta_i)
 *     y1 = mscale (x0 sin theta_i + x1 cos theta_i)
 * where the pair (x0, x1) is (x[2i], x[2i+1]) in NORMAL mode and
 * (x[i], x[i + n_dims/2]) in NEOX, MROPE and IMROPE modes, for i < n_dims/2;
 * VISION mode rotates (x[i], x[i + n_dims]) for i < n_dims = head_dim/2.
 * Indices count from n_offs (op_params[15], ggml_rope_set_offset; 0 in
 * VISION mode): values before it and past the rotated ones are copied
 * unchanged.
 *
 * The angle: theta_extrap = p base^(-2e/n_dims) / ff_i, where p is the
 * token's position, e the pair's exponent (i, except that VISION restarts
 * it at each section) and ff_i the frequency factor (1 without src[2]).
 * theta_interp = freq_scale theta_extrap.  Without YaRN (ext_factor == 0)
 * theta = theta_interp and mscale = attn_factor; with it, theta mixes the
 * two by ramp(i) ext_factor, where the ramp falls from 1 to 0 across the
 * correction band of ggml_rope_yarn_corr_dims, and mscale = attn_factor
 * (1 + 0.1 ln(1 / freq_scale)).  In the multi-section modes each pair takes
 * p from one of the token's four position streams (b holds them one after
 * another, ne[2] values each), chosen by the pair's section.
 *
 * Types: a and dst F32 or F16, any strides (views of a KV cache included).
 * The angles and their sines are computed in double precision, once per
 * token and thread; the rotation is done in F32.  Threads split the rows.
 * The reference kernel converts each row to F32 scratch and recomputes the
 * angles for every row; the fast kernel works on rows whose values are
 * contiguous and reuses the angles of a token across its heads.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "ggml-impl.h"
#include "cpu-private.h"

/* The op_params of a ROPE node (layout: lib/ops-rope.c). */
struct rope_params {
    int n_dims, mode, n_ctx_orig;
    int n_offs;   /* the rotated values start here (ggml_rope_set_offset) */
    float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
    int sections[GGML_MROPE_SECTIONS];
};

static struct rope_params rope_read_params(const struct ggml_tensor *dst)
{
    struct rope_params p;
    p.n_dims = ggml__get_op_params_i32(dst, 1);
    p.mode = ggml__get_op_params_i32(dst, 2);
    p.n_ctx_orig = ggml__get_op_params_i32(dst, 4);
    p.freq_base = ggml__get_op_params_f32(dst, 5);
    p.freq_scale = ggml__get_op_params_f32(dst, 6);
    p.ext_factor = ggml__get_op_params_f32(dst, 7);
    p.attn_factor = ggml__get_op_params_f32(dst, 8);
    p.beta_fast = ggml__get_op_params_f32(dst, 9);
    p.beta_slow = ggml__get_op_params_f32(dst, 10);
    for (int i = 0; i < GGML_MROPE_SECTIONS; i++)
        p.sections[i] = ggml__get_op_params_i32(dst, 11 + i);
    p.n_offs = ggml__get_op_params_i32(dst, 15);
    return p;
}

static bool rope_is_multi(int mode)
{
    return (mode & GGML_ROPE_TYPE_MROPE) != 0;
}

/* Number of rotated pairs of a row. */
static int64_t rope_n_pairs(const struct rope_params *p)
{
    return p->mode == GGML_ROPE_TYPE_VISION ? p->n_dims : p->n_dims / 2;
}

static bool rope_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *pos = dst->src[1], *ff = dst->src[2];
    if (a == NULL || pos == NULL)
        return false;
    if ((a->type != GGML_TYPE_F32 && a->type != GGML_TYPE_F16) || dst->type != a->type ||
        !ggml_are_same_shape(a, dst))
        return false;
    const struct rope_params p = rope_read_params(dst);
    if (p.mode != GGML_ROPE_TYPE_NORMAL && p.mode != GGML_ROPE_TYPE_NEOX && p.mode != GGML_ROPE_TYPE_MROPE &&
        p.mode != GGML_ROPE_TYPE_VISION && p.mode != GGML_ROPE_TYPE_IMROPE)
        return false;
    if (p.n_dims < 0 || p.n_dims % 2 != 0 || p.n_dims > a->ne[0])
        return false;
    if (p.mode == GGML_ROPE_TYPE_VISION && 2 * (int64_t) p.n_dims != a->ne[0])
        return false;
    if (p.n_offs < 0 || p.n_offs % 2 != 0 || (int64_t) p.n_offs + p.n_dims > a->ne[0] ||
        (p.mode == GGML_ROPE_TYPE_VISION && p.n_offs != 0))
        return false;
    const bool multi = rope_is_multi(p.mode);
    if (pos->type != GGML_TYPE_I32 || !ggml_is_vector(pos) || pos->ne[0] != (multi ? 4 : 1) * a->ne[2])
        return false;
    if (multi) {
        int64_t total = 0;
        for (int i = 0; i < GGML_MROPE_SECTIONS; i++) {
            if (p.sections[i] < 0)
                return false;
            total += p.sections[i];
        }
        if (p.sections[0] + (int64_t) p.sections[1] + p.sections[2] == 0 || total > a->ne[0])
            return false;
    }
    if (ff != NULL && (ff->type != GGML_TYPE_F32 || ff->ne[0] < rope_n_pairs(&p)))
        return false;
    return true;
}

/* Floats of scratch per thread: the angle table, a row, and padding. */
static int64_t rope_scratch_floats(const struct ggml_tensor *dst)
{
    return 2 * dst->ne[0] + 32;
}

static size_t rope_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    return (size_t) n_tasks * (size_t) rope_scratch_floats(dst) * sizeof(float);
}

/* What the angle table of one token depends on besides its positions. */
struct rope_setup {
    struct rope_params p;
    int64_t n_pairs;
    double log_base_step;       /* ln(base^(-2/n_dims)): exponent e gives base^(-2e/n_dims) */
    double corr_lo, corr_hi;    /* the YaRN correction band, in pairs */
    double mscale;              /* magnitude of every rotation */
    bool back;                  /* ROPE_BACK: rotate by the opposite angles (the transpose) */
    const struct ggml_tensor *pos, *ff;
};

static struct rope_setup rope_prepare(const struct ggml_tensor *dst)
{
    struct rope_setup s;
    s.p = rope_read_params(dst);
    s.n_pairs = rope_n_pairs(&s.p);
    s.log_base_step = s.p.n_dims > 0 ? -2.0 * log((double) s.p.freq_base) / s.p.n_dims : 0.0;
    float dims[2];
    ggml_rope_yarn_corr_dims(s.p.n_dims, s.p.n_ctx_orig, s.p.freq_base, s.p.beta_fast, s.p.beta_slow, dims);
    s.corr_lo = dims[0];
    s.corr_hi = dims[1];
    s.mscale = s.p.attn_factor;
    if (s.p.ext_factor != 0.0f)
        s.mscale *= 1.0 + 0.1 * log(1.0 / s.p.freq_scale);
    s.pos = dst->src[1];
    s.ff = dst->src[2];
    s.back = dst->op == GGML_OP_ROPE_BACK;
    return s;
}

/* Weight of the extrapolated angle for pair i: 1 below the band, 0 above. */
static double yarn_ramp(double lo, double hi, int64_t i)
{
    const double width = hi - lo;
    const double y = ((double) i - lo) / (0.001 > width ? 0.001 : width);
    const double clamped = y < 0.0 ? 0.0 : y;    /* as comparisons: a NaN stays NaN */
    return 1.0 - (1.0 < clamped ? 1.0 : clamped);
}

static int32_t rope_position(const struct ggml_tensor *pos, int64_t i)
{
    return *(const int32_t *) ((const char *) pos->data + i * pos->nb[0]);
}

/*
 * For pair i of a multi-section mode: which of the four position streams
 * drives it (0 time, 1 height, 2 width, 3 extra) and, in VISION mode, where
 * the exponents restart.  exps[] carries the running exponent of each
 * stream from one pair to the next.
 */
static int mrope_stream(const struct rope_params *p, int64_t i, int64_t exps[4])
{
    const int *sec = p->sections;
    const int64_t n_sect = (int64_t) sec[0] + sec[1] + sec[2] + sec[3];
    const int64_t sector = i % n_sect;
    const int64_t end_h = (int64_t) sec[0] + sec[1], end_w = end_h + sec[2];

    if (p->mode == GGML_ROPE_TYPE_VISION) {
        /* each section counts its exponent from its own start */
        if (sector == 0)
            exps[0] = 0;
        else if (sector == sec[0])
            exps[1] = 0;
        else if (sector == end_h)
            exps[2] = 0;
        else if (sector == end_w)
            exps[3] = 0;
    }
    if (p->mode == GGML_ROPE_TYPE_IMROPE) {
        /* interleaved: t, h, w in turn while each has pairs left */
        if (sector % 3 == 1 && sector < 3 * (int64_t) sec[1])
            return 1;
        if (sector % 3 == 2 && sector < 3 * (int64_t) sec[2])
            return 2;
        if (sector % 3 == 0 && sector < 3 * (int64_t) sec[0])
            return 0;
        return 3;
    }
    if (sector < sec[0])
        return 0;
    if (sector < end_h)
        return 1;
    if (sector < end_w)
        return 2;
    return 3;
}

/* Fills table[2i], table[2i+1] with mscale cos, mscale sin of pair i's angle for token t. */
static void rope_angles(const struct rope_setup *s, int64_t t, int64_t n_tokens, float *table)
{
    const bool multi = rope_is_multi(s->p.mode);
    double positions[4] = { 0, 0, 0, 0 };
    for (int k = 0; k < (multi ? 4 : 1); k++)
        positions[k] = rope_position(s->pos, t + k * n_tokens);
    int64_t exps[4] = { 0, 0, 0, 0 };

    for (int64_t i = 0; i < s->n_pairs; i++) {
        double p = positions[0];
        int64_t e = i;
        if (multi) {
            const int stream = mrope_stream(&s->p, i, exps);
            p = positions[stream];
            e = exps[stream];
            for (int k = 0; k < 4; k++)
                exps[k]++;
        }
        const double ff = s->ff ? *(const float *) ((const char *) s->ff->data + i * s->ff->nb[0]) : 1.0;
        const double theta_extrap = p * exp(s->log_base_step * (double) e) / ff;
        const double theta_interp = s->p.freq_scale * theta_extrap;
        double theta = theta_interp;
        if (s->p.ext_factor != 0.0f) {
            const double mix = yarn_ramp(s->corr_lo, s->corr_hi, i) * s->p.ext_factor;
            theta = theta_interp * (1.0 - mix) + theta_extrap * mix;
        }
        table[2 * i] = (float) (cos(theta) * s->mscale);
        table[2 * i + 1] = (float) ((s->back ? -sin(theta) : sin(theta)) * s->mscale);
    }
}

/*
 * Rotates the pairs of one row from x into y (y may be x).  The pair of
 * index i is (x[i * step], x[i * step + gap]).
 */
static void rotate_row(int64_t n_pairs, int64_t step, int64_t gap, const float *table, const float *x, float *y)
{
    for (int64_t i = 0; i < n_pairs; i++) {
        const float c = table[2 * i], s = table[2 * i + 1];
        const float x0 = x[i * step], x1 = x[i * step + gap];
        y[i * step] = x0 * c - x1 * s;
        y[i * step + gap] = x0 * s + x1 * c;
    }
}

/* The pair layout of a mode: NORMAL pairs neighbours, the others halves. */
static void rope_layout(const struct rope_params *p, int64_t *step, int64_t *gap)
{
    if (p->mode == GGML_ROPE_TYPE_NORMAL) {
        *step = 2;
        *gap = 1;
    } else {
        *step = 1;
        *gap = p->mode == GGML_ROPE_TYPE_VISION ? p->n_dims : p->n_dims / 2;
    }
}

static void rope_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0];
    const struct rope_setup s = rope_prepare(dst);
    const int64_t ne0 = dst->ne[0], ne1 = dst->ne[1], ne2 = dst->ne[2];
    const size_t esize = ggml_type_size(dst->type);
    const bool fast = !params->use_ref && a->nb[0] == esize && dst->nb[0] == esize;
    int64_t step, gap;
    rope_layout(&s.p, &step, &gap);
    const int64_t offs = s.p.n_offs;

    float *table = (float *) params->wdata + (size_t) params->ith * (size_t) rope_scratch_floats(dst);
    float *row = table + ne0 + 16;
    int64_t table_token = -1;

    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        const int64_t i1 = r % ne1, i2 = (r / ne1) % ne2, i3 = r / (ne1 * ne2);
        const char *src = (const char *) a->data + i1 * a->nb[1] + i2 * a->nb[2] + i3 * a->nb[3];
        char *out = (char *) dst->data + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3];

        if (!fast) {
            rope_angles(&s, i2, ne2, table);
            ggml__load_row_float(a->type, src, a->nb[0], ne0, row);
            rotate_row(s.n_pairs, step, gap, table, row + offs, row + offs);
            ggml__store_row_float(dst->type, out, dst->nb[0], ne0, row);
            continue;
        }
        if (i2 != table_token) {
            rope_angles(&s, i2, ne2, table);
            table_token = i2;
        }
        if (dst->type == GGML_TYPE_F32) {
            rotate_row(s.n_pairs, step, gap, table, (const float *) src + offs, (float *) out + offs);
            /* the values before and after the rotated ones, unchanged */
            const int64_t end = offs + 2 * s.n_pairs;
            if (out != src && offs > 0)
                memmove(out, src, (size_t) offs * esize);
            if (out != src && end < ne0)
                memmove(out + end * esize, src + end * esize, (size_t) (ne0 - end) * esize);
        } else {
            ggml_fp16_to_fp32_row((const ggml_fp16_t *) src, row, ne0);
            rotate_row(s.n_pairs, step, gap, table, row + offs, row + offs);
            ggml_fp32_to_fp16_row(row, (ggml_fp16_t *) out, ne0);
        }
    }
}

const struct ggml__op_impl ggml__op_rope = {
    .kernel = rope_kernel,
    .supports = rope_supports,
    .n_tasks = NULL,
    .work_size = rope_work_size,
};
