/*
 * test-op-unary.c - the element-wise ops of one source: ADD1, SCALE, SQR,
 * SQRT, LOG, SIN, COS, CLAMP, LEAKY_RELU, every UNARY function and the GLU
 * family (fused, swapped and split).  Types F32, F16, BF16 (and quantized
 * sources for ADD1), odd shapes, strided inputs, in-place forms, 1..4
 * threads, reference and fast kernels, op_params layouts, and every
 * constructor error path.
 *
 * The expected values are computed here in double precision from the inputs
 * as stored (so a 16-bit input is compared after its own rounding).  One
 * "ok" line covers the 8 computations of a case (1..4 threads, fast and
 * reference kernels) and reports the worst NMSE.
 *
 * Thresholds (NMSE, by result type), see result_threshold():
 *   F32   1e-10  each kernel evaluates its formula in float (libm's expf,
 *                tanhf, erff, ... are within a few ulp), so the relative
 *                error per element is ~1e-7 and the NMSE ~1e-13; 1e-10 still
 *                catches any wrong formula, constant or index by orders of
 *                magnitude.  GELU is the tanh approximation (the op's
 *                definition), so the reference is that formula in double;
 *                test_gelu_approximation() separately bounds its distance to
 *                the erf form.
 *   F16   1e-6   the result is rounded to 11 significant bits (relative
 *                error <= 2^-11, NMSE <= ~2.4e-7 even for a single element,
 *                as long as the result is not subnormal: input ranges are
 *                chosen so that results are 0 or above 6.1e-5 in magnitude).
 *   BF16  1e-4   8 significant bits (relative error <= 2^-8, NMSE <= ~1.5e-5
 *                for a single element).
 *   Q8_0  1e-4, Q5_x 5e-3, Q4_x 2e-2 (ADD1 re-encodes its result): the
 *                rounding step of a block is max|x|/127, /16, /8 (Q5_1, Q4_1:
 *                the block's range /31, /15); the ADD1 results lie in
 *                [-1.5, 2.5] (mean square ~1.6), so step^2/12 over the mean
 *                square is about 3e-6, 1.3e-3 and 5e-3; the thresholds leave
 *                a factor 4 or more.
 */
#include <stdio.h>

#include "tap.h"
#include "op-test.h"

typedef struct ggml_tensor *(*ctor1)(struct ggml_context *, struct ggml_tensor *);
typedef struct ggml_tensor *(*ctor2)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *);

/* Layout of a test input. */
enum layout {
    LAYOUT_CONTIGUOUS,
    LAYOUT_ROW_VIEW,   /* a column slice of a wider tensor: rows strided, dims 2..3 packed */
    LAYOUT_PERMUTED,   /* dims 1 and 2 swapped: rows contiguous, nothing else packed */
};

static const char *layout_name(enum layout layout)
{
    return layout == LAYOUT_ROW_VIEW ? " row-view" : layout == LAYOUT_PERMUTED ? " permuted" : "";
}

static double result_threshold(enum ggml_type type)
{
    switch (type) {
    case GGML_TYPE_F32:  return 1e-10;
    case GGML_TYPE_F16:  return 1e-6;
    case GGML_TYPE_Q8_0: return 1e-4;
    case GGML_TYPE_Q5_0:
    case GGML_TYPE_Q5_1: return 5e-3;
    case GGML_TYPE_Q4_0:
    case GGML_TYPE_Q4_1: return 2e-2;
    default:             return 1e-4;
    }
}

/* A filled input of shape ne, type and layout (a view when not contiguous). */
static struct ggml_tensor *make_input(struct ggml_context *ctx, enum ggml_type type, const int64_t ne[4],
                                      enum layout layout, uint64_t *seed, double lo, double hi)
{
    struct ggml_tensor *base;
    switch (layout) {
    case LAYOUT_ROW_VIEW:
        base = ggml_new_tensor_4d(ctx, type, ne[0] + 7, ne[1], ne[2], ne[3]);
        optest_fill(base, seed, lo, hi);
        return ggml_view_4d(ctx, base, ne[0], ne[1], ne[2], ne[3], base->nb[1], base->nb[2], base->nb[3],
                            3 * ggml_type_size(type));
    case LAYOUT_PERMUTED:
        base = ggml_new_tensor_4d(ctx, type, ne[0], ne[2], ne[1], ne[3]);
        optest_fill(base, seed, lo, hi);
        return ggml_permute(ctx, base, 0, 2, 1, 3);
    default:
        base = ggml_new_tensor(ctx, type, 4, ne);
        optest_fill(base, seed, lo, hi);
        return base;
    }
}

/*
 * A batch: the cases of one op, each a node of one graph with its expected
 * values.  The graph is computed 8 times (1..4 threads, fast and reference
 * kernels); before each run the results are poisoned with NaN so that a
 * kernel that writes nothing cannot pass on an earlier run's values.
 * Batching keeps the test fast: one graph computation costs about a
 * millisecond when the pool has more threads than the machine has cores.
 */
#define MAX_BATCH 64

struct batch_case {
    struct ggml_tensor *out;
    double *ref;
    double threshold;
    bool ok;
    double worst;
    char label[128];
    char failure[96];
};

struct batch {
    int n;
    struct batch_case c[MAX_BATCH];
};

static void batch_add(struct batch *b, struct ggml_tensor *out, double *ref, double threshold, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void batch_add(struct batch *b, struct ggml_tensor *out, double *ref, double threshold, const char *fmt, ...)
{
    if (b->n == MAX_BATCH) {
        ok(false, "test bug: batch full");
        free(ref);
        return;
    }
    struct batch_case *c = &b->c[b->n++];
    c->out = out;
    c->ref = ref;
    c->threshold = threshold;
    c->ok = out != NULL;
    c->worst = out != NULL ? 0.0 : INFINITY;
    snprintf(c->failure, sizeof c->failure, "%s", out != NULL ? "" : "the constructor gave NULL");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->label, sizeof c->label, fmt, ap);
    va_end(ap);
}

