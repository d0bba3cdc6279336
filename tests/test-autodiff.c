/*
 * test-autodiff.c - ggml_build_backward_expand: the gradient of every op
 * it differentiates against central finite differences, on odd shapes,
 * broadcast binary ops and non-contiguous (permuted, transposed, viewed)
 * sources; accumulation across passes with ggml_graph_reset; and the
 * errors (an op without a gradient, a graph without a loss, ...), which
 * log one message and leave the graph as it was.
 *
 * Each case builds f(params), the loss L = sum(f * w) with fixed random
 * weights w (so that every element of f gets its own gradient), computes
 * the backward graph, and compares each parameter's gradient with
 * (L(p + h) - L(p - h)) / 2h evaluated element by element with the
 * library's F32 forward graph, the difference taken in double.
 */
#include <math.h>
#include <stdio.h>

#include "tap.h"
#include "op-test.h"

/*
 * Finite-difference step and tolerance.  L is a sum of at most ~200 F32
 * terms of magnitude <= ~4, so each F32 evaluation of L carries a rounding
 * error of at most ~200 * 4 * 6e-8 = 5e-5; divided by 2h = 0.02 that is
 * 2.4e-3.  The truncation error h^2/6 * L''' is ~2e-5 for the smooth ops
 * here.  A tolerance of 1e-2 + 1e-2 |g| passes both with a margin and
 * still catches a wrong sign, factor or element.
 */
#define FD_STEP 1e-2
#define FD_TOL_ABS 1e-2
#define FD_TOL_REL 1e-2

#define MAX_PARAMS 3

static struct ggml_context *new_ctx(void)
{
    struct ggml_init_params params = { 64u << 20, NULL, false };
    return ggml_init(params);
}

/* Range of values of a parameter: [lo, hi], or +-[lo, hi] when signed_range. */
struct range {
    double lo, hi;
    bool signed_range;
};

/* One gradient check. */
struct grad_case {
    const char *name;
    int n_params;
    int64_t ne[MAX_PARAMS][4];
    struct range range[MAX_PARAMS];
    /* f of the parameters (inputs that are not parameters are made here) */
    struct ggml_tensor *(*build)(struct ggml_context *ctx, struct ggml_tensor **p);
};

static uint64_t seed = 0x5eed0f7e57ad1ffULL;

static void fill_param(struct ggml_tensor *t, const struct range *r)
{
    const int64_t n = ggml_nelements(t);
    float *data = (float *) t->data;
    for (int64_t i = 0; i < n; i++) {
        double v = optest_uniform(&seed, r->lo, r->hi);
        if (r->signed_range && optest_uniform(&seed, 0.0, 1.0) < 0.5)
            v = -v;
        data[i] = (float) v;
    }
}

static double loss_value(struct ggml_context *ctx, struct ggml_cgraph *gf, struct ggml_tensor *loss)
{
    ggml_graph_compute_with_ctx(ctx, gf, 2);
    return ggml_get_f32_1d(loss, 0);
}

/* L = sum(f * w) with w random in [-1, 1], f's shape, contiguous. */
static struct ggml_tensor *weighted_loss(struct ggml_context *ctx, struct ggml_tensor *f)
{
    struct ggml_tensor *w = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, f->ne);
    optest_fill(w, &seed, -1.0, 1.0);
    struct ggml_tensor *loss = ggml_sum(ctx, ggml_mul(ctx, f, w));
    ggml_set_loss(loss);
    return loss;
}

