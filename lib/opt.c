/*
 * opt.c - training on top of the graph and backend API (ggml-opt.h):
 * datasets, optimization contexts, results, ggml_opt_epoch and
 * ggml_opt_fit.
 *
 * An optimization context owns up to three graphs over the caller's model:
 *   gf       the forward graph: outputs, loss (and predictions);
 *   gb_grad  gf followed by the backward pass, which adds the gradients of
 *            the parameters into accumulators (or, with static graphs and
 *            opt_period 1, just computes them);
 *   gb_opt   gb_grad followed by one optimizer step per parameter.
 * The accumulators, the optimizer moments and (with static graphs) the
 * loss tensors live in ctx_static, allocated once in the memory of the
 * scheduler's first backend; the optimizer's hyperparameters are one small
 * tensor in CPU memory, written before each step.
 *
 * With static graphs every graph is built once, and each evaluation of a
 * graph other than the one allocated last runs on a copy of it whose
 * tensors are fresh (a tensor that has memory cannot be placed again by the
 * scheduler); with dynamic graphs the caller builds a new graph before each
 * evaluation and the context rebuilds the loss and passes around it.
 *
 * Errors never abort: every refusal is one logged error, and the objects
 * are left as they were (see ggml-opt.h).
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-impl.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-opt.h"

/* ----------------------------------------------------------------- dataset */

struct ggml_opt_dataset {
    struct ggml_context *ctx;
    ggml_backend_buffer_t buf;
    struct ggml_tensor *data;   /* [ne_datapoint, ndata] */
    struct ggml_tensor *labels; /* [ne_label, ndata] or NULL */
    int64_t ndata;
    int64_t ndata_shard;
    int64_t nshards;
    size_t shard_data_bytes;
    size_t shard_label_bytes;
    int64_t *order; /* order[i]: the shard at position i; a permutation of 0 .. nshards-1 */
};

ggml_opt_dataset_t ggml_opt_dataset_init(enum ggml_type type_data, enum ggml_type type_label, int64_t ne_datapoint,
                                         int64_t ne_label, int64_t ndata, int64_t ndata_shard)
{
    if (ne_datapoint <= 0 || ne_label < 0 || ndata <= 0 || ndata_shard <= 0 || ndata_shard > ndata) {
        ggml__error("bad sizes: %" PRId64 " values per datapoint, %" PRId64 " per label, %" PRId64
                    " datapoints in shards of %" PRId64 " (want positive sizes, labels >= 0, shards of at most the datapoints)",
                    ne_datapoint, ne_label, ndata, ndata_shard);
        return NULL;
    }
    if (!ggml__type_is_valid(type_data) || (ne_label > 0 && !ggml__type_is_valid(type_label))) {
        ggml__error("invalid type %d", !ggml__type_is_valid(type_data) ? (int) type_data : (int) type_label);
        return NULL;
    }
    if (ne_datapoint % ggml_blck_size(type_data) != 0 ||
        (ne_label > 0 && ne_label % ggml_blck_size(type_label) != 0)) {
        ggml__error("a datapoint or label is not a whole number of %s/%s blocks", ggml_type_name(type_data),
                    ggml_type_name(type_label));
        return NULL;
    }
    struct ggml_opt_dataset *ds = calloc(1, sizeof *ds);
    int64_t *order = calloc((size_t) (ndata / ndata_shard), sizeof *order);
    struct ggml_init_params ip = { 2 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context *ctx = ds != NULL && order != NULL ? ggml_init(ip) : NULL;
    if (ctx == NULL) {
        if (ds == NULL || order == NULL)
            ggml__error("out of memory");
        free(order);
        free(ds);
        return NULL;
    }
    ds->ctx = ctx;
    ds->order = order;
    ds->ndata = ndata;
    ds->ndata_shard = ndata_shard;
    ds->nshards = ndata / ndata_shard;
    for (int64_t i = 0; i < ds->nshards; i++)
        ds->order[i] = i;
    ds->data = ggml_new_tensor_2d(ctx, type_data, ne_datapoint, ndata);
    ds->labels = ne_label > 0 ? ggml_new_tensor_2d(ctx, type_label, ne_label, ndata) : NULL;
    if (ds->data == NULL || (ne_label > 0 && ds->labels == NULL)) {
        ggml_opt_dataset_free(ds);
        return NULL;
    }
    ds->shard_data_bytes = ggml_row_size(type_data, ne_datapoint) * (size_t) ndata_shard;
    ds->shard_label_bytes = ne_label > 0 ? ggml_row_size(type_label, ne_label) * (size_t) ndata_shard : 0;
    ds->buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
    if (ds->buf == NULL) {
        ggml_opt_dataset_free(ds);
        return NULL;
    }
    return ds;
}

void ggml_opt_dataset_free(ggml_opt_dataset_t dataset)
{
    if (dataset == NULL)
        return;
    ggml_backend_buffer_free(dataset->buf);
    ggml_free(dataset->ctx);
    free(dataset->order);
    free(dataset);
}

/* Logs and returns true when a required handle is NULL. */
static bool missing(const void *handle, const char *what, const char *func)
{
    if (handle != NULL)
        return false;
    ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "%s is NULL", what);
    return true;
}

int64_t ggml_opt_dataset_ndata(ggml_opt_dataset_t dataset)
{
    return missing(dataset, "dataset", __func__) ? 0 : dataset->ndata;
}

struct ggml_tensor *ggml_opt_dataset_data(ggml_opt_dataset_t dataset)
{
    return missing(dataset, "dataset", __func__) ? NULL : dataset->data;
}

struct ggml_tensor *ggml_opt_dataset_labels(ggml_opt_dataset_t dataset)
{
    return missing(dataset, "dataset", __func__) ? NULL : dataset->labels;
}

/*
 * Checks a batch request: a batch of batch_bytes of data, labels wanted or
 * not; on success *shards is the number of shards per batch.
 */
static bool batch_fits(ggml_opt_dataset_t dataset, size_t batch_bytes, bool want_labels, int64_t ibatch,
                       int64_t *shards, const char *func)
{
    if (want_labels != (dataset->labels != NULL)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "the dataset has %s labels but the batch %s",
                     dataset->labels != NULL ? "" : "no", want_labels ? "asks for labels" : "has no labels tensor");
        return false;
    }
    if (batch_bytes == 0 || batch_bytes % dataset->shard_data_bytes != 0) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                     "a batch of %zu bytes of data is not a whole number of shards of %zu bytes", batch_bytes,
                     dataset->shard_data_bytes);
        return false;
    }
    *shards = (int64_t) (batch_bytes / dataset->shard_data_bytes);
    if (ibatch < 0 || ibatch >= dataset->nshards / *shards) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "batch %" PRId64 " is out of range: the dataset has %" PRId64
                     " whole batches of %" PRId64 " shards", ibatch, dataset->nshards / *shards, *shards);
        return false;
    }
    return true;
}