static void batch_run(struct ggml_context *ctx, struct batch *b)
{
    struct ggml_cgraph *graph = ggml_new_graph_custom(ctx, 1024, false);
    for (int i = 0; i < b->n; i++)
        if (b->c[i].out != NULL)
            ggml_build_forward_expand(graph, b->c[i].out);
    for (int use_ref = 0; use_ref <= 1; use_ref++)
        for (int n_threads = 1; n_threads <= 4; n_threads++) {
            for (int i = 0; i < b->n; i++)
                if (b->c[i].out != NULL && b->c[i].out->view_src == NULL)
                    memset(b->c[i].out->data, 0xff, ggml_nbytes(b->c[i].out));
            struct ggml_cplan plan = ggml_graph_plan(graph, n_threads, NULL);
            plan.use_ref = use_ref;
            void *work = plan.work_size ? malloc(plan.work_size) : NULL;
            plan.work_data = work;
            enum ggml_status status = ggml_graph_compute(graph, &plan);
            free(work);
            for (int i = 0; i < b->n; i++) {
                struct batch_case *c = &b->c[i];
                if (c->out == NULL)
                    continue;
                double nmse = status == GGML_STATUS_SUCCESS ? optest_nmse(c->out, c->ref) : INFINITY;
                if (nmse > c->worst || isnan(nmse))
                    c->worst = nmse;
                if (!(nmse <= c->threshold) && c->ok) {
                    c->ok = false;
                    snprintf(c->failure, sizeof c->failure, "%d threads, %s kernel: status %d, nmse %.3g",
                             n_threads, use_ref ? "reference" : "fast", (int) status, nmse);
                }
            }
        }
    for (int i = 0; i < b->n; i++) {
        struct batch_case *c = &b->c[i];
        ok(c->ok, "%s: worst nmse %.3g (1..4 threads, fast and reference)", c->label, c->worst);
        if (!c->ok)
            tap_diag("%s", c->failure);
        free(c->ref);
    }
    b->n = 0;
}

/* ------------------------------------------------------ one-source ops */

static double sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }
/* 0.5*x*(1 + tanh(u)) and 0.5*x*(1 + erf(x/sqrt 2)) written without cancellation for x << 0 */
static double gelu_tanh_d(double x)
{
    const double u = sqrt(2.0 / 3.14159265358979323846) * x * (1.0 + 0.044715 * x * x);
    return x / (1.0 + exp(-2.0 * u));
}

static double gelu_erf_d(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }
static double softplus_d(double x) { return log1p(exp(x)); }

static double ref_sqr(double x) { return x * x; }
static double ref_sqrt(double x) { return sqrt(x); }
static double ref_log(double x) { return log(x); }
static double ref_sin(double x) { return sin(x); }
static double ref_cos(double x) { return cos(x); }
static double ref_abs(double x) { return fabs(x); }
static double ref_sgn(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }
static double ref_neg(double x) { return -x; }
static double ref_step(double x) { return x > 0 ? 1.0 : 0.0; }
static double ref_tanh(double x) { return tanh(x); }
static double ref_elu(double x) { return x > 0 ? x : expm1(x); }
static double ref_relu(double x) { return x > 0 ? x : 0.0; }
static double ref_sigmoid(double x) { return sigmoid_d(x); }
static double ref_gelu(double x) { return gelu_tanh_d(x); }
static double ref_gelu_quick(double x) { return x * sigmoid_d(1.702 * x); }
static double ref_silu(double x) { return x * sigmoid_d(x); }
static double ref_hardsigmoid(double x) { return fmin(1.0, fmax(0.0, (x + 3.0) / 6.0)); }
static double ref_hardswish(double x) { return x * ref_hardsigmoid(x); }
static double ref_exp(double x) { return exp(x); }
static double ref_expm1(double x) { return expm1(x); }
static double ref_softplus(double x) { return softplus_d(x); }
static double ref_gelu_erf(double x) { return gelu_erf_d(x); }
static double ref_floor(double x) { return floor(x); }
static double ref_ceil(double x) { return ceil(x); }
static double ref_round(double x) { return round(x); }
static double ref_trunc(double x) { return trunc(x); }

/* Parameters of the ops that take some. */
#define SCALE_S      (-1.25f)
#define SCALE_BIAS_S 0.5f
#define SCALE_BIAS_B (-0.75f)
#define CLAMP_MIN    (-0.5f)
#define CLAMP_MAX    0.8f
#define LEAKY_SLOPE  0.1f
#define XIELU_ALPHA_N 0.8f
#define XIELU_ALPHA_P 0.6f
#define XIELU_BETA    0.5f
#define XIELU_EPS     (-1e-6f)

static double ref_scale(double x) { return x * SCALE_S; }
static double ref_scale_bias(double x) { return x * SCALE_BIAS_S + SCALE_BIAS_B; }
static double ref_clamp(double x) { return fmax(CLAMP_MIN, fmin(CLAMP_MAX, x)); }
static double ref_leaky_relu(double x) { return x > 0 ? x : LEAKY_SLOPE * x; }

static double ref_xielu(double x)
{
    const double alpha_p = softplus_d(XIELU_ALPHA_P), alpha_n = XIELU_BETA + softplus_d(XIELU_ALPHA_N);
    if (x > 0)
        return alpha_p * x * x + XIELU_BETA * x;
    return (expm1(fmin(x, XIELU_EPS)) - x) * alpha_n + XIELU_BETA * x;
}

static struct ggml_tensor *make_scale(struct ggml_context *c, struct ggml_tensor *a) { return ggml_scale(c, a, SCALE_S); }
static struct ggml_tensor *make_scale_inplace(struct ggml_context *c, struct ggml_tensor *a) { return ggml_scale_inplace(c, a, SCALE_S); }
static struct ggml_tensor *make_scale_bias(struct ggml_context *c, struct ggml_tensor *a) { return ggml_scale_bias(c, a, SCALE_BIAS_S, SCALE_BIAS_B); }
static struct ggml_tensor *make_scale_bias_inplace(struct ggml_context *c, struct ggml_tensor *a) { return ggml_scale_bias_inplace(c, a, SCALE_BIAS_S, SCALE_BIAS_B); }
static struct ggml_tensor *make_clamp(struct ggml_context *c, struct ggml_tensor *a) { return ggml_clamp(c, a, CLAMP_MIN, CLAMP_MAX); }
static struct ggml_tensor *make_leaky(struct ggml_context *c, struct ggml_tensor *a) { return ggml_leaky_relu(c, a, LEAKY_SLOPE, false); }
static struct ggml_tensor *make_leaky_inplace(struct ggml_context *c, struct ggml_tensor *a) { return ggml_leaky_relu(c, a, LEAKY_SLOPE, true); }
static struct ggml_tensor *make_xielu(struct ggml_context *c, struct ggml_tensor *a) { return ggml_xielu(c, a, XIELU_ALPHA_N, XIELU_ALPHA_P, XIELU_BETA, XIELU_EPS); }
static struct ggml_tensor *make_unary_tanh(struct ggml_context *c, struct ggml_tensor *a) { return ggml_unary(c, a, GGML_UNARY_OP_TANH); }
static struct ggml_tensor *make_unary_tanh_inplace(struct ggml_context *c, struct ggml_tensor *a) { return ggml_unary_inplace(c, a, GGML_UNARY_OP_TANH); }

