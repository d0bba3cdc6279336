/*
 * test-opt.c - training with ggml-opt.h (lib/opt.c).
 *
 *  1. datasets: shapes, batches in order, shuffles that permute whole
 *     shards (and only the part asked for), host batches, refusals;
 *  2. optimizer steps through a context against a double-precision
 *     reference written here: a linear model y = W^T x + b fitted by mean
 *     squared error, AdamW with gradient accumulation over two physical
 *     batches and SGD with weight decay, static and dynamic graphs; the
 *     accumulated gradients, the result's loss and its uncertainty;
 *  3. end to end: a two-layer network (ReLU hidden layer) learns a
 *     synthetic four-class task that no linear model can (classes by the
 *     signs of x0 x1 and x2 x3) with ggml_opt_fit, cross-entropy and
 *     AdamW, and must reach 90% accuracy on held-out data evaluated with
 *     ggml_opt_epoch: with 1 and 2 threads, and through the BLAS plugin
 *     when it is built;
 *  4. the progress bar's line;
 *  5. refusals: each logs exactly one error and leaves the objects usable.
 */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-opt.h"
#include "tap.h"

/* ------------------------------------------------------------- helpers */

/* xorshift64*: the test's own deterministic random numbers. */
static double uniform(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return (double) ((*state * 0x2545f4914f6cdd1dULL) >> 11) / 9007199254740992.0;
}

static struct ggml_context *ctx_of(size_t n_tensors, size_t n_graphs)
{
    struct ggml_init_params ip = {
        n_tensors * ggml_tensor_overhead() + n_graphs * ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE, true), NULL,
        true
    };
    return ggml_init(ip);
}

/* A scheduler over backends (CPU last); NULL-safe free below. */
static ggml_backend_sched_t sched_of(ggml_backend_t *backends, int n)
{
    return ggml_backend_sched_new(backends, NULL, n, GGML_DEFAULT_GRAPH_SIZE, false, true);
}

/* ------------------------------------------------------------ datasets */

enum { DS_VALUES = 3, DS_LABELS = 2, DS_N = 10, DS_SHARD = 2 };

static float data_value(int64_t i, int64_t j)
{
    return (float) (100 * i + j);
}

static float label_value(int64_t i, int64_t k)
{
    return (float) (-100 * i - k);
}

/* Datapoint index of the batch row r, after checking the row's values and label; -1 when they do not match one datapoint. */
static int64_t identify(const float *data, const float *labels, int64_t r)
{
    const int64_t id = (int64_t) (data[r * DS_VALUES] / 100.0f);
    for (int j = 0; j < DS_VALUES; j++)
        if (data[r * DS_VALUES + j] != data_value(id, j))
            return -1;
    for (int k = 0; k < DS_LABELS; k++)
        if (labels[r * DS_LABELS + k] != label_value(id, k))
            return -1;
    return id;
}

/* The order of the datapoints as get_batch hands them out, batch_points at a time; false when a row matches none. */
static bool batch_order(ggml_opt_dataset_t ds, struct ggml_tensor *db, struct ggml_tensor *lb, int64_t batch_points,
                        int64_t *order)
{
    float data[DS_N * DS_VALUES], labels[DS_N * DS_LABELS];
    for (int64_t b = 0; b < DS_N / batch_points; b++) {
        ggml_opt_dataset_get_batch(ds, db, lb, b);
        ggml_backend_tensor_get(db, data, 0, ggml_nbytes(db));
        ggml_backend_tensor_get(lb, labels, 0, ggml_nbytes(lb));
        for (int64_t r = 0; r < batch_points; r++)
            if ((order[b * batch_points + r] = identify(data, labels, r)) < 0)
                return false;
    }
    return true;
}