static void check_case(const struct grad_case *c)
{
    struct ggml_context *ctx = new_ctx();
    struct ggml_tensor *p[MAX_PARAMS];
    for (int k = 0; k < c->n_params; k++) {
        p[k] = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, c->ne[k]);
        fill_param(p[k], &c->range[k]);
        ggml_set_param(p[k]);
        ggml_format_name(p[k], "p%d", k);
    }
    struct ggml_tensor *loss = weighted_loss(ctx, c->build(ctx, p));
    struct ggml_cgraph *gf = ggml_new_graph_custom(ctx, 1024, false);
    ggml_build_forward_expand(gf, loss);
    struct ggml_cgraph *gb = ggml_new_graph_custom(ctx, 1024, true);
    ggml_build_forward_expand(gb, loss);
    tap_log_errors();
    ggml_build_backward_expand(ctx, gb, NULL);
    if (!ok(tap_log_errors() == 0, "%s: backward graph built", c->name)) {
        tap_diag("%s", tap_last_log());
        ggml_free(ctx);
        return;
    }
    ggml_graph_reset(gb);
    is_int(ggml_graph_compute_with_ctx(ctx, gb, 2), GGML_STATUS_SUCCESS, "%s: backward graph computed", c->name);

    for (int k = 0; k < c->n_params; k++) {
        const struct ggml_tensor *grad = ggml_graph_get_grad(gb, p[k]);
        if (!ok(grad != NULL && ggml_are_same_shape(grad, p[k]), "%s: p%d has a gradient of its shape",
                c->name, k))
            continue;
        float *data = (float *) p[k]->data;
        double worst = 0.0;
        int64_t worst_i = -1;
        double worst_g = 0.0, worst_fd = 0.0;
        for (int64_t i = 0; i < ggml_nelements(p[k]); i++) {
            const float saved = data[i];
            data[i] = (float) (saved + FD_STEP);
            const double up = loss_value(ctx, gf, loss);
            data[i] = (float) (saved - FD_STEP);
            const double down = loss_value(ctx, gf, loss);
            data[i] = saved;
            const double fd = (up - down) / (2.0 * FD_STEP);
            int64_t i0 = i % grad->ne[0], r = i / grad->ne[0];
            int64_t i1 = r % grad->ne[1], i2 = r / grad->ne[1] % grad->ne[2],
                    i3 = r / grad->ne[1] / grad->ne[2];
            const double g = optest_get(grad, i0, i1, i2, i3);
            const double excess = fabs(g - fd) - (FD_TOL_ABS + FD_TOL_REL * fabs(fd));
            if (worst_i < 0 || excess > worst) {
                worst = excess;
                worst_i = i;
                worst_g = g;
                worst_fd = fd;
            }
        }
        if (!ok(worst <= 0.0, "%s: gradient of p%d matches finite differences", c->name, k))
            tap_diag("element %lld: gradient %.6g, finite differences %.6g", (long long) worst_i, worst_g,
                     worst_fd);
    }
    ggml_free(ctx);
}

/* ------------------------------------------------------------- the cases */

static struct ggml_tensor *f_add(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_add(ctx, p[0], p[1]); }
static struct ggml_tensor *f_sub(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_sub(ctx, p[0], p[1]); }
static struct ggml_tensor *f_mul(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_mul(ctx, p[0], p[1]); }
static struct ggml_tensor *f_div(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_div(ctx, p[0], p[1]); }
static struct ggml_tensor *f_dup(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_dup(ctx, p[0]); }

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static struct ggml_tensor *f_add1(struct ggml_context *ctx, struct ggml_tensor **p)
{
    return ggml_add1(ctx, p[0], p[1]);
}
#pragma GCC diagnostic pop

static struct ggml_tensor *f_acc(struct ggml_context *ctx, struct ggml_tensor **p)
{
    /* p1 [3, 2] added at row 1, column 2 of p0 [7, 5] */
    return ggml_acc(ctx, p[0], p[1], p[0]->nb[1], p[0]->nb[2], p[0]->nb[3], p[0]->nb[1] + 2 * sizeof(float));
}

static struct ggml_tensor *f_set(struct ggml_context *ctx, struct ggml_tensor **p)
{
    return ggml_set_2d(ctx, p[0], p[1], p[0]->nb[1], 2 * p[0]->nb[1] + 3 * sizeof(float));
}