#define NO_UNARY (-1)

static const struct unary_case {
    const char *name;
    ctor1 make, make_inplace;      /* make_inplace NULL: no in-place form */
    enum ggml_op op;
    int unary_op;                  /* for GGML_OP_UNARY */
    double (*ref)(double);
    double lo, hi;                 /* input range */
    enum layout strided;           /* the strided layout tried (ROW_VIEW where the constructor needs packed rows
                                      or contiguous_1; UNARY takes any rows that are contiguous) */
} unary_cases[] = {
    { "sqr", ggml_sqr, ggml_sqr_inplace, GGML_OP_SQR, NO_UNARY, ref_sqr, -3, 3, LAYOUT_PERMUTED },
    { "sqrt", ggml_sqrt, ggml_sqrt_inplace, GGML_OP_SQRT, NO_UNARY, ref_sqrt, 0.05, 4, LAYOUT_PERMUTED },
    { "log", ggml_log, ggml_log_inplace, GGML_OP_LOG, NO_UNARY, ref_log, 0.05, 4, LAYOUT_PERMUTED },
    { "sin", ggml_sin, ggml_sin_inplace, GGML_OP_SIN, NO_UNARY, ref_sin, -6, 6, LAYOUT_PERMUTED },
    { "cos", ggml_cos, ggml_cos_inplace, GGML_OP_COS, NO_UNARY, ref_cos, -6, 6, LAYOUT_PERMUTED },
    { "scale", make_scale, make_scale_inplace, GGML_OP_SCALE, NO_UNARY, ref_scale, -3, 3, LAYOUT_ROW_VIEW },
    { "scale_bias", make_scale_bias, make_scale_bias_inplace, GGML_OP_SCALE, NO_UNARY, ref_scale_bias, -3, 3,
      LAYOUT_ROW_VIEW },
    { "clamp", make_clamp, make_clamp, GGML_OP_CLAMP, NO_UNARY, ref_clamp, -2, 2, LAYOUT_PERMUTED },
    { "leaky_relu", make_leaky, make_leaky_inplace, GGML_OP_LEAKY_RELU, NO_UNARY, ref_leaky_relu, -3, 3,
      LAYOUT_PERMUTED },
    { "abs", ggml_abs, ggml_abs_inplace, GGML_OP_UNARY, GGML_UNARY_OP_ABS, ref_abs, -3, 3, LAYOUT_PERMUTED },
    { "sgn", ggml_sgn, ggml_sgn_inplace, GGML_OP_UNARY, GGML_UNARY_OP_SGN, ref_sgn, -3, 3, LAYOUT_PERMUTED },
    { "neg", ggml_neg, ggml_neg_inplace, GGML_OP_UNARY, GGML_UNARY_OP_NEG, ref_neg, -3, 3, LAYOUT_PERMUTED },
    { "step", ggml_step, ggml_step_inplace, GGML_OP_UNARY, GGML_UNARY_OP_STEP, ref_step, -3, 3, LAYOUT_PERMUTED },
    { "tanh", ggml_tanh, ggml_tanh_inplace, GGML_OP_UNARY, GGML_UNARY_OP_TANH, ref_tanh, -4, 4, LAYOUT_PERMUTED },
    { "elu", ggml_elu, ggml_elu_inplace, GGML_OP_UNARY, GGML_UNARY_OP_ELU, ref_elu, -4, 4, LAYOUT_PERMUTED },
    { "relu", ggml_relu, ggml_relu_inplace, GGML_OP_UNARY, GGML_UNARY_OP_RELU, ref_relu, -3, 3, LAYOUT_PERMUTED },
    { "sigmoid", ggml_sigmoid, ggml_sigmoid_inplace, GGML_OP_UNARY, GGML_UNARY_OP_SIGMOID, ref_sigmoid, -8, 8,
      LAYOUT_PERMUTED },
    /* GELU ranges stop where an F16 result would be subnormal; test_gelu_tails covers the far left */
    { "gelu", ggml_gelu, ggml_gelu_inplace, GGML_OP_UNARY, GGML_UNARY_OP_GELU, ref_gelu, -3.5, 3.5,
      LAYOUT_PERMUTED },
    { "gelu_quick", ggml_gelu_quick, ggml_gelu_quick_inplace, GGML_OP_UNARY, GGML_UNARY_OP_GELU_QUICK,
      ref_gelu_quick, -6, 6, LAYOUT_PERMUTED },
    { "gelu_erf", ggml_gelu_erf, ggml_gelu_erf_inplace, GGML_OP_UNARY, GGML_UNARY_OP_GELU_ERF, ref_gelu_erf, -3.5,
      3.5, LAYOUT_PERMUTED },
    { "silu", ggml_silu, ggml_silu_inplace, GGML_OP_UNARY, GGML_UNARY_OP_SILU, ref_silu, -8, 8, LAYOUT_PERMUTED },
    { "hardswish", ggml_hardswish, NULL, GGML_OP_UNARY, GGML_UNARY_OP_HARDSWISH, ref_hardswish, -5, 5,
      LAYOUT_PERMUTED },
    { "hardsigmoid", ggml_hardsigmoid, NULL, GGML_OP_UNARY, GGML_UNARY_OP_HARDSIGMOID, ref_hardsigmoid, -5, 5,
      LAYOUT_PERMUTED },
    { "exp", ggml_exp, ggml_exp_inplace, GGML_OP_UNARY, GGML_UNARY_OP_EXP, ref_exp, -4, 4, LAYOUT_PERMUTED },
    { "expm1", ggml_expm1, ggml_expm1_inplace, GGML_OP_UNARY, GGML_UNARY_OP_EXPM1, ref_expm1, -2, 2,
      LAYOUT_PERMUTED },
    /* the range reaches past 20, where softplus returns x itself */
    { "softplus", ggml_softplus, ggml_softplus_inplace, GGML_OP_UNARY, GGML_UNARY_OP_SOFTPLUS, ref_softplus, -8, 24,
      LAYOUT_PERMUTED },
    { "xielu", make_xielu, NULL, GGML_OP_UNARY, GGML_UNARY_OP_XIELU, ref_xielu, -4, 4, LAYOUT_PERMUTED },
    { "floor", ggml_floor, ggml_floor_inplace, GGML_OP_UNARY, GGML_UNARY_OP_FLOOR, ref_floor, -4, 4,
      LAYOUT_PERMUTED },
    { "ceil", ggml_ceil, ggml_ceil_inplace, GGML_OP_UNARY, GGML_UNARY_OP_CEIL, ref_ceil, -4, 4, LAYOUT_PERMUTED },
    { "round", ggml_round, ggml_round_inplace, GGML_OP_UNARY, GGML_UNARY_OP_ROUND, ref_round, -4, 4,
      LAYOUT_PERMUTED },
    { "trunc", ggml_trunc, ggml_trunc_inplace, GGML_OP_UNARY, GGML_UNARY_OP_TRUNC, ref_trunc, -4, 4,
      LAYOUT_PERMUTED },
    { "unary(TANH)", make_unary_tanh, make_unary_tanh_inplace, GGML_OP_UNARY, GGML_UNARY_OP_TANH, ref_tanh, -4, 4,
      LAYOUT_PERMUTED },
};

