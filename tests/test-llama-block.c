/*
 * test-llama-block.c - a 2-layer llama-style transformer computed end to
 * end on the CPU backend and checked against a double-precision model of
 * the same network written here.
 *
 * Each layer: rms_norm * weight, Q/K/V projections (Q4_0 weights), RoPE
 * (normal or NeoX), K and V written into an F16 KV cache with set_rows at
 * scattered slots, attention over a window of the cache with a causal
 * mask (either ggml_flash_attn_ext, or mul_mat K^T Q, soft_max_ext with
 * the mask and mul_mat with V), grouped-query heads, output projection
 * (Q4_0), residual add, rms_norm * weight, SwiGLU FFN (F16 weights,
 * ggml_swiglu_split), residual add.  Two steps run on the same cache: a
 * prompt of 5 tokens, then 3 more tokens that attend to all 8.
 *
 * The graph is built in a no_alloc context, placed by ggml_gallocr in a
 * CPU buffer, and computed with ggml_backend_graph_compute at 1..4 threads
 * with the reference kernels on and off.  The model's weights and caches
 * live in CPU buffers from ggml_backend_alloc_ctx_tensors.  The reference
 * reads the weights as stored (dequantized with the type traits' to_float)
 * and keeps everything else in double precision.
 */
#include <stdio.h>

#include "tap.h"
#include "op-test.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

#define N_EMBD 128
#define N_HEAD 4
#define N_HEAD_KV 2
#define HEAD_DIM 32
#define N_EMBD_KV (N_HEAD_KV * HEAD_DIM)
#define N_FF 256
#define N_LAYER 2
#define KV_SIZE 16          /* cache slots */
#define N_KV 12             /* slots the attention reads (the cache's first N_KV) */
#define MAX_TOKENS 8
#define RMS_EPS 1e-5f
#define ROPE_BASE 10000.0f

#define N_STEPS 2
static const int step_tokens[N_STEPS] = { 5, 3 };
static const int step_slots[N_STEPS][MAX_TOKENS] = { { 3, 0, 7, 1, 9 }, { 2, 11, 4 } };

/* ------------------------------------------------------------------ model */

struct layer {
    struct ggml_tensor *attn_norm, *wq, *wk, *wv, *wo, *ffn_norm, *w_gate, *w_up, *w_down;
};

/* The same weights as the library sees them and, dequantized, as the reference does. */
struct ref_layer {
    double attn_norm[N_EMBD], ffn_norm[N_EMBD];
    double *wq, *wk, *wv, *wo, *w_gate, *w_up, *w_down;   /* [out][in] */
};

struct model {
    struct ggml_context *ctx, *cache_ctx;
    ggml_backend_buffer_t buffer, cache_buffer;
    struct layer layers[N_LAYER];
    struct ggml_tensor *k_cache[N_LAYER], *v_cache[N_LAYER];
    struct ref_layer ref[N_LAYER];
    double embd[N_STEPS][MAX_TOKENS][N_EMBD];
};

/* Uploads random values to t (rows of n_in), scaled so outputs keep unit size; keeps the stored values. */
static void init_weight(struct ggml_tensor *t, double amplitude, uint64_t *seed, double **ref)
{
    const int64_t n_in = t->ne[0], n_out = t->ne[1];
    float *values = malloc((size_t) (n_in * n_out) * sizeof *values);
    for (int64_t i = 0; i < n_in * n_out; i++)
        values[i] = (float) optest_uniform(seed, -amplitude, amplitude);
    void *bytes = malloc(ggml_nbytes(t));
    if (t->type == GGML_TYPE_F16)
        ggml_fp32_to_fp16_row(values, bytes, n_in * n_out);
    else
        ggml_quantize_chunk(t->type, values, bytes, 0, n_out, n_in, NULL);
    ggml_backend_tensor_set(t, bytes, 0, ggml_nbytes(t));

    /* what was stored, exactly */
    *ref = malloc((size_t) (n_in * n_out) * sizeof **ref);
    const ggml_to_float_t to_float = ggml_get_type_traits(t->type)->to_float;
    for (int64_t r = 0; r < n_out; r++) {
        to_float((const char *) bytes + r * t->nb[1], values, n_in);
        for (int64_t c = 0; c < n_in; c++)
            (*ref)[r * n_in + c] = values[c];
    }
    free(values);
    free(bytes);
}

