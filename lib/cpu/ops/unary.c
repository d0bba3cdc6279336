/*
 * ops/unary.c - the element-wise ops of one source (ADD1 adds a scalar):
 * ADD1, SCALE, SQR, SQRT, LOG, SIN, COS, CLAMP, LEAKY_RELU, every
 * GGML_UNARY_OP_*, and the gated linear units (GLU, fused and split).
 *
 * Types: sources and result F32, F16 or BF16 in any combination (upstream
 * computes some of these ops for F32 and F16 only; the extra combinations
 * cost nothing here); ADD1 also takes a quantized src0 whose type has a
 * reference codec (to_float, from_float_ref), with a result of the same type.
 * Arithmetic is done in F32.  Layout: every row (dimension 0) of every
 * tensor must be contiguous; rows, matrices and batches may have any
 * strides.  An in-place node (dst a view of src0 with the same strides) is
 * fine: each row is read before it is written.
 *
 * Each op is written once as a float function of one element (op_*).  The
 * reference kernel (use_ref) applies it element by element, converting each
 * value on the way in and out.  The fast kernel applies a row function
 * (row_*: a plain loop over contiguous floats that the compiler can
 * vectorize) directly on F32 rows, or on an F32 copy of each row for the
 * 16-bit types.  The row functions sit in per-op tables; a UNARY or GLU op
 * whose entry in the kernel table (params->kernels->unary[op], glu[op],
 * simd/kernels.h) is set uses that entry instead of its row function,
 * within the entry's stated error bound.  The row functions are the
 * generic level, and use_ref never takes the table.  Threads split the
 * rows of dst.
 */
#include "config.h"

#include <math.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "cpu-private.h"

/* ------------------------------------------------------------ parameters */

/* The parameters of one node, read once from op_params (meaning per op). */
struct op_args {
    float p[4];
};

/* Per-element and per-row forms of one element-wise function. */
typedef float (*elem_fn)(float x, const struct op_args *args);
typedef void (*row_fn)(int64_t n, float *y, const float *x, const struct op_args *args);

struct elementwise_fns {
    elem_fn elem;
    row_fn row;
};

/* Defines row_<name>: y[i] = op_<name>(x[i]) for i < n; y may equal x. */
#define DEFINE_ROW_FN(name)                                                                  \
    static void row_##name(int64_t n, float *y, const float *x, const struct op_args *args)  \
    {                                                                                        \
        const struct op_args local = *args; /* not reachable through y: loop stays tight */  \
        for (int64_t i = 0; i < n; i++)                                                      \
            y[i] = op_##name(x[i], &local);                                                  \
    }

/* ------------------------------------------------------------- formulas */

#define GELU_SQRT_2_OVER_PI 0.79788456080286535588f
#define GELU_COEF_A         0.044715f
#define GELU_QUICK_COEF     1.702f
#define SQRT_HALF           0.70710678118654752440f