static struct ggml_tensor *f_sqr(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_sqr(ctx, p[0]); }
static struct ggml_tensor *f_sqrt(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_sqrt(ctx, p[0]); }
static struct ggml_tensor *f_log(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_log(ctx, p[0]); }
static struct ggml_tensor *f_sin(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_sin(ctx, p[0]); }
static struct ggml_tensor *f_cos(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_cos(ctx, p[0]); }
static struct ggml_tensor *f_sum(struct ggml_context *ctx, struct ggml_tensor **p)
{
    /* the sum's gradient is a scalar spread over p0; sqr keeps it p0-dependent */
    return ggml_sqr(ctx, ggml_sum(ctx, p[0]));
}
static struct ggml_tensor *f_sum_rows(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_sum_rows(ctx, p[0]); }
static struct ggml_tensor *f_mean(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_mean(ctx, p[0]); }
static struct ggml_tensor *f_repeat(struct ggml_context *ctx, struct ggml_tensor **p)
{
    struct ggml_tensor *shape = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 10, 3, 4, 1);
    return ggml_repeat(ctx, p[0], shape);
}
static struct ggml_tensor *f_repeat_back(struct ggml_context *ctx, struct ggml_tensor **p)
{
    struct ggml_tensor *shape = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 1, 2, 1);
    return ggml_repeat_back(ctx, p[0], shape);
}
static struct ggml_tensor *f_rms_norm(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_rms_norm(ctx, p[0], 1e-5f); }
static struct ggml_tensor *f_mul_mat(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_mul_mat(ctx, p[0], p[1]); }
static struct ggml_tensor *f_mul_mat_t(struct ggml_context *ctx, struct ggml_tensor **p)
{
    /* a transposed (non-contiguous) second operand */
    return ggml_mul_mat(ctx, p[0], ggml_transpose(ctx, p[1]));
}
static struct ggml_tensor *f_scale(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_scale(ctx, p[0], -1.75f); }
static struct ggml_tensor *f_cpy(struct ggml_context *ctx, struct ggml_tensor **p)
{
    struct ggml_tensor *dst = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 15, 1);
    return ggml_cpy(ctx, p[0], dst);
}
static struct ggml_tensor *f_cpy_permuted(struct ggml_context *ctx, struct ggml_tensor **p)
{
    /* a permuted (non-contiguous) source copied into a contiguous destination */
    struct ggml_tensor *src = ggml_permute(ctx, p[0], 0, 2, 1, 3);
    return ggml_cpy(ctx, src, ggml_new_tensor(ctx, GGML_TYPE_F32, 4, src->ne));
}
static struct ggml_tensor *f_cont(struct ggml_context *ctx, struct ggml_tensor **p)
{
    return ggml_cont(ctx, ggml_permute(ctx, p[0], 2, 0, 1, 3));
}
static struct ggml_tensor *f_reshape(struct ggml_context *ctx, struct ggml_tensor **p)
{
    return ggml_sqr(ctx, ggml_reshape_2d(ctx, p[0], 3, 10));
}
static struct ggml_tensor *f_view(struct ggml_context *ctx, struct ggml_tensor **p)
{
    /* rows 1..3, columns 2..5 of p0 [7, 5]: a strided view */
    return ggml_sqr(ctx, ggml_view_2d(ctx, p[0], 4, 3, p[0]->nb[1], p[0]->nb[1] + 2 * sizeof(float)));
}
static struct ggml_tensor *f_permute(struct ggml_context *ctx, struct ggml_tensor **p)
{
    /* the loss multiplies the non-contiguous permuted tensor directly */
    return ggml_mul(ctx, ggml_permute(ctx, p[0], 1, 2, 0, 3), ggml_permute(ctx, p[1], 1, 2, 0, 3));
}
static struct ggml_tensor *f_transpose(struct ggml_context *ctx, struct ggml_tensor **p)
{
    struct ggml_tensor *t = ggml_transpose(ctx, p[0]);
    return ggml_mul(ctx, t, t);
}
static struct ggml_tensor *f_get_rows(struct ggml_context *ctx, struct ggml_tensor **p)
{
    struct ggml_tensor *rows = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 6);
    const int32_t idx[6] = { 4, 0, 4, 2, 6, 0 };
    memcpy(rows->data, idx, sizeof idx);
    return ggml_get_rows(ctx, p[0], rows);
}
static struct ggml_tensor *f_diag_mask_zero(struct ggml_context *ctx, struct ggml_tensor **p)
{
    return ggml_diag_mask_zero(ctx, p[0], 1);
}
static struct ggml_tensor *f_diag_mask_inf(struct ggml_context *ctx, struct ggml_tensor **p)
{
    return ggml_soft_max(ctx, ggml_diag_mask_inf(ctx, p[0], 2));
}
static struct ggml_tensor *f_soft_max(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_soft_max(ctx, p[0]); }
static struct ggml_tensor *f_soft_max_ext(struct ggml_context *ctx, struct ggml_tensor **p)
{
    return ggml_soft_max_ext(ctx, p[0], NULL, 0.7f, 0.0f);
}
static struct ggml_tensor *rope_of(struct ggml_context *ctx, struct ggml_tensor *x, int mode)
{
    struct ggml_tensor *pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, x->ne[2]);
    for (int64_t i = 0; i < x->ne[2]; i++)
        ((int32_t *) pos->data)[i] = (int32_t) (3 * i + 1);
    return ggml_rope_ext(ctx, x, pos, NULL, (int) x->ne[0], mode, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
}
static struct ggml_tensor *f_rope(struct ggml_context *ctx, struct ggml_tensor **p) { return rope_of(ctx, p[0], 0); }
static struct ggml_tensor *f_rope_neox(struct ggml_context *ctx, struct ggml_tensor **p)
{
    return rope_of(ctx, p[0], GGML_ROPE_TYPE_NEOX);
}
static struct ggml_tensor *f_abs(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_abs(ctx, p[0]); }
static struct ggml_tensor *f_sgn(struct ggml_context *ctx, struct ggml_tensor **p)
{
    /* sgn has a zero gradient: sgn(x) * x = |x| leaves d|x|/dx = sgn(x) through the product */
    return ggml_mul(ctx, ggml_sgn(ctx, p[0]), p[0]);
}
static struct ggml_tensor *f_step(struct ggml_context *ctx, struct ggml_tensor **p)
{
    return ggml_mul(ctx, ggml_step(ctx, p[0]), p[0]);
}
static struct ggml_tensor *f_neg(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_neg(ctx, p[0]); }
static struct ggml_tensor *f_relu(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_relu(ctx, p[0]); }
static struct ggml_tensor *f_silu(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_silu(ctx, p[0]); }
static struct ggml_tensor *f_exp(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_exp(ctx, p[0]); }
static struct ggml_tensor *f_expm1(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_expm1(ctx, p[0]); }
static struct ggml_tensor *f_softplus(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_softplus(ctx, p[0]); }
static struct ggml_tensor *f_cross_entropy(struct ggml_context *ctx, struct ggml_tensor **p)
{
    /* labels: a fixed probability distribution per row */
    struct ggml_tensor *labels = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, p[0]->ne);
    optest_fill(labels, &seed, 0.0, 1.0);
    return ggml_cross_entropy_loss(ctx, p[0], ggml_soft_max(ctx, labels));
}
static struct ggml_tensor *f_swiglu(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_swiglu_split(ctx, p[0], p[1]); }
static struct ggml_tensor *f_reglu_split(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_reglu_split(ctx, p[0], p[1]); }
static struct ggml_tensor *f_swiglu_halves(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_swiglu(ctx, p[0]); }
static struct ggml_tensor *f_swiglu_swapped(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_swiglu_swapped(ctx, p[0]); }
static struct ggml_tensor *f_reglu_halves(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_reglu(ctx, p[0]); }
static struct ggml_tensor *f_reglu_swapped(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_reglu_swapped(ctx, p[0]); }
static struct ggml_tensor *f_pool_1d_avg(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_pool_1d(ctx, p[0], GGML_OP_POOL_AVG, 3, 2, 1); }
static struct ggml_tensor *f_pool_1d_max(struct ggml_context *ctx, struct ggml_tensor **p)
{
    /*
     * Offsets 0.5 apart, larger in the first or the second place of a
     * window by turns, added to p0 / 10: a window's two inputs never come
     * within the finite-difference step of each other (no kink), and the
     * maximum is now the first input, now the second.
     */
    static const float order[8] = { 0, 1, 3, 2, 4, 5, 7, 6 };
    struct ggml_tensor *offsets = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, p[0]->ne[0]);
    for (int64_t i = 0; i < p[0]->ne[0]; i++)
        ((float *) offsets->data)[i] = 0.5f * order[i % 8] + 4.0f * (float) (i / 8);
    return ggml_pool_1d(ctx, ggml_add(ctx, ggml_scale(ctx, p[0], 0.1f), offsets), GGML_OP_POOL_MAX, 2, 2, 0);
}
static struct ggml_tensor *f_cumsum(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_cumsum(ctx, p[0]); }
static struct ggml_tensor *f_tri(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_tri(ctx, p[0], GGML_TRI_TYPE_LOWER_DIAG); }
static struct ggml_tensor *f_tri_upper(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_tri(ctx, p[0], GGML_TRI_TYPE_UPPER); }
static struct ggml_tensor *f_fill(struct ggml_context *ctx, struct ggml_tensor **p)
{
    /* a constant of p0's shape, plus p0 so that the loss depends on it */
    return ggml_add(ctx, ggml_fill(ctx, p[0], 0.75f), p[0]);
}
static struct ggml_tensor *f_diag(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_diag(ctx, p[0]); }
static struct ggml_tensor *f_gelu(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_gelu(ctx, p[0]); }
static struct ggml_tensor *f_gelu_quick(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_gelu_quick(ctx, p[0]); }
static struct ggml_tensor *f_geglu_split(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_geglu_split(ctx, p[0], p[1]); }
static struct ggml_tensor *f_geglu_halves(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_geglu(ctx, p[0]); }
static struct ggml_tensor *f_geglu_quick_split(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_geglu_quick_split(ctx, p[0], p[1]); }
static struct ggml_tensor *f_geglu_quick_swapped(struct ggml_context *ctx, struct ggml_tensor **p) { return ggml_geglu_quick_swapped(ctx, p[0]); }
static struct ggml_tensor *f_rounding(struct ggml_context *ctx, struct ggml_tensor **p)
{
    /* piecewise constant, away from its steps (p0 in [-1, 1] maps into (3.3, 3.7)): no gradient through it */
    struct ggml_tensor *t = ggml_scale_bias(ctx, p[0], 0.2f, 3.5f);
    t = ggml_add(ctx, ggml_floor(ctx, t), ggml_ceil(ctx, t));
    t = ggml_add(ctx, t, ggml_add(ctx, ggml_round(ctx, t), ggml_trunc(ctx, t)));
    return ggml_add(ctx, t, ggml_sqr(ctx, p[0]));
}
static struct ggml_tensor *f_chain(struct ggml_context *ctx, struct ggml_tensor **p)
{
    /* a small layer: p0 used twice, so its gradient is a sum of two paths */
    struct ggml_tensor *h = ggml_mul_mat(ctx, p[1], ggml_rms_norm(ctx, p[0], 1e-6f));
    return ggml_add(ctx, ggml_silu(ctx, h), ggml_sum_rows(ctx, ggml_mul(ctx, p[0], p[2])));
}

