/*
 * test-op-back.c - the gradient ops SILU_BACK, RMS_NORM_BACK,
 * GET_ROWS_BACK, SOFT_MAX_BACK, IM2COL_BACK and POOL_2D_BACK: odd shapes, non-contiguous inputs,
 * F16 where accepted, 1..4 threads, reference and fast kernels, and the
 * constructors' error paths.
 *
 * Each result is compared with a double-precision reference computed
 * here from the inputs as stored (the closed-form derivative), and the
 * gradients of silu, rms_norm and soft_max also with central finite
 * differences of the forward function, computed in double.
 */
#include <stdio.h>

#include "tap.h"
#include "op-test.h"

/* Step of the central differences: truncation error ~h^2 = 1e-8 relative,
 * rounding error in double ~1e-16 / h = 1e-12. */
#define FD_STEP 1e-4

/* Finite differences agree with the closed forms to about h^2 relative:
 * an NMSE below 1e-12 would need h smaller; 1e-10 leaves a margin of 100. */
#define FD_NMSE 1e-10

static struct ggml_context *new_ctx(void)
{
    struct ggml_init_params params = { 16u << 20, NULL, false };
    return ggml_init(params);
}

/*
 * A tensor of the given shape filled from seed: contiguous, or (strided)
 * a view of the first ne0 columns of a wider one, so its rows are apart.
 */
static struct ggml_tensor *new_input(struct ggml_context *ctx, enum ggml_type type, const int64_t ne[4],
                                     bool strided, uint64_t *seed, double lo, double hi)
{
    if (!strided) {
        struct ggml_tensor *t = ggml_new_tensor(ctx, type, 4, ne);
        optest_fill(t, seed, lo, hi);
        return t;
    }
    struct ggml_tensor *wide = ggml_new_tensor_4d(ctx, type, ne[0] + 3, ne[1], ne[2], ne[3]);
    optest_fill(wide, seed, lo, hi);
    return ggml_view_4d(ctx, wide, ne[0], ne[1], ne[2], ne[3], wide->nb[1], wide->nb[2], wide->nb[3],
                        ggml_type_size(type));
}

/* Row r (dims 1..3 flattened) of t as doubles. */
static void get_row(const struct ggml_tensor *t, int64_t r, double *out)
{
    const int64_t i1 = r % t->ne[1], i2 = (r / t->ne[1]) % t->ne[2], i3 = r / (t->ne[1] * t->ne[2]);
    for (int64_t i0 = 0; i0 < t->ne[0]; i0++)
        out[i0] = optest_get(t, i0, i1, i2, i3);
}

/* NMSE of out (computed once, 2 threads) against fd, in out's row-major order. */
static void check_fd(struct ggml_context *ctx, struct ggml_tensor *out, const double *fd, const char *what)
{
    enum ggml_status status = optest_compute(ctx, out, 2, false);
    const double nmse = optest_nmse(out, fd);
    ok(status == GGML_STATUS_SUCCESS && nmse <= FD_NMSE, "%s: agrees with finite differences (nmse %.3g)", what,
       nmse);
}

/* Float i of t's op_params. */
static float op_param_f32(const struct ggml_tensor *t, int i)
{
    float v;
    memcpy(&v, (const char *) t->op_params + (size_t) i * sizeof v, sizeof v);
    return v;
}

/*
 * For ops that write into their inputs: saves the n_keep tensors (their
 * whole view sources), then for 1..4 threads, reference and fast kernels,
 * puts them back, computes out and checks each of the n_check tensors
 * against its reference (one TAP line a run).  Leaves the inputs restored.
 */
static void check_inplace(struct ggml_context *ctx, struct ggml_tensor *out, struct ggml_tensor *const *keep,
                          int n_keep, struct ggml_tensor *const *check, const double *const *refs, int n_check,
                          double threshold, const char *what)
{
    void *saved[8];
    for (int k = 0; k < n_keep; k++) {
        struct ggml_tensor *src = keep[k]->view_src != NULL ? keep[k]->view_src : keep[k];
        saved[k] = malloc(ggml_nbytes(src));
        memcpy(saved[k], src->data, ggml_nbytes(src));
    }
    for (int use_ref = 0; use_ref <= 1; use_ref++)
        for (int n_threads = 1; n_threads <= 4; n_threads++) {
            for (int k = 0; k < n_keep; k++) {
                struct ggml_tensor *src = keep[k]->view_src != NULL ? keep[k]->view_src : keep[k];
                memcpy(src->data, saved[k], ggml_nbytes(src));
            }
            enum ggml_status status = optest_compute(ctx, out, n_threads, use_ref);
            double worst = 0.0;
            for (int c = 0; c < n_check; c++) {
                const double nmse = optest_nmse(check[c], refs[c]);
                worst = nmse > worst ? nmse : worst;
            }
            ok(status == GGML_STATUS_SUCCESS && worst <= threshold, "%s, %d threads, %s: nmse %.3g", what,
               n_threads, use_ref ? "reference" : "fast", worst);
        }
    for (int k = 0; k < n_keep; k++) {
        struct ggml_tensor *src = keep[k]->view_src != NULL ? keep[k]->view_src : keep[k];
        memcpy(src->data, saved[k], ggml_nbytes(src));
        free(saved[k]);
    }
}

static const char *type_label(enum ggml_type type)
{
    return ggml_type_name(type);
}

/* ------------------------------------------------------------- SILU_BACK */

static double silu(double x)
{
    return x / (1.0 + exp(-x));
}

/*
 * Threshold F32 1e-12: one sigmoid (expf, a few ulps) and three products
 * per element.  F16 results are rounded to 11 bits: 1e-6.
 */
static void test_silu_back_case(enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2, bool strided,
                                uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    const int64_t ne[4] = { ne0, ne1, ne2, 1 };
    struct ggml_tensor *dy = new_input(ctx, type, ne, false, seed, -1.0, 1.0);
    struct ggml_tensor *x = new_input(ctx, type, ne, strided, seed, -6.0, 6.0);
    const int64_t n = ne0 * ne1 * ne2;
    double *ref = malloc((size_t) n * sizeof *ref), *fd = malloc((size_t) n * sizeof *fd);
    int64_t k = 0;
    for (int64_t i2 = 0; i2 < ne2; i2++)
        for (int64_t i1 = 0; i1 < ne1; i1++)
            for (int64_t i0 = 0; i0 < ne0; i0++, k++) {
                const double xv = optest_get(x, i0, i1, i2, 0), g = optest_get(dy, i0, i1, i2, 0);
                const double s = 1.0 / (1.0 + exp(-xv));
                ref[k] = g * s * (1.0 + xv * (1.0 - s));
                fd[k] = g * (silu(xv + FD_STEP) - silu(xv - FD_STEP)) / (2.0 * FD_STEP);
            }
    struct ggml_tensor *out = ggml_silu_back(ctx, dy, x);
    ok(out != NULL && out->op == GGML_OP_SILU_BACK && out->type == type && ggml_are_same_shape(out, dy) &&
           out->src[0] == dy && out->src[1] == x,
       "silu_back %s: a node of dy's shape and type, sources (dy, x)", type_label(type));
    char what[128];
    snprintf(what, sizeof what, "silu_back %s [%lld, %lld, %lld]%s", type_label(type), (long long) ne0,
             (long long) ne1, (long long) ne2, strided ? ", strided x" : "");
    const bool f32 = type == GGML_TYPE_F32;
    optest_check_all(ctx, out, ref, f32 ? 1e-12 : 1e-6, what);
    if (f32)
        check_fd(ctx, out, fd, what);
    free(fd);
    free(ref);
    ggml_free(ctx);
}

static void test_silu_back(void)
{
    uint64_t seed = 0x5170;
    test_silu_back_case(GGML_TYPE_F32, 1, 1, 1, false, &seed);
    test_silu_back_case(GGML_TYPE_F32, 33, 3, 2, true, &seed);
    test_silu_back_case(GGML_TYPE_F32, 257, 5, 1, false, &seed);
    test_silu_back_case(GGML_TYPE_F16, 31, 3, 1, true, &seed);
}

/* --------------------------------------------------------- RMS_NORM_BACK */