static inline float sigmoid_f32(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

/*
 * GELU, tanh form: 0.5*x*(1 + tanh(u)) with u = sqrt(2/pi)*(x + 0.044715*x^3),
 * evaluated as x / (1 + e^(-2u)), the same function without the
 * cancellation of 1 + tanh(u) for negative x (where the result is tiny).
 */
static inline float gelu_f32(float x)
{
    const float u = GELU_SQRT_2_OVER_PI * x * (1.0f + GELU_COEF_A * x * x);
    return x / (1.0f + expf(-2.0f * u));
}

/* GELU, erf form: 0.5*x*(1 + erf(x/sqrt(2))) = 0.5*x*erfc(-x/sqrt(2)), without cancellation. */
static inline float gelu_erf_f32(float x)
{
    return 0.5f * x * erfcf(-x * SQRT_HALF);
}

static inline float gelu_quick_f32(float x)
{
    return x * sigmoid_f32(GELU_QUICK_COEF * x);
}

static inline float silu_f32(float x)
{
    return x / (1.0f + expf(-x));
}

static inline float hardsigmoid_f32(float x)
{
    return fminf(1.0f, fmaxf(0.0f, (x + 3.0f) / 6.0f));
}

/* The unary functions; args->p holds XIELU's alpha_n', alpha_p', beta, eps. */
static inline float op_abs(float x, const struct op_args *a) { (void) a; return fabsf(x); }
static inline float op_sgn(float x, const struct op_args *a) { (void) a; return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : 0.0f; }
static inline float op_neg(float x, const struct op_args *a) { (void) a; return -x; }
static inline float op_step(float x, const struct op_args *a) { (void) a; return x > 0.0f ? 1.0f : 0.0f; }
static inline float op_tanh(float x, const struct op_args *a) { (void) a; return tanhf(x); }
static inline float op_elu(float x, const struct op_args *a) { (void) a; return x > 0.0f ? x : expm1f(x); }
static inline float op_relu(float x, const struct op_args *a) { (void) a; return x > 0.0f ? x : 0.0f; }
static inline float op_sigmoid(float x, const struct op_args *a) { (void) a; return sigmoid_f32(x); }
static inline float op_gelu(float x, const struct op_args *a) { (void) a; return gelu_f32(x); }
static inline float op_gelu_quick(float x, const struct op_args *a) { (void) a; return gelu_quick_f32(x); }
static inline float op_silu(float x, const struct op_args *a) { (void) a; return silu_f32(x); }
static inline float op_hardswish(float x, const struct op_args *a) { (void) a; return x * hardsigmoid_f32(x); }
static inline float op_hardsigmoid(float x, const struct op_args *a) { (void) a; return hardsigmoid_f32(x); }
static inline float op_exp(float x, const struct op_args *a) { (void) a; return expf(x); }
static inline float op_expm1(float x, const struct op_args *a) { (void) a; return expm1f(x); }
static inline float op_softplus(float x, const struct op_args *a) { (void) a; return x > 20.0f ? x : log1pf(expf(x)); }
static inline float op_gelu_erf(float x, const struct op_args *a) { (void) a; return gelu_erf_f32(x); }
static inline float op_floor(float x, const struct op_args *a) { (void) a; return floorf(x); }
static inline float op_ceil(float x, const struct op_args *a) { (void) a; return ceilf(x); }
static inline float op_round(float x, const struct op_args *a) { (void) a; return roundf(x); }
static inline float op_trunc(float x, const struct op_args *a) { (void) a; return truncf(x); }

static inline float op_xielu(float x, const struct op_args *a)
{
    const float alpha_n = a->p[0], alpha_p = a->p[1], beta = a->p[2], eps = a->p[3];
    if (x > 0.0f)
        return alpha_p * x * x + beta * x;
    return (expm1f(fminf(x, eps)) - x) * alpha_n + beta * x;
}

/* SQR, SQRT, LOG, SIN, COS */
static inline float op_sqr(float x, const struct op_args *a) { (void) a; return x * x; }
static inline float op_sqrt(float x, const struct op_args *a) { (void) a; return sqrtf(x); }
static inline float op_log(float x, const struct op_args *a) { (void) a; return logf(x); }
static inline float op_sin(float x, const struct op_args *a) { (void) a; return sinf(x); }
static inline float op_cos(float x, const struct op_args *a) { (void) a; return cosf(x); }

/* SCALE: p = { s, bias }; CLAMP: p = { min, max }; LEAKY_RELU: p = { slope }; ADD1: p = { v } */
static inline float op_scale(float x, const struct op_args *a) { return x * a->p[0] + a->p[1]; }
static inline float op_leaky_relu(float x, const struct op_args *a) { return x > 0.0f ? x : a->p[0] * x; }
static inline float op_add1(float x, const struct op_args *a) { return x + a->p[0]; }

static inline float op_clamp(float x, const struct op_args *a)
{
    const float below_max = x < a->p[1] ? x : a->p[1];
    return below_max > a->p[0] ? below_max : a->p[0];
}

DEFINE_ROW_FN(abs)
DEFINE_ROW_FN(sgn)
DEFINE_ROW_FN(neg)
DEFINE_ROW_FN(step)
DEFINE_ROW_FN(tanh)
DEFINE_ROW_FN(elu)
DEFINE_ROW_FN(relu)
DEFINE_ROW_FN(sigmoid)
DEFINE_ROW_FN(gelu)
DEFINE_ROW_FN(gelu_quick)
DEFINE_ROW_FN(silu)
DEFINE_ROW_FN(hardswish)
DEFINE_ROW_FN(hardsigmoid)
DEFINE_ROW_FN(exp)
DEFINE_ROW_FN(expm1)
DEFINE_ROW_FN(softplus)
DEFINE_ROW_FN(gelu_erf)
DEFINE_ROW_FN(xielu)
DEFINE_ROW_FN(floor)
DEFINE_ROW_FN(ceil)
DEFINE_ROW_FN(round)
DEFINE_ROW_FN(trunc)
DEFINE_ROW_FN(sqr)
DEFINE_ROW_FN(sqrt)
DEFINE_ROW_FN(log)
DEFINE_ROW_FN(sin)
DEFINE_ROW_FN(cos)
DEFINE_ROW_FN(scale)
DEFINE_ROW_FN(clamp)
DEFINE_ROW_FN(leaky_relu)
DEFINE_ROW_FN(add1)

#define FNS(name) { op_##name, row_##name }

static const struct elementwise_fns unary_fns[GGML_UNARY_OP_COUNT] = {
    [GGML_UNARY_OP_ABS] = FNS(abs),
    [GGML_UNARY_OP_SGN] = FNS(sgn),
    [GGML_UNARY_OP_NEG] = FNS(neg),
    [GGML_UNARY_OP_STEP] = FNS(step),
    [GGML_UNARY_OP_TANH] = FNS(tanh),
    [GGML_UNARY_OP_ELU] = FNS(elu),
    [GGML_UNARY_OP_RELU] = FNS(relu),
    [GGML_UNARY_OP_SIGMOID] = FNS(sigmoid),
    [GGML_UNARY_OP_GELU] = FNS(gelu),
    [GGML_UNARY_OP_GELU_QUICK] = FNS(gelu_quick),
    [GGML_UNARY_OP_SILU] = FNS(silu),
    [GGML_UNARY_OP_HARDSWISH] = FNS(hardswish),
    [GGML_UNARY_OP_HARDSIGMOID] = FNS(hardsigmoid),
    [GGML_UNARY_OP_EXP] = FNS(exp),
    [GGML_UNARY_OP_EXPM1] = FNS(expm1),
    [GGML_UNARY_OP_SOFTPLUS] = FNS(softplus),
    [GGML_UNARY_OP_GELU_ERF] = FNS(gelu_erf),
    [GGML_UNARY_OP_XIELU] = FNS(xielu),
    [GGML_UNARY_OP_FLOOR] = FNS(floor),
    [GGML_UNARY_OP_CEIL] = FNS(ceil),
    [GGML_UNARY_OP_ROUND] = FNS(round),
    [GGML_UNARY_OP_TRUNC] = FNS(trunc),
};

static const struct elementwise_fns sqr_fns = FNS(sqr);
static const struct elementwise_fns sqrt_fns = FNS(sqrt);
static const struct elementwise_fns log_fns = FNS(log);
static const struct elementwise_fns sin_fns = FNS(sin);
static const struct elementwise_fns cos_fns = FNS(cos);
static const struct elementwise_fns scale_fns = FNS(scale);
static const struct elementwise_fns clamp_fns = FNS(clamp);
static const struct elementwise_fns leaky_relu_fns = FNS(leaky_relu);
static const struct elementwise_fns add1_fns = FNS(add1);

#undef FNS

/* --------------------------------------------------------- GLU formulas */

/* out = activation(x) * g; args->p holds SWIGLU_OAI's alpha and limit. */
typedef float (*glu_elem_fn)(float x, float g, const struct op_args *args);
typedef void (*glu_row_fn)(int64_t n, float *y, const float *x, const float *g, const struct op_args *args);

static inline float glu_reglu(float x, float g, const struct op_args *a) { (void) a; return (x > 0.0f ? x : 0.0f) * g; }
static inline float glu_geglu(float x, float g, const struct op_args *a) { (void) a; return gelu_f32(x) * g; }
static inline float glu_swiglu(float x, float g, const struct op_args *a) { (void) a; return silu_f32(x) * g; }
static inline float glu_geglu_erf(float x, float g, const struct op_args *a) { (void) a; return gelu_erf_f32(x) * g; }
static inline float glu_geglu_quick(float x, float g, const struct op_args *a) { (void) a; return gelu_quick_f32(x) * g; }

/* x capped above at limit, g clamped to [-limit, limit]: x*sigmoid(alpha*x) * (g + 1) */
static inline float glu_swiglu_oai(float x, float g, const struct op_args *a)
{
    const float alpha = a->p[0], limit = a->p[1];
    const float xc = x < limit ? x : limit;
    const float gc = g < -limit ? -limit : g > limit ? limit : g;
    return xc / (1.0f + expf(-alpha * xc)) * (gc + 1.0f);
}

/* Defines glu_row_<name>: y[i] = glu_<name>(x[i], g[i]); y may equal x. */
#define DEFINE_GLU_ROW_FN(name)                                                                        \
    static void glu_row_##name(int64_t n, float *y, const float *x, const float *g,                  \
                               const struct op_args *args)                                             \
    {                                                                                                  \
        const struct op_args local = *args;                                                            \
        for (int64_t i = 0; i < n; i++)                                                                \
            y[i] = glu_##name(x[i], g[i], &local);                                                     \
    }

