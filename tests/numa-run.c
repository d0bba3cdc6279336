/*
 * numa-run.c - one computation under one NUMA strategy, for
 * tests/check-numa.sh (the strategy is chosen once per process).
 *
 *   numa-run STRATEGY THREADS [--strict-mask N] [--expect-bind LIST;LIST...]
 *            [--mirror-check] [--copy-oom] [--require-pus 0,1]
 *
 * Calls ggml_numa_init(STRATEGY), puts F32, F16 and Q4_0 weights in a CPU
 * buffer used for WEIGHTS, computes a small chain of products with a norm
 * on THREADS threads of the CPU backend, and checks the result against a
 * double-precision reference.  The last node of the graph records, from
 * each thread, the CPUs hwloc reads back for it; --expect-bind gives the
 * PU list each thread must be bound to; --strict-mask N runs on a pool
 * whose cpumask holds the first N PUs this process may use, strict_cpu,
 * and expects thread t on the (t mod N)-th of them.  --mirror-check (MIRROR
 * on more than one node) writes the weights directly through tensor->data,
 * checks that threads on other nodes still read their old copies, then
 * that setting the usage to WEIGHTS again refreshes them.  --copy-oom
 * (MIRROR on more than one node) checks that copies that do not fit are
 * one logged error and leave the buffer working.
 *
 * Prints "digest HEX" (FNV-1a of the result's bytes) and one "thread T:
 * PUS" line per thread.  Exit status: 0 checked, 1 a check failed, 77 the
 * machine lacks what --strict-mask or --require-pus need, or binding is
 * not permitted where --strict-mask or --expect-bind needs it.
 */
#define _GNU_SOURCE

#include <hwloc.h>
#include <math.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

enum { K0 = 96, M0 = 64, M1 = 64, M2 = 32, N_COLS = 5, MAX_THREADS = 64 };

static hwloc_topology_t topology;
static char bindings[MAX_THREADS][128];

/* True when this thread may be bound to one CPU (containers may forbid
 * it); the thread's binding is restored. */
static bool binding_permitted(void)
{
    hwloc_bitmap_t saved = hwloc_bitmap_alloc(), one = hwloc_bitmap_alloc();
    bool permitted = saved != NULL && one != NULL &&
                     hwloc_get_cpubind(topology, saved, HWLOC_CPUBIND_THREAD) == 0 &&
                     hwloc_bitmap_first(saved) >= 0;
    if (permitted) {
        hwloc_bitmap_only(one, (unsigned) hwloc_bitmap_first(saved));
        permitted = hwloc_set_cpubind(topology, one, HWLOC_CPUBIND_THREAD) == 0;
        hwloc_set_cpubind(topology, saved, HWLOC_CPUBIND_THREAD);
    }
    hwloc_bitmap_free(saved);
    hwloc_bitmap_free(one);
    return permitted;
}

static int fail(const char *what)
{
    fprintf(stderr, "numa-run: %s\n", what);
    return 1;
}

/* Custom op: dst = a, and each thread notes the CPUs it is bound to. */
static void record_binding(struct ggml_tensor *dst, const struct ggml_tensor *a, int ith, int nth, void *userdata)
{
    (void) userdata;
    if (ith < MAX_THREADS) {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        if (set != NULL && hwloc_get_cpubind(topology, set, HWLOC_CPUBIND_THREAD) == 0)
            hwloc_bitmap_list_snprintf(bindings[ith], sizeof bindings[ith], set);
        else
            snprintf(bindings[ith], sizeof bindings[ith], "?");
        hwloc_bitmap_free(set);
    }
    if (ith == 0 && nth > 0)
        memcpy(dst->data, a->data, ggml_nbytes(a));
}

