/*
 * bench-blas.c - time the BLAS device against the BLAS library itself and
 * against the CPU backend.
 *
 *   bench-blas [n_threads [repetitions]]
 *       F32 product of a [K = 512, M = 2048] by b [K = 512, N = 2048]
 *       (2048 x 512 x 2048) through the BLAS device, and the same
 *       cblas_sgemm called directly on the same arrays, same threads,
 *       alternately; prints both speeds and their ratio.  The device
 *       reads F32 operands in place, so the ratio should be close to 1.
 *   bench-blas sweep [n_threads]
 *       the CPU backend against the BLAS device (min_batch=1) for square
 *       weights of 1024 and 4096, types F32, F16, BF16, Q4_0, Q8_0, Q4_1,
 *       Q4_K and Q6_K, and batches 1 to 2048: the data behind the
 *       device's choice of products.
 *
 * The plugin is found as ggml_backend_blas_init finds it: from the build
 * tree, run with GGML_BACKEND_PATH=$PWD/lib/blas/.libs.  Built by
 * `make check` when the plugin is built; run by hand.
 */
#define _POSIX_C_SOURCE 200809L  /* clock_gettime */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include <ggml.h>
#include <ggml-alloc.h>
#include <ggml-backend.h>
#include <ggml-blas.h>
#include <ggml-cpu.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static void fill(float *p, size_t n, unsigned long long seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (float) ((seed >> 40) & 0xffffff) / 8388608.0f - 1.0f;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* One product a [k, m] x b [k, n] in a graph, tensors in a CPU buffer. */
struct product {
    struct ggml_context *ctx;
    struct ggml_tensor *a, *b, *c;
    struct ggml_cgraph *graph;
    ggml_backend_buffer_t buffer;
};

static int product_new(struct product *p, enum ggml_type type, int k, int m, int n)
{
    struct ggml_init_params params = { 8 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    p->ctx = ggml_init(params);
    if (p->ctx == NULL)
        return 0;
    p->a = ggml_new_tensor_2d(p->ctx, type, k, m);
    p->b = ggml_new_tensor_2d(p->ctx, GGML_TYPE_F32, k, n);
    p->c = ggml_mul_mat(p->ctx, p->a, p->b);
    p->graph = ggml_new_graph(p->ctx);
    ggml_build_forward_expand(p->graph, p->c);
    p->buffer = ggml_backend_alloc_ctx_tensors_from_buft(p->ctx, ggml_backend_cpu_buffer_type());
    if (p->buffer == NULL)
        return 0;
    float *tmp = malloc((size_t) k * (size_t) (m > n ? m : n) * sizeof *tmp);
    if (tmp == NULL)
        return 0;
    fill(tmp, (size_t) k * m, 1);
    ggml_quantize_chunk(type, tmp, p->a->data, 0, m, k, NULL);
    fill(tmp, (size_t) k * n, 2);
    memcpy(p->b->data, tmp, (size_t) k * n * sizeof *tmp);
    free(tmp);
    return 1;
}

static void product_free(struct product *p)
{
    ggml_backend_buffer_free(p->buffer);
    ggml_free(p->ctx);
}

/* Best time of reps computations of the graph on backend, in seconds. */
static double time_graph(ggml_backend_t backend, struct product *p, int reps)
{
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        if (ggml_backend_graph_compute(backend, p->graph) != GGML_STATUS_SUCCESS)
            return NAN;
        double t = now() - t0;
        if (t < best)
            best = t;
    }
    return best;
}

