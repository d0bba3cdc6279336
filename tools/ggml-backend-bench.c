/*
 * ggml-backend-bench - time a llama-style transformer block and matrix
 * products on every device, through the scheduler.
 *
 *   ggml-backend-bench [options]        (see usage() or ggml-backend-bench(1))
 *
 * Workloads (--op):
 *   block     one llama-style block over T tokens: rms_norm * weight,
 *             Q/K/V projections, RoPE on Q and K, grouped-query attention
 *             with a causal mask (mul_mat K^T Q, soft_max_ext, mul_mat V),
 *             output projection, residual, rms_norm * weight, SwiGLU FFN
 *             (ggml_swiglu_split), residual;
 *   block-fa  the same with ggml_flash_attn_ext over F16 K and V;
 *   mul_mat   c = a b for each --shape MxKxN: weights a [K, M], F32 b [K, N];
 *   moe       the experts' SwiGLU FFN of a mixture-of-experts block over T
 *             tokens: N_EXPERTS experts of the block's FFN shape, N_EXPERTS_USED
 *             a token (fixed ids, every expert as often), three
 *             ggml_mul_mat_id (gate, up, down) and ggml_swiglu_split;
 *   dispatch  (only when asked for) a chain of DISPATCH_NODES ggml_scale
 *             nodes on DISPATCH_WIDTH floats: the engine's cost per node,
 *             printed per node under the table;
 *   ops       (only when asked for) one node of each kind of op_cases[]
 *             on a shape of a 7B-class model, F32 activations: where a
 *             device is slow; a device that does not support a node
 *             (ggml_backend_dev_supports_op) gets no row for it.
 * The matrices of the weights have the --type (by default F32, F16 and
 * Q4_0; any type the CPU multiplies and ggml_quantize_chunk encodes
 * without importance weights); norms are F32.  dispatch and ops have no
 * weights: they run once, as F32.
 *
 * Devices: for each device D that is not a CPU, a scheduler over {D, CPU}
 * with the weights in D's buffer type ("D+CPU"), then the CPU alone
 * ("CPU").  Every backend gets --threads threads (through the registry's
 * "ggml_backend_set_n_threads").  Each run is the graph computed once to
 * warm up, then --reps times; the median time is reported with the
 * spread (fastest, slowest), and GFLOP/s (multiply-adds of the products
 * and of the attention, counted twice), GB/s (bytes of the weights,
 * inputs and output, read or written once) and weights' GB/s (the bytes
 * of the weight matrices alone, ggml_nbytes, over the median time: what
 * compares types of different sizes).  A line naming the versions, the
 * commit, the processor and the kernel level comes first, and each row
 * is written (and flushed) as soon as it is measured, in any format
 * (table, --csv, --json, --markdown).
 *
 * --compare-blas times cblas_sgemm on F32 arrays of each mul_mat shape,
 * through the BLAS device (which calls it on the operands in place), with
 * the same threads, in the same run, and reports each mul_mat row's speed
 * relative to it.  --compare-stream times a STREAM triad
 * a[i] = b[i] + s * c[i] on arrays much larger than the caches with the
 * same threads, and reports each row's GB/s relative to it.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "tool-util.h"

#define PROGRAM "ggml-backend-bench"

#define STRINGIFY_(x) #x
#define STRINGIFY(x)  STRINGIFY_(x)

/* The block's dimensions: a small llama-style model, prompt of T tokens (N_TOKENS unless --tokens). */
#define N_EMBD    1024
#define N_HEAD    16
#define N_HEAD_KV 4
#define HEAD_DIM  (N_EMBD / N_HEAD)
#define N_FF      2816
#define N_TOKENS  64
#define RMS_EPS   1e-5f

/* The moe workload: experts, and experts a token uses. */
#define N_EXPERTS      8
#define N_EXPERTS_USED 2

/* The dispatch workload: nodes of the chain, floats each node scales. */
#define DISPATCH_NODES 4000
#define DISPATCH_WIDTH 16

#define MAX_SHAPES  16
#define MAX_DEVICES 16
#define MAX_CONFIGS (MAX_DEVICES + 4) /* each device with the CPU, the CPU alone, its extra buffer types */

enum op { OP_BLOCK, OP_BLOCK_FA, OP_MUL_MAT, OP_MOE, OP_DISPATCH, OP_OPS, N_OPS };
static const char *const op_names[N_OPS] = { "block", "block-fa", "mul_mat", "moe", "dispatch", "ops" };
/* Workloads run when --op is not given: all but dispatch. */
static const bool op_default[N_OPS] = { true, true, true, true, false, false };

/* The weights' types run when --type is not given. */
static const enum ggml_type default_types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q4_0 };

struct shape {
    int64_t m, k, n;
};

static const struct shape default_shapes[] = { { 2048, 512, 2048 }, { 4096, 4096, 32 }, { 4096, 4096, 1 } };

enum format { FORMAT_TABLE, FORMAT_CSV, FORMAT_JSON, FORMAT_MARKDOWN };

struct options {
    bool ops[N_OPS];
    bool types[GGML_TYPE_COUNT];   /* run in the order of enum ggml_type */
    struct shape shapes[MAX_SHAPES];
    int n_shapes;
    int n_threads;
    int reps;
    int n_tokens;   /* the block's tokens */
    const char *devices[MAX_DEVICES];
    int n_devices;
    bool compare_blas, compare_stream;
    bool interleave;   /* the configurations' repetitions alternate */
    const char *svg; /* the roofline picture's file, or NULL */
    enum format format;
    enum ggml_numa_strategy numa; /* GGML_NUMA_STRATEGY_COUNT: ggml_numa_init not called */
};

/* One result row. */
struct row {
    char workload[64];
    const char *type;
    char device[64];
    double seconds;      /* median time */
    double fastest, slowest;
    double flop, bytes;  /* per run */
    double weight_bytes; /* of the weight matrices, per run; 0: none */
    double vs_sgemm;     /* sgemm time / this time, NAN when not measured */
    double vs_stream;    /* this GB/s / STREAM GB/s, NAN when not measured */
    double vs_read;      /* this GB/s / reading as many bytes, NAN when not measured */
};

struct results {
    struct row *rows;
    size_t n;
    bool failed;
};

/* ------------------------------------------------------------ helpers */

static void *xmalloc(size_t size)
{
    void *p = malloc(size);
    if (p == NULL) {
        fprintf(stderr, PROGRAM ": out of memory (%zu bytes)\n", size);
        exit(1);
    }
    return p;
}

static float next_value(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (float) ((*state >> 40) & 0xffffff) / 8388608.0f - 1.0f;
}

static void fill_random(float *p, size_t n, uint64_t seed, float amplitude)
{
    for (size_t i = 0; i < n; i++)
        p[i] = amplitude * next_value(&seed);
}

/* The type's name in capitals ("F32", "Q4_K"), as --type accepts it in any case. */
static const char *type_label(enum ggml_type type)
{
    static char labels[GGML_TYPE_COUNT][16];
    char *label = labels[type];
    if (label[0] == '\0') {
        const char *name = ggml_type_name(type);
        size_t i = 0;
        for (; name != NULL && name[i] != '\0' && i + 1 < sizeof labels[0]; i++)
            label[i] = name[i] >= 'a' && name[i] <= 'z' ? (char) (name[i] - 'a' + 'A') : name[i];
        label[i] = '\0';
    }
    return label;
}

static bool progress_on;

static void progress(int done, int total, const char *what)
{
    if (!progress_on)
        return;
    if (what == NULL)
        fprintf(stderr, "\r%*s\r", 72, "");
    else
        fprintf(stderr, "\r[%d/%d] %-60.60s", done + 1, total, what);
    fflush(stderr);
}

/* Median, fastest and slowest of a run's timed repetitions; NAN when it failed. */
struct times {
    double median, fastest, slowest;
};

static const struct times no_times = { NAN, NAN, NAN };

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* The summary of n > 0 times (sorted in place). */
static struct times summarize(double *t, int n)
{
    qsort(t, (size_t) n, sizeof *t, compare_doubles);
    const double median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    return (struct times) { median, t[0], t[n - 1] };
}

/* ------------------------------------------------------------ devices */

/* A way to run: a scheduler over backends (the last is the CPU). */
struct config {
    char label[64];
    ggml_backend_dev_t dev;   /* the device in front (the CPU for CPU alone) */
    ggml_backend_buffer_type_t wbuft;   /* the weights' buffer type; NULL: the device's */
    ggml_backend_dev_t dev2;  /* a second device in front, holding the block's feed-forward
                                 weights (block workloads only), or NULL */
};

static void set_threads(ggml_backend_t backend, int n_threads)
{
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(ggml_backend_get_device(backend));
    ggml_backend_set_n_threads_t fn =
        (ggml_backend_set_n_threads_t) ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads");
    if (fn != NULL)
        fn(backend, n_threads);
}

static bool selected(const struct options *o, const char *dev_name)
{
    if (o->n_devices == 0)
        return true;
    for (int i = 0; i < o->n_devices; i++)
        if (strcasecmp(o->devices[i], dev_name) == 0)
            return true;
    return false;
}

static int list_configs(const struct options *o, struct config *configs, int max)
{
    int n = 0;
    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    for (size_t i = 0; i < ggml_backend_dev_count() && n < max - 1; i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        if (ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_CPU || !selected(o, ggml_backend_dev_name(dev)))
            continue;
        configs[n].dev = dev;
        snprintf(configs[n].label, sizeof configs[n].label, "%s+CPU", ggml_backend_dev_name(dev));
        n++;
    }
    if (cpu != NULL && selected(o, ggml_backend_dev_name(cpu))) {
        configs[n].dev = cpu;
        snprintf(configs[n].label, sizeof configs[n].label, "%s", ggml_backend_dev_name(cpu));
        n++;
    }
    /* D1+D2: the block split over two devices (and the CPU), as layers over machines */
    for (int i = 0; i < o->n_devices && n < max - 1; i++) {
        char first[64];
        const char *plus = strchr(o->devices[i], '+');
        if (plus == NULL || (size_t) (plus - o->devices[i]) >= sizeof first)
            continue;
        memcpy(first, o->devices[i], (size_t) (plus - o->devices[i]));
        first[plus - o->devices[i]] = '\0';
        ggml_backend_dev_t d1 = ggml_backend_dev_by_name(first), d2 = ggml_backend_dev_by_name(plus + 1);
        if (d1 == NULL || d2 == NULL || d1 == d2 || d1 == cpu || d2 == cpu) {
            fprintf(stderr, PROGRAM ": --device %s: not two distinct non-CPU devices\n", o->devices[i]);
            continue;
        }
        configs[n].dev = d1;
        configs[n].dev2 = d2;
        snprintf(configs[n].label, sizeof configs[n].label, "%s+%s+CPU", ggml_backend_dev_name(d1),
                 ggml_backend_dev_name(d2));
        n++;
    }
    /* the CPU alone with its weights in one of the device's extra buffer types (CPU_REPACK) */
    typedef ggml_backend_buffer_type_t *(*extra_bufts_fn)(ggml_backend_dev_t);
    ggml_backend_reg_t reg = cpu != NULL ? ggml_backend_dev_backend_reg(cpu) : NULL;
    extra_bufts_fn extra = NULL;
    if (reg != NULL)
        extra = (extra_bufts_fn) ggml_backend_reg_get_proc_address(reg, "ggml_backend_dev_get_extra_bufts");
    for (ggml_backend_buffer_type_t *b = extra != NULL ? extra(cpu) : NULL; b != NULL && *b != NULL && n < max; b++) {
        if (!selected(o, ggml_backend_buft_name(*b)))
            continue;
        configs[n].dev = cpu;
        configs[n].wbuft = *b;
        snprintf(configs[n].label, sizeof configs[n].label, "%s", ggml_backend_buft_name(*b));
        n++;
    }
    return n;
}

