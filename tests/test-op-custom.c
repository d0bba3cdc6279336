/*
 * test-op-custom.c - MAP_CUSTOM1/2/3 (and in-place forms) and CUSTOM
 * (ggml_custom_4d, ggml_custom_inplace): the n_tasks contract, the
 * results the callbacks compute, op_params and sources, and the
 * constructors' error paths.
 *
 * Every callback records each call (ith, nth) in a per-run record and
 * computes its share of rows of a checkable formula.  The contract: the
 * callback runs on min(n_tasks, n_threads) threads (all threads for
 * GGML_N_TASKS_MAX), each exactly once, with nth equal to that count; this
 * holds for the default pool (1..4 threads) and for a user pool of 6
 * threads, more than the machine's cores on a small builder.
 *
 * The reference is computed here in double precision from the inputs as
 * stored.  The callbacks also compute in double and round once when
 * storing, so an F32 result is within half an ulp (NMSE below 1e-13;
 * threshold 1e-12) and an F16 result within 2^-11 relative (NMSE below
 * ~1e-7; threshold 1e-6).
 */
#include <stdatomic.h>
#include <stdio.h>

#include "tap.h"
#include "op-test.h"
#include "ggml-cpu.h"
#include "ggml-backend.h"

#define MAX_RECORDED 16

/* Calls seen by a callback during one computation. */
struct record {
    atomic_int calls[MAX_RECORDED]; /* calls made with each ith */
    atomic_int nth[MAX_RECORDED];   /* nth of the last call with each ith */
    atomic_int out_of_range;        /* calls with ith outside [0, nth) or the table */
};

static void record_call(struct record *rec, int ith, int nth)
{
    if (ith < 0 || ith >= nth || ith >= MAX_RECORDED) {
        atomic_fetch_add(&rec->out_of_range, 1);
        return;
    }
    atomic_fetch_add(&rec->calls[ith], 1);
    atomic_store(&rec->nth[ith], nth);
}

static void record_reset(struct record *rec)
{
    for (int i = 0; i < MAX_RECORDED; i++) {
        atomic_store(&rec->calls[i], 0);
        atomic_store(&rec->nth[i], 0);
    }
    atomic_store(&rec->out_of_range, 0);
}

/* True when exactly threads 0..expected-1 ran once each with nth = expected. */
static bool record_matches(struct record *rec, int expected)
{
    if (atomic_load(&rec->out_of_range) != 0)
        return false;
    for (int i = 0; i < MAX_RECORDED; i++) {
        const int want = i < expected ? 1 : 0;
        if (atomic_load(&rec->calls[i]) != want)
            return false;
        if (want && atomic_load(&rec->nth[i]) != expected)
            return false;
    }
    return true;
}

/* --------------------------------------------------------- the callbacks */

/* Calls fn(i0, i1, i2, i3) over this thread's share of dst's rows. */
#define FOR_MY_ROWS(dst, ith, nth, body)                                         \
    do {                                                                         \
        const int64_t n_rows_ = (dst)->ne[1] * (dst)->ne[2] * (dst)->ne[3];      \
        const int64_t per_ = (n_rows_ + (nth) - 1) / (nth);                      \
        const int64_t first_ = per_ * (ith);                                     \
        const int64_t last_ = first_ + per_ < n_rows_ ? first_ + per_ : n_rows_; \
        for (int64_t r_ = first_; r_ < last_; r_++) {                            \
            const int64_t i1 = r_ % (dst)->ne[1];                                \
            const int64_t i2 = r_ / (dst)->ne[1] % (dst)->ne[2];                 \
            const int64_t i3 = r_ / ((dst)->ne[1] * (dst)->ne[2]);               \
            for (int64_t i0 = 0; i0 < (dst)->ne[0]; i0++) {                      \
                body;                                                            \
            }                                                                    \
        }                                                                        \
    } while (0)