static void test_dataset(ggml_backend_sched_t sched)
{
    tap_log_errors();
    const struct {
        int64_t values, labels, n, shard;
        const char *what;
    } bad[] = {
        { 0, 1, 4, 1, "no values per datapoint" },
        { 1, -1, 4, 1, "a negative label size" },
        { 1, 1, 0, 1, "no datapoints" },
        { 1, 1, 4, 0, "shards of 0" },
        { 1, 1, 4, 5, "shards larger than the dataset" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        is_ptr(ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, bad[i].values, bad[i].labels, bad[i].n, bad[i].shard),
               NULL, "dataset_init refuses %s", bad[i].what);
        logged_one_error("with one error");
    }
    is_ptr(ggml_opt_dataset_init(GGML_TYPE_COUNT, GGML_TYPE_F32, 1, 1, 4, 1), NULL, "dataset_init refuses a bad type");
    logged_one_error("with one error");
    is_ptr(ggml_opt_dataset_init(GGML_TYPE_Q8_0, GGML_TYPE_F32, 16, 1, 4, 1), NULL,
           "dataset_init refuses datapoints that are not whole blocks");
    logged_one_error("with one error");

    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, DS_VALUES, DS_LABELS, DS_N, DS_SHARD);
    if (!ok(ds != NULL, "dataset of %d datapoints in shards of %d", DS_N, DS_SHARD))
        return;
    struct ggml_tensor *data = ggml_opt_dataset_data(ds), *labels = ggml_opt_dataset_labels(ds);
    is_int(ggml_opt_dataset_ndata(ds), DS_N, "ndata");
    ok(data->ne[0] == DS_VALUES && data->ne[1] == DS_N && data->type == GGML_TYPE_F32, "data is [%d, %d] f32",
       DS_VALUES, DS_N);
    ok(labels->ne[0] == DS_LABELS && labels->ne[1] == DS_N, "labels are [%d, %d]", DS_LABELS, DS_N);
    ok(data->data != NULL && labels->data != NULL, "both in host memory");
    for (int64_t i = 0; i < DS_N; i++) {
        for (int j = 0; j < DS_VALUES; j++)
            ((float *) data->data)[i * DS_VALUES + j] = data_value(i, j);
        for (int k = 0; k < DS_LABELS; k++)
            ((float *) labels->data)[i * DS_LABELS + k] = label_value(i, k);
    }
    ggml_opt_dataset_t unlabelled = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, 2, 0, 4, 1);
    ok(unlabelled != NULL && ggml_opt_dataset_labels(unlabelled) == NULL, "a dataset without labels has none");
    ggml_opt_dataset_free(unlabelled);

    /* batches of 2 and of 4 datapoints (1 and 2 shards) */
    struct ggml_context *ctx = ctx_of(8, 0);
    struct ggml_tensor *db2 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, DS_VALUES, 2);
    struct ggml_tensor *lb2 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, DS_LABELS, 2);
    struct ggml_tensor *db4 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, DS_VALUES, 4);
    struct ggml_tensor *lb4 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, DS_LABELS, 4);
    struct ggml_tensor *db_odd = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, DS_VALUES * 3 - 1);
    struct ggml_tensor *db_i32 = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, DS_VALUES, 2);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());

    int64_t order[DS_N];
    bool in_order = batch_order(ds, db2, lb2, 2, order);
    for (int64_t i = 0; i < DS_N; i++)
        in_order = in_order && order[i] == i;
    ok(in_order, "batches of 2 hand out the datapoints in order");
    int64_t order4[DS_N] = { 0 };
    in_order = batch_order(ds, db4, lb4, 4, order4); /* 2 batches of 4: datapoints 0 .. 7 */
    for (int64_t i = 0; i < 8; i++)
        in_order = in_order && order4[i] == i;
    ok(in_order, "batches of 4 (2 shards) hand out the datapoints in order");

    float host_data[4 * DS_VALUES], host_labels[4 * DS_LABELS], dev_data[4 * DS_VALUES];
    ggml_opt_dataset_get_batch_host(ds, host_data, sizeof host_data, host_labels, 1);
    ggml_opt_dataset_get_batch(ds, db4, lb4, 1);
    ggml_backend_tensor_get(db4, dev_data, 0, sizeof dev_data);
    ok(memcmp(host_data, dev_data, sizeof dev_data) == 0 && identify(host_data, host_labels, 0) == 4,
       "get_batch_host gives the same batch in host memory");

    struct ggml_opt_params params = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_SUM);
    ggml_opt_context_t opt = ggml_opt_init(params);
    ok(opt != NULL && !ggml_opt_static_graphs(opt), "a context with dynamic graphs (for its random generator)");

    ggml_opt_dataset_shuffle(opt, ds, -1);
    int64_t shuffled[DS_N];
    bool valid = batch_order(ds, db2, lb2, 2, shuffled);
    int seen[DS_N] = { 0 };
    bool whole_shards = true, moved = false;
    for (int64_t i = 0; valid && i < DS_N; i++) {
        seen[shuffled[i]]++;
        moved = moved || shuffled[i] != i;
        if (i % 2 == 1)
            whole_shards = whole_shards && shuffled[i] == shuffled[i - 1] + 1 && shuffled[i] % 2 == 1;
    }
    bool permutation = valid;
    for (int64_t i = 0; i < DS_N; i++)
        permutation = permutation && seen[i] == 1;
    ok(permutation, "a shuffle hands out every datapoint once, with its own label");
    ok(whole_shards, "and moves whole shards");
    ok(moved, "and changes the order");

    ggml_opt_dataset_shuffle(opt, ds, 4); /* shards 0 and 1 only */
    int64_t partly[DS_N];
    valid = batch_order(ds, db2, lb2, 2, partly);
    bool tail_kept = valid;
    for (int64_t i = 4; i < DS_N; i++)
        tail_kept = tail_kept && partly[i] == shuffled[i];
    bool head_same_set = valid && ((partly[0] == shuffled[0] && partly[2] == shuffled[2]) ||
                                   (partly[0] == shuffled[2] && partly[2] == shuffled[0]));
    ok(tail_kept && head_same_set, "shuffling the first 4 datapoints moves only their 2 shards");

    /* refusals leave the order and the batch tensors alone */
    tap_log_errors();
    ggml_opt_dataset_shuffle(opt, ds, 3);
    logged_one_error("shuffle refuses a part that is not whole shards");
    ggml_opt_dataset_shuffle(opt, ds, DS_N + 2);
    logged_one_error("shuffle refuses more than the dataset");
    ggml_opt_dataset_shuffle(NULL, ds, -1);
    logged_one_error("shuffle refuses a NULL context");
    valid = batch_order(ds, db2, lb2, 2, order);
    ok(valid && memcmp(order, partly, sizeof order) == 0, "after the refusals the order is unchanged");

    const float sentinel[2 * DS_VALUES] = { 7, 7, 7, 7, 7, 7 };
    ggml_backend_tensor_set(db2, sentinel, 0, sizeof sentinel);
    ggml_opt_dataset_get_batch(ds, db2, lb2, DS_N / 2);
    logged_one_error("get_batch refuses a batch past the end");
    ggml_opt_dataset_get_batch(ds, db2, NULL, 0);
    logged_one_error("get_batch refuses a batch without labels for a labelled dataset");
    ggml_opt_dataset_get_batch(ds, db_odd, NULL, 0);
    logged_one_error("get_batch refuses a batch that is not whole shards");
    ggml_opt_dataset_get_batch(ds, db_i32, lb2, 0);
    logged_one_error("get_batch refuses a batch of another type");
    ggml_opt_dataset_get_batch(ds, db2, db4, 0);
    logged_one_error("get_batch refuses labels of the wrong size");
    ggml_opt_dataset_get_batch_host(ds, host_data, 5, host_labels, 0);
    logged_one_error("get_batch_host refuses a size that is not whole shards");
    float after[2 * DS_VALUES];
    ggml_backend_tensor_get(db2, after, 0, sizeof after);
    ok(memcmp(after, sentinel, sizeof after) == 0, "the refused batches left the tensor alone");

    ggml_opt_free(opt);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_opt_dataset_free(ds);
    ggml_opt_dataset_free(NULL);
    is_int(tap_log_errors(), 0, "freeing logs nothing");
}

