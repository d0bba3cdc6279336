/*
 * ggml-opt.h - training: datasets, optimization contexts, results and the
 * high-level loops ggml_opt_epoch and ggml_opt_fit.
 *
 * A model is a forward graph from an input tensor to an output tensor whose
 * parameters are marked with ggml_set_param.  An optimization context adds
 * the loss (and, for cross-entropy, predictions and a count of correct
 * ones), the backward pass (ggml_build_backward_expand) and one optimizer
 * step per parameter, and runs the result through a backend scheduler.
 * Gradients can be accumulated over several physical batches before each
 * optimizer step (opt_period).
 *
 * Graphs are either static (ctx_compute, inputs and outputs given to
 * ggml_opt_init: built once, tensors of the compute context reallocated
 * for each evaluation) or dynamic (built by the caller before every
 * evaluation and handed over with ggml_opt_prepare_alloc).
 *
 * Every function here reports bad arguments and failures with one logged
 * error and returns NULL (constructors) or leaves its objects as they were;
 * none of them aborts the program.  See ggml_opt_fit(3).
 */
#ifndef GGML_OPT_H
#define GGML_OPT_H

#include <stdint.h>

#include "ggml.h"
#include "ggml-backend.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ggml_opt_dataset;
struct ggml_opt_context;
struct ggml_opt_result;

typedef struct ggml_opt_dataset *ggml_opt_dataset_t;
typedef struct ggml_opt_context *ggml_opt_context_t;
typedef struct ggml_opt_result *ggml_opt_result_t;

/* ------------------------------------------------------------------ loss */

/*
 * What the optimizer minimizes.  MEAN and SUM reduce the outputs of the
 * model themselves (a model computing its own loss per datapoint);
 * CROSS_ENTROPY and MEAN_SQUARED_ERROR compare the outputs to labels.
 */
enum ggml_opt_loss_type {
    GGML_OPT_LOSS_TYPE_MEAN,
    GGML_OPT_LOSS_TYPE_SUM,
    GGML_OPT_LOSS_TYPE_CROSS_ENTROPY,
    GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR,
};

/* --------------------------------------------------------------- dataset */

/*
 * A dataset of ndata datapoints of ne_datapoint values of type_data, each
 * with a label of ne_label values of type_label (ne_label 0: no labels),
 * in host memory.  Shuffling and batching move whole shards of
 * ndata_shard datapoints (at most ndata); when ndata_shard does not divide
 * ndata, the datapoints after the last whole shard are never used.
 */
GGML_API ggml_opt_dataset_t ggml_opt_dataset_init(enum ggml_type type_data, enum ggml_type type_label,
                                                  int64_t ne_datapoint, int64_t ne_label, int64_t ndata,
                                                  int64_t ndata_shard);
GGML_API void ggml_opt_dataset_free(ggml_opt_dataset_t dataset);

/* The number of datapoints, and the tensors holding them: data is
 * [ne_datapoint, ndata], labels [ne_label, ndata] or NULL. */
GGML_API int64_t ggml_opt_dataset_ndata(ggml_opt_dataset_t dataset);
GGML_API struct ggml_tensor *ggml_opt_dataset_data(ggml_opt_dataset_t dataset);
GGML_API struct ggml_tensor *ggml_opt_dataset_labels(ggml_opt_dataset_t dataset);

/* Shuffles the shards of the first idata datapoints (a multiple of the
 * shard size) with the context's random generator; all of them when idata
 * is negative. */
GGML_API void ggml_opt_dataset_shuffle(ggml_opt_context_t opt_ctx, ggml_opt_dataset_t dataset, int64_t idata);

/* Copies batch number ibatch (batches as large as data_batch, in the
 * shuffled order) into data_batch and labels_batch (NULL without labels). */
GGML_API void ggml_opt_dataset_get_batch(ggml_opt_dataset_t dataset, struct ggml_tensor *data_batch,
                                         struct ggml_tensor *labels_batch, int64_t ibatch);
/* The same into host memory: nb_data_batch bytes of data. */
GGML_API void ggml_opt_dataset_get_batch_host(ggml_opt_dataset_t dataset, void *data_batch, size_t nb_data_batch,
                                              void *labels_batch, int64_t ibatch);

/* ------------------------------------------------------------- context */

/* Which graph ggml_opt_init prepares memory for (and ggml_opt_alloc chooses). */
enum ggml_opt_build_type {
    GGML_OPT_BUILD_TYPE_FORWARD = 10, /* outputs and loss only */
    GGML_OPT_BUILD_TYPE_GRAD = 20,    /* and the gradients */
    GGML_OPT_BUILD_TYPE_OPT = 30,     /* and the optimizer steps */
};