void ggml_opt_dataset_get_batch(ggml_opt_dataset_t dataset, struct ggml_tensor *data_batch,
                                struct ggml_tensor *labels_batch, int64_t ibatch)
{
    if (missing(dataset, "dataset", __func__) || missing(data_batch, "data_batch", __func__))
        return;
    const struct ggml_tensor *bad = data_batch->type != dataset->data->type ? data_batch
        : labels_batch != NULL && dataset->labels != NULL && labels_batch->type != dataset->labels->type
        ? labels_batch
        : NULL;
    if (bad != NULL || !ggml_is_contiguous(data_batch) || (labels_batch != NULL && !ggml_is_contiguous(labels_batch))) {
        ggml__error("the batch tensors must be contiguous and of the dataset's types (%s data, %s labels)",
                    ggml_type_name(dataset->data->type),
                    dataset->labels != NULL ? ggml_type_name(dataset->labels->type) : "no");
        return;
    }
    if (data_batch->buffer == NULL || (labels_batch != NULL && labels_batch->buffer == NULL)) {
        ggml__error("the batch tensors have no memory (allocate them in a backend buffer)");
        return;
    }
    int64_t shards;
    if (!batch_fits(dataset, ggml_nbytes(data_batch), labels_batch != NULL, ibatch, &shards, __func__))
        return;
    if (labels_batch != NULL && ggml_nbytes(labels_batch) != (size_t) shards * dataset->shard_label_bytes) {
        ggml__error("the labels batch has %zu bytes; %" PRId64 " shards of labels have %zu", ggml_nbytes(labels_batch),
                    shards, (size_t) shards * dataset->shard_label_bytes);
        return;
    }
    for (int64_t k = 0; k < shards; k++) {
        const int64_t shard = dataset->order[ibatch * shards + k];
        ggml_backend_tensor_set(data_batch, (const char *) dataset->data->data + shard * dataset->shard_data_bytes,
                                (size_t) k * dataset->shard_data_bytes, dataset->shard_data_bytes);
        if (labels_batch != NULL)
            ggml_backend_tensor_set(labels_batch,
                                    (const char *) dataset->labels->data + shard * dataset->shard_label_bytes,
                                    (size_t) k * dataset->shard_label_bytes, dataset->shard_label_bytes);
    }
}

void ggml_opt_dataset_get_batch_host(ggml_opt_dataset_t dataset, void *data_batch, size_t nb_data_batch,
                                     void *labels_batch, int64_t ibatch)
{
    if (missing(dataset, "dataset", __func__) || missing(data_batch, "data_batch", __func__))
        return;
    int64_t shards;
    if (!batch_fits(dataset, nb_data_batch, labels_batch != NULL, ibatch, &shards, __func__))
        return;
    for (int64_t k = 0; k < shards; k++) {
        const int64_t shard = dataset->order[ibatch * shards + k];
        memcpy((char *) data_batch + k * dataset->shard_data_bytes,
               (const char *) dataset->data->data + shard * dataset->shard_data_bytes, dataset->shard_data_bytes);
        if (labels_batch != NULL)
            memcpy((char *) labels_batch + k * dataset->shard_label_bytes,
                   (const char *) dataset->labels->data + shard * dataset->shard_label_bytes,
                   dataset->shard_label_bytes);
    }
}

/* ----------------------------------------------------------------- context */

struct ggml_opt_context {
    ggml_backend_sched_t sched;
    enum ggml_opt_loss_type loss_type;
    enum ggml_opt_optimizer_type optimizer;
    enum ggml_opt_build_type build_type;       /* of the graph allocated next / last */
    enum ggml_opt_build_type build_type_alloc; /* the most the static memory is made for */
    bool static_graphs;
    bool static_ready; /* ctx_static is complete and has its memory */
    bool eval_ready; /* a graph is allocated and not evaluated yet */
    bool loss_per_datapoint;
    int32_t opt_period;
    int32_t opt_i;   /* physical batches since the last optimizer step, modulo opt_period */
    int64_t iter;    /* optimizer steps done + 1 */
    uint64_t rng;    /* state of the shuffling generator */

    ggml_opt_get_optimizer_params get_opt_pars;
    void *get_opt_pars_ud;

    struct ggml_context *ctx_compute; /* the caller's */
    struct ggml_context *ctx_static;  /* accumulators, moments; loss tensors of static graphs */
    struct ggml_context *ctx_cpu;     /* the optimizer's hyperparameters */
    struct ggml_context *ctx_copy;    /* the copy of a static graph being evaluated */
    ggml_backend_buffer_t buf_static;
    ggml_backend_buffer_t buf_cpu;

    struct ggml_tensor *inputs, *outputs, *labels, *loss, *pred, *ncorrect;
    struct ggml_tensor *step_params;

    struct ggml_cgraph *gf, *gb_grad, *gb_opt;
    struct ggml_cgraph *allocated;      /* gf, gb_grad or gb_opt, as last allocated */
    struct ggml_cgraph *allocated_copy; /* what the scheduler holds for it */

    /*
     * By forward node index, made on the first build: accumulators (or
     * NULL), AdamW moments; and the node each belongs to in the latest
     * build (the parameters, which are the caller's, stay the same).
     */
    int n_forward;
    struct ggml_tensor **grad_accs, **moment1, **moment2, **owners;
};

struct ggml_opt_optimizer_params ggml_opt_get_default_optimizer_params(void *userdata)
{
    (void) userdata;
    struct ggml_opt_optimizer_params p;
    p.adamw.alpha = 0.001f;
    p.adamw.beta1 = 0.9f;
    p.adamw.beta2 = 0.999f;
    p.adamw.eps = 1e-8f;
    p.adamw.wd = 0.0f;
    p.sgd.alpha = 0.001f;
    p.sgd.wd = 0.0f;
    return p;
}

struct ggml_opt_optimizer_params ggml_opt_get_constant_optimizer_params(void *userdata)
{
    if (userdata == NULL) {
        ggml__error("userdata is NULL; returning the defaults");
        return ggml_opt_get_default_optimizer_params(NULL);
    }
    return *(const struct ggml_opt_optimizer_params *) userdata;
}

struct ggml_opt_params ggml_opt_default_params(ggml_backend_sched_t backend_sched, enum ggml_opt_loss_type loss_type)
{
    struct ggml_opt_params p;
    memset(&p, 0, sizeof p);
    p.backend_sched = backend_sched;
    p.loss_type = loss_type;
    p.build_type = GGML_OPT_BUILD_TYPE_OPT;
    p.opt_period = 1;
    p.get_opt_pars = ggml_opt_get_default_optimizer_params;
    p.get_opt_pars_ud = NULL;
    p.optimizer = GGML_OPT_OPTIMIZER_TYPE_ADAMW;
    return p;
}

const char *ggml_opt_optimizer_name(enum ggml_opt_optimizer_type optimizer)
{
    switch (optimizer) {
    case GGML_OPT_OPTIMIZER_TYPE_ADAMW:
        return "adamw";
    case GGML_OPT_OPTIMIZER_TYPE_SGD:
        return "sgd";
    default:
        return "undefined";
    }
}

/* Allocates the context's tensors that have no memory yet in backend's memory; true when none is left without. */
static bool alloc_missing(struct ggml_context *ctx, ggml_backend_buffer_type_t buft, ggml_backend_buffer_t *buf)
{
    bool any = false;
    for (struct ggml_tensor *t = ggml_get_first_tensor(ctx); t != NULL && !any; t = ggml_get_next_tensor(ctx, t))
        any = t->data == NULL && t->view_src == NULL;
    if (!any)
        return true;
    *buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft);
    return *buf != NULL;
}