/* sum_i dy[i] * rms_norm(x)[i] over one row of n values. */
static double rms_norm_dot(const double *x, const double *dy, int64_t n, double eps)
{
    double ss = 0.0;
    for (int64_t i = 0; i < n; i++)
        ss += x[i] * x[i];
    const double inv = 1.0 / sqrt(ss / (double) n + eps);
    double s = 0.0;
    for (int64_t i = 0; i < n; i++)
        s += dy[i] * x[i] * inv;
    return s;
}

/*
 * Threshold F32 1e-11: per row two sums in double, then a few F32
 * operations per element.  F16 results: 1e-6.
 */
static void test_rms_norm_back_case(enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                                    float eps, bool strided, uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    struct ggml_tensor *dy = new_input(ctx, type, ne, strided, seed, -1.0, 1.0);
    struct ggml_tensor *x = new_input(ctx, type, ne, !strided, seed, -2.0, 2.0);
    const int64_t rows = ne1 * ne2 * ne3;
    double *ref = malloc((size_t) (rows * ne0) * sizeof *ref), *fd = malloc((size_t) (rows * ne0) * sizeof *fd);
    double *xr = malloc((size_t) ne0 * sizeof *xr), *gr = malloc((size_t) ne0 * sizeof *gr);
    for (int64_t r = 0; r < rows; r++) {
        get_row(x, r, xr);
        get_row(dy, r, gr);
        double ss = 0.0, sxg = 0.0;
        for (int64_t i = 0; i < ne0; i++) {
            ss += xr[i] * xr[i];
            sxg += xr[i] * gr[i];
        }
        const double m = ss / (double) ne0 + eps;
        for (int64_t j = 0; j < ne0; j++) {
            ref[r * ne0 + j] = (gr[j] - xr[j] * sxg / ((double) ne0 * m)) / sqrt(m);
            const double keep = xr[j];
            xr[j] = keep + FD_STEP;
            const double up = rms_norm_dot(xr, gr, ne0, eps);
            xr[j] = keep - FD_STEP;
            const double down = rms_norm_dot(xr, gr, ne0, eps);
            xr[j] = keep;
            fd[r * ne0 + j] = (up - down) / (2.0 * FD_STEP);
        }
    }
    struct ggml_tensor *out = ggml_rms_norm_back(ctx, dy, x, eps);
    ok(out != NULL && out->op == GGML_OP_RMS_NORM_BACK && out->type == type && ggml_are_same_shape(out, dy) &&
           op_param_f32(out, 0) == eps,
       "rms_norm_back %s: a node of dy's shape and type, eps in op_params[0]", type_label(type));
    char what[128];
    snprintf(what, sizeof what, "rms_norm_back %s [%lld, %lld, %lld, %lld] eps %g%s", type_label(type),
             (long long) ne0, (long long) ne1, (long long) ne2, (long long) ne3, (double) eps,
             strided ? ", strided dy" : ", strided x");
    const bool f32 = type == GGML_TYPE_F32;
    optest_check_all(ctx, out, ref, f32 ? 1e-11 : 1e-6, what);
    if (f32)
        check_fd(ctx, out, fd, what);
    free(gr);
    free(xr);
    free(fd);
    free(ref);
    ggml_free(ctx);
}

static void test_rms_norm_back(void)
{
    uint64_t seed = 0x4b5;
    test_rms_norm_back_case(GGML_TYPE_F32, 1, 1, 1, 1, 1e-6f, false, &seed);
    test_rms_norm_back_case(GGML_TYPE_F32, 3, 5, 2, 3, 1e-5f, true, &seed);
    test_rms_norm_back_case(GGML_TYPE_F32, 33, 7, 1, 1, 0.0f, false, &seed);
    test_rms_norm_back_case(GGML_TYPE_F32, 257, 3, 1, 1, 1e-3f, true, &seed);
    test_rms_norm_back_case(GGML_TYPE_F16, 31, 4, 1, 1, 1e-6f, false, &seed);
}

/* ---------------------------------------------------------- SOFT_MAX_BACK */

/* sum_i dy[i] * softmax(scale * x)[i] over one row of n values. */
static double soft_max_dot(const double *x, const double *dy, int64_t n, double scale)
{
    double mx = -INFINITY;
    for (int64_t i = 0; i < n; i++)
        mx = fmax(mx, scale * x[i]);
    double sum = 0.0, s = 0.0;
    for (int64_t i = 0; i < n; i++)
        sum += exp(scale * x[i] - mx);
    for (int64_t i = 0; i < n; i++)
        s += dy[i] * exp(scale * x[i] - mx) / sum;
    return s;
}

/*
 * y is softmax(scale * x) of a random x, stored in F32; the result is
 * checked against the closed form on the stored y (threshold 1e-11: a
 * double dot product, two F32 operations per element) and against finite
 * differences of the forward function in x (y's rounding to F32 is well
 * below FD_NMSE).  In place, dy is restored before each run.
 */
static void test_soft_max_back_case(int64_t ne0, int64_t ne1, int64_t ne2, float scale, float max_bias,
                                    bool strided, bool inplace, uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    const int64_t ne[4] = { ne0, ne1, ne2, 1 };
    struct ggml_tensor *dy = new_input(ctx, GGML_TYPE_F32, ne, strided && inplace, seed, -1.0, 1.0);
    struct ggml_tensor *y = new_input(ctx, GGML_TYPE_F32, ne, strided, seed, 0.0, 1.0);
    const int64_t rows = ne1 * ne2;
    double *ref = malloc((size_t) (rows * ne0) * sizeof *ref), *fd = malloc((size_t) (rows * ne0) * sizeof *fd);
    double *xr = malloc((size_t) ne0 * sizeof *xr), *yr = malloc((size_t) ne0 * sizeof *yr);
    double *gr = malloc((size_t) ne0 * sizeof *gr);
    for (int64_t r = 0; r < rows; r++) {
        /* y's row from a random x */
        for (int64_t i = 0; i < ne0; i++)
            xr[i] = optest_uniform(seed, -3.0, 3.0);
        double mx = -INFINITY, sum = 0.0;
        for (int64_t i = 0; i < ne0; i++)
            mx = fmax(mx, scale * xr[i]);
        for (int64_t i = 0; i < ne0; i++)
            sum += exp(scale * xr[i] - mx);
        for (int64_t i = 0; i < ne0; i++)
            optest_set(y, i, r % ne1, r / ne1, 0, exp(scale * xr[i] - mx) / sum);
        get_row(y, r, yr);
        get_row(dy, r, gr);
        double dot = 0.0;
        for (int64_t i = 0; i < ne0; i++)
            dot += yr[i] * gr[i];
        for (int64_t j = 0; j < ne0; j++) {
            ref[r * ne0 + j] = scale * yr[j] * (gr[j] - dot);
            const double keep = xr[j];
            xr[j] = keep + FD_STEP;
            const double up = soft_max_dot(xr, gr, ne0, scale);
            xr[j] = keep - FD_STEP;
            const double down = soft_max_dot(xr, gr, ne0, scale);
            xr[j] = keep;
            fd[r * ne0 + j] = (up - down) / (2.0 * FD_STEP);
        }
    }
    struct ggml_tensor *out = inplace ? ggml_soft_max_ext_back_inplace(ctx, dy, y, scale, max_bias)
                                      : ggml_soft_max_ext_back(ctx, dy, y, scale, max_bias);
    ok(out != NULL && out->op == GGML_OP_SOFT_MAX_BACK && ggml_are_same_shape(out, dy) &&
           op_param_f32(out, 0) == scale && op_param_f32(out, 1) == max_bias &&
           (out->data == dy->data) == inplace,
       "soft_max_ext_back%s: a node of dy's shape, scale and max_bias in op_params", inplace ? "_inplace" : "");
    char what[160];
    snprintf(what, sizeof what, "soft_max_ext_back%s [%lld, %lld, %lld] scale %g max_bias %g%s",
             inplace ? "_inplace" : "", (long long) ne0, (long long) ne1, (long long) ne2, (double) scale,
             (double) max_bias, strided ? ", strided" : "");
    if (!inplace) {
        optest_check_all(ctx, out, ref, 1e-11, what);
        check_fd(ctx, out, fd, what);
    } else {
        /* dy is the result: check_inplace puts it back before every run */
        const double *refs[1] = { ref };
        check_inplace(ctx, out, &dy, 1, &out, refs, 1, 1e-11, what);
        check_fd(ctx, out, fd, what);
    }
    free(gr);
    free(yr);
    free(xr);
    free(fd);
    free(ref);
    ggml_free(ctx);
}