#define N_UNARY_CASES (sizeof unary_cases / sizeof unary_cases[0])

static const enum ggml_type float_types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16 };

/* Result shapes: odd row lengths 1, 3, 31, 33, 257, several rows and batches. */
static const int64_t shapes[][4] = {
    { 1, 1, 1, 1 }, { 3, 2, 1, 1 }, { 31, 3, 2, 1 }, { 33, 2, 2, 2 }, { 257, 3, 1, 1 },
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

/* expected[i] for every element of a in row-major order of its shape */
static double *unary_reference(double (*f)(double), const struct ggml_tensor *a)
{
    double *ref = malloc((size_t) ggml_nelements(a) * sizeof *ref);
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < a->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2]; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1]; i1++)
                for (int64_t i0 = 0; i0 < a->ne[0]; i0++)
                    ref[k++] = f(optest_get(a, i0, i1, i2, i3));
    return ref;
}

static void add_unary_case(struct batch *b, struct ggml_context *ctx, const struct unary_case *c,
                           enum ggml_type type, const int64_t ne[4], enum layout layout, uint64_t *seed)
{
    struct ggml_tensor *a = make_input(ctx, type, ne, layout, seed, c->lo, c->hi);
    batch_add(b, c->make(ctx, a), unary_reference(c->ref, a), result_threshold(type),
              "%s %s [%lld,%lld,%lld,%lld]%s", c->name, ggml_type_name(type), (long long) ne[0],
              (long long) ne[1], (long long) ne[2], (long long) ne[3], layout_name(layout));
}

static void test_unary_numerics(void)
{
    uint64_t seed = 0x0dd5eed1;
    for (size_t c = 0; c < N_UNARY_CASES; c++) {
        struct ggml_init_params params = { 32u << 20, NULL, false };
        struct ggml_context *ctx = ggml_init(params);
        struct batch b = { 0 };
        for (size_t t = 0; t < 3; t++)
            for (size_t s = 0; s < N_SHAPES; s++)
                add_unary_case(&b, ctx, &unary_cases[c], float_types[t], shapes[s], LAYOUT_CONTIGUOUS, &seed);
        const int64_t strided[4] = { 33, 3, 2, 1 };
        for (size_t t = 0; t < 3; t++)
            add_unary_case(&b, ctx, &unary_cases[c], float_types[t], strided, unary_cases[c].strided, &seed);
        batch_run(ctx, &b);
        ggml_free(ctx);
    }
}

/* In-place forms: a view of a, and computing it overwrites a. */
static void test_unary_inplace(void)
{
    uint64_t seed = 0x1a9ace;
    struct ggml_init_params params = { 16u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    for (size_t c = 0; c < N_UNARY_CASES; c++) {
        const struct unary_case *uc = &unary_cases[c];
        if (uc->make_inplace == NULL)
            continue;
        for (int t = 0; t < 2; t++) {
            const enum ggml_type type = float_types[t];
            struct ggml_tensor *a = ggml_new_tensor_2d(ctx, type, 33, 3);
            optest_fill(a, &seed, uc->lo, uc->hi);
            double *ref = unary_reference(uc->ref, a);
            struct ggml_tensor *r = uc->make_inplace(ctx, a);
            ok(r != NULL && r->view_src == a && r->data == a->data && r->op == uc->op && r->src[0] == a &&
                   (uc->unary_op == NO_UNARY || ggml_get_unary_op(r) == (enum ggml_unary_op) uc->unary_op),
               "%s in place (%s) is a view of a with op %s", uc->name, ggml_type_name(type), ggml_op_desc(r));
            double nmse = r ? (optest_compute(ctx, r, 3, false) == GGML_STATUS_SUCCESS ? optest_nmse(a, ref) : INFINITY)
                            : INFINITY;
            ok(nmse <= result_threshold(type), "%s in place (%s) writes its result into a: nmse %.3g", uc->name,
               ggml_type_name(type), nmse);
            free(ref);
        }
        /* the out-of-place form leaves a alone */
        if (uc->make != uc->make_inplace) {
            struct ggml_tensor *a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5);
            optest_fill(a, &seed, uc->lo, uc->hi);
            float before[5];
            memcpy(before, a->data, sizeof before);
            struct ggml_tensor *r = uc->make(ctx, a);
            ok(r && r->view_src == NULL && r->data != a->data && optest_compute(ctx, r, 2, false) == 0 &&
                   memcmp(before, a->data, sizeof before) == 0,
               "%s out of place is a new tensor and leaves a unchanged", uc->name);
        }
    }
    ggml_free(ctx);
}

/* ------------------------------------------------------------------ ADD1 */

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static struct ggml_tensor *call_add1(struct ggml_context *c, struct ggml_tensor *a, struct ggml_tensor *b)
{
    return ggml_add1(c, a, b);
}

static struct ggml_tensor *call_add1_inplace(struct ggml_context *c, struct ggml_tensor *a, struct ggml_tensor *b)
{
    return ggml_add1_inplace(c, a, b);
}
#pragma GCC diagnostic pop