static ggml_backend_buffer_type_t static_buft(const struct ggml_opt_context *opt)
{
    return ggml_backend_get_default_buffer_type(ggml_backend_sched_get_backend(opt->sched, 0));
}

/*
 * The loss of the context's loss type over outputs (and labels), in ctx,
 * with predictions and their count for cross-entropy, all added to gf;
 * NULL when a constructor failed (logged once, by it).
 */
static struct ggml_tensor *build_loss(struct ggml_opt_context *opt, struct ggml_context *ctx)
{
    struct ggml_tensor *out = opt->outputs, *loss = NULL;
    const float per_value = 1.0f / ((float) opt->opt_period * (float) ggml_nelements(out));
    opt->labels = opt->pred = opt->ncorrect = NULL;
    opt->loss_per_datapoint = opt->loss_type != GGML_OPT_LOSS_TYPE_SUM;
    if (opt->loss_type == GGML_OPT_LOSS_TYPE_CROSS_ENTROPY || opt->loss_type == GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR) {
        opt->labels = ggml_set_name(ggml_dup_tensor(ctx, out), "labels");
        if (opt->labels == NULL)
            return NULL;
        ggml_set_input(opt->labels);
    }
    switch (opt->loss_type) {
    case GGML_OPT_LOSS_TYPE_MEAN:
        loss = ggml_set_name(ggml_sum(ctx, out), "loss_sum");
        loss = ggml_set_name(GGML__THEN(loss, ggml_scale(ctx, loss, per_value)), "loss_mean");
        break;
    case GGML_OPT_LOSS_TYPE_SUM:
        loss = ggml_set_name(ggml_sum(ctx, out), "loss_sum");
        break;
    case GGML_OPT_LOSS_TYPE_CROSS_ENTROPY:
        loss = ggml_set_name(ggml_cross_entropy_loss(ctx, out, opt->labels), "loss_cross_entropy");
        if (opt->opt_period > 1)
            loss = ggml_set_name(GGML__THEN(loss, ggml_scale(ctx, loss, 1.0f / (float) opt->opt_period)), "loss_cross_entropy_scaled");
        break;
    case GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR:
        loss = ggml_set_name(ggml_sub(ctx, out, opt->labels), "loss_error");
        loss = ggml_set_name(GGML__THEN(loss, ggml_sqr(ctx, loss)), "loss_squared_error");
        loss = ggml_set_name(GGML__THEN(loss, ggml_sum(ctx, loss)), "loss_sum_squared_error");
        loss = ggml_set_name(GGML__THEN(loss, ggml_scale(ctx, loss, per_value)), "loss_mean_squared_error");
        break;
    }
    if (loss == NULL)
        return NULL;
    ggml_set_output(loss);
    ggml_set_loss(loss);
    ggml_build_forward_expand(opt->gf, loss);
    if (opt->loss_type == GGML_OPT_LOSS_TYPE_CROSS_ENTROPY) {
        opt->pred = ggml_set_name(ggml_argmax(ctx, out), "pred");
        struct ggml_tensor *wanted = GGML__THEN(opt->pred, ggml_argmax(ctx, opt->labels));
        opt->ncorrect = ggml_set_name(GGML__THEN(wanted, ggml_count_equal(ctx, opt->pred, wanted)), "ncorrect");
        if (opt->ncorrect == NULL)
            return NULL;
        ggml_set_output(opt->pred);
        ggml_set_output(opt->ncorrect);
        ggml_build_forward_expand(opt->gf, opt->pred);
        ggml_build_forward_expand(opt->gf, opt->ncorrect);
    }
    return loss;
}

/* On the first build: the accumulators and moments of the forward graph's nodes, in ctx_static. */
static bool make_accumulators(struct ggml_opt_context *opt, bool accumulate, bool need_moments, const char *func)
{
    const int n = opt->gf->n_nodes;
    opt->grad_accs = calloc((size_t) n, sizeof *opt->grad_accs);
    opt->moment1 = calloc((size_t) n, sizeof *opt->moment1);
    opt->moment2 = calloc((size_t) n, sizeof *opt->moment2);
    opt->owners = calloc((size_t) n, sizeof *opt->owners);
    if (opt->grad_accs == NULL || opt->moment1 == NULL || opt->moment2 == NULL || opt->owners == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "out of memory");
        return false;
    }
    opt->n_forward = n;
    for (int i = 0; i < n; i++) {
        struct ggml_tensor *node = opt->gf->nodes[i];
        const bool param = (node->flags & GGML_TENSOR_FLAG_PARAM) != 0;
        if ((accumulate && param) || (node->flags & GGML_TENSOR_FLAG_LOSS)) {
            opt->grad_accs[i] = ggml_new_tensor(opt->ctx_static, GGML_TYPE_F32, GGML_MAX_DIMS, node->ne);
            if (opt->grad_accs[i] == NULL)
                return false;
        }
        if (need_moments && param) {
            opt->moment1[i] = ggml_new_tensor(opt->ctx_static, GGML_TYPE_F32, GGML_MAX_DIMS, node->ne);
            opt->moment2[i] = ggml_new_tensor(opt->ctx_static, GGML_TYPE_F32, GGML_MAX_DIMS, node->ne);
            if (opt->moment2[i] == NULL || opt->moment1[i] == NULL)
                return false;
            ggml_format_name(opt->moment1[i], "AdamW m for %s", node->name);
            ggml_format_name(opt->moment2[i], "AdamW v for %s", node->name);
        }
    }
    return true;
}

/* gb_opt: gb_grad and an optimizer step for every parameter with a gradient. */
static bool build_steps(struct ggml_opt_context *opt)
{
    const bool adamw = opt->optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW;
    opt->gb_opt = ggml_graph_dup(opt->ctx_compute, opt->gb_grad, true);
    opt->step_params = ggml_new_tensor_1d(opt->ctx_cpu, GGML_TYPE_F32, adamw ? 7 : 2);
    if (opt->gb_opt == NULL || opt->step_params == NULL)
        return false;
    ggml_set_input(opt->step_params);
    const char *name = ggml_opt_optimizer_name(opt->optimizer);
    ggml_format_name(opt->step_params, "%s_params", name);
    for (int i = opt->n_forward - 1; i >= 0; i--) {
        struct ggml_tensor *node = opt->gb_opt->nodes[i];
        struct ggml_tensor *grad = ggml_graph_get_grad(opt->gb_opt, node);
        if (grad == NULL || !(node->flags & GGML_TENSOR_FLAG_PARAM))
            continue;
        struct ggml_tensor *step = adamw
            ? ggml_opt_step_adamw(opt->ctx_compute, node, grad, opt->moment1[i], opt->moment2[i], opt->step_params)
            : ggml_opt_step_sgd(opt->ctx_compute, node, grad, opt->step_params);
        if (step == NULL)
            return false;
        ggml_format_name(step, "%s step for %s", name, node->name);
        ggml_build_forward_expand(opt->gb_opt, step);
    }
    return !opt->gb_opt->failed;
}