static void test_soft_max_back(void)
{
    uint64_t seed = 0x50f7;
    test_soft_max_back_case(1, 1, 1, 1.0f, 0.0f, false, false, &seed);
    test_soft_max_back_case(15, 3, 2, 0.5f, 0.0f, true, false, &seed);
    test_soft_max_back_case(33, 5, 1, 1.0f, 8.0f, false, false, &seed);
    test_soft_max_back_case(257, 2, 3, 0.125f, 0.0f, false, false, &seed);
    test_soft_max_back_case(31, 4, 1, 0.5f, 0.0f, false, true, &seed);
    test_soft_max_back_case(15, 3, 2, 1.0f, 0.0f, true, true, &seed);
}

/* ---------------------------------------------------------- GET_ROWS_BACK */

/*
 * grad [ne0, n_grad_rows] (type), n_idx <= n_grad_rows indices into
 * n_rows rows, some repeated (sums), some rows never named (zeros), one
 * out of range when skip_bad (skipped).  Threshold: F32 1e-13 (sums of a
 * few F32 values), F16 gradients read exactly: 1e-13.
 */
static void test_get_rows_back_case(enum ggml_type type, int64_t ne0, int64_t n_grad_rows, int64_t n_idx,
                                    int64_t n_rows, bool idx_view, bool skip_bad, uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    struct ggml_tensor *grad = ggml_new_tensor_2d(ctx, type, ne0, n_grad_rows);
    optest_fill(grad, seed, -1.0, 1.0);
    /* with idx_view: every other element of a longer vector (nb[0] = 8 bytes) */
    struct ggml_tensor *idx = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, idx_view ? 2 * n_idx : n_idx);
    struct ggml_tensor *used =
        idx_view ? ggml_transpose(ctx, ggml_view_2d(ctx, idx, 1, n_idx, 2 * sizeof(int32_t), 0)) : idx;
    for (int64_t i = 0; i < idx->ne[0]; i++)
        optest_set(idx, i, 0, 0, 0, (double) (optest_next(seed) % (uint64_t) n_rows));
    if (skip_bad && n_idx > 1)
        optest_set(used, 1, 0, 0, 0, (double) n_rows); /* no such row */
    struct ggml_tensor *shape = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ne0, n_rows);
    double *ref = calloc((size_t) (ne0 * n_rows), sizeof *ref);
    for (int64_t i = 0; i < n_idx; i++) {
        const int64_t t = (int64_t) optest_get(used, i, 0, 0, 0);
        if (t < 0 || t >= n_rows)
            continue;
        for (int64_t j = 0; j < ne0; j++)
            ref[t * ne0 + j] += optest_get(grad, j, i, 0, 0);
    }
    struct ggml_tensor *out = ggml_get_rows_back(ctx, grad, used, shape);
    ok(out != NULL && out->op == GGML_OP_GET_ROWS_BACK && out->type == GGML_TYPE_F32 && out->ne[0] == ne0 &&
           out->ne[1] == n_rows && out->ne[2] == 1 && out->src[0] == grad && out->src[1] == used,
       "get_rows_back %s: an F32 node of c's shape, sources (a, b)", type_label(type));
    char what[160];
    snprintf(what, sizeof what, "get_rows_back %s grad [%lld, %lld], %lld indices into %lld rows%s%s",
             type_label(type), (long long) ne0, (long long) n_grad_rows, (long long) n_idx, (long long) n_rows,
             idx_view ? ", index view" : "", skip_bad ? ", one out of range" : "");
    optest_check_all(ctx, out, ref, 1e-13, what);
    free(ref);
    ggml_free(ctx);
}

static void test_get_rows_back(void)
{
    uint64_t seed = 0x6e7b;
    test_get_rows_back_case(GGML_TYPE_F32, 1, 2, 2, 8, false, false, &seed);
    test_get_rows_back_case(GGML_TYPE_F32, 33, 7, 7, 5, false, true, &seed);
    test_get_rows_back_case(GGML_TYPE_F32, 257, 4, 2, 5, true, false, &seed);
    test_get_rows_back_case(GGML_TYPE_F16, 31, 9, 9, 3, true, true, &seed);
    test_get_rows_back_case(GGML_TYPE_F32, 3, 31, 31, 33, false, false, &seed);
}

/* ----------------------------------------------------- CROSS_ENTROPY_LOSS */

/* -sum(labels * log_softmax(logits)) over one row of n values, in double. */
static double row_loss(const double *x, const double *y, int64_t n)
{
    double mx = -INFINITY, sum = 0.0, s = 0.0;
    for (int64_t i = 0; i < n; i++)
        mx = fmax(mx, x[i]);
    for (int64_t i = 0; i < n; i++)
        sum += exp(x[i] - mx);
    const double lse = mx + log(sum);
    for (int64_t i = 0; i < n; i++)
        s -= y[i] * (x[i] - lse);
    return s;
}

/*
 * logits in [-4, 4), labels in [0, 1) scaled to sum 1 per row when
 * normalized (the gradient's closed form is the derivative of the loss
 * only then).  The loss: threshold F32 1e-12 (double sums, one rounding),
 * F16 logits 1e-12 too (read exactly).  The gradient: F32 1e-12, and
 * finite differences of the loss in double when the labels are normalized.
 */
static void test_cross_entropy_case(enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                                    bool strided, bool normalized, uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    struct ggml_tensor *logits = new_input(ctx, type, ne, strided, seed, -4.0, 4.0);
    struct ggml_tensor *labels = new_input(ctx, GGML_TYPE_F32, ne, false, seed, 0.0, 1.0);
    struct ggml_tensor *g = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    const double gv = optest_uniform(seed, 0.5, 2.0);
    optest_set(g, 0, 0, 0, 0, gv);
    const int64_t rows = ne1 * ne2 * ne3;
    double *xr = malloc((size_t) ne0 * sizeof *xr), *yr = malloc((size_t) ne0 * sizeof *yr);
    double *dref = malloc((size_t) (rows * ne0) * sizeof *dref), *fd = malloc((size_t) (rows * ne0) * sizeof *fd);
    double loss = 0.0;
    for (int64_t r = 0; r < rows; r++) {
        const int64_t i1 = r % ne1, i2 = (r / ne1) % ne2, i3 = r / (ne1 * ne2);
        if (normalized) {
            double sum = 0.0;
            for (int64_t i = 0; i < ne0; i++)
                sum += optest_get(labels, i, i1, i2, i3);
            for (int64_t i = 0; i < ne0; i++)
                optest_set(labels, i, i1, i2, i3, optest_get(labels, i, i1, i2, i3) / sum);
        }
        get_row(logits, r, xr);
        get_row(labels, r, yr);
        loss += row_loss(xr, yr, ne0);
        double mx = -INFINITY, sum = 0.0;
        for (int64_t i = 0; i < ne0; i++)
            mx = fmax(mx, xr[i]);
        for (int64_t i = 0; i < ne0; i++)
            sum += exp(xr[i] - mx);
        for (int64_t j = 0; j < ne0; j++) {
            dref[r * ne0 + j] = (exp(xr[j] - mx) / sum - yr[j]) * gv / (double) rows;
            const double keep = xr[j];
            xr[j] = keep + FD_STEP;
            const double up = row_loss(xr, yr, ne0);
            xr[j] = keep - FD_STEP;
            const double down = row_loss(xr, yr, ne0);
            xr[j] = keep;
            fd[r * ne0 + j] = (up - down) / (2.0 * FD_STEP) * gv / (double) rows;
        }
    }
    const double lref = loss / (double) rows;

    struct ggml_tensor *out = ggml_cross_entropy_loss(ctx, logits, labels);
    ok(out != NULL && out->op == GGML_OP_CROSS_ENTROPY_LOSS && out->type == type && ggml_nelements(out) == 1 &&
           out->src[0] == logits && out->src[1] == labels,
       "cross_entropy_loss %s: one element of the logits' type, sources (logits, labels)", type_label(type));
    char what[160];
    snprintf(what, sizeof what, "cross_entropy_loss %s [%lld, %lld, %lld, %lld]%s", type_label(type),
             (long long) ne0, (long long) ne1, (long long) ne2, (long long) ne3, strided ? ", strided logits" : "");
    optest_check_all(ctx, out, &lref, type == GGML_TYPE_F32 ? 1e-12 : 1e-6, what);

    struct ggml_tensor *back = ggml_cross_entropy_loss_back(ctx, g, logits, labels);
    ok(back != NULL && back->op == GGML_OP_CROSS_ENTROPY_LOSS_BACK && back->type == type &&
           ggml_are_same_shape(back, logits) && back->src[0] == g && back->src[1] == logits && back->src[2] == labels,
       "cross_entropy_loss_back %s: the logits' shape and type, sources (g, logits, labels)", type_label(type));
    snprintf(what, sizeof what, "cross_entropy_loss_back %s [%lld, %lld, %lld, %lld]%s%s", type_label(type),
             (long long) ne0, (long long) ne1, (long long) ne2, (long long) ne3, strided ? ", strided logits" : "",
             normalized ? "" : ", labels not summing to 1");
    optest_check_all(ctx, back, dref, type == GGML_TYPE_F32 ? 1e-12 : 1e-6, what);
    if (normalized && type == GGML_TYPE_F32)
        check_fd(ctx, back, fd, what);
    free(fd);
    free(dref);
    free(yr);
    free(xr);
    ggml_free(ctx);
}

