/*
 * test-fault.c - allocation failure injected at every allocation of a
 * realistic program, one run per allocation.
 *
 * The program (one forked child per run): a CPU backend computes two
 * steps of a 2-layer transformer-like graph (rms_norm, mul_mat with Q4_0
 * and F32 weights, rope, attention through soft_max_ext with a causal mask
 * in layer 0 and flash_attn_ext in layer 1, a SiLU-gated FFN, residual
 * adds), its activations placed by ggml_gallocr or by ggml_backend_sched,
 * on 1, 2 or 3 threads, reads the outputs back and frees everything.  The
 * child first initializes and frees one CPU backend, then arms the
 * failing allocator (fault-alloc.h) so that its N-th allocation fails,
 * then runs the program.  When a call reports a failure, the program
 * retries it once (the allocator fails only once), as the library
 * promises that objects stay usable after an allocation failure.
 *
 * The GGUF variants take the weights from a GGUF file the child writes
 * before it arms the allocator, loaded by ggml_backend_gguf_load, mapped
 * or read: its allocations (the metadata reader's, the context, the
 * mapping or the buffer, the staging) fail in turn too.
 *
 * The NUMA variants call ggml_numa_init(MIRROR) as the first armed call:
 * that is where a program chooses its strategy, ggml_numa_init consults
 * hwloc again (which must survive a failure once the topology is loaded),
 * and when it succeeds the rest of the run allocates under MIRROR (CPU
 * buffers from hwloc_alloc, one copy of the weights per node).  Where the
 * process may run on PUs 0 and 1, the machine is made a two-node one with
 * HWLOC_SYNTHETIC and HWLOC_THISSYSTEM=1 so that MIRROR really copies.
 *
 * For every N, until the first N at which no allocation failed:
 *   - the child exits normally (no signal, no sanitizer report) and in
 *     time (an alarm);
 *   - each failure is reported by the call (NULL, false, a ggml_status
 *     error) with exactly one ERROR message, or, in a call that returns
 *     nothing (ggml_numa_init, ggml_backend_buffer_set_usage making
 *     MIRROR's copies), absorbed with at most one; the retry succeeds; a
 *     call that succeeds logs no ERROR message;
 *   - both steps' outputs equal those of the run without failure, bit for
 *     bit or within the tolerance against a double-precision reference
 *     computed here;
 *   - the blocks made while armed and not freed are no more than in the
 *     run without failure (and, in the sanitizer build, LeakSanitizer
 *     finds no leak).
 * One TAP line per variant with the counts; a failure names the N and
 * the command that replays it:
 *   tests/test-fault --replay VARIANT N
 * prints that run's report, its logged errors, where the allocation
 * failed and the child's standard error; tests/test-fault --only VARIANT
 * sweeps one variant, and FAULT_VERBOSE=1 prints a line for every N.
 *
 * FAULT_SWEEP=full sweeps every N; otherwise every FAULT_STRIDE-th N
 * (default 1; the first N and the N at which the sweep ends are always
 * run).  The last line reports a sweep armed before the process's first
 * CPU backend init: deaths inside hwloc are counted there, not failed.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fault-alloc.h"

#include "tap.h"
#include "op-test.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-gguf.h"
#include "ggml-cpu.h"
#include "gguf.h"

#define N_EMBD 64
#define N_HEAD 2
#define HEAD_DIM 32
#define N_FF 128
#define N_LAYER 2
#define N_TOKENS 4
#define N_STEPS 2
#define RMS_EPS 1e-5f
#define ROPE_BASE 10000.0f
#define N_OUT (N_EMBD * N_TOKENS)
/* Q4_0 weights are read back exactly by the reference, but the products
 * quantize the activations to 8 bits: the layers' contribution keeps an
 * NMSE of order 1e-4 against the double-precision reference. */
#define OUT_NMSE_MAX 1e-3
#define CHILD_TIMEOUT_SECONDS 120
#define DEFECTS_SHOWN 2 /* described in full, of each kind and variant */

/* ------------------------------------------------------------ variants */

enum placement { BY_GALLOCR, BY_SCHED };

/* Where the weights come from: set tensor by tensor, or a GGUF file loaded mapped or read. */
enum weights_source { WEIGHTS_SET, WEIGHTS_GGUF_MAPPED, WEIGHTS_GGUF_READ };

struct variant {
    char name[48];
    enum placement placement;
    int n_threads;
    bool mirror;             /* ggml_numa_init(MIRROR) first */
    bool before_first_init;  /* armed before the process's first CPU backend init */
    enum weights_source weights;
};

/* The steps of the program, named in reports. */
enum step {
    STEP_NONE,
    STEP_BACKEND,
    STEP_WEIGHTS_CONTEXT,
    STEP_WEIGHTS_BUFFER,
    STEP_WEIGHTS_LOAD,
    STEP_GRAPH_CONTEXT,
    STEP_GRAPH,
    STEP_ALLOCATOR,
    STEP_ALLOC_GRAPH,
    STEP_COMPUTE,
};

static const char *const step_names[] = {
    "none", "ggml_backend_cpu_init", "ggml_init (weights)", "ggml_backend_alloc_ctx_tensors",
    "ggml_backend_gguf_load",
    "ggml_init (graph)", "graph construction", "ggml_gallocr_new / ggml_backend_sched_new",
    "ggml_gallocr_alloc_graph / ggml_backend_sched_alloc_graph", "graph compute",
};

/* What a child reports, in memory shared with the parent. */
struct report {
    bool reported;         /* the child got to its report: the fields below are its */
    bool finished;         /* got to the end of the program */
    bool crashed_in_hwloc; /* a fatal signal with hwloc on the stack */
    enum step failed_step; /* the first call that reported a failure */
    int failed_status;     /* its ggml_status, for a compute */
    bool retry_failed;     /* the retry of that call failed too */
    bool message_for_success; /* a call that succeeded logged an ERROR */
    int errors;            /* ERROR messages logged while armed */
    char error_text[2][240];
    long events;
    bool fired;
    long live_blocks;
    size_t live_bytes;
    int n_frames;
    void *frames[FAULT_MAX_FRAMES];
    bool mirror_two_nodes; /* MIRROR ran on two nodes */
    double nmse[N_STEPS];
    float out[N_STEPS][N_OUT];
};