/* Deterministic values in [-1, 1). */
static float pseudo_random(uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (float) ((*state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* Q4_0 weights that the format holds exactly: each block of 32 starts with
 * -1 (so its scale is 1/8) and the rest are multiples of 1/8 in [-1, 7/8]. */
static void exact_q4_values(float *w, size_t n, uint32_t *state)
{
    for (size_t i = 0; i < n; i++) {
        int q = i % 32 == 0 ? 0 : (int) ((pseudo_random(state) + 1.0f) * 8.0f) % 16;
        w[i] = (float) (q - 8) / 8.0f;
    }
}

/* The reference: out = W2 * (W1 * (g . rms_norm(W0 * x))), in double. */
static void reference(const float *w0, const float *w1, const float *w2, const float *g, const float *x,
                      double *out)
{
    for (int c = 0; c < N_COLS; c++) {
        double h0[M0], h1[M1], sum_sq = 0;
        for (int m = 0; m < M0; m++) {
            double s = 0;
            for (int k = 0; k < K0; k++)
                s += (double) w0[m * K0 + k] * x[c * K0 + k];
            h0[m] = s;
            sum_sq += s * s;
        }
        const double scale = 1.0 / sqrt(sum_sq / M0 + 1e-6);
        for (int m = 0; m < M0; m++)
            h0[m] = h0[m] * scale * g[m];
        for (int m = 0; m < M1; m++) {
            double s = 0;
            for (int k = 0; k < M0; k++)
                s += (double) w1[m * M0 + k] * h0[k];
            h1[m] = s;
        }
        for (int m = 0; m < M2; m++) {
            double s = 0;
            for (int k = 0; k < M1; k++)
                s += (double) w2[m * M1 + k] * h1[k];
            out[c * M2 + m] = s;
        }
    }
}

static double nmse(const float *got, const double *want, int n)
{
    double err = 0, norm = 0;
    for (int i = 0; i < n; i++) {
        err += (got[i] - want[i]) * (got[i] - want[i]);
        norm += want[i] * want[i];
    }
    return norm > 0 ? err / norm : err;
}

/* Counts the ERROR messages the library logs and keeps the last one. */
static int errors_logged;
static char last_error[512];

static void count_errors(enum ggml_log_level level, const char *text, void *user_data)
{
    (void) user_data;
    if (level == GGML_LOG_LEVEL_ERROR) {
        errors_logged++;
        snprintf(last_error, sizeof last_error, "%s", text);
    }
}

/*
 * MIRROR out of memory: under an address-space limit that leaves room for
 * one more copy of nothing, a 256 MiB buffer set to WEIGHTS cannot get its
 * per-node copies.  One error must be logged, and the buffer must keep
 * working with its single copy.  Returns 0, 1 on failure, 77 when the
 * limit cannot be set (or under AddressSanitizer, which needs room).
 */
static int copy_out_of_memory(ggml_backend_t backend)
{
#if defined(__SANITIZE_ADDRESS__)
    (void) backend;
    fprintf(stderr, "numa-run: --copy-oom needs an address-space limit, which AddressSanitizer cannot run under\n");
    return 77;
#else
    const size_t size = (size_t) 256 << 20;
    ggml_backend_buffer_t big = ggml_backend_buft_alloc_buffer(ggml_backend_get_default_buffer_type(backend), size);
    if (big == NULL)
        return fail("cannot allocate 256 MiB to start with");
    struct rlimit old_limit, limit;
    long pages = 0;
    FILE *statm = fopen("/proc/self/statm", "r");
    if (statm == NULL || fscanf(statm, "%ld", &pages) != 1 || getrlimit(RLIMIT_AS, &old_limit) != 0) {
        if (statm != NULL)
            fclose(statm);
        ggml_backend_buffer_free(big);
        return 77;
    }
    fclose(statm);
    /* what the process maps now, plus 64 MiB: not enough for a copy */
    limit = old_limit;
    limit.rlim_cur = (rlim_t) pages * (rlim_t) sysconf(_SC_PAGESIZE) + ((rlim_t) 64 << 20);
    if (setrlimit(RLIMIT_AS, &limit) != 0) {
        ggml_backend_buffer_free(big);
        return 77;
    }
    ggml_log_set(count_errors, NULL);
    ggml_backend_buffer_set_usage(big, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    ggml_log_set(NULL, NULL);
    setrlimit(RLIMIT_AS, &old_limit);

    int status = 0;
    if (errors_logged != 1 || strstr(last_error, "out of memory for the copy") == NULL) {
        fprintf(stderr, "numa-run: %d errors logged for the copies that did not fit (last: %s)\n", errors_logged,
                last_error);
        status = 1;
    }
    /* still usable: a write and a read back through the single copy */
    struct ggml_init_params params = { .mem_size = ggml_tensor_overhead(), .no_alloc = true };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_tensor *t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1024);
    struct ggml_tallocr talloc = ggml_tallocr_new(big);
    float in[1024], out[1024];
    for (int i = 0; i < 1024; i++)
        in[i] = (float) i;
    if (ggml_tallocr_alloc(&talloc, t) != GGML_STATUS_SUCCESS) {
        status = fail("the buffer left with one copy cannot hold a tensor");
    } else {
        ggml_backend_tensor_set(t, in, 0, sizeof in);
        ggml_backend_tensor_get(t, out, 0, sizeof out);
        if (memcmp(in, out, sizeof in) != 0)
            status = fail("the buffer left with one copy does not keep what is written");
    }
    printf("copy-oom: %d error(s) logged: %s", errors_logged, last_error);
    ggml_free(ctx);
    ggml_backend_buffer_free(big);
    return status;
#endif
}

static enum ggml_numa_strategy strategy_by_name(const char *name)
{
    static const char *names[] = { "DISABLED", "DISTRIBUTE", "ISOLATE", "NUMACTL", "MIRROR" };
    for (int i = 0; i < 5; i++)
        if (strcmp(name, names[i]) == 0)
            return (enum ggml_numa_strategy) i;
    return GGML_NUMA_STRATEGY_COUNT;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return fail("usage: numa-run STRATEGY THREADS [options]");
    const enum ggml_numa_strategy strategy = strategy_by_name(argv[1]);
    const int n_threads = atoi(argv[2]);
    int strict_mask = 0;
    const char *expect_bind = NULL;
    bool mirror_check = false, copy_oom = false;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--strict-mask") == 0 && i + 1 < argc) {
            strict_mask = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--expect-bind") == 0 && i + 1 < argc) {
            expect_bind = argv[++i];
        } else if (strcmp(argv[i], "--mirror-check") == 0) {
            mirror_check = true;
        } else if (strcmp(argv[i], "--copy-oom") == 0) {
            copy_oom = true;
        } else if (strcmp(argv[i], "--require-pus") == 0 && i + 1 < argc) {
            /* the kernel's own view, whatever topology hwloc is shown */
            cpu_set_t mine;
            if (sched_getaffinity(0, sizeof mine, &mine) != 0)
                return 77;
            for (char *list = argv[++i], *end; *list != '\0'; list = *end ? end + 1 : end)
                if (!CPU_ISSET((int) strtol(list, &end, 10), &mine))
                    return 77;
        } else {
            return fail("unknown option");
        }
    }
    if (strategy == GGML_NUMA_STRATEGY_COUNT || n_threads < 1 || n_threads > MAX_THREADS)
        return fail("bad strategy or thread count");
    if (hwloc_topology_init(&topology) != 0 || hwloc_topology_load(topology) != 0)
        return fail("hwloc cannot load the topology");

    if ((strict_mask > 0 || expect_bind != NULL) && !binding_permitted()) {
        fprintf(stderr, "numa-run: this process may not bind threads here\n");
        return 77;
    }
    ggml_numa_init(strategy);
    ggml_backend_t backend = ggml_backend_cpu_init();
    if (backend == NULL)
        return fail("no CPU backend");
    ggml_backend_cpu_set_n_threads(backend, n_threads);

    /* a pool bound by an explicit cpumask: the first strict_mask allowed PUs */
    int mask_pus[MAX_THREADS];
    ggml_threadpool_t pool = NULL;
    if (strict_mask > 0) {
        hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
        hwloc_get_cpubind(topology, allowed, HWLOC_CPUBIND_PROCESS);
        struct ggml_threadpool_params params = ggml_threadpool_params_default(n_threads);
        int pu = -1;
        for (int i = 0; i < strict_mask; i++) {
            pu = hwloc_bitmap_next(allowed, pu);
            if (pu < 0 || pu >= GGML_MAX_N_THREADS)
                return 77;
            mask_pus[i] = pu;
            params.cpumask[pu] = true;
        }
        hwloc_bitmap_free(allowed);
        params.strict_cpu = true;
        pool = ggml_threadpool_new(&params);
        if (pool == NULL)
            return fail("ggml_threadpool_new failed");
        ggml_backend_cpu_set_threadpool(backend, pool);
    }

    /* weights */
    struct ggml_init_params wparams = { .mem_size = 8 * ggml_tensor_overhead(), .no_alloc = true };
    struct ggml_context *wctx = ggml_init(wparams);
    struct ggml_tensor *w0 = ggml_new_tensor_2d(wctx, GGML_TYPE_F32, K0, M0);
    struct ggml_tensor *g = ggml_new_tensor_1d(wctx, GGML_TYPE_F32, M0);
    struct ggml_tensor *w1 = ggml_new_tensor_2d(wctx, GGML_TYPE_F16, M0, M1);
    struct ggml_tensor *w2 = ggml_new_tensor_2d(wctx, GGML_TYPE_Q4_0, M1, M2);
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors(wctx, backend);
    if (wbuf == NULL)
        return fail("cannot allocate the weights");
    ggml_backend_buffer_set_usage(wbuf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);

    static float w0_f[K0 * M0], g_f[M0], w1_f[M0 * M1], w2_f[M1 * M2], x_f[K0 * N_COLS];
    static ggml_fp16_t w1_h[M0 * M1];
    static uint8_t w2_q[M1 * M2]; /* more than the Q4_0 row data needs */
    uint32_t state = 12345;
    for (int i = 0; i < K0 * M0; i++)
        w0_f[i] = pseudo_random(&state);
    for (int i = 0; i < M0; i++)
        g_f[i] = 0.5f + pseudo_random(&state) * 0.25f;
    for (int i = 0; i < M0 * M1; i++) {
        w1_h[i] = ggml_fp32_to_fp16(pseudo_random(&state));
        w1_f[i] = ggml_fp16_to_fp32(w1_h[i]); /* the reference uses what F16 holds */
    }
    exact_q4_values(w2_f, M1 * M2, &state);
    ggml_quantize_chunk(GGML_TYPE_Q4_0, w2_f, w2_q, 0, M2, M1, NULL);
    for (int i = 0; i < K0 * N_COLS; i++)
        x_f[i] = pseudo_random(&state);
    ggml_backend_tensor_set(w0, w0_f, 0, sizeof w0_f);
    ggml_backend_tensor_set(g, g_f, 0, sizeof g_f);
    ggml_backend_tensor_set(w1, w1_h, 0, sizeof w1_h);
    ggml_backend_tensor_set(w2, w2_q, 0, ggml_nbytes(w2));

    /* graph */
    struct ggml_init_params cparams = { .mem_size = 64 * ggml_tensor_overhead() + ggml_graph_overhead(),
                                        .no_alloc = true };
    struct ggml_context *ctx = ggml_init(cparams);
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K0, N_COLS);
    ggml_set_input(x);
    struct ggml_tensor *h = ggml_mul(ctx, ggml_rms_norm(ctx, ggml_mul_mat(ctx, w0, x), 1e-6f), g);
    struct ggml_tensor *out = ggml_mul_mat(ctx, w2, ggml_mul_mat(ctx, w1, h));
    ggml_set_output(out);
    struct ggml_tensor *probe = ggml_map_custom1(ctx, out, record_binding, GGML_N_TASKS_MAX, NULL);
    struct ggml_cgraph *graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, probe);
    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_get_default_buffer_type(backend));
    if (!ggml_gallocr_alloc_graph(galloc, graph))
        return fail("cannot allocate the graph");
    ggml_backend_tensor_set(x, x_f, 0, sizeof x_f);

    static float result[M2 * N_COLS];
    static double want[M2 * N_COLS];
    const double tolerance = 1e-4; /* Q4_0 x Q8_0 and F16 products */
    if (ggml_backend_graph_compute(backend, graph) != GGML_STATUS_SUCCESS)
        return fail("compute failed");
    ggml_backend_tensor_get(out, result, 0, sizeof result);
    reference(w0_f, w1_f, w2_f, g_f, x_f, want);
    double e = nmse(result, want, M2 * N_COLS);
    if (!(e < tolerance)) {
        fprintf(stderr, "numa-run: nmse %.3g against the reference\n", e);
        return 1;
    }

    uint64_t digest = 14695981039346656037ull;
    for (size_t i = 0; i < sizeof result; i++)
        digest = (digest ^ ((const uint8_t *) result)[i]) * 1099511628211ull;
    printf("digest %016llx\n", (unsigned long long) digest);
    for (int t = 0; t < n_threads; t++)
        printf("thread %d: %s\n", t, bindings[t]);

    int status = 0;
    if (expect_bind != NULL) {
        char copy[1024];
        snprintf(copy, sizeof copy, "%s", expect_bind);
        char *save = NULL;
        int t = 0;
        for (char *want_list = strtok_r(copy, ";", &save); want_list != NULL && t < n_threads;
             want_list = strtok_r(NULL, ";", &save), t++)
            if (strcmp(bindings[t], want_list) != 0) {
                fprintf(stderr, "numa-run: thread %d is bound to %s, expected %s\n", t, bindings[t], want_list);
                status = 1;
            }
    }
    for (int t = 0; t < n_threads && strict_mask > 0; t++) {
        char want_list[16];
        snprintf(want_list, sizeof want_list, "%d", mask_pus[t % strict_mask]);
        if (strcmp(bindings[t], want_list) != 0) {
            fprintf(stderr, "numa-run: thread %d is bound to %s, the strict mask says %s\n", t, bindings[t], want_list);
            status = 1;
        }
    }

    if (mirror_check) {
        if (!ggml_is_numa() || strategy != GGML_NUMA_STRATEGY_MIRROR || n_threads < 2)
            return fail("--mirror-check needs MIRROR, several nodes and threads");
        /* written behind the buffer's back: only the primary copy changes */
        for (int i = 0; i < K0 * M0; i++)
            w0_f[i] += 0.5f;
        memcpy(w0->data, w0_f, sizeof w0_f);
        reference(w0_f, w1_f, w2_f, g_f, x_f, want);
        ggml_backend_graph_compute(backend, graph);
        ggml_backend_tensor_get(out, result, 0, sizeof result);
        double stale = nmse(result, want, M2 * N_COLS);
        if (!(stale > 100 * tolerance)) {
            fprintf(stderr, "numa-run: after a direct write the result matches the new weights (nmse %.3g): "
                            "no thread read an older copy\n", stale);
            status = 1;
        }
        ggml_backend_buffer_set_usage(wbuf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
        ggml_backend_graph_compute(backend, graph);
        ggml_backend_tensor_get(out, result, 0, sizeof result);
        double fresh = nmse(result, want, M2 * N_COLS);
        if (!(fresh < tolerance)) {
            fprintf(stderr, "numa-run: setting the usage again did not refresh the copies (nmse %.3g)\n", fresh);
            status = 1;
        }
        printf("mirror: stale nmse %.3g, refreshed nmse %.3g\n", stale, fresh);
    }

    if (copy_oom) {
        int oom_status = copy_out_of_memory(backend);
        if (oom_status != 0)
            status = oom_status;
    }

    ggml_gallocr_free(galloc);
    ggml_free(ctx);
    ggml_backend_buffer_free(wbuf);
    ggml_free(wctx);
    ggml_backend_free(backend);
    if (pool != NULL)
        ggml_threadpool_free(pool);
    hwloc_topology_destroy(topology);
    return status;
}