/* --------------------------------------------- steps against a reference */

/* The linear model: x [IN, B], W [IN, OUT], b [OUT], y = W^T x + b [OUT, B]. */
enum { IN = 5, OUT = 3, BATCH = 2, NDATA = 8 };

struct linear {
    struct ggml_context *ctx_static;
    ggml_backend_buffer_t buf;
    struct ggml_tensor *x, *w, *b;
};

/* The model's static tensors, W and b set from w0 and b0 (zeros when NULL). */
static bool linear_init(struct linear *m, ggml_backend_t backend, const double *w0, const double *b0)
{
    m->ctx_static = ctx_of(3, 0);
    m->x = ggml_new_tensor_2d(m->ctx_static, GGML_TYPE_F32, IN, BATCH);
    m->w = ggml_new_tensor_2d(m->ctx_static, GGML_TYPE_F32, IN, OUT);
    m->b = ggml_new_tensor_1d(m->ctx_static, GGML_TYPE_F32, OUT);
    ggml_set_name(m->w, "W");
    ggml_set_name(m->b, "b");
    ggml_set_param(m->w);
    ggml_set_param(m->b);
    m->buf = ggml_backend_alloc_ctx_tensors(m->ctx_static, backend);
    if (m->buf == NULL)
        return false;
    float wf[IN * OUT], bf[OUT];
    for (int i = 0; i < IN * OUT; i++)
        wf[i] = w0 != NULL ? (float) w0[i] : 0.0f;
    for (int j = 0; j < OUT; j++)
        bf[j] = b0 != NULL ? (float) b0[j] : 0.0f;
    ggml_backend_tensor_set(m->w, wf, 0, sizeof wf);
    ggml_backend_tensor_set(m->b, bf, 0, sizeof bf);
    return true;
}

static void linear_free(struct linear *m)
{
    ggml_backend_buffer_free(m->buf);
    ggml_free(m->ctx_static);
}

static struct ggml_tensor *linear_outputs(struct ggml_context *ctx, const struct linear *m)
{
    return ggml_add(ctx, ggml_mul_mat(ctx, m->w, m->x), m->b);
}

/* The reference: the same model and optimizers in double precision. */
struct reference {
    double w[IN * OUT], b[OUT];
    double gw[IN * OUT], gb[OUT];                    /* accumulated gradients */
    double mw[IN * OUT], vw[IN * OUT], mb[OUT], vb[OUT]; /* AdamW moments */
};

/* Adds the gradient of this batch's mean squared error / period; returns the batch's mean squared error. */
static double reference_batch(struct reference *r, const float *x, const float *t, int period)
{
    double err = 0.0;
    const double scale = 2.0 / (OUT * BATCH * period);
    for (int n = 0; n < BATCH; n++) {
        for (int j = 0; j < OUT; j++) {
            double y = r->b[j];
            for (int k = 0; k < IN; k++)
                y += r->w[j * IN + k] * x[n * IN + k];
            const double d = y - t[n * OUT + j];
            err += d * d;
            r->gb[j] += scale * d;
            for (int k = 0; k < IN; k++)
                r->gw[j * IN + k] += scale * d * x[n * IN + k];
        }
    }
    return err / (OUT * BATCH);
}

/* One optimizer step on w with gradient g and moments m, v (AdamW at step t, or SGD). */
static void reference_step(double *w, const double *g, double *m, double *v, int n,
                           const struct ggml_opt_optimizer_params *p, bool adamw, int64_t t)
{
    for (int i = 0; i < n; i++) {
        if (!adamw) {
            w[i] = w[i] * (1.0 - (double) p->sgd.alpha * p->sgd.wd) - (double) p->sgd.alpha * g[i];
            continue;
        }
        const double b1 = p->adamw.beta1, b2 = p->adamw.beta2;
        m[i] = b1 * m[i] + (1.0 - b1) * g[i];
        v[i] = b2 * v[i] + (1.0 - b2) * g[i] * g[i];
        const double mh = m[i] / (1.0 - pow(b1, (double) t)), vh = v[i] / (1.0 - pow(b2, (double) t));
        w[i] = w[i] * (1.0 - (double) p->adamw.alpha * p->adamw.wd) -
            (double) p->adamw.alpha * mh / (sqrt(vh) + p->adamw.eps);
    }
}

static struct ggml_opt_optimizer_params test_params;
static bool test_params_valid = true;