/* ----------------------------------------------------------- workloads */

/* Everything of one run on one device configuration. */
struct run {
    struct ggml_context *wctx, *gctx;
    ggml_backend_buffer_t wbuf;
    struct ggml_context *wctx2;   /* weights of the second device (config dev2), or NULL */
    ggml_backend_buffer_t wbuf2;
    struct ggml_cgraph *graph;
    struct ggml_tensor *out;
    struct ggml_tensor *inputs[4];
    void *input_data[4];
    int n_inputs;
    int graph_size;           /* nodes the scheduler must hold; 0: GGML_DEFAULT_GRAPH_SIZE */
    double flop, bytes;
    double weight_bytes;      /* the weight matrices' share of bytes */
};

/* Host copies of the weights, shared by the runs of one workload. */
#define MAX_WEIGHTS 16
struct weight_cache {
    void *bytes[MAX_WEIGHTS];
};

static void weight_cache_free(struct weight_cache *c)
{
    for (int i = 0; i < MAX_WEIGHTS; i++) {
        free(c->bytes[i]);
        c->bytes[i] = NULL;
    }
}

/*
 * Uploads weight i of run r (random values in [-amplitude, amplitude)
 * stored in its type) and counts its bytes in the run's and the weights'.
 */
static void load_weight(struct run *r, struct weight_cache *c, int i, struct ggml_tensor *t, float amplitude)
{
    if (c->bytes[i] == NULL) {
        const int64_t n = ggml_nelements(t);
        float *values = xmalloc((size_t) n * sizeof *values);
        fill_random(values, (size_t) n, 1000u + (uint64_t) i, amplitude);
        c->bytes[i] = xmalloc(ggml_nbytes(t));
        if (t->type == GGML_TYPE_F32)
            memcpy(c->bytes[i], values, ggml_nbytes(t));
        else
            ggml_quantize_chunk(t->type, values, c->bytes[i], 0, ggml_nrows(t), t->ne[0], NULL);
        free(values);
    }
    ggml_backend_tensor_set(t, c->bytes[i], 0, ggml_nbytes(t));
    r->bytes += (double) ggml_nbytes(t);
    r->weight_bytes += (double) ggml_nbytes(t);
}

static struct ggml_tensor *add_input(struct run *r, struct ggml_tensor *t, void *data)
{
    ggml_set_input(t);
    r->inputs[r->n_inputs] = t;
    r->input_data[r->n_inputs] = data;
    r->n_inputs++;
    r->bytes += (double) ggml_nbytes(t);
    return t;
}

/* A buffer of buft holding the tensors of ctx, used as weights; NULL on failure (logged). */
static ggml_backend_buffer_t weights_buffer(struct ggml_context *ctx, ggml_backend_buffer_type_t buft)
{
    ggml_backend_buffer_t b = ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft);
    if (b != NULL)
        ggml_backend_buffer_set_usage(b, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    return b;
}

/* Allocates run r's weight tensors in a buffer of wbuft (those of wctx2 in one of wbuft2); false on failure. */
static bool alloc_weights(struct run *r, ggml_backend_buffer_type_t wbuft, ggml_backend_buffer_type_t wbuft2)
{
    r->wbuf = weights_buffer(r->wctx, wbuft);
    if (r->wctx2 != NULL)
        r->wbuf2 = weights_buffer(r->wctx2, wbuft2);
    return r->wbuf != NULL && (r->wctx2 == NULL || r->wbuf2 != NULL);
}

/*
 * Run r's output r->out (not NULL) marked as an output and its graph
 * built (graph_size nodes, or the default size when 0); the output's
 * bytes counted.
 */
static void finish_graph(struct run *r)
{
    ggml_set_output(r->out);
    r->graph = r->graph_size > 0 ? ggml_new_graph_custom(r->gctx, (size_t) r->graph_size, false)
                                 : ggml_new_graph(r->gctx);
    ggml_build_forward_expand(r->graph, r->out);
    r->bytes += (double) ggml_nbytes(r->out);
}

/* Floating-point operations of the product of weights w by n columns. */
static double product_flop(const struct ggml_tensor *w, int64_t n)
{
    return 2.0 * (double) w->ne[0] * (double) w->ne[1] * (double) n;
}

/* The block's graph; false when a constructor failed (logged). */
/* The block's graph; false when a constructor failed (logged).  With
 * wbuft2, the feed-forward weights are in a buffer of that type. */
