/*
 * test-opt-fault.c - training (lib/opt.c) when memory runs out.
 *
 * The allocator of tests/fault-alloc.c fails the N-th allocation of a
 * short training run, for every N the run makes: a data set, a scheduler,
 * an optimization context with static graphs (cross-entropy, AdamW,
 * gradients accumulated over two batches), three batches (allocation,
 * batch copy, evaluation into a result), the result's loss and accuracy,
 * then everything freed.  Checked for each N:
 *   - a call that fails logs exactly one error and reports it (NULL, or
 *     for the calls that return nothing, the one error), and the same
 *     call with memory available then works: the objects stay usable;
 *     a call that succeeds logs nothing;
 *   - the weights and the result's loss equal those of the run without
 *     a failure (the computation does not depend on where it failed);
 *   - nothing allocated during the run is still live after it.
 * Also run with AddressSanitizer in the sanitizer build (make check).
 * OPT_FAULT_REPLAY=N runs only the N-th case, its messages on stderr.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-opt.h"
#include "fault-alloc.h"
#include "tap.h"

enum { IN = 6, CLASSES = 3, BATCH = 4, NDATA = 12 };

/* What a run produced, and how its calls behaved. */
struct outcome {
    float w[IN * CLASSES];
    double loss, accuracy;
    bool calls_ok;  /* every call logged 0 errors, or failed with 1 and then worked */
    char bad_call[64];
};

/* Records a call's errors: a failure (one error) asks for a retry; anything else than 0 or 1 is wrong. */
static bool failed_once(struct outcome *o, const char *call)
{
    const int errors = tap_log_errors();
    if (errors > 1 && o->calls_ok) {
        o->calls_ok = false;
        snprintf(o->bad_call, sizeof o->bad_call, "%s (%d errors)", call, errors);
    }
    return errors == 1;
}

/* A constructor: called again once when it fails; a second failure is wrong. */
#define RETRY(o, var, call)                                                     \
    do {                                                                        \
        var = call;                                                             \
        if (failed_once(o, #call) != (var == NULL) && (o)->calls_ok) {          \
            (o)->calls_ok = false;                                              \
            snprintf((o)->bad_call, sizeof (o)->bad_call, "%s", #call);         \
        }                                                                       \
        if (var == NULL)                                                        \
            var = call;                                                         \
        if (var == NULL || tap_log_errors() != 0)                               \
            (o)->calls_ok = false;                                              \
    } while (0)

struct model {
    struct ggml_context *ctx;
    ggml_backend_buffer_t buf;
    struct ggml_tensor *x, *w;
};

static void run(ggml_backend_t cpu, const struct model *m, const float *w0, long fail_at, struct outcome *o)
{
    memset(o, 0, sizeof *o);
    o->calls_ok = true;
    ggml_backend_tensor_set(m->w, w0, 0, sizeof o->w);
    tap_log_errors();
    fault_arm(fail_at);

    ggml_opt_dataset_t ds;
    RETRY(o, ds, ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, IN, CLASSES, NDATA, 2));
    if (ds != NULL) {
        float *x = ggml_opt_dataset_data(ds)->data, *t = ggml_opt_dataset_labels(ds)->data;
        for (int i = 0; i < NDATA * IN; i++)
            x[i] = (float) ((i * 37 % 23) - 11) / 11.0f;
        for (int i = 0; i < NDATA; i++)
            for (int c = 0; c < CLASSES; c++)
                t[i * CLASSES + c] = c == i % CLASSES;
    }
    ggml_backend_sched_t sched;
    RETRY(o, sched, ggml_backend_sched_new(&cpu, NULL, 1, GGML_DEFAULT_GRAPH_SIZE, false, true));
    struct ggml_init_params cp = {
        GGML_DEFAULT_GRAPH_SIZE * ggml_tensor_overhead() + 4 * ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE, true),
        NULL, true
    };
    struct ggml_context *ctx_compute;
    RETRY(o, ctx_compute, ggml_init(cp));
    ggml_opt_context_t opt = NULL;
    ggml_opt_result_t result = NULL;
    if (ds != NULL && sched != NULL && ctx_compute != NULL) {
        struct ggml_opt_params p = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY);
        p.ctx_compute = ctx_compute;
        p.inputs = m->x;
        p.outputs = ggml_mul_mat(ctx_compute, m->w, m->x);
        p.opt_period = 2;
        RETRY(o, opt, ggml_opt_init(p));
        RETRY(o, result, ggml_opt_result_init());
    }
    for (int b = 0; opt != NULL && result != NULL && b < 3; b++) {
        /* a failed allocation or evaluation is retried from the allocation */
        for (int attempt = 0; attempt < 2; attempt++) {
            ggml_opt_alloc(opt, true);
            if (failed_once(o, "ggml_opt_alloc"))
                continue;
            ggml_opt_dataset_get_batch(ds, ggml_opt_inputs(opt), ggml_opt_labels(opt), b);
            if (failed_once(o, "ggml_opt_dataset_get_batch"))
                continue;
            ggml_opt_eval(opt, result);
            if (!failed_once(o, "ggml_opt_eval"))
                break;
        }
    }
    if (result != NULL) {
        double unc;
        ggml_opt_result_loss(result, &o->loss, &unc);
        ggml_opt_result_accuracy(result, &o->accuracy, &unc);
    }
    ggml_opt_result_free(result);
    ggml_opt_free(opt);
    ggml_free(ctx_compute);
    ggml_backend_sched_free(sched);
    ggml_opt_dataset_free(ds);
    fault_disarm();
    if (tap_log_errors() != 0 && o->calls_ok) {
        o->calls_ok = false;
        snprintf(o->bad_call, sizeof o->bad_call, "an unexpected error");
    }
    ggml_backend_tensor_get(m->w, o->w, 0, sizeof o->w);
}