static struct ggml_opt_optimizer_params get_test_params(void *userdata)
{
    (void) userdata;
    struct ggml_opt_optimizer_params p = test_params;
    if (!test_params_valid)
        p.adamw.alpha = p.sgd.alpha = 0.0f; /* out of range */
    return p;
}

static double max_diff(const float *got, const double *want, int n)
{
    double worst = 0.0;
    for (int i = 0; i < n; i++)
        worst = fmax(worst, fabs(got[i] - want[i]));
    return worst;
}

/*
 * Trains the linear model over NDATA datapoints in batches of BATCH with
 * an optimizer step every `period` batches, through static or dynamic
 * graphs, and compares weights, accumulated gradients and the result with
 * the reference.
 */
static void check_steps(ggml_backend_t cpu, ggml_backend_sched_t sched, enum ggml_opt_optimizer_type optimizer,
                        int period, bool static_graphs)
{
    const char *label = optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW ? "adamw" : "sgd";
    const char *graphs = static_graphs ? "static" : "dynamic";
    uint64_t seed = 0x1234567u + (uint64_t) period;
    struct reference r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < IN * OUT; i++)
        r.w[i] = uniform(&seed) - 0.5;
    for (int j = 0; j < OUT; j++)
        r.b[j] = uniform(&seed) - 0.5;
    float xs[NDATA * IN], ts[NDATA * OUT];
    for (int i = 0; i < NDATA * IN; i++)
        xs[i] = (float) (2.0 * uniform(&seed) - 1.0);
    for (int i = 0; i < NDATA * OUT; i++)
        ts[i] = (float) (2.0 * uniform(&seed) - 1.0);

    struct linear m;
    if (!ok(linear_init(&m, cpu, r.w, r.b), "%s %s period %d: model allocated", label, graphs, period))
        return;
    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, IN, OUT, NDATA, 1);
    memcpy(ggml_opt_dataset_data(ds)->data, xs, sizeof xs);
    memcpy(ggml_opt_dataset_labels(ds)->data, ts, sizeof ts);

    struct ggml_context *ctx_compute = ctx_of(GGML_DEFAULT_GRAPH_SIZE, 3);
    struct ggml_opt_params params = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR);
    params.opt_period = period;
    params.optimizer = optimizer;
    params.get_opt_pars = get_test_params;
    if (static_graphs) {
        params.ctx_compute = ctx_compute;
        params.inputs = m.x;
        params.outputs = linear_outputs(ctx_compute, &m);
    }
    tap_log_errors();
    ggml_opt_context_t opt = ggml_opt_init(params);
    ggml_opt_result_t result = ggml_opt_result_init();
    if (!ok(opt != NULL && result != NULL, "%s %s period %d: context made", label, graphs, period)) {
        ggml_opt_result_free(result);
        ggml_free(ctx_compute);
        ggml_opt_dataset_free(ds);
        linear_free(&m);
        return;
    }
    is_int(ggml_opt_context_optimizer_type(opt), optimizer, "of the optimizer asked for");

    double batch_losses[NDATA / BATCH];
    double worst_grad = 0.0;
    int64_t t = 1;
    for (int batch = 0; batch < NDATA / BATCH; batch++) {
        struct ggml_context *ctx_dyn = NULL;
        struct ggml_tensor *labels_tensor = NULL;
        if (!static_graphs) {
            ctx_dyn = ctx_of(GGML_DEFAULT_GRAPH_SIZE, 3);
            struct ggml_cgraph *gf = ggml_new_graph_custom(ctx_dyn, GGML_DEFAULT_GRAPH_SIZE, true);
            struct ggml_tensor *out = linear_outputs(ctx_dyn, &m);
            ggml_build_forward_expand(gf, out);
            ggml_opt_prepare_alloc(opt, ctx_dyn, gf, m.x, out);
        }
        ggml_opt_alloc(opt, true);
        labels_tensor = ggml_opt_labels(opt);
        ggml_opt_dataset_get_batch(ds, m.x, labels_tensor, batch);
        ggml_opt_eval(opt, result);

        batch_losses[batch] = reference_batch(&r, xs + batch * BATCH * IN, ts + batch * BATCH * OUT, period);
        if ((batch + 1) % period != 0) {
            /* mid-period: the accumulator holds the gradients so far */
            float acc[IN * OUT];
            struct ggml_tensor *gw = ggml_opt_grad_acc(opt, m.w);
            if (gw != NULL) {
                ggml_backend_tensor_get(gw, acc, 0, sizeof acc);
                worst_grad = fmax(worst_grad, max_diff(acc, r.gw, IN * OUT));
            } else {
                worst_grad = INFINITY;
            }
        } else {
            const bool adamw = optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW;
            reference_step(r.w, r.gw, r.mw, r.vw, IN * OUT, &test_params, adamw, t);
            reference_step(r.b, r.gb, r.mb, r.vb, OUT, &test_params, adamw, t);
            t++;
            memset(r.gw, 0, sizeof r.gw);
            memset(r.gb, 0, sizeof r.gb);
        }
        ggml_free(ctx_dyn);
    }
    is_int(tap_log_errors(), 0, "%s %s period %d: %d batches trained without an error", label, graphs, period,
           NDATA / BATCH);
    if (period > 1)
        ok(worst_grad <= 1e-5, "%s %s period %d: the accumulated gradient matches (max error %.3g)", label, graphs,
           period, worst_grad);
    float wf[IN * OUT], bf[OUT];
    ggml_backend_tensor_get(m.w, wf, 0, sizeof wf);
    ggml_backend_tensor_get(m.b, bf, 0, sizeof bf);
    const double worst = fmax(max_diff(wf, r.w, IN * OUT), max_diff(bf, r.b, OUT));
    ok(worst <= 2e-5, "%s %s period %d: weights after %d steps match the reference (max error %.3g)", label, graphs,
       period, NDATA / BATCH / period, worst);

    int64_t nd = 0;
    double loss = 0.0, unc = 0.0, acc = 0.0, acc_unc = 0.0;
    ggml_opt_result_ndata(result, &nd);
    ggml_opt_result_loss(result, &loss, &unc);
    ggml_opt_result_accuracy(result, &acc, &acc_unc);
    const int nb = NDATA / BATCH;
    double mean = 0.0, sq = 0.0;
    for (int i = 0; i < nb; i++) {
        mean += batch_losses[i] / nb;
        sq += batch_losses[i] * batch_losses[i] / nb;
    }
    const double want_unc = sqrt((sq - mean * mean) / (nb - 1));
    is_int(nd, NDATA, "%s %s period %d: the result counts %d datapoints", label, graphs, period, NDATA);
    is_near(loss, mean, 1e-5 * fmax(1.0, mean), "the result's loss is the mean of the batches' errors");
    is_near(unc, want_unc, 1e-5 * fmax(1.0, want_unc), "its uncertainty is their standard error");
    ok(isnan(acc) && isnan(acc_unc), "mean squared error has no accuracy (NaN)");

    ggml_opt_free(opt);
    ggml_opt_result_free(result);
    ggml_free(ctx_compute);
    ggml_opt_dataset_free(ds);
    linear_free(&m);
}