static bool build_block(struct run *r, struct weight_cache *cache, enum ggml_type type, bool flash,
                        ggml_backend_buffer_type_t wbuft, ggml_backend_buffer_type_t wbuft2, int n_tokens)
{
    const int T = n_tokens, n_kv_embd = N_HEAD_KV * HEAD_DIM;
    struct ggml_init_params wp = { 16 * ggml_tensor_overhead(), NULL, true };
    r->wctx = ggml_init(wp);
    r->wctx2 = wbuft2 != NULL ? ggml_init(wp) : NULL;
    if (r->wctx == NULL || (wbuft2 != NULL && r->wctx2 == NULL))
        return false;
    struct ggml_context *ffn_ctx = wbuft2 != NULL ? r->wctx2 : r->wctx;
    struct ggml_tensor *attn_norm = ggml_new_tensor_1d(r->wctx, GGML_TYPE_F32, N_EMBD);
    struct ggml_tensor *ffn_norm = ggml_new_tensor_1d(ffn_ctx, GGML_TYPE_F32, N_EMBD);
    struct ggml_tensor *wq = ggml_new_tensor_2d(r->wctx, type, N_EMBD, N_EMBD);
    struct ggml_tensor *wk = ggml_new_tensor_2d(r->wctx, type, N_EMBD, n_kv_embd);
    struct ggml_tensor *wv = ggml_new_tensor_2d(r->wctx, type, N_EMBD, n_kv_embd);
    struct ggml_tensor *wo = ggml_new_tensor_2d(r->wctx, type, N_EMBD, N_EMBD);
    struct ggml_tensor *w_gate = ggml_new_tensor_2d(ffn_ctx, type, N_EMBD, N_FF);
    struct ggml_tensor *w_up = ggml_new_tensor_2d(ffn_ctx, type, N_EMBD, N_FF);
    struct ggml_tensor *w_down = ggml_new_tensor_2d(ffn_ctx, type, N_FF, N_EMBD);
    if (!alloc_weights(r, wbuft, wbuft2))
        return false;
    struct ggml_tensor *weights[] = { attn_norm, ffn_norm, wq, wk, wv, wo, w_gate, w_up, w_down };
    for (int i = 0; i < (int) (sizeof weights / sizeof weights[0]); i++) {
        const float amplitude = i < 2 ? 1.0f : 1.0f / sqrtf((float) weights[i]->ne[0]);
        load_weight(r, cache, i, weights[i], amplitude);
    }

    struct ggml_init_params gp = { 256 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    r->gctx = ggml_init(gp);
    if (r->gctx == NULL)
        return false;
    struct ggml_context *ctx = r->gctx;

    float *embd = xmalloc((size_t) N_EMBD * T * sizeof *embd);
    fill_random(embd, (size_t) N_EMBD * T, 7, 1.0f);
    int32_t *pos = xmalloc((size_t) T * sizeof *pos);
    for (int t = 0; t < T; t++)
        pos[t] = t;
    const int mask_rows = GGML_PAD(T, GGML_KQ_MASK_PAD);
    ggml_fp16_t *mask = xmalloc((size_t) T * mask_rows * sizeof *mask);
    for (int i = 0; i < mask_rows; i++)
        for (int j = 0; j < T; j++)
            mask[i * T + j] = ggml_fp32_to_fp16(j <= i ? 0.0f : -INFINITY);

    struct ggml_tensor *x = add_input(r, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, N_EMBD, T), embd);
    struct ggml_tensor *p = add_input(r, ggml_new_tensor_1d(ctx, GGML_TYPE_I32, T), pos);
    struct ggml_tensor *kq_mask = add_input(r, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, T, mask_rows), mask);

    struct ggml_tensor *cur = ggml_mul(ctx, ggml_rms_norm(ctx, x, RMS_EPS), attn_norm);
    struct ggml_tensor *q = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, wq, cur), HEAD_DIM, N_HEAD, T);
    struct ggml_tensor *k = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, wk, cur), HEAD_DIM, N_HEAD_KV, T);
    struct ggml_tensor *v = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, wv, cur), HEAD_DIM, N_HEAD_KV, T);
    q = ggml_rope_ext(ctx, q, p, NULL, HEAD_DIM, 0, 4096, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    k = ggml_rope_ext(ctx, k, p, NULL, HEAD_DIM, 0, 4096, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    const float scale = 1.0f / sqrtf((float) HEAD_DIM);
    struct ggml_tensor *attn;
    q = ggml_permute(ctx, q, 0, 2, 1, 3);                                  /* [hd, T, n_head] */
    if (flash) {
        /* K and V as an F16 cache holds them */
        struct ggml_tensor *k16 = ggml_permute(ctx, ggml_cast(ctx, k, GGML_TYPE_F16), 0, 2, 1, 3);
        struct ggml_tensor *v16 = ggml_permute(ctx, ggml_cast(ctx, v, GGML_TYPE_F16), 0, 2, 1, 3);
        attn = ggml_flash_attn_ext(ctx, q, k16, v16, kq_mask, scale, 0.0f, 0.0f);
        if (attn != NULL)
            ggml_flash_attn_ext_set_prec(attn, GGML_PREC_F32);
        attn = ggml_reshape_2d(ctx, attn, N_EMBD, T);                      /* [hd, n_head, T] */
    } else {
        k = ggml_permute(ctx, k, 0, 2, 1, 3);                              /* [hd, T, n_head_kv] */
        struct ggml_tensor *kq = ggml_soft_max_ext(ctx, ggml_mul_mat(ctx, k, q), kq_mask, scale, 0.0f);
        struct ggml_tensor *vt = ggml_cont(ctx, ggml_permute(ctx, v, 1, 2, 0, 3));  /* [T, hd, n_head_kv] */
        struct ggml_tensor *kqv = ggml_mul_mat(ctx, vt, kq);               /* [hd, T, n_head] */
        attn = ggml_reshape_2d(ctx, ggml_cont(ctx, ggml_permute(ctx, kqv, 0, 2, 1, 3)), N_EMBD, T);
    }
    x = ggml_add(ctx, x, ggml_mul_mat(ctx, wo, attn));
    cur = ggml_mul(ctx, ggml_rms_norm(ctx, x, RMS_EPS), ffn_norm);
    struct ggml_tensor *h = ggml_swiglu_split(ctx, ggml_mul_mat(ctx, w_gate, cur), ggml_mul_mat(ctx, w_up, cur));
    r->out = ggml_add(ctx, x, ggml_mul_mat(ctx, w_down, h));
    if (r->out == NULL)
        return false;
    finish_graph(r);

    /* the products with weights, and the two of the attention */
    r->flop = product_flop(wq, T) + product_flop(wk, T) + product_flop(wv, T) + product_flop(wo, T) +
              product_flop(w_gate, T) + product_flop(w_up, T) + product_flop(w_down, T) +
              2.0 * 2.0 * (double) T * T * HEAD_DIM * N_HEAD;
    return true;
}

static bool build_mul_mat(struct run *r, struct weight_cache *cache, enum ggml_type type, struct shape s,
                          ggml_backend_buffer_type_t wbuft)
{
    struct ggml_init_params wp = { 2 * ggml_tensor_overhead(), NULL, true };
    r->wctx = ggml_init(wp);
    if (r->wctx == NULL)
        return false;
    struct ggml_tensor *a = ggml_new_tensor_2d(r->wctx, type, s.k, s.m);
    if (a == NULL)
        return false;
    if (!alloc_weights(r, wbuft, NULL))
        return false;
    load_weight(r, cache, 0, a, 1.0f);

    struct ggml_init_params gp = { 4 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    r->gctx = ggml_init(gp);
    if (r->gctx == NULL)
        return false;
    float *bdata = xmalloc((size_t) (s.k * s.n) * sizeof *bdata);
    fill_random(bdata, (size_t) (s.k * s.n), 11, 1.0f);
    struct ggml_tensor *b = add_input(r, ggml_new_tensor_2d(r->gctx, GGML_TYPE_F32, s.k, s.n), bdata);
    r->out = ggml_mul_mat(r->gctx, a, b);
    if (r->out == NULL)
        return false;
    finish_graph(r);
    r->flop = product_flop(a, s.n);
    return true;
}

/*
 * The experts' FFN: token t uses experts 5t + 3u mod N_EXPERTS for u <
 * N_EXPERTS_USED (distinct, each expert as often over 8 tokens).  The
 * weights' bytes count every expert, whether the tokens read it or not.
 */
static bool build_moe(struct run *r, struct weight_cache *cache, enum ggml_type type,
                      ggml_backend_buffer_type_t wbuft, int n_tokens)
{
    const int T = n_tokens;
    struct ggml_init_params wp = { 4 * ggml_tensor_overhead(), NULL, true };
    r->wctx = ggml_init(wp);
    if (r->wctx == NULL)
        return false;
    struct ggml_tensor *gate = ggml_new_tensor_3d(r->wctx, type, N_EMBD, N_FF, N_EXPERTS);
    struct ggml_tensor *up = ggml_new_tensor_3d(r->wctx, type, N_EMBD, N_FF, N_EXPERTS);
    struct ggml_tensor *down = ggml_new_tensor_3d(r->wctx, type, N_FF, N_EMBD, N_EXPERTS);
    if (gate == NULL || up == NULL || down == NULL)
        return false;
    if (!alloc_weights(r, wbuft, NULL))
        return false;
    load_weight(r, cache, 0, gate, 0.03f);
    load_weight(r, cache, 1, up, 0.03f);
    load_weight(r, cache, 2, down, 0.02f);

    struct ggml_init_params gp = { 16 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    r->gctx = ggml_init(gp);
    if (r->gctx == NULL)
        return false;
    float *xdata = xmalloc((size_t) N_EMBD * (size_t) T * sizeof *xdata);
    fill_random(xdata, (size_t) N_EMBD * (size_t) T, 17, 1.0f);
    int32_t *iddata = xmalloc((size_t) N_EXPERTS_USED * (size_t) T * sizeof *iddata);
    for (int t = 0; t < T; t++)
        for (int u = 0; u < N_EXPERTS_USED; u++)
            iddata[t * N_EXPERTS_USED + u] = (5 * t + 3 * u) % N_EXPERTS;
    struct ggml_tensor *x = add_input(r, ggml_new_tensor_3d(r->gctx, GGML_TYPE_F32, N_EMBD, 1, T), xdata);
    struct ggml_tensor *ids = add_input(r, ggml_new_tensor_2d(r->gctx, GGML_TYPE_I32, N_EXPERTS_USED, T), iddata);
    struct ggml_tensor *h = ggml_swiglu_split(r->gctx, ggml_mul_mat_id(r->gctx, gate, x, ids),
                                              ggml_mul_mat_id(r->gctx, up, x, ids));
    r->out = ggml_mul_mat_id(r->gctx, down, h, ids);
    if (r->out == NULL)
        return false;
    finish_graph(r);
    r->flop = product_flop(gate, N_EXPERTS_USED * T) + product_flop(up, N_EXPERTS_USED * T) +
              product_flop(down, N_EXPERTS_USED * T);
    return true;
}

/* The chain of tiny nodes: the engine's cost per node, not the kernels'. */
static bool build_dispatch(struct run *r)
{
    r->graph_size = DISPATCH_NODES + 64;
    struct ggml_init_params gp = { (size_t) r->graph_size * ggml_tensor_overhead() +
                                       ggml_graph_overhead_custom((size_t) r->graph_size, false),
                                   NULL, true };
    r->gctx = ggml_init(gp);
    if (r->gctx == NULL)
        return false;
    float *xdata = xmalloc(DISPATCH_WIDTH * sizeof *xdata);
    fill_random(xdata, DISPATCH_WIDTH, 13, 1.0f);
    struct ggml_tensor *cur = add_input(r, ggml_new_tensor_1d(r->gctx, GGML_TYPE_F32, DISPATCH_WIDTH), xdata);
    /* 1.0001^4000 < 1.5: the values stay finite */
    for (int i = 0; i < DISPATCH_NODES && cur != NULL; i++)
        cur = ggml_scale(r->gctx, cur, 1.0001f);
    if ((r->out = cur) == NULL)
        return false;
    finish_graph(r);
    return true;
}

/* ------------------------------------------------------ the per-op mode */

/*
 * An input of run r of type F32 or F16, values in [-amplitude, amplitude)
 * (seed seed), stored in that type.
 */
static struct ggml_tensor *random_input(struct run *r, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2,
                                        uint64_t seed, float amplitude)
{
    struct ggml_tensor *t = ggml_new_tensor_3d(r->gctx, type, ne0, ne1, ne2);
    if (t == NULL)
        return NULL;
    const size_t n = (size_t) ggml_nelements(t);
    float *values = xmalloc(n * sizeof *values);
    fill_random(values, n, seed, amplitude);
    if (type == GGML_TYPE_F32)
        return add_input(r, t, values);
    ggml_fp16_t *halves = xmalloc(n * sizeof *halves);
    ggml_fp32_to_fp16_row(values, halves, (int64_t) n);
    free(values);
    return add_input(r, t, halves);
}

/* An I32 input of n values, value i being (i * step) mod modulus. */
static struct ggml_tensor *index_input(struct run *r, int64_t n, int64_t step, int64_t modulus)
{
    struct ggml_tensor *t = ggml_new_tensor_1d(r->gctx, GGML_TYPE_I32, n);
    if (t == NULL)
        return NULL;
    int32_t *data = xmalloc((size_t) n * sizeof *data);
    for (int64_t i = 0; i < n; i++)
        data[i] = (int32_t) ((i * step) % modulus);
    return add_input(r, t, data);
}

/*
 * The cases of --op ops: rows of 4096 values, 512 tokens, attention with
 * heads of 128 values (32 query heads, 8 key/value heads).  FLOP: one a
 * value of the larger of the first operand and the output for the
 * arithmetic ops, none for the ones that move data (and sort); the
 * product and the attention: their multiply-adds twice.
 */
enum op_case {
    CASE_ADD, CASE_MUL_BCAST, CASE_SCALE, CASE_RMS_NORM, CASE_NORM, CASE_SOFT_MAX, CASE_ROPE, CASE_SILU,
    CASE_GELU, CASE_SWIGLU, CASE_CAST_F16, CASE_CONT_TRANSPOSE, CASE_GET_ROWS, CASE_SUM_ROWS, CASE_ARGSORT,
    CASE_CONCAT, CASE_MUL_MAT, CASE_FLASH_ATTN, N_CASES
};
static const char *const op_cases[N_CASES] = {
    "ADD 4096x512",     "MUL 4096x512*4096", "SCALE 4096x512",  "RMS_NORM 4096x512", "NORM 4096x512",
    "SOFT_MAX 512x512x32", "ROPE 128x32x512", "SILU 4096x512",  "GELU 4096x512",     "SWIGLU 8192x512",
    "CPY F16 4096x512", "CONT T 4096x512",   "GET_ROWS 512/4096", "SUM_ROWS 4096x512", "ARGSORT 1024x512",
    "CONCAT 2x4096x256", "MUL_MAT 4096x512x4096", "FLASH_ATTN 128x64/1024",
};

/* Run r's graph for case which; false when a constructor failed (logged). */
static bool build_op_case(struct run *r, enum op_case which)
{
    struct ggml_init_params gp = { 16 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    r->gctx = ggml_init(gp);
    if (r->gctx == NULL)
        return false;
    struct ggml_context *ctx = r->gctx;
    const int64_t W = 4096, T = 512, HD = 128;
    struct ggml_tensor *a = NULL, *b = NULL, *out = NULL;
    bool arithmetic = true;
    switch (which) {
    case CASE_ADD:
        a = random_input(r, GGML_TYPE_F32, W, T, 1, 21, 1.0f), b = random_input(r, GGML_TYPE_F32, W, T, 1, 22, 1.0f);
        out = a && b ? ggml_add(ctx, a, b) : NULL;
        break;
    case CASE_MUL_BCAST:
        a = random_input(r, GGML_TYPE_F32, W, T, 1, 21, 1.0f), b = random_input(r, GGML_TYPE_F32, W, 1, 1, 22, 1.0f);
        out = a && b ? ggml_mul(ctx, a, b) : NULL;
        break;
    case CASE_SCALE:
        out = (a = random_input(r, GGML_TYPE_F32, W, T, 1, 21, 1.0f)) ? ggml_scale(ctx, a, 0.5f) : NULL;
        break;
    case CASE_RMS_NORM:
        out = (a = random_input(r, GGML_TYPE_F32, W, T, 1, 21, 1.0f)) ? ggml_rms_norm(ctx, a, 1e-5f) : NULL;
        break;
    case CASE_NORM:
        out = (a = random_input(r, GGML_TYPE_F32, W, T, 1, 21, 1.0f)) ? ggml_norm(ctx, a, 1e-5f) : NULL;
        break;
    case CASE_SOFT_MAX:
        out = (a = random_input(r, GGML_TYPE_F32, T, T, 32, 21, 4.0f)) ? ggml_soft_max(ctx, a) : NULL;
        break;
    case CASE_ROPE:
        a = random_input(r, GGML_TYPE_F32, HD, 32, T, 21, 1.0f), b = index_input(r, T, 1, T);
        out = a && b ? ggml_rope(ctx, a, b, (int) HD, 0) : NULL;
        break;
    case CASE_SILU:
        out = (a = random_input(r, GGML_TYPE_F32, W, T, 1, 21, 4.0f)) ? ggml_silu(ctx, a) : NULL;
        break;
    case CASE_GELU:
        out = (a = random_input(r, GGML_TYPE_F32, W, T, 1, 21, 4.0f)) ? ggml_gelu(ctx, a) : NULL;
        break;
    case CASE_SWIGLU:
        out = (a = random_input(r, GGML_TYPE_F32, 2 * W, T, 1, 21, 4.0f)) ? ggml_swiglu(ctx, a) : NULL;
        break;
    case CASE_CAST_F16:
        out = (a = random_input(r, GGML_TYPE_F32, W, T, 1, 21, 1.0f)) ? ggml_cast(ctx, a, GGML_TYPE_F16) : NULL;
        arithmetic = false;
        break;
    case CASE_CONT_TRANSPOSE:
        out = (a = random_input(r, GGML_TYPE_F32, W, T, 1, 21, 1.0f)) ? ggml_cont(ctx, ggml_transpose(ctx, a)) : NULL;
        arithmetic = false;
        break;
    case CASE_GET_ROWS:
        a = random_input(r, GGML_TYPE_F32, W, 4096, 1, 21, 1.0f), b = index_input(r, T, 7, 4096);
        out = a && b ? ggml_get_rows(ctx, a, b) : NULL;
        arithmetic = false;
        break;
    case CASE_SUM_ROWS:
        out = (a = random_input(r, GGML_TYPE_F32, W, T, 1, 21, 1.0f)) ? ggml_sum_rows(ctx, a) : NULL;
        break;
    case CASE_ARGSORT:
        a = random_input(r, GGML_TYPE_F32, 1024, T, 1, 21, 1.0f);
        out = a ? ggml_argsort(ctx, a, GGML_SORT_ORDER_ASC) : NULL;
        arithmetic = false;
        break;
    case CASE_CONCAT:
        a = random_input(r, GGML_TYPE_F32, W, T / 2, 1, 21, 1.0f);
        b = random_input(r, GGML_TYPE_F32, W, T / 2, 1, 22, 1.0f);
        out = a && b ? ggml_concat(ctx, a, b, 1) : NULL;
        arithmetic = false;
        break;
    case CASE_MUL_MAT:
        a = random_input(r, GGML_TYPE_F32, W, W, 1, 21, 0.02f), b = random_input(r, GGML_TYPE_F32, W, T, 1, 22, 1.0f);
        out = a && b ? ggml_mul_mat(ctx, a, b) : NULL;
        if (out != NULL)
            r->flop = 2.0 * (double) W * (double) W * (double) T;
        arithmetic = false;
        break;
    case CASE_FLASH_ATTN: {
        const int64_t nq = 64, nkv = 1024;
        struct ggml_tensor *q = random_input(r, GGML_TYPE_F32, HD, nq, 32, 21, 1.0f);
        struct ggml_tensor *k = random_input(r, GGML_TYPE_F16, HD, nkv, 8, 22, 1.0f);
        struct ggml_tensor *v = random_input(r, GGML_TYPE_F16, HD, nkv, 8, 23, 1.0f);
        out = q && k && v ? ggml_flash_attn_ext(ctx, q, k, v, NULL, 1.0f / sqrtf((float) HD), 0.0f, 0.0f) : NULL;
        if (out != NULL)
            r->flop = 4.0 * (double) HD * (double) nq * (double) nkv * 32.0;
        arithmetic = false;
        break;
    }
    default:
        return false;
    }
    if ((r->out = out) == NULL)
        return false;
    finish_graph(r);
    if (arithmetic)
        r->flop = (double) (ggml_nelements(a) > ggml_nelements(out) ? ggml_nelements(a) : ggml_nelements(out));
    if (which == CASE_GET_ROWS)   /* the rows read, not the whole table */
        r->bytes = 2.0 * (double) ggml_nbytes(out) + (double) ggml_nbytes(b);
    return true;
}

static void run_free(struct run *r)
{
    for (int i = 0; i < r->n_inputs; i++)
        free(r->input_data[i]);
    ggml_backend_buffer_free(r->wbuf);
    ggml_backend_buffer_free(r->wbuf2);
    ggml_free(r->gctx);
    ggml_free(r->wctx);
    ggml_free(r->wctx2);
}

/* Config c's backends and scheduler over a built run, from timing_start to timing_end. */
struct timing {
    ggml_backend_t backends[3];
    int n_backends;
    ggml_backend_sched_t sched;
    double *t;   /* the repetitions' times */
    bool ok;     /* set up, and every computation so far succeeded */
};

/* Sets up config c for the run's graph, loads its inputs and computes it
 * once (the warm-up); tm->ok is false on failure. */
static void timing_start(struct timing *tm, struct run *r, const struct config *c, int n_threads, int reps)
{
    memset(tm, 0, sizeof *tm);
    tm->t = xmalloc((size_t) reps * sizeof *tm->t);
    ggml_backend_dev_t cpu_dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (c->dev != cpu_dev)
        tm->backends[tm->n_backends++] = ggml_backend_dev_init(c->dev, NULL);
    if (c->dev2 != NULL)
        tm->backends[tm->n_backends++] = ggml_backend_dev_init(c->dev2, NULL);
    tm->backends[tm->n_backends++] = ggml_backend_dev_init(cpu_dev, NULL);
    for (int i = 0; i < tm->n_backends; i++) {
        if (tm->backends[i] == NULL)
            return;
        set_threads(tm->backends[i], n_threads);
    }
    const size_t graph_size =
        r->graph_size > GGML_DEFAULT_GRAPH_SIZE ? (size_t) r->graph_size : GGML_DEFAULT_GRAPH_SIZE;
    tm->sched = ggml_backend_sched_new(tm->backends, NULL, tm->n_backends, graph_size, false, true);
    if (tm->sched == NULL || !ggml_backend_sched_alloc_graph(tm->sched, r->graph))
        return;
    for (int i = 0; i < r->n_inputs; i++)
        ggml_backend_tensor_set(r->inputs[i], r->input_data[i], 0, ggml_nbytes(r->inputs[i]));
    tm->ok = ggml_backend_sched_graph_compute(tm->sched, r->graph) == GGML_STATUS_SUCCESS;
}

/* Times repetition rep of the run's graph; a failure ends the timing. */
static void timing_rep(struct timing *tm, struct run *r, int rep)
{
    if (!tm->ok)
        return;
    const double t0 = tool_now();
    tm->ok = ggml_backend_sched_graph_compute(tm->sched, r->graph) == GGML_STATUS_SUCCESS;
    tm->t[rep] = tool_now() - t0;
}

/* Frees what timing_start set up and returns the summary of the reps
 * times, or NAN times on failure or a non-finite F32 result (reported). */
static struct times timing_end(struct timing *tm, struct run *r, const struct config *c, int reps)
{
    struct times result = tm->ok ? summarize(tm->t, reps) : no_times;
    /* a result that is not finite means a broken kernel, not a speed */
    size_t count = tm->ok && r->out->type == GGML_TYPE_F32 ? (size_t) ggml_nelements(r->out) : 0;
    float *out = xmalloc(count * sizeof *out);
    ggml_backend_tensor_get(r->out, out, 0, count * sizeof *out);
    for (size_t i = 0; i < count; i++)
        if (!isfinite(out[i])) {
            fprintf(stderr, PROGRAM ": %s: the result has a non-finite value at %zu\n", c->label, i);
            result = no_times;
            break;
        }
    free(out);
    free(tm->t);
    ggml_backend_sched_free(tm->sched);
    for (int i = 0; i < tm->n_backends; i++)
        ggml_backend_free(tm->backends[i]);
    return result;
}

/* ------------------------------------------------------- references */

/*
 * The BLAS device, when a plugin gives one: its F32 products are
 * cblas_sgemm calls on the operands in place, so the tool measures sgemm
 * through it and links no BLAS library itself.
 */
static ggml_backend_dev_t sgemm_device(void)
{
    return ggml_backend_dev_by_name("BLAS");
}

/*
 * Median of reps F32 products of shape s on the BLAS device (after one
 * more), with n_threads threads and min_batch=1 so that it takes any
 * shape; NAN without the device or when a step fails.
 */
static double time_sgemm(struct shape s, int n_threads, int reps)
{
    ggml_backend_dev_t dev = sgemm_device();
    char params[64];
    snprintf(params, sizeof params, "min_batch=1 n_threads=%d", n_threads);
    ggml_backend_t blas = dev != NULL ? ggml_backend_dev_init(dev, params) : NULL;
    if (blas == NULL)
        return NAN;
    struct ggml_init_params ip = { 4 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(ip);
    double median = NAN;
    if (ctx != NULL) {
        struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, s.k, s.m);
        struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, s.k, s.n);
        struct ggml_tensor *c = ggml_mul_mat(ctx, a, b);
        struct ggml_cgraph *gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, c);
        ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, blas);
        if (buf != NULL) {
            float *host = xmalloc((size_t) (s.k * (s.m > s.n ? s.m : s.n)) * sizeof *host);
            fill_random(host, (size_t) (s.k * s.m), 1, 1.0f);
            ggml_backend_tensor_set(a, host, 0, ggml_nbytes(a));
            fill_random(host, (size_t) (s.k * s.n), 2, 1.0f);
            ggml_backend_tensor_set(b, host, 0, ggml_nbytes(b));
            free(host);
            double *t = xmalloc((size_t) reps * sizeof *t);
            bool ok = true;
            for (int rep = 0; ok && rep <= reps; rep++) {
                const double t0 = tool_now();
                ok = ggml_backend_graph_compute(blas, gf) == GGML_STATUS_SUCCESS;
                if (rep > 0)
                    t[rep - 1] = tool_now() - t0;
            }
            if (ok)
                median = summarize(t, reps).median;
            free(t);
            ggml_backend_buffer_free(buf);
        }
        ggml_free(ctx);
    }
    ggml_backend_free(blas);
    return median;
}

/*
 * A memory-bandwidth loop run by n threads, each over its part [begin,
 * end) of the arrays: touch once (pages near the thread), then reps + 1
 * timed passes between barriers (the first warms up); thread 0 records
 * each pass's time.
 */
struct bw_part {
    void (*touch)(struct bw_part *);
    void (*pass)(struct bw_part *);
    double *a, *b, *c;        /* the triad's arrays */
    unsigned char *bytes;     /* the read loop's buffer */
    size_t begin, end;
    int reps;
    pthread_barrier_t *barrier;
    double *times;
    bool first;
    volatile bool sink;       /* keeps the read loop's result alive */
};

static void *bw_thread(void *arg)
{
    struct bw_part *p = arg;
    p->touch(p);
    for (int rep = 0; rep <= p->reps; rep++) {
        pthread_barrier_wait(p->barrier);
        double t0 = tool_now();
        p->pass(p);
        pthread_barrier_wait(p->barrier);
        if (p->first)
            p->times[rep] = tool_now() - t0;
    }
    return NULL;
}

/* Runs the loop of proto on n_threads threads over n elements; the best
   pass's seconds, or NAN when out of memory. */
static double bw_run(const struct bw_part *proto, size_t n, int n_threads, int reps)
{
    struct bw_part *parts = calloc((size_t) n_threads, sizeof *parts);
    pthread_t *threads = calloc((size_t) n_threads, sizeof *threads);
    double *times = calloc((size_t) reps + 1, sizeof *times);
    double best = NAN;
    pthread_barrier_t barrier;
    if (parts == NULL || threads == NULL || times == NULL ||
        pthread_barrier_init(&barrier, NULL, (unsigned) n_threads) != 0)
        goto out;
    int started = 0;
    for (int t = 0; t < n_threads; t++) {
        parts[t] = *proto;
        parts[t].begin = n * (size_t) t / (size_t) n_threads;
        parts[t].end = n * (size_t) (t + 1) / (size_t) n_threads;
        parts[t].reps = reps;
        parts[t].barrier = &barrier;
        parts[t].times = times;
        parts[t].first = t == 0;
        if (t > 0 && pthread_create(&threads[t], NULL, bw_thread, &parts[t]) != 0)
            break;
        started++;
    }
    if (started != n_threads) {
        fprintf(stderr, PROGRAM ": cannot start the bandwidth threads\n");
        exit(1);   /* the started threads wait at the barrier for ever */
    }
    bw_thread(&parts[0]);
    best = INFINITY;
    for (int rep = 1; rep <= reps; rep++)
        best = fmin(best, times[rep]);
    for (int t = 1; t < n_threads; t++)
        pthread_join(threads[t], NULL);
    pthread_barrier_destroy(&barrier);
out:
    free(parts);
    free(threads);
    free(times);
    return best;
}

static void triad_touch(struct bw_part *p)
{
    for (size_t i = p->begin; i < p->end; i++) {
        p->a[i] = 0.0;
        p->b[i] = 1.0;
        p->c[i] = 2.0;
    }
}

static void triad_pass(struct bw_part *p)
{
    for (size_t i = p->begin; i < p->end; i++)
        p->a[i] = p->b[i] + 3.0 * p->c[i];
}

/* Best STREAM triad bandwidth in bytes per second (24 bytes per element), or NAN. */
static double stream_triad(int n_threads, int reps)
{
    const size_t n = (size_t) 1 << 23;   /* 64 MiB per array */
    struct bw_part proto = { .touch = triad_touch, .pass = triad_pass };
    proto.a = malloc(n * sizeof *proto.a);
    proto.b = malloc(n * sizeof *proto.b);
    proto.c = malloc(n * sizeof *proto.c);
    double seconds = NAN;
    if (proto.a != NULL && proto.b != NULL && proto.c != NULL)
        seconds = bw_run(&proto, n, n_threads, reps);
    free(proto.a);
    free(proto.b);
    free(proto.c);
    return 3.0 * sizeof(double) * (double) n / seconds;
}

static void read_touch(struct bw_part *p)
{
    memset(p->bytes + p->begin, 0, p->end - p->begin);
}

/* Reads every byte of the part: the C library's memchr, vectorized for
   the machine, looks for a byte the buffer does not hold. */
static void read_pass(struct bw_part *p)
{
    p->sink = memchr(p->bytes + p->begin, 1, p->end - p->begin) != NULL;
}

/* Best bandwidth in bytes per second of n_threads reading a buffer of
   size bytes again and again (as a product reads its weights), or NAN. */
static double read_bandwidth(size_t size, int n_threads, int reps)
{
    struct bw_part proto = { .touch = read_touch, .pass = read_pass };
    proto.bytes = malloc(size);
    double seconds = proto.bytes != NULL && size > 0 ? bw_run(&proto, size, n_threads, reps) : NAN;
    free(proto.bytes);
    return (double) size / seconds;
}

/* ------------------------------------------------------------ output */

static double gflops(const struct row *r)
{
    return r->flop / r->seconds * 1e-9;
}

static double gbps(const struct row *r)
{
    return r->bytes / r->seconds * 1e-9;
}

/* The weight matrices' bytes a second, in GB/s; NAN without weights. */
static double weight_gbps(const struct row *r)
{
    return r->weight_bytes > 0 ? r->weight_bytes / r->seconds * 1e-9 : NAN;
}

/* v in width columns with prec decimals, or none when v is not a number. */
static void print_number(FILE *out, int width, int prec, double v, const char *none)
{
    if (isnan(v))
        fprintf(out, "%*s", width, none);
    else
        fprintf(out, "%*.*f", width, prec, v);
}

static void json_number(double v)
{
    if (isnan(v) || isinf(v))
        fputs("null", stdout);
    else
        printf("%.6g", v);
}

/* The CPU registry's feature name (the kernel level: "ISA"), or "?". */
static const char *cpu_feature(const char *name)
{
    const char *value = tool_reg_feature(ggml_backend_reg_by_name("CPU"), name);
    return value != NULL ? value : "?";
}

/* The processor's name, as the CPU device describes it. */
static const char *cpu_name(void)
{
    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    return cpu != NULL ? ggml_backend_dev_description(cpu) : "?";
}

/* The line that says what ran where: program, library, processor, kernel level, threads, repetitions. */
static void print_identity(const struct options *o, const char *prefix)
{
    printf("%s" PROGRAM " %s, libggml-backend %s (commit %s); %s, CPU kernels %s; %d thread%s, median of %d\n", prefix,
           PACKAGE_VERSION, ggml_version(), ggml_commit(), cpu_name(), cpu_feature("ISA"), o->n_threads,
           o->n_threads == 1 ? "" : "s", o->reps);
}

/* The spread of a row's times: (slowest - fastest) / median, in percent. */
static double spread_percent(const struct row *r)
{
    return (r->slowest - r->fastest) / r->seconds * 100.0;
}

/*
 * The row's numbers after its names: in Markdown (separator " | ") the
 * times first, median, fastest, slowest; in CSV (',') the median first and
 * the fastest and slowest last, so that the columns of older versions
 * keep their places.
 */
static void print_row_numbers(const struct row *r, const char *sep)
{
    const bool csv = sep[0] == ',';
    const double rates[] = { r->flop > 0 ? gflops(r) : NAN, gbps(r), weight_gbps(r), r->vs_sgemm, r->vs_stream,
                             r->vs_read };
    static const int rate_prec[] = { 3, 3, 3, 4, 4, 4 };
    const double times[] = { r->seconds * 1e3, r->fastest * 1e3, r->slowest * 1e3 };
    const int n_first = csv ? 1 : 3;
    for (int i = 0; i < n_first; i++) {
        fputs(sep, stdout);
        print_number(stdout, 0, 4, times[i], csv ? "" : "-");
    }
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        fputs(sep, stdout);
        print_number(stdout, 0, rate_prec[i], rates[i], csv ? "" : "-");
    }
    for (int i = n_first; i < 3; i++) {
        fputs(sep, stdout);
        print_number(stdout, 0, 4, times[i], "");
    }
}