static void add_add1_case(struct batch *bt, struct ggml_context *ctx, enum ggml_type ta, enum ggml_type tb,
                          const int64_t ne[4], enum layout layout, uint64_t *seed)
{
    struct ggml_tensor *a = make_input(ctx, ta, ne, layout, seed, -2.0, 2.0);
    struct ggml_tensor *b = ggml_new_tensor_1d(ctx, tb, 1);
    optest_fill(b, seed, 0.25, 0.75);
    const double v = optest_get(b, 0, 0, 0, 0);
    double *ref = malloc((size_t) ggml_nelements(a) * sizeof *ref);
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < ne[3]; i3++)
        for (int64_t i2 = 0; i2 < ne[2]; i2++)
            for (int64_t i1 = 0; i1 < ne[1]; i1++)
                for (int64_t i0 = 0; i0 < ne[0]; i0++)
                    ref[k++] = optest_get(a, i0, i1, i2, i3) + v;
    batch_add(bt, call_add1(ctx, a, b), ref, result_threshold(ta), "add1 %s + %s scalar [%lld,%lld,%lld,%lld]%s",
              ggml_type_name(ta), ggml_type_name(tb), (long long) ne[0], (long long) ne[1], (long long) ne[2],
              (long long) ne[3], layout_name(layout));
}

static void test_add1(void)
{
    uint64_t seed = 0xadd1;
    struct ggml_init_params params = { 32u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    struct batch bt = { 0 };
    for (size_t t = 0; t < 3; t++)
        for (size_t s = 0; s < N_SHAPES; s++) {
            add_add1_case(&bt, ctx, float_types[t], GGML_TYPE_F32, shapes[s], LAYOUT_CONTIGUOUS, &seed);
            if (float_types[t] != GGML_TYPE_F32 && s % 2 == 0)
                add_add1_case(&bt, ctx, float_types[t], float_types[t], shapes[s], LAYOUT_CONTIGUOUS, &seed);
        }
    const int64_t strided[4] = { 33, 3, 2, 1 };
    add_add1_case(&bt, ctx, GGML_TYPE_F32, GGML_TYPE_F32, strided, LAYOUT_ROW_VIEW, &seed);
    add_add1_case(&bt, ctx, GGML_TYPE_F16, GGML_TYPE_F16, strided, LAYOUT_ROW_VIEW, &seed);

    const enum ggml_type quants[] = { GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
                                      GGML_TYPE_Q8_0 };
    const int64_t qshapes[][4] = { { 32, 1, 1, 1 }, { 64, 3, 2, 1 }, { 256, 2, 1, 2 } };
    for (size_t q = 0; q < sizeof quants / sizeof quants[0]; q++)
        for (size_t s = 0; s < 3; s++)
            add_add1_case(&bt, ctx, quants[q], GGML_TYPE_F32, qshapes[s], LAYOUT_CONTIGUOUS, &seed);
    batch_run(ctx, &bt);

    /* in place */
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 31, 3);
    struct ggml_tensor *b = ggml_new_f32(ctx, 0.5f);
    optest_fill(a, &seed, -1.0, 1.0);
    double ref[93];
    for (int i = 0; i < 93; i++)
        ref[i] = optest_get(a, i % 31, i / 31, 0, 0) + 0.5;
    struct ggml_tensor *r = call_add1_inplace(ctx, a, b);
    ok(r && r->view_src == a && r->op == GGML_OP_ADD1 && r->src[0] == a && r->src[1] == b,
       "add1_inplace is a view of a with op ADD1");
    ok(r && optest_compute(ctx, r, 2, false) == GGML_STATUS_SUCCESS && optest_nmse(a, ref) <= 1e-12,
       "add1_inplace writes into a");
    ggml_free(ctx);
}

/* ------------------------------------------------------------------- GLU */

#define OAI_ALPHA 1.702f
#define OAI_LIMIT 1.5f

static double glu_ref_reglu(double x, double g) { return (x > 0 ? x : 0.0) * g; }
static double glu_ref_geglu(double x, double g) { return gelu_tanh_d(x) * g; }
static double glu_ref_swiglu(double x, double g) { return x * sigmoid_d(x) * g; }
static double glu_ref_geglu_erf(double x, double g) { return gelu_erf_d(x) * g; }
static double glu_ref_geglu_quick(double x, double g) { return x * sigmoid_d(1.702 * x) * g; }

static double glu_ref_swiglu_oai(double x, double g)
{
    const double xc = fmin(x, OAI_LIMIT), gc = fmax(-OAI_LIMIT, fmin(OAI_LIMIT, g));
    return xc * sigmoid_d(OAI_ALPHA * xc) * (gc + 1.0);
}

static struct ggml_tensor *make_oai(struct ggml_context *c, struct ggml_tensor *a) { return ggml_swiglu_oai(c, a, NULL, OAI_ALPHA, OAI_LIMIT); }
static struct ggml_tensor *make_oai_split(struct ggml_context *c, struct ggml_tensor *a, struct ggml_tensor *b) { return ggml_swiglu_oai(c, a, b, OAI_ALPHA, OAI_LIMIT); }
static struct ggml_tensor *make_glu_swiglu(struct ggml_context *c, struct ggml_tensor *a) { return ggml_glu(c, a, GGML_GLU_OP_SWIGLU, false); }
static struct ggml_tensor *make_glu_swiglu_swapped(struct ggml_context *c, struct ggml_tensor *a) { return ggml_glu(c, a, GGML_GLU_OP_SWIGLU, true); }
static struct ggml_tensor *make_glu_split_swiglu(struct ggml_context *c, struct ggml_tensor *a, struct ggml_tensor *b) { return ggml_glu_split(c, a, b, GGML_GLU_OP_SWIGLU); }

static const struct glu_case {
    const char *name;
    enum ggml_glu_op op;
    ctor1 fused, swapped;          /* swapped NULL: no such form */
    ctor2 split;
    double (*ref)(double x, double g);
} glu_cases[] = {
    { "reglu", GGML_GLU_OP_REGLU, ggml_reglu, ggml_reglu_swapped, ggml_reglu_split, glu_ref_reglu },
    { "geglu", GGML_GLU_OP_GEGLU, ggml_geglu, ggml_geglu_swapped, ggml_geglu_split, glu_ref_geglu },
    { "swiglu", GGML_GLU_OP_SWIGLU, ggml_swiglu, ggml_swiglu_swapped, ggml_swiglu_split, glu_ref_swiglu },
    { "geglu_erf", GGML_GLU_OP_GEGLU_ERF, ggml_geglu_erf, ggml_geglu_erf_swapped, ggml_geglu_erf_split,
      glu_ref_geglu_erf },
    { "geglu_quick", GGML_GLU_OP_GEGLU_QUICK, ggml_geglu_quick, ggml_geglu_quick_swapped, ggml_geglu_quick_split,
      glu_ref_geglu_quick },
    { "swiglu_oai", GGML_GLU_OP_SWIGLU_OAI, make_oai, NULL, make_oai_split, glu_ref_swiglu_oai },
    { "glu(SWIGLU)", GGML_GLU_OP_SWIGLU, make_glu_swiglu, make_glu_swiglu_swapped, make_glu_split_swiglu,
      glu_ref_swiglu },
};