static void test_cross_entropy(void)
{
    uint64_t seed = 0xce1055;
    test_cross_entropy_case(GGML_TYPE_F32, 1, 1, 1, 1, false, true, &seed);
    test_cross_entropy_case(GGML_TYPE_F32, 10, 5, 4, 3, false, true, &seed);
    test_cross_entropy_case(GGML_TYPE_F32, 33, 3, 1, 1, true, true, &seed);
    test_cross_entropy_case(GGML_TYPE_F32, 257, 2, 1, 1, false, false, &seed);
    test_cross_entropy_case(GGML_TYPE_F16, 31, 3, 1, 1, true, true, &seed);
}

/* ------------------------------------------------------- optimizer steps */

/*
 * w, g, m, v [ne0, ne1, ne2] (g strided when asked); the reference is the
 * AdamW (or, sgd, SGD) update in double from the stored values; weights,
 * m and v are all checked.  Threshold 1e-12: a few F32 operations per
 * element (v stays >= 0, so the step's denominator is at least eps).
 */
static void test_opt_step_case(bool sgd, int64_t ne0, int64_t ne1, int64_t ne2, bool strided, uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    const int64_t ne[4] = { ne0, ne1, ne2, 1 };
    struct ggml_tensor *w = new_input(ctx, GGML_TYPE_F32, ne, false, seed, -1.0, 1.0);
    struct ggml_tensor *g = new_input(ctx, GGML_TYPE_F32, ne, strided, seed, -1.0, 1.0);
    struct ggml_tensor *m = new_input(ctx, GGML_TYPE_F32, ne, false, seed, -0.5, 0.5);
    struct ggml_tensor *v = new_input(ctx, GGML_TYPE_F32, ne, strided, seed, 0.0, 0.5);
    ggml_set_param(w);
    const int n_params = sgd ? 2 : 7;
    struct ggml_tensor *p = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n_params);
    const double pv[7] = { 1e-3, 0.9, 0.999, 1e-8, 0.1, 1.0 / (1.0 - 0.9 * 0.9), 1.0 / (1.0 - 0.999 * 0.999) };
    for (int i = 0; i < n_params; i++)
        optest_set(p, i, 0, 0, 0, (float) pv[i]);
    const int64_t n = ne0 * ne1 * ne2;
    double *wref = malloc((size_t) n * sizeof *wref), *mref = malloc((size_t) n * sizeof *mref);
    double *vref = malloc((size_t) n * sizeof *vref);
    double P[7];
    for (int i = 0; i < n_params; i++)
        P[i] = optest_get(p, i, 0, 0, 0);
    int64_t k = 0;
    for (int64_t i2 = 0; i2 < ne2; i2++)
        for (int64_t i1 = 0; i1 < ne1; i1++)
            for (int64_t i0 = 0; i0 < ne0; i0++, k++) {
                const double wv = optest_get(w, i0, i1, i2, 0), gv = optest_get(g, i0, i1, i2, 0);
                if (sgd) {
                    wref[k] = wv * (1.0 - P[0] * P[1]) - P[0] * gv;
                    continue;
                }
                mref[k] = optest_get(m, i0, i1, i2, 0) * P[1] + gv * (1.0 - P[1]);
                vref[k] = optest_get(v, i0, i1, i2, 0) * P[2] + gv * gv * (1.0 - P[2]);
                wref[k] = wv * (1.0 - P[0] * P[4]) - P[0] * (mref[k] * P[5]) / (sqrt(vref[k] * P[6]) + P[3]);
            }
    struct ggml_tensor *out = sgd ? ggml_opt_step_sgd(ctx, w, g, p) : ggml_opt_step_adamw(ctx, w, g, m, v, p);
    ok(out != NULL && out->op == (sgd ? GGML_OP_OPT_STEP_SGD : GGML_OP_OPT_STEP_ADAMW) && out->data == w->data &&
           ggml_are_same_shape(out, w),
       "opt_step_%s: a view of the weights", sgd ? "sgd" : "adamw");
    char what[128];
    snprintf(what, sizeof what, "opt_step_%s [%lld, %lld, %lld]%s", sgd ? "sgd" : "adamw", (long long) ne0,
             (long long) ne1, (long long) ne2, strided ? ", strided g and v" : "");
    struct ggml_tensor *keep[3] = { w, m, v }, *check[3] = { out, m, v };
    const double *refs[3] = { wref, mref, vref };
    check_inplace(ctx, out, keep, 3, check, refs, sgd ? 1 : 3, 1e-12, what);
    free(vref);
    free(mref);
    free(wref);
    ggml_free(ctx);
}

static void test_opt_step(void)
{
    uint64_t seed = 0xada3;
    for (int sgd = 0; sgd <= 1; sgd++) {
        test_opt_step_case(sgd, 1, 1, 1, false, &seed);
        test_opt_step_case(sgd, 10, 5, 4, false, &seed);
        test_opt_step_case(sgd, 33, 3, 2, true, &seed);
        test_opt_step_case(sgd, 257, 2, 1, true, &seed);
    }
}

/* -------------------------------------------------------------- ROPE_BACK */

/*
 * rope_ext_back in NORMAL (neighbour pairs) or NEOX (halves) mode, with
 * freq_scale 1, no YaRN, attn_factor 1 and n_dims <= ne0: pair i of a
 * token at position p turns by -theta, theta = p * base^(-2i / n_dims);
 * values past n_dims are copied.  Reference in double (threshold 1e-11),
 * plus the adjoint identity sum(rope(x) * dy) = sum(x * rope_back(dy))
 * against the forward op (relative 1e-5: two F32 computations).
 */
