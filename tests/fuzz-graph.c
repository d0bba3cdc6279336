/*
 * fuzz-graph.c - random graphs of the public op constructors, built,
 * allocated and computed on the CPU backend (and the BLAS backend when its
 * plugin loads).
 *
 * One graph is a pure function of its 64-bit seed (or, in the libFuzzer
 * build, of the input bytes): every decision is drawn from a struct
 * entropy, so that `fuzz-graph --seed S --iterations 1` rebuilds exactly the
 * graph that iteration S of a longer run built.
 *
 * What a graph must show (anything else is a finding):
 *  - the process survives (the sanitizers abort it otherwise) and every
 *    graph finishes within the time bound (alarm);
 *  - a constructor that returns NULL logged exactly one ERROR, except when a
 *    required operand was NULL, where it logged none; a constructor that
 *    returns a tensor logged no ERROR;
 *  - a failed allocation logs exactly one ERROR;
 *  - a built and allocated graph computes (GGML_STATUS_SUCCESS) or returns
 *    an error status with exactly one logged ERROR;
 *  - every tensor of the graph reads back with ggml_backend_tensor_get,
 *    without an ERROR (a view whose ggml_nbytes reaches beyond the memory
 *    of its source reads back what that memory holds, and asking for more
 *    is refused with one ERROR).
 *
 * With --tamper P, P percent of the graphs are changed after construction
 * (see "tampering" below) and computed on one backend: the process must
 * survive them, within the time bound, like any other graph.
 *
 * By default the iterations run in a child process: a child that dies
 * (sanitizer report, signal, time bound) is recorded as a finding with the
 * seed of the graph it was building, and a new child continues with the
 * next seed.  The exit status is non-zero when there was any finding.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-blas.h"
#include "ggml-cpu.h"
#include "dense-strides.h"

/* Under AddressSanitizer, a malloc the library cannot get must return NULL
 * (the library then reports it), not end the process; the environment's
 * ASAN_OPTIONS still win. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

/* ------------------------------------------------------------ entropy */

/* The source of every decision: a PRNG, or the bytes of a libFuzzer input
 * (read in order; zeros once they run out). */
struct entropy {
    uint64_t state;
    const uint8_t *bytes;
    size_t n_bytes;
    size_t pos;
};

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A value in [0, n); n > 0. */
static uint64_t draw(struct entropy *e, uint64_t n)
{
    if (e->bytes == NULL)
        return splitmix64(&e->state) % n;
    uint64_t v = 0;
    for (uint64_t span = 1; span < n && span != 0; span <<= 8) {
        uint8_t b = e->pos < e->n_bytes ? e->bytes[e->pos] : 0;
        e->pos++;
        v = (v << 8) | b;
    }
    return v % n;
}

static int draw_int(struct entropy *e, int lo, int hi)
{
    return lo + (int) draw(e, (uint64_t) (hi - lo + 1));
}

/* True with probability percent / 100. */
static bool chance(struct entropy *e, int percent)
{
    return (int) draw(e, 100) < percent;
}

/* ------------------------------------------------------- run settings */

/* Op families that a run may leave out (--skip), to keep finding other
 * defects while known ones are being fixed.  The default runs all. */
enum skip_flag {
    SKIP_QUANT_PERMUTE = 1 << 0, /* D1: permute/transpose of block-quantized tensors */
    SKIP_EMPTY_UPSCALE = 1 << 1, /* D2: upscale/interpolate of a zero-element source */
    SKIP_SCHED_EMPTY = 1 << 2,   /* D3: the scheduler on a graph without nodes or leaves */
    SKIP_FLOAT_TO_INT = 1 << 3,  /* D4: NaN/Inf/huge inputs and copies to integer/quantized types */
};

static const struct {
    const char *name;
    unsigned flag;
} skip_names[] = {
    { "D1", SKIP_QUANT_PERMUTE },
    { "D2", SKIP_EMPTY_UPSCALE },
    { "D3", SKIP_SCHED_EMPTY },
    { "D4", SKIP_FLOAT_TO_INT },
};

struct settings {
    unsigned skip;
    bool try_hopeless;  /* allocate graphs holding a tensor no allocator can hold */
    int threads_max;
    int time_bound;  /* seconds one graph may take */
    int tamper;      /* percent of graphs whose nodes are tampered with (--tamper) */
    bool verbose;
};

/* Outcome counts of a run; lives in shared memory in the forking mode. */
struct counts {
    uint64_t graphs;           /* graphs attempted */
    uint64_t built;            /* graphs built without a NULL among the expanded tensors */
    uint64_t refused_build;    /* graphs whose construction failed (a NULL expanded, no node) */
    uint64_t refused_alloc;    /* allocation returned an error */
    uint64_t refused_compute;  /* compute returned an error status */
    uint64_t computed;         /* compute returned GGML_STATUS_SUCCESS */
    uint64_t too_large;        /* built but not allocated: more memory or work than a test should take */
    uint64_t ops;              /* constructor calls */
    uint64_t ops_refused;      /* of which returned NULL */
    uint64_t tampered;         /* graphs whose nodes were tampered with */
};

#define MAX_FINDINGS 256

struct finding {
    uint64_t seed;
    char what[160];
};

/* The state shared between the supervisor and its child. */
struct shared {
    struct counts counts;
    uint64_t next_iteration;   /* the iteration the child works on */
    uint64_t n_findings;
    struct finding findings[MAX_FINDINGS];
};

static struct shared *shared;
static struct settings settings = { .threads_max = 3, .time_bound = 60, .try_hopeless = true };