static void init_norm(struct ggml_tensor *t, uint64_t *seed, double *ref)
{
    float values[N_EMBD];
    for (int i = 0; i < N_EMBD; i++) {
        values[i] = (float) optest_uniform(seed, 0.5, 1.5);
        ref[i] = values[i];
    }
    ggml_backend_tensor_set(t, values, 0, sizeof values);
}

static bool model_init(struct model *m, ggml_backend_t backend)
{
    memset(m, 0, sizeof *m);
    struct ggml_init_params params = { 64 * ggml_tensor_overhead(), NULL, true };
    m->ctx = ggml_init(params);
    m->cache_ctx = ggml_init(params);
    for (int l = 0; l < N_LAYER; l++) {
        struct layer *w = &m->layers[l];
        w->attn_norm = ggml_new_tensor_1d(m->ctx, GGML_TYPE_F32, N_EMBD);
        w->wq = ggml_new_tensor_2d(m->ctx, GGML_TYPE_Q4_0, N_EMBD, N_HEAD * HEAD_DIM);
        w->wk = ggml_new_tensor_2d(m->ctx, GGML_TYPE_Q4_0, N_EMBD, N_EMBD_KV);
        w->wv = ggml_new_tensor_2d(m->ctx, GGML_TYPE_Q4_0, N_EMBD, N_EMBD_KV);
        w->wo = ggml_new_tensor_2d(m->ctx, GGML_TYPE_Q4_0, N_HEAD * HEAD_DIM, N_EMBD);
        w->ffn_norm = ggml_new_tensor_1d(m->ctx, GGML_TYPE_F32, N_EMBD);
        w->w_gate = ggml_new_tensor_2d(m->ctx, GGML_TYPE_F16, N_EMBD, N_FF);
        w->w_up = ggml_new_tensor_2d(m->ctx, GGML_TYPE_F16, N_EMBD, N_FF);
        w->w_down = ggml_new_tensor_2d(m->ctx, GGML_TYPE_F16, N_FF, N_EMBD);
        m->k_cache[l] = ggml_new_tensor_2d(m->cache_ctx, GGML_TYPE_F16, N_EMBD_KV, KV_SIZE);
        m->v_cache[l] = ggml_new_tensor_2d(m->cache_ctx, GGML_TYPE_F16, N_EMBD_KV, KV_SIZE);
    }
    m->buffer = ggml_backend_alloc_ctx_tensors(m->ctx, backend);
    m->cache_buffer = ggml_backend_alloc_ctx_tensors(m->cache_ctx, backend);
    if (m->buffer == NULL || m->cache_buffer == NULL)
        return false;

    uint64_t seed = 0x11a3a001;
    const double a_embd = sqrt(3.0 / N_EMBD), a_ff = sqrt(3.0 / N_FF);
    for (int l = 0; l < N_LAYER; l++) {
        struct layer *w = &m->layers[l];
        struct ref_layer *r = &m->ref[l];
        init_norm(w->attn_norm, &seed, r->attn_norm);
        init_weight(w->wq, a_embd, &seed, &r->wq);
        init_weight(w->wk, a_embd, &seed, &r->wk);
        init_weight(w->wv, a_embd, &seed, &r->wv);
        init_weight(w->wo, a_embd, &seed, &r->wo);
        init_norm(w->ffn_norm, &seed, r->ffn_norm);
        init_weight(w->w_gate, a_embd, &seed, &r->w_gate);
        init_weight(w->w_up, a_embd, &seed, &r->w_up);
        init_weight(w->w_down, a_ff, &seed, &r->w_down);
    }
    for (int s = 0; s < N_STEPS; s++)
        for (int t = 0; t < step_tokens[s]; t++)
            for (int i = 0; i < N_EMBD; i++)
                m->embd[s][t][i] = (float) optest_uniform(&seed, -1.0, 1.0);
    return true;
}