static int compare_with_sgemm(ggml_backend_t blas, int n_threads, int reps)
{
    enum { K = 512, M = 2048, N = 2048 };
    struct product p;
    if (!product_new(&p, GGML_TYPE_F32, K, M, N))
        return 1;
    float *c = malloc((size_t) M * N * sizeof *c);
    double *t_dev = malloc((size_t) reps * sizeof *t_dev), *t_raw = malloc((size_t) reps * sizeof *t_raw);
    if (c == NULL || t_dev == NULL || t_raw == NULL)
        return 1;
    ggml_backend_blas_set_n_threads(blas, n_threads);
    /* warm up both, then alternate so that both see the same machine */
    time_graph(blas, &p, 1);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, M, K, 1.0f, p.b->data, K, p.a->data, K, 0.0f, c, M);
    for (int r = 0; r < reps; r++) {
        t_dev[r] = time_graph(blas, &p, 1);
        openblas_set_num_threads(n_threads);
        double t0 = now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, M, K, 1.0f, p.b->data, K, p.a->data, K, 0.0f, c,
                    M);
        t_raw[r] = now() - t0;
    }
    int same = memcmp(c, p.c->data, (size_t) M * N * sizeof *c) == 0;
    qsort(t_dev, (size_t) reps, sizeof *t_dev, cmp_double);
    qsort(t_raw, (size_t) reps, sizeof *t_raw, cmp_double);
    const double flop = 2.0 * M * N * K;
    printf("F32 %d x %d x %d, %d threads, %d runs each\n", M, K, N, n_threads, reps);
    printf("  BLAS device:  best %7.2f GFLOP/s  median %7.2f GFLOP/s\n", flop / t_dev[0] * 1e-9,
           flop / t_dev[reps / 2] * 1e-9);
    printf("  cblas_sgemm:  best %7.2f GFLOP/s  median %7.2f GFLOP/s\n", flop / t_raw[0] * 1e-9,
           flop / t_raw[reps / 2] * 1e-9);
    printf("  device / sgemm: best %.3f  median %.3f\n", t_raw[0] / t_dev[0], t_raw[reps / 2] / t_dev[reps / 2]);
    printf("  results %s\n", same ? "identical" : "DIFFER");
    free(c);
    free(t_dev);
    free(t_raw);
    product_free(&p);
    return same ? 0 : 1;
}

static int sweep(ggml_backend_t blas, int n_threads)
{
    static const int sizes[] = { 1024, 4096 };
    static const int batches[] = { 1, 8, 32, 128, 512, 2048 };
    static const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q4_0,
                                            GGML_TYPE_Q8_0, GGML_TYPE_Q4_1, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K };
    ggml_backend_t cpu = ggml_backend_cpu_init();
    if (cpu == NULL)
        return 1;
    ggml_backend_cpu_set_n_threads(cpu, n_threads);
    ggml_backend_blas_set_n_threads(blas, n_threads);
    printf("%-5s %5s %5s %12s %12s %8s\n", "type", "M=K", "N", "CPU us", "BLAS us", "CPU/BLAS");
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++) {
                struct product p;
                const int mk = sizes[s], n = batches[b];
                if (!product_new(&p, types[t], mk, mk, n))
                    return 1;
                const double work = 2.0 * mk * mk * n;
                int reps = (int) (4e8 / work) + 3;
                if (reps > 200)
                    reps = 200;
                double t_cpu = time_graph(cpu, &p, reps), t_blas = time_graph(blas, &p, reps);
                t_cpu = fmin(t_cpu, time_graph(cpu, &p, reps));
                printf("%-5s %5d %5d %12.1f %12.1f %8.2f\n", ggml_type_name(types[t]), mk, n, t_cpu * 1e6,
                       t_blas * 1e6, t_cpu / t_blas);
                fflush(stdout);
                product_free(&p);
            }
    ggml_backend_free(cpu);
    return 0;
}

int main(int argc, char **argv)
{
    int do_sweep = argc > 1 && strcmp(argv[1], "sweep") == 0;
    int n_threads = argc > 1 + do_sweep ? atoi(argv[1 + do_sweep]) : 2;
    int reps = argc > 2 && !do_sweep ? atoi(argv[2]) : 15;
    if (n_threads < 1 || reps < 1) {
        fprintf(stderr, "usage: bench-blas [n_threads [repetitions]] | bench-blas sweep [n_threads]\n");
        return 2;
    }
    ggml_backend_dev_t dev;
    ggml_backend_reg_t reg = ggml_backend_blas_reg();
    if (reg == NULL || (dev = ggml_backend_reg_dev_get(reg, 0)) == NULL) {
        fprintf(stderr, "bench-blas: the BLAS plugin is not available (set GGML_BACKEND_PATH)\n");
        return 1;
    }
    ggml_backend_t blas = ggml_backend_dev_init(dev, "min_batch=1");
    if (blas == NULL)
        return 1;
    printf("device: %s\n", ggml_backend_dev_description(dev));
    int status = do_sweep ? sweep(blas, n_threads) : compare_with_sgemm(blas, n_threads, reps);
    ggml_backend_free(blas);
    return status;
}