DEFINE_GLU_ROW_FN(reglu)
DEFINE_GLU_ROW_FN(geglu)
DEFINE_GLU_ROW_FN(swiglu)
DEFINE_GLU_ROW_FN(geglu_erf)
DEFINE_GLU_ROW_FN(geglu_quick)
DEFINE_GLU_ROW_FN(swiglu_oai)

static const struct {
    glu_elem_fn elem;
    glu_row_fn row;
} glu_fns[GGML_GLU_OP_COUNT] = {
    [GGML_GLU_OP_REGLU] = { glu_reglu, glu_row_reglu },
    [GGML_GLU_OP_GEGLU] = { glu_geglu, glu_row_geglu },
    [GGML_GLU_OP_SWIGLU] = { glu_swiglu, glu_row_swiglu },
    [GGML_GLU_OP_SWIGLU_OAI] = { glu_swiglu_oai, glu_row_swiglu_oai },
    [GGML_GLU_OP_GEGLU_ERF] = { glu_geglu_erf, glu_row_geglu_erf },
    [GGML_GLU_OP_GEGLU_QUICK] = { glu_geglu_quick, glu_row_geglu_quick },
};

/* ------------------------------------------------------ element access */

static bool float_type(enum ggml_type type)
{
    return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16;
}

/* Element i of a contiguous row of a float type, as F32. */
static inline float load_elem(enum ggml_type type, const char *row, int64_t i)
{
    switch (type) {
    case GGML_TYPE_F16:  return ggml__fp16_to_fp32(((const ggml_fp16_t *) row)[i]);
    case GGML_TYPE_BF16: return ggml__bf16_to_fp32(((const ggml_bf16_t *) row)[i]);
    default:             return ((const float *) row)[i];
    }
}