static void model_free(struct model *m)
{
    for (int l = 0; l < N_LAYER; l++) {
        struct ref_layer *r = &m->ref[l];
        free(r->wq);
        free(r->wk);
        free(r->wv);
        free(r->wo);
        free(r->w_gate);
        free(r->w_up);
        free(r->w_down);
    }
    ggml_backend_buffer_free(m->buffer);
    ggml_backend_buffer_free(m->cache_buffer);
    ggml_free(m->ctx);
    ggml_free(m->cache_ctx);
}

/* Position of the token in each slot after the steps up to and including step (-1: empty). */
static void slot_positions(int step, int pos[KV_SIZE])
{
    for (int j = 0; j < KV_SIZE; j++)
        pos[j] = -1;
    int p = 0;
    for (int s = 0; s <= step; s++)
        for (int t = 0; t < step_tokens[s]; t++)
            pos[step_slots[s][t]] = p++;
}

static int first_position(int step)
{
    int p = 0;
    for (int s = 0; s < step; s++)
        p += step_tokens[s];
    return p;
}

/* ------------------------------------------------------------ the graph */

struct variant {
    bool flash;
    int rope_mode;      /* 0 normal, GGML_ROPE_TYPE_NEOX */
};

struct step_graph {
    struct ggml_context *ctx;
    struct ggml_cgraph *graph;
    struct ggml_tensor *embd, *pos, *slots, *mask, *out;
};