static void record_finding(uint64_t seed, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void record_finding(uint64_t seed, const char *fmt, ...)
{
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    fprintf(stderr, "fuzz-graph: FINDING seed %" PRIu64 ": %s\n", seed, what);
    uint64_t i = shared->n_findings++;
    if (i < MAX_FINDINGS) {
        shared->findings[i].seed = seed;
        snprintf(shared->findings[i].what, sizeof shared->findings[i].what, "%s", what);
    }
}

/* ------------------------------------------------------------- the log */

static int log_errors;
static char log_last[256];

/* Errors that a kernel logs about its input data while the computation
 * succeeds, as documented: ggml_mul_mat_id(3) on expert ids out of range. */
static bool is_data_diagnostic(const char *text)
{
    return strncmp(text, "ggml_mul_mat_id: ", 17) == 0 && strstr(text, "expert ids outside") != NULL;
}

static void log_sink(enum ggml_log_level level, const char *text, void *user_data)
{
    (void) user_data;
    if (level == GGML_LOG_LEVEL_ERROR && !is_data_diagnostic(text)) {
        log_errors++;
        snprintf(log_last, sizeof log_last, "%s", text);
        size_t n = strlen(log_last);
        while (n > 0 && log_last[n - 1] == '\n')
            log_last[--n] = '\0';
    }
    if (settings.verbose && level != GGML_LOG_LEVEL_DEBUG)
        fprintf(stderr, "  log: %s", text);
}

/* ---------------------------------------------------------- backends */

struct backends {
    ggml_backend_t cpu;
    ggml_backend_t blas; /* NULL without the plugin */
};

static struct backends backends;

static bool backends_init(void)
{
    backends.cpu = ggml_backend_cpu_init();
    if (backends.cpu == NULL)
        return false;
    const char *dir = getenv("BLAS_PLUGIN_DIR");
    if (dir != NULL && dir[0] != '\0' && getenv("GGML_BACKEND_PATH") == NULL)
        setenv("GGML_BACKEND_PATH", dir, 1);
    if (getenv("GGML_BACKEND_PATH") != NULL) {
        ggml_backend_reg_t reg = ggml_backend_blas_reg();
        if (reg != NULL && ggml_backend_reg_dev_count(reg) > 0)
            backends.blas = ggml_backend_dev_init(ggml_backend_reg_dev_get(reg, 0), NULL);
    }
    log_errors = 0;
    return true;
}

/* ------------------------------------------------------------ a graph */

#define MAX_POOL 48
#define MAX_LEAVES 96
#define MAX_OPS 14
/* A graph whose tensors need more than this is built but not run ... */
#define MAX_GRAPH_BYTES ((size_t) 32 << 20)
/* Multiply-adds (roughly) a graph may take: a few seconds in a loaded sanitizer build. */
#define MAX_GRAPH_OPS 2e9
/* ... not counting tensors of this size or more: no allocator may accept
 * them (a graph holding one is refused at allocation). */
#define HOPELESS_TENSOR_BYTES ((size_t) 1 << 50)

struct builder {
    struct entropy *e;
    uint64_t seed;
    struct ggml_context *ctx;
    struct ggml_tensor *pool[MAX_POOL];  /* results and leaves operands come from */
    int n_pool;
    struct ggml_tensor *leaves[MAX_LEAVES];
    int n_leaves;
    struct ggml_tensor *results[MAX_OPS * 2];
    int n_results;
    bool expanded_null;
    bool tampered;
};

static void pool_add(struct builder *b, struct ggml_tensor *t)
{
    if (t == NULL)
        return;
    if (b->n_pool < MAX_POOL)
        b->pool[b->n_pool++] = t;
    else
        b->pool[draw(b->e, MAX_POOL)] = t;
}

/* Checks the log of one constructor call. */
static struct ggml_tensor *checked(struct builder *b, struct ggml_tensor *r, bool null_operand, const char *what)
{
    shared->counts.ops++;
    if (settings.verbose && r != NULL)
        fprintf(stderr, "  %s -> %s [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] nb [%zu, %zu, %zu, %zu] offs %zu\n",
                what, ggml_type_name(r->type), r->ne[0], r->ne[1], r->ne[2], r->ne[3], r->nb[0], r->nb[1], r->nb[2],
                r->nb[3], r->view_offs);
    else if (settings.verbose)
        fprintf(stderr, "  %s -> NULL\n", what);
    if (r == NULL)
        shared->counts.ops_refused++;
    if (r == NULL && null_operand && log_errors != 0)
        record_finding(b->seed, "%s: NULL operand, NULL result, %d errors logged (want 0): %s", what, log_errors, log_last);
    else if (r == NULL && !null_operand && log_errors != 1)
        record_finding(b->seed, "%s: refused with %d errors logged (want 1)%s%s", what, log_errors,
                       log_errors ? ": " : "", log_errors ? log_last : "");
    else if (r != NULL && log_errors != 0)
        record_finding(b->seed, "%s: returned a tensor but logged %d errors: %s", what, log_errors, log_last);
    log_errors = 0;
    return r;
}

/* A setter (void) logs at most one error: it refuses bad arguments with
 * one message and changes nothing. */
static void checked_setter(struct builder *b, const char *what)
{
    if (log_errors > 1)
        record_finding(b->seed, "%s logged %d errors (want at most 1): %s", what, log_errors, log_last);
    log_errors = 0;
}

#define SETTER(b, name, call) (log_errors = 0, (call), checked_setter((b), (name)))

/* OP(b, name, null_operand, call): one constructor call, checked. */
#define OP(b, name, nullin, call) (log_errors = 0, checked((b), (call), (nullin), (name)))

/* -------------------------------------------------- shapes and types */

static int64_t draw_dim(struct entropy *e)
{
    static const int64_t huge[] = { 1 << 16, INT64_C(1) << 31, INT64_C(1) << 40, INT64_MAX / 2, INT64_MAX, -1 };
    int c = (int) draw(e, 100);
    if (c < 30)
        return 1;
    if (c < 75)
        return draw_int(e, 2, 8);
    if (c < 91)
        return draw_int(e, 9, 40);
    if (c < 96)
        return 0;
    if (c < 98)
        return draw_int(e, 41, 130);
    return huge[draw(e, sizeof huge / sizeof huge[0])];
}

static enum ggml_type draw_quant_type(struct entropy *e)
{
    static const enum ggml_type q[] = {
        GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,
        GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,
        GGML_TYPE_Q8_K, GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS, GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ3_S,
        GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0, GGML_TYPE_MXFP4,
    };
    return q[draw(e, sizeof q / sizeof q[0])];
}

/* Mostly F32, the other float types, quantized and integer types, now and
 * then any number at all (removed and out-of-range types included). */
static enum ggml_type draw_type(struct entropy *e)
{
    int c = (int) draw(e, 100);
    if (c < 62)
        return GGML_TYPE_F32;
    if (c < 76)
        return GGML_TYPE_F16;
    if (c < 80)
        return GGML_TYPE_BF16;
    if (c < 90)
        return draw_quant_type(e);
    if (c < 95)
        return GGML_TYPE_I32;
    if (c < 97)
        return (enum ggml_type) draw_int(e, GGML_TYPE_I8, GGML_TYPE_I64);
    return (enum ggml_type) draw_int(e, 0, GGML_TYPE_COUNT + 2);
}

static enum ggml_type draw_index_type(struct entropy *e)
{
    int c = (int) draw(e, 100);
    if (c < 80)
        return GGML_TYPE_I32;
    if (c < 90)
        return GGML_TYPE_I64;
    return draw_type(e);
}

static struct ggml_tensor *leaf_ne(struct builder *b, enum ggml_type type, const int64_t ne[4])
{
    int n_dims = 4;
    while (n_dims > 1 && ne[n_dims - 1] == 1)
        n_dims--;
    struct ggml_tensor *t = OP(b, "ggml_new_tensor", false, ggml_new_tensor(b->ctx, type, n_dims, ne));
    if (t != NULL && b->n_leaves < MAX_LEAVES)
        b->leaves[b->n_leaves++] = t;
    return t;
}

static struct ggml_tensor *leaf(struct builder *b, enum ggml_type type)
{
    int64_t ne[4] = { 1, 1, 1, 1 };
    int n_dims = draw_int(b->e, 1, 4);
    for (int i = 0; i < n_dims; i++)
        ne[i] = draw_dim(b->e);
    return leaf_ne(b, type, ne);
}

/* A leaf shaped like t, each dimension now and then 1 (broadcast) or
 * another size (most often invalid). */
static struct ggml_tensor *leaf_like(struct builder *b, const struct ggml_tensor *t, enum ggml_type type)
{
    if (t == NULL)
        return leaf(b, type);
    int64_t ne[4];
    for (int i = 0; i < 4; i++) {
        ne[i] = t->ne[i];
        int c = (int) draw(b->e, 100);
        if (c < 12)
            ne[i] = 1;
        else if (c < 16)
            ne[i] = draw_dim(b->e);
    }
    return leaf_ne(b, type, ne);
}

/* An index leaf for a table of n_rows rows: values in range and out of
 * range alike (see fill). */
static struct ggml_tensor *index_leaf(struct builder *b, int64_t n0, int64_t n1, int64_t n2)
{
    int64_t ne[4] = { n0, n1, n2, 1 };
    if (chance(b->e, 10))
        ne[draw(b->e, 3)] = draw_dim(b->e);
    return leaf_ne(b, draw_index_type(b->e), ne);
}

/* An operand: a tensor made before (result or leaf) or a new leaf; now and
 * then NULL, to check NULL propagation. */
static struct ggml_tensor *operand(struct builder *b)
{
    int c = (int) draw(b->e, 100);
    if (c < 2)
        return NULL;
    if (c < 72 && b->n_pool > 0)
        return b->pool[draw(b->e, (uint64_t) b->n_pool)];
    return leaf(b, draw_type(b->e));
}

static float draw_param(struct entropy *e)
{
    static const float odd[] = { 0.0f, -0.0f, 1.0f, -1.0f, 1e-6f, 1e30f, -1e30f, INFINITY, -INFINITY, NAN, 1e-40f, 3.4e38f };
    if (chance(e, 80))
        return (float) draw_int(e, -4000, 4000) / 1000.0f;
    return odd[draw(e, sizeof odd / sizeof odd[0])];
}

static int draw_small(struct entropy *e)
{
    static const int odd[] = { 0, -1, -2, 1000000, INT32_MAX, INT32_MIN };
    if (chance(e, 90))
        return draw_int(e, 0, 4);
    return odd[draw(e, sizeof odd / sizeof odd[0])];
}

static bool is_quantized(const struct ggml_tensor *t)
{
    return t != NULL && ggml_is_quantized(t->type);
}

static bool is_float_type(enum ggml_type type)
{
    return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16;
}

/* ------------------------------------------------------- custom ops */

static void custom_clear(struct ggml_tensor *dst, int ith)
{
    if (ith == 0 && dst->data != NULL && ggml_is_contiguous(dst))
        memset(dst->data, 0, ggml_nbytes(dst));
}

static void custom1_fn(struct ggml_tensor *dst, const struct ggml_tensor *a, int ith, int nth, void *userdata)
{
    (void) a, (void) nth, (void) userdata;
    custom_clear(dst, ith);
}

static void custom2_fn(struct ggml_tensor *dst, const struct ggml_tensor *a, const struct ggml_tensor *b, int ith,
                       int nth, void *userdata)
{
    (void) a, (void) b, (void) nth, (void) userdata;
    custom_clear(dst, ith);
}

static void custom3_fn(struct ggml_tensor *dst, const struct ggml_tensor *a, const struct ggml_tensor *b,
                       const struct ggml_tensor *c, int ith, int nth, void *userdata)
{
    (void) a, (void) b, (void) c, (void) nth, (void) userdata;
    custom_clear(dst, ith);
}

static void custom_fn(struct ggml_tensor *dst, int ith, int nth, void *userdata)
{
    (void) nth, (void) userdata;
    custom_clear(dst, ith);
}

/* ------------------------------------------------------ op families */

#define NULLS2(x, y) ((x) == NULL || (y) == NULL)
#define NULLS3(x, y, z) (NULLS2(x, y) || (z) == NULL)

static struct ggml_tensor *op_unary(struct builder *b)
{
    struct ggml_tensor *a = operand(b);
    bool n = a == NULL;
    struct ggml_context *ctx = b->ctx;
    switch (draw(b->e, 22)) {
    case 0: return OP(b, "ggml_unary", n, ggml_unary(ctx, a, (enum ggml_unary_op) draw_int(b->e, 0, GGML_UNARY_OP_COUNT)));
    case 1: return OP(b, "ggml_exp", n, ggml_exp(ctx, a));
    case 2: return OP(b, "ggml_log", n, ggml_log(ctx, a));
    case 3: return OP(b, "ggml_sqrt", n, ggml_sqrt(ctx, a));
    case 4: return OP(b, "ggml_sqr", n, ggml_sqr(ctx, a));
    case 5: return OP(b, "ggml_sin", n, ggml_sin(ctx, a));
    case 6: return OP(b, "ggml_leaky_relu", n, ggml_leaky_relu(ctx, a, draw_param(b->e), chance(b->e, 30)));
    case 7: return OP(b, "ggml_clamp", n, ggml_clamp(ctx, a, draw_param(b->e), draw_param(b->e)));
    case 8: return OP(b, "ggml_scale", n, ggml_scale(ctx, a, draw_param(b->e)));
    case 9: return OP(b, "ggml_scale_bias", n, ggml_scale_bias(ctx, a, draw_param(b->e), draw_param(b->e)));
    case 10: return OP(b, "ggml_xielu", n, ggml_xielu(ctx, a, draw_param(b->e), draw_param(b->e), draw_param(b->e), draw_param(b->e)));
    case 11: return OP(b, "ggml_fill", n, ggml_fill(ctx, a, draw_param(b->e)));
    case 12: return OP(b, "ggml_cumsum", n, ggml_cumsum(ctx, a));
    case 13: return OP(b, "ggml_diag", n, ggml_diag(ctx, a));
    case 14: return OP(b, "ggml_tri", n, ggml_tri(ctx, a, (enum ggml_tri_type) draw_int(b->e, 0, 4)));
    case 15: return OP(b, "ggml_gelu", n, ggml_gelu(ctx, a));
    case 16: return OP(b, "ggml_silu", n, ggml_silu(ctx, a));
    case 17: return OP(b, "ggml_softplus", n, ggml_softplus(ctx, a));
    case 18: return OP(b, "ggml_round", n, ggml_round(ctx, a));
    case 19: return OP(b, "ggml_diag_mask_inf", n, ggml_diag_mask_inf(ctx, a, draw_small(b->e)));
    case 20: return OP(b, "ggml_diag_mask_zero", n, ggml_diag_mask_zero(ctx, a, draw_small(b->e)));
    default: return OP(b, "ggml_dup", n, ggml_dup(ctx, a));
    }
}

static struct ggml_tensor *op_binary(struct builder *b)
{
    struct ggml_tensor *a = operand(b);
    struct ggml_tensor *c = chance(b->e, 70) ? leaf_like(b, a, chance(b->e, 85) ? GGML_TYPE_F32 : draw_type(b->e)) : operand(b);
    bool n = NULLS2(a, c);
    struct ggml_context *ctx = b->ctx;
    switch (draw(b->e, 12)) {
    case 0: return OP(b, "ggml_add", n, ggml_add(ctx, a, c));
    case 1: return OP(b, "ggml_sub", n, ggml_sub(ctx, a, c));
    case 2: return OP(b, "ggml_mul", n, ggml_mul(ctx, a, c));
    case 3: return OP(b, "ggml_div", n, ggml_div(ctx, a, c));
    case 4: return OP(b, "ggml_add_inplace", n, ggml_add_inplace(ctx, a, c));
    case 5: return OP(b, "ggml_mul_inplace", n, ggml_mul_inplace(ctx, a, c));
    case 6: return OP(b, "ggml_add_cast", n, ggml_add_cast(ctx, a, c, draw_type(b->e)));
    case 7: {
        struct ggml_tensor *ids = index_leaf(b, a ? a->ne[1] : 1, a ? a->ne[2] : 1, 1);
        return OP(b, "ggml_add_id", NULLS3(a, c, ids), ggml_add_id(ctx, a, c, ids));
    }
    case 8: return OP(b, "ggml_count_equal", n, ggml_count_equal(ctx, a, c));
    case 9: return OP(b, "ggml_div_inplace", n, ggml_div_inplace(ctx, a, c));
    case 10: return OP(b, "ggml_repeat", n, ggml_repeat(ctx, a, c));
    default: return OP(b, "ggml_repeat_back", n, ggml_repeat_back(ctx, a, c));
    }
}

static struct ggml_tensor *op_reduce(struct builder *b)
{
    struct ggml_tensor *a = operand(b);
    bool n = a == NULL;
    struct ggml_context *ctx = b->ctx;
    switch (draw(b->e, 8)) {
    case 0: return OP(b, "ggml_sum", n, ggml_sum(ctx, a));
    case 1: return OP(b, "ggml_sum_rows", n, ggml_sum_rows(ctx, a));
    case 2: return OP(b, "ggml_mean", n, ggml_mean(ctx, a));
    case 3: return OP(b, "ggml_argmax", n, ggml_argmax(ctx, a));
    case 4: return OP(b, "ggml_norm", n, ggml_norm(ctx, a, draw_param(b->e)));
    case 5: return OP(b, "ggml_rms_norm", n, ggml_rms_norm(ctx, a, draw_param(b->e)));
    case 6: return OP(b, "ggml_group_norm", n, ggml_group_norm(ctx, a, draw_small(b->e), draw_param(b->e)));
    default: return OP(b, "ggml_l2_norm", n, ggml_l2_norm(ctx, a, draw_param(b->e)));
    }
}

static struct ggml_tensor *op_softmax(struct builder *b)
{
    struct ggml_tensor *a = operand(b);
    struct ggml_tensor *mask = NULL;
    if (chance(b->e, 60) && a != NULL) {
        int64_t ne[4] = { a->ne[0], a->ne[1] + (a->ne[1] < 4096 && chance(b->e, 30) ? draw_int(b->e, 0, 3) : 0), 1, 1 };
        if (chance(b->e, 30)) {
            ne[2] = a->ne[2];
            ne[3] = a->ne[3];
        }
        if (chance(b->e, 10))
            ne[draw(b->e, 4)] = draw_dim(b->e);
        mask = leaf_ne(b, chance(b->e, 50) ? GGML_TYPE_F16 : chance(b->e, 90) ? GGML_TYPE_F32 : draw_type(b->e), ne);
    }
    struct ggml_tensor *r = OP(b, "ggml_soft_max_ext", a == NULL, ggml_soft_max_ext(b->ctx, a, mask, draw_param(b->e),
                                                                                 chance(b->e, 70) ? 0.0f : draw_param(b->e)));
    if (r != NULL && chance(b->e, 20)) {
        int64_t ne[4] = { a->ne[2], 1, 1, 1 };
        struct ggml_tensor *sinks = leaf_ne(b, GGML_TYPE_F32, ne);
        SETTER(b, "ggml_soft_max_add_sinks", ggml_soft_max_add_sinks(r, sinks));
    }
    return r;
}

static struct ggml_tensor *op_rope(struct builder *b)
{
    static const int modes[] = { GGML_ROPE_TYPE_NORMAL, GGML_ROPE_TYPE_NEOX, GGML_ROPE_TYPE_MROPE,
                                 GGML_ROPE_TYPE_VISION, GGML_ROPE_TYPE_IMROPE, 1, 77 };
    struct ggml_tensor *a = operand(b);
    int mode = modes[draw(b->e, sizeof modes / sizeof modes[0])];
    bool multi = mode == GGML_ROPE_TYPE_MROPE || mode == GGML_ROPE_TYPE_VISION || mode == GGML_ROPE_TYPE_IMROPE;
    int64_t n_pos = a != NULL && a->ne[2] < 4096 ? a->ne[2] * (multi ? 4 : 1) : draw_dim(b->e);
    struct ggml_tensor *pos = index_leaf(b, n_pos, 1, 1);
    struct ggml_tensor *freq = chance(b->e, 20) ? leaf(b, GGML_TYPE_F32) : NULL;
    int n_dims = a != NULL && a->ne[0] < 4096 && chance(b->e, 80) ? (int) a->ne[0] - 2 * draw_int(b->e, 0, 2)
                                                                   : draw_small(b->e);
    float base = chance(b->e, 80) ? 10000.0f : draw_param(b->e);
    if (multi || chance(b->e, 10)) {
        int sections[GGML_MROPE_SECTIONS];
        for (int i = 0; i < GGML_MROPE_SECTIONS; i++)
            sections[i] = draw_small(b->e);
        if (chance(b->e, 15))
            return OP(b, "ggml_rope_multi_back", NULLS2(a, pos),
                      ggml_rope_multi_back(b->ctx, a, pos, freq, n_dims, sections, mode, draw_small(b->e), base,
                                           draw_param(b->e), draw_param(b->e), draw_param(b->e), draw_param(b->e),
                                           draw_param(b->e)));
        return OP(b, "ggml_rope_multi", NULLS2(a, pos),
                  ggml_rope_multi(b->ctx, a, pos, freq, n_dims, sections, mode, draw_small(b->e), base, draw_param(b->e),
                                  draw_param(b->e), draw_param(b->e), draw_param(b->e), draw_param(b->e)));
    }
    if (chance(b->e, 15))
        return OP(b, "ggml_rope_ext_back", NULLS2(a, pos),
                  ggml_rope_ext_back(b->ctx, a, pos, freq, n_dims, mode, draw_small(b->e), base, draw_param(b->e),
                                     draw_param(b->e), draw_param(b->e), draw_param(b->e), draw_param(b->e)));
    return OP(b, "ggml_rope_ext", NULLS2(a, pos),
              ggml_rope_ext(b->ctx, a, pos, freq, n_dims, mode, draw_small(b->e), base, draw_param(b->e), draw_param(b->e),
                            draw_param(b->e), draw_param(b->e), draw_param(b->e)));
}

static struct ggml_tensor *op_rows(struct builder *b)
{
    struct ggml_tensor *a = operand(b);
    struct ggml_context *ctx = b->ctx;
    switch (draw(b->e, 2)) {
    case 0: {
        struct ggml_tensor *ids = index_leaf(b, draw_dim(b->e), a ? a->ne[2] : 1, a ? a->ne[3] : 1);
        return OP(b, "ggml_get_rows", NULLS2(a, ids), ggml_get_rows(ctx, a, ids));
    }
    default: {
        /* set_rows(dst a, src c, ids): rows of c go to rows ids of a */
        enum ggml_type dst_type = draw_type(b->e);
        if ((settings.skip & SKIP_FLOAT_TO_INT) && !is_float_type(dst_type))
            dst_type = GGML_TYPE_F32;
        struct ggml_tensor *dst = a != NULL && chance(b->e, 50) ? a : leaf_like(b, a, dst_type);
        struct ggml_tensor *src = leaf_like(b, dst, GGML_TYPE_F32);
        if (src != NULL && dst != NULL && chance(b->e, 70)) {
            int64_t ne[4] = { dst->ne[0], draw_dim(b->e), dst->ne[2], dst->ne[3] };
            src = leaf_ne(b, GGML_TYPE_F32, ne);
        }
        struct ggml_tensor *ids = index_leaf(b, src ? src->ne[1] : 1, src ? src->ne[2] : 1, src ? src->ne[3] : 1);
        if ((settings.skip & SKIP_FLOAT_TO_INT) && dst != NULL && !is_float_type(dst->type))
            return NULL;
        return OP(b, "ggml_set_rows", NULLS3(dst, src, ids), ggml_set_rows(ctx, dst, src, ids));
    }
    }
}

static struct ggml_tensor *op_view(struct builder *b)
{
    struct ggml_tensor *a = operand(b);
    bool n = a == NULL;
    struct ggml_context *ctx = b->ctx;
    int64_t ne[4];
    for (int i = 0; i < 4; i++)
        ne[i] = a != NULL && chance(b->e, 70) ? a->ne[i] : draw_dim(b->e);
    size_t nb1 = a != NULL && chance(b->e, 70) ? a->nb[1] : (size_t) draw_small(b->e) * 4;
    size_t nb2 = a != NULL && chance(b->e, 70) ? a->nb[2] : (size_t) draw_small(b->e) * 16;
    size_t nb3 = a != NULL && chance(b->e, 70) ? a->nb[3] : (size_t) draw_small(b->e) * 64;
    size_t offset = chance(b->e, 60) ? 0 : (size_t) draw_small(b->e) * (chance(b->e, 50) ? 4 : 1);
    switch (draw(b->e, 12)) {
    case 0: return OP(b, "ggml_view_1d", n, ggml_view_1d(ctx, a, ne[0], offset));
    case 1: return OP(b, "ggml_view_2d", n, ggml_view_2d(ctx, a, ne[0], ne[1], nb1, offset));
    case 2: return OP(b, "ggml_view_3d", n, ggml_view_3d(ctx, a, ne[0], ne[1], ne[2], nb1, nb2, offset));
    case 3: return OP(b, "ggml_view_4d", n, ggml_view_4d(ctx, a, ne[0], ne[1], ne[2], ne[3], nb1, nb2, nb3, offset));
    case 4:
    case 5: {
        if ((settings.skip & SKIP_QUANT_PERMUTE) && is_quantized(a))
            return NULL;
        int ax[4] = { 0, 1, 2, 3 };
        for (int i = 3; i > 0; i--) {
            int j = draw_int(b->e, 0, i);
            int t = ax[i];
            ax[i] = ax[j];
            ax[j] = t;
        }
        if (chance(b->e, 8))
            ax[draw(b->e, 4)] = draw_int(b->e, -1, 4);
        return OP(b, "ggml_permute", n, ggml_permute(ctx, a, ax[0], ax[1], ax[2], ax[3]));
    }
    case 6:
        if ((settings.skip & SKIP_QUANT_PERMUTE) && is_quantized(a))
            return NULL;
        return OP(b, "ggml_transpose", n, ggml_transpose(ctx, a));
    case 7: {
        /* a reshape to the same element count, split another way (or not) */
        int64_t total = a != NULL ? a->ne[0] * a->ne[1] * a->ne[2] * a->ne[3] : 1;
        int64_t d0 = total > 1 && chance(b->e, 50) && total % 2 == 0 ? total / 2 : total;
        if (chance(b->e, 15))
            d0 = draw_dim(b->e);
        switch (draw(b->e, 3)) {
        case 0: return OP(b, "ggml_reshape_1d", n, ggml_reshape_1d(ctx, a, d0));
        case 1: return OP(b, "ggml_reshape_2d", n, ggml_reshape_2d(ctx, a, d0, d0 ? total / d0 : 0));
        default: return OP(b, "ggml_reshape_4d", n, ggml_reshape_4d(ctx, a, ne[0], ne[1], ne[2], ne[3]));
        }
    }
    case 8: {
        struct ggml_tensor *shape = leaf(b, GGML_TYPE_F32);
        return OP(b, "ggml_reshape", NULLS2(a, shape), ggml_reshape(ctx, a, shape));
    }
    case 9: return OP(b, "ggml_cont", n, ggml_cont(ctx, a));
    case 10: return OP(b, "ggml_cont_4d", n, ggml_cont_4d(ctx, a, ne[0], ne[1], ne[2], ne[3]));
    default: return OP(b, "ggml_view_tensor", n, ggml_view_tensor(ctx, a));
    }
}

static struct ggml_tensor *op_seq(struct builder *b)
{
    struct ggml_tensor *a = operand(b);
    bool n = a == NULL;
    struct ggml_context *ctx = b->ctx;
    switch (draw(b->e, 9)) {
    case 0: {
        struct ggml_tensor *c = leaf_like(b, a, a != NULL && chance(b->e, 85) ? a->type : draw_type(b->e));
        return OP(b, "ggml_concat", NULLS2(a, c), ggml_concat(ctx, a, c, draw_int(b->e, -1, 4)));
    }
    case 1: return OP(b, "ggml_pad", n, ggml_pad(ctx, a, draw_small(b->e), draw_small(b->e), draw_small(b->e), draw_small(b->e)));
    case 2:
        return OP(b, "ggml_pad_ext", n,
                  ggml_pad_ext(ctx, a, draw_small(b->e), draw_small(b->e), draw_small(b->e), draw_small(b->e),
                               draw_small(b->e), draw_small(b->e), draw_small(b->e), draw_small(b->e)));
    case 3:
        return OP(b, "ggml_pad_ext_circular", n,
                  ggml_pad_ext_circular(ctx, a, draw_small(b->e), draw_small(b->e), draw_small(b->e), draw_small(b->e),
                                        draw_small(b->e), draw_small(b->e), draw_small(b->e), draw_small(b->e)));
    case 4: return OP(b, "ggml_pad_reflect_1d", n, ggml_pad_reflect_1d(ctx, a, draw_small(b->e), draw_small(b->e)));
    case 5:
        return OP(b, "ggml_roll", n,
                  ggml_roll(ctx, a, draw_int(b->e, -5, 5), draw_int(b->e, -5, 5), draw_small(b->e), draw_small(b->e)));
    case 6:
        return OP(b, "ggml_repeat_4d", n,
                  ggml_repeat_4d(ctx, a, draw_dim(b->e), draw_dim(b->e), draw_dim(b->e), draw_dim(b->e)));
    case 7: return OP(b, "ggml_win_part", n, ggml_win_part(ctx, a, draw_small(b->e)));
    default:
        return OP(b, "ggml_win_unpart", n, ggml_win_unpart(ctx, a, draw_small(b->e), draw_small(b->e), draw_small(b->e)));
    }
}

/* A convolution kernel for input x: [K0, K1, C_in, C_out] with K small. */
static struct ggml_tensor *kernel_for(struct builder *b, const struct ggml_tensor *x, bool two_d)
{
    int64_t ne[4] = { draw_int(b->e, 1, 4), two_d ? draw_int(b->e, 1, 4) : x ? x->ne[1] : 1,
                      two_d ? (x ? x->ne[2] : 1) : draw_int(b->e, 1, 3), two_d ? draw_int(b->e, 1, 3) : 1 };
    if (chance(b->e, 10))
        ne[draw(b->e, 4)] = draw_dim(b->e);
    enum ggml_type type = chance(b->e, 50) ? GGML_TYPE_F16 : chance(b->e, 90) ? GGML_TYPE_F32 : draw_type(b->e);
    return leaf_ne(b, type, ne);
}

static struct ggml_tensor *op_conv(struct builder *b)
{
    struct ggml_tensor *x = operand(b);
    bool two_d = chance(b->e, 50);
    struct ggml_tensor *k = kernel_for(b, x, two_d);
    bool n = NULLS2(x, k);
    struct ggml_context *ctx = b->ctx;
    int s0 = draw_small(b->e), s1 = draw_small(b->e), p0 = draw_small(b->e), p1 = draw_small(b->e);
    int d0 = draw_small(b->e), d1 = draw_small(b->e);
    switch (draw(b->e, 11)) {
    case 0:
        return OP(b, "ggml_im2col", n,
                  ggml_im2col(ctx, k, x, s0, s1, p0, p1, d0, d1, two_d,
                              chance(b->e, 50) ? GGML_TYPE_F16 : chance(b->e, 90) ? GGML_TYPE_F32 : draw_type(b->e)));
    case 1: return OP(b, "ggml_conv_1d", n, ggml_conv_1d(ctx, k, x, s0, p0, d0));
    case 2: return OP(b, "ggml_conv_2d", n, ggml_conv_2d(ctx, k, x, s0, s1, p0, p1, d0, d1));
    case 3: return OP(b, "ggml_conv_transpose_1d", n, ggml_conv_transpose_1d(ctx, k, x, s0, p0, d0));
    case 4: return OP(b, "ggml_conv_transpose_2d_p0", n, ggml_conv_transpose_2d_p0(ctx, k, x, s0));
    case 5: return OP(b, "ggml_conv_2d_dw_direct", n, ggml_conv_2d_dw_direct(ctx, k, x, s0, s1, p0, p1, d0, d1));
    case 6: return OP(b, "ggml_conv_2d_direct", n, ggml_conv_2d_direct(ctx, k, x, s0, s1, p0, p1, d0, d1));
    case 7: return OP(b, "ggml_conv_1d_dw", n, ggml_conv_1d_dw(ctx, k, x, s0, p0, d0));
    case 8: return OP(b, "ggml_conv_2d_dw", n, ggml_conv_2d_dw(ctx, k, x, s0, s1, p0, p1, d0, d1));
    case 9:
        return OP(b, "ggml_im2col_3d", n,
                  ggml_im2col_3d(ctx, k, x, draw_small(b->e), s0, s1, draw_small(b->e), p0, p1, draw_small(b->e), d0, d1,
                                 draw_small(b->e), chance(b->e, 50) ? GGML_TYPE_F16 : GGML_TYPE_F32));
    default:
        return OP(b, "ggml_conv_3d_direct", n,
                  ggml_conv_3d_direct(ctx, k, x, s0, s1, draw_small(b->e), p0, p1, draw_small(b->e), d0, d1,
                                      draw_small(b->e), draw_small(b->e), draw_small(b->e), draw_small(b->e)));
    }
}

static struct ggml_tensor *op_image(struct builder *b)
{
    struct ggml_tensor *a = operand(b);
    bool n = a == NULL;
    struct ggml_context *ctx = b->ctx;
    int c = (int) draw(b->e, 5);
    if (c >= 2 && (settings.skip & SKIP_EMPTY_UPSCALE) && a != NULL && ggml_nelements(a) == 0)
        return NULL;
    switch (c) {
    case 0:
        return OP(b, "ggml_pool_1d", n,
                  ggml_pool_1d(ctx, a, (enum ggml_op_pool) draw_int(b->e, 0, GGML_OP_POOL_COUNT), draw_small(b->e),
                               draw_small(b->e), draw_small(b->e)));
    case 1:
        return OP(b, "ggml_pool_2d", n,
                  ggml_pool_2d(ctx, a, (enum ggml_op_pool) draw_int(b->e, 0, GGML_OP_POOL_COUNT), draw_small(b->e),
                               draw_small(b->e), draw_small(b->e), draw_small(b->e), draw_param(b->e), draw_param(b->e)));
    case 2: return OP(b, "ggml_upscale", n, ggml_upscale(ctx, a, draw_small(b->e), (enum ggml_scale_mode) draw_int(b->e, 0, 3)));
    default: {
        uint32_t mode = (uint32_t) draw_int(b->e, 0, 3);
        if (chance(b->e, 30))
            mode |= GGML_SCALE_FLAG_ALIGN_CORNERS;
        if (chance(b->e, 20))
            mode |= GGML_SCALE_FLAG_ANTIALIAS;
        int64_t ne[4];
        for (int i = 0; i < 4; i++)
            ne[i] = a != NULL && chance(b->e, 40) ? a->ne[i] : draw_dim(b->e);
        return OP(b, "ggml_interpolate", n, ggml_interpolate(ctx, a, ne[0], ne[1], ne[2], ne[3], mode));
    }
    }
}

static struct ggml_tensor *op_sort(struct builder *b)
{
    struct ggml_tensor *a = operand(b);
    bool n = a == NULL;
    struct ggml_context *ctx = b->ctx;
    int k = a != NULL && chance(b->e, 70) ? draw_int(b->e, 0, (int) (a->ne[0] < 64 ? a->ne[0] : 64)) : draw_small(b->e);
    switch (draw(b->e, 3)) {
    case 0: return OP(b, "ggml_argsort", n, ggml_argsort(ctx, a, (enum ggml_sort_order) draw_int(b->e, 0, 2)));
    case 1: return OP(b, "ggml_top_k", n, ggml_top_k(ctx, a, k));
    default: return OP(b, "ggml_argsort_top_k", n, ggml_argsort_top_k(ctx, a, k));
    }
}

static struct ggml_tensor *op_copy(struct builder *b)
{
    struct ggml_tensor *a = operand(b);
    enum ggml_type type = draw_type(b->e);
    if ((settings.skip & SKIP_FLOAT_TO_INT) && !is_float_type(type))
        type = GGML_TYPE_F16;
    if (chance(b->e, 50))
        return OP(b, "ggml_cast", a == NULL, ggml_cast(b->ctx, a, type));
    struct ggml_tensor *dst = leaf_like(b, a, type);
    return OP(b, "ggml_cpy", NULLS2(a, dst), ggml_cpy(b->ctx, a, dst));
}

static struct ggml_tensor *op_matmul(struct builder *b)
{
    struct ggml_context *ctx = b->ctx;
    struct ggml_tensor *w = chance(b->e, 50) ? operand(b) : leaf(b, draw_type(b->e));
    int64_t ne[4] = { w ? w->ne[0] : 1, draw_dim(b->e), w ? w->ne[2] : 1, w ? w->ne[3] : 1 };
    if (chance(b->e, 15))
        ne[draw(b->e, 4)] = draw_dim(b->e);
    switch (draw(b->e, 4)) {
    case 0:
    case 1: {
        struct ggml_tensor *x = leaf_ne(b, chance(b->e, 85) ? GGML_TYPE_F32 : draw_type(b->e), ne);
        struct ggml_tensor *r = OP(b, "ggml_mul_mat", NULLS2(w, x), ggml_mul_mat(ctx, w, x));
        if (r != NULL && chance(b->e, 20))
            SETTER(b, "ggml_mul_mat_set_prec", ggml_mul_mat_set_prec(r, GGML_PREC_F32));
        return r;
    }
    case 2: {
        /* as [K, M, n_expert], b [K, n_used or 1, n_tokens], ids [n_used, n_tokens] */
        int64_t n_used = draw_int(b->e, 1, 3), n_tokens = draw_dim(b->e);
        int64_t xne[4] = { w ? w->ne[0] : 1, chance(b->e, 50) ? 1 : n_used, n_tokens, 1 };
        struct ggml_tensor *x = leaf_ne(b, GGML_TYPE_F32, xne);
        struct ggml_tensor *ids = index_leaf(b, n_used, n_tokens, 1);
        return OP(b, "ggml_mul_mat_id", NULLS3(w, x, ids), ggml_mul_mat_id(ctx, w, x, ids));
    }
    default: {
        int64_t one[4] = { draw_dim(b->e), w ? w->ne[1] : 1, w ? w->ne[2] : 1, w ? w->ne[3] : 1 };
        struct ggml_tensor *x = leaf_ne(b, GGML_TYPE_F32, one);
        return OP(b, "ggml_out_prod", NULLS2(w, x), ggml_out_prod(ctx, w, x));
    }
    }
}

static struct ggml_tensor *op_attention(struct builder *b)
{
    int64_t d = draw_int(b->e, 1, 9) * (chance(b->e, 50) ? 8 : 1), dv = chance(b->e, 80) ? d : draw_int(b->e, 1, 64);
    int64_t n_q = draw_dim(b->e), n_kv = draw_dim(b->e), h = draw_int(b->e, 1, 4), h_kv = chance(b->e, 60) ? h : 1;
    int64_t batch = draw_int(b->e, 1, 2);
    int64_t qne[4] = { d, n_q, h, batch }, kne[4] = { d, n_kv, h_kv, batch }, vne[4] = { dv, n_kv, h_kv, batch };
    if (chance(b->e, 10))
        qne[draw(b->e, 4)] = draw_dim(b->e);
    if (chance(b->e, 10))
        kne[draw(b->e, 4)] = draw_dim(b->e);
    enum ggml_type kv_type = chance(b->e, 50) ? GGML_TYPE_F16 : chance(b->e, 60) ? GGML_TYPE_F32 : draw_type(b->e);
    struct ggml_tensor *q = leaf_ne(b, chance(b->e, 90) ? GGML_TYPE_F32 : draw_type(b->e), qne);
    struct ggml_tensor *k = leaf_ne(b, kv_type, kne);
    struct ggml_tensor *v = leaf_ne(b, chance(b->e, 85) ? kv_type : draw_type(b->e), vne);
    struct ggml_tensor *mask = NULL;
    if (chance(b->e, 60)) {
        int64_t mne[4] = { n_kv, n_q < 4096 ? n_q + draw_int(b->e, 0, 2) : n_q, 1, 1 };
        if (chance(b->e, 10))
            mne[draw(b->e, 4)] = draw_dim(b->e);
        mask = leaf_ne(b, chance(b->e, 85) ? GGML_TYPE_F16 : draw_type(b->e), mne);
    }
    struct ggml_tensor *r = OP(b, "ggml_flash_attn_ext", NULLS3(q, k, v),
                               ggml_flash_attn_ext(b->ctx, q, k, v, mask, draw_param(b->e),
                                                   chance(b->e, 70) ? 0.0f : draw_param(b->e),
                                                   chance(b->e, 70) ? 0.0f : draw_param(b->e)));
    if (r != NULL && chance(b->e, 20))
        SETTER(b, "ggml_flash_attn_ext_set_prec", ggml_flash_attn_ext_set_prec(r, GGML_PREC_F32));
    if (r != NULL && chance(b->e, 15)) {
        int64_t sne[4] = { h, 1, 1, 1 };
        struct ggml_tensor *sinks = leaf_ne(b, GGML_TYPE_F32, sne);
        SETTER(b, "ggml_flash_attn_ext_add_sinks", ggml_flash_attn_ext_add_sinks(r, sinks));
    }
    return r;
}

static struct ggml_tensor *mut_leaf(struct builder *b, int64_t n0, int64_t n1, int64_t n2, int64_t n3)
{
    int64_t ne[4] = { n0, n1, n2, n3 };
    if (chance(b->e, 8))
        ne[draw(b->e, 4)] = draw_dim(b->e);
    return leaf_ne(b, chance(b->e, 95) ? GGML_TYPE_F32 : draw_type(b->e), ne);
}

static struct ggml_tensor *op_recurrent(struct builder *b)
{
    struct ggml_context *ctx = b->ctx;
    int64_t d = draw_int(b->e, 1, 8), n_t = draw_int(b->e, 1, 6), n_s = draw_int(b->e, 1, 3), h = draw_int(b->e, 1, 3);
    switch (draw(b->e, 6)) {
    case 0: {
        int64_t k = draw_int(b->e, 1, 4);
        struct ggml_tensor *sx = mut_leaf(b, k - 1 + n_t, d, n_s, 1);
        struct ggml_tensor *c = mut_leaf(b, k, d, 1, 1);
        return OP(b, "ggml_ssm_conv", NULLS2(sx, c), ggml_ssm_conv(ctx, sx, c));
    }
    case 1: {
        int64_t ds = draw_int(b->e, 1, 8), hd = draw_int(b->e, 1, 4), g = 1;
        struct ggml_tensor *s = mut_leaf(b, ds, hd, h, n_s);
        struct ggml_tensor *x = mut_leaf(b, hd, h, n_t, n_s);
        struct ggml_tensor *dt = mut_leaf(b, h, n_t, n_s, 1);
        struct ggml_tensor *A = mut_leaf(b, chance(b->e, 50) ? 1 : ds, h, 1, 1);
        struct ggml_tensor *B = mut_leaf(b, ds, g, n_t, n_s);
        struct ggml_tensor *C = mut_leaf(b, ds, g, n_t, n_s);
        struct ggml_tensor *ids = index_leaf(b, n_s, 1, 1);
        bool n = NULLS3(s, x, dt) || NULLS3(A, B, C) || ids == NULL;
        return OP(b, "ggml_ssm_scan", n, ggml_ssm_scan(ctx, s, x, dt, A, B, C, ids, 1));
    }
    case 2: {
        struct ggml_tensor *k = mut_leaf(b, d, h, n_t, 1), *v = mut_leaf(b, d, h, n_t, 1), *r = mut_leaf(b, d, h, n_t, 1);
        struct ggml_tensor *tf = mut_leaf(b, d, h, 1, 1), *td = mut_leaf(b, d, h, n_t, 1);
        struct ggml_tensor *st = mut_leaf(b, d * d * h, n_s, 1, 1);
        bool n = NULLS3(k, v, r) || NULLS3(tf, td, st);
        return OP(b, "ggml_rwkv_wkv6", n, ggml_rwkv_wkv6(ctx, k, v, r, tf, td, st));
    }
    case 3: {
        struct ggml_tensor *r = mut_leaf(b, d, h, n_t, 1), *w = mut_leaf(b, d, h, n_t, 1), *k = mut_leaf(b, d, h, n_t, 1);
        struct ggml_tensor *v = mut_leaf(b, d, h, n_t, 1), *a = mut_leaf(b, d, h, n_t, 1), *bb = mut_leaf(b, d, h, n_t, 1);
        struct ggml_tensor *st = mut_leaf(b, d * d * h, n_s, 1, 1);
        bool n = NULLS3(r, w, k) || NULLS3(v, a, bb) || st == NULL;
        return OP(b, "ggml_rwkv_wkv7", n, ggml_rwkv_wkv7(ctx, r, w, k, v, a, bb, st));
    }
    case 4: {
        int64_t h_qk = chance(b->e, 50) ? h : 1, s_qk = chance(b->e, 50) ? n_s : 1;
        struct ggml_tensor *q = mut_leaf(b, d, h_qk, n_t, s_qk), *k = mut_leaf(b, d, h_qk, n_t, s_qk);
        struct ggml_tensor *v = mut_leaf(b, d, h, n_t, n_s), *g = mut_leaf(b, chance(b->e, 50) ? 1 : d, h, n_t, n_s);
        struct ggml_tensor *beta = mut_leaf(b, 1, h, n_t, n_s), *st = mut_leaf(b, d, d, h, n_s);
        bool n = NULLS3(q, k, v) || NULLS3(g, beta, st);
        return OP(b, "ggml_gated_delta_net", n,
                  ggml_gated_delta_net(ctx, q, k, v, g, beta, st, chance(b->e, 80) ? draw_int(b->e, 1, 4) : draw_int(b->e, -1, 0)));
    }
    default: {
        struct ggml_tensor *k = mut_leaf(b, d, h, n_t, 1), *v = mut_leaf(b, d, h, n_t, 1), *q = mut_leaf(b, d, h, n_t, 1);
        struct ggml_tensor *g = mut_leaf(b, d, h, n_t, 1), *st = mut_leaf(b, d * d * h, n_s, 1, 1);
        bool n = NULLS3(k, v, q) || NULLS2(g, st);
        return OP(b, "ggml_gated_linear_attn", n, ggml_gated_linear_attn(ctx, k, v, q, g, st, draw_param(b->e)));
    }
    }
}

static struct ggml_tensor *op_custom(struct builder *b)
{
    struct ggml_context *ctx = b->ctx;
    struct ggml_tensor *a = operand(b);
    int n_tasks = chance(b->e, 50) ? GGML_N_TASKS_MAX : draw_small(b->e);
    switch (draw(b->e, 4)) {
    case 0: return OP(b, "ggml_map_custom1", a == NULL, ggml_map_custom1(ctx, a, custom1_fn, n_tasks, NULL));
    case 1: {
        struct ggml_tensor *c = operand(b);
        return OP(b, "ggml_map_custom2", NULLS2(a, c), ggml_map_custom2(ctx, a, c, custom2_fn, n_tasks, NULL));
    }
    case 2: {
        struct ggml_tensor *c = operand(b), *d = operand(b);
        return OP(b, "ggml_map_custom3", NULLS3(a, c, d), ggml_map_custom3(ctx, a, c, d, custom3_fn, n_tasks, NULL));
    }
    default: {
        struct ggml_tensor *args[3] = { a, operand(b), operand(b) };
        int n_args = draw_int(b->e, 0, 3);
        bool n = false;
        for (int i = 0; i < n_args; i++)
            n = n || args[i] == NULL;
        return OP(b, "ggml_custom_4d", n,
                  ggml_custom_4d(ctx, draw_type(b->e), draw_dim(b->e), draw_dim(b->e), draw_dim(b->e), draw_dim(b->e),
                                 args, n_args, custom_fn, n_tasks, NULL));
    }
    }
}

static struct ggml_tensor *op_glu(struct builder *b)
{
    struct ggml_context *ctx = b->ctx;
    struct ggml_tensor *a = operand(b);
    enum ggml_glu_op glu = (enum ggml_glu_op) draw_int(b->e, 0, GGML_GLU_OP_COUNT);
    switch (draw(b->e, 4)) {
    case 0: return OP(b, "ggml_glu", a == NULL, ggml_glu(ctx, a, glu, chance(b->e, 50)));
    case 1: {
        struct ggml_tensor *c = leaf_like(b, a, GGML_TYPE_F32);
        return OP(b, "ggml_glu_split", NULLS2(a, c), ggml_glu_split(ctx, a, c, glu));
    }
    case 2: {
        struct ggml_tensor *c = leaf_like(b, a, GGML_TYPE_F32);
        return OP(b, "ggml_swiglu_oai", a == NULL, ggml_swiglu_oai(ctx, a, c, draw_param(b->e), draw_param(b->e)));
    }
    default: return OP(b, "ggml_swiglu", a == NULL, ggml_swiglu(ctx, a));
    }
}

static struct ggml_tensor *op_misc(struct builder *b)
{
    struct ggml_context *ctx = b->ctx;
    switch (draw(b->e, 7)) {
    case 0: {
        float start = draw_param(b->e), step = chance(b->e, 80) ? 1.0f : draw_param(b->e);
        float stop = chance(b->e, 80) ? start + (float) draw_int(b->e, 0, 40) * step : draw_param(b->e);
        return OP(b, "ggml_arange", false, ggml_arange(ctx, start, stop, step));
    }
    case 1: {
        struct ggml_tensor *t = leaf(b, GGML_TYPE_F32);
        return OP(b, "ggml_timestep_embedding", t == NULL,
                  ggml_timestep_embedding(ctx, t, draw_int(b->e, -1, 65), draw_int(b->e, -1, 20000)));
    }
    case 2: {
        struct ggml_tensor *a = operand(b);
        return OP(b, "ggml_get_rel_pos", a == NULL, ggml_get_rel_pos(ctx, a, draw_small(b->e), draw_small(b->e)));
    }
    case 3: {
        struct ggml_tensor *a = operand(b), *c = leaf_like(b, a, a ? a->type : GGML_TYPE_F32);
        size_t offset = chance(b->e, 60) ? 0 : (size_t) draw_small(b->e) * 4;
        if (a != NULL && chance(b->e, 50))
            return OP(b, "ggml_acc", NULLS2(a, c), ggml_acc(ctx, a, c, a->nb[1], a->nb[2], a->nb[3], offset));
        return OP(b, "ggml_set_1d", NULLS2(a, c), ggml_set_1d(ctx, a, c, offset));
    }
    case 4: {
        struct ggml_tensor *a = operand(b), *c = operand(b);
        size_t nb1 = a != NULL && chance(b->e, 80) ? a->nb[1] : (size_t) draw_small(b->e) * 4;
        return OP(b, "ggml_set_2d", NULLS2(a, c), ggml_set_2d(ctx, a, c, nb1, (size_t) draw_small(b->e) * 4));
    }
    case 5: {
        int64_t nn = draw_int(b->e, 0, 6);
        struct ggml_tensor *a = mut_leaf(b, nn, nn, 1, 1), *c = mut_leaf(b, draw_int(b->e, 1, 3), nn, 1, 1);
        return OP(b, "ggml_solve_tri", NULLS2(a, c),
                  ggml_solve_tri(ctx, a, c, chance(b->e, 50), chance(b->e, 50), chance(b->e, 50)));
    }
    default: {
        struct ggml_tensor *a = operand(b);
        struct ggml_tensor *pw = leaf(b, GGML_TYPE_F32), *ph = leaf(b, GGML_TYPE_F32);
        return OP(b, "ggml_add_rel_pos", NULLS3(a, pw, ph), ggml_add_rel_pos(ctx, a, pw, ph));
    }
    }
}

/* The gradient ops of training: incoming gradient first, then what the
 * forward op saw or produced (often of another shape or type). */
static struct ggml_tensor *op_back(struct builder *b)
{
    struct ggml_context *ctx = b->ctx;
    struct ggml_tensor *a = operand(b);
    switch (draw(b->e, 8)) {
    case 0: {
        struct ggml_tensor *x = leaf_like(b, a, chance(b->e, 90) ? GGML_TYPE_F32 : draw_type(b->e));
        return OP(b, "ggml_silu_back", NULLS2(a, x), ggml_silu_back(ctx, a, x));
    }
    case 1: {
        struct ggml_tensor *x = leaf_like(b, a, chance(b->e, 90) ? GGML_TYPE_F32 : draw_type(b->e));
        float eps = chance(b->e, 70) ? 1e-6f : draw_param(b->e);
        return OP(b, "ggml_rms_norm_back", NULLS2(a, x), ggml_rms_norm_back(ctx, a, x, eps));
    }
    case 2: {
        struct ggml_tensor *y = leaf_like(b, a, chance(b->e, 90) ? GGML_TYPE_F32 : draw_type(b->e));
        float scale = chance(b->e, 70) ? 1.0f : draw_param(b->e), max_bias = chance(b->e, 80) ? 0.0f : draw_param(b->e);
        if (chance(b->e, 30))
            return OP(b, "ggml_soft_max_ext_back_inplace", NULLS2(a, y),
                      ggml_soft_max_ext_back_inplace(ctx, a, y, scale, max_bias));
        return OP(b, "ggml_soft_max_ext_back", NULLS2(a, y), ggml_soft_max_ext_back(ctx, a, y, scale, max_bias));
    }
    case 3: {
        struct ggml_tensor *labels = leaf_like(b, a, chance(b->e, 90) ? GGML_TYPE_F32 : draw_type(b->e));
        return OP(b, "ggml_cross_entropy_loss", NULLS2(a, labels), ggml_cross_entropy_loss(ctx, a, labels));
    }
    case 4: {
        int64_t one[4] = { 1, 1, 1, 1 };
        if (chance(b->e, 10))
            one[0] = draw_dim(b->e);
        struct ggml_tensor *g = leaf_ne(b, chance(b->e, 90) ? GGML_TYPE_F32 : draw_type(b->e), one);
        struct ggml_tensor *labels = leaf_like(b, a, chance(b->e, 90) ? GGML_TYPE_F32 : draw_type(b->e));
        return OP(b, "ggml_cross_entropy_loss_back", NULLS3(g, a, labels),
                  ggml_cross_entropy_loss_back(ctx, g, a, labels));
    }
    case 5:
    case 6: {
        /* optimizer steps on a trainable leaf (now and then not flagged) */
        const bool sgd = draw(b->e, 2) == 0;
        struct ggml_tensor *w = leaf_like(b, a, chance(b->e, 90) ? GGML_TYPE_F32 : draw_type(b->e));
        if (w != NULL && chance(b->e, 90))
            ggml_set_param(w);
        struct ggml_tensor *grad = leaf_like(b, w, GGML_TYPE_F32);
        int64_t pne[4] = { sgd ? 2 : 7, 1, 1, 1 };
        if (chance(b->e, 10))
            pne[0] = draw_dim(b->e);
        struct ggml_tensor *p = leaf_ne(b, chance(b->e, 95) ? GGML_TYPE_F32 : draw_type(b->e), pne);
        if (sgd)
            return OP(b, "ggml_opt_step_sgd", NULLS3(w, grad, p), ggml_opt_step_sgd(ctx, w, grad, p));
        struct ggml_tensor *m = leaf_like(b, w, GGML_TYPE_F32), *v = leaf_like(b, w, GGML_TYPE_F32);
        return OP(b, "ggml_opt_step_adamw", NULLS3(w, grad, m) || NULLS2(v, p), ggml_opt_step_adamw(ctx, w, grad, m, v, p));
    }
    default: {
        /* get_rows_back(grad [n, r], ids [<= r], rows [n, m]) */
        int64_t n = a != NULL ? a->ne[0] : draw_dim(b->e), r = a != NULL ? a->ne[1] : draw_dim(b->e);
        struct ggml_tensor *ids = index_leaf(b, chance(b->e, 80) ? r : draw_dim(b->e), 1, 1);
        int64_t cne[4] = { chance(b->e, 90) ? n : draw_dim(b->e), draw_dim(b->e), 1, 1 };
        struct ggml_tensor *c = leaf_ne(b, GGML_TYPE_F32, cne);
        return OP(b, "ggml_get_rows_back", NULLS3(a, ids, c), ggml_get_rows_back(ctx, a, ids, c));
    }
    }
}

typedef struct ggml_tensor *(*op_family_fn)(struct builder *b);

static const op_family_fn op_families[] = {
    op_unary, op_binary, op_binary, op_reduce, op_softmax, op_rope, op_rows, op_rows, op_view, op_view,
    op_seq, op_conv, op_image, op_sort, op_copy, op_matmul, op_matmul, op_attention, op_recurrent,
    op_custom, op_glu, op_misc, op_back,
};

/* ------------------------------------------------------------ inputs */

/* A float input value: most graphs get ordinary values, the others also
 * NaN, infinities, denormals, huge values and the int32 range's edges. */
static float input_value(struct entropy *e, bool wild)
{
    static const float odd[] = { NAN, -NAN, INFINITY, -INFINITY, 1e-40f, -1e-45f, 3.4e38f, -3.4e38f,
                                 2147483648.0f, -2147483904.0f, 1e20f, -0.0f, 65504.0f, 65520.0f };
    if (wild && chance(e, 15))
        return odd[draw(e, sizeof odd / sizeof odd[0])];
    return (float) draw_int(e, -3000, 3000) / 1000.0f;
}

static int64_t input_index(struct entropy *e)
{
    static const int64_t odd[] = { -1, -2, INT32_MAX, INT32_MIN, 1000000, INT64_MAX, INT64_MIN };
    if (chance(e, 8))
        return odd[draw(e, sizeof odd / sizeof odd[0])];
    return draw_int(e, 0, 9);
}

static bool fill(struct entropy *e, struct ggml_tensor *t, bool wild)
{
    size_t nbytes = ggml_nbytes(t);
    if (nbytes == 0 || t->buffer == NULL)
        return true;
    uint8_t *data = malloc(nbytes);
    if (data == NULL)
        return true;
    /* the elements that fit the bytes (fewer than ggml_nelements when a
       tampered stride packs them closer) */
    int64_t n = ggml_nelements(t);
    if (ggml_type_size(t->type) > 0 && (size_t) n > nbytes / ggml_type_size(t->type))
        n = (int64_t) (nbytes / ggml_type_size(t->type));
    switch (t->type) {
    case GGML_TYPE_F32:
        for (int64_t i = 0; i < n; i++)
            ((float *) data)[i] = input_value(e, wild);
        break;
    case GGML_TYPE_F16:
        for (int64_t i = 0; i < n; i++)
            ((ggml_fp16_t *) data)[i] = ggml_fp32_to_fp16(input_value(e, wild));
        break;
    case GGML_TYPE_BF16:
        for (int64_t i = 0; i < n; i++)
            ((ggml_bf16_t *) data)[i] = ggml_fp32_to_bf16(input_value(e, wild));
        break;
    case GGML_TYPE_I32:
        for (int64_t i = 0; i < n; i++)
            ((int32_t *) data)[i] = (int32_t) input_index(e);
        break;
    case GGML_TYPE_I64:
        for (int64_t i = 0; i < n; i++)
            ((int64_t *) data)[i] = input_index(e);
        break;
    default:
        /* quantized blocks and small integers: any bytes (scales included) */
        for (size_t i = 0; i < nbytes; i++)
            data[i] = (uint8_t) draw(e, 256);
        if (!wild && ggml_is_quantized(t->type))
            for (size_t i = 0; i < nbytes; i++)
                data[i] &= 0x3b; /* keeps the fp16 scales finite and small */
        break;
    }
    log_errors = 0;
    ggml_backend_tensor_set(t, data, 0, nbytes);
    free(data);
    return log_errors == 0;
}

/* ------------------------------------------------------------ running */

enum alloc_method { ALLOC_CTX_TENSORS, ALLOC_GALLOCR, ALLOC_SCHED, ALLOC_METHOD_COUNT };

/* ------------------------------------------------------------ tampering */

/*
 * Tampering: after construction, a few fields of a few nodes are changed
 * to what no constructor makes but a client of an RPC server can send
 * (a source dropped or swapped for another tensor, an op parameter, the
 * op, the node's type or shape, a stride of the node or of a source that
 * owns its data, as a multiple of its type's size).  The CPU backend must then refuse the
 * node (ggml_backend_supports_op false, compute an error status) or compute
 * it within its operands' memory; the sanitizers and the time bound tell.
 * Custom ops are left alone: their parameters are function pointers the
 * caller vouches for (the RPC server refuses them).
 */
static bool is_custom_op(enum ggml_op op)
{
    return op == GGML_OP_MAP_CUSTOM1 || op == GGML_OP_MAP_CUSTOM2 || op == GGML_OP_MAP_CUSTOM3 ||
           op == GGML_OP_CUSTOM;
}

/* An op parameter: the edge values kernels divide, index or loop by. */
static int32_t tampered_param(struct entropy *e)
{
    static const int32_t edges[] = { 0, 1, -1, 2, 3, 7, 64, -64, INT32_MAX, INT32_MIN, 0x7f800000, 0x7fc00000 };
    if (chance(e, 60))
        return edges[draw(e, sizeof edges / sizeof edges[0])];
    return (int32_t) (uint32_t) draw(e, UINT32_MAX);
}

static void tamper_node(struct builder *b, struct ggml_tensor *node)
{
    struct entropy *e = b->e;
    const bool owns_data = node->view_src == NULL;
    switch (draw(e, 7)) {
    case 0:
        node->src[draw(e, GGML_MAX_SRC)] = NULL;
        break;
    case 6: {
        /* a stride of the node or of a source that owns its data, a
           multiple of its type's size (the RPC server refuses others): the
           allocators size its memory by the strides it then has */
        struct ggml_tensor *t = chance(e, 50) || node->src[0] == NULL ? node : node->src[draw(e, 3)];
        if (t != NULL && t->view_src == NULL && t->buffer == NULL) {
            const size_t ts = ggml_type_size(t->type), nb = t->nb[draw(e, GGML_MAX_DIMS)];
            const size_t strides[] = { 0, ts, nb / 2 / ts * ts, nb * 2, ts * (size_t) draw_int(e, 1, 9) };
            t->nb[draw(e, GGML_MAX_DIMS)] = strides[draw(e, 5)];
        }
        break;
    }
    case 1:
        if (b->n_pool > 0)
            node->src[draw(e, 4)] = b->pool[draw(e, (uint64_t) b->n_pool)];
        break;
    case 2:
        node->op_params[draw(e, 8)] = tampered_param(e);
        break;
    case 3: {
        enum ggml_op op = (enum ggml_op) draw_int(e, 1, GGML_OP_COUNT - 1);
        if (!is_custom_op(op))
            node->op = op;
        break;
    }
    case 4: {
        enum ggml_type type = draw_type(e);
        if (owns_data && ggml_blck_size(type) > 0 && node->ne[0] % ggml_blck_size(type) == 0) {
            node->type = type;
            dense_strides(node);
        }
        break;
    }
    default: {
        int d = (int) draw(e, GGML_MAX_DIMS);
        /* small: an RPC server refuses shapes whose size overflows */
        int64_t ne = chance(e, 30) ? draw_int(e, 0, 3) : draw_int(e, 1, 64);
        if (owns_data && (d > 0 || ne % ggml_blck_size(node->type) == 0)) {
            node->ne[d] = ne;
            dense_strides(node);
        }
        break;
    }
    }
}

/* Tampers with one to four fields of gf's nodes (not of custom ops). */
static void tamper(struct builder *b, struct ggml_cgraph *gf)
{
    const int n = ggml_graph_n_nodes(gf);
    if (n == 0)
        return;
    const int changes = draw_int(b->e, 1, 4);
    for (int k = 0; k < changes; k++) {
        struct ggml_tensor *node = ggml_graph_node(gf, (int) draw(b->e, (uint64_t) n));
        if (!is_custom_op(node->op))
            tamper_node(b, node);
    }
    b->tampered = true;
    shared->counts.tampered++;
}

static const char *const alloc_method_names[] = { "ggml_backend_alloc_ctx_tensors", "ggml_gallocr", "ggml_backend_sched" };

/* The graph has at least one leaf: a source that no op made. */
static bool graph_has_leaf(struct ggml_cgraph *gf)
{
    for (int i = 0; i < ggml_graph_n_nodes(gf); i++) {
        struct ggml_tensor *node = ggml_graph_node(gf, i);
        for (int j = 0; j < GGML_MAX_SRC; j++)
            if (node->src[j] != NULL && node->src[j]->op == GGML_OP_NONE)
                return true;
    }
    return false;
}

/* ggml_nelements in double: a tampered graph may hold tensors whose count
   overflows int64_t (an allocator refuses them). */
static double elements(const struct ggml_tensor *t)
{
    return (double) t->ne[0] * (double) t->ne[1] * (double) t->ne[2] * (double) t->ne[3];
}

/* An upper estimate of the multiply-adds of gf's nodes: linear in the
 * elements, except for the ops that contract or slide a kernel. */
static double graph_ops(struct ggml_cgraph *gf)
{
    double total = 0;
    for (int i = 0; i < ggml_graph_n_nodes(gf); i++) {
        const struct ggml_tensor *t = ggml_graph_node(gf, i), *a = t->src[0], *b = t->src[1];
        const double out = elements(t);
        switch (a != NULL && b != NULL ? t->op : GGML_OP_NONE) {
        case GGML_OP_MUL_MAT:
        case GGML_OP_MUL_MAT_ID:
            total += out * (double) a->ne[0];
            break;
        case GGML_OP_OUT_PROD:
            total += out * (double) a->ne[1];
            break;
        case GGML_OP_CONV_TRANSPOSE_1D:
        case GGML_OP_CONV_TRANSPOSE_2D:
            /* each output element visits every kernel tap */
            total += out * elements(a) + elements(a) * elements(b);
            break;
        case GGML_OP_CONV_2D:
        case GGML_OP_CONV_3D:
        case GGML_OP_CONV_2D_DW:
            total += out * elements(a);
            break;
        case GGML_OP_FLASH_ATTN_EXT:
            total += elements(a) * (double) b->ne[1];
            break;
        default:
            total += out;
            for (int j = 0; j < GGML_MAX_SRC; j++)
                if (t->src[j] != NULL)
                    total += elements(t->src[j]);
            break;
        }
    }
    return total;
}

/* Bytes of the tensors an allocator could accept; sets *hopeless when
 * there is another. */
static double feasible_bytes(struct ggml_context *ctx, bool *hopeless)
{
    double total = 0;
    *hopeless = false;
    for (struct ggml_tensor *t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->view_src != NULL)
            continue;
        if (ggml_nbytes(t) < HOPELESS_TENSOR_BYTES)
            total += (double) ggml_nbytes(t);
        else
            *hopeless = true;
    }
    return total;
}