static inline void store_elem(enum ggml_type type, char *row, int64_t i, float v)
{
    switch (type) {
    case GGML_TYPE_F16:  ((ggml_fp16_t *) row)[i] = ggml__fp32_to_fp16(v); break;
    case GGML_TYPE_BF16: ((ggml_bf16_t *) row)[i] = ggml__fp32_to_bf16(v); break;
    default:             ((float *) row)[i] = v; break;
    }
}

/* n elements of a contiguous row to F32 (out must not overlap the row). */
static void load_row(enum ggml_type type, const char *row, int64_t n, float *out)
{
    switch (type) {
    case GGML_TYPE_F16: {
        const ggml_fp16_t *src = (const ggml_fp16_t *) row;
        for (int64_t i = 0; i < n; i++)
            out[i] = ggml__fp16_to_fp32(src[i]);
        break;
    }
    case GGML_TYPE_BF16: {
        const ggml_bf16_t *src = (const ggml_bf16_t *) row;
        for (int64_t i = 0; i < n; i++)
            out[i] = ggml__bf16_to_fp32(src[i]);
        break;
    }
    default:
        memmove(out, row, (size_t) n * sizeof(float));
        break;
    }
}

static void store_row(enum ggml_type type, char *row, int64_t n, const float *in)
{
    switch (type) {
    case GGML_TYPE_F16: {
        ggml_fp16_t *dst = (ggml_fp16_t *) row;
        for (int64_t i = 0; i < n; i++)
            dst[i] = ggml__fp32_to_fp16(in[i]);
        break;
    }
    case GGML_TYPE_BF16: {
        ggml_bf16_t *dst = (ggml_bf16_t *) row;
        for (int64_t i = 0; i < n; i++)
            dst[i] = ggml__fp32_to_bf16(in[i]);
        break;
    }
    default:
        memmove(row, in, (size_t) n * sizeof(float));
        break;
    }
}