static struct ggml_tensor *rope(struct ggml_context *ctx, struct ggml_tensor *x, struct ggml_tensor *pos, int mode)
{
    return ggml_rope_ext(ctx, x, pos, NULL, HEAD_DIM, mode, 0, ROPE_BASE, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
}

static struct ggml_tensor *attention(struct ggml_context *ctx, const struct variant *var, struct ggml_tensor *q,
                                     struct ggml_tensor *k, struct ggml_tensor *v, struct ggml_tensor *mask, int T)
{
    const float scale = 1.0f / sqrtf((float) HEAD_DIM);
    if (var->flash) {
        struct ggml_tensor *o = ggml_flash_attn_ext(ctx, q, k, v, mask, scale, 0.0f, 0.0f);
        ggml_flash_attn_ext_set_prec(o, GGML_PREC_F32);
        return ggml_reshape_2d(ctx, o, N_HEAD * HEAD_DIM, T);          /* [hd, n_head, T] is contiguous */
    }
    struct ggml_tensor *kq = ggml_mul_mat(ctx, k, q);                    /* [n_kv, T, n_head] */
    kq = ggml_soft_max_ext(ctx, kq, mask, scale, 0.0f);
    struct ggml_tensor *vt = ggml_cont(ctx, ggml_transpose(ctx, v));    /* [n_kv, hd, n_head_kv] */
    struct ggml_tensor *kqv = ggml_mul_mat(ctx, vt, kq);                 /* [hd, T, n_head] */
    struct ggml_tensor *o = ggml_cont(ctx, ggml_permute(ctx, kqv, 0, 2, 1, 3));
    return ggml_reshape_2d(ctx, o, N_HEAD * HEAD_DIM, T);
}

/* The step's graph; NULL members when a constructor failed (graph marked failed too). */
static void build_step(struct step_graph *g, const struct model *m, const struct variant *var, int T)
{
    struct ggml_init_params params = { 512 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    g->ctx = ggml_init(params);
    struct ggml_context *ctx = g->ctx;
    g->embd = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, N_EMBD, T);
    g->pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, T);
    g->slots = ggml_new_tensor_1d(ctx, GGML_TYPE_I64, T);
    g->mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, N_KV, GGML_PAD(T, GGML_KQ_MASK_PAD));
    ggml_set_input(g->embd);
    ggml_set_input(g->pos);
    ggml_set_input(g->slots);
    ggml_set_input(g->mask);
    g->graph = ggml_new_graph(ctx);

    struct ggml_tensor *x = g->embd;
    for (int l = 0; l < N_LAYER; l++) {
        const struct layer *w = &m->layers[l];
        struct ggml_tensor *cur = ggml_mul(ctx, ggml_rms_norm(ctx, x, RMS_EPS), w->attn_norm);
        struct ggml_tensor *q = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w->wq, cur), HEAD_DIM, N_HEAD, T);
        struct ggml_tensor *k = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w->wk, cur), HEAD_DIM, N_HEAD_KV, T);
        struct ggml_tensor *v = ggml_mul_mat(ctx, w->wv, cur);
        q = rope(ctx, q, g->pos, var->rope_mode);
        k = rope(ctx, k, g->pos, var->rope_mode);

        /* into the cache at the step's slots, then the attended window, as [hd, n_kv, n_head_kv] views */
        struct ggml_tensor *k_all = ggml_set_rows(ctx, m->k_cache[l], ggml_reshape_2d(ctx, k, N_EMBD_KV, T), g->slots);
        struct ggml_tensor *v_all = ggml_set_rows(ctx, m->v_cache[l], v, g->slots);
        struct ggml_tensor *kv_views[2] = { NULL, NULL };
        struct ggml_tensor *alls[2] = { k_all, v_all };
        for (int i = 0; i < 2; i++) {
            if (alls[i] == NULL)
                continue;
            struct ggml_tensor *view = ggml_view_3d(ctx, alls[i], HEAD_DIM, N_HEAD_KV, N_KV,
                                                    ggml_row_size(GGML_TYPE_F16, HEAD_DIM), alls[i]->nb[1], 0);
            kv_views[i] = ggml_permute(ctx, view, 0, 2, 1, 3);
        }
        q = ggml_permute(ctx, q, 0, 2, 1, 3);                              /* [hd, T, n_head] */
        struct ggml_tensor *attn = attention(ctx, var, q, kv_views[0], kv_views[1], g->mask, T);
        x = ggml_add(ctx, x, ggml_mul_mat(ctx, w->wo, attn));

        cur = ggml_mul(ctx, ggml_rms_norm(ctx, x, RMS_EPS), w->ffn_norm);
        struct ggml_tensor *h = ggml_swiglu_split(ctx, ggml_mul_mat(ctx, w->w_gate, cur), ggml_mul_mat(ctx, w->w_up, cur));
        x = ggml_add(ctx, x, ggml_mul_mat(ctx, w->w_down, h));
    }
    g->out = x;
    ggml_build_forward_expand(g->graph, g->out);
}

/* Fills the step's inputs (after allocation). */
static void set_inputs(const struct step_graph *g, const struct model *m, int step)
{
    const int T = step_tokens[step], p0 = first_position(step);
    float embd[MAX_TOKENS * N_EMBD];
    int32_t pos[MAX_TOKENS];
    int64_t slots[MAX_TOKENS];
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < N_EMBD; i++)
            embd[t * N_EMBD + i] = (float) m->embd[step][t][i];
        pos[t] = p0 + t;
        slots[t] = step_slots[step][t];
    }
    int slot_pos[KV_SIZE];
    slot_positions(step, slot_pos);
    ggml_fp16_t mask[MAX_TOKENS * N_KV];
    for (int t = 0; t < (int) g->mask->ne[1]; t++)
        for (int j = 0; j < N_KV; j++) {
            const bool visible = t < T && slot_pos[j] >= 0 && slot_pos[j] <= p0 + t;
            mask[t * N_KV + j] = ggml_fp32_to_fp16(visible ? 0.0f : -INFINITY);
        }
    ggml_backend_tensor_set(g->embd, embd, 0, ggml_nbytes(g->embd));
    ggml_backend_tensor_set(g->pos, pos, 0, ggml_nbytes(g->pos));
    ggml_backend_tensor_set(g->slots, slots, 0, ggml_nbytes(g->slots));
    ggml_backend_tensor_set(g->mask, mask, 0, ggml_nbytes(g->mask));
}