static struct report *report;

/* ------------------------------------------------------------ the model */

struct host_layer {
    float attn_norm[N_EMBD], ffn_norm[N_EMBD];
    void *wq, *wk, *wv, *wo;        /* Q4_0 blocks as stored */
    float *w_gate, *w_up, *w_down;
    /* what the reference reads: the same values, [out][in] */
    double ref_attn_norm[N_EMBD], ref_ffn_norm[N_EMBD];
    double *ref_wq, *ref_wk, *ref_wv, *ref_wo, *ref_w_gate, *ref_w_up, *ref_w_down;
};

struct host_model {
    struct host_layer layers[N_LAYER];
    float embd[N_STEPS][N_TOKENS][N_EMBD];
    double want[N_STEPS][N_TOKENS][N_EMBD];
};

static float *random_matrix(int n_out, int n_in, double amplitude, uint64_t *seed)
{
    float *m = malloc((size_t) n_out * n_in * sizeof *m);
    for (int i = 0; i < n_out * n_in; i++)
        m[i] = (float) optest_uniform(seed, -amplitude, amplitude);
    return m;
}

static double *widened(const float *values, int n)
{
    double *d = malloc((size_t) n * sizeof *d);
    for (int i = 0; i < n; i++)
        d[i] = values[i];
    return d;
}

/* Quantizes to Q4_0 into *stored; *ref gets the values the blocks hold. */
static void quantized_matrix(int n_out, int n_in, double amplitude, uint64_t *seed, void **stored, double **ref)
{
    float *values = random_matrix(n_out, n_in, amplitude, seed);
    const size_t row = ggml_row_size(GGML_TYPE_Q4_0, n_in);
    *stored = malloc(row * (size_t) n_out);
    ggml_quantize_chunk(GGML_TYPE_Q4_0, values, *stored, 0, n_out, n_in, NULL);
    *ref = malloc((size_t) n_out * n_in * sizeof **ref);
    const ggml_to_float_t to_float = ggml_get_type_traits(GGML_TYPE_Q4_0)->to_float;
    for (int r = 0; r < n_out; r++) {
        to_float((const char *) *stored + (size_t) r * row, values, n_in);
        for (int c = 0; c < n_in; c++)
            (*ref)[r * n_in + c] = values[c];
    }
    free(values);
}

/* Rotates the pairs (2i, 2i+1) of each head for position p. */
static void ref_rope(double *x, int p)
{
    for (int h = 0; h < N_HEAD; h++)
        for (int i = 0; i < HEAD_DIM / 2; i++) {
            const double theta = p * pow((double) ROPE_BASE, -2.0 * i / HEAD_DIM);
            double *pair = x + h * HEAD_DIM + 2 * i;
            const double x0 = pair[0], x1 = pair[1];
            pair[0] = x0 * cos(theta) - x1 * sin(theta);
            pair[1] = x0 * sin(theta) + x1 * cos(theta);
        }
}

/* The network in double precision: token t attends to tokens 0..t. */
static void ref_forward(const struct host_model *m, int step)
{
    static double x[N_TOKENS][N_EMBD], cur[N_EMBD], q[N_TOKENS][N_EMBD], k[N_TOKENS][N_EMBD], v[N_TOKENS][N_EMBD];
    static double attn[N_EMBD], tmp[N_EMBD], gate[N_FF], up[N_FF];
    for (int t = 0; t < N_TOKENS; t++)
        for (int i = 0; i < N_EMBD; i++)
            x[t][i] = m->embd[step][t][i];
    for (int l = 0; l < N_LAYER; l++) {
        const struct host_layer *w = &m->layers[l];
        for (int t = 0; t < N_TOKENS; t++) {
            optest_rms_norm(x[t], w->ref_attn_norm, N_EMBD, (double) RMS_EPS, cur);
            optest_matvec(w->ref_wq, N_EMBD, N_EMBD, cur, q[t]);
            optest_matvec(w->ref_wk, N_EMBD, N_EMBD, cur, k[t]);
            optest_matvec(w->ref_wv, N_EMBD, N_EMBD, cur, v[t]);
            ref_rope(q[t], t);
            ref_rope(k[t], t);
        }
        double next[N_TOKENS][N_EMBD];
        for (int t = 0; t < N_TOKENS; t++) {
            for (int h = 0; h < N_HEAD; h++) {
                double score[N_TOKENS], max = -INFINITY, norm = 0.0;
                for (int j = 0; j <= t; j++) {
                    double dot = 0.0;
                    for (int d = 0; d < HEAD_DIM; d++)
                        dot += q[t][h * HEAD_DIM + d] * k[j][h * HEAD_DIM + d];
                    score[j] = dot / sqrt((double) HEAD_DIM);
                    max = fmax(max, score[j]);
                }
                for (int d = 0; d < HEAD_DIM; d++)
                    attn[h * HEAD_DIM + d] = 0.0;
                for (int j = 0; j <= t; j++) {
                    const double p = exp(score[j] - max);
                    norm += p;
                    for (int d = 0; d < HEAD_DIM; d++)
                        attn[h * HEAD_DIM + d] += p * v[j][h * HEAD_DIM + d];
                }
                for (int d = 0; d < HEAD_DIM; d++)
                    attn[h * HEAD_DIM + d] /= norm;
            }
            optest_matvec(w->ref_wo, N_EMBD, N_EMBD, attn, tmp);
            for (int i = 0; i < N_EMBD; i++)
                next[t][i] = x[t][i] + tmp[i];
            optest_rms_norm(next[t], w->ref_ffn_norm, N_EMBD, (double) RMS_EPS, cur);
            optest_matvec(w->ref_w_gate, N_FF, N_EMBD, cur, gate);
            optest_matvec(w->ref_w_up, N_FF, N_EMBD, cur, up);
            for (int i = 0; i < N_FF; i++)
                gate[i] = gate[i] / (1.0 + exp(-gate[i])) * up[i];
            optest_matvec(w->ref_w_down, N_EMBD, N_FF, gate, tmp);
            for (int i = 0; i < N_EMBD; i++)
                next[t][i] += tmp[i];
        }
        memcpy(x, next, sizeof x);
    }
    for (int t = 0; t < N_TOKENS; t++)
        for (int i = 0; i < N_EMBD; i++)
            ((struct host_model *) m)->want[step][t][i] = x[t][i];
}