/*
 * Builds the loss and the passes over opt->gf as far as build_type_alloc
 * (only as far as build_type once the static memory exists), making the
 * static tensors and their memory on the first call.  Errors are logged as
 * func (the public function building).
 */
static bool build(struct ggml_opt_context *opt, const char *func)
{
    const enum ggml_opt_build_type most = opt->build_type_alloc;
    const bool accumulate = most >= GGML_OPT_BUILD_TYPE_GRAD &&
        !(opt->static_graphs && most == GGML_OPT_BUILD_TYPE_OPT && opt->opt_period == 1);
    const bool need_moments = most == GGML_OPT_BUILD_TYPE_OPT && opt->optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW;

    ggml_set_input(opt->inputs);
    ggml_set_output(opt->outputs);
    size_t n_param = 0;
    for (int i = 0; i < opt->gf->n_nodes; i++) {
        const struct ggml_tensor *node = opt->gf->nodes[i];
        n_param += (node->flags & GGML_TENSOR_FLAG_PARAM) != 0;
        if (node->flags & GGML_TENSOR_FLAG_LOSS) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "the model already has a loss ('%s'); the context adds its own",
                         node->name);
            return false;
        }
    }
    if (most >= GGML_OPT_BUILD_TYPE_GRAD && n_param == 0) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, func, "the model has no parameters (see ggml_set_param)");
        return false;
    }
    if (opt->ctx_static == NULL) {
        /* loss and its by-products (up to 9 tensors with static graphs), then per parameter an accumulator and two moments */
        struct ggml_init_params ip = { (10 + 3 * n_param) * ggml_tensor_overhead(), NULL, true };
        opt->ctx_static = ggml_init(ip);
        if (opt->ctx_static == NULL)
            return false;
    }
    ggml_backend_buffer_free(opt->buf_cpu);
    opt->buf_cpu = NULL;
    ggml_free(opt->ctx_cpu);
    struct ggml_init_params ip = { ggml_tensor_overhead(), NULL, true };
    opt->ctx_cpu = ggml_init(ip);
    opt->step_params = NULL;
    opt->gb_grad = opt->gb_opt = NULL;
    if (opt->ctx_cpu == NULL)
        return false;

    opt->loss = build_loss(opt, opt->static_graphs ? opt->ctx_static : opt->ctx_compute);
    if (opt->loss == NULL || opt->gf->failed)
        return false;

    const enum ggml_opt_build_type upto = opt->static_ready ? opt->build_type : most;
    if (upto >= GGML_OPT_BUILD_TYPE_GRAD) {
        if (opt->grad_accs == NULL && !make_accumulators(opt, accumulate, need_moments, func))
            return false;
        if (opt->gf->n_nodes != opt->n_forward) {
            ggml__log_at(GGML_LOG_LEVEL_ERROR, func,
                         "the forward graph has %d nodes; the first one had %d (the model must keep its shape)",
                         opt->gf->n_nodes, opt->n_forward);
            return false;
        }
        memcpy(opt->owners, opt->gf->nodes, (size_t) opt->n_forward * sizeof *opt->owners);
        opt->gb_grad = ggml_graph_dup(opt->ctx_compute, opt->gf, true);
        if (opt->gb_grad == NULL)
            return false;
        ggml_build_backward_expand(opt->ctx_compute, opt->gb_grad, opt->grad_accs);
        if (opt->gb_grad->failed || ggml_graph_get_grad_acc(opt->gb_grad, opt->loss) == NULL)
            return false; /* logged by the expansion */
    }
    if (upto == GGML_OPT_BUILD_TYPE_OPT && !build_steps(opt))
        return false;
    if (!opt->static_ready) {
        if (!alloc_missing(opt->ctx_static, static_buft(opt), &opt->buf_static))
            return false;
        ggml_graph_reset(opt->gb_opt != NULL ? opt->gb_opt : opt->gb_grad);
        opt->static_ready = true;
    }
    if (opt->step_params != NULL &&
        !alloc_missing(opt->ctx_cpu, ggml_backend_cpu_buffer_type(), &opt->buf_cpu))
        return false;
    return true;
}

/* The argument checks of ggml_opt_init; logs the first problem. */
static bool params_valid(const struct ggml_opt_params *p)
{
    const char *problem = NULL;
    if (p->backend_sched == NULL)
        problem = "backend_sched is NULL";
    else if (p->opt_period < 1)
        problem = "opt_period is below 1";
    else if (p->get_opt_pars == NULL)
        problem = "get_opt_pars is NULL";
    else if ((unsigned) p->loss_type > GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR)
        problem = "unknown loss type";
    else if (p->build_type != GGML_OPT_BUILD_TYPE_FORWARD && p->build_type != GGML_OPT_BUILD_TYPE_GRAD &&
             p->build_type != GGML_OPT_BUILD_TYPE_OPT)
        problem = "unknown build type";
    else if ((unsigned) p->optimizer >= GGML_OPT_OPTIMIZER_TYPE_COUNT)
        problem = "unknown optimizer";
    else if (p->ctx_compute != NULL && (p->inputs == NULL || p->outputs == NULL))
        problem = "static graphs (ctx_compute set) need inputs and outputs";
    else if (p->ctx_compute == NULL && (p->inputs != NULL || p->outputs != NULL))
        problem = "inputs and outputs without ctx_compute (dynamic graphs take them from ggml_opt_prepare_alloc)";
    else if (p->ctx_compute != NULL && p->inputs->data == NULL)
        problem = "with static graphs the inputs must have memory (allocate them before ggml_opt_init)";
    if (problem != NULL)
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_opt_init", "%s", problem);
    return problem == NULL;
}

ggml_opt_context_t ggml_opt_init(struct ggml_opt_params params)
{
    if (!params_valid(&params))
        return NULL;
    struct ggml_opt_context *opt = calloc(1, sizeof *opt);
    if (opt == NULL) {
        ggml__error("out of memory");
        return NULL;
    }
    opt->sched = params.backend_sched;
    opt->ctx_compute = params.ctx_compute;
    opt->inputs = params.inputs;
    opt->outputs = params.outputs;
    opt->loss_type = params.loss_type;
    opt->build_type = opt->build_type_alloc = params.build_type;
    opt->opt_period = params.opt_period;
    opt->get_opt_pars = params.get_opt_pars;
    opt->get_opt_pars_ud = params.get_opt_pars_ud;
    opt->optimizer = params.optimizer;
    opt->iter = 1;
    opt->rng = 0x5eed0f0b7a1a5c0dULL;
    opt->static_graphs = params.ctx_compute != NULL;
    if (!opt->static_graphs)
        return opt;
    opt->gf = ggml_new_graph_custom(opt->ctx_compute, GGML_DEFAULT_GRAPH_SIZE, true);
    if (opt->gf != NULL)
        ggml_build_forward_expand(opt->gf, opt->outputs);
    if (opt->gf == NULL || opt->gf->failed || !build(opt, __func__)) { /* logged */
        ggml_opt_free(opt);
        return NULL;
    }
    return opt;
}