/* Printed before the first row. */
static void print_head(const struct options *o)
{
    switch (o->format) {
    case FORMAT_TABLE:
        print_identity(o, "");
        printf("%-24s %-7s %-12s %10s %7s %10s %9s %9s", "workload", "type", "device", "ms", "+-%", "GFLOP/s", "GB/s",
               "wGB/s");
        if (o->compare_blas)
            printf(" %9s", "vs sgemm");
        if (o->compare_stream)
            printf(" %9s %9s", "vs STREAM", "vs read");
        printf("\n");
        break;
    case FORMAT_MARKDOWN:
        print_identity(o, "");
        printf("\n| workload | type | device | ms | min ms | max ms | GFLOP/s | GB/s | wGB/s | vs sgemm | vs STREAM "
               "| vs read |\n|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
        break;
    case FORMAT_CSV:
        printf("workload,type,device,ms,gflops,gbps,weight_gbps,vs_sgemm,vs_stream,vs_read,ms_min,ms_max\n");
        break;
    case FORMAT_JSON:
        tool_json_identity(PROGRAM);
        printf(",\n  \"cpu\": ");
        tool_json_string(stdout, cpu_name());
        printf(",\n  \"cpu_kernels\": ");
        tool_json_string(stdout, cpu_feature("ISA"));
        printf(",\n  \"threads\": %d,\n  \"reps\": %d,\n  \"sgemm_available\": %s", o->n_threads, o->reps,
               sgemm_device() != NULL ? "true" : "false");
        printf(",\n  \"results\": [");
        break;
    }
    fflush(stdout);
}

/* Row number index (from 0), printed as soon as it is measured. */
static void print_row(const struct options *o, const struct row *r, size_t index)
{
    progress(0, 0, NULL); /* a progress line on the same terminal goes first */
    switch (o->format) {
    case FORMAT_TABLE:
        printf("%-24s %-7s %-12s ", r->workload, r->type, r->device);
        if (isnan(r->seconds)) {
            printf("%10s\n", "failed");
            break;
        }
        printf("%10.2f ", r->seconds * 1e3);
        print_number(stdout, 7, 1, spread_percent(r), "-");
        putchar(' ');
        print_number(stdout, 10, 1, r->flop > 0 ? gflops(r) : NAN, "-");
        putchar(' ');
        print_number(stdout, 9, 2, gbps(r), "-");
        putchar(' ');
        print_number(stdout, 9, 2, weight_gbps(r), "-");
        if (o->compare_blas) {
            putchar(' ');
            print_number(stdout, 9, 2, r->vs_sgemm, "-");
        }
        if (o->compare_stream) {
            putchar(' ');
            print_number(stdout, 9, 2, r->vs_stream, "-");
            putchar(' ');
            print_number(stdout, 9, 2, r->vs_read, "-");
        }
        printf("\n");
        break;
    case FORMAT_MARKDOWN:
        printf("| %s | %s | %s", r->workload, r->type, r->device);
        print_row_numbers(r, " | ");
        printf(" |\n");
        break;
    case FORMAT_CSV:
        printf("%s,%s,%s", r->workload, r->type, r->device);
        print_row_numbers(r, ",");
        putchar('\n');
        break;
    case FORMAT_JSON:
        printf("%s\n    {\"workload\": ", index ? "," : "");
        tool_json_string(stdout, r->workload);
        printf(", \"type\": ");
        tool_json_string(stdout, r->type);
        printf(", \"device\": ");
        tool_json_string(stdout, r->device);
        const char *names[] = { "ms", "ms_min", "ms_max", "gflops", "gbps", "weight_gbps", "vs_sgemm", "vs_stream",
                                "vs_read" };
        const double v[] = { r->seconds * 1e3, r->fastest * 1e3, r->slowest * 1e3, r->flop > 0 ? gflops(r) : NAN,
                             gbps(r), weight_gbps(r), r->vs_sgemm, r->vs_stream, r->vs_read };
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
            printf(", \"%s\": ", names[i]);
            json_number(v[i]);
        }
        printf("}");
        break;
    }
    fflush(stdout);
}

