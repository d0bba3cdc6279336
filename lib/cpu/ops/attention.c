/*
 * ops/attention.c - FLASH_ATTN_EXT: fused attention without the score
 * matrix.  For each query row i of head h (sequence s), with the K and V
 * heads h / (n_head / n_head_kv) and the keys j < n_kv:
 *
 *     x[j] = scale * (q_i . k_j)
 *     x[j] = softcap * tanh(x[j] / softcap)          when softcap != 0
 *     x[j] = x[j] + slope(h) * mask[i][j]            when there is a mask
 *     out_i = sum_j exp(x[j] - m) v_j / (sum_j exp(x[j] - m) + exp(sink[h] - m))
 *
 * where m is the largest of the x[j] and of the sink, and the sink term is
 * there only with sinks (src[4]).  A key whose slope(h) * mask value is
 * -INF is skipped entirely; a row with every key skipped and no sink comes
 * out as zeros, and with a sink also as zeros (the sink has no value).
 * slope(h) is 1 unless max_bias > 0; then, with n = 2^floor(log2(n_head)),
 * m0 = 2^(-max_bias / n) and m1 = 2^(-max_bias / 2 / n), it is m0^(h + 1)
 * for h < n and m1^(2 (h - n) + 1) otherwise.  The mask row is (i, h %
 * mask ne[2], s % mask ne[3]); only its first n_kv values are read.  The
 * output row lands at dst[:, h, i, s].
 *
 * Types: q F32; k any type with a CPU dot product (F32, F16, BF16, Q4_0,
 * Q4_1, Q5_0, Q5_1, Q8_0, MXFP4, NVFP4, Q1_0, Q2_0, IQ4_NL); v F32 or any
 * type with a dequantizer (the same list); mask F16; sinks F32.  Rows of q, k, v and the mask must be
 * contiguous (nb[0] is the element or block size); any other strides work,
 * so K/V caches can be read through permuted views.
 *
 * Precision: both GGML_PREC_DEFAULT and GGML_PREC_F32 compute the same way
 * here (the setting exists for backends that accumulate in F16): scores,
 * the running maximum, the running sum and the weighted sum of V are F32,
 * also for F16 V (which ggml's own CPU kernel accumulates in F16).
 *
 * Threads split the rows (query, head, sequence), queries of one head
 * adjacent so that a thread reads the same K/V head for its whole share.
 * The reference path is the textbook online softmax: one key at a time,
 * K and V rows dequantized to F32 and a plain F32 dot product with q.  The
 * other path converts q once to K's vec_dot_type and uses the type's CPU
 * dot product (as ggml does: for F16 K the query is rounded to F16, for
 * quantized K quantized to Q8_0/Q8_1), and works on tiles of keys: the
 * scores of a tile first, then at most one rescale of the accumulator per
 * tile, the tile's weights by the level's vector exp (softmax_exp_sum,
 * SOFT_MAX's bound), then the weighted V rows (F16 rows converted inside
 * the accumulation loop, other types through a row buffer).  Both paths give
 * each row to one thread whole, so results do not depend on the thread
 * count.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "ggml-impl.h"
#include "fp16-impl.h"
#include "cpu-private.h"
#include "generic/generic.h"

/* Keys scored at once by the tiled path. */
#define KEY_TILE 64

/* Per-thread scratch is rounded up to this many floats (a cache line). */
#define SCRATCH_ALIGN 16

static bool divides(int64_t d, int64_t n)
{
    return d > 0 ? n % d == 0 : n == 0;
}

static bool row_packed(const struct ggml_tensor *t)
{
    return t->nb[0] == ggml_type_size(t->type);
}

/* K needs a CPU dot product (fast path) and a dequantizer (reference path). */
static bool key_type_ok(enum ggml_type type)
{
    if (type == GGML_TYPE_F32)
        return true;
    const struct ggml_type_traits_cpu *cpu = ggml_get_type_traits_cpu(type);
    if (cpu == NULL || cpu->vec_dot == NULL || ggml_get_type_traits(type)->to_float == NULL)
        return false;
    const struct ggml_type_traits_cpu *dot = ggml_get_type_traits_cpu(cpu->vec_dot_type);
    return dot != NULL && dot->from_float != NULL;
}

static bool value_type_ok(enum ggml_type type)
{
    return type == GGML_TYPE_F32 || ggml_get_type_traits(type)->to_float != NULL;
}