#define N_GLU_CASES (sizeof glu_cases / sizeof glu_cases[0])

enum glu_form { GLU_FUSED, GLU_SWAPPED, GLU_SPLIT };

static const char *glu_form_name(enum glu_form form)
{
    return form == GLU_FUSED ? "fused" : form == GLU_SWAPPED ? "swapped" : "split";
}

/* ne: the result's shape; the fused input has 2*ne[0] columns. */
static void add_glu_case(struct batch *bt, struct ggml_context *ctx, const struct glu_case *c, enum glu_form form,
                         enum ggml_type type, const int64_t ne[4], enum layout layout, uint64_t *seed)
{
    const int64_t ne_a[4] = { form == GLU_SPLIT ? ne[0] : 2 * ne[0], ne[1], ne[2], ne[3] };
    struct ggml_tensor *a = make_input(ctx, type, ne_a, layout, seed, -3.0, 3.0);
    struct ggml_tensor *b = form == GLU_SPLIT ? make_input(ctx, type, ne, layout, seed, -3.0, 3.0) : NULL;
    double *ref = malloc((size_t) (ne[0] * ne[1] * ne[2] * ne[3]) * sizeof *ref);
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < ne[3]; i3++)
        for (int64_t i2 = 0; i2 < ne[2]; i2++)
            for (int64_t i1 = 0; i1 < ne[1]; i1++)
                for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                    double x, g;
                    if (form == GLU_SPLIT) {
                        x = optest_get(a, i0, i1, i2, i3);
                        g = optest_get(b, i0, i1, i2, i3);
                    } else {
                        const int64_t x0 = form == GLU_SWAPPED ? ne[0] + i0 : i0;
                        const int64_t g0 = form == GLU_SWAPPED ? i0 : ne[0] + i0;
                        x = optest_get(a, x0, i1, i2, i3);
                        g = optest_get(a, g0, i1, i2, i3);
                    }
                    ref[k++] = c->ref(x, g);
                }
    struct ggml_tensor *out = form == GLU_SPLIT ? c->split(ctx, a, b)
                              : form == GLU_SWAPPED ? c->swapped(ctx, a) : c->fused(ctx, a);
    const bool node_ok = out && out->ne[0] == ne[0] && out->ne[1] == ne[1] && out->ne[2] == ne[2] &&
                         out->ne[3] == ne[3] && out->type == type && ggml_get_glu_op(out) == c->op;
    batch_add(bt, node_ok ? out : NULL, ref, result_threshold(type), "%s %s %s [%lld,%lld,%lld,%lld]%s", c->name,
              glu_form_name(form), ggml_type_name(type), (long long) ne[0], (long long) ne[1], (long long) ne[2],
              (long long) ne[3], layout_name(layout));
}

static void test_glu_numerics(void)
{
    uint64_t seed = 0x6105eed;
    for (size_t c = 0; c < N_GLU_CASES; c++) {
        struct ggml_init_params params = { 48u << 20, NULL, false };
        struct ggml_context *ctx = ggml_init(params);
        struct batch bt = { 0 };
        for (int form = GLU_FUSED; form <= GLU_SPLIT; form++) {
            if (form == GLU_SWAPPED && glu_cases[c].swapped == NULL)
                continue;
            for (size_t t = 0; t < 3; t++)
                for (size_t s = 0; s < N_SHAPES; s++)
                    add_glu_case(&bt, ctx, &glu_cases[c], (enum glu_form) form, float_types[t], shapes[s],
                                 LAYOUT_CONTIGUOUS, &seed);
            const int64_t strided[4] = { 33, 3, 2, 1 };
            add_glu_case(&bt, ctx, &glu_cases[c], (enum glu_form) form, GGML_TYPE_F32, strided, LAYOUT_ROW_VIEW,
                         &seed);
            add_glu_case(&bt, ctx, &glu_cases[c], (enum glu_form) form, GGML_TYPE_F16, strided, LAYOUT_ROW_VIEW,
                         &seed);
        }
        batch_run(ctx, &bt);
        ggml_free(ctx);
    }
}

/* ---------------------------------------------- op_params and node shape */

static float param_f32(const struct ggml_tensor *t, int i)
{
    float v;
    memcpy(&v, &t->op_params[i], sizeof v);
    return v;
}