static void host_model_init(struct host_model *m)
{
    uint64_t seed = 0xfa017ull;
    const double a_embd = sqrt(3.0 / N_EMBD), a_ff = sqrt(3.0 / N_FF);
    for (int l = 0; l < N_LAYER; l++) {
        struct host_layer *w = &m->layers[l];
        for (int i = 0; i < N_EMBD; i++) {
            w->attn_norm[i] = (float) optest_uniform(&seed, 0.5, 1.5);
            w->ffn_norm[i] = (float) optest_uniform(&seed, 0.5, 1.5);
            w->ref_attn_norm[i] = w->attn_norm[i];
            w->ref_ffn_norm[i] = w->ffn_norm[i];
        }
        quantized_matrix(N_EMBD, N_EMBD, a_embd, &seed, &w->wq, &w->ref_wq);
        quantized_matrix(N_EMBD, N_EMBD, a_embd, &seed, &w->wk, &w->ref_wk);
        quantized_matrix(N_EMBD, N_EMBD, a_embd, &seed, &w->wv, &w->ref_wv);
        quantized_matrix(N_EMBD, N_EMBD, a_embd, &seed, &w->wo, &w->ref_wo);
        w->w_gate = random_matrix(N_FF, N_EMBD, a_embd, &seed);
        w->w_up = random_matrix(N_FF, N_EMBD, a_embd, &seed);
        w->w_down = random_matrix(N_EMBD, N_FF, a_ff, &seed);
        w->ref_w_gate = widened(w->w_gate, N_FF * N_EMBD);
        w->ref_w_up = widened(w->w_up, N_FF * N_EMBD);
        w->ref_w_down = widened(w->w_down, N_EMBD * N_FF);
    }
    for (int s = 0; s < N_STEPS; s++) {
        for (int t = 0; t < N_TOKENS; t++)
            for (int i = 0; i < N_EMBD; i++)
                m->embd[s][t][i] = (float) optest_uniform(&seed, -1.0, 1.0);
        ref_forward(m, s);
    }
}

/* NMSE of what the layers add to the embeddings. */
static double layers_nmse(const struct host_model *m, int step, const float *out)
{
    double err = 0.0, norm = 0.0;
    for (int t = 0; t < N_TOKENS; t++)
        for (int i = 0; i < N_EMBD; i++) {
            const double want = m->want[step][t][i] - m->embd[step][t][i];
            const double got = (double) out[t * N_EMBD + i] - m->embd[step][t][i];
            err += (got - want) * (got - want);
            norm += want * want;
        }
    return isnan(err) ? INFINITY : err / norm;
}

/* ------------------------------------------------------------ the program */

struct device_layer {
    struct ggml_tensor *attn_norm, *wq, *wk, *wv, *wo, *ffn_norm, *w_gate, *w_up, *w_down;
};

struct program {
    const struct variant *variant;
    const struct host_model *host;
    ggml_backend_t backend;
    struct ggml_context *weights_ctx, *graph_ctx;
    ggml_backend_buffer_t weights;
    struct device_layer layers[N_LAYER];
    ggml_gallocr_t gallocr;
    ggml_backend_sched_t sched;
    struct ggml_cgraph *graph;
    struct ggml_tensor *embd, *pos, *mask, *out;
    enum step step;     /* the step running */
    int compute_index;  /* which computation, in STEP_COMPUTE */
};

static bool make_backend(struct program *p)
{
    p->backend = ggml_backend_cpu_init();
    if (p->backend != NULL)
        ggml_backend_cpu_set_n_threads(p->backend, p->variant->n_threads);
    return p->backend != NULL;
}

static bool make_weights_context(struct program *p)
{
    struct ggml_init_params params = { 9 * N_LAYER * ggml_tensor_overhead(), NULL, true };
    p->weights_ctx = ggml_init(params);
    if (p->weights_ctx == NULL)
        return false;
    for (int l = 0; l < N_LAYER; l++) {
        struct device_layer *w = &p->layers[l];
        struct ggml_context *ctx = p->weights_ctx;
        w->attn_norm = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N_EMBD);
        w->ffn_norm = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N_EMBD);
        w->wq = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, N_EMBD, N_EMBD);
        w->wk = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, N_EMBD, N_EMBD);
        w->wv = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, N_EMBD, N_EMBD);
        w->wo = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, N_EMBD, N_EMBD);
        w->w_gate = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, N_EMBD, N_FF);
        w->w_up = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, N_EMBD, N_FF);
        w->w_down = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, N_FF, N_EMBD);
    }
    return true;
}

static bool make_weights_buffer(struct program *p)
{
    p->weights = ggml_backend_alloc_ctx_tensors(p->weights_ctx, p->backend);
    return p->weights != NULL;
}

/* The GGUF file of the WEIGHTS_GGUF variants, written by the child before it arms the allocator. */
static char gguf_path[64];
static const char *const weight_names[9] = { "attn_norm", "ffn_norm", "wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down" };

/* Layer l's weight tensors in weight_names' order. */
static void layer_tensors(struct device_layer *w, struct ggml_tensor **t[9])
{
    struct ggml_tensor **all[9] = { &w->attn_norm, &w->ffn_norm, &w->wq, &w->wk, &w->wv, &w->wo,
                                    &w->w_gate, &w->w_up, &w->w_down };
    memcpy(t, all, sizeof all);
}

/* Writes the host model's weights to gguf_path as make_weights_context shapes them; false when it cannot. */
static bool write_weights_file(const struct host_model *host)
{
    struct program shapes = { 0 };
    if (!make_weights_context(&shapes))
        return false;
    struct gguf_context *g = gguf_init_empty();
    for (int l = 0; l < N_LAYER; l++) {
        const struct host_layer *h = &host->layers[l];
        const void *data[9] = { h->attn_norm, h->ffn_norm, h->wq, h->wk, h->wv, h->wo, h->w_gate, h->w_up, h->w_down };
        struct ggml_tensor **t[9];
        layer_tensors(&shapes.layers[l], t);
        for (int i = 0; i < 9; i++) {
            ggml_format_name(*t[i], "blk.%d.%s", l, weight_names[i]);
            gguf_add_tensor(g, *t[i]);
            gguf_set_tensor_data(g, ggml_get_name(*t[i]), data[i]);
        }
    }
    snprintf(gguf_path, sizeof gguf_path, "/tmp/test-fault-%ld.gguf", (long) getpid());
    const bool written = gguf_write_to_file(g, gguf_path, false);
    gguf_free(g);
    ggml_free(shapes.weights_ctx);
    return written;
}