static void test_rope_back_case(int mode, int64_t ne0, int n_dims, int64_t nh, int64_t nt, bool strided,
                                uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    const int64_t ne[4] = { ne0, nh, nt, 1 };
    struct ggml_tensor *dy = new_input(ctx, GGML_TYPE_F32, ne, strided, seed, -1.0, 1.0);
    struct ggml_tensor *x = new_input(ctx, GGML_TYPE_F32, ne, false, seed, -1.0, 1.0);
    struct ggml_tensor *pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, nt);
    for (int64_t t = 0; t < nt; t++)
        optest_set(pos, t, 0, 0, 0, (double) (optest_next(seed) % 100));
    const double base = 10000.0;
    double *ref = malloc((size_t) (ne0 * nh * nt) * sizeof *ref);
    for (int64_t t = 0; t < nt; t++)
        for (int64_t h = 0; h < nh; h++) {
            double *out = ref + (t * nh + h) * ne0;
            for (int64_t i = 0; i < ne0; i++)
                out[i] = optest_get(dy, i, h, t, 0);
            for (int64_t i = 0; i < n_dims / 2; i++) {
                const double theta = optest_get(pos, t, 0, 0, 0) * pow(base, -2.0 * (double) i / n_dims);
                const int64_t j0 = mode == GGML_ROPE_TYPE_NEOX ? i : 2 * i;
                const int64_t j1 = mode == GGML_ROPE_TYPE_NEOX ? i + n_dims / 2 : 2 * i + 1;
                const double d0 = optest_get(dy, j0, h, t, 0), d1 = optest_get(dy, j1, h, t, 0);
                out[j0] = d0 * cos(theta) + d1 * sin(theta);
                out[j1] = -d0 * sin(theta) + d1 * cos(theta);
            }
        }
    struct ggml_tensor *back = ggml_rope_ext_back(ctx, dy, pos, NULL, n_dims, mode, 0, (float) base, 1.0f, 0.0f,
                                                  1.0f, 32.0f, 1.0f);
    ok(back != NULL && back->op == GGML_OP_ROPE_BACK && ggml_are_same_shape(back, dy) && back->src[0] == dy &&
           back->src[1] == pos,
       "rope_ext_back mode %d: a ROPE_BACK node of dy's shape", mode);
    char what[128];
    snprintf(what, sizeof what, "rope_ext_back mode %d [%lld, %lld, %lld] n_dims %d%s", mode, (long long) ne0,
             (long long) nh, (long long) nt, n_dims, strided ? ", strided dy" : "");
    optest_check_all(ctx, back, ref, 1e-11, what);

    struct ggml_tensor *fwd = ggml_rope_ext(ctx, x, pos, NULL, n_dims, mode, 0, (float) base, 1.0f, 0.0f, 1.0f,
                                            32.0f, 1.0f);
    enum ggml_status s1 = optest_compute(ctx, fwd, 2, false), s2 = optest_compute(ctx, back, 2, false);
    double lhs = 0.0, rhs = 0.0, mag = 0.0;
    for (int64_t t = 0; t < nt; t++)
        for (int64_t h = 0; h < nh; h++)
            for (int64_t i = 0; i < ne0; i++) {
                lhs += optest_get(fwd, i, h, t, 0) * optest_get(dy, i, h, t, 0);
                rhs += optest_get(x, i, h, t, 0) * optest_get(back, i, h, t, 0);
                mag += fabs(optest_get(x, i, h, t, 0) * optest_get(back, i, h, t, 0));
            }
    ok(s1 == GGML_STATUS_SUCCESS && s2 == GGML_STATUS_SUCCESS && fabs(lhs - rhs) <= 1e-5 * mag,
       "%s: the transpose of rope (%.9g vs %.9g)", what, lhs, rhs);
    free(ref);
    ggml_free(ctx);
}

/*
 * rope_multi_back (MROPE, IMROPE, VISION) with YaRN and an attention
 * factor: checked as the transpose of rope_multi by the adjoint identity.
 */
static void test_rope_multi_back_case(int mode, int64_t ne0, int n_dims, int64_t nh, int64_t nt, uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    const int64_t ne[4] = { ne0, nh, nt, 1 };
    struct ggml_tensor *dy = new_input(ctx, GGML_TYPE_F32, ne, false, seed, -1.0, 1.0);
    struct ggml_tensor *x = new_input(ctx, GGML_TYPE_F32, ne, true, seed, -1.0, 1.0);
    struct ggml_tensor *pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4 * nt);
    for (int64_t t = 0; t < 4 * nt; t++)
        optest_set(pos, t, 0, 0, 0, (double) (optest_next(seed) % 50));
    int sections[GGML_MROPE_SECTIONS] = { n_dims / 4, n_dims / 8, n_dims / 8, 0 };
    if (mode == GGML_ROPE_TYPE_VISION) {
        sections[0] = n_dims / 2;
        sections[1] = n_dims / 2;
        sections[2] = 0;
    }
    struct ggml_tensor *fwd = ggml_rope_multi(ctx, x, pos, NULL, n_dims, sections, mode, 64, 10000.0f, 0.5f, 1.0f,
                                              0.8f, 32.0f, 1.0f);
    struct ggml_tensor *back = ggml_rope_multi_back(ctx, dy, pos, NULL, n_dims, sections, mode, 64, 10000.0f, 0.5f,
                                                    1.0f, 0.8f, 32.0f, 1.0f);
    ok(back != NULL && back->op == GGML_OP_ROPE_BACK && fwd != NULL, "rope_multi_back mode %d: a ROPE_BACK node",
       mode);
    for (int use_ref = 0; use_ref <= 1; use_ref++)
        for (int n_threads = 1; n_threads <= 4; n_threads += 3) {
            enum ggml_status s1 = optest_compute(ctx, fwd, n_threads, use_ref);
            enum ggml_status s2 = optest_compute(ctx, back, n_threads, use_ref);
            double lhs = 0.0, rhs = 0.0, mag = 0.0;
            for (int64_t t = 0; t < nt; t++)
                for (int64_t h = 0; h < nh; h++)
                    for (int64_t i = 0; i < ne0; i++) {
                        lhs += optest_get(fwd, i, h, t, 0) * optest_get(dy, i, h, t, 0);
                        rhs += optest_get(x, i, h, t, 0) * optest_get(back, i, h, t, 0);
                        mag += fabs(optest_get(x, i, h, t, 0) * optest_get(back, i, h, t, 0));
                    }
            ok(s1 == GGML_STATUS_SUCCESS && s2 == GGML_STATUS_SUCCESS && fabs(lhs - rhs) <= 1e-5 * mag,
               "rope_multi_back mode %d [%lld, %lld, %lld] n_dims %d, %d threads, %s: the transpose of rope_multi "
               "(%.9g vs %.9g)", mode, (long long) ne0, (long long) nh, (long long) nt, n_dims, n_threads,
               use_ref ? "reference" : "fast", lhs, rhs);
        }
    ggml_free(ctx);
}

static void test_rope_back(void)
{
    uint64_t seed = 0x2013e;
    test_rope_back_case(GGML_ROPE_TYPE_NORMAL, 2, 2, 1, 1, false, &seed);
    test_rope_back_case(GGML_ROPE_TYPE_NORMAL, 34, 32, 3, 5, true, &seed);
    test_rope_back_case(GGML_ROPE_TYPE_NEOX, 64, 64, 2, 3, false, &seed);
    test_rope_back_case(GGML_ROPE_TYPE_NEOX, 66, 32, 3, 4, true, &seed);
    test_rope_multi_back_case(GGML_ROPE_TYPE_MROPE, 64, 32, 2, 3, &seed);
    test_rope_multi_back_case(GGML_ROPE_TYPE_IMROPE, 64, 64, 2, 3, &seed);
    test_rope_multi_back_case(GGML_ROPE_TYPE_VISION, 64, 32, 2, 3, &seed);
}

/* ---------------------------------------------------------------- errors */