/* ------------------------------------------------------- end to end */

enum { MLP_IN = 4, MLP_HIDDEN = 32, MLP_CLASSES = 4, MLP_TRAIN = 2048, MLP_TEST = 512, MLP_BATCH = 64 };

/* The class of x: the signs of x0 x1 and of x2 x3. */
static int mlp_class(const float *x)
{
    return (x[0] * x[1] > 0.0f) + 2 * (x[2] * x[3] > 0.0f);
}

static ggml_opt_dataset_t mlp_dataset(int64_t n, uint64_t *seed)
{
    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, MLP_IN, MLP_CLASSES, n, 1);
    if (ds == NULL)
        return NULL;
    float *x = ggml_opt_dataset_data(ds)->data, *t = ggml_opt_dataset_labels(ds)->data;
    for (int64_t i = 0; i < n; i++) {
        for (int k = 0; k < MLP_IN; k++)
            x[i * MLP_IN + k] = (float) (2.0 * uniform(seed) - 1.0);
        const int c = mlp_class(x + i * MLP_IN);
        for (int k = 0; k < MLP_CLASSES; k++)
            t[i * MLP_CLASSES + k] = k == c ? 1.0f : 0.0f;
    }
    return ds;
}

static struct ggml_opt_optimizer_params mlp_params(void *userdata)
{
    const int64_t epoch = *(const int64_t *) userdata;
    struct ggml_opt_optimizer_params p = ggml_opt_get_default_optimizer_params(NULL);
    p.adamw.alpha = epoch <= 30 ? 0.01f : 0.003f;
    return p;
}

/* Trains the network with ggml_opt_fit on backends; returns the accuracy on the test set (NaN on failure). */
static double mlp_train(ggml_backend_t *backends, int n_backends, double *seconds)
{
    uint64_t seed = 0xfeedbeefu;
    ggml_opt_dataset_t train = mlp_dataset(MLP_TRAIN, &seed), test = mlp_dataset(MLP_TEST, &seed);
    struct ggml_context *ctx_static = ctx_of(8, 0), *ctx_compute = ctx_of(GGML_DEFAULT_GRAPH_SIZE, 3);
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx_static, GGML_TYPE_F32, MLP_IN, MLP_BATCH);
    struct ggml_tensor *w1 = ggml_new_tensor_2d(ctx_static, GGML_TYPE_F32, MLP_IN, MLP_HIDDEN);
    struct ggml_tensor *b1 = ggml_new_tensor_1d(ctx_static, GGML_TYPE_F32, MLP_HIDDEN);
    struct ggml_tensor *w2 = ggml_new_tensor_2d(ctx_static, GGML_TYPE_F32, MLP_HIDDEN, MLP_CLASSES);
    struct ggml_tensor *b2 = ggml_new_tensor_1d(ctx_static, GGML_TYPE_F32, MLP_CLASSES);
    struct ggml_tensor *params[] = { w1, b1, w2, b2 };
    for (int i = 0; i < 4; i++)
        ggml_set_param(params[i]);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx_static, backends[n_backends - 1]);
    for (int i = 0; i < 4; i++) {
        const int64_t n = ggml_nelements(params[i]);
        const double range = 1.0 / sqrt((double) params[i]->ne[0]);
        float *v = malloc((size_t) n * sizeof *v);
        for (int64_t k = 0; k < n; k++)
            v[k] = (float) (range * (2.0 * uniform(&seed) - 1.0));
        ggml_backend_tensor_set(params[i], v, 0, (size_t) n * sizeof *v);
        free(v);
    }
    struct ggml_tensor *hidden = ggml_relu(ctx_compute, ggml_add(ctx_compute, ggml_mul_mat(ctx_compute, w1, x), b1));
    struct ggml_tensor *logits = ggml_add(ctx_compute, ggml_mul_mat(ctx_compute, w2, hidden), b2);

    ggml_backend_sched_t sched = sched_of(backends, n_backends);
    const int64_t t0 = ggml_time_us();
    ggml_opt_fit(sched, ctx_compute, x, logits, train, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY, GGML_OPT_OPTIMIZER_TYPE_ADAMW,
                 mlp_params, 60, MLP_BATCH, 0.0f, true);
    *seconds = (double) (ggml_time_us() - t0) * 1e-6;

    /* evaluation only, on data the network has not seen */
    struct ggml_context *ctx_eval = ctx_of(GGML_DEFAULT_GRAPH_SIZE, 3);
    struct ggml_tensor *hidden_e = ggml_relu(ctx_eval, ggml_add(ctx_eval, ggml_mul_mat(ctx_eval, w1, x), b1));
    struct ggml_opt_params p = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY);
    p.ctx_compute = ctx_eval;
    p.inputs = x;
    p.outputs = ggml_add(ctx_eval, ggml_mul_mat(ctx_eval, w2, hidden_e), b2);
    p.build_type = GGML_OPT_BUILD_TYPE_FORWARD;
    ggml_opt_context_t opt = ggml_opt_init(p);
    ggml_opt_result_t result = ggml_opt_result_init();
    double accuracy = NAN, unc = NAN;
    if (opt != NULL) {
        ggml_opt_epoch(opt, test, NULL, result, 0, NULL, NULL);
        ggml_opt_result_accuracy(result, &accuracy, &unc);
        int64_t nd = 0;
        ggml_opt_result_ndata(result, &nd);
        int32_t *pred = malloc(MLP_TEST * sizeof *pred);
        ggml_opt_result_pred(result, pred);
        /* the predictions agree with the count of correct ones */
        int64_t correct = 0;
        const float *tx = ggml_opt_dataset_data(test)->data;
        for (int64_t i = 0; i < MLP_TEST; i++)
            correct += pred[i] == mlp_class(tx + i * MLP_IN);
        if (nd != MLP_TEST || fabs((double) correct / MLP_TEST - accuracy) > 1e-12)
            accuracy = NAN;
        free(pred);
    }
    ggml_opt_result_free(result);
    ggml_opt_free(opt);
    ggml_backend_sched_free(sched);
    ggml_free(ctx_eval);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx_compute);
    ggml_free(ctx_static);
    ggml_opt_dataset_free(train);
    ggml_opt_dataset_free(test);
    return accuracy;
}