/* The weights context and buffer from the file, as the variant says (mapped or read). */
static bool load_weights(struct program *p)
{
    struct ggml_backend_gguf_load_params params = {
        .buft = ggml_backend_get_default_buffer_type(p->backend),
        .no_mmap = p->variant->weights == WEIGHTS_GGUF_READ,
    };
    p->weights = ggml_backend_gguf_load(gguf_path, &params, &p->weights_ctx, NULL);
    if (p->weights == NULL)
        return false;
    for (int l = 0; l < N_LAYER; l++) {
        struct ggml_tensor **t[9];
        layer_tensors(&p->layers[l], t);
        for (int i = 0; i < 9; i++) {
            char name[GGML_MAX_NAME];
            snprintf(name, sizeof name, "blk.%d.%s", l, weight_names[i]);
            *t[i] = ggml_get_tensor(p->weights_ctx, name);
        }
    }
    return true;
}

/* Calls that return nothing: a failure in them can only be logged. */
static void upload_weights(struct program *p)
{
    ggml_backend_buffer_set_usage(p->weights, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    for (int l = 0; l < N_LAYER; l++) {
        const struct host_layer *h = &p->host->layers[l];
        struct device_layer *w = &p->layers[l];
        ggml_backend_tensor_set(w->attn_norm, h->attn_norm, 0, ggml_nbytes(w->attn_norm));
        ggml_backend_tensor_set(w->ffn_norm, h->ffn_norm, 0, ggml_nbytes(w->ffn_norm));
        ggml_backend_tensor_set(w->wq, h->wq, 0, ggml_nbytes(w->wq));
        ggml_backend_tensor_set(w->wk, h->wk, 0, ggml_nbytes(w->wk));
        ggml_backend_tensor_set(w->wv, h->wv, 0, ggml_nbytes(w->wv));
        ggml_backend_tensor_set(w->wo, h->wo, 0, ggml_nbytes(w->wo));
        ggml_backend_tensor_set(w->w_gate, h->w_gate, 0, ggml_nbytes(w->w_gate));
        ggml_backend_tensor_set(w->w_up, h->w_up, 0, ggml_nbytes(w->w_up));
        ggml_backend_tensor_set(w->w_down, h->w_down, 0, ggml_nbytes(w->w_down));
    }
}

static bool make_graph_context(struct program *p)
{
    struct ggml_init_params params = { 256 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    p->graph_ctx = ggml_init(params);
    return p->graph_ctx != NULL;
}

/* Attention of q [hd, T, heads] over k, v [hd, T, heads]: [N_EMBD, T]. */
static struct ggml_tensor *attention(struct ggml_context *ctx, int layer, struct ggml_tensor *q,
                                     struct ggml_tensor *k, struct ggml_tensor *v, struct ggml_tensor *mask)
{
    const float scale = 1.0f / sqrtf((float) HEAD_DIM);
    if (layer == 1) {
        struct ggml_tensor *k16 = ggml_cast(ctx, k, GGML_TYPE_F16), *v16 = ggml_cast(ctx, v, GGML_TYPE_F16);
        struct ggml_tensor *o = ggml_flash_attn_ext(ctx, q, k16, v16, mask, scale, 0.0f, 0.0f);
        ggml_flash_attn_ext_set_prec(o, GGML_PREC_F32);
        return ggml_reshape_2d(ctx, o, N_EMBD, N_TOKENS);
    }
    struct ggml_tensor *kq = ggml_soft_max_ext(ctx, ggml_mul_mat(ctx, k, q), mask, scale, 0.0f);
    struct ggml_tensor *vt = ggml_cont(ctx, ggml_transpose(ctx, v));
    struct ggml_tensor *kqv = ggml_mul_mat(ctx, vt, kq);
    return ggml_reshape_2d(ctx, ggml_cont(ctx, ggml_permute(ctx, kqv, 0, 2, 1, 3)), N_EMBD, N_TOKENS);
}

static struct ggml_tensor *heads(struct ggml_context *ctx, struct ggml_tensor *w, struct ggml_tensor *cur)
{
    return ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w, cur), HEAD_DIM, N_HEAD, N_TOKENS);
}

static struct ggml_tensor *rope(struct ggml_context *ctx, struct ggml_tensor *x, struct ggml_tensor *pos)
{
    return ggml_rope_ext(ctx, x, pos, NULL, HEAD_DIM, 0, 0, ROPE_BASE, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
}

static bool make_graph(struct program *p)
{
    struct ggml_context *ctx = p->graph_ctx;
    p->embd = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, N_EMBD, N_TOKENS);
    p->pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, N_TOKENS);
    p->mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, N_TOKENS, GGML_PAD(N_TOKENS, GGML_KQ_MASK_PAD));
    ggml_set_input(p->embd);
    ggml_set_input(p->pos);
    ggml_set_input(p->mask);
    p->graph = ggml_new_graph(ctx);
    struct ggml_tensor *x = p->embd;
    for (int l = 0; l < N_LAYER; l++) {
        const struct device_layer *w = &p->layers[l];
        struct ggml_tensor *cur = ggml_mul(ctx, ggml_rms_norm(ctx, x, RMS_EPS), w->attn_norm);
        struct ggml_tensor *q = rope(ctx, heads(ctx, w->wq, cur), p->pos);
        struct ggml_tensor *k = rope(ctx, heads(ctx, w->wk, cur), p->pos);
        struct ggml_tensor *v = heads(ctx, w->wv, cur);
        q = ggml_permute(ctx, q, 0, 2, 1, 3);
        k = ggml_permute(ctx, k, 0, 2, 1, 3);
        v = ggml_permute(ctx, v, 0, 2, 1, 3);
        x = ggml_add(ctx, x, ggml_mul_mat(ctx, w->wo, attention(ctx, l, q, k, v, p->mask)));
        cur = ggml_mul(ctx, ggml_rms_norm(ctx, x, RMS_EPS), w->ffn_norm);
        struct ggml_tensor *gate = ggml_mul_mat(ctx, w->w_gate, cur), *up = ggml_mul_mat(ctx, w->w_up, cur);
        struct ggml_tensor *h = l == 0 ? ggml_mul(ctx, ggml_silu(ctx, gate), up) : ggml_swiglu_split(ctx, gate, up);
        x = ggml_add(ctx, x, ggml_mul_mat(ctx, w->w_down, h));
    }
    p->out = x;
    ggml_set_output(p->out);
    if (p->graph != NULL)
        ggml_build_forward_expand(p->graph, p->out);
    return p->graph != NULL && p->out != NULL;
}