/* ------------------------------------------------------------ reference */

struct ref_cache {
    double k[N_LAYER][KV_SIZE][N_EMBD_KV], v[N_LAYER][KV_SIZE][N_EMBD_KV];
};

/* Rotates every head of x (n_heads rows of HEAD_DIM) for position p. */
static void ref_rope(double *x, int n_heads, int p, int mode)
{
    for (int h = 0; h < n_heads; h++) {
        double *row = x + h * HEAD_DIM;
        for (int i = 0; i < HEAD_DIM / 2; i++) {
            const double theta = p * pow((double) ROPE_BASE, -2.0 * i / HEAD_DIM);
            const int i0 = mode == GGML_ROPE_TYPE_NEOX ? i : 2 * i;
            const int i1 = mode == GGML_ROPE_TYPE_NEOX ? i + HEAD_DIM / 2 : 2 * i + 1;
            const double x0 = row[i0], x1 = row[i1];
            row[i0] = x0 * cos(theta) - x1 * sin(theta);
            row[i1] = x0 * sin(theta) + x1 * cos(theta);
        }
    }
}

/* Runs step `step` of the reference; out[t][i] is the block's output for token t. */
static void ref_step(const struct model *m, struct ref_cache *cache, int step, int mode, double out[][N_EMBD])
{
    const int T = step_tokens[step], p0 = first_position(step);
    int slot_pos[KV_SIZE];
    slot_positions(step, slot_pos);
    static double x[MAX_TOKENS][N_EMBD], cur[MAX_TOKENS][N_EMBD], q[MAX_TOKENS][N_HEAD * HEAD_DIM];
    static double attn[MAX_TOKENS][N_HEAD * HEAD_DIM], tmp[N_EMBD], gate[N_FF], up[N_FF];
    for (int t = 0; t < T; t++)
        memcpy(x[t], m->embd[step][t], sizeof x[t]);
    for (int l = 0; l < N_LAYER; l++) {
        const struct ref_layer *w = &m->ref[l];
        for (int t = 0; t < T; t++) {
            optest_rms_norm(x[t], w->attn_norm, N_EMBD, (double) RMS_EPS, cur[t]);
            optest_matvec(w->wq, N_HEAD * HEAD_DIM, N_EMBD, cur[t], q[t]);
            ref_rope(q[t], N_HEAD, p0 + t, mode);
            double *krow = cache->k[l][step_slots[step][t]], *vrow = cache->v[l][step_slots[step][t]];
            optest_matvec(w->wk, N_EMBD_KV, N_EMBD, cur[t], krow);
            ref_rope(krow, N_HEAD_KV, p0 + t, mode);
            optest_matvec(w->wv, N_EMBD_KV, N_EMBD, cur[t], vrow);
        }
        for (int t = 0; t < T; t++)
            for (int h = 0; h < N_HEAD; h++) {
                const int hk = h / (N_HEAD / N_HEAD_KV);
                double score[N_KV], max = -INFINITY, norm = 0.0;
                for (int j = 0; j < N_KV; j++) {
                    score[j] = -INFINITY;
                    if (slot_pos[j] < 0 || slot_pos[j] > p0 + t)
                        continue;
                    double dot = 0.0;
                    for (int d = 0; d < HEAD_DIM; d++)
                        dot += q[t][h * HEAD_DIM + d] * cache->k[l][j][hk * HEAD_DIM + d];
                    score[j] = dot / sqrt((double) HEAD_DIM);
                    if (score[j] > max)
                        max = score[j];
                }
                double *o = attn[t] + h * HEAD_DIM;
                memset(o, 0, HEAD_DIM * sizeof *o);
                for (int j = 0; j < N_KV; j++) {
                    if (score[j] == -INFINITY)
                        continue;
                    const double p = exp(score[j] - max);
                    norm += p;
                    for (int d = 0; d < HEAD_DIM; d++)
                        o[d] += p * cache->v[l][j][hk * HEAD_DIM + d];
                }
                for (int d = 0; d < HEAD_DIM; d++)
                    o[d] /= norm;
            }
        for (int t = 0; t < T; t++) {
            optest_matvec(w->wo, N_EMBD, N_HEAD * HEAD_DIM, attn[t], tmp);
            for (int i = 0; i < N_EMBD; i++)
                x[t][i] += tmp[i];
            optest_rms_norm(x[t], w->ffn_norm, N_EMBD, (double) RMS_EPS, cur[t]);
            optest_matvec(w->w_gate, N_FF, N_EMBD, cur[t], gate);
            optest_matvec(w->w_up, N_FF, N_EMBD, cur[t], up);
            for (int i = 0; i < N_FF; i++)
                gate[i] = gate[i] / (1.0 + exp(-gate[i])) * up[i];
            optest_matvec(w->w_down, N_EMBD, N_FF, gate, tmp);
            for (int i = 0; i < N_EMBD; i++)
                x[t][i] += tmp[i];
        }
    }
    for (int t = 0; t < T; t++)
        memcpy(out[t], x[t], sizeof x[t]);
}