static void test_end_to_end(ggml_backend_t cpu, ggml_backend_t blas)
{
    for (int threads = 1; threads <= 2; threads++) {
        ggml_backend_cpu_set_n_threads(cpu, threads);
        for (int with_blas = 0; with_blas <= (blas != NULL); with_blas++) {
            ggml_backend_t backends[2] = { blas, cpu };
            double seconds = 0.0;
            tap_log_errors();
            const double acc = mlp_train(with_blas ? backends : backends + 1, with_blas ? 2 : 1, &seconds);
            ok(acc >= 0.90, "two-layer network, %d thread%s%s: test accuracy %.1f%% >= 90%% (trained in %.2f s)",
               threads, threads > 1 ? "s" : "", with_blas ? ", BLAS and CPU" : ", CPU", 100.0 * acc, seconds);
            is_int(tap_log_errors(), 0, "without an error");
        }
    }
    if (blas == NULL)
        tap_skip(2, "the BLAS plugin is not built");
}

/* ----------------------------------------------------------- progress bar */

static void test_progress_bar(ggml_backend_t cpu, ggml_backend_sched_t sched)
{
    struct linear m;
    if (!linear_init(&m, cpu, NULL, NULL))
        return;
    struct ggml_context *ctx_compute = ctx_of(GGML_DEFAULT_GRAPH_SIZE, 3);
    struct ggml_opt_params params = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR);
    params.ctx_compute = ctx_compute;
    params.inputs = m.x;
    params.outputs = linear_outputs(ctx_compute, &m);
    ggml_opt_context_t opt = ggml_opt_init(params);
    ggml_opt_result_t result = ggml_opt_result_init();

    char path[] = "/tmp/test-opt-XXXXXX";
    const int fd = mkstemp(path);
    fflush(stderr);
    const int saved = dup(2);
    dup2(fd, 2);
    ggml_opt_epoch_callback_progress_bar(true, opt, NULL, result, 2, 4, ggml_time_us());
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char line[512] = "";
    const ssize_t n = pread(fd, line, sizeof line - 1, 0);
    line[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    ok(strncmp(line, "train: [", 8) == 0, "the progress line starts with the part and the bar");
    ok(strstr(line, "\u2588\u2588\u2588\u2588    ]") != NULL, "2 of 4 batches fill half the bar");
    ok(strstr(line, "data=0000004/0000008") != NULL, "and count datapoints (batches of %d)", BATCH);
    ok(strstr(line, "loss=") != NULL && strstr(line, "ETA=") != NULL, "with loss and time left");
    ok(line[strlen(line) - 1] == '\r', "ending in a carriage return while not done");

    ggml_opt_result_free(result);
    ggml_opt_free(opt);
    ggml_free(ctx_compute);
    linear_free(&m);
}

/* ---------------------------------------------------------------- refusals */

/* ggml_opt_init(p) must give NULL with one logged error. */
static void refuse_init(struct ggml_opt_params p, const char *what)
{
    is_ptr(ggml_opt_init(p), NULL, "opt_init refuses %s", what);
    logged_one_error("with one error");
}