static bool make_allocator(struct program *p)
{
    if (p->variant->placement == BY_GALLOCR) {
        p->gallocr = ggml_gallocr_new(ggml_backend_get_default_buffer_type(p->backend));
        return p->gallocr != NULL;
    }
    p->sched = ggml_backend_sched_new(&p->backend, NULL, 1, GGML_DEFAULT_GRAPH_SIZE, false, false);
    return p->sched != NULL;
}

static bool alloc_graph(struct program *p)
{
    if (p->gallocr != NULL)
        return ggml_gallocr_alloc_graph(p->gallocr, p->graph);
    ggml_backend_sched_reset(p->sched);
    return ggml_backend_sched_alloc_graph(p->sched, p->graph);
}

static void set_inputs(struct program *p, int step)
{
    int32_t pos[N_TOKENS];
    ggml_fp16_t mask[GGML_PAD(N_TOKENS, GGML_KQ_MASK_PAD)][N_TOKENS];
    for (int t = 0; t < (int) p->mask->ne[1]; t++) {
        if (t < N_TOKENS)
            pos[t] = t;
        for (int j = 0; j < N_TOKENS; j++)
            mask[t][j] = ggml_fp32_to_fp16(j <= t ? 0.0f : -INFINITY);
    }
    ggml_backend_tensor_set(p->embd, p->host->embd[step], 0, ggml_nbytes(p->embd));
    ggml_backend_tensor_set(p->pos, pos, 0, sizeof pos);
    ggml_backend_tensor_set(p->mask, mask, 0, ggml_nbytes(p->mask));
}

static bool compute(struct program *p)
{
    enum ggml_status status = p->gallocr != NULL ? ggml_backend_graph_compute(p->backend, p->graph)
                                                 : ggml_backend_sched_graph_compute(p->sched, p->graph);
    if (status != GGML_STATUS_SUCCESS && report->failed_status == 0)
        report->failed_status = status;
    return status == GGML_STATUS_SUCCESS;
}

/* One computation: place the graph, set the inputs, compute, read the
 * output back. */
static bool compute_step(struct program *p, int s)
{
    p->step = STEP_ALLOC_GRAPH;
    if (!alloc_graph(p))
        return false;
    set_inputs(p, s);
    p->step = STEP_COMPUTE;
    if (!compute(p))
        return false;
    ggml_backend_tensor_get(p->out, report->out[s], 0, sizeof report->out[s]);
    return true;
}

/* A new graph (the old one may be the one marked failed). */
static bool rebuild_graph(struct program *p)
{
    ggml_free(p->graph_ctx);
    p->graph_ctx = NULL;
    return make_graph_context(p) && make_graph(p);
}

static bool call_step(struct program *p, enum step step)
{
    p->step = step;
    switch (step) {
    case STEP_BACKEND: return make_backend(p);
    case STEP_WEIGHTS_CONTEXT: return make_weights_context(p);
    case STEP_WEIGHTS_BUFFER: return make_weights_buffer(p);
    case STEP_WEIGHTS_LOAD: return load_weights(p);
    case STEP_GRAPH_CONTEXT: return make_graph_context(p);
    case STEP_GRAPH: return make_graph(p);
    case STEP_ALLOCATOR: return make_allocator(p);
    default: return compute_step(p, p->compute_index);
    }
}

/*
 * Runs one step of the program.  A failure is noted and the step retried
 * once (the allocator fails once, and objects stay usable after an
 * allocation failure); before the retry, what the step may have left half
 * made is freed, and a graph is made again (it may be the graph that
 * failed: ggml_build_forward_expand marks it).  A step that succeeds must
 * not have logged an ERROR message.
 */
static bool attempt(struct program *p, enum step step)
{
    int before = report->errors;
    if (call_step(p, step)) {
        /* a graph that could not be built reports it when placed or computed */
        report->message_for_success |= step != STEP_GRAPH && report->errors > before;
        return true;
    }
    if (report->failed_step == STEP_NONE)
        report->failed_step = p->step;
    bool ready = true;
    if (step == STEP_WEIGHTS_CONTEXT) {
        ggml_free(p->weights_ctx);
        p->weights_ctx = NULL;
    } else if (step == STEP_GRAPH) {
        ggml_free(p->graph_ctx);
        p->graph_ctx = NULL;
        ready = make_graph_context(p);
    } else if (step == STEP_COMPUTE) {
        ready = rebuild_graph(p);
    }
    before = report->errors;
    if (ready && call_step(p, step)) {
        report->message_for_success |= report->errors > before;
        return true;
    }
    report->retry_failed = true;
    return false;
}

static bool run_steps(struct program *p)
{
    if (p->variant->mirror)
        ggml_numa_init(GGML_NUMA_STRATEGY_MIRROR);
    if (!attempt(p, STEP_BACKEND))
        return false;
    if (p->variant->weights != WEIGHTS_SET) {
        if (!attempt(p, STEP_WEIGHTS_LOAD))
            return false;
    } else {
        if (!attempt(p, STEP_WEIGHTS_CONTEXT) || !attempt(p, STEP_WEIGHTS_BUFFER))
            return false;
        upload_weights(p);
    }
    if (!attempt(p, STEP_GRAPH_CONTEXT) || !attempt(p, STEP_GRAPH) || !attempt(p, STEP_ALLOCATOR))
        return false;
    for (int s = 0; s < N_STEPS; s++) {
        p->compute_index = s;
        if (!attempt(p, STEP_COMPUTE))
            return false;
    }
    return true;
}