static void test_errors(void)
{
    struct ggml_context *ctx = new_ctx();
    struct ggml_tensor *a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 2);
    struct ggml_tensor *b = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 2);
    struct ggml_tensor *other = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 1);
    struct ggml_tensor *q = ggml_new_tensor_3d(ctx, GGML_TYPE_Q8_0, 32, 3, 2);
    struct ggml_tensor *i32 = ggml_new_tensor_3d(ctx, GGML_TYPE_I32, 4, 3, 2);

    /* silu_back */
    ok(ggml_silu_back(ctx, a, b) != NULL, "silu_back: valid arguments give a tensor");
    is_int(tap_log_errors(), 0, "silu_back: valid arguments log nothing");
    ok(ggml_silu_back(ctx, a, other) == NULL, "silu_back: shapes that differ give NULL");
    logged_one_error("silu_back: shapes that differ log one error");
    ok(ggml_silu_back(ctx, i32, i32) == NULL, "silu_back: i32 tensors give NULL");
    logged_one_error("silu_back: i32 tensors log one error");
    ok(ggml_silu_back(ctx, NULL, b) == NULL && ggml_silu_back(ctx, a, NULL) == NULL,
       "silu_back: a NULL input gives NULL");
    is_int(tap_log_errors(), 0, "silu_back: a NULL input logs nothing");

    /* rms_norm_back */
    ok(ggml_rms_norm_back(ctx, a, b, 1e-6f) != NULL, "rms_norm_back: valid arguments give a tensor");
    is_int(tap_log_errors(), 0, "rms_norm_back: valid arguments log nothing");
    ok(ggml_rms_norm_back(ctx, a, other, 1e-6f) == NULL, "rms_norm_back: shapes that differ give NULL");
    logged_one_error("rms_norm_back: shapes that differ log one error");
    ok(ggml_rms_norm_back(ctx, q, q, 1e-6f) == NULL, "rms_norm_back: quantized tensors give NULL");
    logged_one_error("rms_norm_back: quantized tensors log one error");
    ok(ggml_rms_norm_back(ctx, a, b, -1.0f) == NULL, "rms_norm_back: eps < 0 gives NULL");
    logged_one_error("rms_norm_back: eps < 0 logs one error");
    ok(ggml_rms_norm_back(ctx, a, b, NAN) == NULL, "rms_norm_back: eps NaN gives NULL");
    logged_one_error("rms_norm_back: eps NaN logs one error");
    ok(ggml_rms_norm_back(ctx, NULL, b, 0.0f) == NULL && ggml_rms_norm_back(ctx, a, NULL, 0.0f) == NULL,
       "rms_norm_back: a NULL input gives NULL");
    is_int(tap_log_errors(), 0, "rms_norm_back: a NULL input logs nothing");

    /* soft_max_ext_back and _inplace */
    ok(ggml_soft_max_ext_back(ctx, a, b, 1.0f, 0.0f) != NULL && ggml_soft_max_ext_back_inplace(ctx, a, b, 1.0f, 0.0f),
       "soft_max_ext_back: valid arguments give a tensor");
    is_int(tap_log_errors(), 0, "soft_max_ext_back: valid arguments log nothing");
    ok(ggml_soft_max_ext_back(ctx, a, other, 1.0f, 0.0f) == NULL, "soft_max_ext_back: shapes that differ give NULL");
    logged_one_error("soft_max_ext_back: shapes that differ log one error");
    ok(ggml_soft_max_ext_back_inplace(ctx, a, other, 1.0f, 0.0f) == NULL,
       "soft_max_ext_back_inplace: shapes that differ give NULL");
    logged_one_error("soft_max_ext_back_inplace: shapes that differ log one error");
    ok(ggml_soft_max_ext_back(ctx, i32, i32, 1.0f, 0.0f) == NULL, "soft_max_ext_back: i32 tensors give NULL");
    logged_one_error("soft_max_ext_back: i32 tensors log one error");
    ok(ggml_soft_max_ext_back(ctx, a, b, 1.0f, -1.0f) == NULL, "soft_max_ext_back: max_bias < 0 gives NULL");
    logged_one_error("soft_max_ext_back: max_bias < 0 logs one error");
    ok(ggml_soft_max_ext_back_inplace(ctx, a, b, 1.0f, NAN) == NULL,
       "soft_max_ext_back_inplace: max_bias NaN gives NULL");
    logged_one_error("soft_max_ext_back_inplace: max_bias NaN logs one error");
    ok(ggml_soft_max_ext_back(ctx, NULL, b, 1.0f, 0.0f) == NULL &&
           ggml_soft_max_ext_back_inplace(ctx, a, NULL, 1.0f, 0.0f) == NULL,
       "soft_max_ext_back: a NULL input gives NULL");
    is_int(tap_log_errors(), 0, "soft_max_ext_back: a NULL input logs nothing");

    /* get_rows_back */
    struct ggml_tensor *g = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor *idx = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3);
    struct ggml_tensor *idx_long = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4);
    struct ggml_tensor *idx_f32 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    struct ggml_tensor *idx_2d = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 2);
    struct ggml_tensor *c = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 5);
    struct ggml_tensor *c_wide = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 5);
    ok(ggml_get_rows_back(ctx, g, idx, c) != NULL, "get_rows_back: valid arguments give a tensor");
    is_int(tap_log_errors(), 0, "get_rows_back: valid arguments log nothing");
    ok(ggml_get_rows_back(ctx, g, idx_f32, c) == NULL, "get_rows_back: f32 indices give NULL");
    logged_one_error("get_rows_back: f32 indices log one error");
    ok(ggml_get_rows_back(ctx, g, idx_2d, c) == NULL, "get_rows_back: a matrix of indices gives NULL");
    logged_one_error("get_rows_back: a matrix of indices logs one error");
    ok(ggml_get_rows_back(ctx, g, idx_long, c) == NULL, "get_rows_back: more indices than gradient rows give NULL");
    logged_one_error("get_rows_back: more indices than gradient rows log one error");
    ok(ggml_get_rows_back(ctx, g, idx, c_wide) == NULL, "get_rows_back: rows of another length give NULL");
    logged_one_error("get_rows_back: rows of another length log one error");
    ok(ggml_get_rows_back(ctx, a, idx, c) == NULL, "get_rows_back: 3-d gradients give NULL");
    logged_one_error("get_rows_back: 3-d gradients log one error");
    ok(ggml_get_rows_back(ctx, NULL, idx, c) == NULL && ggml_get_rows_back(ctx, g, NULL, c) == NULL &&
           ggml_get_rows_back(ctx, g, idx, NULL) == NULL,
       "get_rows_back: a NULL input gives NULL");
    is_int(tap_log_errors(), 0, "get_rows_back: a NULL input logs nothing");

    /* cross_entropy_loss and _back */
    struct ggml_tensor *one = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    struct ggml_tensor *two = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    ok(ggml_cross_entropy_loss(ctx, a, b) != NULL, "cross_entropy_loss: valid arguments give a tensor");
    is_int(tap_log_errors(), 0, "cross_entropy_loss: valid arguments log nothing");
    ok(ggml_cross_entropy_loss(ctx, a, other) == NULL, "cross_entropy_loss: shapes that differ give NULL");
    logged_one_error("cross_entropy_loss: shapes that differ log one error");
    ok(ggml_cross_entropy_loss(ctx, i32, i32) == NULL, "cross_entropy_loss: i32 tensors give NULL");
    logged_one_error("cross_entropy_loss: i32 tensors log one error");
    ok(ggml_cross_entropy_loss(ctx, NULL, b) == NULL && ggml_cross_entropy_loss(ctx, a, NULL) == NULL,
       "cross_entropy_loss: a NULL input gives NULL");
    is_int(tap_log_errors(), 0, "cross_entropy_loss: a NULL input logs nothing");
    ok(ggml_cross_entropy_loss_back(ctx, one, a, b) != NULL, "cross_entropy_loss_back: valid arguments give a tensor");
    is_int(tap_log_errors(), 0, "cross_entropy_loss_back: valid arguments log nothing");
    ok(ggml_cross_entropy_loss_back(ctx, two, a, b) == NULL,
       "cross_entropy_loss_back: a loss gradient of two elements gives NULL");
    logged_one_error("cross_entropy_loss_back: a loss gradient of two elements logs one error");
    ok(ggml_cross_entropy_loss_back(ctx, one, a, other) == NULL,
       "cross_entropy_loss_back: shapes that differ give NULL");
    logged_one_error("cross_entropy_loss_back: shapes that differ log one error");
    ok(ggml_cross_entropy_loss_back(ctx, one, q, q) == NULL, "cross_entropy_loss_back: quantized logits give NULL");
    logged_one_error("cross_entropy_loss_back: quantized logits log one error");
    ok(ggml_cross_entropy_loss_back(ctx, NULL, a, b) == NULL && ggml_cross_entropy_loss_back(ctx, one, NULL, b) == NULL &&
           ggml_cross_entropy_loss_back(ctx, one, a, NULL) == NULL,
       "cross_entropy_loss_back: a NULL input gives NULL");
    is_int(tap_log_errors(), 0, "cross_entropy_loss_back: a NULL input logs nothing");

    /* opt_step_adamw and opt_step_sgd */
    struct ggml_tensor *w = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 2);
    struct ggml_tensor *w_fixed = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 2);
    struct ggml_tensor *w16 = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 4, 3, 2);
    struct ggml_tensor *g16 = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 4, 3, 2);
    struct ggml_tensor *p7 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 7), *p2 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    struct ggml_tensor *p6 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 6), *p2i = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 2);
    ggml_set_param(w);
    ggml_set_param(w16);
    ok(ggml_opt_step_adamw(ctx, w, a, b, b, p7) != NULL && ggml_opt_step_sgd(ctx, w, a, p2) != NULL,
       "opt_step: valid arguments give a tensor");
    is_int(tap_log_errors(), 0, "opt_step: valid arguments log nothing");
    ok(ggml_opt_step_adamw(ctx, w_fixed, a, b, b, p7) == NULL, "opt_step_adamw: weights not trainable give NULL");
    logged_one_error("opt_step_adamw: weights not trainable log one error");
    ok(ggml_opt_step_sgd(ctx, w_fixed, a, p2) == NULL, "opt_step_sgd: weights not trainable give NULL");
    logged_one_error("opt_step_sgd: weights not trainable log one error");
    ok(ggml_opt_step_adamw(ctx, w16, g16, g16, g16, p7) == NULL, "opt_step_adamw: f16 weights give NULL");
    logged_one_error("opt_step_adamw: f16 weights log one error");
    ok(ggml_opt_step_adamw(ctx, w, a, other, b, p7) == NULL, "opt_step_adamw: m of another shape gives NULL");
    logged_one_error("opt_step_adamw: m of another shape logs one error");
    ok(ggml_opt_step_adamw(ctx, w, a, b, g16, p7) == NULL, "opt_step_adamw: an f16 v gives NULL");
    logged_one_error("opt_step_adamw: an f16 v logs one error");
    ok(ggml_opt_step_adamw(ctx, w, a, b, b, p6) == NULL, "opt_step_adamw: 6 parameters give NULL");
    logged_one_error("opt_step_adamw: 6 parameters log one error");
    ok(ggml_opt_step_sgd(ctx, w, other, p2) == NULL, "opt_step_sgd: a gradient of another shape gives NULL");
    logged_one_error("opt_step_sgd: a gradient of another shape logs one error");
    ok(ggml_opt_step_sgd(ctx, w, a, p2i) == NULL, "opt_step_sgd: i32 parameters give NULL");
    logged_one_error("opt_step_sgd: i32 parameters log one error");
    ok(ggml_opt_step_sgd(ctx, w, a, p7) == NULL, "opt_step_sgd: 7 parameters give NULL");
    logged_one_error("opt_step_sgd: 7 parameters log one error");
    ok(ggml_opt_step_adamw(ctx, NULL, a, b, b, p7) == NULL && ggml_opt_step_adamw(ctx, w, a, b, NULL, p7) == NULL &&
           ggml_opt_step_adamw(ctx, w, a, b, b, NULL) == NULL && ggml_opt_step_sgd(ctx, w, NULL, p2) == NULL &&
           ggml_opt_step_sgd(ctx, w, a, NULL) == NULL,
       "opt_step: a NULL input gives NULL");
    is_int(tap_log_errors(), 0, "opt_step: a NULL input logs nothing");

    /* rope_ext_back and rope_multi_back: the forward's checks */
    struct ggml_tensor *r = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 2, 3);
    struct ggml_tensor *rpos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3);
    struct ggml_tensor *rpos4 = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 12);
    int sec[GGML_MROPE_SECTIONS] = { 2, 1, 1, 0 };
    ok(ggml_rope_ext_back(ctx, r, rpos, NULL, 8, 0, 0, 1e4f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f) != NULL &&
           ggml_rope_multi_back(ctx, r, rpos4, NULL, 8, sec, GGML_ROPE_TYPE_MROPE, 0, 1e4f, 1.0f, 0.0f, 1.0f, 32.0f,
                                1.0f) != NULL,
       "rope_back: valid arguments give a tensor");
    is_int(tap_log_errors(), 0, "rope_back: valid arguments log nothing");
    ok(ggml_rope_ext_back(ctx, r, rpos, NULL, 7, 0, 0, 1e4f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f) == NULL,
       "rope_ext_back: odd n_dims gives NULL");
    logged_one_error("rope_ext_back: odd n_dims logs one error");
    ok(ggml_rope_ext_back(ctx, r, rpos4, NULL, 8, 0, 0, 1e4f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f) == NULL,
       "rope_ext_back: too many positions give NULL");
    logged_one_error("rope_ext_back: too many positions log one error");
    ok(ggml_rope_multi_back(ctx, r, rpos4, NULL, 8, NULL, GGML_ROPE_TYPE_MROPE, 0, 1e4f, 1.0f, 0.0f, 1.0f, 32.0f,
                            1.0f) == NULL,
       "rope_multi_back: no sections give NULL");
    logged_one_error("rope_multi_back: no sections log one error");
    ok(ggml_rope_ext_back(ctx, NULL, rpos, NULL, 8, 0, 0, 1e4f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f) == NULL &&
           ggml_rope_multi_back(ctx, r, NULL, NULL, 8, sec, GGML_ROPE_TYPE_MROPE, 0, 1e4f, 1.0f, 0.0f, 1.0f, 32.0f,
                                1.0f) == NULL,
       "rope_back: a NULL input gives NULL");
    is_int(tap_log_errors(), 0, "rope_back: a NULL input logs nothing");

    ggml_free(ctx);
}