/* Bytes from t's first byte to the end of the memory its view source owns. */
static size_t owned_bytes(const struct ggml_tensor *t)
{
    if (t->view_src == NULL)
        return ggml_nbytes(t);
    const size_t src_bytes = ggml_nbytes(t->view_src);
    return t->view_offs < src_bytes ? src_bytes - t->view_offs : 0;
}

/* Reads size bytes of node i of t; a finding unless it logs expected_errors. */
static void read_node(struct builder *b, int i, struct ggml_tensor *t, void *data, size_t size,
                      int expected_errors)
{
    log_errors = 0;
    ggml_backend_tensor_get(t, data, 0, size);
    if (log_errors != expected_errors)
        record_finding(b->seed, "ggml_backend_tensor_get of %zu bytes of node %d (%s) logged %d errors: %s",
                       size, i, ggml_op_desc(t), log_errors, log_last);
}

static void read_back(struct builder *b, struct ggml_cgraph *gf)
{
    for (int i = 0; i < ggml_graph_n_nodes(gf); i++) {
        struct ggml_tensor *t = ggml_graph_node(gf, i);
        if (t->buffer == NULL || t->data == NULL)
            continue;
        size_t nbytes = ggml_nbytes(t);
        void *data = malloc(nbytes ? nbytes : 1);
        if (data == NULL)
            continue;
        /* A transposed or permuted view of block-quantized data spans more
         * bytes (ggml_nbytes) than its source holds after it: reading that
         * span is refused with one message, what the source holds reads. */
        const size_t owned = owned_bytes(t);
        if (nbytes > owned) {
            read_node(b, i, t, data, nbytes, 1);
            nbytes = owned;
        }
        read_node(b, i, t, data, nbytes, 0);
        free(data);
    }
}