static bool attn_supports(const struct ggml_tensor *dst)
{
    const struct ggml_tensor *q = dst->src[0], *k = dst->src[1], *v = dst->src[2];
    const struct ggml_tensor *mask = dst->src[3], *sinks = dst->src[4];
    if (q == NULL || k == NULL || v == NULL)
        return false;
    if (dst->type != GGML_TYPE_F32 || !ggml_is_contiguous(dst) || dst->ne[0] != v->ne[0] ||
        dst->ne[1] != q->ne[2] || dst->ne[2] != q->ne[1] || dst->ne[3] != q->ne[3])
        return false;
    if (q->type != GGML_TYPE_F32 || !key_type_ok(k->type) || !value_type_ok(v->type) || !row_packed(q) ||
        !row_packed(k) || !row_packed(v))
        return false;
    if (k->ne[0] != q->ne[0] || v->ne[1] != k->ne[1] || !divides(k->ne[2], q->ne[2]) ||
        !divides(k->ne[3], q->ne[3]) || !divides(v->ne[2], q->ne[2]) || !divides(v->ne[3], q->ne[3]))
        return false;
    if (mask != NULL && (mask->type != GGML_TYPE_F16 || !row_packed(mask) || mask->ne[0] < k->ne[1] ||
                         mask->ne[1] < q->ne[1] || !divides(mask->ne[2], q->ne[2]) ||
                         !divides(mask->ne[3], q->ne[3])))
        return false;
    if (sinks != NULL && (sinks->type != GGML_TYPE_F32 || !row_packed(sinks) || sinks->ne[0] < q->ne[2]))
        return false;
    const int32_t prec = ggml__get_op_params_i32(dst, 3);
    return prec == GGML_PREC_DEFAULT || prec == GGML_PREC_F32;
}

/* Floats of scratch one thread uses: q converted, a K row, a V row, the accumulator, scores. */
static int64_t scratch_floats(const struct ggml_tensor *dst)
{
    const int64_t dk = dst->src[0]->ne[0], dv = dst->src[2]->ne[0];
    const int64_t n = 2 * dk + 2 * dv + KEY_TILE;
    return (n + SCRATCH_ALIGN - 1) / SCRATCH_ALIGN * SCRATCH_ALIGN;
}

static size_t attn_work_size(const struct ggml_tensor *dst, int n_tasks)
{
    return (size_t) n_tasks * (size_t) scratch_floats(dst) * sizeof(float);
}

/* What every row of the node shares. */
struct attn_node {
    const struct ggml_tensor *q, *k, *v, *mask, *sinks;
    struct ggml_tensor *dst;
    int64_t dk, dv, n_kv, n_q, n_head;
    float scale, max_bias, softcap;     /* scale already divided by softcap when softcap != 0 */
    float m0, m1;
    uint32_t n_head_log2;
    ggml_to_float_t k_to_float, v_to_float;   /* NULL for F32 */
    ggml_from_float_t q_to_dot;               /* q into K's vec_dot_type */
    ggml_vec_dot_t dot;
    ggml_to_float_t v_to_float_fast;          /* the kernel table's, NULL for F32 */
    void (*v_axpy)(int64_t n, float *restrict acc, const void *restrict x, float w);  /* NULL: decode first */
    void (*axpy_f32)(int64_t n, float *restrict acc, const void *restrict x, float w);
    double (*exp_sum)(int64_t n, float *y, const float *x, float max);   /* the kernel table's softmax_exp_sum */
};

/* What one row (query i, head h, sequence s) reads and writes. */
struct attn_row {
    const float *q;
    const char *k, *v;           /* row 0 of the K and V heads */
    const ggml_fp16_t *mask;     /* NULL without a mask */
    float slope;
    bool has_sink;
    float sink;
    float *out;
};

static void attn_node_init(struct attn_node *n, struct ggml_tensor *dst, const struct ggml__cpu_kernels *kernels)
{
    n->dst = dst;
    n->q = dst->src[0];
    n->k = dst->src[1];
    n->v = dst->src[2];
    n->mask = dst->src[3];
    n->sinks = dst->src[4];
    n->dk = n->q->ne[0];
    n->dv = n->v->ne[0];
    n->n_kv = n->k->ne[1];
    n->n_q = n->q->ne[1];
    n->n_head = n->q->ne[2];
    n->scale = ggml__get_op_params_f32(dst, 0);
    n->max_bias = ggml__get_op_params_f32(dst, 1);
    n->softcap = ggml__get_op_params_f32(dst, 2);
    if (n->softcap != 0.0f)
        n->scale /= n->softcap;
    n->n_head_log2 = 1u;
    while ((int64_t) n->n_head_log2 * 2 <= n->n_head)
        n->n_head_log2 *= 2;
    n->m0 = powf(2.0f, -n->max_bias / (float) n->n_head_log2);
    n->m1 = powf(2.0f, -(n->max_bias / 2.0f) / (float) n->n_head_log2);
    n->k_to_float = n->k->type == GGML_TYPE_F32 ? NULL : ggml_get_type_traits(n->k->type)->to_float;
    n->v_to_float = n->v->type == GGML_TYPE_F32 ? NULL : ggml_get_type_traits(n->v->type)->to_float;
    const struct ggml_type_traits_cpu *kt = ggml_get_type_traits_cpu(n->k->type);
    n->dot = kernels->vec_dot[n->k->type];
    n->q_to_dot = kernels->from_float[kt->vec_dot_type];
    n->v_axpy = kernels->axpy[n->v->type];
    n->axpy_f32 = kernels->axpy[GGML_TYPE_F32];
    n->exp_sum = kernels->softmax_exp_sum;
    n->v_to_float_fast = n->v->type == GGML_TYPE_F32 ? NULL : kernels->to_float[n->v->type];
}