/* ---------------------------------------------------------- IM2COL_BACK */

/*
 * Reference: the adjoint of im2col written as a scatter, in double: each
 * column entry (n, oy, ox; c, ky, kx) of the gradient goes to the input
 * sample it read, when that sample lies inside the input.
 */
static void test_im2col_back_case(bool is_2d, const int64_t in_ne[4], int64_t kw, int64_t kh, int s0, int s1,
                                  int p0, int p1, int d0, int d1, bool strided, uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    const int64_t IW = in_ne[0], IH = is_2d ? in_ne[1] : 1, IC = is_2d ? in_ne[2] : in_ne[1];
    const int64_t N = is_2d ? in_ne[3] : in_ne[2];
    struct ggml_tensor *kernel = is_2d ? ggml_new_tensor_4d(ctx, GGML_TYPE_F16, kw, kh, IC, 2)
                                       : ggml_new_tensor_3d(ctx, GGML_TYPE_F16, kw, IC, 2);
    const int64_t OW = (IW + 2 * p0 - d0 * (kw - 1) - 1) / s0 + 1;
    const int64_t OH = is_2d ? (IH + 2 * p1 - d1 * (kh - 1) - 1) / s1 + 1 : 1;
    const int64_t gne[4] = { IC * kh * kw, OW, is_2d ? OH : N, is_2d ? N : 1 };
    struct ggml_tensor *grad = new_input(ctx, GGML_TYPE_F32, gne, strided, seed, -1.0, 1.0);
    int64_t ne[4] = { in_ne[0], in_ne[1], in_ne[2], in_ne[3] };
    struct ggml_tensor *out = ggml_im2col_back(ctx, grad, kernel, ne, s0, s1, p0, p1, d0, d1, is_2d);

    const int64_t n_in = IW * IH * IC * N;
    double *ref = calloc((size_t) n_in, sizeof *ref);
    for (int64_t n = 0; n < N; n++)
        for (int64_t oy = 0; oy < OH; oy++)
            for (int64_t ox = 0; ox < OW; ox++)
                for (int64_t c = 0; c < IC; c++)
                    for (int64_t ky = 0; ky < kh; ky++)
                        for (int64_t kx = 0; kx < kw; kx++) {
                            const int64_t x = ox * s0 - p0 + kx * d0, y = is_2d ? oy * s1 - p1 + ky * d1 : 0;
                            if (x < 0 || x >= IW || y < 0 || y >= IH)
                                continue;
                            const int64_t col = (c * kh + ky) * kw + kx;
                            const double g = is_2d ? optest_get(grad, col, ox, oy, n) : optest_get(grad, col, ox, n, 0);
                            ref[((n * IC + c) * IH + y) * IW + x] += g;
                        }
    char what[160];
    snprintf(what, sizeof what, "im2col_back %s in [%lld,%lld,%lld,%lld] k %lldx%lld s %d,%d p %d,%d d %d,%d%s",
             is_2d ? "2-d" : "1-d", (long long) in_ne[0], (long long) in_ne[1], (long long) in_ne[2],
             (long long) in_ne[3], (long long) kw, (long long) kh, s0, s1, p0, p1, d0, d1,
             strided ? " strided" : "");
    if (ok(out != NULL && out->type == GGML_TYPE_F32 && out->op == GGML_OP_IM2COL_BACK, "%s: built", what))
        optest_check_all(ctx, out, ref, 1e-12, what);
    free(ref);
    ggml_free(ctx);
}