/* OPT_FAULT_REPLAY=N: logs of the run whose N-th allocation fails, to stderr. */
static void replay_sink(enum ggml_log_level level, const char *text, void *user_data)
{
    (void) user_data;
    fprintf(stderr, "[%d] %s", (int) level, text);
    tap_log_sink(level, text, NULL);
}

int main(void)
{
    tap_capture_log();
    const char *replay = getenv("OPT_FAULT_REPLAY");
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(cpu, 2);
    struct ggml_init_params sp = { 2 * ggml_tensor_overhead(), NULL, true };
    struct model m;
    m.ctx = ggml_init(sp);
    m.x = ggml_new_tensor_2d(m.ctx, GGML_TYPE_F32, IN, BATCH);
    m.w = ggml_new_tensor_2d(m.ctx, GGML_TYPE_F32, IN, CLASSES);
    ggml_set_param(m.w);
    m.buf = ggml_backend_alloc_ctx_tensors(m.ctx, cpu);
    float w0[IN * CLASSES];
    for (int i = 0; i < IN * CLASSES; i++)
        w0[i] = (float) ((i * 29 % 17) - 8) / 16.0f;
    fault_load_unwinder();

    struct outcome base, o;
    run(cpu, &m, w0, 0, &base);
    long events = 0;
    ok(base.calls_ok && memcmp(base.w, w0, sizeof w0) != 0 && base.loss > 0.0,
       "the run without a failure trains (loss %.4f)", base.loss);

    if (replay != NULL) {
        ggml_log_set(replay_sink, NULL);
        run(cpu, &m, w0, atol(replay), &o);
        ok(o.calls_ok, "replay of allocation %s: %s", replay, o.calls_ok ? "calls ok" : o.bad_call);
        return tap_done();
    }
    long fail_at = 1, bad = 0;
    for (;; fail_at++) {
        run(cpu, &m, w0, fail_at, &o);
        const bool fired = fault_fired();
        const long live = fault_live_blocks();
        if (!fired)
            break;
        events++;
        const bool same = memcmp(o.w, base.w, sizeof o.w) == 0 && o.loss == base.loss &&
            (o.accuracy == base.accuracy || (isnan(o.accuracy) && isnan(base.accuracy)));
        if (!o.calls_ok || !same || live != 0) {
            if (bad++ < 5)
                tap_diag("allocation %ld failed: %s%s, %s, %ld blocks live", fail_at, o.calls_ok ? "calls ok" : "bad call ",
                         o.calls_ok ? "" : o.bad_call, same ? "same weights and loss" : "different weights or loss", live);
        }
    }
    ok(bad == 0 && events > 10, "each of the run's %ld allocations failing: one error, the call then works, "
       "same weights and loss, nothing leaked", events);

    ggml_backend_buffer_free(m.buf);
    ggml_free(m.ctx);
    ggml_backend_free(cpu);
    return tap_done();
}