enum ggml_opt_optimizer_type {
    GGML_OPT_OPTIMIZER_TYPE_ADAMW,
    GGML_OPT_OPTIMIZER_TYPE_SGD,

    GGML_OPT_OPTIMIZER_TYPE_COUNT
};

/* Hyperparameters of the optimizers; each step reads the member of its own. */
struct ggml_opt_optimizer_params {
    struct {
        float alpha; /* learning rate */
        float beta1; /* decay of the first moment */
        float beta2; /* decay of the second moment */
        float eps;   /* added to the root of the second moment */
        float wd;    /* decoupled weight decay, 0 for none */
    } adamw;
    struct {
        float alpha; /* learning rate */
        float wd;    /* weight decay */
    } sgd;
};

/* Called before every optimizer step for its hyperparameters. */
typedef struct ggml_opt_optimizer_params (*ggml_opt_get_optimizer_params)(void *userdata);

/* Fixed defaults (AdamW: 1e-3, 0.9, 0.999, 1e-8, no decay; SGD: 1e-3, no
 * decay); userdata is ignored. */
GGML_API struct ggml_opt_optimizer_params ggml_opt_get_default_optimizer_params(void *userdata);

/* Returns *(struct ggml_opt_optimizer_params *) userdata. */
GGML_API struct ggml_opt_optimizer_params ggml_opt_get_constant_optimizer_params(void *userdata);

/* Arguments of ggml_opt_init; start from ggml_opt_default_params. */
struct ggml_opt_params {
    ggml_backend_sched_t backend_sched; /* runs every graph */

    /* All three set: static graphs, built here from outputs; all NULL:
     * dynamic graphs (ggml_opt_prepare_alloc before each ggml_opt_alloc). */
    struct ggml_context *ctx_compute;
    struct ggml_tensor *inputs;
    struct ggml_tensor *outputs;

    enum ggml_opt_loss_type loss_type;
    enum ggml_opt_build_type build_type;

    int32_t opt_period; /* physical batches accumulated per optimizer step */

    ggml_opt_get_optimizer_params get_opt_pars;
    void *get_opt_pars_ud;

    enum ggml_opt_optimizer_type optimizer;
};

/* Defaults: dynamic graphs, build type OPT, opt_period 1, the default
 * optimizer parameters, AdamW. */
GGML_API struct ggml_opt_params ggml_opt_default_params(ggml_backend_sched_t backend_sched,
                                                        enum ggml_opt_loss_type loss_type);

GGML_API ggml_opt_context_t ggml_opt_init(struct ggml_opt_params params);
GGML_API void ggml_opt_free(ggml_opt_context_t opt_ctx);

/* Zeroes the gradient accumulators (and the loss's gradient seed); with
 * optimizer, also the optimizer's moments and its step count. */
GGML_API void ggml_opt_reset(ggml_opt_context_t opt_ctx, bool optimizer);

GGML_API bool ggml_opt_static_graphs(ggml_opt_context_t opt_ctx);

/* Tensors of the current graphs (with dynamic graphs, valid until the next
 * ggml_opt_alloc): the model's input and output, the labels, the scalar
 * loss, the predictions (argmax of the outputs, I32) and the number of
 * correct predictions (I64 scalar); the last three only for losses that
 * have them, else NULL. */
GGML_API struct ggml_tensor *ggml_opt_inputs(ggml_opt_context_t opt_ctx);
GGML_API struct ggml_tensor *ggml_opt_outputs(ggml_opt_context_t opt_ctx);
GGML_API struct ggml_tensor *ggml_opt_labels(ggml_opt_context_t opt_ctx);
GGML_API struct ggml_tensor *ggml_opt_loss(ggml_opt_context_t opt_ctx);
GGML_API struct ggml_tensor *ggml_opt_pred(ggml_opt_context_t opt_ctx);
GGML_API struct ggml_tensor *ggml_opt_ncorrect(ggml_opt_context_t opt_ctx);

/* The gradient accumulator of a node of the forward graph, or NULL. */
GGML_API struct ggml_tensor *ggml_opt_grad_acc(ggml_opt_context_t opt_ctx, struct ggml_tensor *node);

GGML_API enum ggml_opt_optimizer_type ggml_opt_context_optimizer_type(ggml_opt_context_t opt_ctx);