static void test_refusals(ggml_backend_t cpu, ggml_backend_sched_t sched)
{
    struct linear m;
    if (!linear_init(&m, cpu, NULL, NULL))
        return;
    struct ggml_context *ctx_compute = ctx_of(GGML_DEFAULT_GRAPH_SIZE, 3);
    struct ggml_tensor *out = linear_outputs(ctx_compute, &m);
    tap_log_errors();

    struct ggml_opt_params p = ggml_opt_default_params(NULL, GGML_OPT_LOSS_TYPE_SUM);
    refuse_init(p, "a NULL scheduler");
    p = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_SUM);
    p.opt_period = 0;
    refuse_init(p, "opt_period 0");
    p = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_SUM);
    p.ctx_compute = ctx_compute;
    refuse_init(p, "static graphs without inputs and outputs");
    p = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_SUM);
    p.outputs = out;
    refuse_init(p, "outputs without ctx_compute");
    p = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_SUM);
    p.get_opt_pars = NULL;
    refuse_init(p, "a NULL get_opt_pars");
    p = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_SUM);
    p.optimizer = GGML_OPT_OPTIMIZER_TYPE_COUNT;
    refuse_init(p, "an unknown optimizer");

    /* compute contexts that fill up: before the forward graph, and in the middle of the loss */
    for (int room = 0; room <= 1; room++) {
        struct ggml_context *small = ctx_of(2 + 3 * (size_t) room, (size_t) room);
        p = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR);
        p.ctx_compute = small;
        p.inputs = m.x;
        p.outputs = linear_outputs(small, &m);
        refuse_init(p, room ? "a compute context that fills up within the loss"
                            : "a compute context without room for the graph");
        ggml_free(small);
    }

    /* a model without parameters */
    struct ggml_context *ctx_unalloc = ctx_of(4, 0);
    struct ggml_tensor *lonely = ggml_new_tensor_1d(ctx_unalloc, GGML_TYPE_F32, 4);
    p = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_SUM);
    p.ctx_compute = ctx_compute;
    p.inputs = lonely;
    p.outputs = ggml_scale(ctx_compute, lonely, 2.0f);
    refuse_init(p, "static inputs without memory");
    ggml_backend_buffer_t lonely_buf = ggml_backend_alloc_ctx_tensors(ctx_unalloc, cpu);
    refuse_init(p, "a model without parameters");

    /* a usable context, then calls out of order */
    p = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR);
    p.ctx_compute = ctx_compute;
    p.inputs = m.x;
    p.outputs = out;
    p.get_opt_pars = get_test_params;
    test_params = ggml_opt_get_default_optimizer_params(NULL);
    ggml_opt_context_t opt = ggml_opt_init(p);
    ok(opt != NULL, "a context of the linear model");
    is_int(tap_log_errors(), 0, "without an error");
    ggml_opt_eval(opt, NULL);
    logged_one_error("eval before alloc is refused");
    ggml_opt_alloc(opt, true);
    is_int(tap_log_errors(), 0, "alloc");
    ggml_opt_alloc(opt, true);
    logged_one_error("alloc twice is refused");
    ggml_opt_prepare_alloc(opt, ctx_compute, NULL, m.x, out);
    logged_one_error("prepare_alloc with a NULL graph is refused");
    struct ggml_cgraph *g = ggml_new_graph_custom(ctx_compute, 16, true);
    ggml_opt_prepare_alloc(opt, ctx_compute, g, m.x, out);
    logged_one_error("prepare_alloc on static graphs is refused");

    float w_before[IN * OUT], w_after[IN * OUT];
    ggml_backend_tensor_get(m.w, w_before, 0, sizeof w_before);
    test_params_valid = false;
    ggml_opt_eval(opt, NULL);
    logged_one_error("eval refuses a learning rate of 0");
    ggml_backend_tensor_get(m.w, w_after, 0, sizeof w_after);
    ok(memcmp(w_before, w_after, sizeof w_after) == 0, "and changes no weight");
    test_params_valid = true;
    ggml_opt_eval(opt, NULL);
    logged_one_error("the refused evaluation used up the allocation");
    ggml_opt_alloc(opt, true);
    const float ones[IN * BATCH] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    ggml_backend_tensor_set(m.x, ones, 0, sizeof ones);
    ggml_backend_tensor_set(ggml_opt_labels(opt), ones, 0, OUT * BATCH * sizeof(float));
    ggml_opt_eval(opt, NULL);
    ggml_backend_tensor_get(m.w, w_after, 0, sizeof w_after);
    is_int(tap_log_errors(), 0, "with valid parameters the batch then runs");
    ok(memcmp(w_before, w_after, sizeof w_after) != 0, "and changes the weights");

    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, IN, OUT, 6, 1);
    ggml_opt_epoch(opt, ds, NULL, NULL, 3, NULL, NULL);
    logged_one_error("epoch refuses a split inside a batch");
    ggml_opt_dataset_t ds_wide = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, IN + 1, OUT, 6, 1);
    ggml_opt_epoch(opt, ds_wide, NULL, NULL, -1, NULL, NULL);
    logged_one_error("epoch refuses datapoints of another size than the inputs");
    ggml_opt_fit(sched, ctx_compute, m.x, out, ds, GGML_OPT_LOSS_TYPE_SUM, GGML_OPT_OPTIMIZER_TYPE_SGD,
                 ggml_opt_get_default_optimizer_params, 1, 3, 0.0f, true);
    logged_one_error("fit refuses a logical batch that is not whole batches");
    ggml_opt_fit(sched, ctx_compute, m.x, out, ds, GGML_OPT_LOSS_TYPE_SUM, GGML_OPT_OPTIMIZER_TYPE_SGD,
                 ggml_opt_get_default_optimizer_params, 1, 2, 1.0f, true);
    logged_one_error("fit refuses val_split 1");

    ggml_opt_result_t r = ggml_opt_result_init();
    double loss = 1.0, unc = 1.0, acc = 1.0, acc_unc = 1.0;
    int64_t nd = -1;
    ggml_opt_result_ndata(r, &nd);
    ggml_opt_result_loss(r, &loss, &unc);
    ggml_opt_result_accuracy(r, &acc, &acc_unc);
    ok(nd == 0 && loss == 0.0 && isnan(unc) && isnan(acc) && isnan(acc_unc),
       "an empty result: no data, loss 0, NaN uncertainty and accuracy");
    ggml_opt_result_loss(NULL, &loss, &unc);
    logged_one_error("result_loss refuses a NULL result");
    ggml_opt_result_free(r);

    /* a forward-only context */
    p.build_type = GGML_OPT_BUILD_TYPE_FORWARD;
    struct ggml_context *ctx_fwd = ctx_of(GGML_DEFAULT_GRAPH_SIZE, 3);
    p.ctx_compute = ctx_fwd;
    p.outputs = linear_outputs(ctx_fwd, &m);
    ggml_opt_context_t fwd = ggml_opt_init(p);
    ok(fwd != NULL && ggml_opt_loss(fwd) != NULL, "a forward-only context has a loss");
    ok(ggml_opt_grad_acc(fwd, m.w) == NULL, "and no gradient accumulators");
    ggml_opt_alloc(fwd, true);
    logged_one_error("it refuses a backward pass");
    ggml_opt_alloc(fwd, false);
    ggml_opt_eval(fwd, NULL);
    is_int(tap_log_errors(), 0, "and runs forward passes");

    /* dynamic graphs need prepare_alloc; epoch needs static graphs */
    ggml_opt_context_t dyn = ggml_opt_init(ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_SUM));
    ggml_opt_alloc(dyn, false);
    logged_one_error("alloc without prepare_alloc (dynamic graphs) is refused");
    ggml_opt_epoch(dyn, ds, NULL, NULL, -1, NULL, NULL);
    logged_one_error("epoch refuses dynamic graphs");
    is_str(ggml_opt_optimizer_name(GGML_OPT_OPTIMIZER_TYPE_SGD), "sgd", "optimizer_name(SGD)");
    is_str(ggml_opt_optimizer_name(GGML_OPT_OPTIMIZER_TYPE_COUNT), "undefined", "optimizer_name of no optimizer");
    struct ggml_opt_optimizer_params constant = ggml_opt_get_default_optimizer_params(NULL);
    constant.sgd.alpha = 0.25f;
    ok(ggml_opt_get_constant_optimizer_params(&constant).sgd.alpha == 0.25f, "constant optimizer parameters");
    ok(ggml_opt_get_default_optimizer_params(NULL).adamw.beta2 == 0.999f, "default AdamW beta2 is 0.999");

    ggml_opt_free(dyn);
    ggml_opt_free(fwd);
    ggml_opt_free(opt);
    ggml_opt_free(NULL);
    ggml_opt_dataset_free(ds);
    ggml_opt_dataset_free(ds_wide);
    ggml_backend_buffer_free(lonely_buf);
    ggml_free(ctx_unalloc);
    ggml_free(ctx_fwd);
    ggml_free(ctx_compute);
    linear_free(&m);
    is_int(tap_log_errors(), 0, "no other error on the way");
}