/* Fills the inputs, computes, reads back; counts the outcome. */
static void compute(struct builder *b, struct ggml_cgraph *gf, ggml_backend_t backend, ggml_backend_sched_t sched,
                    bool counted)
{
    struct entropy data = { .state = draw(b->e, UINT64_MAX) };
    bool wild = !(settings.skip & SKIP_FLOAT_TO_INT) && chance(b->e, 50);
    for (int i = 0; i < b->n_leaves; i++)
        if (!fill(&data, b->leaves[i], wild))
            record_finding(b->seed, "ggml_backend_tensor_set of leaf %d logged %d errors: %s", i, log_errors, log_last);
    log_errors = 0;
    enum ggml_status status = sched != NULL ? ggml_backend_sched_graph_compute(sched, gf)
                                            : ggml_backend_graph_compute(backend, gf);
    if (status != GGML_STATUS_SUCCESS && log_errors != 1)
        record_finding(b->seed, "compute returned %s with %d errors logged (want 1)%s%s", ggml_status_to_string(status),
                       log_errors, log_errors ? ": " : "", log_errors ? log_last : "");
    else if (status == GGML_STATUS_SUCCESS && log_errors != 0)
        record_finding(b->seed, "compute succeeded but logged %d errors: %s", log_errors, log_last);
    if (counted) {
        if (status == GGML_STATUS_SUCCESS)
            shared->counts.computed++;
        else
            shared->counts.refused_compute++;
    }
    if (status == GGML_STATUS_SUCCESS)
        read_back(b, gf);
    log_errors = 0;
}

