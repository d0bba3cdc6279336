/*
 * test-sched.c - the backend scheduler (ggml_backend_sched_*) over the
 * test plugin's device TESTDEV (tests/plugins/testdev.c, found in
 * $TEST_PLUGIN_DIR) and the CPU backend.
 *
 * TESTDEV is a pretend GPU with non-host buffers.  It computes layout ops,
 * F32 copies, ADD/SUB/MUL (with broadcast), SCALE and MUL_MAT, asks for
 * MUL_MAT with a batch of 32 or more (offload_op), and counts what the
 * scheduler makes it do (uploads, downloads, graph computes, nodes,
 * events) through functions found with ggml_backend_reg_get_proc_address.
 * Ops it cannot do (SQR, SOFT_MAX, ...) make the CPU take part, so the
 * graphs below have known assignments, splits and input copies, worked
 * out from the scheduler's contract (the passes: pins, pre-allocated
 * tensors, inputs and weights; expansion; upgrade; views and leftovers).
 *
 * Every numeric result is checked against a double-precision reference
 * computed here from the inputs.  The input values are small multiples of
 * 1/8, so most results are exact in float.
 */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "tap.h"

/* ------------------------------------------------------------ fixture */

static ggml_backend_reg_t td_reg;
static ggml_backend_t be_dev;  /* TESTDEV */
static ggml_backend_t be_cpu;
static ggml_backend_buffer_type_t buft_dev, buft_cpu;

/* The plugin's test hooks (NULL when the plugin lacks them). */
static struct {
    size_t (*live_buffers)(void);
    size_t (*uploads)(void);
    size_t (*downloads)(void);
    size_t (*device_copies)(void);
    size_t (*graph_computes)(void);
    size_t (*nodes_computed)(void);
    size_t (*events_recorded)(void);
    size_t (*events_waited)(void);
    void (*reset_counters)(void);
    void (*set_alloc_limit)(size_t);
} td;

/* A counter's value; SIZE_MAX (never an expected count) without the hook. */
static size_t count(size_t (*hook)(void))
{
    return hook ? hook() : SIZE_MAX;
}

static void counters_reset(void)
{
    if (td.reset_counters)
        td.reset_counters();
}

/* ------------------------------------------------------------ helpers */

/* A no_alloc context for n_tensors tensors and a graph of graph_size nodes. */
static struct ggml_context *ctx_new(size_t n_tensors, size_t graph_size)
{
    struct ggml_init_params params = {
        .mem_size = n_tensors * ggml_tensor_overhead() +
                    (graph_size ? ggml_graph_overhead_custom(graph_size, false) : 0),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    return ggml_init(params);
}

static struct ggml_tensor *named(struct ggml_tensor *t, const char *name)
{
    if (t != NULL)
        ggml_set_name(t, name);
    return t;
}

static struct ggml_tensor *input_2d(struct ggml_context *ctx, int64_t ne0, int64_t ne1, const char *name)
{
    struct ggml_tensor *t = named(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ne0, ne1), name);
    ggml_set_input(t);
    return t;
}

static struct ggml_cgraph *graph_of(struct ggml_context *ctx, size_t size, struct ggml_tensor *out)
{
    struct ggml_cgraph *g = ggml_new_graph_custom(ctx, size, false);
    ggml_build_forward_expand(g, out);
    return g;
}

/* Small multiples of 1/8 in [-6/8, 6/8], different for each seed. */
static void fill(float *v, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (float) ((int) ((i * 7 + (size_t) seed * 5 + 3) % 13) - 6) / 8.0f;
}

/* Writes n values made from seed into t (contiguous F32) and keeps them in v. */
static void set_filled(struct ggml_tensor *t, float *v, int seed)
{
    size_t n = (size_t) ggml_nelements(t);
    fill(v, n, seed);
    ggml_backend_tensor_set(t, v, 0, n * sizeof(float));
}

/* out[m + n*M] = sum_k a[k + m*K] * b[k + n*K]: MUL_MAT of a [K, M] and b [K, N]. */
static void ref_mul_mat(double *out, const float *a, const float *b, int k_dim, int m_dim, int n_dim)
{
    for (int n = 0; n < n_dim; n++)
        for (int m = 0; m < m_dim; m++) {
            double sum = 0.0;
            for (int k = 0; k < k_dim; k++)
                sum += (double) a[k + m * k_dim] * (double) b[k + n * k_dim];
            out[m + n * m_dim] = sum;
        }
}

/*
 * Reads t (contiguous F32) and counts elements farther than
 * tol * (1 + |want|) from want; one assertion; returns the count.
 */
static int check_values(struct ggml_tensor *t, const double *want, size_t n, double tol, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int check_values(struct ggml_tensor *t, const double *want, size_t n, double tol, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (t == NULL || (t->buffer == NULL && (t->view_src == NULL || t->view_src->buffer == NULL))) {
        ok(false, "%s (tensor has no data)", what);
        return (int) n;
    }
    if ((size_t) ggml_nelements(t) != n) {
        ok(false, "%s (%lld elements, expected %zu)", what, (long long) ggml_nelements(t), n);
        return (int) n;
    }
    float *got = malloc(n * sizeof *got);
    ggml_backend_tensor_get(t, got, 0, n * sizeof *got);
    int bad = 0;
    size_t first = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(fabs((double) got[i] - want[i]) <= tol * (1.0 + fabs(want[i])))) {
            if (bad++ == 0)
                first = i;
        }
    }
    if (!ok(bad == 0, "%s", what))
        tap_diag("%d of %zu wrong; first at %zu: got %.9g, want %.9g", bad, n, first, (double) got[first],
                 want[first]);
    free(got);
    return bad;
}

/* True when node's source j is named want (names are at most GGML_MAX_NAME). */
static bool src_named(const struct ggml_tensor *node, int j, const char *want)
{
    return node != NULL && node->src[j] != NULL && strncmp(node->src[j]->name, want, GGML_MAX_NAME) == 0;
}

static const char *src_name(const struct ggml_tensor *node, int j)
{
    return node != NULL && node->src[j] != NULL ? node->src[j]->name : "(none)";
}

#define is_src(node, j, want, ...)                                             \
    do {                                                                        \
        if (!ok(src_named((node), (j), (want)), __VA_ARGS__))                  \
            tap_diag("src[%d] of '%s' is '%s', expected '%s'", (j),             \
                     (node) ? (node)->name : "(null)", src_name((node), (j)), (want)); \
    } while (0)

static const char *backend_name_or_null(ggml_backend_t b)
{
    return b ? ggml_backend_name(b) : "(null)";
}

#define is_backend(sched, t, want, ...)                                        \
    do {                                                                        \
        ggml_backend_t tb_got_ = ggml_backend_sched_get_tensor_backend((sched), (t)); \
        if (!ok(tb_got_ == (want), __VA_ARGS__))                                \
            tap_diag("tensor '%s' is on %s, expected %s", (t) ? (t)->name : "(null)", \
                     backend_name_or_null(tb_got_), backend_name_or_null(want)); \
    } while (0)

static ggml_backend_sched_t sched_new2(bool parallel, bool op_offload)
{
    ggml_backend_t backends[2] = { be_dev, be_cpu };
    return ggml_backend_sched_new(backends, NULL, 2, 0, parallel, op_offload);
}

/* ------------------------------------------------------ shared weights */

/*
 * Weights in one TESTDEV buffer marked WEIGHTS:
 *   w  [16, 8]   b  [8]     xw [16, 4]
 *   w1 [8, 6]    b1 [6]     w2 [5, 3]
 */
#define WK 16
#define WM 8
#define XN 4
static struct {
    struct ggml_context *ctx;
    ggml_backend_buffer_t buf;
    struct ggml_tensor *w, *b, *xw, *w1, *b1, *w2;
    float wv[WK * WM], bv[WM], xwv[WK * XN], w1v[8 * 6], b1v[6], w2v[5 * 3];
} dw;