void ggml_opt_free(ggml_opt_context_t opt_ctx)
{
    if (opt_ctx == NULL)
        return;
    ggml_backend_buffer_free(opt_ctx->buf_static);
    ggml_backend_buffer_free(opt_ctx->buf_cpu);
    ggml_free(opt_ctx->ctx_static);
    ggml_free(opt_ctx->ctx_cpu);
    ggml_free(opt_ctx->ctx_copy);
    free(opt_ctx->grad_accs);
    free(opt_ctx->moment1);
    free(opt_ctx->moment2);
    free(opt_ctx->owners);
    free(opt_ctx);
}

void ggml_opt_reset(ggml_opt_context_t opt_ctx, bool optimizer)
{
    if (missing(opt_ctx, "opt_ctx", __func__))
        return;
    if (optimizer) {
        ggml_graph_reset(opt_ctx->gb_opt);
        opt_ctx->iter = 1;
    } else {
        ggml_graph_reset(opt_ctx->gb_grad);
    }
}

bool ggml_opt_static_graphs(ggml_opt_context_t opt_ctx)
{
    return !missing(opt_ctx, "opt_ctx", __func__) && opt_ctx->static_graphs;
}

/* The accessors of the context's tensors; NULL (logged) without a context. */
#define OPT_TENSOR_ACCESSOR(name, member)                                  \
    struct ggml_tensor *name(ggml_opt_context_t opt_ctx)                   \
    {                                                                      \
        return missing(opt_ctx, "opt_ctx", #name) ? NULL : opt_ctx->member; \
    }
OPT_TENSOR_ACCESSOR(ggml_opt_inputs, inputs)
OPT_TENSOR_ACCESSOR(ggml_opt_outputs, outputs)
OPT_TENSOR_ACCESSOR(ggml_opt_labels, labels)
OPT_TENSOR_ACCESSOR(ggml_opt_loss, loss)
OPT_TENSOR_ACCESSOR(ggml_opt_pred, pred)
OPT_TENSOR_ACCESSOR(ggml_opt_ncorrect, ncorrect)

struct ggml_tensor *ggml_opt_grad_acc(ggml_opt_context_t opt_ctx, struct ggml_tensor *node)
{
    if (missing(opt_ctx, "opt_ctx", __func__))
        return NULL;
    for (int i = 0; node != NULL && i < opt_ctx->n_forward; i++)
        if (opt_ctx->owners[i] == node)
            return opt_ctx->grad_accs[i];
    return NULL;
}

enum ggml_opt_optimizer_type ggml_opt_context_optimizer_type(ggml_opt_context_t opt_ctx)
{
    return missing(opt_ctx, "opt_ctx", __func__) ? GGML_OPT_OPTIMIZER_TYPE_COUNT : opt_ctx->optimizer;
}

/* ------------------------------------------------------------------ shuffle */

/* splitmix64: the next 64 random bits of the context's generator. */
static uint64_t next_random(struct ggml_opt_context *opt)
{
    uint64_t z = (opt->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A uniform integer in [0, bound), bound > 0, without modulo bias. */
static uint64_t uniform_below(struct ggml_opt_context *opt, uint64_t bound)
{
    const uint64_t limit = UINT64_MAX - UINT64_MAX % bound; /* a multiple of bound */
    uint64_t r;
    do
        r = next_random(opt);
    while (r >= limit);
    return r % bound;
}

void ggml_opt_dataset_shuffle(ggml_opt_context_t opt_ctx, ggml_opt_dataset_t dataset, int64_t idata)
{
    if (missing(opt_ctx, "opt_ctx", __func__) || missing(dataset, "dataset", __func__))
        return;
    if (idata > dataset->ndata || (idata >= 0 && idata % dataset->ndata_shard != 0)) {
        ggml__error("cannot shuffle the first %" PRId64 " of %" PRId64 " datapoints: not a whole number of shards of %"
                    PRId64, idata, dataset->ndata, dataset->ndata_shard);
        return;
    }
    const int64_t n = idata < 0 ? dataset->nshards : idata / dataset->ndata_shard;
    for (int64_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
        const int64_t j = (int64_t) uniform_below(opt_ctx, (uint64_t) i + 1);
        const int64_t t = dataset->order[i];
        dataset->order[i] = dataset->order[j];
        dataset->order[j] = t;
    }
}

/* ------------------------------------------------------------------ results */

struct ggml_opt_result {
    int64_t ndata;
    float *loss; /* one per evaluated batch */
    size_t n_loss, cap_loss;
    int32_t *pred; /* one per evaluated datapoint */
    size_t n_pred, cap_pred;
    int64_t ncorrect; /* -1 once a batch without a count was added */
    int32_t opt_period;
    bool loss_per_datapoint;
};

ggml_opt_result_t ggml_opt_result_init(void)
{
    struct ggml_opt_result *r = calloc(1, sizeof *r);
    if (r == NULL) {
        ggml__error("out of memory");
        return NULL;
    }
    r->opt_period = -1;
    return r;
}

void ggml_opt_result_free(ggml_opt_result_t result)
{
    if (result == NULL)
        return;
    free(result->loss);
    free(result->pred);
    free(result);
}

void ggml_opt_result_reset(ggml_opt_result_t result)
{
    if (missing(result, "result", __func__))
        return;
    result->ndata = 0;
    result->n_loss = result->n_pred = 0;
    result->ncorrect = 0;
}

void ggml_opt_result_ndata(ggml_opt_result_t result, int64_t *ndata)
{
    if (!missing(result, "result", __func__) && !missing(ndata, "ndata", __func__))
        *ndata = result->ndata;
}

/*
 * The loss: the mean of the batches' losses when the loss is per datapoint
 * (each batch's value first scaled back by opt_period, which the graph
 * divided it by), else their sum.  The uncertainty (NaN below two
 * batches), as upstream ggml reports it: for a mean its standard error,
 * for a sum the sample standard deviation of one batch's loss.
 */
void ggml_opt_result_loss(ggml_opt_result_t result, double *loss, double *unc)
{
    if (missing(result, "result", __func__) || missing(loss, "loss", __func__))
        return;
    const size_t n = result->n_loss;
    double sum = 0.0, sum_sq = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double x = result->loss_per_datapoint ? (double) result->loss[i] * result->opt_period : result->loss[i];
        sum += x;
        sum_sq += x * x;
    }
    const double mean = n > 0 ? sum / (double) n : 0.0;
    *loss = result->loss_per_datapoint ? mean : sum;
    if (unc == NULL)
        return;
    if (n < 2) {
        *unc = NAN;
        return;
    }
    const double spread = fmax(sum_sq / (double) n - mean * mean, 0.0); /* population variance */
    *unc = result->loss_per_datapoint ? sqrt(spread / (double) (n - 1)) : sqrt(spread * (double) n / (double) (n - 1));
}

void ggml_opt_result_pred(ggml_opt_result_t result, int32_t *pred)
{
    if (!missing(result, "result", __func__) && !missing(pred, "pred", __func__) && result->n_pred > 0)
        memcpy(pred, result->pred, result->n_pred * sizeof *pred);
}

void ggml_opt_result_accuracy(ggml_opt_result_t result, double *accuracy, double *unc)
{
    if (missing(result, "result", __func__) || missing(accuracy, "accuracy", __func__))
        return;
    const bool counted = result->ncorrect >= 0 && result->ndata > 0;
    *accuracy = counted ? (double) result->ncorrect / (double) result->ndata : NAN;
    if (unc != NULL)
        *unc = counted && result->ndata >= 2 ? sqrt(*accuracy * (1.0 - *accuracy) / (double) (result->ndata - 1)) : NAN;
}

/* Grows an array to hold need elements; false (logged as ggml_opt_eval) when out of memory. */
static bool reserve(void **array, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t cap_new = *cap > 0 ? *cap : 16;
    while (cap_new < need)
        cap_new *= 2;
    void *grown = realloc(*array, cap_new * elem);
    if (grown == NULL) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_opt_eval", "out of memory");
        return false;
    }
    *array = grown;
    *cap = cap_new;
    return true;
}

/*
 * Before computing: whether result can take the batch of the allocated
 * graph (same loss, period and batch size as its batches so far; room for
 * its values).  Logged when not, so that a refused evaluation computes
 * nothing.
 */
static bool result_can_take(const struct ggml_opt_context *opt, struct ggml_opt_result *result)
{
    const int64_t batch = opt->outputs->ne[1];
    if (result->ndata != 0 &&
        (result->loss_per_datapoint != opt->loss_per_datapoint || result->opt_period != opt->opt_period ||
         result->ndata != batch * (int64_t) result->n_loss)) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_opt_eval",
                     "the result holds batches of another loss, period or size (reset it first); nothing computed");
        return false;
    }
    const size_t n_pred = opt->pred != NULL ? (size_t) ggml_nelements(opt->pred) : 0;
    return reserve((void **) &result->loss, &result->cap_loss, result->n_loss + 1, sizeof *result->loss) &&
        reserve((void **) &result->pred, &result->cap_pred, result->n_pred + n_pred, sizeof *result->pred);
}