/* An allocator refusing a graph built from a NULL (expanded_null) logs
 * nothing more: the constructor has said why.  ggml_backend_alloc_ctx_tensors
 * does not see the graph. */
static void check_alloc_refusal(struct builder *b, const char *what, bool sees_graph, bool counted)
{
    int want = b->expanded_null && sees_graph ? 0 : 1;
    if (log_errors != want)
        record_finding(b->seed, "%s refused with %d errors logged (want %d)%s%s", what, log_errors, want,
                       log_errors ? ": " : "", log_errors ? log_last : "");
    if (counted)
        shared->counts.refused_alloc++;
    log_errors = 0;
}

/* Allocates the built graph with one of the three allocators and runs it. */
static void allocate_and_run(struct builder *b, struct ggml_cgraph *gf, bool counted)
{
    enum alloc_method method = (enum alloc_method) draw(b->e, ALLOC_METHOD_COUNT);
    bool use_blas = backends.blas != NULL && chance(b->e, 30);
    int n_threads = draw_int(b->e, 1, settings.threads_max);
    ggml_backend_cpu_set_n_threads(backends.cpu, n_threads);
    if (use_blas)
        ggml_backend_blas_set_n_threads(backends.blas, n_threads);
    /* a tampered graph goes where an RPC server's graphs go: to one backend */
    if (b->tampered)
        method = ALLOC_CTX_TENSORS;
    if (method == ALLOC_SCHED && (settings.skip & SKIP_SCHED_EMPTY) &&
        (ggml_graph_n_nodes(gf) == 0 || !graph_has_leaf(gf)))
        method = ALLOC_GALLOCR;
    if (settings.verbose)
        fprintf(stderr, "  %s, %d threads%s, %d nodes\n", alloc_method_names[method], n_threads,
                use_blas ? ", BLAS" : "", ggml_graph_n_nodes(gf));
    log_errors = 0;

    if (method == ALLOC_CTX_TENSORS) {
        ggml_backend_t backend = use_blas && chance(b->e, 50) ? backends.blas : backends.cpu;
        ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(b->ctx, backend);
        if (buf == NULL && log_errors != 0) {
            check_alloc_refusal(b, alloc_method_names[method], false, counted);
            return;
        }
        compute(b, gf, backend, NULL, counted);
        ggml_backend_buffer_free(buf);
    } else if (method == ALLOC_GALLOCR) {
        for (int i = 0; i < b->n_leaves; i++)
            ggml_set_input(b->leaves[i]);
        ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
        if (galloc == NULL) {
            check_alloc_refusal(b, "ggml_gallocr_new", false, counted);
            return;
        }
        if (!ggml_gallocr_alloc_graph(galloc, gf))
            check_alloc_refusal(b, "ggml_gallocr_alloc_graph", true, counted);
        else
            compute(b, gf, backends.cpu, NULL, counted);
        ggml_gallocr_free(galloc);
    } else {
        for (int i = 0; i < b->n_leaves; i++)
            ggml_set_input(b->leaves[i]);
        ggml_backend_t list[2];
        int n = 0;
        if (use_blas)
            list[n++] = backends.blas;
        list[n++] = backends.cpu;
        ggml_backend_sched_t sched = ggml_backend_sched_new(list, NULL, n, 2048, false, chance(b->e, 50));
        if (sched == NULL) {
            check_alloc_refusal(b, "ggml_backend_sched_new", false, counted);
            return;
        }
        if (!ggml_backend_sched_alloc_graph(sched, gf))
            check_alloc_refusal(b, "ggml_backend_sched_alloc_graph", true, counted);
        else
            compute(b, gf, NULL, sched, counted);
        ggml_backend_sched_free(sched);
    }
    log_errors = 0;
}