static bool weights_init(void)
{
    dw.ctx = ctx_new(8, 0);
    dw.w = named(ggml_new_tensor_2d(dw.ctx, GGML_TYPE_F32, WK, WM), "w");
    dw.b = named(ggml_new_tensor_1d(dw.ctx, GGML_TYPE_F32, WM), "b");
    dw.xw = named(ggml_new_tensor_2d(dw.ctx, GGML_TYPE_F32, WK, XN), "xw");
    dw.w1 = named(ggml_new_tensor_2d(dw.ctx, GGML_TYPE_F32, 8, 6), "w1");
    dw.b1 = named(ggml_new_tensor_1d(dw.ctx, GGML_TYPE_F32, 6), "b1");
    dw.w2 = named(ggml_new_tensor_2d(dw.ctx, GGML_TYPE_F32, 5, 3), "w2");
    dw.buf = ggml_backend_alloc_ctx_tensors_from_buft(dw.ctx, buft_dev);
    if (dw.buf == NULL)
        return false;
    ggml_backend_buffer_set_usage(dw.buf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    set_filled(dw.w, dw.wv, 1);
    set_filled(dw.b, dw.bv, 2);
    set_filled(dw.xw, dw.xwv, 3);
    set_filled(dw.w1, dw.w1v, 4);
    set_filled(dw.b1, dw.b1v, 5);
    set_filled(dw.w2, dw.w2v, 6);
    return true;
}

static void weights_free(void)
{
    ggml_backend_buffer_free(dw.buf);
    ggml_free(dw.ctx);
}

/* ------------------------------------------------ 1. creation, getters */

static void test_create(void)
{
    ggml_backend_t both[2] = { be_dev, be_cpu };
    ggml_backend_t cpu_first[2] = { be_cpu, be_dev };
    ggml_backend_t twice[3] = { be_dev, be_dev, be_cpu };
    ggml_backend_t with_null[2] = { NULL, be_cpu };
    ggml_backend_buffer_type_t cpu_bufts[2] = { buft_cpu, buft_cpu };
    ggml_backend_buffer_type_t null_bufts[2] = { NULL, buft_cpu };
    ggml_backend_buffer_type_t good_bufts[2] = { buft_dev, buft_cpu };

    tap_log_errors();
    is_ptr(ggml_backend_sched_new(NULL, NULL, 2, 0, false, true), NULL, "sched_new: NULL backends gives NULL");
    logged_one_error("with one error");
    is_ptr(ggml_backend_sched_new(both, NULL, 0, 0, false, true), NULL, "sched_new: n_backends 0 gives NULL");
    logged_one_error("with one error");
    is_ptr(ggml_backend_sched_new(both, NULL, -1, 0, false, true), NULL, "sched_new: n_backends -1 gives NULL");
    logged_one_error("with one error");
    is_ptr(ggml_backend_sched_new(cpu_first, NULL, 2, 0, false, true), NULL,
           "sched_new: TESTDEV last (not a CPU device) gives NULL");
    logged_one_error("with one error");
    /* as upstream: a backend listed again is accepted; only its first place is ever used */
    ggml_backend_sched_t sched_twice = ggml_backend_sched_new(twice, NULL, 3, 0, false, true);
    ok(sched_twice != NULL, "sched_new: the same backend twice is accepted");
    is_int(tap_log_errors(), 0, "without an error");
    is_int(ggml_backend_sched_get_n_backends(sched_twice), 3, "and counts three backends");
    ggml_backend_sched_free(sched_twice);
    is_ptr(ggml_backend_sched_new(with_null, NULL, 2, 0, false, true), NULL, "sched_new: a NULL backend gives NULL");
    logged_one_error("with one error");

    ggml_backend_t gone = ggml_backend_cpu_init();
    ggml_backend_free(gone);
    ggml_backend_t with_freed[2] = { be_dev, gone };
    tap_log_errors();
    is_ptr(ggml_backend_sched_new(with_freed, NULL, 2, 0, false, true), NULL,
           "sched_new: a freed backend gives NULL");
    logged_one_error("with one error");

    is_ptr(ggml_backend_sched_new(both, cpu_bufts, 2, 0, false, true), NULL,
           "sched_new: a CPU buffer type for TESTDEV (unsupported) gives NULL");
    logged_one_error("with one error");
    is_ptr(ggml_backend_sched_new(both, null_bufts, 2, 0, false, true), NULL,
           "sched_new: a NULL buffer type gives NULL");
    logged_one_error("with one error");

    ggml_backend_sched_free(NULL);
    is_int(tap_log_errors(), 0, "sched_free(NULL) is a no-op without a message");

    ggml_backend_sched_t sched = ggml_backend_sched_new(both, NULL, 2, 0, false, false);
    ok(sched != NULL, "sched_new: TESTDEV then CPU, graph_size 0");
    is_int(tap_log_errors(), 0, "without a message");
    if (sched == NULL) {
        tap_skip(18, "no scheduler");
        return;
    }
    is_int(ggml_backend_sched_get_n_backends(sched), 2, "get_n_backends is 2");
    is_ptr(ggml_backend_sched_get_backend(sched, 0), be_dev, "get_backend(0) is TESTDEV");
    is_ptr(ggml_backend_sched_get_backend(sched, 1), be_cpu, "get_backend(1) is the CPU");
    is_ptr(ggml_backend_sched_get_backend(sched, 2), NULL, "get_backend(2) is NULL");
    logged_one_error("with one error");
    is_ptr(ggml_backend_sched_get_backend(sched, -1), NULL, "get_backend(-1) is NULL");
    logged_one_error("with one error");
    is_ptr(ggml_backend_sched_get_buffer_type(sched, be_dev), buft_dev,
           "get_buffer_type defaults to TESTDEV's buffer type");
    is_ptr(ggml_backend_sched_get_buffer_type(sched, be_cpu), ggml_backend_get_default_buffer_type(be_cpu),
           "and to the CPU's default buffer type");
    is_uint(ggml_backend_sched_get_buffer_size(sched, be_dev), 0, "get_buffer_size is 0 before any reservation");
    is_int(ggml_backend_sched_get_n_copies(sched), 1, "get_n_copies is 1 without parallel");
    is_int(ggml_backend_sched_get_n_splits(sched), 0, "get_n_splits is 0 before any graph");
    is_int(tap_log_errors(), 0, "the getters log nothing");

    ggml_backend_t stranger = ggml_backend_cpu_init();
    is_ptr(ggml_backend_sched_get_buffer_type(sched, stranger), NULL,
           "get_buffer_type of a backend not in the scheduler is NULL");
    logged_one_error("with one error");
    is_uint(ggml_backend_sched_get_buffer_size(sched, stranger), 0,
            "get_buffer_size of a backend not in the scheduler is 0");
    logged_one_error("with one error");
    ggml_backend_free(stranger);
    ggml_backend_sched_free(sched);
    is_int(tap_log_errors(), 0, "sched_free logs nothing");

    sched = ggml_backend_sched_new(both, NULL, 2, 16, true, true);
    ok(sched != NULL, "sched_new with parallel");
    is_int(ggml_backend_sched_get_n_copies(sched), 4, "get_n_copies is 4 with parallel");
    ggml_backend_sched_free(sched);

    sched = ggml_backend_sched_new(both, good_bufts, 2, 16, false, true);
    ok(sched != NULL && ggml_backend_sched_get_buffer_type(sched, be_dev) == buft_dev &&
           ggml_backend_sched_get_buffer_type(sched, be_cpu) == buft_cpu,
       "sched_new with explicit supported buffer types uses them");
    ggml_backend_sched_free(sched);

    ggml_backend_t cpu_only[1] = { be_cpu };
    sched = ggml_backend_sched_new(cpu_only, NULL, 1, 0, false, true);
    ok(sched != NULL && ggml_backend_sched_get_n_backends(sched) == 1, "a CPU-only scheduler is fine");
    ggml_backend_sched_free(sched);
    is_int(tap_log_errors(), 0, "no message from the good schedulers");
}

/* --------------------------------------- 2. assignment by the weights */

static void test_weights_assignment(void)
{
    struct ggml_context *ctx = ctx_new(8, 64);
    struct ggml_tensor *x = input_2d(ctx, WK, XN, "x");
    struct ggml_tensor *y = named(ggml_mul_mat(ctx, dw.w, x), "y");
    struct ggml_tensor *sm = named(ggml_soft_max(ctx, y), "sm");
    ggml_set_output(sm);
    struct ggml_cgraph *g = graph_of(ctx, 64, sm);

    ok(ggml_backend_supports_op(be_dev, y) && !ggml_backend_supports_op(be_dev, sm) &&
           ggml_backend_supports_op(be_cpu, sm),
       "precondition: TESTDEV does MUL_MAT but not SOFT_MAX, the CPU does SOFT_MAX");

    ggml_backend_sched_t sched = sched_new2(false, true);
    tap_log_errors();
    is_ptr(ggml_backend_sched_get_tensor_backend(sched, y), NULL, "before splitting a node has no backend");
    is_int(tap_log_errors(), 0, "and asking is not an error");
    ggml_backend_sched_split_graph(sched, g);
    is_backend(sched, y, be_dev, "MUL_MAT reading weights in a TESTDEV buffer goes to TESTDEV");
    is_backend(sched, sm, be_cpu, "SOFT_MAX after it (TESTDEV cannot) goes to the CPU");
    is_backend(sched, x, be_cpu, "the input goes to the CPU");
    is_backend(sched, dw.w, be_dev, "the weights stay on TESTDEV");
    is_int(ggml_backend_sched_get_n_splits(sched), 2, "two splits");

    ok(ggml_backend_sched_alloc_graph(sched, g), "alloc_graph");
    float xv[WK * XN];
    set_filled(x, xv, 11);
    is_int(ggml_backend_sched_graph_compute(sched, g), GGML_STATUS_SUCCESS, "graph_compute");
    double want[WM * XN];
    ref_mul_mat(want, dw.wv, xv, WK, WM, XN);
    for (int n = 0; n < XN; n++) {
        double *row = want + n * WM, max = row[0], sum = 0.0;
        for (int m = 1; m < WM; m++)
            max = row[m] > max ? row[m] : max;
        for (int m = 0; m < WM; m++)
            sum += row[m] = exp(row[m] - max);
        for (int m = 0; m < WM; m++)
            row[m] /= sum;
    }
    check_values(sm, want, WM * XN, 1e-5, "softmax(w x) is right");
    is_int(tap_log_errors(), 0, "no message");
    ggml_backend_sched_free(sched);
    ggml_free(ctx);
}

/* ------------------------------------------------------- 3. op_offload */

static void test_op_offload(void)
{
    struct ggml_context *hctx = ctx_new(1, 0);
    struct ggml_tensor *wh = named(ggml_new_tensor_2d(hctx, GGML_TYPE_F32, WK, WM), "wh");
    ggml_backend_buffer_t hbuf = ggml_backend_alloc_ctx_tensors_from_buft(hctx, buft_cpu);
    if (hbuf == NULL) {
        tap_skip(12, "no host weights");
        ggml_free(hctx);
        return;
    }
    ggml_backend_buffer_set_usage(hbuf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    float whv[WK * WM];
    set_filled(wh, whv, 21);

    const struct {
        int batch;
        bool op_offload;
        bool on_dev;
    } cases[] = { { 64, true, true }, { 64, false, false }, { 8, true, false } };

    tap_log_errors();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int batch = cases[c].batch;
        struct ggml_context *ctx = ctx_new(4, 16);
        struct ggml_tensor *x = input_2d(ctx, WK, batch, "x");
        struct ggml_tensor *mm = named(ggml_mul_mat(ctx, wh, x), "mm");
        ggml_set_output(mm);
        struct ggml_cgraph *g = graph_of(ctx, 16, mm);
        if (c == 0) {
            bool sup = ggml_backend_supports_op(be_dev, mm), off = ggml_backend_offload_op(be_dev, mm);
            tap_diag("TESTDEV supports_op(mm with host weights) = %d, offload_op = %d", sup, off);
        }

        ggml_backend_sched_t sched = sched_new2(false, cases[c].op_offload);
        ggml_backend_sched_split_graph(sched, g);
        is_backend(sched, mm, cases[c].on_dev ? be_dev : be_cpu,
                   "host WEIGHTS, batch %d, op_offload %s: MUL_MAT goes to %s", batch,
                   cases[c].op_offload ? "true" : "false", cases[c].on_dev ? "TESTDEV" : "the CPU");
        is_int(ggml_backend_sched_get_n_splits(sched), 1, "one split");
        if (cases[c].on_dev)
            is_src(mm, 0, "TESTDEV#wh#0", "the host weights are copied to TESTDEV");

        ok(ggml_backend_sched_alloc_graph(sched, g), "alloc_graph");
        float *xv = malloc((size_t) WK * batch * sizeof *xv);
        double *want = malloc((size_t) WM * batch * sizeof *want);
        set_filled(x, xv, 22 + (int) c);
        counters_reset();
        is_int(ggml_backend_sched_graph_compute(sched, g), GGML_STATUS_SUCCESS, "graph_compute");
        is_uint(count(td.nodes_computed), cases[c].on_dev ? 1 : 0, "TESTDEV computed %d node(s)",
                cases[c].on_dev ? 1 : 0);
        ref_mul_mat(want, whv, xv, WK, WM, batch);
        check_values(mm, want, (size_t) WM * batch, 1e-5, "w x is right");
        free(xv);
        free(want);
        ggml_backend_sched_free(sched);
        ggml_free(ctx);
    }
    is_int(tap_log_errors(), 0, "no message");
    ggml_backend_buffer_free(hbuf);
    ggml_free(hctx);
}

/* -------------------------------------------------------------- 4. pins */

static void test_pins(void)
{
    struct ggml_context *ctx = ctx_new(6, 16);
    struct ggml_tensor *x1 = input_2d(ctx, 5, 3, "x1");
    struct ggml_tensor *x2 = input_2d(ctx, 5, 3, "x2");
    struct ggml_tensor *a = named(ggml_add(ctx, x1, x2), "a");
    struct ggml_tensor *c = named(ggml_scale(ctx, a, 0.5f), "c");
    ggml_set_output(c);
    struct ggml_cgraph *g = graph_of(ctx, 16, c);
    ggml_backend_sched_t sched = sched_new2(false, true);

    tap_log_errors();
    /* nothing pinned: inputs on the CPU, no weights: everything on the CPU */
    ggml_backend_sched_split_graph(sched, g);
    is_backend(sched, a, be_cpu, "unpinned: ADD of two CPU inputs goes to the CPU");
    is_backend(sched, c, be_cpu, "and SCALE after it");
    is_int(ggml_backend_sched_get_n_splits(sched), 1, "one split");
    ggml_backend_sched_reset(sched);

    ggml_backend_sched_set_tensor_backend(sched, a, be_dev);
    is_backend(sched, a, be_dev, "a pin is reported before splitting");
    ggml_backend_sched_split_graph(sched, g);
    is_backend(sched, a, be_dev, "ADD pinned to TESTDEV is on TESTDEV");
    is_backend(sched, c, be_dev, "SCALE after it follows by expansion");
    is_int(ggml_backend_sched_get_n_splits(sched), 1, "one split");
    is_src(a, 0, "TESTDEV#x1#0", "the inputs are copied to TESTDEV");

    ggml_backend_sched_reset(sched);
    is_ptr(ggml_backend_sched_get_tensor_backend(sched, a), NULL, "reset forgets the pin");
    ggml_backend_sched_split_graph(sched, g);
    is_backend(sched, a, be_cpu, "after reset ADD is on the CPU again");
    is_int(ggml_backend_sched_get_n_splits(sched), 1, "one split");

    ggml_backend_sched_set_tensor_backend(sched, a, be_dev);
    ggml_backend_sched_split_graph(sched, g);
    ggml_backend_sched_set_tensor_backend(sched, c, be_cpu);
    ggml_backend_sched_split_graph(sched, g);
    is_backend(sched, a, be_dev, "the first pin survives splitting");
    is_backend(sched, c, be_cpu, "SCALE pinned to the CPU is on the CPU");
    is_int(ggml_backend_sched_get_n_splits(sched), 2, "two splits");
    is_src(c, 0, "CPU#a#0", "the CPU reads a copy of a");

    ok(ggml_backend_sched_alloc_graph(sched, g), "alloc_graph with pins (re-splits the same graph)");
    is_backend(sched, a, be_dev, "pins survive alloc_graph");
    float v1[15], v2[15];
    set_filled(x1, v1, 31);
    set_filled(x2, v2, 32);
    counters_reset();
    is_int(ggml_backend_sched_graph_compute(sched, g), GGML_STATUS_SUCCESS, "graph_compute");
    is_uint(count(td.nodes_computed), 1, "TESTDEV computed exactly the pinned ADD");
    double want[15];
    for (int i = 0; i < 15; i++)
        want[i] = 0.5 * ((double) v1[i] + v2[i]);
    check_values(c, want, 15, 1e-6, "(x1 + x2) / 2 is right");
    is_int(tap_log_errors(), 0, "no message");

    /* the same graph, allocated and computed with the pins, scheduled
     * again after reset: reset forgets pins and allocation, so ADD goes
     * where an unpinned, unallocated ADD goes (the CPU) */
    ggml_backend_sched_reset(sched);
    is_ptr(ggml_backend_sched_get_tensor_backend(sched, a), NULL, "reset forgets the pins");
    ggml_backend_sched_split_graph(sched, g);
    is_backend(sched, a, be_cpu, "the allocated graph, split again after reset: ADD is on the CPU");
    is_backend(sched, c, be_cpu, "and SCALE");
    ggml_backend_sched_reset(sched);

    ggml_backend_t stranger = ggml_backend_cpu_init();
    tap_log_errors();
    ggml_backend_sched_set_tensor_backend(sched, a, stranger);
    logged_one_error("pinning to a backend not in the scheduler logs one error");
    is_ptr(ggml_backend_sched_get_tensor_backend(sched, a), NULL, "and records no pin");
    ggml_backend_free(stranger);
    ggml_backend_sched_free(sched);
    ggml_free(ctx);
}

/* ------------------------------------------- 5. assignment by support */

static void test_support_expansion(void)
{
    struct ggml_context *ctx = ctx_new(8, 16);
    struct ggml_tensor *x = input_2d(ctx, WK, XN, "x");
    struct ggml_tensor *p = named(ggml_scale(ctx, x, 2.0f), "p");
    struct ggml_tensor *y = named(ggml_mul_mat(ctx, dw.w, p), "y");
    struct ggml_tensor *a = named(ggml_scale(ctx, y, 0.5f), "a");
    struct ggml_tensor *s = named(ggml_sqr(ctx, a), "s");
    struct ggml_tensor *t = named(ggml_scale(ctx, s, 0.25f), "t");
    ggml_set_output(t);
    struct ggml_cgraph *g = graph_of(ctx, 16, t);

    ok(!ggml_backend_supports_op(be_dev, s) && ggml_backend_supports_op(be_cpu, s),
       "precondition: only the CPU does SQR");
    ggml_backend_sched_t sched = sched_new2(false, true);
    tap_log_errors();
    ggml_backend_sched_split_graph(sched, g);
    is_backend(sched, p, be_dev, "SCALE before the weights' MUL_MAT goes to TESTDEV (expansion up)");
    is_backend(sched, y, be_dev, "MUL_MAT goes to TESTDEV (weights)");
    is_backend(sched, a, be_dev, "SCALE after it goes to TESTDEV (expansion down)");
    is_backend(sched, s, be_cpu, "SQR, supported by the CPU only, goes to the CPU");
    is_backend(sched, t, be_dev, "SCALE after SQR goes to TESTDEV (expansion across an unsupported node)");
    is_int(ggml_backend_sched_get_n_splits(sched), 3, "three splits");
    is_src(p, 0, "TESTDEV#x#0", "p reads TESTDEV's copy of x");
    is_src(s, 0, "CPU#a#0", "s reads the CPU's copy of a");
    is_src(t, 0, "TESTDEV#s#0", "t reads TESTDEV's copy of s");

    ok(ggml_backend_sched_alloc_graph(sched, g), "alloc_graph");
    float xv[WK * XN], px[WK * XN];
    set_filled(x, xv, 41);
    is_int(ggml_backend_sched_graph_compute(sched, g), GGML_STATUS_SUCCESS, "graph_compute");
    for (int i = 0; i < WK * XN; i++)
        px[i] = 2.0f * xv[i];
    double want[WM * XN];
    ref_mul_mat(want, dw.wv, px, WK, WM, XN);
    for (int i = 0; i < WM * XN; i++)
        want[i] = 0.25 * (0.5 * want[i]) * (0.5 * want[i]);
    check_values(t, want, WM * XN, 1e-6, "(w 2x / 2)^2 / 4 is right");
    is_int(tap_log_errors(), 0, "no message");
    ggml_backend_sched_free(sched);
    ggml_free(ctx);
}

/* --------------------------------------------- 6. exact splits, copies */

static void test_exact_splits(void)
{
    struct ggml_context *ctx = ctx_new(8, 16);
    struct ggml_tensor *x = input_2d(ctx, WK, XN, "x");
    struct ggml_tensor *y = named(ggml_mul_mat(ctx, dw.w, x), "y");
    struct ggml_tensor *z = named(ggml_sqr(ctx, y), "z");
    struct ggml_tensor *u = named(ggml_add(ctx, z, dw.b), "u");
    ggml_set_output(u);
    struct ggml_cgraph *g = graph_of(ctx, 16, u);
    ggml_backend_sched_t sched = sched_new2(false, true);

    /* y: weights on TESTDEV -> TESTDEV; z: SQR, CPU only -> CPU;
     * u: weights b on TESTDEV -> TESTDEV.  Splits [y] [z] [u]; copies:
     * x (CPU input) to TESTDEV, y to the CPU, z to TESTDEV. */
    tap_log_errors();
    ggml_backend_sched_split_graph(sched, g);
    is_int(ggml_backend_sched_get_n_splits(sched), 3, "y = w x, z = y^2, u = z + b: three splits");
    is_backend(sched, y, be_dev, "y on TESTDEV");
    is_backend(sched, z, be_cpu, "z on the CPU");
    is_backend(sched, u, be_dev, "u on TESTDEV");
    is_ptr(y->src[0], dw.w, "y reads the weights in place");
    is_src(y, 1, "TESTDEV#x#0", "y reads TESTDEV's copy of x");
    ok(y->src[1] != NULL && ggml_are_same_shape(y->src[1], x), "the copy has x's shape");
    is_src(z, 0, "CPU#y#0", "z reads the CPU's copy of y");
    is_src(u, 0, "TESTDEV#z#0", "u reads TESTDEV's copy of z");
    is_ptr(u->src[1], dw.b, "u reads b in place");

    ok(ggml_backend_sched_alloc_graph(sched, g), "alloc_graph");
    for (int round = 0; round < 2; round++) {
        float xv[WK * XN];
        set_filled(x, xv, 51 + round);
        counters_reset();
        is_int(ggml_backend_sched_graph_compute(sched, g), GGML_STATUS_SUCCESS, "graph_compute (round %d)", round);
        is_uint(count(td.uploads), 2, "two uploads: x and z");
        is_uint(count(td.downloads), 1, "one download: y");
        is_uint(count(td.device_copies), 0, "no device copy");
        is_uint(count(td.graph_computes), 2, "TESTDEV computed two splits");
        is_uint(count(td.nodes_computed), 2, "two nodes: y and u");
        is_uint(count(td.events_recorded) + count(td.events_waited), 0, "no events without parallel");
        double want[WM * XN];
        ref_mul_mat(want, dw.wv, xv, WK, WM, XN);
        for (int n = 0; n < XN; n++)
            for (int m = 0; m < WM; m++)
                want[m + n * WM] = want[m + n * WM] * want[m + n * WM] + dw.bv[m];
        check_values(u, want, WM * XN, 1e-6, "(w x)^2 + b is right (round %d)", round);
    }
    is_int(tap_log_errors(), 0, "no message");
    ggml_backend_sched_free(sched);
    ggml_free(ctx);

    /* a second TESTDEV split reuses the first one's copy of x:
     * a = x + b (weights: TESTDEV), s = a^2 (CPU), c = s * x (TESTDEV) */
    ctx = ctx_new(8, 16);
    struct ggml_tensor *x6 = input_2d(ctx, WM, 3, "x");
    struct ggml_tensor *a = named(ggml_add(ctx, x6, dw.b), "a");
    struct ggml_tensor *s = named(ggml_sqr(ctx, a), "s");
    struct ggml_tensor *c = named(ggml_mul(ctx, s, x6), "c");
    ggml_set_output(c);
    g = graph_of(ctx, 16, c);
    sched = sched_new2(false, true);
    ggml_backend_sched_split_graph(sched, g);
    is_int(ggml_backend_sched_get_n_splits(sched), 3, "a = x + b, s = a^2, c = s x: three splits");
    is_backend(sched, c, be_dev, "c on TESTDEV");
    is_src(a, 0, "TESTDEV#x#0", "a reads TESTDEV's copy of x");
    is_src(c, 1, "TESTDEV#x#0", "c reads the same name");
    ok(a->src[0] == c->src[1] && a->src[0] != x6, "the later TESTDEV split reuses the copy");
    is_src(c, 0, "TESTDEV#s#0", "c reads TESTDEV's copy of s");
    ok(ggml_backend_sched_alloc_graph(sched, g), "alloc_graph");
    float xv[WM * 3];
    set_filled(x6, xv, 61);
    counters_reset();
    is_int(ggml_backend_sched_graph_compute(sched, g), GGML_STATUS_SUCCESS, "graph_compute");
    is_uint(count(td.uploads), 2, "two uploads: x once, and s");
    is_uint(count(td.downloads), 1, "one download: a");
    double want[WM * 3];
    for (int n = 0; n < 3; n++)
        for (int m = 0; m < WM; m++) {
            double av = (double) xv[m + n * WM] + dw.bv[m];
            want[m + n * WM] = av * av * xv[m + n * WM];
        }
    check_values(c, want, WM * 3, 1e-6, "(x + b)^2 x is right");
    is_int(tap_log_errors(), 0, "no message");
    ggml_backend_sched_free(sched);
    ggml_free(ctx);
}

/* ------------------------------------ 7. a multi-split graph with views */

struct g7 {
    struct ggml_tensor *x, *bin, *h, *h2, *s, *tr, *c, *c2, *o, *o2, *v, *f;
    struct ggml_cgraph *g;
};

/* h = w1 x + b1; s = h^2; c = cont(permute(s)) / 2; o = w2 c + bin;
 * f = (rows 1..4 of o)^2 */
static void g7_build(struct g7 *t, struct ggml_context *ctx, struct ggml_tensor *w1, struct ggml_tensor *b1,
                     struct ggml_tensor *w2)
{
    t->x = input_2d(ctx, 8, 5, "x");
    t->bin = input_2d(ctx, 3, 1, "bin");
    t->h = named(ggml_mul_mat(ctx, w1, t->x), "h");           /* [6, 5] */
    t->h2 = named(ggml_add(ctx, t->h, b1), "h2");              /* b1 [6] broadcast */
    t->s = named(ggml_sqr(ctx, t->h2), "s");
    t->tr = named(ggml_permute(ctx, t->s, 1, 0, 2, 3), "tr");  /* [5, 6] */
    t->c = named(ggml_cont(ctx, t->tr), "c");
    t->c2 = named(ggml_scale(ctx, t->c, 0.5f), "c2");
    t->o = named(ggml_mul_mat(ctx, w2, t->c2), "o");           /* [3, 6] */
    t->o2 = named(ggml_add(ctx, t->o, t->bin), "o2");          /* bin [3, 1] broadcast */
    t->v = named(ggml_view_2d(ctx, t->o2, 3, 4, t->o2->nb[1], t->o2->nb[1]), "v");
    t->f = named(ggml_sqr(ctx, t->v), "f");                    /* [3, 4] */
    ggml_set_output(t->f);
    t->g = graph_of(ctx, 32, t->f);
}

static void g7_ref(double *f, const float *w1, const float *b1, const float *w2, const float *x, const float *bin)
{
    double h[6 * 5], c2[5 * 6], o2[3 * 6];
    ref_mul_mat(h, w1, x, 8, 6, 5);
    for (int n = 0; n < 5; n++)
        for (int m = 0; m < 6; m++) {
            double v = h[m + n * 6] + b1[m];
            c2[n + m * 5] = 0.5 * v * v; /* permuted: c[n, m] = s[m, n] */
        }
    for (int m = 0; m < 6; m++)
        for (int j = 0; j < 3; j++) {
            double sum = 0.0;
            for (int n = 0; n < 5; n++)
                sum += (double) w2[n + j * 5] * c2[n + m * 5];
            o2[j + m * 3] = sum + bin[j];
        }
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < 3; j++)
            f[j + r * 3] = o2[j + (r + 1) * 3] * o2[j + (r + 1) * 3];
}