static void program_free(struct program *p)
{
    ggml_gallocr_free(p->gallocr);
    ggml_backend_sched_free(p->sched);
    ggml_free(p->graph_ctx);
    ggml_backend_buffer_free(p->weights);
    ggml_free(p->weights_ctx);
    ggml_backend_free(p->backend);
}

/* ------------------------------------------------------------ the child */

/* Counts ERROR messages and keeps the first two; allocates nothing. */
static void child_log(enum ggml_log_level level, const char *text, void *user_data)
{
    (void) user_data;
    if (level != GGML_LOG_LEVEL_ERROR)
        return;
    if (report->errors < 2)
        snprintf(report->error_text[report->errors], sizeof report->error_text[0], "%s", text);
    report->errors++;
}

static bool in_hwloc(void *const *frames, int n)
{
    for (int i = 0; i < n; i++) {
        Dl_info info;
        if (dladdr(frames[i], &info) != 0 && info.dli_fname != NULL && strstr(info.dli_fname, "libhwloc") != NULL)
            return true;
    }
    return false;
}

static void on_fatal_signal(int sig)
{
    void *frames[64];
    int n = backtrace(frames, 64);
    report->crashed_in_hwloc = in_hwloc(frames, n);
    report->events = fault_events();
    report->fired = fault_fired();
    report->n_frames = fault_frames(report->frames, FAULT_MAX_FRAMES);
    static const char head[] = "test-fault: fatal signal; stack:\n";
    if (write(STDERR_FILENO, head, sizeof head - 1) < 0)
        _exit(126);
    backtrace_symbols_fd(frames, n, STDERR_FILENO);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void catch_fatal_signals(void)
{
    signal(SIGABRT, on_fatal_signal);
#if !defined(FAULT_ASAN)
    /* ASan reports these itself, with the stack. */
    signal(SIGSEGV, on_fatal_signal);
    signal(SIGBUS, on_fatal_signal);
    signal(SIGFPE, on_fatal_signal);
    signal(SIGILL, on_fatal_signal);
#endif
}

/* Runs the program with the fail_at-th allocation failing; exits. */
static void child(const struct variant *v, long fail_at, bool two_nodes)
{
    alarm(CHILD_TIMEOUT_SECONDS);
    catch_fatal_signals();
    if (v->mirror && two_nodes) {
        setenv("HWLOC_SYNTHETIC", "pack:1 numa:2 core:1 pu:1", 1);
        setenv("HWLOC_THISSYSTEM", "1", 1);
    }
    static struct host_model host;
    host_model_init(&host);
    ggml_log_set(child_log, NULL);
    if (!v->before_first_init)
        ggml_backend_free(ggml_backend_cpu_init());
    report->errors = 0;

    if (v->weights != WEIGHTS_SET && !write_weights_file(&host))
        exit(3);

    struct program p = { .variant = v, .host = &host };
    fault_arm(fail_at);
    bool done = run_steps(&p);
    program_free(&p);
    fault_disarm();
    if (v->weights != WEIGHTS_SET)
        unlink(gguf_path);

    report->events = fault_events();
    report->fired = fault_fired();
    report->live_blocks = fault_live_blocks();
    report->live_bytes = fault_live_bytes();
    report->n_frames = fault_frames(report->frames, FAULT_MAX_FRAMES);
    report->mirror_two_nodes = ggml_is_numa();
    for (int s = 0; s < N_STEPS; s++)
        report->nmse[s] = done ? layers_nmse(&host, s, report->out[s]) : INFINITY;
    report->finished = done;
    report->reported = true;
    exit(0);
}

/* ------------------------------------------------------------ the parent */

enum outcome {
    CORRECT,          /* no failure seen, right result */
    CLEAN_ERROR,      /* a call failed with one ERROR message; the retry worked */
    ABSORBED,         /* one ERROR message from a call that returns nothing */
    CRASH,
    HWLOC_DEATH,      /* a crash with hwloc on the stack */
    HWLOC_LEAK,       /* a leak after hwloc absorbed the failure */
    HANG,
    WRONG_RESULT,
    LEAK,
    DOUBLED_MESSAGE,  /* more than one ERROR message */
    SILENT_ERROR,     /* a call failed without an ERROR message */
    NOT_USABLE,       /* the retry failed */
    MESSAGE_FOR_SUCCESS, /* a call that succeeded logged an ERROR message */
    N_OUTCOMES,
};

static const char *const outcome_names[N_OUTCOMES] = {
    "correct", "clean errors", "absorbed with one message", "crashes", "deaths in hwloc", "leaks in hwloc", "hangs",
    "wrong results", "leaks", "doubled messages", "errors without message", "retries failed",
    "messages for a success",
};

struct run {
    enum outcome outcome;
    int exit_status;  /* waitpid's */
    char stderr_tail[2048];
};

static int stderr_fd = -1;
static bool two_nodes;

/*
 * True when the child's standard error names hwloc's library anywhere
 * (a sanitizer's report of a death lists the frames, but the frame in
 * hwloc may lie far from the end: deep stacks, long build paths).
 */
static bool stderr_mentions_hwloc(void)
{
    static const char needle[] = "libhwloc";
    char buf[8192];
    off_t at = 0;
    for (;;) {
        ssize_t n = pread(stderr_fd, buf, sizeof buf - 1, at);
        if (n <= 0)
            return false;
        buf[n] = '\0';
        if (strstr(buf, needle) != NULL)
            return true;
        if ((size_t) n < sizeof needle)
            return false;
        at += n - (off_t) (sizeof needle - 2);   /* overlap: a match across two reads */
    }
}

static void read_tail(struct run *r)
{
    off_t end = lseek(stderr_fd, 0, SEEK_END);
    off_t from = end > (off_t) sizeof r->stderr_tail - 1 ? end - (off_t) sizeof r->stderr_tail + 1 : 0;
    ssize_t n = pread(stderr_fd, r->stderr_tail, sizeof r->stderr_tail - 1, from);
    r->stderr_tail[n > 0 ? n : 0] = '\0';
}

static bool same_output(const struct report *a, const struct report *b)
{
    return memcmp(a->out, b->out, sizeof a->out) == 0;
}

/* Runs one child; classifies it against the run without failure (NULL: this is it). */
static void run_child(const struct variant *v, long fail_at, const struct report *baseline, struct run *r)
{
    memset(report, 0, sizeof *report);
    if (ftruncate(stderr_fd, 0) != 0 || lseek(stderr_fd, 0, SEEK_SET) != 0)
        r->stderr_tail[0] = '\0';
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(stderr_fd, STDOUT_FILENO);
        dup2(stderr_fd, STDERR_FILENO);
        child(v, fail_at, two_nodes);
    }
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    r->exit_status = status;
    read_tail(r);
    const struct report *c = report;
    bool hwloc_seen = c->crashed_in_hwloc || stderr_mentions_hwloc();
    if (pid < 0)
        r->outcome = CRASH;
    else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        r->outcome = HANG;
    else if (WIFEXITED(status) && WEXITSTATUS(status) != 0 && strstr(r->stderr_tail, "byte(s) leaked in") != NULL)
        r->outcome = in_hwloc(c->frames, c->n_frames) ? HWLOC_LEAK : LEAK;
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        r->outcome = hwloc_seen ? HWLOC_DEATH : CRASH;
    else if (c->errors > 1)
        r->outcome = DOUBLED_MESSAGE;
    else if (c->message_for_success)
        r->outcome = MESSAGE_FOR_SUCCESS;
    else if (c->retry_failed || !c->finished)
        r->outcome = NOT_USABLE;
    else if (c->nmse[0] > OUT_NMSE_MAX || c->nmse[1] > OUT_NMSE_MAX)
        r->outcome = WRONG_RESULT;
    else if (baseline != NULL && (c->live_blocks < 0 || c->live_blocks > baseline->live_blocks))
        r->outcome = in_hwloc(c->frames, c->n_frames) ? HWLOC_LEAK : LEAK;
    else if (c->failed_step != STEP_NONE)
        r->outcome = c->errors == 1 ? CLEAN_ERROR : SILENT_ERROR;
    else
        r->outcome = c->errors == 1 ? ABSORBED : CORRECT;
}

