/*
 * test-threads.c - two threads on one CPU backend, one thread pool or one
 * scheduler, which the library documents as unsupported: every call either
 * computes the right result or fails at once with GGML_STATUS_FAILED and
 * exactly one logged error; nothing deadlocks (alarm) or crashes.
 *
 * Each thread computes its own graph, whose tensors all live in a buffer
 * of its own, so that the only thing the threads share is the object under
 * test.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "tap.h"
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

enum { ROWS = 48, COLS = 40, ROUNDS = 150 };

static atomic_int errors_logged;

static void count_errors(enum ggml_log_level level, const char *text, void *data)
{
    (void) text;
    (void) data;
    if (level == GGML_LOG_LEVEL_ERROR)
        atomic_fetch_add(&errors_logged, 1);
}

/* One thread's graph: y = a x (a ROWS x COLS, x one column) in its own buffer. */
struct job {
    struct ggml_context *ctx;
    ggml_backend_buffer_t buffer;
    struct ggml_cgraph *graph;
    struct ggml_tensor *y;
    float want[ROWS];
};

static bool job_init(struct job *job, ggml_backend_t backend, float seed)
{
    struct ggml_init_params params = { .mem_size = 8 * ggml_tensor_overhead() + ggml_graph_overhead(),
                                       .mem_buffer = NULL, .no_alloc = true };
    job->ctx = ggml_init(params);
    if (job->ctx == NULL)
        return false;
    struct ggml_tensor *a = ggml_new_tensor_2d(job->ctx, GGML_TYPE_F32, COLS, ROWS);
    struct ggml_tensor *x = ggml_new_tensor_1d(job->ctx, GGML_TYPE_F32, COLS);
    job->y = ggml_mul_mat(job->ctx, a, x);
    job->graph = ggml_new_graph(job->ctx);
    ggml_build_forward_expand(job->graph, job->y);
    job->buffer = ggml_backend_alloc_ctx_tensors(job->ctx, backend);
    if (job->buffer == NULL)
        return false;
    static float av[ROWS * COLS];
    float xv[COLS];
    for (int c = 0; c < COLS; c++)
        xv[c] = (float) (c % 5) - 2.0f;
    for (int r = 0; r < ROWS; r++) {
        double sum = 0;
        for (int c = 0; c < COLS; c++) {
            av[r * COLS + c] = (float) ((r + c) % 7) + seed;
            sum += (double) av[r * COLS + c] * xv[c];
        }
        job->want[r] = (float) sum; /* small integers: exact in F32 */
    }
    ggml_backend_tensor_set(a, av, 0, sizeof av);
    ggml_backend_tensor_set(x, xv, 0, sizeof xv);
    return true;
}

static void job_free(struct job *job)
{
    ggml_backend_buffer_free(job->buffer);
    ggml_free(job->ctx);
}

static bool job_result_right(const struct job *job)
{
    float got[ROWS];
    ggml_backend_tensor_get(job->y, got, 0, sizeof got);
    for (int r = 0; r < ROWS; r++)
        if (got[r] != job->want[r])
            return false;
    return true;
}

/* What one thread does: ROUNDS computations through compute(). */
struct runner {
    pthread_t thread;
    struct job job;
    ggml_backend_t backend;     /* computes with ggml_backend_graph_compute */
    ggml_backend_sched_t sched; /* or with ggml_backend_sched_graph_compute */
    int computed, refused, wrong;
};

static void *run(void *arg)
{
    struct runner *r = arg;
    for (int i = 0; i < ROUNDS; i++) {
        enum ggml_status status = r->sched != NULL ? ggml_backend_sched_graph_compute(r->sched, r->job.graph)
                                                   : ggml_backend_graph_compute(r->backend, r->job.graph);
        if (status == GGML_STATUS_FAILED) {
            r->refused++;
            usleep(200); /* let the other thread finish, so that both compute */
        }
        else if (status == GGML_STATUS_SUCCESS && job_result_right(&r->job))
            r->computed++;
        else
            r->wrong++;
    }
    return NULL;
}