/* Adds the batch just computed to result (checked by result_can_take). */
static void add_to_result(const struct ggml_opt_context *opt, struct ggml_opt_result *result)
{
    if (result->ndata == 0) {
        result->loss_per_datapoint = opt->loss_per_datapoint;
        result->opt_period = opt->opt_period;
    }
    ggml_backend_tensor_get(opt->loss, &result->loss[result->n_loss++], 0, sizeof(float));
    if (opt->pred != NULL) {
        const size_t n_pred = (size_t) ggml_nelements(opt->pred);
        ggml_backend_tensor_get(opt->pred, result->pred + result->n_pred, 0, n_pred * sizeof(int32_t));
        result->n_pred += n_pred;
    }
    result->ndata += opt->outputs->ne[1];
    if (opt->ncorrect == NULL || result->ncorrect < 0) {
        result->ncorrect = -1;
        return;
    }
    int64_t ncorrect = 0;
    ggml_backend_tensor_get(opt->ncorrect, &ncorrect, 0, sizeof ncorrect);
    result->ncorrect += ncorrect;
}

/* ------------------------------------------------------------- computation */

void ggml_opt_prepare_alloc(ggml_opt_context_t opt_ctx, struct ggml_context *ctx_compute, struct ggml_cgraph *gf,
                            struct ggml_tensor *inputs, struct ggml_tensor *outputs)
{
    if (missing(opt_ctx, "opt_ctx", __func__) || missing(ctx_compute, "ctx_compute", __func__) ||
        missing(gf, "gf", __func__) || missing(inputs, "inputs", __func__) || missing(outputs, "outputs", __func__))
        return;
    if (opt_ctx->static_graphs) {
        ggml__error("the context has static graphs; ggml_opt_prepare_alloc is for dynamic ones");
        return;
    }
    if (gf->grads == NULL) {
        ggml__error("the graph has no gradient slots (create it with ggml_new_graph_custom(..., true))");
        return;
    }
    opt_ctx->ctx_compute = ctx_compute;
    opt_ctx->gf = gf;
    opt_ctx->inputs = inputs;
    opt_ctx->outputs = outputs;
}

/* A copy of src whose tensors computed by the graph are new ones in ctx (same ops, sources, names, memory). */
static struct ggml_tensor *copy_tensor(struct ggml_context *ctx, struct ggml_hash_set *seen, struct ggml_tensor **copies,
                                       struct ggml_tensor *t)
{
    if (t == NULL)
        return NULL;
    size_t slot = ggml__hash_insert(seen, t);
    if (slot == GGML__HASHSET_ALREADY_EXISTS)
        return copies[ggml__hash_find(seen, t)];
    if (slot == GGML__HASHSET_FULL)
        return NULL;
    struct ggml_tensor *c = ggml_dup_tensor(ctx, t);
    copies[slot] = c;
    if (c == NULL)
        return NULL;
    memcpy(c->nb, t->nb, sizeof c->nb);
    memcpy(c->op_params, t->op_params, sizeof c->op_params);
    memcpy(c->name, t->name, sizeof c->name);
    c->op = t->op;
    c->flags = t->flags;
    c->data = t->data;
    c->buffer = t->buffer;
    c->extra = t->extra;
    c->view_offs = t->view_offs;
    if (t->view_src != NULL && (c->view_src = copy_tensor(ctx, seen, copies, t->view_src)) == NULL)
        return NULL;
    for (int j = 0; j < GGML_MAX_SRC; j++)
        if (t->src[j] != NULL && (c->src[j] = copy_tensor(ctx, seen, copies, t->src[j])) == NULL)
            return NULL;
    return c;
}

/* A copy of graph in a fresh ctx_copy, for the scheduler to place; NULL (logged once) on failure. */
static struct ggml_cgraph *copy_graph(struct ggml_opt_context *opt, struct ggml_cgraph *graph)
{
    ggml_free(opt->ctx_copy);
    struct ggml_init_params ip = {
        (size_t) graph->size * ggml_tensor_overhead() + ggml_graph_overhead_custom((size_t) graph->size, false), NULL,
        true
    };
    opt->ctx_copy = ggml_init(ip);
    if (opt->ctx_copy == NULL)
        return NULL;
    /* every failure below but the calloc's is logged where it happens */
    struct ggml_hash_set seen = ggml__hash_set_new((size_t) graph->visited_hash_set.size);
    struct ggml_tensor **copies = seen.keys != NULL ? calloc(seen.size, sizeof *copies) : NULL;
    if (seen.keys != NULL && copies == NULL)
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_opt_alloc", "out of memory");
    struct ggml_cgraph *copy = copies != NULL ? ggml_new_graph_custom(opt->ctx_copy, (size_t) graph->size, false) : NULL;
    bool ok = copy != NULL;
    for (int i = 0; ok && i < graph->n_leafs; i++) {
        struct ggml_tensor *c = copy_tensor(opt->ctx_copy, &seen, copies, graph->leafs[i]);
        ok = c != NULL;
        if (ok)
            ggml_build_forward_expand(copy, c);
    }
    for (int i = 0; ok && i < graph->n_nodes; i++) {
        struct ggml_tensor *c = copy_tensor(opt->ctx_copy, &seen, copies, graph->nodes[i]);
        ok = c != NULL;
        if (ok)
            ggml_build_forward_expand(copy, c);
    }
    ok = ok && !copy->failed;
    if (ok && copy->n_nodes != graph->n_nodes) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_opt_alloc", "the graph's copy has %d nodes instead of %d",
                     copy->n_nodes, graph->n_nodes);
        ok = false;
    }
    ggml__hash_set_free(&seen);
    free(copies);
    return ok ? copy : NULL;
}