static void test_multi_split(void)
{
    struct ggml_context *ctx = ctx_new(24, 32);
    struct g7 t;
    g7_build(&t, ctx, dw.w1, dw.b1, dw.w2);
    ggml_backend_sched_t sched = sched_new2(false, true);

    /* [h h2] TESTDEV | [s tr] CPU | [c c2 o o2 v] TESTDEV | [f] CPU */
    tap_log_errors();
    ggml_backend_sched_split_graph(sched, t.g);
    is_int(ggml_backend_sched_get_n_splits(sched), 4, "the mixed graph has four splits");
    is_backend(sched, t.h2, be_dev, "h2 = h + b1 on TESTDEV");
    is_backend(sched, t.s, be_cpu, "s = h2^2 on the CPU");
    is_backend(sched, t.tr, be_cpu, "the permuted view of s with s");
    is_backend(sched, t.c, be_dev, "cont(permute(s)) on TESTDEV");
    is_backend(sched, t.o2, be_dev, "o2 = w2 c2 + bin on TESTDEV");
    is_backend(sched, t.v, be_dev, "the view of o2 with o2");
    is_backend(sched, t.f, be_cpu, "f = v^2 on the CPU");
    is_src(t.h, 1, "TESTDEV#x#0", "h reads TESTDEV's copy of x");
    is_src(t.s, 0, "CPU#h2#0", "s reads the CPU's copy of h2");
    is_src(t.c, 0, "TESTDEV#tr#0", "c reads TESTDEV's copy of the permuted view");
    is_src(t.o2, 1, "TESTDEV#bin#0", "o2 reads TESTDEV's copy of bin");
    is_src(t.f, 0, "CPU#v#0", "f reads the CPU's copy of the view v");

    ok(ggml_backend_sched_alloc_graph(sched, t.g), "alloc_graph");
    float xv[8 * 5], binv[3];
    set_filled(t.x, xv, 71);
    set_filled(t.bin, binv, 72);
    counters_reset();
    is_int(ggml_backend_sched_graph_compute(sched, t.g), GGML_STATUS_SUCCESS, "graph_compute");
    is_uint(count(td.uploads), 3, "three uploads: x, tr, bin");
    is_uint(count(td.downloads), 2, "two downloads: h2, v");
    is_uint(count(td.graph_computes), 2, "TESTDEV computed two splits");
    is_uint(count(td.nodes_computed), 6, "six TESTDEV nodes: h h2 c c2 o o2");
    double want[12];
    g7_ref(want, dw.w1v, dw.b1v, dw.w2v, xv, binv);
    check_values(t.f, want, 12, 1e-6, "the mixed graph's result equals the double reference");
    float got_mixed[12];
    ggml_backend_tensor_get(t.f, got_mixed, 0, sizeof got_mixed);

    /* the same graph on the CPU alone, weights in host memory */
    struct ggml_context *hctx = ctx_new(3, 0);
    struct ggml_tensor *hw1 = named(ggml_new_tensor_2d(hctx, GGML_TYPE_F32, 8, 6), "w1");
    struct ggml_tensor *hb1 = named(ggml_new_tensor_1d(hctx, GGML_TYPE_F32, 6), "b1");
    struct ggml_tensor *hw2 = named(ggml_new_tensor_2d(hctx, GGML_TYPE_F32, 5, 3), "w2");
    ggml_backend_buffer_t hbuf = ggml_backend_alloc_ctx_tensors_from_buft(hctx, buft_cpu);
    ggml_backend_buffer_set_usage(hbuf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    ggml_backend_tensor_set(hw1, dw.w1v, 0, sizeof dw.w1v);
    ggml_backend_tensor_set(hb1, dw.b1v, 0, sizeof dw.b1v);
    ggml_backend_tensor_set(hw2, dw.w2v, 0, sizeof dw.w2v);
    struct ggml_context *cctx = ctx_new(24, 32);
    struct g7 tc;
    g7_build(&tc, cctx, hw1, hb1, hw2);
    ggml_backend_t cpu_only[1] = { be_cpu };
    ggml_backend_sched_t csched = ggml_backend_sched_new(cpu_only, NULL, 1, 0, false, true);
    ok(ggml_backend_sched_alloc_graph(csched, tc.g), "CPU only: alloc_graph");
    is_int(ggml_backend_sched_get_n_splits(csched), 1, "CPU only: one split");
    ggml_backend_tensor_set(tc.x, xv, 0, sizeof xv);
    ggml_backend_tensor_set(tc.bin, binv, 0, sizeof binv);
    is_int(ggml_backend_sched_graph_compute(csched, tc.g), GGML_STATUS_SUCCESS, "CPU only: graph_compute");
    double cpu_result[12];
    float got_cpu[12];
    ggml_backend_tensor_get(tc.f, got_cpu, 0, sizeof got_cpu);
    for (int i = 0; i < 12; i++)
        cpu_result[i] = got_cpu[i];
    check_values(t.f, cpu_result, 12, 1e-6, "the mixed result equals the CPU-only result");
    check_values(tc.f, want, 12, 1e-6, "the CPU-only result equals the double reference");
    is_int(tap_log_errors(), 0, "no message");

    ggml_backend_sched_free(csched);
    ggml_free(cctx);
    ggml_backend_buffer_free(hbuf);
    ggml_free(hctx);
    ggml_backend_sched_free(sched);
    ggml_free(ctx);
}

/* -------------------------------------------------- a three-node chain */

/* h = w x; s = h^2 (CPU); o = s/2 + xb (TESTDEV), for x [WK, n] and xb [WM, 1] */
struct chain {
    struct ggml_context *ctx;
    struct ggml_cgraph *g;
    struct ggml_tensor *x, *xb, *h, *s, *o;
};

static void chain_build(struct chain *c, int n)
{
    c->ctx = ctx_new(8, 16);
    c->x = input_2d(c->ctx, WK, n, "x");
    c->xb = input_2d(c->ctx, WM, 1, "xb");
    c->h = named(ggml_mul_mat(c->ctx, dw.w, c->x), "h");
    c->s = named(ggml_sqr(c->ctx, c->h), "s");
    c->o = named(ggml_add(c->ctx, ggml_scale(c->ctx, c->s, 0.5f), c->xb), "o");
    ggml_set_output(c->o);
    c->g = graph_of(c->ctx, 16, c->o);
}

static void chain_ref(double *out, const float *x, const float *xb, int n)
{
    ref_mul_mat(out, dw.wv, x, WK, WM, n);
    for (int j = 0; j < n; j++)
        for (int m = 0; m < WM; m++)
            out[m + j * WM] = 0.5 * out[m + j * WM] * out[m + j * WM] + xb[m];
}

/* Sets the chain's inputs from seed, computes, and checks the result. */
static bool chain_run(ggml_backend_sched_t sched, struct chain *c, int n, int seed)
{
    float *xv = malloc((size_t) WK * n * sizeof *xv), xbv[WM];
    double *want = malloc((size_t) WM * n * sizeof *want);
    set_filled(c->x, xv, seed);
    set_filled(c->xb, xbv, seed + 1);
    enum ggml_status st = ggml_backend_sched_graph_compute(sched, c->g);
    chain_ref(want, xv, xbv, n);
    float *got = malloc((size_t) WM * n * sizeof *got);
    ggml_backend_tensor_get(c->o, got, 0, (size_t) WM * n * sizeof *got);
    bool right = st == GGML_STATUS_SUCCESS;
    for (int i = 0; i < WM * n && right; i++)
        right = fabs(got[i] - want[i]) <= 1e-6 * (1.0 + fabs(want[i]));
    free(xv);
    free(want);
    free(got);
    return right;
}

/* ----------------------------------------------- 8. pipeline parallel */

#define PARALLEL_CYCLES 8

static void test_parallel(void)
{
    ggml_backend_sched_t sched = sched_new2(true, true);
    is_int(ggml_backend_sched_get_n_copies(sched), 4, "parallel: four copies");
    tap_log_errors();
    counters_reset();
    int good = 0;
    for (int cycle = 0; cycle < PARALLEL_CYCLES; cycle++) {
        struct chain c;
        ggml_backend_sched_reset(sched);
        chain_build(&c, 3);
        bool allocated = ggml_backend_sched_alloc_graph(sched, c.g);
        bool splits = ggml_backend_sched_get_n_splits(sched) == 3;
        bool right = allocated && chain_run(sched, &c, 3, 100 + 7 * cycle);
        if (!ok(allocated && splits && right, "parallel cycle %d: reset, alloc, set inputs, compute: right", cycle))
            tap_diag("allocated %d, three splits %d, result right %d", allocated, splits, right);
        good += right;
        ggml_backend_sched_reset(sched);
        ggml_free(c.ctx);
    }
    is_int(good, PARALLEL_CYCLES, "every parallel cycle gave the right result");
    is_int(tap_log_errors(), 0, "no message");
    tap_diag("parallel: TESTDEV recorded %zu events, waited for %zu", count(td.events_recorded),
             count(td.events_waited));

    /* the same, reusing one graph over the cycles */
    struct chain c;
    chain_build(&c, 5);
    good = 0;
    for (int cycle = 0; cycle < PARALLEL_CYCLES; cycle++) {
        ggml_backend_sched_reset(sched);
        bool allocated = ggml_backend_sched_alloc_graph(sched, c.g);
        good += allocated && chain_run(sched, &c, 5, 200 + 3 * cycle);
    }
    is_int(good, PARALLEL_CYCLES, "one graph scheduled %d times with parallel: always right", PARALLEL_CYCLES);
    is_int(tap_log_errors(), 0, "no message");
    ggml_backend_sched_free(sched);
    ggml_free(c.ctx);

    /* a graph without input copies (all on the CPU), allocated by a
     * scheduler that is then freed: its tensors point into freed buffers,
     * and a new scheduler places them afresh */
    struct ggml_context *ctx = ctx_new(8, 16);
    struct ggml_tensor *x = input_2d(ctx, 5, 3, "x");
    struct ggml_tensor *y = named(ggml_scale(ctx, ggml_sqr(ctx, x), 0.5f), "y");
    ggml_set_output(y);
    struct ggml_cgraph *g = graph_of(ctx, 16, y);
    bool right = true;
    for (int round = 0; round < 2; round++) {
        sched = sched_new2(round == 0, true);
        float xv[15], yv[15];
        bool allocated = ggml_backend_sched_alloc_graph(sched, g);
        set_filled(x, xv, 40 + round);
        right = right && allocated && ggml_backend_sched_graph_compute(sched, g) == GGML_STATUS_SUCCESS;
        ggml_backend_tensor_get(y, yv, 0, sizeof yv);
        for (int i = 0; i < 15; i++)
            right = right && yv[i] == 0.5f * xv[i] * xv[i];
        ggml_backend_sched_free(sched);
    }
    ok(right, "a graph allocated by a freed scheduler is placed afresh by a new one and computes right");
    is_int(tap_log_errors(), 0, "no message");
    ggml_free(ctx);
}

/* ------------------------------------------------------ 9. reservation */

static void test_reserve(void)
{
    struct chain big, small, big2;
    chain_build(&big, 64);
    chain_build(&small, 8);
    chain_build(&big2, 64);
    ggml_backend_sched_t sched = sched_new2(false, true);

    tap_log_errors();
    ok(ggml_backend_sched_reserve(sched, big.g), "reserve a graph of batch 64");
    size_t dev_size = ggml_backend_sched_get_buffer_size(sched, be_dev);
    size_t cpu_size = ggml_backend_sched_get_buffer_size(sched, be_cpu);
    size_t live = count(td.live_buffers);
    ok(dev_size >= (size_t) WM * 64 * sizeof(float), "TESTDEV's compute buffer holds h at least (%zu bytes)",
       dev_size);
    ok(cpu_size >= (size_t) WM * 64 * sizeof(float), "the CPU's compute buffer holds s at least (%zu bytes)",
       cpu_size);

    ok(ggml_backend_sched_alloc_graph(sched, small.g), "alloc_graph of a batch-8 graph");
    is_uint(ggml_backend_sched_get_buffer_size(sched, be_dev), dev_size, "TESTDEV's buffer size is unchanged");
    is_uint(ggml_backend_sched_get_buffer_size(sched, be_cpu), cpu_size, "the CPU's buffer size is unchanged");
    is_uint(count(td.live_buffers), live, "no TESTDEV buffer was allocated or freed");
    ok(chain_run(sched, &small, 8, 300), "the small graph computes right in the reserved buffers");
    is_uint(count(td.live_buffers), live, "still no new TESTDEV buffer");
    is_int(tap_log_errors(), 0, "no message");

    ggml_backend_sched_t fresh = sched_new2(false, true);
    size_t sizes[2] = { 0, 0 };
    live = count(td.live_buffers);
    ggml_backend_sched_reserve_size(fresh, big2.g, sizes);
    ok(sizes[0] > 0, "reserve_size: TESTDEV needs %zu bytes", sizes[0]);
    ok(sizes[1] > 0, "reserve_size: the CPU needs %zu bytes", sizes[1]);
    is_uint(sizes[0], dev_size, "as much as reserve allocated for TESTDEV");
    is_uint(sizes[1], cpu_size, "as much as reserve allocated for the CPU");
    is_uint(count(td.live_buffers), live, "reserve_size allocates no TESTDEV buffer");
    is_uint(ggml_backend_sched_get_buffer_size(fresh, be_dev) + ggml_backend_sched_get_buffer_size(fresh, be_cpu), 0,
            "nor any compute buffer");
    is_int(tap_log_errors(), 0, "no message");

    ggml_backend_sched_free(fresh);
    ggml_backend_sched_free(sched);
    ggml_free(big.ctx);
    ggml_free(small.ctx);
    ggml_free(big2.ctx);
}

/* --------------------------------------------------- 10. eval callback */

struct observer {
    const char *want[2];
    const char *abort_at;
    int asks, observed, observed_unwanted;
    int data_right, data_wrong;
    const double *ref_s, *ref_o1;
};

static bool wanted_by(const struct observer *ob, const char *name)
{
    return (ob->want[0] && strcmp(name, ob->want[0]) == 0) || (ob->want[1] && strcmp(name, ob->want[1]) == 0);
}

static bool observe(struct ggml_tensor *t, bool ask, void *user_data)
{
    struct observer *ob = user_data;
    bool wanted = wanted_by(ob, t->name);
    if (ask) {
        ob->asks++;
        return wanted;
    }
    ob->observed++;
    if (!wanted)
        ob->observed_unwanted++;
    const double *ref = strcmp(t->name, "s") == 0 ? ob->ref_s : strcmp(t->name, "o1") == 0 ? ob->ref_o1 : NULL;
    if (ref != NULL) {
        float got[WM * XN];
        bool right = ggml_nelements(t) == WM * XN;
        if (right) {
            ggml_backend_tensor_get(t, got, 0, sizeof got);
            for (int i = 0; i < WM * XN; i++)
                right = right && fabs(got[i] - ref[i]) <= 1e-6 * (1.0 + fabs(ref[i]));
        }
        if (right)
            ob->data_right++;
        else
            ob->data_wrong++;
    }
    return !(ob->abort_at && strcmp(t->name, ob->abort_at) == 0);
}

static void test_eval_callback(void)
{
    /* h = w xw (TESTDEV), s = h^2 (CPU), o1 = s/2, o2 = o1 + o1 (TESTDEV);
     * weights only, so the only TESTDEV input copy is s's, made at the
     * start of the last split; every node is an output (no memory reuse) */
    struct ggml_context *ctx = ctx_new(8, 16);
    struct ggml_tensor *h = named(ggml_mul_mat(ctx, dw.w, dw.xw), "h");
    struct ggml_tensor *s = named(ggml_sqr(ctx, h), "s");
    struct ggml_tensor *o1 = named(ggml_scale(ctx, s, 0.5f), "o1");
    struct ggml_tensor *o2 = named(ggml_add(ctx, o1, o1), "o2");
    ggml_set_output(h);
    ggml_set_output(s);
    ggml_set_output(o1);
    ggml_set_output(o2);
    struct ggml_cgraph *g = graph_of(ctx, 16, o2);

    double ref_s[WM * XN], ref_o1[WM * XN], ref_o2[WM * XN];
    ref_mul_mat(ref_s, dw.wv, dw.xwv, WK, WM, XN);
    for (int i = 0; i < WM * XN; i++) {
        ref_s[i] *= ref_s[i];
        ref_o1[i] = 0.5 * ref_s[i];
        ref_o2[i] = 2.0 * ref_o1[i];
    }

    ggml_backend_sched_t sched = sched_new2(false, true);
    tap_log_errors();

    struct observer ob = { .want = { "s", "o1" }, .ref_s = ref_s, .ref_o1 = ref_o1 };
    ggml_backend_sched_set_eval_callback(sched, observe, &ob);
    ok(ggml_backend_sched_alloc_graph(sched, g), "alloc_graph");
    is_int(ggml_backend_sched_get_n_splits(sched), 3, "three splits: [h] [s] [o1 o2]");
    counters_reset();
    is_int(ggml_backend_sched_graph_compute(sched, g), GGML_STATUS_SUCCESS, "graph_compute with a callback");
    is_int(ob.asks, 4, "the callback is asked about each of the four nodes once");
    is_int(ob.observed, 2, "and sees the two nodes it wanted");
    is_int(ob.observed_unwanted, 0, "and no other");
    is_int(ob.data_right, 2, "their data are ready and right in the callback");
    is_uint(count(td.nodes_computed), 3, "TESTDEV computed h, o1 and o2");
    check_values(o2, ref_o2, WM * XN, 1e-6, "the result is right");

    float sentinel[WM * XN];
    double sentinel_d[WM * XN];
    for (int i = 0; i < WM * XN; i++) {
        sentinel[i] = -12345.0f;
        sentinel_d[i] = -12345.0;
    }

    /* cancel at s: the last split never runs */
    ggml_backend_sched_reset(sched);
    ob = (struct observer) { .want = { "s", "o1" }, .abort_at = "s", .ref_s = ref_s, .ref_o1 = ref_o1 };
    ok(ggml_backend_sched_alloc_graph(sched, g), "alloc_graph again");
    ggml_backend_tensor_set(o1, sentinel, 0, sizeof sentinel);
    ggml_backend_tensor_set(o2, sentinel, 0, sizeof sentinel);
    counters_reset();
    is_int(ggml_backend_sched_graph_compute(sched, g), GGML_STATUS_ABORTED,
           "returning false for s aborts: GGML_STATUS_ABORTED");
    is_int(ob.observed, 1, "s was the last node observed");
    is_int(ob.data_right, 1, "with its data right");
    is_uint(count(td.nodes_computed), 1, "TESTDEV computed h only");
    check_values(o1, sentinel_d, WM * XN, 0.0, "o1 was not computed (still the sentinel)");
    check_values(o2, sentinel_d, WM * XN, 0.0, "o2 was not computed (still the sentinel)");
    tap_diag("cancelled at s after %d asks", ob.asks);

    /* cancel at o1: o2, in the same split, is not computed */
    ggml_backend_sched_reset(sched);
    ob = (struct observer) { .want = { "o1", NULL }, .abort_at = "o1", .ref_s = ref_s, .ref_o1 = ref_o1 };
    ok(ggml_backend_sched_alloc_graph(sched, g), "alloc_graph again");
    counters_reset();
    is_int(ggml_backend_sched_graph_compute(sched, g), GGML_STATUS_ABORTED,
           "returning false for o1 aborts: GGML_STATUS_ABORTED");
    is_int(ob.observed, 1, "o1 was observed");
    is_int(ob.data_right, 1, "with its data right");
    is_uint(count(td.nodes_computed), 2, "TESTDEV computed h and o1 but not o2");
    is_int(tap_log_errors(), 0, "cancelling is not an error");

    /* NULL removes the callback */
    ggml_backend_sched_set_eval_callback(sched, NULL, NULL);
    ggml_backend_sched_reset(sched);
    ob = (struct observer) { 0 };
    ok(ggml_backend_sched_alloc_graph(sched, g), "alloc_graph again");
    is_int(ggml_backend_sched_graph_compute(sched, g), GGML_STATUS_SUCCESS, "graph_compute without a callback");
    is_int(ob.asks + ob.observed, 0, "the removed callback is not called");
    check_values(o2, ref_o2, WM * XN, 1e-6, "the result is right");
    is_int(tap_log_errors(), 0, "no message");
    ggml_backend_sched_free(sched);
    ggml_free(ctx);
}

/* ---------------------------------------- 11. allocation failure */

static void test_alloc_failure(void)
{
    if (td.set_alloc_limit == NULL) {
        tap_skip(12, "the plugin has no testdev_set_alloc_limit");
        return;
    }
    struct chain c;
    chain_build(&c, 6);
    ggml_backend_sched_t sched = sched_new2(false, true);
    size_t live = count(td.live_buffers);

    tap_log_errors();
    td.set_alloc_limit(16);
    ok(!ggml_backend_sched_alloc_graph(sched, c.g), "alloc_graph fails when TESTDEV cannot allocate");
    logged_one_error("with one error");
    is_int(ggml_backend_sched_graph_compute(sched, c.g), GGML_STATUS_ALLOC_FAILED,
           "graph_compute returns GGML_STATUS_ALLOC_FAILED");
    logged_one_error("with one error");
    ggml_backend_sched_reset(sched);
    ok(!ggml_backend_sched_reserve(sched, c.g), "reserve fails too");
    logged_one_error("with one error");
    is_uint(count(td.live_buffers), live, "no TESTDEV buffer is left behind");

    td.set_alloc_limit(0);
    ggml_backend_sched_reset(sched);
    ok(ggml_backend_sched_alloc_graph(sched, c.g), "without the limit, after reset, alloc_graph succeeds");
    is_int(tap_log_errors(), 0, "without a message");
    ok(chain_run(sched, &c, 6, 400), "and the same graph computes right");
    ok(ggml_backend_sched_get_buffer_size(sched, be_dev) > 0, "TESTDEV has a compute buffer");
    is_int(tap_log_errors(), 0, "no message");
    ggml_backend_sched_free(sched);
    is_uint(count(td.live_buffers), live, "sched_free frees the compute buffers");
    ggml_free(c.ctx);
}

/* A host buffer type with no memory to give: alloc_buffer returns NULL. */
static const char *no_memory_name(ggml_backend_buffer_type_t buft)
{
    (void) buft;
    return "NoMemory";
}

static ggml_backend_buffer_t no_memory_alloc(ggml_backend_buffer_type_t buft, size_t size)
{
    (void) buft;
    (void) size;
    return NULL;
}

static bool no_memory_is_host(ggml_backend_buffer_type_t buft)
{
    (void) buft;
    return true;
}

/* A scheduler of one backend: its allocator plans by itself, and a failure
 * to allocate is still one message. */
static void test_alloc_failure_one_backend(void)
{
    struct ggml_backend_buffer_type no_memory = {
        .iface = { .get_name = no_memory_name, .alloc_buffer = no_memory_alloc, .is_host = no_memory_is_host },
        .device = ggml_backend_get_device(be_cpu),
    };
    ggml_backend_buffer_type_t bufts[1] = { &no_memory };
    ggml_backend_sched_t sched = ggml_backend_sched_new(&be_cpu, bufts, 1, 0, false, false);
    struct ggml_init_params params = { 8 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 64);
    ggml_set_input(a);
    struct ggml_cgraph *g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, ggml_scale(ctx, ggml_add(ctx, a, a), 0.5f));
    tap_log_errors();
    ok(sched != NULL && !ggml_backend_sched_alloc_graph(sched, g),
       "one backend, its buffer type out of memory: alloc_graph fails");
    logged_one_error("with one error");
    ggml_backend_sched_free(sched);
    ggml_free(ctx);
}