static void test_op_params(void)
{
    struct ggml_init_params params = { 1u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 2);

    struct ggml_tensor *t = ggml_scale_bias(ctx, a, 2.5f, -1.0f);
    ok(t && t->op == GGML_OP_SCALE && param_f32(t, 0) == 2.5f && param_f32(t, 1) == -1.0f,
       "scale_bias stores { s, b } as floats");
    t = ggml_scale(ctx, a, 3.0f);
    ok(t && param_f32(t, 0) == 3.0f && param_f32(t, 1) == 0.0f, "scale stores { s, 0 }");
    t = ggml_clamp(ctx, a, -1.5f, 2.0f);
    ok(t && t->op == GGML_OP_CLAMP && t->view_src == a && param_f32(t, 0) == -1.5f && param_f32(t, 1) == 2.0f,
       "clamp is a view of a storing { min, max }");
    t = ggml_leaky_relu(ctx, a, 0.25f, false);
    ok(t && t->op == GGML_OP_LEAKY_RELU && t->view_src == NULL && param_f32(t, 0) == 0.25f,
       "leaky_relu stores its slope");
    t = ggml_unary(ctx, a, GGML_UNARY_OP_SILU);
    ok(t && t->op == GGML_OP_UNARY && t->op_params[0] == GGML_UNARY_OP_SILU &&
           ggml_get_unary_op(t) == GGML_UNARY_OP_SILU && t->type == a->type && ggml_are_same_shape(t, a),
       "unary stores the op id in op_params[0]");
    t = ggml_xielu(ctx, a, 0.8f, 0.6f, 0.5f, -1e-6f);
    ok(t && t->op_params[0] == GGML_UNARY_OP_XIELU && fabs(param_f32(t, 1) - (0.5 + log1p(exp(0.8)))) < 1e-6 &&
           fabs(param_f32(t, 2) - log1p(exp(0.6))) < 1e-6 && param_f32(t, 3) == 0.5f && param_f32(t, 4) == -1e-6f,
       "xielu stores { op, beta + softplus(alpha_n), softplus(alpha_p), beta, eps }");
    struct ggml_tensor *w = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 10, 3, 2);
    t = ggml_swiglu_swapped(ctx, w);
    ok(t && t->op == GGML_OP_GLU && t->op_params[0] == GGML_GLU_OP_SWIGLU && t->op_params[1] == 1 &&
           t->ne[0] == 5 && t->ne[1] == 3 && t->ne[2] == 2 && t->type == GGML_TYPE_F16 && t->src[0] == w &&
           t->src[1] == NULL,
       "fused GLU halves ne0 and stores { op, swapped }");
    struct ggml_tensor *g = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 10, 3, 2);
    t = ggml_swiglu_oai(ctx, w, g, 1.702f, 7.0f);
    ok(t && t->op_params[0] == GGML_GLU_OP_SWIGLU_OAI && t->op_params[1] == 0 && param_f32(t, 2) == 1.702f &&
           param_f32(t, 3) == 7.0f && t->ne[0] == 10 && t->src[1] == g,
       "swiglu_oai stores { op, 0, alpha, limit } and keeps the shape when split");
    t = ggml_geglu_split(ctx, w, g);
    ok(t && t->op_params[1] == 0 && t->src[0] == w && t->src[1] == g && ggml_are_same_shape(t, w),
       "split GLU keeps the shape of its inputs");
    ggml_free(ctx);
}

/* GELU is the tanh approximation; check it stays close to the erf form. */
static void test_gelu_approximation(void)
{
    struct ggml_init_params params = { 4u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 801);
    for (int i = 0; i < 801; i++)
        ((float *) a->data)[i] = -8.0f + 0.02f * (float) i;
    struct ggml_tensor *r = ggml_gelu(ctx, a);
    double worst = 0.0;
    if (optest_compute(ctx, r, 2, false) == GGML_STATUS_SUCCESS)
        for (int i = 0; i < 801; i++) {
            double d = fabs(((float *) r->data)[i] - gelu_erf_d(((float *) a->data)[i]));
            worst = d > worst ? d : worst;
        }
    else
        worst = INFINITY;
    /* the two forms differ by at most ~4.7e-4 (near |x| = 2) */
    ok(worst < 1e-3, "gelu (tanh form) is within 1e-3 of the erf form on [-8, 8]: %.3g", worst);
    ggml_free(ctx);
}

/*
 * The far negative tails of GELU (both forms), SiLU and GELU_QUICK, where
 * the results are tiny: each element within 3e-5 relative of the double
 * value (a form like 0.5*x*(1 + tanh(u)) would cancel to 0 there).  The
 * bound: the tanh form evaluates e^(-2u) with 2u up to ~50 at x = -8, which
 * multiplies the float rounding of u (~1e-7) by 50.
 */
static void test_gelu_tails(void)
{
    struct ggml_init_params params = { 4u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 250);
    for (int i = 0; i < 250; i++)
        ((float *) a->data)[i] = -8.0f + 0.02f * (float) i;
    const struct {
        const char *name;
        ctor1 make;
        double (*ref)(double);
    } tails[] = {
        { "gelu", ggml_gelu, ref_gelu },
        { "gelu_erf", ggml_gelu_erf, ref_gelu_erf },
        { "gelu_quick", ggml_gelu_quick, ref_gelu_quick },
        { "silu", ggml_silu, ref_silu },
    };
    for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++)
        for (int use_ref = 0; use_ref <= 1; use_ref++) {
            struct ggml_tensor *r = tails[t].make(ctx, a);
            double worst = INFINITY;
            if (optest_compute(ctx, r, 2, use_ref) == GGML_STATUS_SUCCESS) {
                worst = 0.0;
                for (int i = 0; i < 250; i++) {
                    const double want = tails[t].ref(((float *) a->data)[i]);
                    const double rel = fabs(((float *) r->data)[i] - want) / fabs(want);
                    worst = rel > worst ? rel : worst;
                }
            }
            ok(worst < 3e-5, "%s on [-8, -3] (%s kernel): worst relative error %.3g", tails[t].name,
               use_ref ? "reference" : "fast", worst);
        }
    ggml_free(ctx);
}

/*
 * A fused GLU of odd width 7: three values, three gates, the last column
 * not read (as upstream), against the definition in double.
 */
static void test_glu_odd_width(void)
{
    struct ggml_init_params params = { 1u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 7, 2);
    uint64_t seed = 7;
    optest_fill(a, &seed, -2, 2);
    for (int swapped = 0; swapped < 2; swapped++) {
        struct ggml_tensor *y = ggml_glu(ctx, a, GGML_GLU_OP_REGLU, swapped);
        ok(y != NULL && y->ne[0] == 3 && y->ne[1] == 2, "reglu%s of width 7: 3 columns",
           swapped ? " (swapped)" : "");
        if (y == NULL || optest_compute(ctx, y, 2, false) != GGML_STATUS_SUCCESS) {
            ok(false, "reglu of width 7 computes");
            continue;
        }
        double worst = 0.0;
        for (int r = 0; r < 2; r++) {
            const float *x = (const float *) ((const char *) a->data + r * a->nb[1]);
            const float *out = (const float *) ((const char *) y->data + r * y->nb[1]);
            for (int i = 0; i < 3; i++) {
                const double value = x[swapped ? i + 3 : i], gate = x[swapped ? i : i + 3];
                const double want = (value > 0.0 ? value : 0.0) * gate;
                const double err = fabs(out[i] - want);
                worst = err > worst ? err : worst;
            }
        }
        ok(worst <= 1e-6, "reglu%s of width 7 matches the definition (worst error %.3g)", swapped ? " (swapped)" : "",
           worst);
    }
    ggml_free(ctx);
}

/* ----------------------------------------------------------- error paths */