/* Start of row r of t, rows numbered over dims 1..3 of shape (the same for every tensor of the node). */
static inline char *row_at(const struct ggml_tensor *t, const int64_t *shape, int64_t r)
{
    const int64_t i1 = r % shape[1], i2 = (r / shape[1]) % shape[2], i3 = r / (shape[1] * shape[2]);
    return (char *) t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

/* ------------------------------------------------------ shared drivers */

/* An F32 tensor whose elements are one run of memory in index order. */
static bool dense_f32(const struct ggml_tensor *t)
{
    return t->type == GGML_TYPE_F32 && t->nb[0] == sizeof(float) && t->nb[1] == t->nb[0] * (size_t) t->ne[0] &&
           t->nb[2] == t->nb[1] * (size_t) t->ne[1] && t->nb[3] == t->nb[2] * (size_t) t->ne[2];
}

/*
 * For a node whose dst and src[0] are dense F32 tensors of one shape, and
 * that is not computed by the reference path: true, with [*first, *last)
 * the elements this thread maps (whole cache lines of floats).  Else false.
 */
static bool dense_share(const struct ggml__compute_params *params, const struct ggml_tensor *dst, int64_t *first,
                        int64_t *last)
{
    if (params->use_ref || !dense_f32(dst) || !dense_f32(dst->src[0]))
        return false;
    const int64_t total = dst->ne[0] * dst->ne[1] * dst->ne[2] * dst->ne[3];
    ggml__split_rows((total + 15) / 16, params->ith, params->nth, first, last);
    *first *= 16;
    *last = *last * 16 < total ? *last * 16 : total;
    return true;
}

/* Floats of scratch per thread: two rows of the widest tensor, padded. */
static int64_t scratch_floats(const struct ggml_tensor *dst)
{
    const int64_t ne = dst->src[0]->ne[0] > dst->ne[0] ? dst->src[0]->ne[0] : dst->ne[0];
    return 2 * (ne + 16);
}

static size_t elementwise_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    return (size_t) n_tasks * (size_t) scratch_floats(dst) * sizeof(float);
}

static float *thread_scratch(const struct ggml__compute_params *params, const struct ggml_tensor *dst)
{
    return (float *) params->wdata + (size_t) params->ith * (size_t) scratch_floats(dst);
}

/* Rows of dst and src of the same shape, float types, contiguous rows. */
static bool same_float_rows(const struct ggml_tensor *dst, const struct ggml_tensor *src)
{
    return src != NULL && float_type(dst->type) && float_type(src->type) && ggml__same_shape(dst, src) &&
           ggml__rows_contiguous(dst) && ggml__rows_contiguous(src);
}

/* The kernel table's row of an element-wise op; NULL: the op's row function. */
typedef void (*table_row_fn)(int64_t n, float *y, const float *x);

/*
 * dst = fns(src0) element by element, this thread's rows; the fast path
 * takes table_row (when not NULL) for fns->row.
 */
static void map_rows(const struct ggml__compute_params *params, struct ggml_tensor *dst,
                     const struct elementwise_fns *fns, table_row_fn table_row, const struct op_args *args)
{
    const struct ggml_tensor *src = dst->src[0];
    const int64_t n = dst->ne[0];
    const bool direct = src->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32;
    int64_t first, last;
    if (dense_share(params, dst, &first, &last)) {
        /* element-wise over one run of floats: one call */
        if (first < last) {
            float *y = (float *) dst->data + first;
            const float *x = (const float *) src->data + first;
            if (table_row != NULL)
                table_row(last - first, y, x);
            else
                fns->row(last - first, y, x, args);
        }
        return;
    }
    float *tmp = thread_scratch(params, dst);

    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        const char *srow = row_at(src, dst->ne, r);
        char *drow = row_at(dst, dst->ne, r);
        if (params->use_ref) {
            for (int64_t i = 0; i < n; i++)
                store_elem(dst->type, drow, i, fns->elem(load_elem(src->type, srow, i), args));
        } else {
            float *y = direct ? (float *) drow : tmp;
            const float *x = direct ? (const float *) srow : tmp;
            if (!direct)
                load_row(src->type, srow, n, tmp);
            if (table_row != NULL)
                table_row(n, y, x);
            else
                fns->row(n, y, x, args);
            if (!direct)
                store_row(dst->type, drow, n, tmp);
        }
    }
}

/* --------------------------------------------- SQR, SQRT, LOG, SIN, COS */