static void test_im2col_back(void)
{
    uint64_t seed = 0x1a2c01bac4ULL;
    const int64_t a[4] = { 7, 5, 3, 2 }, b[4] = { 11, 4, 2, 1 }, c[4] = { 9, 3, 1, 1 };
    test_im2col_back_case(true, a, 3, 2, 1, 1, 0, 0, 1, 1, false, &seed);
    test_im2col_back_case(true, a, 3, 3, 2, 1, 1, 2, 1, 2, true, &seed);
    test_im2col_back_case(true, b, 2, 3, 3, 2, 2, 1, 2, 1, false, &seed);
    test_im2col_back_case(false, c, 3, 1, 1, 0, 1, 0, 1, 0, false, &seed);
    test_im2col_back_case(false, b, 4, 1, 2, 0, 3, 0, 2, 0, true, &seed);
}

/* --------------------------------------------------------- POOL_2D_BACK */

/*
 * Reference in double: each window passes its gradient to the first
 * largest sample inside the input (MAX) or k0*k1-th of it to every sample
 * inside (AVG).
 */
static void test_pool_2d_back_case(enum ggml_op_pool op, const int64_t ne[4], int k0, int k1, int s0, int s1,
                                   int p0, int p1, bool strided, uint64_t *seed)
{
    struct ggml_context *ctx = new_ctx();
    struct ggml_tensor *af = new_input(ctx, GGML_TYPE_F32, ne, strided, seed, -1.0, 1.0);
    const int64_t OW = (ne[0] + 2 * p0 - k0) / s0 + 1, OH = (ne[1] + 2 * p1 - k1) / s1 + 1;
    const int64_t gne[4] = { OW, OH, ne[2], ne[3] };
    struct ggml_tensor *grad = new_input(ctx, GGML_TYPE_F32, gne, false, seed, -1.0, 1.0);
    struct ggml_tensor *out = ggml_pool_2d_back(ctx, grad, af, op, k0, k1, s0, s1, (float) p0, (float) p1);

    const int64_t n = ne[0] * ne[1] * ne[2] * ne[3];
    double *ref = calloc((size_t) n, sizeof *ref);
    for (int64_t i3 = 0; i3 < ne[3]; i3++)
        for (int64_t i2 = 0; i2 < ne[2]; i2++)
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OW; ox++) {
                    const double g = optest_get(grad, ox, oy, i2, i3);
                    int64_t bx = -1, by = -1;
                    double best = 0.0;
                    for (int64_t y = oy * s1 - p1; y < oy * s1 - p1 + k1; y++)
                        for (int64_t x = ox * s0 - p0; x < ox * s0 - p0 + k0; x++) {
                            if (x < 0 || x >= ne[0] || y < 0 || y >= ne[1])
                                continue;
                            const int64_t at = ((i3 * ne[2] + i2) * ne[1] + y) * ne[0] + x;
                            if (op == GGML_OP_POOL_AVG) {
                                ref[at] += g / (k0 * k1);
                            } else if (bx < 0 || optest_get(af, x, y, i2, i3) > best) {
                                best = optest_get(af, x, y, i2, i3);
                                bx = x;
                                by = y;
                            }
                        }
                    if (op == GGML_OP_POOL_MAX && bx >= 0)
                        ref[((i3 * ne[2] + i2) * ne[1] + by) * ne[0] + bx] += g;
                }
    char what[160];
    snprintf(what, sizeof what, "pool_2d_back %s [%lld,%lld,%lld,%lld] k %dx%d s %d,%d p %d,%d%s",
             op == GGML_OP_POOL_MAX ? "max" : "avg", (long long) ne[0], (long long) ne[1], (long long) ne[2],
             (long long) ne[3], k0, k1, s0, s1, p0, p1, strided ? " strided" : "");
    if (ok(out != NULL && out->type == GGML_TYPE_F32 && out->op == GGML_OP_POOL_2D_BACK, "%s: built", what))
        optest_check_all(ctx, out, ref, 1e-12, what);
    free(ref);
    ggml_free(ctx);
}

static void test_pool_2d_back(void)
{
    uint64_t seed = 0x9001bacULL;
    const int64_t a[4] = { 7, 5, 3, 2 }, b[4] = { 33, 3, 1, 1 }, c[4] = { 1, 1, 2, 1 };
    for (int op = GGML_OP_POOL_MAX; op <= GGML_OP_POOL_AVG; op++) {
        test_pool_2d_back_case((enum ggml_op_pool) op, a, 2, 2, 2, 2, 0, 0, false, &seed);
        test_pool_2d_back_case((enum ggml_op_pool) op, a, 3, 2, 1, 1, 1, 1, true, &seed);
        test_pool_2d_back_case((enum ggml_op_pool) op, b, 3, 3, 2, 1, 1, 1, false, &seed);
        test_pool_2d_back_case((enum ggml_op_pool) op, c, 1, 1, 1, 1, 0, 0, false, &seed);
    }
}

/* Constructor errors of the two ops above: one message each, NULL. */
static void test_conv_pool_back_errors(void)
{
    struct ggml_context *ctx = new_ctx();
    struct ggml_tensor *kernel = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 2, 1);
    struct ggml_tensor *grad = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 18, 5, 3, 1);
    int64_t ne[4] = { 7, 5, 2, 1 };
    /* output [IC*KH*KW, OW, OH, N] = [18, 5, 3, 1] without padding; padding 1 would make OH 5 */
    ok(ggml_im2col_back(ctx, grad, kernel, ne, 1, 1, 0, 0, 1, 1, true) != NULL, "im2col_back: a fitting shape");
    ok(ggml_im2col_back(ctx, grad, kernel, ne, 1, 1, 0, 1, 1, 1, true) == NULL, "im2col_back: a wrong output height");
    logged_one_error("im2col_back: a shape mismatch is one error");
    ok(ggml_im2col_back(ctx, grad, kernel, NULL, 1, 1, 0, 1, 1, 1, true) == NULL, "im2col_back: NULL ne");
    logged_one_error("im2col_back: NULL ne is one error");
    ok(ggml_im2col_back(ctx, grad, kernel, ne, 0, 1, 0, 1, 1, 1, true) == NULL, "im2col_back: stride 0");
    logged_one_error("im2col_back: stride 0 is one error");
    ok(ggml_im2col_back(ctx, NULL, kernel, ne, 1, 1, 0, 1, 1, 1, true) == NULL && tap_log_errors() == 0,
       "im2col_back: a NULL input gives NULL silently");

    struct ggml_tensor *af = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 7, 5, 3, 1);
    struct ggml_tensor *pg = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 2, 3, 1);
    ok(ggml_pool_2d_back(ctx, pg, af, GGML_OP_POOL_MAX, 2, 2, 2, 2, 0, 0) != NULL, "pool_2d_back: a fitting shape");
    ok(ggml_pool_2d_back(ctx, pg, af, GGML_OP_POOL_MAX, 2, 2, 1, 2, 0, 0) == NULL, "pool_2d_back: a wrong shape");
    logged_one_error("pool_2d_back: a shape mismatch is one error");
    ok(ggml_pool_2d_back(ctx, pg, af, GGML_OP_POOL_COUNT, 2, 2, 2, 2, 0, 0) == NULL, "pool_2d_back: unknown op");
    logged_one_error("pool_2d_back: an unknown pooling function is one error");
    ok(ggml_pool_2d_back(ctx, pg, af, GGML_OP_POOL_AVG, 2, 0, 2, 2, 0, 0) == NULL, "pool_2d_back: kernel 0");
    logged_one_error("pool_2d_back: a zero kernel is one error");
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();
    test_silu_back();
    test_rms_norm_back();
    test_soft_max_back();
    test_get_rows_back();
    test_cross_entropy();
    test_opt_step();
    test_rope_back();
    test_im2col_back();
    test_pool_2d_back();
    test_conv_pool_back_errors();
    test_errors();
    return tap_done();
}