int main(void)
{
    tap_capture_log();
    ggml_time_init();
    ggml_backend_t blas = NULL;
    const char *dir = getenv("BLAS_PLUGIN_DIR");
    if (dir != NULL && dir[0] != '\0') {
        setenv("GGML_BACKEND_PATH", dir, 1);
        ggml_backend_load_all();
        ggml_backend_dev_t dev = ggml_backend_dev_by_name("BLAS");
        blas = dev != NULL ? ggml_backend_dev_init(dev, NULL) : NULL;
        ok(blas != NULL, "the BLAS plugin is loaded");
    }
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(cpu, 2);
    ggml_backend_sched_t sched = sched_of(&cpu, 1);
    tap_log_errors();

    test_dataset(sched);

    test_params = ggml_opt_get_default_optimizer_params(NULL);
    test_params.adamw.alpha = 0.05f;
    test_params.adamw.beta1 = 0.8f;
    test_params.adamw.beta2 = 0.95f;
    test_params.adamw.eps = 1e-6f;
    test_params.adamw.wd = 0.1f;
    test_params.sgd.alpha = 0.1f;
    test_params.sgd.wd = 0.05f;
    for (int st = 1; st >= 0; st--) {
        check_steps(cpu, sched, GGML_OPT_OPTIMIZER_TYPE_ADAMW, 1, st);
        check_steps(cpu, sched, GGML_OPT_OPTIMIZER_TYPE_ADAMW, 2, st);
        check_steps(cpu, sched, GGML_OPT_OPTIMIZER_TYPE_SGD, 1, st);
        check_steps(cpu, sched, GGML_OPT_OPTIMIZER_TYPE_SGD, 2, st);
    }

    test_progress_bar(cpu, sched);
    test_refusals(cpu, sched);
    test_end_to_end(cpu, blas);

    ggml_backend_sched_free(sched);
    ggml_backend_free(cpu);
    ggml_backend_free(blas);
    return tap_done();
}