/* One line of the text after the table: a list item in Markdown. */
static void tail_line(bool markdown, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tail_line(bool markdown, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(markdown ? "- " : "", stdout);
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
}

/* Printed after the last row: what the columns mean (table, Markdown), the totals. */
static void print_tail(const struct results *res, const struct options *o, double stream_bps, double total)
{
    if (o->format == FORMAT_CSV)
        return;
    if (o->format == FORMAT_JSON) {
        printf("%s],\n  \"stream_gbps\": ", res->n ? "\n  " : "");
        json_number(stream_bps * 1e-9);
        printf(",\n  \"numa\": ");
        tool_json_string(stdout, o->numa != GGML_NUMA_STRATEGY_COUNT ? tool_numa_name(o->numa) : NULL);
        printf(",\n  \"numa_nodes_used\": %s", ggml_is_numa() ? "true" : "false");
        printf(",\n  \"total_seconds\": %.3f\n}\n", total);
        return;
    }
    const bool md = o->format == FORMAT_MARKDOWN;
    if (md)
        printf("\n");
    tail_line(md, "ms: the median of the repetitions; %s",
              md ? "min ms, max ms: the fastest and the slowest" : "+-%: (slowest - fastest) / median");
    tail_line(md, "GB/s, wGB/s: the bytes the graph reads and writes, and the weight matrices' bytes, over the time");
    if (o->compare_blas) {
        if (sgemm_device() != NULL)
            tail_line(md, "vs sgemm: median cblas_sgemm time of the same shape in F32 (through the BLAS device) "
                          "over this time (above 1: faster)");
        else
            tail_line(md, "vs sgemm: unavailable, no BLAS device (the BLAS plugin is not installed)");
    }
    if (o->compare_stream && !isnan(stream_bps))
        tail_line(md, "vs STREAM: GB/s over the STREAM triad's %.2f GB/s; vs read: over the rate of reading as many "
                  "bytes as the row moves, again and again (what fits in cache stays there)", stream_bps * 1e-9);
    for (size_t i = 0; i < res->n; i++)
        if (strncmp(res->rows[i].workload, "dispatch", 8) == 0 && !isnan(res->rows[i].seconds))
            tail_line(md, "dispatch on %s: %.3f us per node", res->rows[i].device,
                      res->rows[i].seconds * 1e6 / DISPATCH_NODES);
    printf("%s%d thread%s, median of %d; total %.1f s", md ? "- " : "", o->n_threads, o->n_threads == 1 ? "" : "s",
           o->reps, total);
    if (o->numa != GGML_NUMA_STRATEGY_COUNT)
        printf("; NUMA %s%s", tool_numa_name(o->numa), ggml_is_numa() ? "" : " (one node: no placement)");
    printf("\n");
}

/* ------------------------------------------------------------ roofline */

/* The plot takes the top SVG_H pixels; the list of rows at its right may make the picture taller. */
enum { SVG_W = 940, SVG_H = 560, SVG_LEFT = 80, SVG_RIGHT = 330, SVG_TOP = 50, SVG_BOTTOM = 70, SVG_LINE = 14 };

/* The log-scaled axes of the picture: [lo, hi] decades mapped onto the plot area. */
struct axes {
    double x_lo, x_hi, y_lo, y_hi; /* log10 of FLOP per byte and of GFLOP/s */
};

static double svg_x(const struct axes *a, double intensity)
{
    return SVG_LEFT + (log10(intensity) - a->x_lo) / (a->x_hi - a->x_lo) * (SVG_W - SVG_LEFT - SVG_RIGHT);
}

static double svg_y(const struct axes *a, double gflop_s)
{
    return SVG_H - SVG_BOTTOM - (log10(gflop_s) - a->y_lo) / (a->y_hi - a->y_lo) * (SVG_H - SVG_TOP - SVG_BOTTOM);
}

/* Writes s with XML's special characters escaped. */
static void svg_text(FILE *f, const char *s)
{
    for (; *s != '\0'; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* Rows with floating-point work and a time: the points of the picture. */
static bool plotted(const struct row *r)
{
    return r->flop > 0 && r->bytes > 0 && !isnan(r->seconds);
}

/* The fastest cblas_sgemm among the mul_mat rows, in GFLOP/s; NAN when none was measured. */
static double sgemm_peak(const struct results *res)
{
    double peak = NAN;
    for (size_t i = 0; i < res->n; i++) {
        const struct row *r = &res->rows[i];
        if (plotted(r) && !isnan(r->vs_sgemm) && r->vs_sgemm > 0) {
            const double g = r->flop / (r->vs_sgemm * r->seconds) * 1e-9;
            if (isnan(peak) || g > peak)
                peak = g;
        }
    }
    return peak;
}

/*
 * Axes covering every point and both ceilings, in whole decades: the
 * intensities from 1/100 to 1000 at least, the rates from 1 GFLOP/s.
 */
static struct axes svg_axes(const struct results *res, double bw_gbps, double peak)
{
    double x_min = 0.01, x_max = 1000.0, y_min = 1.0, y_max = 10.0;
    for (size_t i = 0; i < res->n; i++) {
        const struct row *r = &res->rows[i];
        if (!plotted(r))
            continue;
        x_min = fmin(x_min, r->flop / r->bytes);
        x_max = fmax(x_max, r->flop / r->bytes);
        y_min = fmin(y_min, gflops(r));
        y_max = fmax(y_max, gflops(r));
    }
    if (!isnan(peak))
        y_max = fmax(y_max, peak);
    if (!isnan(bw_gbps))
        y_min = fmin(y_min, bw_gbps * x_min);
    return (struct axes) { floor(log10(x_min)), ceil(log10(x_max)), floor(log10(y_min)), ceil(log10(y_max) + 0.01) };
}

/* The decades' grid lines and labels. */
static void svg_grid(FILE *f, const struct axes *a)
{
    for (double d = a->x_lo; d <= a->x_hi + 1e-9; d++) {
        const double x = svg_x(a, pow(10.0, d));
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", x, SVG_TOP, x,
                SVG_H - SVG_BOTTOM);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", x, SVG_H - SVG_BOTTOM + 18,
                pow(10.0, d));
    }
    for (double d = a->y_lo; d <= a->y_hi + 1e-9; d++) {
        const double y = svg_y(a, pow(10.0, d));
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", SVG_LEFT, y,
                SVG_W - SVG_RIGHT, y);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", SVG_LEFT - 6, y + 4, pow(10.0, d));
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">arithmetic intensity (FLOP per byte moved)</text>\n",
            (SVG_LEFT + SVG_W - SVG_RIGHT) / 2, SVG_H - 20);
    fprintf(f, "<text transform=\"translate(22 %d) rotate(-90)\" text-anchor=\"middle\">GFLOP/s</text>\n",
            (SVG_TOP + SVG_H - SVG_BOTTOM) / 2);
}

