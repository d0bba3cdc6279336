/*
 * consumer.c - uses the EXAMPLE plugin as a program uses any GPU backend:
 * loads the installed plugins, finds the device by name, and lets a
 * scheduler run a graph over the EXAMPLE device and the CPU.
 *
 * The graph is a small feed-forward block:
 *
 *     h   = w1 x            MUL_MAT   weights in EXAMPLE memory -> EXAMPLE
 *     a   = silu(h)         UNARY     EXAMPLE cannot            -> CPU
 *     y   = w2 a            MUL_MAT   weights in EXAMPLE memory -> EXAMPLE
 *     out = (y + b) * g * 0.5         ADD, MUL, SCALE           -> EXAMPLE
 *
 * so the scheduler cuts it into several splits and copies h to the host and
 * a back to the device.  The program checks the result against a
 * double-precision reference computed here, and that the matrix products
 * ran on EXAMPLE.  Exit status 0 when everything holds, 1 otherwise.
 *
 * Build and run (see the Makefile and README in this directory):
 *     make && make install && ./consumer
 * or, without installing the plugin:
 *     make && GGML_BACKEND_PATH=$PWD/libggml-example.so ./consumer
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <ggml.h>
#include <ggml-backend.h>

#define K 64  /* inputs */
#define M 48  /* hidden units */
#define P 16  /* outputs */
#define N 8   /* batch (columns of x) */

static int failures;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    if (!ok)
        failures++;
}