/* Builds one random graph from e and runs it; findings are recorded under
 * seed. */
static void run_graph(struct entropy *e, uint64_t seed)
{
    struct builder b = { .e = e, .seed = seed };
    size_t n_tensors = chance(e, 3) ? (size_t) draw_int(e, 0, 6) : 1024;
    struct ggml_init_params params = {
        .mem_size = ggml_tensor_overhead() * n_tensors + ggml_graph_overhead_custom(1024, false),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    shared->counts.graphs++;
    log_errors = 0;
    b.ctx = ggml_init(params);
    if (b.ctx == NULL) {
        record_finding(seed, "ggml_init failed: %s", log_last);
        return;
    }
    /* the graph first: a small context then leaves no room for tensors */
    struct ggml_cgraph *gf = ggml_new_graph_custom(b.ctx, 1024, false);
    if (gf == NULL) {
        record_finding(seed, "ggml_new_graph_custom failed: %s", log_last);
        ggml_free(b.ctx);
        return;
    }
    int n_start = draw_int(e, 0, 4);
    for (int i = 0; i < n_start; i++)
        pool_add(&b, leaf(&b, draw_type(e)));
    int n_ops = draw_int(e, 1, MAX_OPS);
    for (int i = 0; i < n_ops; i++) {
        struct ggml_tensor *r = op_families[draw(e, sizeof op_families / sizeof op_families[0])](&b);
        pool_add(&b, r);
        if (r != NULL && b.n_results < (int) (sizeof b.results / sizeof b.results[0]))
            b.results[b.n_results++] = r;
    }
    for (int i = 0; i < b.n_results; i++) {
        if (chance(e, 30))
            SETTER(&b, "ggml_set_output", ggml_set_output(b.results[i]));
        ggml_build_forward_expand(gf, b.results[i]);
        if (log_errors != 0)
            record_finding(seed, "ggml_build_forward_expand logged %d errors: %s", log_errors, log_last);
        log_errors = 0;
    }
    if (chance(e, 3)) {
        ggml_build_forward_expand(gf, NULL);
        if (log_errors != 0)
            record_finding(seed, "ggml_build_forward_expand(NULL) logged %d errors: %s", log_errors, log_last);
        b.expanded_null = true;
    }
    log_errors = 0;
    if (settings.tamper > 0 && chance(e, settings.tamper))
        tamper(&b, gf);

    bool counted = true;
    if (b.expanded_null || ggml_graph_n_nodes(gf) == 0) {
        shared->counts.refused_build++;
        counted = false;
    } else {
        shared->counts.built++;
    }
    bool hopeless;
    if (feasible_bytes(b.ctx, &hopeless) > (double) MAX_GRAPH_BYTES || (hopeless && !settings.try_hopeless) ||
        graph_ops(gf) > MAX_GRAPH_OPS) {
        if (counted)
            shared->counts.too_large++;
    } else {
        allocate_and_run(&b, gf, counted);
    }
    ggml_free(b.ctx);
    log_errors = 0;
}

static unsigned parse_skip(const char *list)
{
    unsigned skip = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        bool known = false;
        for (size_t i = 0; i < sizeof skip_names / sizeof skip_names[0]; i++)
            if (strcmp(tok, skip_names[i].name) == 0 || strcmp(tok, "known") == 0) {
                skip |= skip_names[i].flag;
                known = true;
            }
        if (!known) {
            fprintf(stderr, "fuzz-graph: unknown --skip name '%s'\n", tok);
            exit(2);
        }
    }
    return skip;
}