/* The two ceilings: bandwidth times intensity, and sgemm's rate; each drawn when measured. */
static void svg_ceilings(FILE *f, const struct axes *a, double bw_gbps, double peak)
{
    const double x0 = pow(10.0, a->x_lo), x1 = pow(10.0, a->x_hi);
    if (!isnan(bw_gbps)) {
        /* y = bw * x, clipped to the plot (and to the compute ceiling) */
        const double top = isnan(peak) ? pow(10.0, a->y_hi) : peak;
        const double xa = fmax(x0, pow(10.0, a->y_lo) / bw_gbps), xb = fmin(x1, top / bw_gbps);
        if (xa < xb)
            fprintf(f,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#1f77b4\" stroke-width=\"2\"/>\n"
                    "<text x=\"%.1f\" y=\"%.1f\" fill=\"#1f77b4\">STREAM %.1f GB/s</text>\n",
                    svg_x(a, xa), svg_y(a, bw_gbps * xa), svg_x(a, xb), svg_y(a, bw_gbps * xb), svg_x(a, xa) + 6,
                    svg_y(a, bw_gbps * xa) - 8, bw_gbps);
    }
    if (!isnan(peak))
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\" stroke-width=\"2\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" fill=\"#d62728\">cblas_sgemm %.1f GFLOP/s</text>\n",
                svg_x(a, x0), svg_y(a, peak), svg_x(a, x1), svg_y(a, peak), svg_x(a, x0) + 4, svg_y(a, peak) - 6,
                peak);
}

/*
 * Writes the roofline picture: each measured workload a numbered point
 * (its name, type, device and figures in a tooltip and in the list at the
 * right), under the ceilings; rows without floating-point work listed
 * apart.  Returns false (after a message) when the file cannot be written.
 */