static struct ggml_tensor *f_im2col(struct ggml_context *ctx, struct ggml_tensor **p)
{
    /* the kernel only gives the extents: 3x2 over 2 channels, stride 2x1, padding 1, dilation 1x2 */
    struct ggml_tensor *kernel = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 2, 2, 1);
    return ggml_im2col(ctx, kernel, p[0], 2, 1, 1, 1, 1, 2, true, GGML_TYPE_F32);
}
static struct ggml_tensor *f_im2col_1d(struct ggml_context *ctx, struct ggml_tensor **p)
{
    struct ggml_tensor *kernel = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 2, 1);
    return ggml_im2col(ctx, kernel, p[0], 2, 0, 1, 0, 1, 0, false, GGML_TYPE_F32);
}
/* Spreads p0's values 0.1 apart, so that no maximum changes within a finite-difference step. */
static void spread_values(struct ggml_tensor *t)
{
    const int64_t n = ggml_nelements(t);
    for (int64_t i = 0; i < n; i++)
        ((float *) t->data)[i] = 0.1f * (float) ((i * 7) % n) - 0.05f * (float) n;
}
static struct ggml_tensor *f_pool_max(struct ggml_context *ctx, struct ggml_tensor **p)
{
    spread_values(p[0]);
    return ggml_pool_2d(ctx, p[0], GGML_OP_POOL_MAX, 3, 2, 2, 1, 1, 1);
}
static struct ggml_tensor *f_pool_avg(struct ggml_context *ctx, struct ggml_tensor **p)
{
    return ggml_pool_2d(ctx, p[0], GGML_OP_POOL_AVG, 2, 3, 1, 2, 1, 0);
}

