/*
 * bench-mulmat.c - time a matrix product on the CPU backend.
 *
 * Multiplies a 2048 x 2048 matrix a (F32, then Q4_0) by 512 vectors b of
 * 2048 F32 values, several times, and prints the speed in GFLOP/s
 * (2 * M * N * K floating-point operations per product) of the wall
 * clock and of the processor time used by all threads.  A few entries
 * of each result are checked against a product computed here in double
 * precision from the same (quantized) values.
 *
 *   bench-mulmat [n_threads [repetitions]]      (defaults: 2 threads, 3)
 *
 *   cc bench-mulmat.c $(pkg-config --cflags --libs ggml-backend)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ggml.h>
#include <ggml-cpu.h>

enum { K = 2048, M = 2048, N = 512 };

/* A pseudo-random value in [-1, 1). */
static float next_value(unsigned long long *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (float) ((*state >> 40) & 0xffffff) / 8388608.0f - 1.0f;
}

/* Checks 16 entries of c = a * b against a double-precision product. */
static int check(const struct ggml_tensor *a, const struct ggml_tensor *b, const struct ggml_tensor *c)
{
    const struct ggml_type_traits *traits = ggml_get_type_traits(a->type);
    float *row = malloc(K * sizeof *row);
    int bad = 0;
    for (int s = 0; s < 16 && row != NULL; s++) {
        const int m = (s * 739) % M, n = (s * 271) % N;
        const char *arow = (const char *) a->data + m * a->nb[1];
        if (a->type == GGML_TYPE_F32)
            memcpy(row, arow, K * sizeof *row);
        else
            traits->to_float(arow, row, K);
        const float *col = (const float *) ((const char *) b->data + n * b->nb[1]);
        double want = 0.0, scale = 0.0;
        for (int k = 0; k < K; k++) {
            want += (double) row[k] * col[k];
            scale += fabs((double) row[k] * col[k]);
        }
        const double got = ((const float *) ((const char *) c->data + n * c->nb[1]))[m];
        /* Q4_0's product rounds b to Q8_0 first: allow for that */
        const double tolerance = (a->type == GGML_TYPE_F32 ? 1e-5 : 2e-2) * scale;
        if (fabs(got - want) > tolerance) {
            fprintf(stderr, "c[%d, %d] = %g, expected %g\n", n, m, got, want);
            bad = 1;
        }
    }
    free(row);
    return row == NULL || bad;
}

static int bench(struct ggml_context *ctx, enum ggml_type type, int n_threads, int repetitions)
{
    unsigned long long state = 42;
    float *values = malloc((size_t) K * M * sizeof *values);
    if (values == NULL)
        return 1;
    for (size_t i = 0; i < (size_t) K * M; i++)
        values[i] = next_value(&state);

    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, type, K, M);
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    if (a == NULL || b == NULL) {
        free(values);
        return 1;
    }
    ggml_quantize_chunk(type, values, a->data, 0, M, K, NULL);
    free(values);
    float *bdata = ggml_get_data_f32(b);
    for (int i = 0; i < K * N; i++)
        bdata[i] = next_value(&state);

    struct ggml_tensor *c = ggml_mul_mat(ctx, a, b);
    struct ggml_cgraph *graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, c);

    /* wall-clock speed, and work per second of processor time (which
       other programs sharing the machine disturb less) */
    double best = 0.0, total = 0.0, cpu_seconds = 0.0;
    for (int r = 0; r < repetitions; r++) {
        const clock_t c0 = clock();
        const int64_t t0 = ggml_time_us();
        if (ggml_graph_compute_with_ctx(ctx, graph, n_threads) != GGML_STATUS_SUCCESS)
            return 1;
        const double seconds = (double) (ggml_time_us() - t0) * 1e-6;
        cpu_seconds += (double) (clock() - c0) / CLOCKS_PER_SEC;
        const double gflops = 2.0 * M * N * K / seconds * 1e-9;
        total += gflops;
        best = gflops > best ? gflops : best;
    }
    printf("%-5s a [%d, %d] x b [%d, %d], %d thread%s: %6.1f GFLOP/s (best of %d), %6.1f on average, "
           "%6.1f per CPU second\n", ggml_type_name(type), K, M, K, N, n_threads, n_threads == 1 ? "" : "s",
           best, repetitions, total / repetitions, 2.0 * M * N * K * repetitions / cpu_seconds * 1e-9);
    return check(a, b, c);
}

int main(int argc, char **argv)
{
    const int n_threads = argc > 1 ? atoi(argv[1]) : 2;
    const int repetitions = argc > 2 ? atoi(argv[2]) : 3;
    if (n_threads < 1 || repetitions < 1) {
        fprintf(stderr, "usage: %s [n_threads [repetitions]]\n", argv[0]);
        return 2;
    }
    ggml_time_init();

    /* room for one set of tensors at a time, and the work buffers */
    struct ggml_init_params params = { 96u << 20, NULL, false };
    int status = 0;
    const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_Q4_0 };
    for (int t = 0; t < 2 && status == 0; t++) {
        struct ggml_context *ctx = ggml_init(params);
        if (ctx == NULL)
            return 1;
        status = bench(ctx, types[t], n_threads, repetitions);
        ggml_free(ctx);
    }
    return status;
}