static bool write_svg(const char *path, const struct results *res, const struct options *o, double stream_bps)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, PROGRAM ": --svg %s: %s\n", path, strerror(errno));
        return false;
    }
    const double bw = stream_bps * 1e-9, peak = sgemm_peak(res);
    const struct axes a = svg_axes(res, bw, peak);
    const int list_bottom = SVG_TOP + SVG_LINE * ((int) res->n + 1), height = list_bottom > SVG_H ? list_bottom : SVG_H;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            SVG_W, height, SVG_W, height);
    fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"14\">", SVG_LEFT);
    svg_text(f, PROGRAM " " PACKAGE_VERSION ": roofline, ");
    svg_text(f, cpu_name());
    fprintf(f, ", CPU kernels ");
    svg_text(f, cpu_feature("ISA"));
    fprintf(f, ", %d thread%s</text>\n", o->n_threads, o->n_threads == 1 ? "" : "s");
    svg_grid(f, &a);
    svg_ceilings(f, &a, bw, peak);
    /* a colour per device configuration, in the order they first appear */
    static const char *const colours[] = { "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf" };
    const char *devices[sizeof colours / sizeof colours[0]] = { NULL };
    int n = 0, list_y = SVG_TOP;
    for (size_t i = 0; i < res->n; i++) {
        const struct row *r = &res->rows[i];
        char label[200];
        snprintf(label, sizeof label, "%s %s %s", r->workload, r->type, r->device);
        if (!plotted(r)) {
            fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#777\">- ", SVG_W - SVG_RIGHT + 12,
                    list_y += SVG_LINE);
            svg_text(f, label);
            fprintf(f, "%s</text>\n", isnan(r->seconds) ? " (failed)" : " (no FLOP: not plotted)");
            continue;
        }
        size_t c = 0;
        while (c + 1 < sizeof colours / sizeof colours[0] && devices[c] != NULL && strcmp(devices[c], r->device) != 0)
            c++;
        if (devices[c] == NULL)
            devices[c] = r->device;
        const double x = svg_x(&a, r->flop / r->bytes), y = svg_y(&a, gflops(r));
        n++;
        fprintf(f, "<g><title>");
        svg_text(f, label);
        fprintf(f, ": %.3g FLOP/byte, %.1f GFLOP/s, %.3f ms</title>\n"
                   "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" fill-opacity=\"0.8\"/>\n"
                   "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">%d</text></g>\n",
                r->flop / r->bytes, gflops(r), r->seconds * 1e3, x, y, colours[c], x + 6, y - 4, n);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"%s\">%d: ", SVG_W - SVG_RIGHT + 12,
                list_y += SVG_LINE, colours[c], n);
        svg_text(f, label);
        fprintf(f, "</text>\n");
    }
    fprintf(f, "</svg>\n");
    const bool written = !ferror(f);
    if (fclose(f) != 0 || !written) {
        fprintf(stderr, PROGRAM ": --svg %s: cannot write the picture\n", path);
        return false;
    }
    return true;
}

/* ------------------------------------------------------------ options */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROGRAM " [options]\n"
            "Times a llama-style transformer block and matrix products on every device\n"
            "(each non-CPU device D with the CPU through the scheduler, then the CPU alone).\n"
            "  --op LIST          block, block-fa, mul_mat, moe, dispatch, ops\n"
            "                     (default: all but dispatch and ops)\n"
            "  --type LIST        the weights' types, by name (f32, f16, q4_0, q8_0, q4_K, ...):\n"
            "                     any the CPU multiplies (default: f32, f16, q4_0)\n"
            "  --shape MxKxN      a mul_mat shape, weights [K, M] by [K, N]; repeatable\n"
            "                     (default: 2048x512x2048, 4096x4096x32, 4096x4096x1)\n"
            "  --threads N        threads of every backend and reference (default: online CPUs)\n"
            "  --reps N           timed repetitions after one warm-up: the median is reported,\n"
            "                     with the spread (default: 3)\n"
            "  --interleave       alternate the devices' repetitions of each workload, so that\n"
            "                     a noisy machine disturbs them alike (default: one device's\n"
            "                     repetitions, then the next device's)\n"
            "  --tokens N         tokens of the block and moe workloads, 1..4096\n"
            "                     (default: " STRINGIFY(N_TOKENS) ")\n"
            "  --device LIST      devices to run on: D runs D+CPU, CPU runs the CPU alone,\n"
            "                     CPU_REPACK the CPU alone, weights in that buffer type,\n"
            "                     D1+D2 the block over D1, D2 and the CPU: attention weights\n"
            "                     on D1, feed-forward weights on D2 (block workloads only)\n"
            "  --numa STRATEGY    ggml_numa_init(STRATEGY) first: disabled, distribute, isolate,\n"
            "                     numactl or mirror (default: not called)\n"
            "  --compare-blas     ratio against cblas_sgemm of each mul_mat shape\n"
            "  --compare-stream   ratio of GB/s against a STREAM triad\n"
            "  --svg FILE         also draw a roofline picture into FILE: each workload's\n"
            "                     GFLOP/s against its FLOP per byte, under the measured\n"
            "                     bandwidth (STREAM) and cblas_sgemm ceilings\n"
            "  --csv, --json, --markdown\n"
            "                     print CSV, JSON or a Markdown table (for bug reports)\n"
            "  --help, --version\n"
            "LIST is comma-separated; options taking one may be repeated.\n"
            "Workloads: 'block T=64' is one layer of a llama-style transformer (RMS norm,\n"
            "attention with RoPE and a causal mask, SiLU-gated feed-forward) over 64 tokens,\n"
            "a prompt step (--tokens sets them; T=1 is one token of generation); 'block-fa'\n"
            "the same with flash attention; 'mul_mat MxKxN' a product of M x K weights by N\n"
            "columns; 'moe' a mixture-of-experts feed-forward layer; 'ops' one node of each\n"
            "kind (ADD, RMS_NORM, ROPE, ..., FLASH_ATTN) on a 7B-class shape, each device\n"
            "only on the nodes it supports, to see where it is slow.  Each row is printed\n"
            "when measured: ms the median time, +-%% (slowest - fastest) / median, GFLOP/s\n"
            "the floating-point work over the time, GB/s the bytes the graph reads and\n"
            "writes, wGB/s the weight matrices' bytes, over the time.\n");
}

static int bad_usage(const char *what, const char *arg)
{
    fprintf(stderr, PROGRAM ": %s '%s'\nTry '" PROGRAM " --help'.\n", what, arg);
    return 2;
}

/* Calls item(o, word) for each comma-separated word of list; false on the first bad one. */
static bool each_word(struct options *o, const char *list, bool (*item)(struct options *, const char *),
                      const char **bad)
{
    static char copy[256];
    if (strlen(list) >= sizeof copy) {
        *bad = list;
        return false;
    }
    strcpy(copy, list);
    for (char *save = NULL, *w = strtok_r(copy, ",", &save); w != NULL; w = strtok_r(NULL, ",", &save))
        if (!item(o, w)) {
            *bad = w;
            return false;
        }
    return true;
}

static bool add_op(struct options *o, const char *w)
{
    for (int i = 0; i < N_OPS; i++)
        if (strcasecmp(w, op_names[i]) == 0)
            return o->ops[i] = true;
    return false;
}

/*
 * True when the weights can have the type: ggml_quantize_chunk encodes it
 * without importance weights (or it is F32) and the CPU multiplies it by
 * F32 columns.
 */
static bool benchable_type(enum ggml_type type)
{
    if (type != GGML_TYPE_F32 &&
        (ggml_get_type_traits(type)->from_float_ref == NULL || ggml_quantize_requires_imatrix(type)))
        return false;
    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    struct ggml_init_params p = { 4 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context *ctx = cpu != NULL ? ggml_init(p) : NULL;
    if (ctx == NULL)
        return false;
    const int64_t k = ggml_blck_size(type) * 2;
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, type, k, 4);
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, 2);
    struct ggml_tensor *c = a != NULL && b != NULL ? ggml_mul_mat(ctx, a, b) : NULL;
    const bool ok = c != NULL && ggml_backend_dev_supports_op(cpu, c);
    ggml_free(ctx);
    return ok;
}

static bool add_type(struct options *o, const char *w)
{
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const char *name = ggml_type_name((enum ggml_type) t);
        if (name != NULL && strcasecmp(w, name) == 0 && ggml_get_type_traits((enum ggml_type) t)->blck_size > 0 &&
            benchable_type((enum ggml_type) t))
            return o->types[t] = true;
    }
    return false;
}

static bool add_device(struct options *o, const char *w)
{
    if (o->n_devices >= MAX_DEVICES)
        return false;
    static char names[MAX_DEVICES][64];
    snprintf(names[o->n_devices], sizeof names[0], "%s", w);
    o->devices[o->n_devices] = names[o->n_devices];
    o->n_devices++;
    return true;
}

static bool parse_shape(const char *s, struct shape *out)
{
    long long m, k, n;
    char end;
    if (sscanf(s, "%lldx%lldx%lld%c", &m, &k, &n, &end) != 3 || m < 1 || k < 1 || n < 1 || m > 65536 ||
        k > 65536 || n > 65536 || m * k > (1ll << 28) || k * n > (1ll << 28) || m * n > (1ll << 28))
        return false;
    *out = (struct shape) { m, k, n };
    return true;
}

static int default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > GGML_MAX_N_THREADS ? GGML_MAX_N_THREADS : (int) n;
}