/* A graph no CPU buffer can hold, on a scheduler with the CPU backend only:
 * the allocation is refused once, with one message. */
static void test_alloc_too_large(void)
{
    ggml_backend_sched_t sched = ggml_backend_sched_new(&be_cpu, NULL, 1, 64, false, true);
    struct ggml_init_params params = { 8 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, INT64_C(1) << 61);
    ggml_set_input(x);
    struct ggml_cgraph *g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, ggml_scale(ctx, x, 2.0f));
    tap_log_errors();
    ok(!ggml_backend_sched_alloc_graph(sched, g), "alloc_graph of 2^63 bytes on the CPU alone fails");
    logged_one_error("with one error");
    ggml_backend_sched_free(sched);
    ggml_free(ctx);
}

/* ------------------------------------------------ 12. unsupported op */

static void test_unsupported(void)
{
    struct ggml_context *ctx = ctx_new(4, 16);
    struct ggml_tensor *ai = named(ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 4, 3), "ai");
    ggml_set_input(ai);
    struct ggml_tensor *b = input_2d(ctx, 4, 2, "b");
    struct ggml_tensor *bad = named(ggml_mul_mat(ctx, ai, b), "bad_mm");
    ggml_set_output(bad);
    struct ggml_cgraph *g = graph_of(ctx, 16, bad);

    if (bad == NULL || ggml_backend_supports_op(be_cpu, bad) || ggml_backend_supports_op(be_dev, bad)) {
        tap_skip(9, "MUL_MAT of an I32 matrix is supported somewhere");
        ggml_free(ctx);
        return;
    }
    ok(true, "precondition: neither backend supports MUL_MAT with an I32 src0");
    ggml_backend_sched_t sched = sched_new2(false, true);
    tap_log_errors();
    ok(!ggml_backend_sched_alloc_graph(sched, g), "alloc_graph of a graph no backend can run fails");
    logged_one_error("with one error");
    ok(strstr(tap_last_log(), "MUL_MAT") != NULL && strstr(tap_last_log(), "bad_mm") != NULL,
       "naming the op and the node");
    is_int(ggml_backend_sched_get_n_splits(sched), 0, "get_n_splits is 0 after a failed split");
    is_int(ggml_backend_sched_graph_compute(sched, g), GGML_STATUS_FAILED, "graph_compute returns GGML_STATUS_FAILED");
    logged_one_error("with one error");

    ggml_backend_sched_reset(sched);
    struct chain c;
    chain_build(&c, 2);
    ok(ggml_backend_sched_alloc_graph(sched, c.g), "after reset a good graph allocates");
    ok(chain_run(sched, &c, 2, 500), "and computes right");
    is_int(tap_log_errors(), 0, "no message");
    ggml_backend_sched_free(sched);
    ggml_free(c.ctx);
    ggml_free(ctx);
}