static double formula1(double a) { return 2.0 * a + 1.0; }
static double formula2(double a, double b) { return a * b - 0.5; }
static double formula3(double a, double b, double c) { return a * b + c; }
/* CUSTOM: a position term plus sum over operands k of (k + 1) * src[k] */
static double position_term(int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    return 0.01 * (double) i0 - 0.02 * (double) i1 + 0.5 * (double) i2 - (double) i3;
}

static void custom1_cb(struct ggml_tensor *dst, const struct ggml_tensor *a, int ith, int nth, void *userdata)
{
    record_call(userdata, ith, nth);
    FOR_MY_ROWS(dst, ith, nth, optest_set(dst, i0, i1, i2, i3, formula1(optest_get(a, i0, i1, i2, i3))));
}

static void custom2_cb(struct ggml_tensor *dst, const struct ggml_tensor *a, const struct ggml_tensor *b,
                       int ith, int nth, void *userdata)
{
    record_call(userdata, ith, nth);
    FOR_MY_ROWS(dst, ith, nth,
                optest_set(dst, i0, i1, i2, i3,
                           formula2(optest_get(a, i0, i1, i2, i3), optest_get(b, i0, i1, i2, i3))));
}

static void custom3_cb(struct ggml_tensor *dst, const struct ggml_tensor *a, const struct ggml_tensor *b,
                       const struct ggml_tensor *c, int ith, int nth, void *userdata)
{
    record_call(userdata, ith, nth);
    FOR_MY_ROWS(dst, ith, nth,
                optest_set(dst, i0, i1, i2, i3,
                           formula3(optest_get(a, i0, i1, i2, i3), optest_get(b, i0, i1, i2, i3),
                                    optest_get(c, i0, i1, i2, i3))));
}

/* dst = position term + sum_k (k + 1) * src[k] over the non-NULL sources;
 * for ggml_custom_inplace src[0] is dst itself (read before written). */
static void custom_cb(struct ggml_tensor *dst, int ith, int nth, void *userdata)
{
    record_call(userdata, ith, nth);
    FOR_MY_ROWS(dst, ith, nth, {
        double v = position_term(i0, i1, i2, i3);
        for (int k = 0; k < GGML_MAX_SRC && dst->src[k] != NULL; k++)
            v += (double) (k + 1) * optest_get(dst->src[k], i0, i1, i2, i3);
        optest_set(dst, i0, i1, i2, i3, v);
    });
}

/* ---------------------------------------------------------------- runs */

enum form { MAP1, MAP1_INPLACE, MAP2, MAP2_INPLACE, MAP3, MAP3_INPLACE, CUSTOM_4D, CUSTOM_INPLACE, N_FORMS };

static const char *form_name[N_FORMS] = {
    "map_custom1", "map_custom1_inplace", "map_custom2", "map_custom2_inplace",
    "map_custom3", "map_custom3_inplace", "custom_4d", "custom_inplace",
};

static const int64_t sizes[] = { 1, 3, 31, 33, 257 };

static struct ggml_context *new_ctx(size_t mem)
{
    struct ggml_init_params ip = { .mem_size = mem, .mem_buffer = NULL, .no_alloc = false };
    return ggml_init(ip);
}

/* An F32 tensor of shape ne, a transposed (non-contiguous) view if asked. */
static struct ggml_tensor *new_input(struct ggml_context *ctx, const int64_t *ne, bool transposed,
                                     uint64_t *seed)
{
    struct ggml_tensor *t;
    if (transposed) {
        struct ggml_tensor *base = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne[1], ne[0], ne[2], ne[3]);
        optest_fill(base, seed, -2.0, 2.0);
        t = ggml_transpose(ctx, base);
    } else {
        t = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne[0], ne[1], ne[2], ne[3]);
        optest_fill(t, seed, -2.0, 2.0);
    }
    return t;
}