static const struct elementwise_fns *math_fns(enum ggml_op op)
{
    switch (op) {
    case GGML_OP_SQR:  return &sqr_fns;
    case GGML_OP_SQRT: return &sqrt_fns;
    case GGML_OP_LOG:  return &log_fns;
    case GGML_OP_SIN:  return &sin_fns;
    case GGML_OP_COS:  return &cos_fns;
    default:           return NULL;
    }
}

static bool math_supports(const struct ggml_tensor *dst)
{
    return math_fns(dst->op) != NULL && same_float_rows(dst, dst->src[0]);
}

static void math_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct op_args args = { { 0 } };
    map_rows(params, dst, math_fns(dst->op), NULL, &args);
}

const struct ggml__op_impl ggml__op_math = {
    .kernel = math_kernel,
    .supports = math_supports,
    .work_size = elementwise_work_size,
};

/* ----------------------------------------------------------------- UNARY */

static bool unary_supports(const struct ggml_tensor *dst)
{
    const int32_t op = ggml__get_op_params_i32(dst, 0);
    return op >= 0 && op < GGML_UNARY_OP_COUNT && unary_fns[op].row != NULL && same_float_rows(dst, dst->src[0]);
}

static void unary_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const enum ggml_unary_op op = (enum ggml_unary_op) ggml__get_op_params_i32(dst, 0);
    struct op_args args = { { 0 } };
    if (op == GGML_UNARY_OP_XIELU)
        for (int k = 0; k < 4; k++)
            args.p[k] = ggml__get_op_params_f32(dst, 1 + k);
    /* an output larger than the last-level cache: stored around it */
    const struct ggml__cpu_kernels *k = params->kernels;
    const bool stream = k->unary_stream[op] != NULL && ggml__output_streams(k, dst);
    map_rows(params, dst, &unary_fns[op], stream ? k->unary_stream[op] : k->unary[op], &args);
}

const struct ggml__op_impl ggml__op_unary = {
    .kernel = unary_kernel,
    .supports = unary_supports,
    .work_size = elementwise_work_size,
};

/* ------------------------------------------------- SCALE, CLAMP, LEAKY_RELU */

static bool single_source_supports(const struct ggml_tensor *dst)
{
    return same_float_rows(dst, dst->src[0]);
}

static void scale_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct op_args args = { { ggml__get_op_params_f32(dst, 0), ggml__get_op_params_f32(dst, 1) } };
    int64_t first, last;
    if (args.p[1] == 0.0f && dense_share(params, dst, &first, &last)) {
        /* no bias: the table's scale */
        if (first < last)
            params->kernels->scale(last - first, (float *) dst->data + first,
                                   (const float *) dst->src[0]->data + first, args.p[0]);
        return;
    }
    map_rows(params, dst, &scale_fns, NULL, &args);
}

const struct ggml__op_impl ggml__op_scale = {
    .kernel = scale_kernel,
    .supports = single_source_supports,
    .work_size = elementwise_work_size,
};

static void clamp_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct op_args args = { { ggml__get_op_params_f32(dst, 0), ggml__get_op_params_f32(dst, 1) } };
    map_rows(params, dst, &clamp_fns, NULL, &args);
}

const struct ggml__op_impl ggml__op_clamp = {
    .kernel = clamp_kernel,
    .supports = single_source_supports,
    .work_size = elementwise_work_size,
};

static void leaky_relu_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct op_args args = { { ggml__get_op_params_f32(dst, 0) } };
    map_rows(params, dst, &leaky_relu_fns, NULL, &args);
}

const struct ggml__op_impl ggml__op_leaky_relu = {
    .kernel = leaky_relu_kernel,
    .supports = single_source_supports,
    .work_size = elementwise_work_size,
};

/* ------------------------------------------------------------------ ADD1 */

/* A quantized type this kernel can decode and re-encode. */
static bool quantized_codec(enum ggml_type type)
{
    const struct ggml_type_traits *traits = ggml_get_type_traits(type);
    return traits != NULL && traits->is_quantized && traits->to_float != NULL && traits->from_float_ref != NULL;
}

static bool add1_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    if (a == NULL || b == NULL || !ggml_is_scalar(b) || !float_type(b->type))
        return false;
    if (float_type(a->type))
        return same_float_rows(dst, a);
    return ggml__type_is_valid(a->type) && quantized_codec(a->type) && dst->type == a->type &&
           ggml__same_shape(dst, a) && ggml__rows_contiguous(dst) && ggml__rows_contiguous(a);
}