/* ------------------------------------------------------------------ runs */

/*
 * Threshold on the NMSE of what the two layers add to the embeddings (the
 * output minus the input, so that the residual path does not hide errors).
 * The library differs from the double-precision model by design in three
 * places: the activations entering the Q4_0 projections are quantized to
 * Q8_0 (steps of max|x| / 127 in blocks of 32: about 0.5% rms of each
 * value, NMSE ~2.5e-5 per projection), those entering the F16 FFN are
 * rounded to F16 (2^-11), and K and V are stored in an F16 cache.  Four
 * quantized projections feed each layer's attention output and two layers
 * are chained: measured NMSE 8e-5 to 9e-5 for every variant.  The bound
 * 1e-3 leaves a factor of ten and still catches real mistakes: a wrong
 * RoPE mode gives 0.1, an off-by-one causal mask 0.5, a wrong GQA head
 * mapping 1.2.
 */
#define BLOCK_NMSE_MAX 1e-3

struct run_result {
    bool ok;
    double nmse;
    const char *why;
};

static struct run_result run_variant(struct model *m, ggml_backend_t backend, const struct variant *var,
                                     double ref_out[N_STEPS][MAX_TOKENS][N_EMBD])
{
    struct run_result res = { false, INFINITY, NULL };
    ggml_backend_buffer_clear(m->cache_buffer, 0);
    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    double err = 0.0, norm = 0.0;
    for (int step = 0; step < N_STEPS; step++) {
        const int T = step_tokens[step];
        struct step_graph g;
        build_step(&g, m, var, T);
        if (g.out == NULL) {
            res.why = "a constructor failed";
            ggml_free(g.ctx);
            break;
        }
        if (!ggml_gallocr_alloc_graph(galloc, g.graph)) {
            res.why = "ggml_gallocr_alloc_graph failed";
            ggml_free(g.ctx);
            break;
        }
        set_inputs(&g, m, step);
        if (ggml_backend_graph_compute(backend, g.graph) != GGML_STATUS_SUCCESS) {
            res.why = "ggml_backend_graph_compute failed";
            ggml_free(g.ctx);
            break;
        }
        float out[MAX_TOKENS * N_EMBD];
        ggml_backend_tensor_get(g.out, out, 0, ggml_nbytes(g.out));
        for (int t = 0; t < T; t++)
            for (int i = 0; i < N_EMBD; i++) {
                const double want = ref_out[step][t][i] - m->embd[step][t][i];
                const double got = out[t * N_EMBD + i] - m->embd[step][t][i];
                err += (got - want) * (got - want);
                norm += want * want;
            }
        ggml_free(g.ctx);
        if (step == N_STEPS - 1) {
            res.nmse = isnan(err) ? INFINITY : err / norm;
            res.ok = res.nmse <= BLOCK_NMSE_MAX;
        }
    }
    ggml_gallocr_free(galloc);
    return res;
}