/* "adamw", "sgd", or "undefined". */
GGML_API const char *ggml_opt_optimizer_name(enum ggml_opt_optimizer_type optimizer);

/* -------------------------------------------------------------- results */

/* Statistics over evaluated batches: count, loss, predictions, accuracy. */
GGML_API ggml_opt_result_t ggml_opt_result_init(void);
GGML_API void ggml_opt_result_free(ggml_opt_result_t result);
GGML_API void ggml_opt_result_reset(ggml_opt_result_t result);

/* Each writes its value(s); an uncertainty pointer may be NULL.  Loss:
 * per datapoint (mean over batches) or summed, as the loss type defines,
 * with the standard error; accuracy: fraction correct with its binomial
 * standard error; NaN where undefined.  pred receives one value per
 * datapoint evaluated. */
GGML_API void ggml_opt_result_ndata(ggml_opt_result_t result, int64_t *ndata);
GGML_API void ggml_opt_result_loss(ggml_opt_result_t result, double *loss, double *unc);
GGML_API void ggml_opt_result_pred(ggml_opt_result_t result, int32_t *pred);
GGML_API void ggml_opt_result_accuracy(ggml_opt_result_t result, double *accuracy, double *unc);

/* ---------------------------------------------------------- computation */

/* Dynamic graphs only: the graph gf (built in ctx_compute, with gradient
 * slots) and its input and output for the next ggml_opt_alloc. */
GGML_API void ggml_opt_prepare_alloc(ggml_opt_context_t opt_ctx, struct ggml_context *ctx_compute,
                                     struct ggml_cgraph *gf, struct ggml_tensor *inputs,
                                     struct ggml_tensor *outputs);

/* Allocates the graph of the next evaluation: the forward pass, or with
 * backward the gradients too (and the optimizer step every opt_period
 * calls).  Exactly once before each ggml_opt_eval. */
GGML_API void ggml_opt_alloc(ggml_opt_context_t opt_ctx, bool backward);

/* Runs the allocated graph; adds its batch to result unless NULL. */
GGML_API void ggml_opt_eval(ggml_opt_context_t opt_ctx, ggml_opt_result_t result);

/* ------------------------------------------------------------ high level */

/* Called after each batch of ggml_opt_epoch: train says which part of the
 * dataset, ibatch of ibatch_max batches are done, t_start_us is when the
 * part started (ggml_time_us). */
typedef void (*ggml_opt_epoch_callback)(bool train, ggml_opt_context_t opt_ctx, ggml_opt_dataset_t dataset,
                                        ggml_opt_result_t result, int64_t ibatch, int64_t ibatch_max,
                                        int64_t t_start_us);

/* One pass over the dataset with static graphs: the datapoints before
 * idata_split (all when negative) train, the rest are only evaluated. */
GGML_API void ggml_opt_epoch(ggml_opt_context_t opt_ctx, ggml_opt_dataset_t dataset, ggml_opt_result_t result_train,
                             ggml_opt_result_t result_eval, int64_t idata_split,
                             ggml_opt_epoch_callback callback_train, ggml_opt_epoch_callback callback_eval);

/* An epoch callback drawing a progress line with loss, accuracy, elapsed
 * time and estimated time left on stderr. */
GGML_API void ggml_opt_epoch_callback_progress_bar(bool train, ggml_opt_context_t opt_ctx,
                                                   ggml_opt_dataset_t dataset, ggml_opt_result_t result,
                                                   int64_t ibatch, int64_t ibatch_max, int64_t t_start_us);

/*
 * Trains the model from inputs ([ne_datapoint, batch]) to outputs for
 * nepoch epochs: an optimizer step every nbatch_logical datapoints (a
 * multiple of the batch, dividing the dataset's size), the last val_split
 * part of the dataset (0 <= val_split < 1) for validation only.  get_opt_pars
 * receives a pointer to the current epoch (int64_t, from 1).  Progress goes
 * to stderr unless silent.
 */
GGML_API void ggml_opt_fit(ggml_backend_sched_t backend_sched, struct ggml_context *ctx_compute,
                           struct ggml_tensor *inputs, struct ggml_tensor *outputs, ggml_opt_dataset_t dataset,
                           enum ggml_opt_loss_type loss_type, enum ggml_opt_optimizer_type optimizer,
                           ggml_opt_get_optimizer_params get_opt_pars, int64_t nepoch, int64_t nbatch_logical,
                           float val_split, bool silent);

#ifdef __cplusplus
}
#endif

#endif /* GGML_OPT_H */