void ggml_opt_alloc(ggml_opt_context_t opt_ctx, bool backward)
{
    if (missing(opt_ctx, "opt_ctx", __func__))
        return;
    struct ggml_opt_context *opt = opt_ctx;
    if (opt->eval_ready) {
        ggml__error("a graph is already allocated and not evaluated (call ggml_opt_eval first)");
        return;
    }
    if (!opt->static_graphs && opt->gf == NULL) {
        ggml__error("no graph: with dynamic graphs call ggml_opt_prepare_alloc first");
        return;
    }
    if (backward && opt->build_type_alloc < GGML_OPT_BUILD_TYPE_GRAD) {
        ggml__error("the context was made for forward passes only (build type FORWARD)");
        return;
    }
    /*
     * A new accumulation period starts from zero gradients.  Static graphs:
     * after an optimizer step, as upstream ggml does (with opt_period 1 they
     * have no accumulators to reset).  Dynamic graphs, whose accumulators
     * always add up: before every period's first backward pass, once the
     * graph is built (below).
     */
    if (opt->static_graphs && opt->build_type == GGML_OPT_BUILD_TYPE_OPT && opt->opt_period > 1 && opt->opt_i == 0)
        ggml_graph_reset(opt->gb_grad);
    enum ggml_opt_build_type type = GGML_OPT_BUILD_TYPE_FORWARD;
    if (backward)
        type = (opt->opt_i + 1) % opt->opt_period == 0 && opt->build_type_alloc == GGML_OPT_BUILD_TYPE_OPT
            ? GGML_OPT_BUILD_TYPE_OPT
            : GGML_OPT_BUILD_TYPE_GRAD;
    const enum ggml_opt_build_type previous = opt->build_type;
    opt->build_type = type;
    if (!opt->static_graphs) {
        if (!build(opt, __func__)) {
            opt->build_type = previous;
            return; /* logged */
        }
        if (backward && opt->opt_i == 0)
            ggml_graph_reset(opt->gb_grad);
    }
    struct ggml_cgraph *graph = type == GGML_OPT_BUILD_TYPE_FORWARD ? opt->gf
        : type == GGML_OPT_BUILD_TYPE_GRAD                        ? opt->gb_grad
                                                                  : opt->gb_opt;
    if (opt->allocated == graph && graph != NULL) {
        opt->eval_ready = true;
        return;
    }
    ggml_backend_sched_reset(opt->sched);
    opt->allocated = opt->allocated_copy = NULL;
    struct ggml_cgraph *to_place = opt->static_graphs ? copy_graph(opt, graph) : graph;
    if (to_place == NULL || !ggml_backend_sched_alloc_graph(opt->sched, to_place)) {
        opt->build_type = previous;
        return; /* logged */
    }
    opt->allocated = graph;
    opt->allocated_copy = to_place;
    opt->eval_ready = true;
}

/* Writes the optimizer's hyperparameters for the next step; false (logged) when out of range. */
static bool write_step_params(struct ggml_opt_context *opt)
{
    const struct ggml_opt_optimizer_params p = opt->get_opt_pars(opt->get_opt_pars_ud);
    float values[7];
    size_t n;
    bool valid;
    if (opt->optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW) {
        valid = p.adamw.alpha > 0.0f && p.adamw.beta1 >= 0.0f && p.adamw.beta1 <= 1.0f && p.adamw.beta2 >= 0.0f &&
            p.adamw.beta2 <= 1.0f && p.adamw.eps >= 0.0f && p.adamw.wd >= 0.0f && p.adamw.wd <= 1.0f;
        /* the bias corrections 1 / (1 - beta^t) for step t */
        values[0] = p.adamw.alpha;
        values[1] = p.adamw.beta1;
        values[2] = p.adamw.beta2;
        values[3] = p.adamw.eps;
        values[4] = p.adamw.wd;
        values[5] = 1.0f / (1.0f - powf(p.adamw.beta1, (float) opt->iter));
        values[6] = 1.0f / (1.0f - powf(p.adamw.beta2, (float) opt->iter));
        n = 7;
    } else {
        valid = p.sgd.alpha > 0.0f && p.sgd.wd >= 0.0f && p.sgd.wd <= 1.0f;
        values[0] = p.sgd.alpha;
        values[1] = p.sgd.wd;
        n = 2;
    }
    if (!valid) {
        ggml__log_at(GGML_LOG_LEVEL_ERROR, "ggml_opt_eval",
                     "%s parameters out of range (want alpha > 0, betas and weight decay in [0, 1], eps >= 0); "
                     "nothing computed", ggml_opt_optimizer_name(opt->optimizer));
        return false;
    }
    ggml_backend_tensor_set(opt->step_params, values, 0, n * sizeof(float));
    return true;
}

void ggml_opt_eval(ggml_opt_context_t opt_ctx, ggml_opt_result_t result)
{
    if (missing(opt_ctx, "opt_ctx", __func__))
        return;
    struct ggml_opt_context *opt = opt_ctx;
    if (!opt->eval_ready) {
        ggml__error("no graph is allocated (call ggml_opt_alloc first)");
        return;
    }
    /* whatever happens, the allocation is used up: the next batch starts with ggml_opt_alloc */
    const bool step = opt->allocated == opt->gb_opt;
    const bool ready = (result == NULL || result_can_take(opt, result)) && (!step || write_step_params(opt));
    const enum ggml_status status =
        ready ? ggml_backend_sched_graph_compute(opt->sched, opt->allocated_copy) : GGML_STATUS_FAILED;
    opt->eval_ready = false;
    if (!opt->static_graphs) {
        opt->gf = opt->gb_grad = opt->gb_opt = NULL;
        opt->allocated = opt->allocated_copy = NULL;
    }
    if (!ready || status != GGML_STATUS_SUCCESS)
        return; /* logged where it failed */
    opt->iter += step;
    opt->opt_i = (opt->opt_i + 1) % opt->opt_period;
    if (result != NULL)
        add_to_result(opt, result);
}

/* -------------------------------------------------------------- high level */