static float alibi_slope(const struct attn_node *n, uint32_t h)
{
    if (!(n->max_bias > 0.0f))
        return 1.0f;
    return h < n->n_head_log2 ? powf(n->m0, (float) (h + 1)) : powf(n->m1, (float) (2 * (h - n->n_head_log2) + 1));
}

/* Row r of the node: r = i + n_q * (h + n_head * s). */
static void attn_row_init(const struct attn_node *n, int64_t r, struct attn_row *row)
{
    const int64_t i = r % n->n_q, h = (r / n->n_q) % n->n_head, s = r / (n->n_q * n->n_head);
    const struct ggml_tensor *q = n->q, *k = n->k, *v = n->v, *mask = n->mask;
    row->q = (const float *) ((const char *) q->data + i * q->nb[1] + h * q->nb[2] + s * q->nb[3]);
    row->k = (const char *) k->data + h / (n->n_head / k->ne[2]) * k->nb[2] + s / (q->ne[3] / k->ne[3]) * k->nb[3];
    row->v = (const char *) v->data + h / (n->n_head / v->ne[2]) * v->nb[2] + s / (q->ne[3] / v->ne[3]) * v->nb[3];
    row->mask = mask == NULL ? NULL
                             : (const ggml_fp16_t *) ((const char *) mask->data + i * mask->nb[1] +
                                                      h % mask->ne[2] * mask->nb[2] + s % mask->ne[3] * mask->nb[3]);
    row->slope = alibi_slope(n, (uint32_t) h);
    row->has_sink = n->sinks != NULL;
    row->sink = row->has_sink ? ((const float *) n->sinks->data)[h] : 0.0f;
    const struct ggml_tensor *dst = n->dst;
    row->out = (float *) ((char *) dst->data + h * dst->nb[1] + i * dst->nb[2] + s * dst->nb[3]);
}

/* The mask's contribution to key j: slope * mask, 0 without a mask. */
static inline float mask_value(const struct attn_row *row, int64_t j)
{
    return row->mask == NULL ? 0.0f : row->slope * ggml__fp16_to_fp32(row->mask[j]);
}

/* Scaled and capped score of a raw dot product. */
static inline float finish_score(const struct attn_node *n, float dot)
{
    float x = dot * n->scale;
    if (n->softcap != 0.0f)
        x = n->softcap * tanhf(x);
    return x;
}

/*
 * The accumulation of value rows is the kernel table's axpy (the generic
 * level's in the reference path).  The loop below goes 8 lanes at a time with a fixed inner count, a
 * shape gcc and clang vectorize at -O2 (their cheap cost model does not
 * vectorize loops of unknown count), then finish the tail.
 */
#define LANES 8

static void scale_vec(int64_t n, float *x, float f)
{
    int64_t d = 0;
    for (; d + LANES <= n; d += LANES)
        for (int l = 0; l < LANES; l++)
            x[d + l] *= f;
    for (; d < n; d++)
        x[d] *= f;
}

/* Row j of the V head as F32: the row itself, or its conversion in buf. */
static const float *value_row(const struct attn_node *n, const struct attn_row *row, int64_t j, float *buf,
                              ggml_to_float_t to_float)
{
    const char *p = row->v + j * n->v->nb[1];
    if (to_float == NULL)
        return (const float *) p;
    to_float(p, buf, n->dv);
    return buf;
}

/* Adds the sink to the normaliser, then writes acc / sum (zeros when sum is 0). */
static void finish_row(const struct attn_node *n, const struct attn_row *row, float *acc, float max, float sum)
{
    if (row->has_sink) {
        if (row->sink > max) {
            const float shrink = expf(max - row->sink);
            scale_vec(n->dv, acc, shrink);
            sum = sum * shrink + 1.0f;
        } else {
            sum += expf(row->sink - max);
        }
    }
    const float inv = sum == 0.0f ? 0.0f : 1.0f / sum;
    for (int64_t d = 0; d < n->dv; d++)
        row->out[d] = acc[d] * inv;
}