static void describe_run(const struct variant *v, long fail_at, struct run *r, const struct report *baseline)
{
    const struct report *c = report;
    tap_diag("%s at N=%ld (replay: tests/test-fault --replay %s %ld)", outcome_names[r->outcome], fail_at, v->name,
             fail_at);
    if (WIFSIGNALED(r->exit_status))
        tap_diag("  child killed by signal %d (%s)", WTERMSIG(r->exit_status), strsignal(WTERMSIG(r->exit_status)));
    else
        tap_diag("  child exit status %d", WEXITSTATUS(r->exit_status));
    tap_diag("  allocations counted %ld, failure injected: %s; first failed call: %s (status %d)%s", c->events,
             c->fired ? "yes" : "no", step_names[c->failed_step], c->failed_status,
             c->retry_failed ? "; its retry failed too" : "");
    tap_diag("  ERROR messages %d", c->errors);
    for (int i = 0; i < c->errors && i < 2; i++)
        tap_diag("    %.*s", (int) strcspn(c->error_text[i], "\n"), c->error_text[i]);
    if (baseline != NULL)
        tap_diag("  live blocks at the end %ld (%zu bytes), without failure %ld (%zu bytes)", c->live_blocks,
                 c->live_bytes, baseline->live_blocks, baseline->live_bytes);
    if (c->finished)
        tap_diag("  nmse %.3g %.3g%s", c->nmse[0], c->nmse[1],
                 baseline != NULL && !same_output(c, baseline) ? ", not the bytes of the run without failure" : "");
    if (c->n_frames > 0) {
        tap_diag("  the failed allocation:");
        char **names = backtrace_symbols(c->frames, c->n_frames);
        for (int i = 1; names != NULL && i < c->n_frames; i++)
            tap_diag("    %s", names[i]);
        free(names);
    }
    if (r->stderr_tail[0] != '\0') {
        tap_diag("  child's standard error (end):");
        for (char *line = strtok(r->stderr_tail, "\n"); line; line = strtok(NULL, "\n"))
            tap_diag("    %s", line);
    }
}

struct tally {
    long swept, last_n, events;
    long counts[N_OUTCOMES];
    long other_bytes; /* correct runs whose bytes differ from the run without failure */
};

/* FAULT_VERBOSE: one line for every N. */
static bool verbose;

static long stride(void)
{
    const char *sweep = getenv("FAULT_SWEEP");
    if (sweep != NULL && strcmp(sweep, "full") == 0)
        return 1;
    const char *s = getenv("FAULT_STRIDE");
    long n = s != NULL ? strtol(s, NULL, 10) : 1;
    return n >= 1 ? n : 1;
}

/* Sweeps N from 1 until a run in which no allocation failed. */
static bool sweep(const struct variant *v, struct tally *t)
{
    static struct report baseline;
    struct run r;
    memset(t, 0, sizeof *t);
    run_child(v, 0, NULL, &r);
    baseline = *report;
    if (r.outcome != CORRECT) {
        tap_diag("%s: the run without failure is not right", v->name);
        describe_run(v, 0, &r, NULL);
        return false;
    }
    t->events = baseline.events;
    const long step = stride(), limit = 4 * baseline.events + 1000;
    for (long n = 1; n <= limit; n += step) {
        run_child(v, n, &baseline, &r);
        t->swept++;
        t->last_n = n;
        if (report->reported && !report->fired) {
            if (r.outcome != CORRECT && r.outcome != ABSORBED)
                t->counts[r.outcome]++;
            break;
        }
        t->counts[r.outcome]++;
        if ((r.outcome == CORRECT || r.outcome == CLEAN_ERROR || r.outcome == ABSORBED) && !same_output(report, &baseline))
            t->other_bytes++;
        bool defect = r.outcome != CORRECT && r.outcome != CLEAN_ERROR && r.outcome != ABSORBED &&
                      !(v->before_first_init && (r.outcome == HWLOC_DEATH || r.outcome == HWLOC_LEAK));
        if (defect && t->counts[r.outcome] <= DEFECTS_SHOWN)
            describe_run(v, n, &r, &baseline);
        else if (verbose)
            tap_diag("N=%ld: %s; first failed call: %s; %d ERROR messages%s%.*s", n, outcome_names[r.outcome],
                     step_names[report->failed_step], report->errors, report->errors ? ": " : "",
                     (int) strcspn(report->error_text[0], "\n"), report->error_text[0]);
        /* the sweep's end is run whatever the stride */
        if (step > 1 && n < t->events && n + step > t->events)
            n = t->events - step;
    }
    return true;
}