static void test_errors(void)
{
    struct ggml_init_params params = { 4u << 20, NULL, false };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 6);
    struct ggml_tensor *at = ggml_transpose(ctx, a);
    struct ggml_tensor *odd = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 7, 2);
    struct ggml_tensor *v = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    struct ggml_tensor *s = ggml_new_f32(ctx, 1.0f);
    struct ggml_tensor *h = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 8, 6);
    uint64_t seed = 99;
    optest_fill(a, &seed, -1, 1);
    tap_log_errors();

    ok(ggml_unary(ctx, a, GGML_UNARY_OP_COUNT) == NULL, "unary: an op id out of range gives NULL");
    logged_one_error("unary: a bad op id logs one error");
    ok(ggml_unary(ctx, a, (enum ggml_unary_op) -1) == NULL, "unary: a negative op id gives NULL");
    logged_one_error("unary: a negative op id logs one error");
    for (size_t c = 0; c < N_UNARY_CASES; c++) {
        if (unary_cases[c].op != GGML_OP_UNARY || unary_cases[c].make == make_xielu)
            continue;
        ok(unary_cases[c].make(ctx, at) == NULL, "%s: a transposed input (strided rows) gives NULL",
           unary_cases[c].name);
        logged_one_error("%s: a transposed input logs one error", unary_cases[c].name);
    }
    ok(call_add1(ctx, a, v) == NULL, "add1: a b that is not a scalar gives NULL");
    logged_one_error("add1: a non-scalar b logs one error");
    ok(call_add1(ctx, at, s) == NULL, "add1: a transposed a gives NULL");
    logged_one_error("add1: a transposed a logs one error");
    ok(call_add1_inplace(ctx, a, v) == NULL, "add1_inplace: a non-scalar b gives NULL");
    logged_one_error("add1_inplace: a non-scalar b logs one error");
    ok(ggml_scale(ctx, at, 2.0f) == NULL, "scale: a transposed a gives NULL");
    logged_one_error("scale: a transposed a logs one error");
    ok(ggml_scale_bias_inplace(ctx, at, 2.0f, 1.0f) == NULL, "scale_bias_inplace: a transposed a gives NULL");
    logged_one_error("scale_bias_inplace: a transposed a logs one error");

    for (size_t c = 0; c < N_GLU_CASES; c++) {
        ok(glu_cases[c].fused(ctx, at) == NULL, "%s: a transposed input gives NULL", glu_cases[c].name);
        logged_one_error("%s: a transposed input logs one error", glu_cases[c].name);
        ok(glu_cases[c].split(ctx, a, odd) == NULL, "%s: split inputs of different shapes give NULL",
           glu_cases[c].name);
        logged_one_error("%s: mismatched split shapes log one error", glu_cases[c].name);
        ok(glu_cases[c].split(ctx, a, h) == NULL, "%s: split inputs of different types give NULL",
           glu_cases[c].name);
        logged_one_error("%s: mismatched split types log one error", glu_cases[c].name);
    }
    ok(ggml_glu(ctx, a, GGML_GLU_OP_COUNT, false) == NULL, "glu: an op id out of range gives NULL");
    logged_one_error("glu: a bad op id logs one error");
    ok(ggml_glu_split(ctx, a, a, (enum ggml_glu_op) 99) == NULL, "glu_split: an op id out of range gives NULL");
    logged_one_error("glu_split: a bad op id logs one error");

    /* NULL inputs propagate without a message */
    bool all_null = true;
    for (size_t c = 0; c < N_UNARY_CASES; c++) {
        all_null &= unary_cases[c].make(ctx, NULL) == NULL;
        if (unary_cases[c].make_inplace)
            all_null &= unary_cases[c].make_inplace(ctx, NULL) == NULL;
    }
    for (size_t c = 0; c < N_GLU_CASES; c++) {
        all_null &= glu_cases[c].fused(ctx, NULL) == NULL && glu_cases[c].split(ctx, NULL, a) == NULL;
        if (glu_cases[c].swapped)
            all_null &= glu_cases[c].swapped(ctx, NULL) == NULL;
    }
    all_null &= ggml_glu_split(ctx, a, NULL, GGML_GLU_OP_REGLU) == NULL;
    all_null &= ggml_reglu_split(ctx, a, NULL) == NULL && ggml_geglu_split(ctx, a, NULL) == NULL &&
                ggml_swiglu_split(ctx, a, NULL) == NULL && ggml_geglu_erf_split(ctx, a, NULL) == NULL &&
                ggml_geglu_quick_split(ctx, a, NULL) == NULL;
    all_null &= call_add1(ctx, NULL, s) == NULL && call_add1(ctx, a, NULL) == NULL &&
                call_add1_inplace(ctx, NULL, s) == NULL && call_add1_inplace(ctx, a, NULL) == NULL;
    all_null &= ggml_scale_bias(ctx, NULL, 1, 1) == NULL && ggml_scale_inplace(ctx, NULL, 1) == NULL &&
                ggml_unary(ctx, NULL, GGML_UNARY_OP_ABS) == NULL &&
                ggml_unary_inplace(ctx, NULL, GGML_UNARY_OP_ABS) == NULL &&
                ggml_glu(ctx, NULL, GGML_GLU_OP_REGLU, true) == NULL;
    ok(all_null, "every constructor gives NULL for a NULL input");
    is_int(tap_log_errors(), 0, "NULL inputs log nothing");

    /* the CPU backend refuses (does not crash on) what its kernels do not handle */
    struct ggml_tensor *ints = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4);
    struct ggml_tensor *r = ggml_relu(ctx, ints);
    ok(r != NULL && optest_compute(ctx, r, 2, false) == GGML_STATUS_FAILED, "relu of I32 is refused at compute");
    logged_one_error("an I32 relu logs one error");
    r = ggml_sqr(ctx, at);
    ok(r != NULL && optest_compute(ctx, r, 2, false) == GGML_STATUS_FAILED,
       "sqr of a transposed input (strided rows) is refused at compute");
    logged_one_error("a transposed sqr logs one error");
    struct ggml_tensor *q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 32, 2);
    r = ggml_tanh(ctx, q);
    ok(r != NULL && optest_compute(ctx, r, 2, false) == GGML_STATUS_FAILED, "tanh of Q8_0 is refused at compute");
    logged_one_error("a Q8_0 tanh logs one error");
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();
    test_unary_numerics();
    test_unary_inplace();
    test_add1();
    test_glu_numerics();
    test_op_params();
    test_gelu_approximation();
    test_gelu_tails();
    test_glu_odd_width();
    test_errors();
    return tap_done();
}