static struct shared *shared_new(void)
{
    void *p = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("fuzz-graph: mmap");
        exit(2);
    }
    return memset(p, 0, sizeof(struct shared));
}

#ifdef FUZZ_GRAPH_LIBFUZZER

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The libFuzzer entry: the input bytes make every decision; a finding
 * aborts, so that libFuzzer keeps the input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready) {
        shared = shared_new();
        ggml_log_set(log_sink, NULL);
        /* libFuzzer takes a malloc beyond its limit for a leak of memory */
        settings.try_hopeless = false;
        const char *skip = getenv("FUZZ_GRAPH_SKIP");
        if (skip != NULL && skip[0] != '\0')
            settings.skip = parse_skip(skip);
        if (!backends_init())
            abort();
        ready = true;
    }
    struct entropy e = { .bytes = data, .n_bytes = size };
    uint64_t before = shared->n_findings;
    run_graph(&e, 0);
    if (shared->n_findings != before)
        abort();
    return 0;
}

#else

/* ------------------------------------------------------------- driver */

#define SEED_STEP 0x9E3779B97F4A7C15ull

static uint64_t iteration_seed(uint64_t first, uint64_t i)
{
    return first + i * SEED_STEP;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static char alarm_message[128];

static void on_alarm(int sig)
{
    (void) sig;
    ssize_t r = write(2, alarm_message, strlen(alarm_message));
    (void) r;
    _exit(124);
}

/* Runs iterations from shared->next_iteration on until n or the deadline. */
static void run_iterations(uint64_t first_seed, uint64_t n, double deadline)
{
    signal(SIGALRM, on_alarm);
    while (shared->next_iteration < n && now_seconds() < deadline) {
        uint64_t seed = iteration_seed(first_seed, shared->next_iteration);
        snprintf(alarm_message, sizeof alarm_message,
                 "fuzz-graph: seed %" PRIu64 " exceeded the time bound of %d s\n", seed, settings.time_bound);
        if (settings.verbose)
            fprintf(stderr, "graph seed %" PRIu64 "\n", seed);
        alarm((unsigned) settings.time_bound);
        struct entropy e = { .state = seed };
        run_graph(&e, seed);
        alarm(0);
        shared->next_iteration++;
    }
}

/* Forks a child per run of iterations; a child that dies is a finding for
 * the graph it was on, and the next child goes on after it. */
static void supervise(uint64_t first_seed, uint64_t n, double deadline)
{
    fflush(NULL);
    while (shared->next_iteration < n && now_seconds() < deadline) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fuzz-graph: fork");
            exit(2);
        }
        if (pid == 0) {
            if (!backends_init()) {
                fprintf(stderr, "fuzz-graph: no CPU backend: %s\n", log_last);
                _exit(2);
            }
            run_iterations(first_seed, n, deadline);
            ggml_backend_free(backends.blas);
            ggml_backend_free(backends.cpu);
            fflush(NULL);
            exit(0);
        }
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            continue;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            continue;
        uint64_t seed = iteration_seed(first_seed, shared->next_iteration);
        if (WIFSIGNALED(status))
            record_finding(seed, "the process died of signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
        else if (WEXITSTATUS(status) == 124)
            record_finding(seed, "the graph exceeded the time bound of %d s", settings.time_bound);
        else if (WEXITSTATUS(status) == 2 && shared->counts.graphs == 0)
            exit(2);
        else
            record_finding(seed, "the process exited with status %d (a sanitizer report?)", WEXITSTATUS(status));
        shared->next_iteration++;
    }
}