static void print_counts(const struct tally *t, double seconds)
{
    char line[512];
    int used = snprintf(line, sizeof line, "  N swept %ld (allocations without failure %ld, last N %ld, %.1f s):",
                        t->swept, t->events, t->last_n, seconds);
    for (int o = 0; o < N_OUTCOMES && used < (int) sizeof line; o++)
        used += snprintf(line + used, sizeof line - (size_t) used, "%s %s %ld", o ? "," : "", outcome_names[o],
                         t->counts[o]);
    tap_diag("%s", line);
    if (t->other_bytes > 0)
        tap_diag("  %ld right results differ in their bytes from the run without failure (within the tolerance)",
                 t->other_bytes);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int n_variants;
static struct variant variants[16];

static void add_variant(enum placement placement, int n_threads, bool mirror, bool before_first_init,
                        enum weights_source weights)
{
    static const char *const sources[] = { "", "gguf-mapped-", "gguf-read-" };
    struct variant *v = &variants[n_variants++];
    *v = (struct variant) { .placement = placement, .n_threads = n_threads, .mirror = mirror,
                            .before_first_init = before_first_init, .weights = weights };
    snprintf(v->name, sizeof v->name, "%s%s%s-%dt-%s", before_first_init ? "first-init-" : "", sources[weights],
             placement == BY_GALLOCR ? "gallocr" : "sched", n_threads, mirror ? "mirror" : "default");
}

/* Whether this process may run on PUs 0 and 1 (the synthetic two nodes). */
static bool may_run_on_pus_0_and_1(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_ISSET(0, &set) && CPU_ISSET(1, &set);
}

static int replay(const char *name, long n)
{
    for (int i = 0; i < n_variants; i++) {
        if (strcmp(variants[i].name, name) != 0)
            continue;
        struct run r;
        run_child(&variants[i], 0, NULL, &r);
        struct report baseline = *report;
        run_child(&variants[i], n, &baseline, &r);
        describe_run(&variants[i], n, &r, &baseline);
        return r.outcome == CORRECT || r.outcome == CLEAN_ERROR || r.outcome == ABSORBED ? 0 : 1;
    }
    fprintf(stderr, "test-fault: no variant %s; the variants:", name);
    for (int i = 0; i < n_variants; i++)
        fprintf(stderr, " %s", variants[i].name);
    fputc('\n', stderr);
    return 2;
}

int main(int argc, char **argv)
{
    for (int mirror = 0; mirror <= 1; mirror++)
        for (int placement = BY_GALLOCR; placement <= BY_SCHED; placement++)
            for (int threads = 1; threads <= 3; threads++)
                add_variant((enum placement) placement, threads, mirror, false, WEIGHTS_SET);
    add_variant(BY_SCHED, 2, false, false, WEIGHTS_GGUF_MAPPED);
    add_variant(BY_SCHED, 2, false, false, WEIGHTS_GGUF_READ);
    add_variant(BY_GALLOCR, 2, false, true, WEIGHTS_SET);

    report = mmap(NULL, sizeof *report, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char path[] = "/tmp/test-fault.XXXXXX";
    stderr_fd = mkstemp(path);
    if (report == MAP_FAILED || stderr_fd < 0) {
        printf("Bail out! cannot set up the children's report and log\n");
        return 99;
    }
    unlink(path);
    /* the unwinder is loaded here, not in every child */
    fault_load_unwinder();
    two_nodes = may_run_on_pus_0_and_1();
    verbose = getenv("FAULT_VERBOSE") != NULL;
    /* LeakSanitizer, where built in, checks every child at its exit */
    const char *asan = getenv("ASAN_OPTIONS");
    char options[1024];
    snprintf(options, sizeof options, "%s%sdetect_leaks=1:allocator_may_return_null=1", asan ? asan : "",
             asan && asan[0] ? ":" : "");
    setenv("ASAN_OPTIONS", options, 1);

    if (argc == 4 && strcmp(argv[1], "--replay") == 0)
        return replay(argv[2], strtol(argv[3], NULL, 10));

    if (!two_nodes)
        tap_diag("this process may not run on PUs 0 and 1: MIRROR runs on this machine's nodes");
    const char *only = argc == 3 && strcmp(argv[1], "--only") == 0 ? argv[2] : NULL;
    for (int i = 0; i < n_variants; i++) {
        const struct variant *v = &variants[i];
        if (only != NULL && strcmp(v->name, only) != 0)
            continue;
        struct tally t;
        double start = now();
        bool baseline_ok = sweep(v, &t);
        double seconds = now() - start;
        if (v->before_first_init) {
            /* a report: hwloc does not survive allocation failure in its first topology load */
            tap_diag("armed before the first CPU backend init of the process (deaths in hwloc are not failures):");
            print_counts(&t, seconds);
            long others = 0;
            for (int o = CRASH; o < N_OUTCOMES; o++)
                others += o == HWLOC_DEATH || o == HWLOC_LEAK ? 0 : t.counts[o];
            ok(baseline_ok && others == 0, "%s: no crash outside hwloc, no hang, leak, doubled message or "
               "wrong result over %ld N (%ld deaths and %ld leaks in hwloc)", v->name, t.swept,
               t.counts[HWLOC_DEATH], t.counts[HWLOC_LEAK]);
            continue;
        }
        long defects = 0;
        for (int o = CRASH; o < N_OUTCOMES; o++)
            defects += t.counts[o];
        ok(baseline_ok && defects == 0, "%s: every allocation failure is one clean error or absorbed, over %ld N", v->name,
           t.swept);
        print_counts(&t, seconds);
        if (v->mirror && !report->mirror_two_nodes)
            tap_diag("  MIRROR ran on one node");
    }
    close(stderr_fd);
    return tap_done();
}