/* Deterministic values in [-1, 1). */
static void fill(float *v, int n, unsigned seed)
{
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        v[i] = (float) ((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
}

/* out[m + n*rows] = sum over k of w[k + m*cols] * x[k + n*cols], as
 * ggml_mul_mat(w [cols, rows], x [cols, n_cols]) defines it. */
static void ref_mul_mat(double *out, const float *w, const double *x, int cols, int rows, int n_cols)
{
    for (int n = 0; n < n_cols; n++)
        for (int m = 0; m < rows; m++) {
            double sum = 0.0;
            for (int k = 0; k < cols; k++)
                sum += (double) w[k + m * cols] * x[k + n * cols];
            out[m + n * rows] = sum;
        }
}

int main(void)
{
    /* 1. load the plugins installed in the plugin directory (and those
     *    named by GGML_BACKEND_PATH), then look for the device */
    ggml_backend_load_all();
    ggml_backend_dev_t dev = ggml_backend_dev_by_name("EXAMPLE0");
    if (dev == NULL) {
        fprintf(stderr, "consumer: no EXAMPLE0 device: install libggml-example.so in the plugin directory\n"
                        "(pkg-config --variable=backenddir ggml-backend) or name it in GGML_BACKEND_PATH\n");
        return 1;
    }
    printf("found %s: %s\n", ggml_backend_dev_name(dev), ggml_backend_dev_description(dev));
    check(ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_GPU, "EXAMPLE0 is a GPU device");

    ggml_backend_t gpu = ggml_backend_dev_init(dev, NULL);
    ggml_backend_t cpu = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, NULL);
    if (gpu == NULL || cpu == NULL) {
        fprintf(stderr, "consumer: cannot create the backends\n");
        return 1;
    }

    /* 2. the weights, in EXAMPLE memory, marked as weights: the scheduler
     *    runs the nodes that use them where they are */
    struct ggml_init_params wparams = {
        .mem_size = 8 * ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true,
    };
    struct ggml_context *wctx = ggml_init(wparams);
    struct ggml_tensor *w1 = ggml_new_tensor_2d(wctx, GGML_TYPE_F32, K, M);
    struct ggml_tensor *w2 = ggml_new_tensor_2d(wctx, GGML_TYPE_F32, M, P);
    struct ggml_tensor *b = ggml_new_tensor_1d(wctx, GGML_TYPE_F32, P);
    struct ggml_tensor *g = ggml_new_tensor_1d(wctx, GGML_TYPE_F32, P);
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, ggml_backend_dev_buffer_type(dev));
    if (wbuf == NULL) {
        fprintf(stderr, "consumer: cannot allocate the weights\n");
        return 1;
    }
    ggml_backend_buffer_set_usage(wbuf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    check(!ggml_backend_buffer_is_host(wbuf), "the weights are in device memory");

    static float w1v[K * M], w2v[M * P], bv[P], gv[P], xv[K * N], outv[P * N];
    fill(w1v, K * M, 1);
    fill(w2v, M * P, 2);
    fill(bv, P, 3);
    fill(gv, P, 4);
    fill(xv, K * N, 5);
    ggml_backend_tensor_set(w1, w1v, 0, sizeof w1v);
    ggml_backend_tensor_set(w2, w2v, 0, sizeof w2v);
    ggml_backend_tensor_set(b, bv, 0, sizeof bv);
    ggml_backend_tensor_set(g, gv, 0, sizeof gv);

    /* 3. the graph; its tensors get memory from the scheduler */
    struct ggml_init_params gparams = {
        .mem_size = 16 * ggml_tensor_overhead() + ggml_graph_overhead(), .mem_buffer = NULL, .no_alloc = true,
    };
    struct ggml_context *gctx = ggml_init(gparams);
    struct ggml_tensor *x = ggml_new_tensor_2d(gctx, GGML_TYPE_F32, K, N);
    ggml_set_input(x);
    struct ggml_tensor *h = ggml_mul_mat(gctx, w1, x);
    struct ggml_tensor *a = ggml_silu(gctx, h);
    struct ggml_tensor *y = ggml_mul_mat(gctx, w2, a);
    struct ggml_tensor *out = ggml_scale(gctx, ggml_mul(gctx, ggml_add(gctx, y, b), g), 0.5f);
    ggml_set_output(out);
    struct ggml_cgraph *graph = ggml_new_graph(gctx);
    ggml_build_forward_expand(graph, out);

    /* 4. the scheduler: EXAMPLE first (preferred), the CPU last (it takes
     *    whatever EXAMPLE cannot compute) */
    ggml_backend_t backends[2] = { gpu, cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, GGML_DEFAULT_GRAPH_SIZE, false, true);
    if (sched == NULL || !ggml_backend_sched_alloc_graph(sched, graph)) {
        fprintf(stderr, "consumer: cannot schedule the graph\n");
        return 1;
    }
    ggml_backend_tensor_set(x, xv, 0, sizeof xv);
    check(ggml_backend_sched_graph_compute(sched, graph) == GGML_STATUS_SUCCESS, "the graph computes");
    ggml_backend_tensor_get(out, outv, 0, sizeof outv);

    printf("%d splits\n", ggml_backend_sched_get_n_splits(sched));
    check(ggml_backend_sched_get_n_splits(sched) >= 3, "the graph runs in 3 or more splits");
    check(ggml_backend_sched_get_tensor_backend(sched, h) == gpu, "w1 x ran on EXAMPLE0");
    check(ggml_backend_sched_get_tensor_backend(sched, y) == gpu, "w2 a ran on EXAMPLE0");
    check(ggml_backend_sched_get_tensor_backend(sched, a) == cpu, "silu ran on the CPU");

    /* the plugin's own count of the nodes it computed, through the
     * registry's get_proc_address: at least the two products */
    size_t (*nodes_computed)(void) = (size_t (*)(void)) ggml_backend_reg_get_proc_address(
        ggml_backend_dev_backend_reg(dev), "example_nodes_computed");
    check(nodes_computed != NULL && nodes_computed() >= 2, "EXAMPLE0 computed nodes");

    /* 5. the reference, in double precision */
    static double xd[K * N], hd[M * N], yd[P * N];
    for (int i = 0; i < K * N; i++)
        xd[i] = xv[i];
    ref_mul_mat(hd, w1v, xd, K, M, N);
    for (int i = 0; i < M * N; i++)
        hd[i] = hd[i] / (1.0 + exp(-hd[i]));
    ref_mul_mat(yd, w2v, hd, M, P, N);
    double err = 0.0, norm = 0.0;
    for (int n = 0; n < N; n++)
        for (int p = 0; p < P; p++) {
            const double want = (yd[p + n * P] + bv[p]) * gv[p] * 0.5;
            const double diff = outv[p + n * P] - want;
            err += diff * diff;
            norm += want * want;
        }
    const double nmse = norm > 0.0 ? err / norm : err;
    printf("NMSE against the double-precision reference: %.3g\n", nmse);
    check(nmse < 1e-6, "the result matches the reference");

    ggml_backend_sched_free(sched);
    ggml_free(gctx);
    ggml_backend_buffer_free(wbuf);
    ggml_free(wctx);
    ggml_backend_free(gpu);
    ggml_backend_free(cpu);

    printf("%s\n", failures == 0 ? "all checks passed" : "some checks FAILED");
    return failures == 0 ? 0 : 1;
}