/* --------------------------------------- 13. graph from a NULL tensor */

static void test_null_graph(void)
{
    struct ggml_context *ctx = ctx_new(6, 16);
    struct ggml_tensor *a = input_2d(ctx, 4, 3, "a");
    struct ggml_tensor *b = input_2d(ctx, 5, 2, "b");
    tap_log_errors();
    struct ggml_tensor *bad = ggml_mul_mat(ctx, a, b); /* dim 0 differs */
    is_ptr(bad, NULL, "a constructor given bad shapes returns NULL");
    logged_one_error("with one error");
    struct ggml_cgraph *g = ggml_new_graph_custom(ctx, 16, false);
    ggml_build_forward_expand(g, ggml_scale(ctx, a, 2.0f));
    ggml_build_forward_expand(g, bad);
    is_int(tap_log_errors(), 0, "building a graph from it adds no message");

    ggml_backend_sched_t sched = sched_new2(false, true);
    ok(!ggml_backend_sched_alloc_graph(sched, g), "alloc_graph of the graph fails");
    is_int(tap_log_errors(), 0, "without another message");
    is_int(ggml_backend_sched_graph_compute(sched, g), GGML_STATUS_FAILED, "graph_compute returns GGML_STATUS_FAILED");
    is_int(tap_log_errors(), 0, "without another message");
    ggml_backend_sched_free(sched);
    ggml_free(ctx);
}