#define R_ANY { 0.1, 1.0, true }
#define R_POS { 0.5, 1.5, false }
#define R_SMALL { 0.05, 0.5, true }

static const struct grad_case cases[] = {
    { "dup", 1, { { 5, 3, 1, 1 } }, { R_ANY }, f_dup },
    { "add", 2, { { 5, 3, 2, 1 }, { 5, 3, 2, 1 } }, { R_ANY, R_ANY }, f_add },
    { "add broadcast", 2, { { 5, 3, 2, 3 }, { 5, 1, 2, 1 } }, { R_ANY, R_ANY }, f_add },
    { "add1", 2, { { 7, 3, 1, 1 }, { 1, 1, 1, 1 } }, { R_ANY, R_ANY }, f_add1 },
    { "acc", 2, { { 7, 5, 1, 1 }, { 3, 2, 1, 1 } }, { R_ANY, R_ANY }, f_acc },
    { "sub broadcast", 2, { { 3, 4, 5, 1 }, { 3, 1, 5, 1 } }, { R_ANY, R_ANY }, f_sub },
    { "mul broadcast", 2, { { 5, 3, 2, 1 }, { 5, 1, 1, 1 } }, { R_ANY, R_ANY }, f_mul },
    { "div broadcast", 2, { { 5, 3, 2, 1 }, { 1, 3, 2, 1 } }, { R_ANY, R_POS }, f_div },
    { "sqr", 1, { { 7, 3, 1, 1 } }, { R_ANY }, f_sqr },
    { "sqrt", 1, { { 7, 3, 1, 1 } }, { R_POS }, f_sqrt },
    { "log", 1, { { 7, 3, 1, 1 } }, { R_POS }, f_log },
    { "sin", 1, { { 7, 3, 1, 1 } }, { R_ANY }, f_sin },
    { "cos", 1, { { 7, 3, 1, 1 } }, { R_ANY }, f_cos },
    { "sum", 1, { { 5, 3, 1, 1 } }, { R_SMALL }, f_sum },
    { "sum_rows", 1, { { 5, 3, 2, 1 } }, { R_ANY }, f_sum_rows },
    { "mean", 1, { { 5, 3, 2, 1 } }, { R_ANY }, f_mean },
    { "repeat", 1, { { 5, 1, 2, 1 } }, { R_ANY }, f_repeat },
    { "repeat_back", 1, { { 5, 3, 2, 1 } }, { R_ANY }, f_repeat_back },
    { "rms_norm", 1, { { 7, 3, 1, 1 } }, { R_ANY }, f_rms_norm },
    { "mul_mat", 2, { { 7, 5, 1, 1 }, { 7, 3, 1, 1 } }, { R_ANY, R_ANY }, f_mul_mat },
    { "mul_mat broadcast", 2, { { 7, 5, 2, 1 }, { 7, 3, 4, 1 } }, { R_ANY, R_ANY }, f_mul_mat },
    { "mul_mat transposed", 2, { { 7, 5, 1, 1 }, { 3, 7, 1, 1 } }, { R_ANY, R_ANY }, f_mul_mat_t },
    { "scale", 1, { { 7, 3, 1, 1 } }, { R_ANY }, f_scale },
    { "set", 2, { { 9, 5, 1, 1 }, { 4, 2, 1, 1 } }, { R_ANY, R_ANY }, f_set },
    { "cpy", 1, { { 5, 3, 1, 1 } }, { R_ANY }, f_cpy },
    { "cpy of permute", 1, { { 2, 5, 3, 4 } }, { R_ANY }, f_cpy_permuted },
    { "cont of permute", 1, { { 5, 3, 2, 1 } }, { R_ANY }, f_cont },
    { "reshape", 1, { { 5, 3, 2, 1 } }, { R_ANY }, f_reshape },
    { "view", 1, { { 7, 5, 1, 1 } }, { R_ANY }, f_view },
    { "permute", 2, { { 5, 3, 2, 1 }, { 5, 3, 2, 1 } }, { R_ANY, R_ANY }, f_permute },
    { "transpose", 1, { { 5, 3, 1, 1 } }, { R_ANY }, f_transpose },
    { "get_rows", 1, { { 5, 7, 1, 1 } }, { R_ANY }, f_get_rows },
    { "diag_mask_zero", 1, { { 5, 5, 2, 1 } }, { R_ANY }, f_diag_mask_zero },
    { "diag_mask_inf + soft_max", 1, { { 6, 4, 2, 1 } }, { R_ANY }, f_diag_mask_inf },
    { "soft_max", 1, { { 7, 3, 2, 1 } }, { R_ANY }, f_soft_max },
    { "soft_max_ext", 1, { { 7, 3, 1, 1 } }, { R_ANY }, f_soft_max_ext },
    { "rope", 1, { { 6, 2, 3, 1 } }, { R_ANY }, f_rope },
    { "rope neox", 1, { { 8, 3, 2, 1 } }, { R_ANY }, f_rope_neox },
    { "abs", 1, { { 7, 3, 1, 1 } }, { R_ANY }, f_abs },
    { "sgn", 1, { { 7, 3, 1, 1 } }, { R_ANY }, f_sgn },
    { "step", 1, { { 7, 3, 1, 1 } }, { R_ANY }, f_step },
    { "neg", 1, { { 7, 3, 1, 1 } }, { R_ANY }, f_neg },
    { "relu", 1, { { 7, 3, 1, 1 } }, { R_ANY }, f_relu },
    { "silu", 1, { { 7, 3, 1, 1 } }, { R_ANY }, f_silu },
    { "exp", 1, { { 7, 3, 1, 1 } }, { R_ANY }, f_exp },
    { "expm1", 1, { { 7, 3, 1, 1 } }, { R_ANY }, f_expm1 },
    { "softplus", 1, { { 7, 3, 1, 1 } }, { R_ANY }, f_softplus },
    { "cross_entropy_loss", 1, { { 7, 3, 1, 1 } }, { R_ANY }, f_cross_entropy },
    { "im2col 2-d", 1, { { 7, 5, 2, 2 } }, { R_ANY }, f_im2col },
    { "im2col 1-d", 1, { { 9, 2, 3, 1 } }, { R_ANY }, f_im2col_1d },
    { "pool_2d max", 1, { { 7, 5, 2, 1 } }, { R_ANY }, f_pool_max },
    { "pool_2d avg", 1, { { 6, 7, 1, 2 } }, { R_ANY }, f_pool_avg },
    { "swiglu split", 2, { { 7, 3, 1, 1 }, { 7, 3, 1, 1 } }, { R_ANY, R_ANY }, f_swiglu },
    { "reglu split", 2, { { 7, 3, 1, 1 }, { 7, 3, 1, 1 } }, { R_ANY, R_ANY }, f_reglu_split },
    { "swiglu halves", 1, { { 10, 3, 2, 1 } }, { R_ANY }, f_swiglu_halves },
    { "swiglu halves swapped", 1, { { 10, 3, 1, 2 } }, { R_ANY }, f_swiglu_swapped },
    { "reglu halves", 1, { { 8, 3, 2, 1 } }, { R_ANY }, f_reglu_halves },
    { "reglu halves swapped", 1, { { 8, 2, 1, 1 } }, { R_ANY }, f_reglu_swapped },
    { "gelu", 1, { { 9, 3, 2, 1 } }, { R_ANY }, f_gelu },
    { "gelu_quick", 1, { { 9, 3, 1, 1 } }, { R_ANY }, f_gelu_quick },
    { "geglu split", 2, { { 7, 3, 1, 1 }, { 7, 3, 1, 1 } }, { R_ANY, R_ANY }, f_geglu_split },
    { "geglu halves", 1, { { 10, 3, 2, 1 } }, { R_ANY }, f_geglu_halves },
    { "geglu_quick split", 2, { { 7, 3, 1, 1 }, { 7, 3, 1, 1 } }, { R_ANY, R_ANY }, f_geglu_quick_split },
    { "geglu_quick halves swapped", 1, { { 8, 3, 1, 2 } }, { R_ANY }, f_geglu_quick_swapped },
    { "floor, ceil, round, trunc", 1, { { 7, 3, 1, 1 } }, { R_ANY }, f_rounding },
    { "pool_1d avg, padded", 1, { { 9, 3, 2, 1 } }, { R_ANY }, f_pool_1d_avg },
    { "pool_1d max", 1, { { 8, 2, 1, 2 } }, { R_ANY }, f_pool_1d_max },
    { "cumsum", 1, { { 7, 3, 2, 1 } }, { R_ANY }, f_cumsum },
    { "tri lower with diagonal", 1, { { 5, 5, 2, 1 } }, { R_ANY }, f_tri },
    { "tri strictly upper", 1, { { 4, 4, 1, 3 } }, { R_ANY }, f_tri_upper },
    { "fill", 1, { { 6, 3, 1, 1 } }, { R_ANY }, f_fill },
    { "diag", 1, { { 5, 1, 3, 2 } }, { R_ANY }, f_diag },
    { "layer", 3, { { 5, 3, 1, 1 }, { 5, 4, 1, 1 }, { 5, 3, 1, 1 } }, { R_ANY, R_ANY, R_ANY }, f_chain },
};

