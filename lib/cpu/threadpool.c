/*
 * threadpool.c - the CPU backend's persistent thread pool.
 *
 * A pool has n_threads - 1 worker threads; the thread that runs a job is
 * thread 0.  Jobs are announced by bumping a generation counter.  A worker
 * that finds no new job spins for a bounded number of checks (the pool's
 * poll level) and then sleeps on a condition variable, so an idle pool uses
 * no CPU.  The sleep protocol is the classic Dekker pairing: a worker first
 * counts itself as sleeping and then re-reads the generation under the
 * mutex; the dispatcher first bumps the generation and then reads the
 * sleeper count, taking the mutex to broadcast when it is non-zero.  With
 * sequentially consistent atomics one of the two always sees the other, so
 * no wake-up is lost.
 *
 * Barriers inside a job, and the caller waiting for the job's end, spin
 * for the same bounded budget (yielding now and then) and then block on a
 * futex that the last thread to arrive wakes, with the same Dekker pairing
 * (count yourself as asleep, then re-check the word; the releaser bumps the
 * word, then looks for sleepers).  So a pool with more threads than cores,
 * or on a busy machine, hands the CPU to the threads that have work.
 *
 * A job is announced in one atomic word holding its sequence number and
 * its thread count, so that a worker learns from a single read whether it
 * takes part.  Invariant: jobs of one pool never overlap (a run that
 * finds one under way is refused: the running flag), and the job's
 * function and argument are rewritten only after every worker taking part
 * has finished; workers not taking part read nothing but the announcement
 * word.
 *
 * Spinning is short and yields the CPU regularly, so that a pool with more
 * threads than cores does not starve the threads that have work.
 *
 * Binding: the CPUs of each thread are planned from the cached topology
 * when the pool is made and turned into kernel masks then; workers and the
 * job's caller are bound with pthread_setaffinity_np / sched_setaffinity
 * from those masks, never through hwloc, whose binding calls allocate and
 * do not survive an allocation failure (see numa.c).  A job thus makes no
 * allocation at all.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-impl.h"
#include "cpu-private.h"

/* Checks of the announcement per poll level (poll 0..100) before a worker sleeps. */
#define SPINS_PER_POLL_LEVEL 64
/* Spinning threads yield the CPU after this many checks. */
#define SPINS_BEFORE_YIELD 32
/* The announcement word: sequence number above, thread count below. */
#define JOB_THREADS_BITS 12
#define JOB_THREADS_MASK ((1u << JOB_THREADS_BITS) - 1)

/*
 * Blocking on a 32-bit word until it no longer holds expected (spurious
 * returns allowed: callers loop), and waking every waiter.  Linux futexes;
 * elsewhere a yield, which keeps the semantics at the cost of CPU time.
 */