/*
 * Graphs with no nodes, or with nodes but no leaves (an ARANGE has no
 * source): the scheduler, the graph allocator and a backend compute them
 * as graphs with nothing, or nothing outside, to do.  The sanitizer build
 * checks that no empty array is passed to memcpy as a NULL pointer.
 */
static void test_empty_graphs(void)
{
    struct ggml_context *ctx = ctx_new(4, 2 * 16);
    struct ggml_cgraph *empty = ggml_new_graph_custom(ctx, 16, false);
    struct ggml_cgraph *no_leafs = ggml_new_graph_custom(ctx, 16, false);
    struct ggml_tensor *r = ggml_arange(ctx, 0.0f, 4.0f, 1.0f);
    ggml_set_output(r);
    ggml_build_forward_expand(no_leafs, r);
    if (!ok(ggml_graph_n_nodes(no_leafs) == 1, "a graph of one node (an ARANGE: no leafs)")) {
        ggml_free(ctx);
        return;
    }
    tap_log_errors();
    struct {
        const char *what;
        struct ggml_cgraph *g;
    } cases[] = { { "empty graph", empty }, { "graph without leafs", no_leafs } };
    for (int c = 0; c < 2; c++) {
        ggml_backend_sched_t sched = sched_new2(false, true);
        ok(ggml_backend_sched_reserve(sched, cases[c].g), "%s: sched_reserve", cases[c].what);
        ok(ggml_backend_sched_alloc_graph(sched, cases[c].g), "%s: sched_alloc_graph", cases[c].what);
        is_int(ggml_backend_sched_graph_compute(sched, cases[c].g), GGML_STATUS_SUCCESS, "%s: sched_graph_compute",
               cases[c].what);
        is_int(ggml_backend_sched_graph_compute(sched, cases[c].g), GGML_STATUS_SUCCESS, "%s: computed again",
               cases[c].what);
        if (cases[c].g == no_leafs) {
            float got[4] = { 0 };
            ggml_backend_tensor_get(r, got, 0, sizeof got);
            ok(got[0] == 0.0f && got[1] == 1.0f && got[2] == 2.0f && got[3] == 3.0f,
               "the leafless graph computed 0 1 2 3");
        }
        ggml_backend_sched_free(sched);
        is_int(tap_log_errors(), 0, "%s: the scheduler logs nothing", cases[c].what);
    }

    struct ggml_context *ctx2 = ctx_new(4, 2 * 16 + 16);
    struct ggml_cgraph *g2 = ggml_new_graph_custom(ctx2, 16, false);
    struct ggml_tensor *r2 = ggml_arange(ctx2, 0.0f, 4.0f, 1.0f);
    ggml_build_forward_expand(g2, r2);
    ggml_gallocr_t galloc = ggml_gallocr_new(buft_cpu);
    ok(ggml_gallocr_alloc_graph(galloc, empty), "gallocr: empty graph");
    ok(ggml_gallocr_alloc_graph(galloc, g2), "gallocr: graph without leafs");
    is_int(ggml_backend_graph_compute(be_cpu, empty), GGML_STATUS_SUCCESS, "CPU backend: empty graph");
    is_int(ggml_backend_graph_compute(be_cpu, g2), GGML_STATUS_SUCCESS, "CPU backend: graph without leafs");
    struct ggml_cgraph *copy = ggml_new_graph_custom(ctx2, 16, false);
    ggml_graph_cpy(empty, copy);
    ok(ggml_graph_n_nodes(copy) == 0, "graph_cpy of an empty graph");
    is_int(tap_log_errors(), 0, "gallocr, compute and graph_cpy log nothing");
    ggml_gallocr_free(galloc);
    ggml_free(ctx2);
    ggml_free(ctx);
}