/* --------------------------------------------------------- accumulation */

/* Two passes without a reset accumulate twice the gradient; a reset starts over. */
static void test_accumulation(void)
{
    struct ggml_context *ctx = new_ctx();
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 3);
    optest_fill(x, &seed, -1.0, 1.0);
    ggml_set_param(x);
    struct ggml_tensor *loss = ggml_sum(ctx, ggml_sqr(ctx, x));
    ggml_set_loss(loss);
    struct ggml_cgraph *gb = ggml_new_graph_custom(ctx, 256, true);
    ggml_build_forward_expand(gb, loss);

    struct ggml_tensor *accs[256] = { NULL };
    for (int i = 0; i < ggml_graph_n_nodes(gb); i++)
        if (ggml_graph_node(gb, i) == x)
            accs[i] = ggml_dup_tensor(ctx, x);
    const int n_forward = ggml_graph_n_nodes(gb);
    ggml_build_backward_expand(ctx, gb, accs);
    ok(ggml_graph_n_nodes(gb) > n_forward, "accumulation: gradient nodes appended");

    struct ggml_tensor *acc = ggml_graph_get_grad_acc(gb, x);
    struct ggml_tensor *loss_acc = ggml_graph_get_grad_acc(gb, loss);
    ok(acc != NULL && ggml_graph_get_grad(gb, x) != NULL, "the parameter's accumulator is the one given");
    ok(loss_acc != NULL && loss_acc->type == GGML_TYPE_F32 && ggml_nelements(loss_acc) == 1,
       "the loss has an f32 accumulator of one element");
    ok(ggml_graph_get_grad(gb, loss) == loss_acc, "the loss's gradient is its accumulator");

    ggml_set_f32(acc, 7.0f);
    ggml_graph_reset(gb);
    is_near(ggml_get_f32_1d(loss_acc, 0), 1.0, 0.0, "ggml_graph_reset seeds the loss gradient with 1");
    is_near(ggml_get_f32_1d(acc, 4), 0.0, 0.0, "ggml_graph_reset zeroes the accumulators");

    /* runs of two passes each: accumulate 2g, then 4g; after a reset 2g again (g = 2x) */
    double worst[3] = { 0.0, 0.0, 0.0 };
    const double times[3] = { 2.0, 4.0, 2.0 };
    for (int run = 0; run < 3; run++) {
        if (run == 2)
            ggml_graph_reset(gb);
        ggml_graph_compute_with_ctx(ctx, gb, 2);
        ggml_graph_compute_with_ctx(ctx, gb, 2);
        for (int64_t i = 0; i < ggml_nelements(x); i++) {
            const double want = times[run] * 2.0 * ggml_get_f32_1d(x, (int) i);
            const double d = fabs(ggml_get_f32_1d(acc, (int) i) - want);
            if (d > worst[run])
                worst[run] = d;
        }
    }
    is_near(worst[0], 0.0, 1e-5, "two passes accumulate twice the gradient");
    is_near(worst[1], 0.0, 1e-5, "two more passes without a reset accumulate on");
    is_near(worst[2], 0.0, 1e-5, "after ggml_graph_reset the accumulation starts over");
    ggml_free(ctx);
}