/* Computes out with n_threads, on a user pool when pool is not NULL. */
static enum ggml_status compute(struct ggml_context *ctx, struct ggml_tensor *out, int n_threads,
                                struct ggml_threadpool *pool, bool use_ref)
{
    if (pool == NULL)
        return optest_compute(ctx, out, n_threads, use_ref);
    struct ggml_cgraph *graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, out);
    struct ggml_cplan plan = ggml_graph_plan(graph, n_threads, pool);
    plan.use_ref = use_ref;
    void *work = plan.work_size ? malloc(plan.work_size) : NULL;
    plan.work_data = work;
    enum ggml_status status = ggml_graph_compute(graph, &plan);
    free(work);
    return status;
}

/* The stored op_params as upstream's { fun, n_tasks, userdata }. */
struct stored_params { void (*fun)(void); int n_tasks; void *userdata; };

/* One form, one n_tasks, one thread count: builds, computes, checks. */
static void run(enum form form, int n_tasks, int n_threads, struct ggml_threadpool *pool, bool use_ref,
                uint64_t *seed, int variant)
{
    struct ggml_context *ctx = new_ctx(16 * 1024 * 1024);
    const int64_t ne[4] = {
        sizes[variant % 5], sizes[(variant / 5 + 1) % 5] % 40, 1 + variant % 3, 1 + variant % 2,
    };
    const bool transposed = variant % 2 == 1;
    const enum ggml_type out_type = form == CUSTOM_4D && variant % 3 == 0 ? GGML_TYPE_F16 : GGML_TYPE_F32;
    struct record *rec = calloc(1, sizeof *rec);
    record_reset(rec);

    struct ggml_tensor *a = NULL, *b = NULL, *c = NULL;
    struct ggml_tensor *args[GGML_MAX_SRC];
    int n_args = 0;
    const bool inplace = form == MAP1_INPLACE || form == MAP2_INPLACE || form == MAP3_INPLACE ||
                         form == CUSTOM_INPLACE;
    if (form != CUSTOM_4D)
        a = new_input(ctx, ne, transposed, seed);
    if (form >= MAP2 && form <= MAP3_INPLACE)
        b = new_input(ctx, ne, !transposed, seed);
    if (form == MAP3 || form == MAP3_INPLACE)
        c = new_input(ctx, ne, false, seed);
    if (form == CUSTOM_4D || form == CUSTOM_INPLACE) {
        static const int counts[] = { 0, 1, 3, GGML_MAX_SRC - 2, GGML_MAX_SRC - 1 };
        n_args = counts[variant % 5];
        if (form == CUSTOM_INPLACE && n_args > GGML_MAX_SRC - 2)
            n_args = GGML_MAX_SRC - 2;
        for (int k = 0; k < n_args; k++)
            args[k] = new_input(ctx, ne, k % 2 == 1, seed);
    }

    /* reference from the inputs as stored, before an in-place form overwrites a */
    const int64_t n = ne[0] * ne[1] * ne[2] * ne[3];
    double *ref = malloc((size_t) n * sizeof *ref);
    int64_t idx = 0;
    for (int64_t i3 = 0; i3 < ne[3]; i3++)
        for (int64_t i2 = 0; i2 < ne[2]; i2++)
            for (int64_t i1 = 0; i1 < ne[1]; i1++)
                for (int64_t i0 = 0; i0 < ne[0]; i0++, idx++) {
                    double v;
                    switch (form) {
                    case MAP1: case MAP1_INPLACE:
                        v = formula1(optest_get(a, i0, i1, i2, i3));
                        break;
                    case MAP2: case MAP2_INPLACE:
                        v = formula2(optest_get(a, i0, i1, i2, i3), optest_get(b, i0, i1, i2, i3));
                        break;
                    case MAP3: case MAP3_INPLACE:
                        v = formula3(optest_get(a, i0, i1, i2, i3), optest_get(b, i0, i1, i2, i3),
                                     optest_get(c, i0, i1, i2, i3));
                        break;
                    default: {
                        /* CUSTOM_INPLACE: src[0] = a, src[k + 1] = args[k] */
                        const int first = form == CUSTOM_INPLACE ? 1 : 0;
                        v = position_term(i0, i1, i2, i3);
                        if (form == CUSTOM_INPLACE)
                            v += optest_get(a, i0, i1, i2, i3);
                        for (int k = 0; k < n_args; k++)
                            v += (double) (k + 1 + first) * optest_get(args[k], i0, i1, i2, i3);
                        break;
                    }
                    }
                    ref[idx] = v;
                }

    struct ggml_tensor *out = NULL;
    switch (form) {
    case MAP1:           out = ggml_map_custom1(ctx, a, custom1_cb, n_tasks, rec); break;
    case MAP1_INPLACE:   out = ggml_map_custom1_inplace(ctx, a, custom1_cb, n_tasks, rec); break;
    case MAP2:           out = ggml_map_custom2(ctx, a, b, custom2_cb, n_tasks, rec); break;
    case MAP2_INPLACE:   out = ggml_map_custom2_inplace(ctx, a, b, custom2_cb, n_tasks, rec); break;
    case MAP3:           out = ggml_map_custom3(ctx, a, b, c, custom3_cb, n_tasks, rec); break;
    case MAP3_INPLACE:   out = ggml_map_custom3_inplace(ctx, a, b, c, custom3_cb, n_tasks, rec); break;
    case CUSTOM_4D:
        out = ggml_custom_4d(ctx, out_type, ne[0], ne[1], ne[2], ne[3], args, n_args, custom_cb, n_tasks, rec);
        break;
    default:
        out = ggml_custom_inplace(ctx, a, args, n_args, custom_cb, n_tasks, rec);
        break;
    }

    const int expected = n_tasks == GGML_N_TASKS_MAX || n_tasks > n_threads ? n_threads : n_tasks;
    char what[160];
    snprintf(what, sizeof what, "%s n_tasks %d, %d threads%s%s, %s, [%lld %lld %lld %lld]%s",
             form_name[form], n_tasks, n_threads, pool ? " (user pool)" : "", use_ref ? " ref" : "",
             ggml_type_name(out_type), (long long) ne[0], (long long) ne[1], (long long) ne[2],
             (long long) ne[3], transposed ? " transposed" : "");

    bool built = out != NULL;
    if (built) {
        struct stored_params sp;
        memcpy(&sp, out->op_params, sizeof sp);
        const enum ggml_op want_op = form <= MAP1_INPLACE ? GGML_OP_MAP_CUSTOM1
                                   : form <= MAP2_INPLACE ? GGML_OP_MAP_CUSTOM2
                                   : form <= MAP3_INPLACE ? GGML_OP_MAP_CUSTOM3 : GGML_OP_CUSTOM;
        built = out->op == want_op && sp.n_tasks == n_tasks && sp.userdata == rec && sp.fun != NULL &&
                (!inplace || out->view_src == a || (a->view_src && out->view_src == a->view_src)) &&
                (inplace || out->view_src == NULL) && out->type == out_type;
        if (form == CUSTOM_4D)
            for (int k = 0; k < GGML_MAX_SRC; k++)
                built = built && out->src[k] == (k < n_args ? args[k] : NULL);
        if (form == CUSTOM_INPLACE)
            for (int k = 0; k < GGML_MAX_SRC; k++)
                built = built && out->src[k] == (k == 0 ? a : k <= n_args ? args[k - 1] : NULL);
        if (form < CUSTOM_4D)
            built = built && out->src[0] == a && out->src[1] == b && out->src[2] == c;
    }
    ok(built, "%s: node, op_params and sources", what);
    if (built) {
        const enum ggml_status status = compute(ctx, out, n_threads, pool, use_ref);
        ok(status == GGML_STATUS_SUCCESS && record_matches(rec, expected),
           "%s: callback ran on %d threads, each once", what, expected);
        if (!record_matches(rec, expected))
            for (int i = 0; i < 8; i++)
                tap_diag("ith %d: %d calls, nth %d", i, atomic_load(&rec->calls[i]), atomic_load(&rec->nth[i]));
        const double nmse = optest_nmse(out, ref);
        const double threshold = out_type == GGML_TYPE_F16 ? 1e-6 : 1e-12;
        ok(nmse <= threshold, "%s: result (NMSE %.3g <= %.0e)", what, nmse, threshold);
    } else {
        tap_skip(2, "node not built");
    }
    free(ref);
    free(rec);
    ggml_free(ctx);
}