/* ---------------------------------------------- 14. stale handles */

static void test_freed_handle(void)
{
    struct chain c;
    chain_build(&c, 2);
    ggml_backend_sched_t sched = sched_new2(false, true);
    ggml_backend_sched_free(sched);

    tap_log_errors();
    is_int(ggml_backend_sched_get_n_backends(sched), 0, "get_n_backends of a freed scheduler is 0");
    logged_one_error("with one error");
    is_ptr(ggml_backend_sched_get_backend(sched, 0), NULL, "get_backend of a freed scheduler is NULL");
    logged_one_error("with one error");
    ok(!ggml_backend_sched_alloc_graph(sched, c.g), "alloc_graph with a freed scheduler fails");
    logged_one_error("with one error");
    is_int(ggml_backend_sched_graph_compute(sched, c.g), GGML_STATUS_FAILED,
           "graph_compute with a freed scheduler returns GGML_STATUS_FAILED");
    logged_one_error("with one error");
    ggml_backend_sched_reset(sched);
    logged_one_error("reset of a freed scheduler logs one error");
    ggml_backend_sched_set_tensor_backend(sched, c.h, be_dev);
    logged_one_error("set_tensor_backend on a freed scheduler logs one error");
    ggml_backend_sched_free(sched);
    logged_one_error("freeing it again logs one error");

    ggml_backend_sched_t foreign = (ggml_backend_sched_t) (void *) be_cpu;
    is_int(ggml_backend_sched_get_n_splits(foreign), 0, "a foreign pointer as a scheduler: get_n_splits is 0");
    logged_one_error("with one error");
    ggml_free(c.ctx);
}