static void add1_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const struct op_args args = { { load_elem(b->type, (const char *) b->data, 0) } };
    if (float_type(a->type)) {
        map_rows(params, dst, &add1_fns, NULL, &args);
        return;
    }
    /* quantized rows: decode, add, re-encode (the same code on both paths) */
    const struct ggml_type_traits *traits = ggml_get_type_traits(a->type);
    float *tmp = thread_scratch(params, dst);
    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        traits->to_float(row_at(a, dst->ne, r), tmp, dst->ne[0]);
        row_add1(dst->ne[0], tmp, tmp, &args);
        traits->from_float_ref(tmp, row_at(dst, dst->ne, r), dst->ne[0]);
    }
}

const struct ggml__op_impl ggml__op_add1 = {
    .kernel = add1_kernel,
    .supports = add1_supports,
    .work_size = elementwise_work_size,
};

/* ------------------------------------------------------------------- GLU */

static bool glu_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const int32_t op = ggml__get_op_params_i32(dst, 0);
    if (op < 0 || op >= GGML_GLU_OP_COUNT || glu_fns[op].row == NULL || a == NULL)
        return false;
    if (!float_type(dst->type) || !float_type(a->type) || !ggml_is_contiguous_rows(dst) ||
        !ggml_is_contiguous_rows(a))
        return false;
    if (b != NULL)
        return float_type(b->type) && ggml_is_contiguous_rows(b) && ggml_are_same_shape(a, b) &&
               ggml_are_same_shape(a, dst);
    return dst->ne[0] == a->ne[0] / 2 && dst->ne[1] == a->ne[1] && dst->ne[2] == a->ne[2] &&
           dst->ne[3] == a->ne[3];
}

static void glu_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    const struct ggml_tensor *a = dst->src[0], *b = dst->src[1];
    const enum ggml_glu_op op = (enum ggml_glu_op) ggml__get_op_params_i32(dst, 0);
    const bool swapped = ggml__get_op_params_i32(dst, 1) != 0;
    const struct op_args args = { { ggml__get_op_params_f32(dst, 2), ggml__get_op_params_f32(dst, 3) } };
    const enum ggml_type gate_type = b != NULL ? b->type : a->type;
    const int64_t n = dst->ne[0];
    /* fused: value and gate are the two halves of a's row, in element offsets */
    const int64_t value_offset = b == NULL && swapped ? n : 0;
    const int64_t gate_offset = b == NULL && !swapped ? n : 0;
    const size_t a_size = ggml_type_size(a->type), gate_size = ggml_type_size(gate_type);
    const bool direct = a->type == GGML_TYPE_F32 && gate_type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32;
    float *value_tmp = thread_scratch(params, dst);
    float *gate_tmp = value_tmp + scratch_floats(dst) / 2;
    /* the kernel table's row (NULL: glu_fns[op].row); SWIGLU_OAI has parameters and no entry */
    void (*const table_row)(int64_t, float *, const float *, const float *) = params->kernels->glu[op];

    int64_t first, last;
    ggml__split_rows(ggml_nrows(dst), params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        const char *arow = row_at(a, dst->ne, r);
        const char *value = arow + (size_t) value_offset * a_size;
        const char *gate = (b != NULL ? row_at(b, dst->ne, r) : arow) + (size_t) gate_offset * gate_size;
        char *drow = row_at(dst, dst->ne, r);
        if (params->use_ref) {
            for (int64_t i = 0; i < n; i++)
                store_elem(dst->type, drow, i,
                           glu_fns[op].elem(load_elem(a->type, value, i), load_elem(gate_type, gate, i), &args));
        } else {
            float *y = direct ? (float *) drow : value_tmp;
            const float *x = direct ? (const float *) value : value_tmp;
            const float *g = direct ? (const float *) gate : gate_tmp;
            if (!direct) {
                load_row(a->type, value, n, value_tmp);
                load_row(gate_type, gate, n, gate_tmp);
            }
            if (table_row != NULL)
                table_row(n, y, x, g);
            else
                glu_fns[op].row(n, y, x, g, &args);
            if (!direct)
                store_row(dst->type, drow, n, value_tmp);
        }
    }
}

const struct ggml__op_impl ggml__op_glu = {
    .kernel = glu_kernel,
    .supports = glu_supports,
    .work_size = elementwise_work_size,
};