/* --------------------------------------------------------------- errors */

static void test_errors(void)
{
    struct ggml_context *ctx = new_ctx();
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 3);
    optest_fill(x, &seed, -1.0, 1.0);
    ggml_set_param(x);

    /* NORM has no backward pass */
    struct ggml_tensor *loss = ggml_sum(ctx, ggml_norm(ctx, x, 1e-5f));
    ggml_set_loss(loss);
    struct ggml_cgraph *gb = ggml_new_graph_custom(ctx, 256, true);
    ggml_build_forward_expand(gb, loss);
    const int n = ggml_graph_n_nodes(gb);
    tap_log_errors();
    ggml_build_backward_expand(ctx, gb, NULL);
    logged_one_error("an op without a gradient on the path is one error");
    ok(strstr(tap_last_log(), "NORM") != NULL, "the message names the op (%s)", tap_last_log());
    is_int(ggml_graph_n_nodes(gb), n, "the graph is left as it was");
    ok(ggml_graph_get_grad(gb, x) == NULL, "no gradient was made");
    is_int(ggml_graph_compute_with_ctx(ctx, gb, 1), GGML_STATUS_SUCCESS, "the forward graph still computes");

    /* the same op off the path to the loss is fine */
    struct ggml_tensor *c = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 3);
    optest_fill(c, &seed, -1.0, 1.0);
    struct ggml_tensor *loss2 = ggml_sum(ctx, ggml_mul(ctx, x, ggml_norm(ctx, c, 1e-5f)));
    ggml_set_loss(loss2);
    struct ggml_cgraph *g2 = ggml_new_graph_custom(ctx, 256, true);
    ggml_build_forward_expand(g2, loss2);
    tap_log_errors();
    ggml_build_backward_expand(ctx, g2, NULL);
    is_int(tap_log_errors(), 0, "an op without a gradient off the path is no error");
    ok(ggml_graph_get_grad(g2, x) != NULL, "the parameter still gets its gradient");

    /* no loss, no parameter, no gradient slots, NULL arguments */
    struct ggml_tensor *y = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_cgraph *g3 = ggml_new_graph_custom(ctx, 64, true);
    ggml_build_forward_expand(g3, ggml_sqr(ctx, y));
    ggml_build_backward_expand(ctx, g3, NULL);
    logged_one_error("a graph without a parameter or loss is one error");
    struct ggml_cgraph *g4 = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(g4, loss2);
    ggml_build_backward_expand(ctx, g4, NULL);
    logged_one_error("a graph without gradient slots is one error");
    ggml_build_backward_expand(NULL, g2, NULL);
    logged_one_error("a NULL context is one error");
    ggml_build_backward_expand(ctx, NULL, NULL);
    logged_one_error("a NULL graph is one error");

    /* an I32 source needing a gradient cannot hold one: not reached here, but an in-place op is */
    struct ggml_tensor *z = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 3);
    ggml_set_param(z);
    struct ggml_tensor *loss5 = ggml_sum(ctx, ggml_sqr_inplace(ctx, ggml_scale(ctx, z, 2.0f)));
    ggml_set_loss(loss5);
    struct ggml_cgraph *g5 = ggml_new_graph_custom(ctx, 64, true);
    ggml_build_forward_expand(g5, loss5);
    ggml_build_backward_expand(ctx, g5, NULL);
    logged_one_error("an in-place op on the path is one error");
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i]);
    test_accumulation();
    test_errors();
    return tap_done();
}