/* --------------------------------------------------------- 15. scale */

#define CHAIN_NODES 10000

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static void test_scale(void)
{
    /* period 4: t + b (weights: TESTDEV), t/2 (TESTDEV), t^2 (CPU),
     * 3t/4 (TESTDEV): splits [add scale] then, per SQR, [sqr] CPU and
     * [scale add scale] TESTDEV: 1 + 2 * 2500 */
    const int expected_splits = 1 + 2 * (CHAIN_NODES / 4);
    struct ggml_context *ctx = ctx_new(CHAIN_NODES + 8, CHAIN_NODES + 16);
    struct ggml_tensor *x = input_2d(ctx, WM, 1, "x");
    struct ggml_tensor *t = x;
    for (int i = 0; i < CHAIN_NODES && t != NULL; i++) {
        switch (i % 4) {
        case 0: t = ggml_add(ctx, t, dw.b); break;
        case 1: t = ggml_scale(ctx, t, 0.5f); break;
        case 2: t = ggml_sqr(ctx, t); break;
        default: t = ggml_scale(ctx, t, 0.75f); break;
        }
        if (t != NULL)
            ggml_format_name(t, "t%d", i);
    }
    if (t == NULL) {
        ok(false, "building the %d-node chain", CHAIN_NODES);
        ggml_free(ctx);
        return;
    }
    ggml_set_output(t);
    struct ggml_cgraph *g = graph_of(ctx, CHAIN_NODES + 16, t);
    is_int(ggml_graph_n_nodes(g), CHAIN_NODES, "the chain has %d nodes", CHAIN_NODES);

    /* graph_size 64: only a hint */
    ggml_backend_t both[2] = { be_dev, be_cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(both, NULL, 2, 64, false, true);
    tap_log_errors();
    double t0 = now_us();
    bool allocated = ggml_backend_sched_alloc_graph(sched, g);
    double t1 = now_us();
    ok(allocated, "alloc_graph of %d nodes with graph_size 64", CHAIN_NODES);
    is_int(ggml_backend_sched_get_n_splits(sched), expected_splits, "%d splits", expected_splits);
    is_backend(sched, ggml_graph_node(g, 2), be_cpu, "SQR nodes on the CPU");
    is_backend(sched, ggml_graph_node(g, CHAIN_NODES - 1), be_dev, "the last SCALE on TESTDEV");
    tap_diag("split+alloc: %.0f us for %d nodes, %.3f us per node", t1 - t0, CHAIN_NODES,
             (t1 - t0) / CHAIN_NODES);

    if (allocated) {
        float xv[WM];
        set_filled(x, xv, 600);
        double want[WM];
        for (int m = 0; m < WM; m++) {
            double v = xv[m];
            for (int i = 0; i < CHAIN_NODES; i++) {
                switch (i % 4) {
                case 0: v += dw.bv[m]; break;
                case 1: v *= 0.5; break;
                case 2: v *= v; break;
                default: v *= 0.75; break;
                }
            }
            want[m] = v;
        }
        double c0 = now_us();
        is_int(ggml_backend_sched_graph_compute(sched, g), GGML_STATUS_SUCCESS, "graph_compute of the chain");
        double c1 = now_us();
        tap_diag("compute: %.0f us for %d splits", c1 - c0, expected_splits);
        check_values(t, want, WM, 1e-5, "the chain's result is right");
    } else {
        tap_skip(2, "the chain was not allocated");
    }
    is_int(tap_log_errors(), 0, "no message");
    ggml_backend_sched_free(sched);
    ggml_free(ctx);
}

/* ---------------------------------------------------------------- main */

int main(void)
{
    tap_capture_log();

    const char *env = getenv("TEST_PLUGIN_DIR");
    char dir[PATH_MAX], path[PATH_MAX + 32];
    if (env == NULL || env[0] == '\0' || realpath(env, dir) == NULL) {
        tap_skip(1, "TEST_PLUGIN_DIR does not name a directory (make check sets it to tests/plugins/.libs)");
        return tap_done();
    }
    snprintf(path, sizeof path, "%s/libggml-testdev.so", dir);
    td_reg = ggml_backend_load(path);
    ok(td_reg != NULL, "the test plugin loads");
    if (td_reg == NULL)
        return tap_done();

#define HOOK(field, name) td.field = (size_t (*)(void)) ggml_backend_reg_get_proc_address(td_reg, name)
    HOOK(live_buffers, "testdev_live_buffers");
    HOOK(uploads, "testdev_uploads");
    HOOK(downloads, "testdev_downloads");
    HOOK(device_copies, "testdev_device_copies");
    HOOK(graph_computes, "testdev_graph_computes");
    HOOK(nodes_computed, "testdev_nodes_computed");
    HOOK(events_recorded, "testdev_events_recorded");
    HOOK(events_waited, "testdev_events_waited");
    td.reset_counters = (void (*)(void)) ggml_backend_reg_get_proc_address(td_reg, "testdev_reset_counters");
    td.set_alloc_limit = (void (*)(size_t)) ggml_backend_reg_get_proc_address(td_reg, "testdev_set_alloc_limit");
#undef HOOK
    ok(td.uploads && td.downloads && td.device_copies && td.graph_computes && td.nodes_computed &&
           td.events_recorded && td.events_waited && td.reset_counters && td.set_alloc_limit && td.live_buffers,
       "the plugin has the scheduler test hooks");

    be_dev = ggml_backend_dev_init(ggml_backend_reg_dev_get(td_reg, 0), NULL);
    be_cpu = ggml_backend_cpu_init();
    ok(be_dev != NULL && be_cpu != NULL, "TESTDEV and CPU backends");
    if (be_dev == NULL || be_cpu == NULL)
        return tap_done();
    buft_dev = ggml_backend_get_default_buffer_type(be_dev);
    buft_cpu = ggml_backend_cpu_buffer_type();
    ok(weights_init(), "weights in a TESTDEV buffer");
    tap_log_errors();

    test_create();
    test_weights_assignment();
    test_op_offload();
    test_pins();
    test_support_expansion();
    test_exact_splits();
    test_multi_split();
    test_parallel();
    test_reserve();
    test_eval_callback();
    test_alloc_failure();
    test_alloc_failure_one_backend();
    test_alloc_too_large();
    test_unsupported();
    test_null_graph();
    test_empty_graphs();
    test_freed_handle();
    test_scale();

    weights_free();
    is_uint(count(td.live_buffers), 0, "every TESTDEV buffer is freed at the end");
    ggml_backend_free(be_dev);
    ggml_backend_free(be_cpu);
    ggml_backend_unload(td_reg);
    is_int(tap_log_errors(), 0, "cleaning up logs no error");
    return tap_done();
}