static void contract_tests(void)
{
    static const int task_counts[] = { 1, 2, 3, GGML_N_TASKS_MAX };
    uint64_t seed = 42;
    int variant = 0;

    struct ggml_threadpool_params pp = ggml_threadpool_params_default(6);
    struct ggml_threadpool *pool = ggml_threadpool_new(&pp);
    ok(pool != NULL, "user thread pool of 6 threads");

    for (int f = 0; f < N_FORMS; f++)
        for (int t = 0; t < 4; t++)
            for (int n_threads = 1; n_threads <= 4; n_threads++) {
                run((enum form) f, task_counts[t], n_threads, NULL, variant % 2 == 0, &seed, variant);
                variant++;
            }
    if (pool != NULL) {
        for (int f = 0; f < N_FORMS; f++)
            for (int t = 0; t < 4; t++)
                for (int ref = 0; ref < 2; ref++) {
                    run((enum form) f, task_counts[t], 6, pool, ref == 1, &seed, variant);
                    variant++;
                }
        /* a plan asking for fewer threads than the pool holds */
        run(MAP1, GGML_N_TASKS_MAX, 5, pool, false, &seed, 7);
        run(CUSTOM_4D, 4, 5, pool, false, &seed, 8);
        ggml_threadpool_free(pool);
    }
}