void ggml_opt_epoch(ggml_opt_context_t opt_ctx, ggml_opt_dataset_t dataset, ggml_opt_result_t result_train,
                    ggml_opt_result_t result_eval, int64_t idata_split, ggml_opt_epoch_callback callback_train,
                    ggml_opt_epoch_callback callback_eval)
{
    if (missing(opt_ctx, "opt_ctx", __func__) || missing(dataset, "dataset", __func__))
        return;
    if (!opt_ctx->static_graphs) {
        ggml__error("needs a context with static graphs (ctx_compute, inputs and outputs given to ggml_opt_init)");
        return;
    }
    const struct ggml_tensor *inputs = opt_ctx->inputs, *data = dataset->data;
    const int64_t ndata = data->ne[1], batch = inputs->ne[1];
    if (data->ne[0] != inputs->ne[0] || ndata % batch != 0) {
        ggml__error("inputs of %" PRId64 " x %" PRId64 " do not fit datapoints of %" PRId64
                    " values in batches dividing %" PRId64, inputs->ne[0], batch, data->ne[0], ndata);
        return;
    }
    if (idata_split < 0)
        idata_split = ndata;
    if (idata_split > ndata || idata_split % batch != 0) {
        ggml__error("split at datapoint %" PRId64 " is not a whole number of batches of %" PRId64 " within %" PRId64,
                    idata_split, batch, ndata);
        return;
    }
    const int64_t nbatches = ndata / batch, split = idata_split / batch;
    int64_t t_start = ggml_time_us();
    for (int64_t ibatch = 0; ibatch < nbatches; ibatch++) {
        const bool train = ibatch < split;
        if (ibatch == split)
            t_start = ggml_time_us();
        ggml_opt_alloc(opt_ctx, train);
        if (!opt_ctx->eval_ready)
            return; /* logged */
        ggml_opt_dataset_get_batch(dataset, opt_ctx->inputs, opt_ctx->labels, ibatch);
        ggml_opt_eval(opt_ctx, train ? result_train : result_eval);
        ggml_opt_epoch_callback callback = train ? callback_train : callback_eval;
        if (callback != NULL)
            callback(train, opt_ctx, dataset, train ? result_train : result_eval, train ? ibatch + 1 : ibatch + 1 - split,
                     train ? split : nbatches - split, t_start);
    }
}

/* Writes a duration in microseconds as hh:mm:ss. */
static void format_duration(char *out, size_t size, int64_t us)
{
    const int64_t s = us > 0 ? us / 1000000 : 0;
    snprintf(out, size, "%02" PRId64 ":%02" PRId64 ":%02" PRId64, s / 3600, s / 60 % 60, s % 60);
}

void ggml_opt_epoch_callback_progress_bar(bool train, ggml_opt_context_t opt_ctx, ggml_opt_dataset_t dataset,
                                          ggml_opt_result_t result, int64_t ibatch, int64_t ibatch_max,
                                          int64_t t_start_us)
{
    (void) dataset;
    if (missing(opt_ctx, "opt_ctx", __func__) || missing(result, "result", __func__) || ibatch_max <= 0)
        return;
    /* 8 cells of 8 eighths each; U+2588 is a full block, U+2589 .. U+258F seven to one eighths */
    static const char *const eighths[9] = { " ", "\u258f", "\u258e", "\u258d", "\u258c",
                                            "\u258b", "\u258a", "\u2589", "\u2588" };
    const int64_t filled = 64 * ibatch / ibatch_max;
    char bar[8 * 4 + 1] = "";
    for (int64_t cell = 0; cell < 8; cell++) {
        const int64_t in_cell = filled - 8 * cell;
        strcat(bar, eighths[in_cell < 0 ? 0 : in_cell > 8 ? 8 : in_cell]);
    }
    double loss = 0.0, loss_unc = NAN, acc = NAN, acc_unc = NAN;
    ggml_opt_result_loss(result, &loss, &loss_unc);
    ggml_opt_result_accuracy(result, &acc, &acc_unc);
    const int64_t batch = opt_ctx->inputs != NULL ? opt_ctx->inputs->ne[1] : 0;
    const int64_t elapsed = ggml_time_us() - t_start_us;
    const int64_t left = ibatch > 0 ? elapsed * (ibatch_max - ibatch) / ibatch : 0;
    char t_elapsed[32], t_left[32];
    format_duration(t_elapsed, sizeof t_elapsed, elapsed);
    format_duration(t_left, sizeof t_left, left);
    fprintf(stderr, "%s[%s] data=%07" PRId64 "/%07" PRId64 " loss=%.5f\u00b1%.5f acc=%.2f\u00b1%.2f%% t=%s ETA=%s \r%s",
            train ? "train: " : "val:   ", bar, ibatch * batch, ibatch_max * batch, loss, loss_unc, 100.0 * acc,
            100.0 * acc_unc, t_elapsed, t_left, ibatch == ibatch_max ? "\n" : "");
    fflush(stderr);
}

void ggml_opt_fit(ggml_backend_sched_t backend_sched, struct ggml_context *ctx_compute, struct ggml_tensor *inputs,
                  struct ggml_tensor *outputs, ggml_opt_dataset_t dataset, enum ggml_opt_loss_type loss_type,
                  enum ggml_opt_optimizer_type optimizer, ggml_opt_get_optimizer_params get_opt_pars, int64_t nepoch,
                  int64_t nbatch_logical, float val_split, bool silent)
{
    if (missing(dataset, "dataset", __func__) || missing(inputs, "inputs", __func__))
        return;
    ggml_time_init();
    const int64_t t_start = ggml_time_us();
    const int64_t ndata = dataset->ndata, batch = inputs->ne[1];
    if (nbatch_logical <= 0 || ndata % nbatch_logical != 0 || nbatch_logical % batch != 0 || nbatch_logical > INT32_MAX) {
        ggml__error("%" PRId64 " datapoints per optimizer step must divide the dataset (%" PRId64
                    ") and be a multiple of the batch (%" PRId64 ")", nbatch_logical, ndata, batch);
        return;
    }
    if (!(val_split >= 0.0f && val_split < 1.0f)) {
        ggml__error("val_split %g is outside [0, 1)", (double) val_split);
        return;
    }
    const int64_t opt_period = nbatch_logical / batch;
    /* whole logical batches train; the split is counted in physical batches */
    const int64_t split_batches = (int64_t) ((1.0f - val_split) * (float) (ndata / nbatch_logical)) * opt_period;
    const int64_t idata_split = split_batches * batch;

    int64_t epoch = 1;
    struct ggml_opt_params params = ggml_opt_default_params(backend_sched, loss_type);
    params.ctx_compute = ctx_compute;
    params.inputs = inputs;
    params.outputs = outputs;
    params.opt_period = (int32_t) opt_period;
    params.get_opt_pars = get_opt_pars;
    params.get_opt_pars_ud = &epoch;
    params.optimizer = optimizer;
    ggml_opt_context_t opt = ggml_opt_init(params);
    ggml_opt_result_t result_train = ggml_opt_result_init(), result_val = ggml_opt_result_init();
    if (opt != NULL && result_train != NULL && result_val != NULL) {
        if (nbatch_logical < ndata)
            ggml_opt_dataset_shuffle(opt, dataset, -1); /* mixes training and validation data once */
        ggml_opt_epoch_callback progress = silent ? NULL : ggml_opt_epoch_callback_progress_bar;
        for (; epoch <= nepoch; epoch++) {
            if (nbatch_logical < idata_split)
                ggml_opt_dataset_shuffle(opt, dataset, idata_split);
            ggml_opt_result_reset(result_train);
            ggml_opt_result_reset(result_val);
            if (!silent)
                fprintf(stderr, "%s: epoch %04" PRId64 "/%04" PRId64 ":\n", __func__, epoch, nepoch);
            ggml_opt_epoch(opt, dataset, result_train, result_val, idata_split, progress, progress);
            if (!silent)
                fputc('\n', stderr);
        }
        if (!silent) {
            char took[32];
            format_duration(took, sizeof took, ggml_time_us() - t_start);
            fprintf(stderr, "%s: training took %s\n", __func__, took);
        }
    }
    ggml_opt_free(opt);
    ggml_opt_result_free(result_train);
    ggml_opt_result_free(result_val);
}