/* Runs two runners at once and checks their outcome as what. */
static void race(struct runner r[2], const char *what)
{
    atomic_store(&errors_logged, 0);
    ggml_log_set(count_errors, NULL);
    bool started = pthread_create(&r[0].thread, NULL, run, &r[0]) == 0;
    started = started && pthread_create(&r[1].thread, NULL, run, &r[1]) == 0;
    if (started) {
        pthread_join(r[0].thread, NULL);
        pthread_join(r[1].thread, NULL);
    }
    tap_capture_log();
    if (!ok(started, "%s: two threads started", what))
        return;
    const int refused = r[0].refused + r[1].refused;
    tap_diag("%s: %d computed, %d refused", what, r[0].computed + r[1].computed, refused);
    is_int(r[0].wrong + r[1].wrong, 0, "%s: no call returns anything but a right result or FAILED", what);
    is_int(r[0].computed + r[1].computed + refused, 2 * ROUNDS, "%s: every call accounted for", what);
    is_int(atomic_load(&errors_logged), refused, "%s: one error logged per refused call", what);
}

static void test_one_backend(void)
{
    ggml_backend_t backend = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(backend, 2);
    struct runner r[2] = { { .backend = backend }, { .backend = backend } };
    bool ready = job_init(&r[0].job, backend, 0.0f) && job_init(&r[1].job, backend, 1.0f);
    ok(ready, "one CPU backend: two jobs made");
    if (ready)
        race(r, "one CPU backend");
    job_free(&r[0].job);
    job_free(&r[1].job);
    /* usable afterwards */
    struct job after;
    ok(job_init(&after, backend, 2.0f) && ggml_backend_graph_compute(backend, after.graph) == GGML_STATUS_SUCCESS &&
           job_result_right(&after),
       "one CPU backend: computes normally afterwards");
    job_free(&after);
    ggml_backend_free(backend);
}

static void test_shared_pool(void)
{
    struct ggml_threadpool_params params = ggml_threadpool_params_default(2);
    struct ggml_threadpool *pool = ggml_threadpool_new(&params);
    ggml_backend_t backends[2] = { ggml_backend_cpu_init(), ggml_backend_cpu_init() };
    ggml_backend_cpu_set_threadpool(backends[0], pool);
    ggml_backend_cpu_set_threadpool(backends[1], pool);
    struct runner r[2] = { { .backend = backends[0] }, { .backend = backends[1] } };
    bool ready = pool != NULL && job_init(&r[0].job, backends[0], 0.0f) && job_init(&r[1].job, backends[1], 1.0f);
    ok(ready, "one pool, two backends: two jobs made");
    if (ready)
        race(r, "one pool shared by two CPU backends");
    job_free(&r[0].job);
    job_free(&r[1].job);
    ggml_backend_free(backends[0]);
    ggml_backend_free(backends[1]);
    ggml_threadpool_free(pool);
}

static void test_one_sched(void)
{
    ggml_backend_t backend = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(backend, 2);
    ggml_backend_sched_t sched = ggml_backend_sched_new(&backend, NULL, 1, 64, false, false);
    struct runner r[2] = { { .sched = sched }, { .sched = sched } };
    bool ready = sched != NULL && job_init(&r[0].job, backend, 0.0f) && job_init(&r[1].job, backend, 1.0f);
    ok(ready, "one scheduler: two jobs made");
    if (ready)
        race(r, "one scheduler");
    job_free(&r[0].job);
    job_free(&r[1].job);
    struct job after;
    ok(job_init(&after, backend, 2.0f) && ggml_backend_sched_graph_compute(sched, after.graph) == GGML_STATUS_SUCCESS &&
           job_result_right(&after),
       "one scheduler: computes normally afterwards");
    job_free(&after);
    ggml_backend_sched_free(sched);
    ggml_backend_free(backend);
}

int main(void)
{
    alarm(60); /* a deadlock fails the test instead of hanging make check */
    tap_capture_log();
    test_one_backend();
    test_shared_pool();
    test_one_sched();
    is_int(tap_log_errors(), 0, "no other error logged");
    return tap_done();
}