static void print_summary(double seconds, bool tap)
{
    const struct counts *c = &shared->counts;
    printf("# graphs: %" PRIu64 " in %.1f s (%.1f graphs/s)\n", c->graphs, seconds,
           seconds > 0 ? (double) c->graphs / seconds : 0.0);
    printf("# built: %" PRIu64 ", refused at construction: %" PRIu64 ", refused at allocation: %" PRIu64
           ", refused at compute: %" PRIu64 ", computed: %" PRIu64 ", too large to run: %" PRIu64 "\n",
           c->built, c->refused_build, c->refused_alloc, c->refused_compute, c->computed, c->too_large);
    printf("# constructor calls: %" PRIu64 ", of which refused: %" PRIu64 "\n", c->ops, c->ops_refused);
    if (settings.tamper > 0)
        printf("# graphs tampered with: %" PRIu64 "\n", c->tampered);
    printf("# findings: %" PRIu64 "\n", shared->n_findings);
    for (uint64_t i = 0; i < shared->n_findings && i < MAX_FINDINGS; i++)
        printf("# finding: fuzz-graph --seed %" PRIu64 " --iterations 1: %s\n", shared->findings[i].seed,
               shared->findings[i].what);
    if (tap)
        printf("%s 1 - fuzz-graph: %" PRIu64 " random graphs without a finding\n",
               shared->n_findings == 0 ? "ok" : "not ok", c->graphs);
}


static void usage(FILE *out)
{
    fprintf(out,
            "usage: fuzz-graph [--seed S] [--iterations N] [--seconds S] [--threads-max N]\n"
            "                  [--time-bound S] [--skip D1,D2,D3,D4|known] [--tamper PERCENT]\n"
            "                  [--no-fork] [--tap] [--verbose]\n"
            "Builds, allocates and computes random graphs; prints the seed of each finding\n"
            "(replay it with --seed SEED --iterations 1); exits 1 if there was any.\n");
}

int main(int argc, char **argv)
{
    uint64_t seed = (uint64_t) time(NULL) ^ ((uint64_t) getpid() << 32);
    uint64_t iterations = UINT64_MAX;
    double seconds = -1;
    bool fork_children = true, tap = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes_value = true;
        if (strcmp(arg, "--seed") == 0 && val)
            seed = strtoull(val, NULL, 0);
        else if (strcmp(arg, "--iterations") == 0 && val)
            iterations = strtoull(val, NULL, 0);
        else if (strcmp(arg, "--seconds") == 0 && val)
            seconds = strtod(val, NULL);
        else if (strcmp(arg, "--threads-max") == 0 && val)
            settings.threads_max = atoi(val) > 0 ? atoi(val) : 1;
        else if (strcmp(arg, "--time-bound") == 0 && val)
            settings.time_bound = atoi(val) > 0 ? atoi(val) : 1;
        else if (strcmp(arg, "--skip") == 0 && val)
            settings.skip = parse_skip(val);
        else if (strcmp(arg, "--tamper") == 0 && val)
            settings.tamper = atoi(val) < 0 ? 0 : atoi(val) > 100 ? 100 : atoi(val);
        else {
            takes_value = false;
            if (strcmp(arg, "--no-fork") == 0)
                fork_children = false;
            else if (strcmp(arg, "--tap") == 0)
                tap = true;
            else if (strcmp(arg, "--verbose") == 0)
                settings.verbose = true;
            else if (strcmp(arg, "--help") == 0) {
                usage(stdout);
                return 0;
            } else {
                usage(stderr);
                return 2;
            }
        }
        if (takes_value)
            i++;
    }
    if (iterations == UINT64_MAX && seconds < 0)
        iterations = 1000;

    shared = shared_new();
    ggml_log_set(log_sink, NULL);
    if (tap)
        printf("1..1\n");
    printf("# fuzz-graph --seed %" PRIu64 "%s%s\n", seed, settings.skip ? " (skipping known defects)" : "",
           backends.blas != NULL || getenv("BLAS_PLUGIN_DIR") ? "" : " (no BLAS plugin)");
    fflush(stdout);
    double start = now_seconds();
    double deadline = seconds >= 0 ? start + seconds : INFINITY;
    if (fork_children) {
        supervise(seed, iterations, deadline);
    } else {
        if (!backends_init()) {
            fprintf(stderr, "fuzz-graph: no CPU backend: %s\n", log_last);
            return 2;
        }
        run_iterations(seed, iterations, deadline);
        ggml_backend_free(backends.blas);
        ggml_backend_free(backends.cpu);
    }
    print_summary(now_seconds() - start, tap);
    return shared->n_findings == 0 ? 0 : 1;
}

#endif