#if defined(__linux__)
#    include <linux/futex.h>
#    include <sys/syscall.h>
#    include <unistd.h>
static void futex_wait(atomic_uint *word, unsigned expected)
{
    syscall(SYS_futex, (unsigned *) word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake_all(atomic_uint *word)
{
    syscall(SYS_futex, (unsigned *) word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
#else
static void futex_wait(atomic_uint *word, unsigned expected)
{
    (void) word;
    (void) expected;
    sched_yield();
}

static void futex_wake_all(atomic_uint *word)
{
    (void) word;
}
#endif

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

struct worker {
    struct ggml_threadpool *pool;
    pthread_t thread;
    int ith;
    struct ggml__thread_place place; /* its CPUs (NULL: unbound) and node */
    cpu_set_t *mask;                 /* place.cpuset for the kernel; NULL: unbound */
};

struct ggml_threadpool {
    int n_threads;                   /* size of the pool, caller included */
    uint32_t poll;                   /* 0..100 */
    struct worker *workers;          /* workers[1..n_threads) run threads */

    pthread_mutex_t lock;
    pthread_cond_t wake;             /* new job, resume or stop */
    atomic_int n_sleeping;           /* workers blocked on wake */

    atomic_uint job_announce;        /* sequence << JOB_THREADS_BITS | thread count */
    atomic_bool stop;
    atomic_bool paused;

    /* the current job (see the invariant above) */
    ggml__job_fn job_fn;
    void *job_arg;
    int job_threads;                 /* the caller's copy, for barriers */
    atomic_int job_pending;          /* workers of the job that have not finished it */
    enum ggml_sched_priority prio;

    atomic_int barrier_count;
    atomic_uint barrier_generation;  /* futex word: bumped when a barrier opens */
    atomic_int barrier_sleepers;     /* threads blocked in futex_wait on it */
    atomic_uint job_done;            /* futex word: bumped when the last worker finishes */
    atomic_int caller_sleeping;      /* the job's caller blocked on job_done */

    atomic_bool running;             /* a job is under way (see ggml__threadpool_run) */

    /* thread 0 is whoever runs a job: bound to its place for the job only */
    size_t mask_size;                /* bytes of each kernel mask */
    cpu_set_t *caller_saved;         /* the caller's own binding, restored after the job */
    bool caller_bind_failed;         /* noted once; later jobs leave the caller alone */
};

/* ----------------------------------------------------------------- params */

void ggml_threadpool_params_init(struct ggml_threadpool_params *p, int n_threads)
{
    if (p == NULL) {
        ggml__error("params is NULL");
        return;
    }
    memset(p, 0, sizeof *p);
    p->n_threads = n_threads;
    p->prio = GGML_SCHED_PRIO_NORMAL;
    p->poll = 50;
    p->strict_cpu = false;
    p->paused = false;
}

struct ggml_threadpool_params ggml_threadpool_params_default(int n_threads)
{
    struct ggml_threadpool_params p;
    ggml_threadpool_params_init(&p, n_threads);
    return p;
}

bool ggml_threadpool_params_match(const struct ggml_threadpool_params *p0,
                                  const struct ggml_threadpool_params *p1)
{
    if (p0 == NULL || p1 == NULL) {
        ggml__error("%s is NULL", p0 == NULL ? "p0" : "p1");
        return false;
    }
    return p0->n_threads == p1->n_threads && p0->prio == p1->prio && p0->poll == p1->poll &&
           p0->strict_cpu == p1->strict_cpu &&
           memcmp(p0->cpumask, p1->cpumask, sizeof p0->cpumask) == 0;
}

/* --------------------------------------------------------------- workers */

/*
 * Waits for an announcement other than *seen; stores it and returns true,
 * or returns false when the pool stops.
 */
static bool wait_for_job(struct ggml_threadpool *pool, unsigned *seen)
{
    const unsigned spins = pool->poll * SPINS_PER_POLL_LEVEL;
    for (unsigned i = 0; i < spins; i++) {
        if (atomic_load(&pool->stop))
            return false;
        if (!atomic_load(&pool->paused) && atomic_load(&pool->job_announce) != *seen)
            goto got_job;
        if (i % SPINS_BEFORE_YIELD == SPINS_BEFORE_YIELD - 1)
            sched_yield();
        else
            cpu_relax();
    }
    pthread_mutex_lock(&pool->lock);
    atomic_fetch_add(&pool->n_sleeping, 1);
    while (!atomic_load(&pool->stop) &&
           (atomic_load(&pool->paused) || atomic_load(&pool->job_announce) == *seen))
        pthread_cond_wait(&pool->wake, &pool->lock);
    atomic_fetch_sub(&pool->n_sleeping, 1);
    pthread_mutex_unlock(&pool->lock);
    if (atomic_load(&pool->stop))
        return false;
got_job:
    *seen = atomic_load(&pool->job_announce);
    return true;
}

/* One note per pool when threads cannot be bound (containers, a topology
 * that is not this machine's): they run unbound, nothing fails. */
static void note_unbound(struct ggml_threadpool *pool, const char *who)
{
    if (!pool->caller_bind_failed)
        ggml__log_at(GGML_LOG_LEVEL_WARN, "ggml_threadpool_new",
                     "cannot bind %s to its planned CPUs (%s); it runs unbound (noted once per pool)", who,
                     strerror(errno));
    pool->caller_bind_failed = true;
}

/*
 * Applies the pool's CPU binding and scheduling priority to a worker, from
 * the thread that creates the pool (so that any note about it is logged
 * before ggml_threadpool_new returns).  A refusal (containers, no
 * privilege) is a logged note, not a failure.
 */
static void place_worker(struct ggml_threadpool *pool, struct worker *worker)
{
    if (worker->mask != NULL) {
        int err = pthread_setaffinity_np(worker->thread, pool->mask_size, worker->mask);
        if (err != 0) {
            errno = err;
            note_unbound(pool, "a worker");
        }
    }

    struct sched_param param = { 0 };
    int policy;
    switch (pool->prio) {
    case GGML_SCHED_PRIO_LOW:      policy = SCHED_BATCH; break;
    case GGML_SCHED_PRIO_MEDIUM:   policy = SCHED_FIFO; param.sched_priority = 40; break;
    case GGML_SCHED_PRIO_HIGH:     policy = SCHED_FIFO; param.sched_priority = 80; break;
    case GGML_SCHED_PRIO_REALTIME: policy = SCHED_FIFO; param.sched_priority = 90; break;
    default: return;
    }
    if (pthread_setschedparam(worker->thread, policy, &param) != 0)
        ggml__log_at(GGML_LOG_LEVEL_WARN, "ggml_threadpool_new",
                     "priority %d not permitted here; worker %d keeps the normal priority",
                     (int) pool->prio, worker->ith);
}

/* Binds the caller to thread 0's place for a job; true when it must be
 * restored by unbind_caller. */
static bool bind_caller(struct ggml_threadpool *pool)
{
    if (pool->workers[0].mask == NULL || pool->caller_saved == NULL || pool->caller_bind_failed)
        return false;
    if (sched_getaffinity(0, pool->mask_size, pool->caller_saved) != 0 ||
        sched_setaffinity(0, pool->mask_size, pool->workers[0].mask) != 0) {
        note_unbound(pool, "the calling thread");
        return false;
    }
    return true;
}

static void unbind_caller(struct ggml_threadpool *pool)
{
    sched_setaffinity(0, pool->mask_size, pool->caller_saved);
}

int ggml__threadpool_thread_node(const struct ggml_threadpool *pool, int ith)
{
    return ith >= 0 && ith < pool->n_threads ? pool->workers[ith].place.node : 0;
}

static void *worker_main(void *arg)
{
    struct worker *self = arg;
    struct ggml_threadpool *pool = self->pool;
    unsigned seen = 0;
    while (wait_for_job(pool, &seen)) {
        const int n_threads = (int) (seen & JOB_THREADS_MASK);
        if (self->ith < n_threads) {
            pool->job_fn(pool->job_arg, self->ith, n_threads);
            if (atomic_fetch_sub(&pool->job_pending, 1) == 1) {
                /* the last worker: release a caller that went to sleep */
                atomic_fetch_add(&pool->job_done, 1);
                if (atomic_load(&pool->caller_sleeping))
                    futex_wake_all(&pool->job_done);
            }
        }
    }
    return NULL;
}

/*
 * Spins (yielding now and then) until *word differs from seen, for at most
 * the pool's poll budget; true when it changed, false when the caller
 * should block instead.
 */
static bool spin_until_changed(atomic_uint *word, unsigned seen, const struct ggml_threadpool *pool)
{
    const unsigned spins = (pool->poll + 1) * SPINS_PER_POLL_LEVEL;
    for (unsigned i = 0; i < spins; i++) {
        if (atomic_load(word) != seen)
            return true;
        if (i % SPINS_BEFORE_YIELD == SPINS_BEFORE_YIELD - 1)
            sched_yield();
        else
            cpu_relax();
    }
    return atomic_load(word) != seen;
}

/* Wakes sleeping workers after the state they wait on has changed. */
static void wake_workers(struct ggml_threadpool *pool)
{
    if (atomic_load(&pool->n_sleeping) > 0) {
        pthread_mutex_lock(&pool->lock);
        pthread_cond_broadcast(&pool->wake);
        pthread_mutex_unlock(&pool->lock);
    }
}

/* ------------------------------------------------------------- lifecycle */

static void threadpool_destroy(struct ggml_threadpool *pool, int n_started)
{
    atomic_store(&pool->stop, true);
    pthread_mutex_lock(&pool->lock);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (int t = 1; t < n_started; t++)
        pthread_join(pool->workers[t].thread, NULL);
    for (int t = 0; t < pool->n_threads; t++) {
        ggml__numa_places_free(&pool->workers[t].place, 1);
        free(pool->workers[t].mask);
    }
    free(pool->caller_saved);
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->lock);
    free(pool->workers);
    free(pool);
}

/* Plans each thread's place and makes the kernel masks that bind it (none
 * when binding does not apply); false when out of memory. */
static bool plan_places(struct ggml_threadpool *pool, const struct ggml_threadpool_params *params)
{
    struct worker *workers = pool->workers;
    struct ggml__thread_place *places = calloc((size_t) pool->n_threads, sizeof *places);
    if (places == NULL ||
        !ggml__numa_plan_threads(ggml__numa_layout(), pool->n_threads, params->cpumask, params->strict_cpu, places)) {
        free(places);
        return false;
    }
    const bool binds = ggml__cpu_binding_applies();
    bool ok = true;
    for (int t = 0; t < pool->n_threads; t++) {
        workers[t].pool = pool;
        workers[t].ith = t;
        workers[t].place = places[t];
        if (binds && places[t].cpuset != NULL && ok)
            ok = (workers[t].mask = ggml__cpu_mask_new(places[t].cpuset, &pool->mask_size)) != NULL;
    }
    free(places);
    if (ok && workers[0].mask != NULL)
        ok = (pool->caller_saved = ggml__cpu_mask_new(NULL, &pool->mask_size)) != NULL;
    return ok;
}

struct ggml_threadpool *ggml_threadpool_new(struct ggml_threadpool_params *params)
{
    if (params == NULL) {
        ggml__error("params is NULL");
        return NULL;
    }
    if (params->n_threads < 1 || params->n_threads > GGML_MAX_N_THREADS) {
        ggml__error("n_threads must be 1..%d, got %d", GGML_MAX_N_THREADS, params->n_threads);
        return NULL;
    }
    struct ggml_threadpool *pool = calloc(1, sizeof *pool);
    struct worker *workers = calloc((size_t) params->n_threads, sizeof *workers);
    if (pool == NULL || workers == NULL) {
        ggml__error("out of memory for a pool of %d threads", params->n_threads);
        free(pool);
        free(workers);
        return NULL;
    }
    pool->n_threads = params->n_threads;
    pool->poll = params->poll > 100 ? 100 : params->poll;
    pool->workers = workers;
    pool->prio = params->prio;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->wake, NULL);
    atomic_init(&pool->n_sleeping, 0);
    atomic_init(&pool->job_announce, 0);
    atomic_init(&pool->stop, false);
    atomic_init(&pool->paused, params->paused);
    atomic_init(&pool->job_pending, 0);
    atomic_init(&pool->barrier_count, 0);
    atomic_init(&pool->barrier_generation, 0);
    atomic_init(&pool->barrier_sleepers, 0);
    atomic_init(&pool->job_done, 0);
    atomic_init(&pool->caller_sleeping, 0);
    atomic_init(&pool->running, false);
    if (!plan_places(pool, params)) {
        ggml__error("out of memory for a pool of %d threads", params->n_threads);
        threadpool_destroy(pool, 1);
        return NULL;
    }

    for (int t = 1; t < pool->n_threads; t++) {
        if (pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]) != 0) {
            ggml__error("cannot start thread %d of %d", t, pool->n_threads);
            threadpool_destroy(pool, t);
            return NULL;
        }
        place_worker(pool, &workers[t]);
    }
    return pool;
}