/* Parses argv into o; returns -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct options *o)
{
    bool any_op = false, any_type = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value = NULL, *bad = NULL;
        static const char *const with_value[] = { "--op", "--type", "--shape", "--threads", "--reps", "--device",
                                                    "--numa", "--tokens", "--svg" };
        for (size_t j = 0; j < sizeof with_value / sizeof with_value[0]; j++) {
            size_t len = strlen(with_value[j]);
            if (strncmp(arg, with_value[j], len) == 0 && (arg[len] == '\0' || arg[len] == '=')) {
                if (arg[len] == '=')
                    value = arg + len + 1;
                else if (i + 1 < argc)
                    value = argv[++i];
                else
                    return bad_usage("missing value for option", arg);
                arg = with_value[j];
                break;
            }
        }
        long v;
        if (strcmp(arg, "--op") == 0) {
            any_op = true;
            if (!each_word(o, value, add_op, &bad))
                return bad_usage("unknown op (block, block-fa, mul_mat, moe, dispatch, ops)", bad);
        } else if (strcmp(arg, "--type") == 0) {
            any_type = true;
            if (!each_word(o, value, add_type, &bad))
                return bad_usage("unknown type, or one the CPU does not multiply", bad);
        } else if (strcmp(arg, "--shape") == 0) {
            if (o->n_shapes >= MAX_SHAPES || !parse_shape(value, &o->shapes[o->n_shapes]))
                return bad_usage("bad shape (MxKxN, each 1..65536, products up to 2^28)", value);
            o->n_shapes++;
        } else if (strcmp(arg, "--threads") == 0) {
            if (!tool_parse_int(value, 1, GGML_MAX_N_THREADS, &v))
                return bad_usage("bad thread count (1.." STRINGIFY(GGML_MAX_N_THREADS) ")", value);
            o->n_threads = (int) v;
        } else if (strcmp(arg, "--tokens") == 0) {
            if (!tool_parse_int(value, 1, 4096, &v))
                return bad_usage("bad token count (1..4096)", value);
            o->n_tokens = (int) v;
        } else if (strcmp(arg, "--reps") == 0) {
            if (!tool_parse_int(value, 1, 100000, &v))
                return bad_usage("bad repetition count", value);
            o->reps = (int) v;
        } else if (strcmp(arg, "--device") == 0) {
            if (!each_word(o, value, add_device, &bad))
                return bad_usage("too many devices at", bad);
        } else if (strncmp(arg, "--numa", 6) == 0 && value != NULL) {
            if (!tool_parse_numa(value, &o->numa))
                return bad_usage("unknown NUMA strategy (disabled, distribute, isolate, numactl, mirror)", value);
        } else if (strcmp(arg, "--compare-blas") == 0) {
            o->compare_blas = true;
        } else if (strcmp(arg, "--interleave") == 0) {
            o->interleave = true;
        } else if (strcmp(arg, "--compare-stream") == 0) {
            o->compare_stream = true;
        } else if (strcmp(arg, "--svg") == 0) {
            if (value[0] == '\0')
                return bad_usage("empty file name for", arg);
            o->svg = value; /* the picture needs both ceilings */
            o->compare_stream = true;
            o->compare_blas = true;
        } else if (strcmp(arg, "--csv") == 0) {
            o->format = FORMAT_CSV;
        } else if (strcmp(arg, "--json") == 0) {
            o->format = FORMAT_JSON;
        } else if (strcmp(arg, "--markdown") == 0) {
            o->format = FORMAT_MARKDOWN;
        } else if (strcmp(arg, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(arg, "--version") == 0) {
            printf(PROGRAM " %s (libggml-backend %s, commit %s)\n", PACKAGE_VERSION, ggml_version(), ggml_commit());
            return 0;
        } else {
            return bad_usage("unknown option", arg);
        }
    }
    for (int i = 0; i < N_OPS; i++)
        o->ops[i] = o->ops[i] || (!any_op && op_default[i]);
    for (size_t i = 0; !any_type && i < sizeof default_types / sizeof default_types[0]; i++)
        o->types[default_types[i]] = true;
    if (o->n_shapes == 0) {
        o->n_shapes = (int) (sizeof default_shapes / sizeof default_shapes[0]);
        memcpy(o->shapes, default_shapes, sizeof default_shapes);
    }
    return -1;
}

/* --------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    struct options o = { .n_threads = default_threads(), .reps = 3, .n_tokens = N_TOKENS,
                         .numa = GGML_NUMA_STRATEGY_COUNT };
    int status = parse_options(argc, argv, &o);
    if (status >= 0)
        return status;
    const double t_start = tool_now();
    progress_on = isatty(STDERR_FILENO) != 0;

    ggml_log_set(tool_log_quiet, NULL);
    if (o.numa != GGML_NUMA_STRATEGY_COUNT)
        ggml_numa_init(o.numa); /* before any backend, pool or buffer exists */
    ggml_backend_load_all();

    struct config configs[MAX_CONFIGS];
    memset(configs, 0, sizeof configs);
    const int n_configs = list_configs(&o, configs, MAX_CONFIGS);
    if (n_configs == 0) {
        fprintf(stderr, PROGRAM ": no device matches --device");
        for (int i = 0; i < o.n_devices; i++)
            fprintf(stderr, " %s", o.devices[i]);
        fprintf(stderr, " (devices:");
        for (size_t d = 0; d < ggml_backend_dev_count(); d++)
            fprintf(stderr, " %s", ggml_backend_dev_name(ggml_backend_dev_get(d)));
        fprintf(stderr, ")\n");
        return 2;
    }
    if (o.compare_blas && o.format != FORMAT_TABLE && o.format != FORMAT_MARKDOWN && sgemm_device() == NULL)
        fprintf(stderr, PROGRAM ": --compare-blas: unavailable, no BLAS device (the BLAS plugin is not installed)\n");

    /* the list of runs: workload x type x configuration */
    int n_workloads = (o.ops[OP_BLOCK] ? 1 : 0) + (o.ops[OP_BLOCK_FA] ? 1 : 0) + (o.ops[OP_MOE] ? 1 : 0) +
                      (o.ops[OP_MUL_MAT] ? o.n_shapes : 0);
    int n_types = 0;
    for (int t = 0; t < GGML_TYPE_COUNT; t++)
        n_types += o.types[t];
    /* dispatch and the per-op cases run once per configuration, whatever the types */
    const int total = (n_workloads * n_types + (o.ops[OP_DISPATCH] ? 1 : 0) + (o.ops[OP_OPS] ? N_CASES : 0)) *
                      n_configs;
    struct results res = { .rows = xmalloc((size_t) (total + 1) * sizeof *res.rows) };

    double stream_bps = NAN;
    if (o.compare_stream) {
        progress(0, total, "STREAM triad");
        stream_bps = stream_triad(o.n_threads, o.reps < 3 ? 3 : o.reps);
    }
    print_head(&o);

    int done = 0;
    for (int op = 0; op < N_OPS; op++) {
        if (!o.ops[op])
            continue;
        const int n_shapes = op == OP_MUL_MAT ? o.n_shapes : op == OP_OPS ? N_CASES : 1;
        const bool untyped = op == OP_DISPATCH || op == OP_OPS;
        for (int s = 0; s < n_shapes; s++) {
            double sgemm_seconds = NAN;
            if (op == OP_MUL_MAT && o.compare_blas && sgemm_device() != NULL) {
                progress(done, total, "cblas_sgemm");
                sgemm_seconds = time_sgemm(o.shapes[s], o.n_threads, o.reps);
            }
            bool ran_untyped = false;
            for (int t = 0; t < GGML_TYPE_COUNT; t++) {
                if (!o.types[t] || (untyped && ran_untyped))
                    continue;
                ran_untyped = true;
                struct weight_cache cache = { { NULL } };
                /* --interleave: the configurations' repetitions alternate */
                const int group = o.interleave ? n_configs : 1;
                for (int c0 = 0; c0 < n_configs; c0 += group) {
                    struct run runs[MAX_CONFIGS];
                    struct timing timings[MAX_CONFIGS];
                    struct row *rows[MAX_CONFIGS];
                    int config_of[MAX_CONFIGS];
                    int n_group = 0;
                    for (int c = c0; c < c0 + group && c < n_configs; c++) {
                        struct row *row = &res.rows[res.n];
                        memset(row, 0, sizeof *row);
                        if (op == OP_MUL_MAT)
                            snprintf(row->workload, sizeof row->workload, "mul_mat %lldx%lldx%lld",
                                     (long long) o.shapes[s].m, (long long) o.shapes[s].k, (long long) o.shapes[s].n);
                        else if (op == OP_DISPATCH)
                            snprintf(row->workload, sizeof row->workload, "dispatch %d nodes", DISPATCH_NODES);
                        else if (op == OP_OPS)
                            snprintf(row->workload, sizeof row->workload, "%s", op_cases[s]);
                        else
                            snprintf(row->workload, sizeof row->workload, "%s T=%d", op_names[op], o.n_tokens);
                        row->type = type_label(untyped ? GGML_TYPE_F32 : (enum ggml_type) t);
                        memcpy(row->device, configs[c].label, sizeof row->device);
                        char what[160];
                        snprintf(what, sizeof what, "%s %.15s %s", row->workload, row->type, row->device);
                        progress(done++, total, what);

                        struct run *run = &runs[n_group];
                        memset(run, 0, sizeof *run);
                        if (configs[c].dev2 != NULL && op != OP_BLOCK && op != OP_BLOCK_FA)
                            continue;   /* a split over two devices is a block's question only */
                        ggml_backend_buffer_type_t wbuft = configs[c].wbuft != NULL
                                                               ? configs[c].wbuft
                                                               : ggml_backend_dev_buffer_type(configs[c].dev);
                        const enum ggml_type type = (enum ggml_type) t;
                        const bool flash = op == OP_BLOCK_FA;
                        ggml_backend_buffer_type_t wbuft2 =
                            configs[c].dev2 != NULL ? ggml_backend_dev_buffer_type(configs[c].dev2) : NULL;
                        bool built = op == OP_MUL_MAT    ? build_mul_mat(run, &cache, type, o.shapes[s], wbuft)
                                     : op == OP_MOE      ? build_moe(run, &cache, type, wbuft, o.n_tokens)
                                     : op == OP_DISPATCH ? build_dispatch(run)
                                     : op == OP_OPS      ? build_op_case(run, (enum op_case) s)
                                                         : build_block(run, &cache, type, flash, wbuft,
                                                                       wbuft2, o.n_tokens);
                        if (built && op == OP_OPS && !ggml_backend_dev_supports_op(configs[c].dev, run->out)) {
                            run_free(run);   /* not this device's op: no row */
                            continue;
                        }
                        if (built)
                            timing_start(&timings[n_group], run, &configs[c], o.n_threads, o.reps);
                        else
                            timings[n_group] = (struct timing) { .ok = false };
                        config_of[n_group] = c;
                        rows[n_group++] = &res.rows[res.n++];
                    }
                    for (int rep = 0; rep < o.reps; rep++)
                        for (int g = 0; g < n_group; g++)
                            timing_rep(&timings[g], &runs[g], rep);
                    for (int g = 0; g < n_group; g++) {
                        struct row *row = rows[g];
                        const struct config *config = &configs[config_of[g]];
                        const struct times times = timing_end(&timings[g], &runs[g], config, o.reps);
                        row->seconds = times.median;
                        row->fastest = times.fastest;
                        row->slowest = times.slowest;
                        row->flop = runs[g].flop;
                        row->bytes = runs[g].bytes;
                        row->weight_bytes = runs[g].weight_bytes;
                        row->vs_sgemm = sgemm_seconds / row->seconds;
                        row->vs_stream = gbps(row) * 1e9 / stream_bps;
                        row->vs_read = NAN;
                        if (o.compare_stream && row->bytes > 0 && !isnan(row->seconds))
                            row->vs_read = gbps(row) * 1e9 / read_bandwidth((size_t) row->bytes, o.n_threads,
                                                                            o.reps < 3 ? 3 : o.reps);
                        if (isnan(row->seconds)) {
                            progress(0, 0, NULL);
                            fprintf(stderr, PROGRAM ": %s %.15s %s failed\n", row->workload, row->type, row->device);
                            res.failed = true;
                        }
                        print_row(&o, row, (size_t) (row - res.rows));
                        run_free(&runs[g]);
                    }
                }
                weight_cache_free(&cache);
            }
        }
    }
    progress(0, 0, NULL);

    print_tail(&res, &o, stream_bps, tool_now() - t_start);
    if (o.svg != NULL && !write_svg(o.svg, &res, &o, stream_bps))
        res.failed = true;
    free(res.rows);
    return res.failed ? 1 : 0;
}