/* Reference: one key at a time, everything dequantized to F32. */
static void attn_row_ref(const struct attn_node *n, const struct attn_row *row, float *scratch)
{
    float *krow = scratch, *vbuf = krow + n->dk, *acc = vbuf + n->dv;
    float max = -INFINITY, sum = 0.0f;
    memset(acc, 0, (size_t) n->dv * sizeof *acc);
    for (int64_t j = 0; j < n->n_kv; j++) {
        const float mv = mask_value(row, j);
        if (mv == -INFINITY)
            continue;
        const char *kp = row->k + j * n->k->nb[1];
        const float *kf = (const float *) kp;
        if (n->k_to_float != NULL) {
            n->k_to_float(kp, krow, n->dk);
            kf = krow;
        }
        float dot = 0.0f;
        for (int64_t d = 0; d < n->dk; d++)
            dot += row->q[d] * kf[d];
        const float x = finish_score(n, dot) + mv;
        float w = 1.0f;
        if (x > max) {
            const float shrink = expf(max - x);
            scale_vec(n->dv, acc, shrink);
            sum *= shrink;
            max = x;
        } else {
            w = expf(x - max);
        }
        ggml__generic_axpy_f32(n->dv, acc, value_row(n, row, j, vbuf, n->v_to_float), w);
        sum += w;
    }
    finish_row(n, row, acc, max, sum);
}

/* Tiled: q in K's dot type, scores of KEY_TILE keys, one rescale per tile. */
static void attn_row_tiled(const struct attn_node *n, const struct attn_row *row, float *scratch)
{
    void *qdot = scratch;
    float *vbuf = scratch + n->dk, *acc = vbuf + n->dv, *score = acc + n->dv;
    float max = -INFINITY, sum = 0.0f;
    memset(acc, 0, (size_t) n->dv * sizeof *acc);
    n->q_to_dot(row->q, qdot, n->dk);
    for (int64_t j0 = 0; j0 < n->n_kv; j0 += KEY_TILE) {
        const int64_t len = n->n_kv - j0 < KEY_TILE ? n->n_kv - j0 : KEY_TILE;
        float tile_max = -INFINITY;
        for (int64_t t = 0; t < len; t++) {
            const float mv = mask_value(row, j0 + t);
            if (mv == -INFINITY) {
                score[t] = -INFINITY;
                continue;
            }
            float dot;
            n->dot((int) n->dk, &dot, 0, row->k + (j0 + t) * n->k->nb[1], 0, qdot, 0, 1);
            score[t] = finish_score(n, dot) + mv;
            if (score[t] > tile_max)
                tile_max = score[t];
        }
        if (tile_max == -INFINITY)
            continue;
        if (tile_max > max) {
            const float shrink = expf(max - tile_max);
            scale_vec(n->dv, acc, shrink);
            sum *= shrink;
            max = tile_max;
        }
        /* the tile's weights exp(score - max) by the level's vector exp, masked keys' 0 */
        sum += (float) n->exp_sum(len, score, score, max);
        for (int64_t t = 0; t < len; t++) {
            const float w = score[t];
            if (w == 0.0f)
                continue;   /* a masked key, or a weight below the smallest float: nothing to add */
            if (n->v_axpy != NULL)
                n->v_axpy(n->dv, acc, row->v + (j0 + t) * n->v->nb[1], w);
            else
                n->axpy_f32(n->dv, acc, value_row(n, row, j0 + t, vbuf, n->v_to_float_fast), w);
        }
    }
    finish_row(n, row, acc, max, sum);
}

static void attn_kernel(const struct ggml__compute_params *params, struct ggml_tensor *dst)
{
    struct attn_node node;
    attn_node_init(&node, dst, params->kernels);
    float *scratch = (float *) params->wdata + (size_t) params->ith * (size_t) scratch_floats(dst);

    int64_t first, last;
    ggml__split_rows(node.n_q * node.n_head * dst->ne[3], params->ith, params->nth, &first, &last);
    for (int64_t r = first; r < last; r++) {
        struct attn_row row;
        attn_row_init(&node, r, &row);
        if (params->use_ref)
            attn_row_ref(&node, &row, scratch);
        else
            attn_row_tiled(&node, &row, scratch);
    }
}

const struct ggml__op_impl ggml__op_flash_attn_ext = {
    .kernel = attn_kernel,
    .supports = attn_supports,
    .n_tasks = NULL,
    .work_size = attn_work_size,
};