void ggml_threadpool_free(struct ggml_threadpool *pool)
{
    if (pool == NULL)
        return;
    threadpool_destroy(pool, pool->n_threads);
}

int ggml_threadpool_get_n_threads(struct ggml_threadpool *pool)
{
    if (pool == NULL) {
        ggml__error("threadpool is NULL");
        return 0;
    }
    return pool->n_threads;
}

void ggml_threadpool_pause(struct ggml_threadpool *pool)
{
    if (pool == NULL) {
        ggml__error("threadpool is NULL");
        return;
    }
    atomic_store(&pool->paused, true);
}

void ggml_threadpool_resume(struct ggml_threadpool *pool)
{
    if (pool == NULL) {
        ggml__error("threadpool is NULL");
        return;
    }
    atomic_store(&pool->paused, false);
    wake_workers(pool);
}

/* ------------------------------------------------------------------ jobs */

bool ggml__threadpool_run(struct ggml_threadpool *pool, int n_threads, ggml__job_fn fn, void *arg)
{
    bool idle = false;
    if (!atomic_compare_exchange_strong(&pool->running, &idle, true))
        return false;
    if (n_threads > pool->n_threads)
        n_threads = pool->n_threads;
    if (n_threads < 1)
        n_threads = 1;

    pool->job_fn = fn;
    pool->job_arg = arg;
    pool->job_threads = n_threads;
    atomic_store(&pool->barrier_count, 0);
    atomic_store(&pool->job_pending, n_threads - 1);
    /* read before the announcement: the last worker bumps it when done */
    const unsigned done = atomic_load(&pool->job_done);
    if (n_threads > 1) {
        atomic_store(&pool->paused, false);
        const unsigned sequence = (atomic_load(&pool->job_announce) >> JOB_THREADS_BITS) + 1;
        atomic_store(&pool->job_announce, sequence << JOB_THREADS_BITS | (unsigned) n_threads);
        wake_workers(pool);
    }

    const bool rebind = bind_caller(pool);
    fn(arg, 0, n_threads);

    if (n_threads > 1 && !spin_until_changed(&pool->job_done, done, pool)) {
        atomic_store(&pool->caller_sleeping, 1);
        while (atomic_load(&pool->job_done) == done)
            futex_wait(&pool->job_done, done);
        atomic_store(&pool->caller_sleeping, 0);
    }
    if (rebind)
        unbind_caller(pool);
    atomic_store(&pool->running, false);
    return true;
}

void ggml__threadpool_barrier(struct ggml_threadpool *pool)
{
    if (pool == NULL)
        return; /* a kernel computed by one thread */
    const int n = pool->job_threads;
    if (n <= 1)
        return;
    const unsigned generation = atomic_load(&pool->barrier_generation);
    if (atomic_fetch_add(&pool->barrier_count, 1) == n - 1) {
        /* last to arrive: reset for the next barrier, then release the others */
        atomic_store(&pool->barrier_count, 0);
        atomic_fetch_add(&pool->barrier_generation, 1);
        if (atomic_load(&pool->barrier_sleepers) > 0)
            futex_wake_all(&pool->barrier_generation);
        return;
    }
    if (spin_until_changed(&pool->barrier_generation, generation, pool))
        return;
    /* Dekker pairing with the last arriver: count ourselves, then re-check */
    atomic_fetch_add(&pool->barrier_sleepers, 1);
    while (atomic_load(&pool->barrier_generation) == generation)
        futex_wait(&pool->barrier_generation, generation);
    atomic_fetch_sub(&pool->barrier_sleepers, 1);
}