/* Names of the ops in a step graph that the CPU backend does not compute; empty when all are there. */
static void unsupported_ops(struct model *m, ggml_backend_t backend, const struct variant *var, char *names,
                            size_t size)
{
    names[0] = '\0';
    struct step_graph g;
    build_step(&g, m, var, step_tokens[0]);
    for (int i = 0; g.out != NULL && i < ggml_graph_n_nodes(g.graph); i++) {
        const struct ggml_tensor *node = ggml_graph_node(g.graph, i);
        if (ggml_backend_supports_op(backend, node) || strstr(names, ggml_op_desc(node)) != NULL)
            continue;
        const size_t used = strlen(names);
        snprintf(names + used, size - used, "%s%s", used ? ", " : "", ggml_op_desc(node));
    }
    if (g.out == NULL)
        snprintf(names, size, "a constructor (the graph could not be built: %.160s)", tap_last_log());
    ggml_free(g.ctx);
}

int main(void)
{
    tap_capture_log();
    ggml_backend_t backend = ggml_backend_cpu_init();
    ok(backend != NULL, "the CPU backend starts");
    if (backend == NULL)
        return tap_done();
    static struct model m;
    ok(model_init(&m, backend), "the weights and the KV cache are allocated in CPU buffers");

    const struct variant variants[] = {
        { true, 0 }, { true, GGML_ROPE_TYPE_NEOX }, { false, 0 }, { false, GGML_ROPE_TYPE_NEOX },
    };
    const int n_variants = (int) (sizeof variants / sizeof variants[0]);
    for (int vi = 0; vi < n_variants; vi++) {
        const struct variant *var = &variants[vi];
        const char *name = var->flash ? "flash attention" : "softmax attention";
        const char *rope_name = var->rope_mode == GGML_ROPE_TYPE_NEOX ? "neox rope" : "normal rope";
        char missing[256];
        unsupported_ops(&m, backend, var, missing, sizeof missing);
        if (missing[0] != '\0') {
            char reason[512];
            snprintf(reason, sizeof reason, "%s, %s: not computed by the CPU backend yet: %s", name, rope_name,
                     missing);
            tap_skip(8, reason);
            tap_log_errors();
            continue;
        }

        static double ref_out[N_STEPS][MAX_TOKENS][N_EMBD];
        static struct ref_cache ref_cache;
        memset(&ref_cache, 0, sizeof ref_cache);
        for (int step = 0; step < N_STEPS; step++)
            ref_step(&m, &ref_cache, step, var->rope_mode, ref_out[step]);

        for (int use_ref = 0; use_ref <= 1; use_ref++)
            for (int n_threads = 1; n_threads <= 4; n_threads++) {
                ggml_backend_cpu_set_n_threads(backend, n_threads);
                ggml_backend_cpu_set_use_ref(backend, use_ref);
                struct run_result r = run_variant(&m, backend, var, ref_out);
                ok(r.ok, "2-layer block, %s, %s, %d threads, %s kernels: nmse %.3g%s%s", name, rope_name,
                   n_threads, use_ref ? "reference" : "fast", r.nmse, r.why ? ": " : "", r.why ? r.why : "");
            }
    }
    is_int(tap_log_errors(), 0, "nothing was logged as an error");
    model_free(&m);
    ggml_backend_free(backend);
    return tap_done();
}