/* -------------------------------------------------------------- errors */

static void error_tests(void)
{
    struct ggml_context *ctx = new_ctx(1024 * 1024);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor *c = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor *args[GGML_MAX_SRC + 1];
    for (int k = 0; k <= GGML_MAX_SRC; k++)
        args[k] = a;
    struct record rec;
    record_reset(&rec);

    static const int bad_tasks[] = { 0, -2, -100 };

    /* NULL callbacks */
    tap_log_errors();
    ok(ggml_map_custom1(ctx, a, NULL, 1, &rec) == NULL, "map_custom1: NULL fun gives NULL");
    logged_one_error("map_custom1: NULL fun logs one error");
    ok(ggml_map_custom1_inplace(ctx, a, NULL, 1, &rec) == NULL, "map_custom1_inplace: NULL fun gives NULL");
    logged_one_error("map_custom1_inplace: NULL fun logs one error");
    ok(ggml_map_custom2(ctx, a, b, NULL, 1, &rec) == NULL, "map_custom2: NULL fun gives NULL");
    logged_one_error("map_custom2: NULL fun logs one error");
    ok(ggml_map_custom2_inplace(ctx, a, b, NULL, 1, &rec) == NULL, "map_custom2_inplace: NULL fun gives NULL");
    logged_one_error("map_custom2_inplace: NULL fun logs one error");
    ok(ggml_map_custom3(ctx, a, b, c, NULL, 1, &rec) == NULL, "map_custom3: NULL fun gives NULL");
    logged_one_error("map_custom3: NULL fun logs one error");
    ok(ggml_map_custom3_inplace(ctx, a, b, c, NULL, 1, &rec) == NULL, "map_custom3_inplace: NULL fun gives NULL");
    logged_one_error("map_custom3_inplace: NULL fun logs one error");
    ok(ggml_custom_4d(ctx, GGML_TYPE_F32, 4, 3, 1, 1, args, 1, NULL, 1, &rec) == NULL,
       "custom_4d: NULL fun gives NULL");
    logged_one_error("custom_4d: NULL fun logs one error");
    ok(ggml_custom_inplace(ctx, a, args, 1, NULL, 1, &rec) == NULL, "custom_inplace: NULL fun gives NULL");
    logged_one_error("custom_inplace: NULL fun logs one error");

    /* bad n_tasks */
    for (size_t i = 0; i < sizeof bad_tasks / sizeof bad_tasks[0]; i++) {
        const int nt = bad_tasks[i];
        ok(ggml_map_custom1(ctx, a, custom1_cb, nt, &rec) == NULL, "map_custom1: n_tasks %d gives NULL", nt);
        logged_one_error("map_custom1: n_tasks %d logs one error", nt);
        ok(ggml_map_custom1_inplace(ctx, a, custom1_cb, nt, &rec) == NULL,
           "map_custom1_inplace: n_tasks %d gives NULL", nt);
        logged_one_error("map_custom1_inplace: n_tasks %d logs one error", nt);
        ok(ggml_map_custom2(ctx, a, b, custom2_cb, nt, &rec) == NULL, "map_custom2: n_tasks %d gives NULL", nt);
        logged_one_error("map_custom2: n_tasks %d logs one error", nt);
        ok(ggml_map_custom2_inplace(ctx, a, b, custom2_cb, nt, &rec) == NULL,
           "map_custom2_inplace: n_tasks %d gives NULL", nt);
        logged_one_error("map_custom2_inplace: n_tasks %d logs one error", nt);
        ok(ggml_map_custom3(ctx, a, b, c, custom3_cb, nt, &rec) == NULL, "map_custom3: n_tasks %d gives NULL", nt);
        logged_one_error("map_custom3: n_tasks %d logs one error", nt);
        ok(ggml_map_custom3_inplace(ctx, a, b, c, custom3_cb, nt, &rec) == NULL,
           "map_custom3_inplace: n_tasks %d gives NULL", nt);
        logged_one_error("map_custom3_inplace: n_tasks %d logs one error", nt);
        ok(ggml_custom_4d(ctx, GGML_TYPE_F32, 4, 3, 1, 1, args, 1, custom_cb, nt, &rec) == NULL,
           "custom_4d: n_tasks %d gives NULL", nt);
        logged_one_error("custom_4d: n_tasks %d logs one error", nt);
        ok(ggml_custom_inplace(ctx, a, args, 1, custom_cb, nt, &rec) == NULL,
           "custom_inplace: n_tasks %d gives NULL", nt);
        logged_one_error("custom_inplace: n_tasks %d logs one error", nt);
    }

    /* operand counts: custom_4d takes up to GGML_MAX_SRC - 1, custom_inplace up to GGML_MAX_SRC - 2 */
    ok(ggml_custom_4d(ctx, GGML_TYPE_F32, 4, 3, 1, 1, args, GGML_MAX_SRC, custom_cb, 1, &rec) == NULL,
       "custom_4d: n_args GGML_MAX_SRC gives NULL");
    logged_one_error("custom_4d: n_args GGML_MAX_SRC logs one error");
    ok(ggml_custom_4d(ctx, GGML_TYPE_F32, 4, 3, 1, 1, args, -1, custom_cb, 1, &rec) == NULL,
       "custom_4d: n_args -1 gives NULL");
    logged_one_error("custom_4d: n_args -1 logs one error");
    ok(ggml_custom_4d(ctx, GGML_TYPE_F32, 4, 3, 1, 1, NULL, 2, custom_cb, 1, &rec) == NULL,
       "custom_4d: NULL args with n_args 2 gives NULL");
    logged_one_error("custom_4d: NULL args logs one error");
    ok(ggml_custom_4d(ctx, GGML_TYPE_F32, -1, 3, 1, 1, args, 1, custom_cb, 1, &rec) == NULL,
       "custom_4d: negative extent gives NULL");
    logged_one_error("custom_4d: negative extent logs one error");
    ok(ggml_custom_4d(ctx, GGML_TYPE_COUNT, 4, 3, 1, 1, args, 1, custom_cb, 1, &rec) == NULL,
       "custom_4d: invalid type gives NULL");
    logged_one_error("custom_4d: invalid type logs one error");
    ok(ggml_custom_4d(ctx, GGML_TYPE_F32, 4, 3, 1, 1, NULL, 0, custom_cb, 1, &rec) != NULL,
       "custom_4d: no operands is accepted");
    ok(ggml_custom_4d(ctx, GGML_TYPE_F32, 4, 3, 1, 1, args, GGML_MAX_SRC - 1, custom_cb, 1, &rec) != NULL,
       "custom_4d: GGML_MAX_SRC - 1 operands are accepted");
    ok(ggml_custom_inplace(ctx, a, args, GGML_MAX_SRC - 1, custom_cb, 1, &rec) == NULL,
       "custom_inplace: n_args GGML_MAX_SRC - 1 gives NULL");
    logged_one_error("custom_inplace: n_args GGML_MAX_SRC - 1 logs one error");
    ok(ggml_custom_inplace(ctx, a, args, -1, custom_cb, 1, &rec) == NULL, "custom_inplace: n_args -1 gives NULL");
    logged_one_error("custom_inplace: n_args -1 logs one error");
    ok(ggml_custom_inplace(ctx, a, NULL, 1, custom_cb, 1, &rec) == NULL,
       "custom_inplace: NULL args with n_args 1 gives NULL");
    logged_one_error("custom_inplace: NULL args logs one error");
    ok(ggml_custom_inplace(ctx, a, args, GGML_MAX_SRC - 2, custom_cb, 1, &rec) != NULL,
       "custom_inplace: GGML_MAX_SRC - 2 operands are accepted");
    is_int(tap_log_errors(), 0, "accepted operand counts log nothing");

    /* NULL inputs propagate silently, even with other bad arguments */
    struct ggml_tensor *with_null[3] = { a, NULL, b };
    ok(ggml_map_custom1(ctx, NULL, custom1_cb, 1, &rec) == NULL, "map_custom1: NULL a gives NULL");
    ok(ggml_map_custom1_inplace(ctx, NULL, NULL, 0, &rec) == NULL, "map_custom1_inplace: NULL a gives NULL");
    ok(ggml_map_custom2(ctx, a, NULL, custom2_cb, 1, &rec) == NULL, "map_custom2: NULL b gives NULL");
    ok(ggml_map_custom2_inplace(ctx, NULL, b, custom2_cb, 1, &rec) == NULL,
       "map_custom2_inplace: NULL a gives NULL");
    ok(ggml_map_custom3(ctx, a, b, NULL, custom3_cb, 1, &rec) == NULL, "map_custom3: NULL c gives NULL");
    ok(ggml_map_custom3_inplace(ctx, a, NULL, c, custom3_cb, 1, &rec) == NULL,
       "map_custom3_inplace: NULL b gives NULL");
    ok(ggml_custom_4d(ctx, GGML_TYPE_F32, 4, 3, 1, 1, with_null, 3, custom_cb, 1, &rec) == NULL,
       "custom_4d: a NULL operand gives NULL");
    ok(ggml_custom_inplace(ctx, NULL, args, 1, custom_cb, 1, &rec) == NULL, "custom_inplace: NULL a gives NULL");
    ok(ggml_custom_inplace(ctx, a, with_null, 3, custom_cb, 1, &rec) == NULL,
       "custom_inplace: a NULL operand gives NULL");
    is_int(tap_log_errors(), 0, "NULL inputs log nothing");

    /* the CPU device accepts the nodes built */
    struct ggml_tensor *node = ggml_map_custom1(ctx, a, custom1_cb, GGML_N_TASKS_MAX, &rec);
    ggml_backend_dev_t dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    ok(node != NULL && dev != NULL && ggml_backend_dev_supports_op(dev, node), "CPU device supports MAP_CUSTOM1");
    node = ggml_custom_4d(ctx, GGML_TYPE_F32, 4, 3, 1, 1, args, 2, custom_cb, 2, &rec);
    ok(node != NULL && dev != NULL && ggml_backend_dev_supports_op(dev, node), "CPU device supports CUSTOM");
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();
    contract_tests();
    error_tests();
    return tap_done();
}
