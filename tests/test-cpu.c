/*
 * test-cpu.c - the CPU engine, the thread pool and the CPU backend object.
 *
 * Covers: thread pool parameters, pool creation and its limits, cpumask,
 * strict_cpu and prio as the kernel reports them (/proc/self/task), pause
 * and resume, the CPU an idle or paused pool uses, a pool with twice as
 * many threads as cores; ggml_graph_plan, ggml_graph_compute and its error
 * paths, ggml_graph_compute_with_ctx, identical results for 1..4 threads
 * and for a caller's pool; the CPU backend, its device and registry,
 * supports_op for sources in non-host memory, the proc addresses and the
 * feature list; run-time CPU feature detection against /proc/cpuinfo; and
 * the abort callback, including a stress run that looks for a hang.
 *
 * Only ops whose kernels are in every build of this branch are used:
 * layout ops, DUP/CPY/CONT and ADD/SUB/MUL/DIV.
 *
 * Timing checks (idle CPU, pause, oversubscription) and the comparison
 * with /proc/cpuinfo are skipped under valgrind, which serialises threads,
 * makes every spin expensive and answers cpuid for its own virtual CPU.
 * A watchdog (SIGALRM) turns a hang into "Bail out!" instead of a stuck
 * test run.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "op-test.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"

/* ---------------------------------------------------------------- helpers */

#define logged_nothing(...) is_int(tap_log_errors(), 0, __VA_ARGS__)

static bool under_valgrind(void)
{
    const char *preload = getenv("LD_PRELOAD");
    return preload != NULL && strstr(preload, "vgpreload") != NULL;
}

/* Built with a sanitizer, or run under valgrind: everything is slower. */
static bool slow_build(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return true;
#else
    return under_valgrind();
#endif
}

/* User plus system CPU time of the whole process, in seconds. */
static double process_cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double) ru.ru_utime.tv_sec + (double) ru.ru_utime.tv_usec * 1e-6 +
           (double) ru.ru_stime.tv_sec + (double) ru.ru_stime.tv_usec * 1e-6;
}

static void sleep_seconds(double s)
{
    struct timespec ts = { (time_t) s, (long) ((s - (double) (time_t) s) * 1e9) };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* CPU seconds the process uses while its main thread sleeps for s seconds. */
static double cpu_used_while_sleeping(double s)
{
    const double before = process_cpu_seconds();
    sleep_seconds(s);
    return process_cpu_seconds() - before;
}

static struct ggml_context *data_ctx(size_t mb)
{
    struct ggml_init_params params = { mb << 20, NULL, false };
    return ggml_init(params);
}

static struct ggml_context *meta_ctx(void)
{
    struct ggml_init_params params = { 256 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    return ggml_init(params);
}

/* Plans and computes with malloc'ed scratch on the given pool (may be NULL). */
static enum ggml_status compute_on(struct ggml_cgraph *graph, int n_threads, struct ggml_threadpool *pool)
{
    struct ggml_cplan plan = ggml_graph_plan(graph, n_threads, pool);
    void *work = plan.work_size ? malloc(plan.work_size) : NULL;
    plan.work_data = work;
    enum ggml_status status = ggml_graph_compute(graph, &plan);
    free(work);
    return status;
}

static struct ggml_cgraph *graph_of(struct ggml_context *ctx, struct ggml_tensor *out)
{
    struct ggml_cgraph *graph = ggml_new_graph_custom(ctx, 2048, false);
    ggml_build_forward_expand(graph, out);
    return graph;
}

/* --------------------------------------------------------------- watchdog */

static const char *watchdog_what = "the test";

static void watchdog_fired(int sig)
{
    (void) sig;
    static const char head[] = "not ok - watchdog: a computation hung: ";
    static const char tail[] = "\nBail out! the CPU engine hung (see the line above)\n";
    ssize_t r = write(STDOUT_FILENO, head, sizeof head - 1);
    r = write(STDOUT_FILENO, watchdog_what, strlen(watchdog_what));
    r = write(STDOUT_FILENO, tail, sizeof tail - 1);
    (void) r;
    _exit(1);
}

/* Arms the watchdog for seconds (longer under valgrind) naming what runs. */
static void watchdog(const char *what, unsigned seconds)
{
    watchdog_what = what;
    alarm(slow_build() ? seconds * 20 : seconds);
}

/* ------------------------------------------------------ threads in /proc */

#define MAX_TASKS 256

/* Thread ids of this process; returns their number. */
static int list_tasks(long *tids, int max)
{
    DIR *dir = opendir("/proc/self/task");
    if (dir == NULL)
        return 0;
    int n = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL && n < max)
        if (entry->d_name[0] >= '0' && entry->d_name[0] <= '9')
            tids[n++] = strtol(entry->d_name, NULL, 10);
    closedir(dir);
    return n;
}

/* Threads in after that were not in before; returns their number. */
static int new_tasks(const long *before, int n_before, const long *after, int n_after, long *out)
{
    int n = 0;
    for (int i = 0; i < n_after; i++) {
        bool old = false;
        for (int j = 0; j < n_before; j++)
            old = old || after[i] == before[j];
        if (!old)
            out[n++] = after[i];
    }
    return n;
}

/* The Cpus_allowed_list of a thread, e.g. "1" or "0-1"; "" on failure. */
static void task_cpus(long tid, char *out, size_t size)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
            const char *p = line + 18;
            while (*p == ' ' || *p == '\t')
                p++;
            size_t len = strcspn(p, "\n");
            len = len < size - 1 ? len : size - 1;
            memcpy(out, p, len);
            out[len] = '\0';
        }
    fclose(f);
}

/* Scheduling policy and nice value of a thread (fields 41 and 19 of stat). */
static bool task_sched(long tid, int *policy, int *nice_value)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/self/task/%ld/stat", tid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    if (p == NULL)
        return false;
    /* after ") " comes field 3 (state) */
    int field = 3;
    *policy = *nice_value = -1000;
    for (char *tok = strtok(p + 2, " "); tok != NULL; tok = strtok(NULL, " "), field++) {
        if (field == 19)
            *nice_value = atoi(tok);
        if (field == 41)
            *policy = atoi(tok);
    }
    return *policy != -1000 && *nice_value != -1000;
}

/* ------------------------------------------------------------- test graphs */

/*
 * A chain of n ADD nodes: node k = node k-1 + x, node 0 = x + x; x holds
 * 0, 1, 2, ... so node k holds (k + 2) * x exactly.
 */
struct chain {
    struct ggml_tensor *x;
    struct ggml_tensor *nodes[512];
    int n;
    struct ggml_cgraph *graph;
};

static void build_chain(struct ggml_context *ctx, struct chain *c, int n, int64_t ne0, int64_t ne1)
{
    c->x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ne0, ne1);
    for (int64_t i = 0; i < ne0 * ne1; i++)
        ((float *) c->x->data)[i] = (float) (i % 97);
    struct ggml_tensor *cur = c->x;
    for (int k = 0; k < n; k++)
        cur = c->nodes[k] = ggml_add(ctx, cur, c->x);
    c->n = n;
    c->graph = graph_of(ctx, cur);
}

/* Fills every node with a value no computation produces. */
static void poison_chain(struct chain *c)
{
    for (int k = 0; k < c->n; k++)
        for (int64_t i = 0; i < ggml_nelements(c->nodes[k]); i++)
            ((float *) c->nodes[k]->data)[i] = -12345.0f;
}

/* Node k holds (k + 2) * x. */
static bool chain_node_ok(const struct chain *c, int k)
{
    for (int64_t i = 0; i < ggml_nelements(c->x); i++)
        if (((float *) c->nodes[k]->data)[i] != (float) (k + 2) * ((float *) c->x->data)[i])
            return false;
    return true;
}

static bool chain_node_untouched(const struct chain *c, int k)
{
    for (int64_t i = 0; i < ggml_nelements(c->x); i++)
        if (((float *) c->nodes[k]->data)[i] != -12345.0f)
            return false;
    return true;
}

/*
 * A graph that exercises every kernel available everywhere: broadcast
 * ADD, MUL by a transposed (CONT) operand, CPY to F16 and BF16, SUB and
 * DIV mixing types, and a Q8_0 round trip (CPY into a quantized type and
 * back).  Outputs: out_f (F32 [33,31,3]) and out_q (F32 [64,9,2]).
 */
struct mixed {
    struct ggml_tensor *x, *y, *z, *w;
    struct ggml_tensor *prod;   /* (x + y) * z^T, checked against a double reference */
    struct ggml_tensor *out_f, *out_q;
    struct ggml_cgraph *graph;
};

static void build_mixed(struct ggml_context *ctx, struct mixed *m, uint64_t seed)
{
    m->x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 33, 31, 3);
    m->y = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 33, 1, 3);
    m->z = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 31, 33, 3);
    m->w = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 64, 9, 2);
    optest_fill(m->x, &seed, -2.0, 2.0);
    optest_fill(m->y, &seed, -1.0, 1.0);
    optest_fill(m->z, &seed, 1.0, 2.0);
    optest_fill(m->w, &seed, -3.0, 3.0);

    struct ggml_tensor *zt = ggml_cont(ctx, ggml_transpose(ctx, m->z));
    m->prod = ggml_mul(ctx, ggml_add(ctx, m->x, m->y), zt);
    struct ggml_tensor *h = ggml_cpy(ctx, m->prod, ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 33, 31, 3));
    struct ggml_tensor *b = ggml_cpy(ctx, h, ggml_new_tensor_3d(ctx, GGML_TYPE_BF16, 33, 31, 3));
    m->out_f = ggml_div(ctx, ggml_sub(ctx, m->prod, b), zt);

    struct ggml_tensor *q = ggml_cpy(ctx, m->w, ggml_new_tensor_3d(ctx, GGML_TYPE_Q8_0, 64, 9, 2));
    struct ggml_tensor *back = ggml_cpy(ctx, q, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 64, 9, 2));
    m->out_q = ggml_sub(ctx, m->w, ggml_dup(ctx, back));

    m->graph = ggml_new_graph_custom(ctx, 256, false);
    ggml_build_forward_expand(m->graph, m->out_f);
    ggml_build_forward_expand(m->graph, m->out_q);
}

/* Copies of the outputs' bytes. */
struct snapshot {
    void *f, *q;
};

static struct snapshot take_snapshot(const struct mixed *m)
{
    struct snapshot s = { malloc(ggml_nbytes(m->out_f)), malloc(ggml_nbytes(m->out_q)) };
    memcpy(s.f, m->out_f->data, ggml_nbytes(m->out_f));
    memcpy(s.q, m->out_q->data, ggml_nbytes(m->out_q));
    return s;
}

static bool same_snapshot(const struct mixed *m, const struct snapshot *s)
{
    return memcmp(s->f, m->out_f->data, ggml_nbytes(m->out_f)) == 0 &&
           memcmp(s->q, m->out_q->data, ggml_nbytes(m->out_q)) == 0;
}

static void clear_outputs(const struct mixed *m)
{
    memset(m->out_f->data, 0xff, ggml_nbytes(m->out_f));
    memset(m->out_q->data, 0xff, ggml_nbytes(m->out_q));
}

static void free_snapshot(struct snapshot *s)
{
    free(s->f);
    free(s->q);
}

/* NMSE of m->prod against (x + y) * z^T computed in double. */
static double mixed_prod_nmse(const struct mixed *m)
{
    const struct ggml_tensor *p = m->prod;
    double *ref = malloc((size_t) ggml_nelements(p) * sizeof *ref);
    int64_t k = 0;
    for (int64_t i2 = 0; i2 < p->ne[2]; i2++)
        for (int64_t i1 = 0; i1 < p->ne[1]; i1++)
            for (int64_t i0 = 0; i0 < p->ne[0]; i0++)
                ref[k++] = (optest_get(m->x, i0, i1, i2, 0) + optest_get(m->y, i0, 0, i2, 0)) *
                           optest_get(m->z, i1, i0, i2, 0);
    double nmse = optest_nmse(p, ref);
    free(ref);
    return nmse;
}

/* ------------------------------------------------------ pool parameters */

static bool cpumask_empty(const struct ggml_threadpool_params *p)
{
    for (int i = 0; i < GGML_MAX_N_THREADS; i++)
        if (p->cpumask[i])
            return false;
    return true;
}

static void test_params(void)
{
    struct ggml_threadpool_params d = ggml_threadpool_params_default(3);
    is_int(d.n_threads, 3, "params_default: n_threads");
    is_int(d.prio, GGML_SCHED_PRIO_NORMAL, "params_default: normal priority");
    is_int(d.poll, 50, "params_default: poll 50");
    ok(!d.strict_cpu, "params_default: strict_cpu off");
    ok(!d.paused, "params_default: not paused");
    ok(cpumask_empty(&d), "params_default: empty cpumask (no binding)");

    struct ggml_threadpool_params p;
    memset(&p, 0x5a, sizeof p);
    ggml_threadpool_params_init(&p, 7);
    is_int(p.n_threads, 7, "params_init: n_threads");
    is_int(p.prio, GGML_SCHED_PRIO_NORMAL, "params_init: normal priority");
    is_int(p.poll, 50, "params_init: poll 50");
    ok(!p.strict_cpu && !p.paused, "params_init: strict_cpu and paused off");
    ok(cpumask_empty(&p), "params_init: clears the whole cpumask");
    logged_nothing("params: no messages");

    ggml_threadpool_params_init(NULL, 2);
    logged_one_error("params_init(NULL): one message");

    struct ggml_threadpool_params a = ggml_threadpool_params_default(4);
    struct ggml_threadpool_params b = ggml_threadpool_params_default(4);
    ok(ggml_threadpool_params_match(&a, &b), "params_match: equal defaults match");
    ok(ggml_threadpool_params_match(&a, &a), "params_match: a set matches itself");
    b.paused = true;
    ok(ggml_threadpool_params_match(&a, &b), "params_match: paused is not part of the pool's identity");
    b = a;
    b.n_threads = 5;
    ok(!ggml_threadpool_params_match(&a, &b), "params_match: n_threads differs");
    b = a;
    b.prio = GGML_SCHED_PRIO_HIGH;
    ok(!ggml_threadpool_params_match(&a, &b), "params_match: prio differs");
    b = a;
    b.poll = 0;
    ok(!ggml_threadpool_params_match(&a, &b), "params_match: poll differs");
    b = a;
    b.strict_cpu = true;
    ok(!ggml_threadpool_params_match(&a, &b), "params_match: strict_cpu differs");
    b = a;
    b.cpumask[GGML_MAX_N_THREADS - 1] = true;
    ok(!ggml_threadpool_params_match(&a, &b), "params_match: last cpumask entry differs");
    logged_nothing("params_match: no messages");

    ok(!ggml_threadpool_params_match(NULL, &a), "params_match(NULL, p) is false");
    logged_one_error("params_match(NULL, p): one message");
    ok(!ggml_threadpool_params_match(&a, NULL), "params_match(p, NULL) is false");
    logged_one_error("params_match(p, NULL): one message");
}

/* ------------------------------------------------------ pool lifecycle */

static void test_pool_lifecycle(void)
{
    const int bad[] = { 0, -1, GGML_MAX_N_THREADS + 1 };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct ggml_threadpool_params p = ggml_threadpool_params_default(bad[i]);
        ok(ggml_threadpool_new(&p) == NULL, "threadpool_new: %d threads refused", bad[i]);
        logged_one_error("threadpool_new: one message for %d threads", bad[i]);
    }
    ok(ggml_threadpool_new(NULL) == NULL, "threadpool_new(NULL) is NULL");
    logged_one_error("threadpool_new(NULL): one message");

    for (int n = 1; n <= 4; n++) {
        struct ggml_threadpool_params p = ggml_threadpool_params_default(n);
        struct ggml_threadpool *pool = ggml_threadpool_new(&p);
        ok(pool != NULL, "threadpool_new: %d threads", n);
        is_int(ggml_threadpool_get_n_threads(pool), n, "get_n_threads of a %d-thread pool", n);
        ggml_threadpool_free(pool);
    }
    logged_nothing("threadpool new/free: no messages");

    is_int(ggml_threadpool_get_n_threads(NULL), 0, "get_n_threads(NULL) is 0");
    logged_one_error("get_n_threads(NULL): one message");
    ggml_threadpool_pause(NULL);
    logged_one_error("pause(NULL): one message");
    ggml_threadpool_resume(NULL);
    logged_one_error("resume(NULL): one message");
    ggml_threadpool_free(NULL);
    logged_nothing("free(NULL): no message");

    /* a pool freed while idle, paused, or right after creation */
    struct ggml_threadpool_params p = ggml_threadpool_params_default(4);
    ggml_threadpool_free(ggml_threadpool_new(&p));
    struct ggml_threadpool *pool = ggml_threadpool_new(&p);
    ggml_threadpool_pause(pool);
    ggml_threadpool_pause(pool);
    ggml_threadpool_free(pool);
    p.paused = true;
    ggml_threadpool_free(ggml_threadpool_new(&p));
    logged_nothing("free of new, paused and twice-paused pools: no messages");
    ok(true, "pools freed in every state without hanging");
}

/* -------------------------------------------- binding and priority */

/*
 * The workers of a pool are the threads that appear when it is made.  A
 * compute on every thread guarantees they have started (and bound).
 */
static int pool_workers(struct ggml_threadpool_params *p, struct ggml_threadpool **pool_out, long *workers)
{
    long before[MAX_TASKS], after[MAX_TASKS];
    int n_before = list_tasks(before, MAX_TASKS);
    struct ggml_threadpool *pool = ggml_threadpool_new(p);
    *pool_out = pool;
    if (pool == NULL)
        return 0;
    struct ggml_context *ctx = data_ctx(1);
    struct chain c;
    build_chain(ctx, &c, 4, 64, 4);
    compute_on(c.graph, p->n_threads, pool);
    ggml_free(ctx);
    int n_after = list_tasks(after, MAX_TASKS);
    return new_tasks(before, n_before, after, n_after, workers);
}

static void test_binding_and_priority(void)
{
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    const bool have_affinity = sched_getaffinity(0, sizeof allowed, &allowed) == 0;
    long workers[MAX_TASKS];
    char cpus[128];

    /* cpumask {1}, not strict: every worker may run on CPU 1 only */
    if (have_affinity && CPU_ISSET(1, &allowed)) {
        struct ggml_threadpool_params p = ggml_threadpool_params_default(4);
        p.cpumask[1] = true;
        struct ggml_threadpool *pool;
        int n = pool_workers(&p, &pool, workers);
        is_int(n, 3, "cpumask: a 4-thread pool has 3 worker threads");
        bool all = n > 0;
        for (int i = 0; i < n; i++) {
            task_cpus(workers[i], cpus, sizeof cpus);
            if (strcmp(cpus, "1") != 0) {
                all = false;
                tap_diag("worker %ld may run on CPUs '%s'", workers[i], cpus);
            }
        }
        ok(all, "cpumask {1}: every worker is bound to CPU 1");
        ggml_threadpool_free(pool);
    } else {
        tap_skip(2, "CPU 1 is not available to this process");
    }

    /* strict_cpu with cpumask {0, 1}: each worker on one CPU of the mask */
    if (have_affinity && CPU_ISSET(0, &allowed) && CPU_ISSET(1, &allowed)) {
        struct ggml_threadpool_params p = ggml_threadpool_params_default(4);
        p.cpumask[0] = p.cpumask[1] = true;
        p.strict_cpu = true;
        struct ggml_threadpool *pool;
        int n = pool_workers(&p, &pool, workers);
        bool single = n == 3;
        int on[2] = { 0, 0 };
        for (int i = 0; i < n; i++) {
            task_cpus(workers[i], cpus, sizeof cpus);
            if (strcmp(cpus, "0") == 0)
                on[0]++;
            else if (strcmp(cpus, "1") == 0)
                on[1]++;
            else {
                single = false;
                tap_diag("strict worker %ld may run on CPUs '%s'", workers[i], cpus);
            }
        }
        ok(single, "strict_cpu: every worker is bound to one CPU of the mask");
        ok(on[0] > 0 && on[1] > 0, "strict_cpu: the workers are spread over both CPUs (%d, %d)", on[0], on[1]);
        ggml_threadpool_free(pool);
    } else {
        tap_skip(2, "CPUs 0 and 1 are not both available to this process");
    }

    /* no cpumask: the workers keep the process's CPUs */
    {
        struct ggml_threadpool_params p = ggml_threadpool_params_default(3);
        struct ggml_threadpool *pool;
        int n = pool_workers(&p, &pool, workers);
        char mine[128];
        task_cpus(syscall(SYS_gettid), mine, sizeof mine);
        bool same = n == 2;
        for (int i = 0; i < n; i++) {
            task_cpus(workers[i], cpus, sizeof cpus);
            same = same && strcmp(cpus, mine) == 0;
        }
        ok(same, "empty cpumask: workers keep the process's CPUs (%s)", mine);
        ggml_threadpool_free(pool);
    }

    /* a cpumask naming only a CPU that does not exist: unbound, but working */
    {
        struct ggml_threadpool_params p = ggml_threadpool_params_default(3);
        p.cpumask[GGML_MAX_N_THREADS - 1] = true;
        struct ggml_threadpool *pool;
        int n = pool_workers(&p, &pool, workers);
        ok(pool != NULL && n == 2, "cpumask of a missing CPU: the pool is made and computes");
        logged_nothing("cpumask of a missing CPU: at most warnings");
        ggml_threadpool_free(pool);
    }

    /* prio LOW: workers run at a lower priority (SCHED_BATCH/IDLE or nice > 0) */
    {
        struct ggml_threadpool_params p = ggml_threadpool_params_default(3);
        p.prio = GGML_SCHED_PRIO_LOW;
        struct ggml_threadpool *pool;
        int n = pool_workers(&p, &pool, workers);
        bool lowered = n == 2;
        for (int i = 0; i < n; i++) {
            int policy, nice_value;
            if (!task_sched(workers[i], &policy, &nice_value)) {
                lowered = false;
                continue;
            }
            if (!(policy == SCHED_BATCH || policy == SCHED_IDLE || nice_value > 0)) {
                lowered = false;
                tap_diag("LOW worker %ld: policy %d, nice %d", workers[i], policy, nice_value);
            }
        }
        ok(lowered, "prio LOW: the workers are scheduled at a lower priority");
        ggml_threadpool_free(pool);
        tap_log_errors();
    }

    /* prio HIGH: may not be permitted here; the pool still works */
    {
        struct ggml_threadpool_params p = ggml_threadpool_params_default(3);
        p.prio = GGML_SCHED_PRIO_HIGH;
        struct ggml_threadpool *pool;
        int n = pool_workers(&p, &pool, workers);
        ok(pool != NULL && n == 2, "prio HIGH: the pool is made and computes");
        logged_nothing("prio HIGH: at most a warning when not permitted");
        ggml_threadpool_free(pool);
    }

    /* poll 0: the workers sleep at once and still get every job */
    {
        struct ggml_threadpool_params p = ggml_threadpool_params_default(4);
        p.poll = 0;
        struct ggml_threadpool *pool = ggml_threadpool_new(&p);
        struct ggml_context *ctx = data_ctx(4);
        struct chain c;
        build_chain(ctx, &c, 50, 128, 8);
        bool all = true;
        for (int rep = 0; rep < 20; rep++) {
            poison_chain(&c);
            all = all && compute_on(c.graph, 4, pool) == GGML_STATUS_SUCCESS && chain_node_ok(&c, c.n - 1);
        }
        ok(all, "poll 0: 20 computes of 50 nodes on 4 threads are right");
        ggml_free(ctx);
        ggml_threadpool_free(pool);
    }
    logged_nothing("binding and priority: no error messages");
}

/* ------------------------------------------------------ pause and resume */

static void test_pause_resume(void)
{
    struct ggml_context *ctx = data_ctx(8);
    struct chain c;
    build_chain(ctx, &c, 40, 256, 4);

    struct ggml_threadpool_params p = ggml_threadpool_params_default(4);
    p.poll = 100; /* the longest spin: the pause must still stop it */
    struct ggml_threadpool *pool = ggml_threadpool_new(&p);

    ggml_threadpool_pause(pool);
    poison_chain(&c);
    is_int(compute_on(c.graph, 4, pool), GGML_STATUS_SUCCESS, "paused pool: a compute succeeds (it resumes the pool)");
    ok(chain_node_ok(&c, 0) && chain_node_ok(&c, c.n - 1), "paused pool: results are right");

    ggml_threadpool_pause(pool);
    if (under_valgrind()) {
        tap_skip(1, "CPU time is not meaningful under valgrind");
    } else {
        sleep_seconds(0.05); /* let the workers finish their spin */
        double used = cpu_used_while_sleeping(0.5);
        ok(used < 0.05, "paused pool: the workers use no CPU (%.4f s over 0.5 s)", used);
    }

    ggml_threadpool_resume(pool);
    ggml_threadpool_resume(pool);
    poison_chain(&c);
    is_int(compute_on(c.graph, 4, pool), GGML_STATUS_SUCCESS, "resumed pool computes");
    ok(chain_node_ok(&c, c.n - 1), "resumed pool: results are right");
    ggml_threadpool_free(pool);

    /* a pool created paused */
    p = ggml_threadpool_params_default(3);
    p.paused = true;
    pool = ggml_threadpool_new(&p);
    ok(pool != NULL, "threadpool_new: a pool created paused");
    poison_chain(&c);
    is_int(compute_on(c.graph, 3, pool), GGML_STATUS_SUCCESS, "created paused: a compute succeeds");
    ok(chain_node_ok(&c, c.n - 1), "created paused: results are right");
    /* and again with one thread only, which needs no worker */
    ggml_threadpool_pause(pool);
    poison_chain(&c);
    is_int(compute_on(c.graph, 1, pool), GGML_STATUS_SUCCESS, "paused pool, 1-thread plan: succeeds");
    ok(chain_node_ok(&c, c.n - 1), "paused pool, 1-thread plan: results are right");
    ggml_threadpool_free(pool);

    logged_nothing("pause/resume: no messages");
    ggml_free(ctx);
}

/* ------------------------------------------- persistence and defaults */

/* Physical cores among the CPUs this process may use (sysfs), or 0. */
static int physical_cores(void)
{
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return 0;
    long seen[CPU_SETSIZE];
    int n = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed))
            continue;
        char path[128];
        long core = -1, package = -1;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
        FILE *f = fopen(path, "r");
        if (f == NULL || fscanf(f, "%ld", &core) != 1) {
            if (f)
                fclose(f);
            return 0;
        }
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
        f = fopen(path, "r");
        if (f == NULL || fscanf(f, "%ld", &package) != 1) {
            if (f)
                fclose(f);
            return 0;
        }
        fclose(f);
        long id = package * 1000000 + core;
        bool old = false;
        for (int i = 0; i < n; i++)
            old = old || seen[i] == id;
        if (!old)
            seen[n++] = id;
    }
    return n;
}

static void test_persistence_and_defaults(void)
{
    long before[MAX_TASKS], after[MAX_TASKS], fresh[MAX_TASKS];
    struct ggml_context *ctx = data_ctx(8);
    struct chain c;
    build_chain(ctx, &c, 30, 256, 4);

    /* a caller's pool: its threads are made once, not per compute */
    struct ggml_threadpool_params p = ggml_threadpool_params_default(4);
    struct ggml_threadpool *pool = ggml_threadpool_new(&p);
    compute_on(c.graph, 4, pool);
    int n_before = list_tasks(before, MAX_TASKS);
    bool right = true;
    for (int rep = 0; rep < 10; rep++) {
        poison_chain(&c);
        right = right && compute_on(c.graph, 4, pool) == GGML_STATUS_SUCCESS && chain_node_ok(&c, c.n - 1);
    }
    int n_after = list_tasks(after, MAX_TASKS);
    ok(right, "persistent pool: 10 computes are right");
    is_int(new_tasks(before, n_before, after, n_after, fresh), 0, "persistent pool: no thread made per compute");
    is_int(n_after, n_before, "persistent pool: no thread ended either");

    /* a plan for more threads than the pool has: the pool's threads do it */
    poison_chain(&c);
    is_int(compute_on(c.graph, 6, pool), GGML_STATUS_SUCCESS, "a 6-thread plan on a 4-thread pool succeeds");
    ok(chain_node_ok(&c, c.n - 1), "a 6-thread plan on a 4-thread pool: right");
    is_int(tap_log_errors(), 0, "a 6-thread plan on a 4-thread pool: at most a warning");
    ggml_threadpool_free(pool);

    /* the engine's own pool (no pool in the plan) persists as well */
    compute_on(c.graph, 3, NULL);
    n_before = list_tasks(before, MAX_TASKS);
    for (int rep = 0; rep < 5; rep++)
        compute_on(c.graph, 3, NULL);
    n_after = list_tasks(after, MAX_TASKS);
    is_int(new_tasks(before, n_before, after, n_after, fresh), 0, "engine's own pool: no thread made per compute");

    /* a new backend computes on as many threads as there are physical cores */
    int cores = physical_cores();
    ggml_backend_t backend = ggml_backend_cpu_init();
    n_before = list_tasks(before, MAX_TASKS);
    poison_chain(&c);
    is_int(ggml_backend_graph_compute(backend, c.graph), GGML_STATUS_SUCCESS, "a new backend computes");
    n_after = list_tasks(after, MAX_TASKS);
    int made = new_tasks(before, n_before, after, n_after, fresh);
    if (cores > 0)
        is_int(made + 1, cores, "a new backend's pool: one thread per physical core (%d)", cores);
    else
        tap_skip(1, "no CPU topology in sysfs");
    n_before = n_after;
    memcpy(before, after, sizeof before);
    ggml_backend_graph_compute(backend, c.graph);
    n_after = list_tasks(after, MAX_TASKS);
    is_int(new_tasks(before, n_before, after, n_after, fresh), 0, "the backend's pool persists across computes");
    ggml_backend_free(backend);
    logged_nothing("persistence: no error messages");
    ggml_free(ctx);
}

/* ---------------------------------------------------------- concurrency */

struct concurrent_job {
    bool own_backend;   /* a backend per thread, else the engine's own pool */
    int n_threads;
    int wrong;
};

static void *concurrent_main(void *arg)
{
    struct concurrent_job *job = arg;
    struct ggml_context *ctx = data_ctx(4);
    struct chain c;
    build_chain(ctx, &c, 40, 128, 4);
    ggml_backend_t backend = job->own_backend ? ggml_backend_cpu_init() : NULL;
    if (backend)
        ggml_backend_cpu_set_n_threads(backend, job->n_threads);
    for (int rep = 0; rep < 40; rep++) {
        poison_chain(&c);
        enum ggml_status status = backend ? ggml_backend_graph_compute(backend, c.graph)
                                          : compute_on(c.graph, job->n_threads, NULL);
        if (status != GGML_STATUS_SUCCESS || !chain_node_ok(&c, c.n - 1))
            job->wrong++;
    }
    ggml_backend_free(backend);
    ggml_free(ctx);
    return NULL;
}

static void test_concurrency(void)
{
    for (int own = 1; own >= 0; own--) {
        struct concurrent_job jobs[3] = { { own, 2, 0 }, { own, 3, 0 }, { own, 4, 0 } };
        pthread_t threads[3];
        for (int i = 0; i < 3; i++)
            pthread_create(&threads[i], NULL, concurrent_main, &jobs[i]);
        for (int i = 0; i < 3; i++)
            pthread_join(threads[i], NULL);
        ok(jobs[0].wrong + jobs[1].wrong + jobs[2].wrong == 0,
           "3 threads computing at once, %s: every result right (%d, %d, %d wrong)",
           own ? "a backend each" : "on the engine's own pool", jobs[0].wrong, jobs[1].wrong, jobs[2].wrong);
    }
    logged_nothing("concurrency: no messages");
}

/* ------------------------------------------------------------ idle pool */

static void test_idle_cpu(void)
{
    struct ggml_threadpool_params p = ggml_threadpool_params_default(4);
    struct ggml_threadpool *pool = ggml_threadpool_new(&p);
    struct ggml_context *ctx = data_ctx(4);
    struct chain c;
    build_chain(ctx, &c, 20, 256, 4);
    is_int(compute_on(c.graph, 4, pool), GGML_STATUS_SUCCESS, "idle pool: a first compute wakes every worker");

    if (under_valgrind()) {
        tap_skip(1, "CPU time is not meaningful under valgrind");
    } else {
        /*
         * One idle second with the 4-thread pool alive (and every pool
         * made before it): the workers spin for a bounded time after the
         * compute and then sleep, so the process uses almost no CPU.
         */
        double used = cpu_used_while_sleeping(1.0);
        ok(used < 0.05, "idle 4-thread pool: %.4f s of CPU over 1 s (limit 0.05 s)", used);
    }
    ggml_threadpool_free(pool);
    ggml_free(ctx);
}

/* ----------------------------------------------------- oversubscription */

/*
 * 4 threads on a machine with fewer cores (2 here) compute a chain of 300
 * small nodes, a barrier after each, and get every node right: the
 * barriers must not lose a descheduled thread's work.  How fast such a
 * run is (barriers that yield instead of spinning) is a benchmark's
 * question, not this test's.
 */
static void test_oversubscription(void)
{
    struct ggml_context *ctx = data_ctx(32);
    struct chain c;
    build_chain(ctx, &c, 300, 2048, 8);
    struct ggml_threadpool_params p = ggml_threadpool_params_default(4);
    struct ggml_threadpool *pool = ggml_threadpool_new(&p);
    bool right = true;
    for (int rep = 0; rep < 3; rep++) {
        float *last = (float *) c.nodes[c.n - 1]->data;
        for (int64_t i = 0; i < ggml_nelements(c.x); i++)
            last[i] = -12345.0f;
        right = right && compute_on(c.graph, 4, pool) == GGML_STATUS_SUCCESS && chain_node_ok(&c, c.n - 1);
    }
    ok(right, "oversubscription: 300 nodes on 4 threads are right, 3 times over");
    ggml_threadpool_free(pool);
    ggml_free(ctx);
}

/* ------------------------------------------------------------- the plan */

static void test_plan(void)
{
    struct ggml_context *ctx = data_ctx(4);
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 256, 4);
    struct ggml_tensor *q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 256, 4);
    struct ggml_cgraph *g = graph_of(ctx, ggml_cpy(ctx, a, q));

    struct ggml_cplan plan = ggml_graph_plan(g, 2, NULL);
    ok(plan.work_size > 0, "plan: CPY F32 -> Q8_0 needs scratch (%zu bytes)", plan.work_size);
    is_int(plan.n_threads, 2, "plan: n_threads as asked");
    ok(plan.work_data == NULL, "plan: work_data left to the caller");
    ok(plan.threadpool == NULL, "plan: no pool");
    ok(plan.abort_callback == NULL && plan.abort_callback_data == NULL, "plan: no abort callback");
    ok(!plan.use_ref, "plan: use_ref off");

    is_int(ggml_graph_plan(g, 0, NULL).n_threads, GGML_DEFAULT_N_THREADS, "plan: 0 threads means GGML_DEFAULT_N_THREADS");
    is_int(ggml_graph_plan(g, -3, NULL).n_threads, GGML_DEFAULT_N_THREADS, "plan: -3 threads means GGML_DEFAULT_N_THREADS");

    struct ggml_threadpool_params pp = ggml_threadpool_params_default(3);
    struct ggml_threadpool *pool = ggml_threadpool_new(&pp);
    struct ggml_cplan with_pool = ggml_graph_plan(g, 0, pool);
    is_int(with_pool.n_threads, 3, "plan: 0 threads with a pool means the pool's size");
    is_ptr(with_pool.threadpool, pool, "plan: the pool is recorded");
    is_int(ggml_graph_plan(g, 2, pool).n_threads, 2, "plan: 2 threads of a 3-thread pool stay 2 (upstream)");
    logged_nothing("plan: no messages");

    /* a graph of views only needs no scratch */
    struct ggml_tensor *v = ggml_transpose(ctx, ggml_reshape_2d(ctx, a, 128, 8));
    struct ggml_cgraph *gv = graph_of(ctx, v);
    is_uint(ggml_graph_plan(gv, 4, NULL).work_size, 0, "plan: layout-only graph needs no scratch");
    is_int(compute_on(gv, 4, NULL), GGML_STATUS_SUCCESS, "compute: a layout-only graph succeeds");

    /* nothing to compute */
    struct ggml_cgraph *empty = ggml_new_graph(ctx);
    is_uint(ggml_graph_plan(empty, 4, NULL).work_size, 0, "plan: an empty graph needs no scratch");
    is_int(compute_on(empty, 4, NULL), GGML_STATUS_SUCCESS, "compute: an empty graph succeeds");
    struct ggml_tensor *e = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 0, 4);
    is_int(compute_on(graph_of(ctx, ggml_add(ctx, e, e)), 4, NULL), GGML_STATUS_SUCCESS,
           "compute: an ADD of empty tensors succeeds");

    /* ggml_build_forward_select: only the selected branch is computed */
    struct ggml_tensor *branches[2] = { ggml_add(ctx, a, a), ggml_sub(ctx, a, a) };
    for (int i = 0; i < 256 * 4; i++) {
        ((float *) a->data)[i] = 1.0f;
        ((float *) branches[0]->data)[i] = ((float *) branches[1]->data)[i] = -7.0f;
    }
    struct ggml_cgraph *gs = ggml_new_graph(ctx);
    ggml_build_forward_select(gs, branches, 2, 1);
    is_int(compute_on(gs, 3, NULL), GGML_STATUS_SUCCESS, "compute: a graph with a selected branch");
    ok(((float *) branches[1]->data)[1000] == 0.0f && ((float *) branches[0]->data)[1000] == -7.0f,
       "compute: the selected branch is computed, the other left alone");

    struct ggml_cplan none = ggml_graph_plan(NULL, 4, NULL);
    logged_one_error("plan(NULL): one message");
    is_int(none.n_threads, 0, "plan(NULL): an empty plan");

    ggml_threadpool_free(pool);
    ggml_free(ctx);
}

/* ---------------------------------------------------- compute: errors */

static enum ggml_status compute_plan_copy(struct ggml_cgraph *g, struct ggml_cplan plan)
{
    return ggml_graph_compute(g, &plan);
}

static void test_compute_errors(void)
{
    struct ggml_context *ctx = data_ctx(8);
    uint64_t seed = 7;
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 256, 8);
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 256, 8);
    optest_fill(a, &seed, -1, 1);
    optest_fill(b, &seed, -1, 1);
    struct ggml_tensor *q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 256, 8);
    memset(q->data, 0x11, ggml_nbytes(q));
    struct ggml_cgraph *g = graph_of(ctx, ggml_cpy(ctx, ggml_add(ctx, a, b), q));

    is_int(ggml_graph_compute(NULL, NULL), GGML_STATUS_FAILED, "compute(NULL, NULL) fails");
    logged_one_error("compute(NULL, NULL): one message");
    is_int(ggml_graph_compute(g, NULL), GGML_STATUS_FAILED, "compute(g, NULL) fails");
    logged_one_error("compute(g, NULL): one message");

    struct ggml_cplan plan = ggml_graph_plan(g, 4, NULL);
    is_int(compute_plan_copy(g, plan), GGML_STATUS_FAILED, "compute: no work buffer fails");
    logged_one_error("compute: one message for a missing work buffer");
    ok(strstr(tap_last_log(), "work") != NULL, "compute: the message says what is missing: %s", tap_last_log());

    uint8_t *work = malloc(plan.work_size);
    struct ggml_cplan small = plan;
    small.work_data = work;
    small.work_size = plan.work_size - 1;
    is_int(compute_plan_copy(g, small), GGML_STATUS_FAILED, "compute: a work buffer one byte short fails");
    logged_one_error("compute: one message for a short work buffer");
    struct ggml_cplan no_data = plan;
    no_data.work_data = NULL;
    is_int(compute_plan_copy(g, no_data), GGML_STATUS_FAILED, "compute: work_size without work_data fails");
    logged_one_error("compute: one message for work_data NULL");
    struct ggml_cplan zero = plan;
    zero.work_data = work;
    zero.n_threads = 0;
    is_int(compute_plan_copy(g, zero), GGML_STATUS_FAILED, "compute: a plan of 0 threads fails");
    logged_one_error("compute: one message for 0 threads");

    bool untouched = true;
    for (size_t i = 0; i < ggml_nbytes(q); i++)
        untouched = untouched && ((uint8_t *) q->data)[i] == 0x11;
    ok(untouched, "compute: refused plans write nothing");

    struct ggml_cplan good = plan;
    good.work_data = work;
    is_int(compute_plan_copy(g, good), GGML_STATUS_SUCCESS, "compute: the same graph with its work buffer");
    logged_nothing("compute: no message on success");

    /* a graph built from a NULL tensor */
    struct ggml_cgraph *failed = ggml_new_graph(ctx);
    ggml_build_forward_expand(failed, ggml_add(ctx, a, b));
    ggml_build_forward_expand(failed, ggml_add(ctx, a, NULL));
    logged_nothing("a NULL input propagates silently into the graph");
    is_int(compute_on(failed, 2, NULL), GGML_STATUS_FAILED, "compute: a graph built from a NULL tensor fails");
    logged_one_error("compute: one message for a failed graph");

    /* an unsupported node: a copy into I64, which no kernel writes */
    struct ggml_tensor *i64 = ggml_new_tensor_2d(ctx, GGML_TYPE_I64, 256, 8);
    struct ggml_tensor *bad_cpy = ggml_cpy(ctx, a, i64);
    ok(bad_cpy != NULL, "cpy F32 -> I64 is built (the constructor allows any type)");
    is_int(compute_on(graph_of(ctx, bad_cpy), 2, NULL), GGML_STATUS_FAILED, "compute: CPY F32 -> I64 fails");
    logged_one_error("compute: one message for an unsupported node");
    ok(strstr(tap_last_log(), "CPY") != NULL, "compute: the message names the op: %s", tap_last_log());

    /* an op the CPU backend has no kernel for (a hand-made node) */
    struct ggml_tensor *noker_node = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 128, 8);
    noker_node->op = GGML_OP_OPT_STEP_ADAMW;
    noker_node->src[0] = a;
    is_int(compute_on(graph_of(ctx, noker_node), 2, NULL), GGML_STATUS_FAILED, "compute: an OPT_STEP_ADAMW node fails");
    logged_one_error("compute: one message for an op without kernel");
    ok(strstr(tap_last_log(), "OPT_STEP_ADAMW") != NULL, "compute: the message names OPT_STEP_ADAMW: %s", tap_last_log());

    /* nodes and sources without memory */
    struct ggml_context *meta = meta_ctx();
    struct ggml_tensor *node_nomem = ggml_add(meta, a, b);
    is_int(compute_on(graph_of(ctx, node_nomem), 2, NULL), GGML_STATUS_FAILED, "compute: a node without memory fails");
    logged_one_error("compute: one message for a node without memory");
    struct ggml_tensor *src_nomem = ggml_new_tensor_2d(meta, GGML_TYPE_F32, 256, 8);
    ggml_set_name(src_nomem, "unallocated");
    is_int(compute_on(graph_of(ctx, ggml_add(ctx, a, src_nomem)), 2, NULL), GGML_STATUS_FAILED,
           "compute: a source without memory fails");
    logged_one_error("compute: one message for a source without memory");
    ok(strstr(tap_last_log(), "unallocated") != NULL, "compute: the message names the source: %s", tap_last_log());

    /* the engine is still usable */
    is_int(compute_plan_copy(g, good), GGML_STATUS_SUCCESS, "compute: still works after the errors");
    free(work);
    ggml_free(meta);
    ggml_free(ctx);
}

/* ------------------------------------------------- compute_with_ctx */

static void test_compute_with_ctx(void)
{
    struct ggml_context *ctx = data_ctx(4);
    uint64_t seed = 11;
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1024, 3);
    optest_fill(a, &seed, -1, 1);
    struct ggml_tensor *q = ggml_cpy(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 1024, 3));
    struct ggml_tensor *back = ggml_cpy(ctx, q, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1024, 3));
    struct ggml_cgraph *g = graph_of(ctx, back);
    const size_t need = ggml_graph_plan(g, 2, NULL).work_size;
    const size_t used = ggml_used_mem(ctx);
    is_int(ggml_graph_compute_with_ctx(ctx, g, 2), GGML_STATUS_SUCCESS, "compute_with_ctx: succeeds");
    ok(ggml_used_mem(ctx) >= used + need, "compute_with_ctx: scratch (%zu bytes) taken from the context", need);
    double err = 0;
    for (int64_t i = 0; i < ggml_nelements(a); i++)
        err = fmax(err, fabs(((float *) back->data)[i] - ((float *) a->data)[i]));
    ok(err < 1.0 / 127 + 1e-6, "compute_with_ctx: Q8_0 round trip within a quantization step (%.3g)", err);
    logged_nothing("compute_with_ctx: no messages");

    /* fill the context so that the scratch cannot fit */
    while (ggml_new_buffer(ctx, 256) != NULL)
        ;
    tap_log_errors();
    is_int(ggml_graph_compute_with_ctx(ctx, g, 2), GGML_STATUS_ALLOC_FAILED, "compute_with_ctx: a full context is ALLOC_FAILED");
    logged_one_error("compute_with_ctx: one message for a full context");

    is_int(ggml_graph_compute_with_ctx(NULL, g, 2), GGML_STATUS_FAILED, "compute_with_ctx(NULL) fails");
    logged_one_error("compute_with_ctx(NULL): one message");
    ggml_free(ctx);
}

/* ------------------------------------------------ determinism */

static void test_threads_identical(void)
{
    struct ggml_context *ctx = data_ctx(16);
    struct mixed m;
    build_mixed(ctx, &m, 1234);

    clear_outputs(&m);
    is_int(compute_on(m.graph, 1, NULL), GGML_STATUS_SUCCESS, "mixed graph on 1 thread");
    /* F32 add and mul round once each: NMSE at rounding level */
    double nmse = mixed_prod_nmse(&m);
    ok(nmse < 1e-12, "mixed graph: (x + y) * z^T matches the double reference (nmse %.3g)", nmse);
    struct snapshot one = take_snapshot(&m);

    for (int n = 2; n <= 4; n++) {
        clear_outputs(&m);
        is_int(compute_on(m.graph, n, NULL), GGML_STATUS_SUCCESS, "mixed graph on %d threads", n);
        ok(same_snapshot(&m, &one), "mixed graph: %d threads give the same bytes as 1", n);
    }
    struct ggml_threadpool_params p = ggml_threadpool_params_default(3);
    struct ggml_threadpool *pool = ggml_threadpool_new(&p);
    for (int rep = 0; rep < 2; rep++) {
        clear_outputs(&m);
        is_int(compute_on(m.graph, 3, pool), GGML_STATUS_SUCCESS, "mixed graph on a user pool of 3 (run %d)", rep);
        ok(same_snapshot(&m, &one), "mixed graph: a user pool of 3 gives the same bytes (run %d)", rep);
    }
    /* reference kernels: the same values */
    for (int n = 1; n <= 4; n += 3) {
        clear_outputs(&m);
        struct ggml_cplan plan = ggml_graph_plan(m.graph, n, NULL);
        plan.use_ref = true;
        plan.work_data = malloc(plan.work_size);
        is_int(ggml_graph_compute(m.graph, &plan), GGML_STATUS_SUCCESS, "mixed graph, use_ref, %d threads", n);
        free(plan.work_data);
        ok(same_snapshot(&m, &one), "mixed graph: use_ref on %d threads gives the same bytes", n);
    }
    ggml_threadpool_free(pool);
    free_snapshot(&one);
    logged_nothing("determinism: no messages");
    ggml_free(ctx);
}

/* ------------------------------------------------ a non-host buffer type */

/*
 * "FakeDevice" memory: plain malloc, but the type says it is not host
 * memory, as a GPU's would be.
 */
static void fake_free_buffer(ggml_backend_buffer_t buffer)
{
    free(buffer->context);
}

static void *fake_get_base(ggml_backend_buffer_t buffer)
{
    return buffer->context;
}

static void fake_memset(ggml_backend_buffer_t buffer, struct ggml_tensor *t, uint8_t v, size_t off, size_t size)
{
    (void) buffer;
    memset((char *) t->data + off, v, size);
}

static void fake_set(ggml_backend_buffer_t buffer, struct ggml_tensor *t, const void *data, size_t off, size_t size)
{
    (void) buffer;
    memcpy((char *) t->data + off, data, size);
}

static void fake_get(ggml_backend_buffer_t buffer, const struct ggml_tensor *t, void *data, size_t off, size_t size)
{
    (void) buffer;
    memcpy(data, (const char *) t->data + off, size);
}

static void fake_clear(ggml_backend_buffer_t buffer, uint8_t v)
{
    memset(buffer->context, v, buffer->size);
}

static const struct ggml_backend_buffer_i fake_buffer_iface = {
    .free_buffer = fake_free_buffer,
    .get_base = fake_get_base,
    .init_tensor = NULL,
    .memset_tensor = fake_memset,
    .set_tensor = fake_set,
    .get_tensor = fake_get,
    .cpy_tensor = NULL,
    .clear = fake_clear,
    .reset = NULL,
};

static const char *fake_buft_name(ggml_backend_buffer_type_t buft)
{
    (void) buft;
    return "FakeDevice";
}

static ggml_backend_buffer_t fake_buft_alloc(ggml_backend_buffer_type_t buft, size_t size)
{
    void *mem = aligned_alloc(64, (size + 63) / 64 * 64 + 64);
    if (mem == NULL)
        return NULL;
    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buft, fake_buffer_iface, mem, size);
    if (buffer == NULL)
        free(mem);
    return buffer;
}

static size_t fake_buft_alignment(ggml_backend_buffer_type_t buft)
{
    (void) buft;
    return 64;
}

static bool fake_buft_is_host(ggml_backend_buffer_type_t buft)
{
    (void) buft;
    return false;
}

static struct ggml_backend_buffer_type fake_buft = {
    .iface = {
        .get_name = fake_buft_name,
        .alloc_buffer = fake_buft_alloc,
        .get_alignment = fake_buft_alignment,
        .get_max_size = NULL,
        .get_alloc_size = NULL,
        .is_host = fake_buft_is_host,
    },
    .device = NULL,
    .context = NULL,
};

/* A backend that is not a CPU backend (published by test_backend, never freed). */
static const char *fake_backend_name(ggml_backend_t backend)
{
    (void) backend;
    return "FakeBackend";
}

static ggml_guid fake_guid = { 0xfa, 0xce };

static struct ggml_backend fake_backend = {
    .guid = &fake_guid,
    .iface = { .get_name = fake_backend_name },
    .device = NULL,
    .context = NULL,
};

/* ---------------------------------------------------------- the backend */

/* Sets a, b to known values and computes out = a * b + a on backend. */
struct backend_graph {
    struct ggml_context *ctx;
    ggml_backend_buffer_t buffer;
    struct ggml_tensor *a, *b, *out;
    struct ggml_cgraph *graph;
};

static void backend_graph_init(struct backend_graph *bg, ggml_backend_t backend)
{
    struct ggml_init_params params = { 16 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    bg->ctx = ggml_init(params);
    bg->a = ggml_new_tensor_2d(bg->ctx, GGML_TYPE_F32, 67, 13);
    bg->b = ggml_new_tensor_2d(bg->ctx, GGML_TYPE_F32, 67, 1);
    bg->out = ggml_add(bg->ctx, ggml_mul(bg->ctx, bg->a, bg->b), bg->a);
    bg->graph = ggml_new_graph(bg->ctx);
    ggml_build_forward_expand(bg->graph, bg->out);
    bg->buffer = ggml_backend_alloc_ctx_tensors(bg->ctx, backend);
    float va[67 * 13], vb[67];
    for (int i = 0; i < 67 * 13; i++)
        va[i] = (float) (i % 11) - 5.0f;
    for (int i = 0; i < 67; i++)
        vb[i] = (float) (i % 5) * 0.5f;
    ggml_backend_tensor_set(bg->a, va, 0, sizeof va);
    ggml_backend_tensor_set(bg->b, vb, 0, sizeof vb);
}

static bool backend_graph_ok(const struct backend_graph *bg)
{
    float out[67 * 13];
    ggml_backend_tensor_get(bg->out, out, 0, sizeof out);
    for (int i = 0; i < 67 * 13; i++) {
        const float a = (float) (i % 11) - 5.0f, b = (float) ((i % 67) % 5) * 0.5f;
        if (out[i] != a * b + a)
            return false;
    }
    return true;
}

static void backend_graph_free(struct backend_graph *bg)
{
    ggml_backend_buffer_free(bg->buffer);
    ggml_free(bg->ctx);
}

/* A product whose scratch (src1 converted for the F16 kernel) cannot be
 * allocated: tensors of 2^41 elements on caller memory never touched. */
static struct ggml_cgraph *unallocatable_scratch_graph(struct ggml_context *ctx, void *memory)
{
    const int64_t k = (int64_t) 1 << 41;
    struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, k, 1);
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, 1);
    struct ggml_tensor *y = ggml_mul_mat(ctx, a, b);
    a->data = b->data = y->data = memory;
    struct ggml_cgraph *graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, y);
    return graph;
}

/* The child of test_oom_one_message: a pool whose threads cannot start
 * (no address space for their stacks); exit status 0 when the CPU
 * backend's computation fails with ALLOC_FAILED and one error. */
static int pool_start_failure_child(ggml_backend_t backend, struct ggml_cgraph *small)
{
    FILE *status = fopen("/proc/self/status", "r");
    long vm_kb = 0;
    char line[256];
    while (status != NULL && fgets(line, sizeof line, status) != NULL)
        if (sscanf(line, "VmSize: %ld kB", &vm_kb) == 1)
            break;
    if (status != NULL)
        fclose(status);
    if (vm_kb <= 0)
        return 77;
    struct rlimit limit = { .rlim_cur = (rlim_t) (vm_kb + 2048) * 1024, .rlim_max = RLIM_INFINITY };
    if (setrlimit(RLIMIT_AS, &limit) != 0)
        return 77;
    ggml_backend_cpu_set_n_threads(backend, 16);
    tap_log_errors();
    enum ggml_status got = ggml_backend_graph_compute(backend, small);
    int errors = tap_log_errors();
    printf("# child: status %d, %d error(s), last: %s\n", (int) got, errors, tap_last_log());
    return got == GGML_STATUS_ALLOC_FAILED && errors == 1 ? 0 : 1;
}

/* m1: one failure of the CPU backend's backend-level calls, one message. */
static void test_oom_one_message(void)
{
    static float memory[64];
    struct ggml_init_params params = { 8 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(params);
    struct ggml_cgraph *graph = unallocatable_scratch_graph(ctx, memory);
    ggml_backend_t backend = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(backend, 2);
    is_int(ggml_backend_graph_compute(backend, graph), GGML_STATUS_ALLOC_FAILED,
           "scratch that cannot be allocated: ALLOC_FAILED");
    logged_one_error("scratch that cannot be allocated: one message");
    ok(strstr(tap_last_log(), "scratch") != NULL, "the message names the scratch memory: %s", tap_last_log());
    is_ptr(ggml_backend_graph_plan_create(backend, graph), NULL, "a plan whose scratch cannot be allocated: NULL");
    logged_one_error("a plan whose scratch cannot be allocated: one message");

    /* a pool that cannot start its threads (the address-space limit would
     * also stop a sanitizer's allocator: not under one) */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    tap_skip(1, "an address-space limit under a sanitizer");
#else
    struct ggml_context *small_ctx = data_ctx(4);
    struct ggml_tensor *x = ggml_new_tensor_1d(small_ctx, GGML_TYPE_F32, 8);
    memset(x->data, 0, ggml_nbytes(x));
    struct ggml_cgraph *small = graph_of(small_ctx, ggml_scale(small_ctx, x, 2.0f));
    ggml_backend_t fresh = ggml_backend_cpu_init();
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        int rc = pool_start_failure_child(fresh, small);
        fflush(stdout);
        _exit(rc);
    }
    int status = -1;
    if (child > 0)
        waitpid(child, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
        tap_skip(1, "cannot read or limit the address space");
    else
        ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "a pool that cannot start its threads: ALLOC_FAILED and one message");
    ggml_backend_free(fresh);
    ggml_free(small_ctx);
#endif
    ggml_backend_free(backend);
    ggml_free(ctx);
}

static void test_backend(void)
{
    ggml_backend_t backend = ggml_backend_cpu_init();
    ok(backend != NULL, "backend_cpu_init");
    ok(ggml_backend_is_cpu(backend), "is_cpu of a CPU backend");
    ok(!ggml_backend_is_cpu(NULL), "is_cpu(NULL) is false");
    is_ptr(ggml_backend_publish(&fake_backend), &fake_backend, "publish another backend");
    ok(!ggml_backend_is_cpu(&fake_backend), "is_cpu of another backend is false");
    logged_nothing("is_cpu: no messages");
    is_str(ggml_backend_name(backend), "CPU", "backend name");

    ggml_backend_dev_t dev = ggml_backend_get_device(backend);
    ok(dev != NULL, "backend has a device");
    is_str(ggml_backend_dev_name(dev), "CPU", "device name");
    const char *desc = ggml_backend_dev_description(dev);
    ok(desc != NULL && desc[0] != '\0', "device description: '%s'", desc ? desc : "(null)");
    is_int(ggml_backend_dev_type(dev), GGML_BACKEND_DEVICE_TYPE_CPU, "device type CPU");
    size_t free_mem = 0, total_mem = 0;
    ggml_backend_dev_memory(dev, &free_mem, &total_mem);
    ok(total_mem > 0 && free_mem > 0 && free_mem <= total_mem, "device memory: %zu free of %zu", free_mem, total_mem);

    struct ggml_backend_dev_props props;
    memset(&props, 0xab, sizeof props);
    ggml_backend_dev_get_props(dev, &props);
    is_str(props.name, "CPU", "props: name");
    ok(props.description != NULL && strcmp(props.description, desc) == 0, "props: description");
    ok(props.memory_total == total_mem && props.memory_free > 0 && props.memory_free <= props.memory_total,
       "props: memory");
    is_int(props.type, GGML_BACKEND_DEVICE_TYPE_CPU, "props: type");
    ok(props.device_id == NULL || props.device_id[0] != '\0', "props: device_id NULL or a string");
    unsigned char caps[sizeof props.caps];
    memcpy(caps, &props.caps, sizeof caps);
    bool caps_set = true;
    for (size_t i = 0; i < sizeof caps; i++)
        caps_set = caps_set && caps[i] <= 1;
    ok(caps_set, "props: every capability set (no byte left unwritten)");
    ok(!props.caps.async && !props.caps.events && props.caps.buffer_from_host_ptr && props.caps.mmap_support,
       "props: synchronous, no events, buffers from host pointers, tensors from mapped files");
    logged_nothing("device queries: no messages");

    /* computing through the backend */
    struct backend_graph bg;
    backend_graph_init(&bg, backend);
    for (int n = 1; n <= 4; n++) {
        ggml_backend_cpu_set_n_threads(backend, n);
        ggml_backend_tensor_memset(bg.out, 0, 0, ggml_nbytes(bg.out));
        is_int(ggml_backend_graph_compute(backend, bg.graph), GGML_STATUS_SUCCESS, "backend compute on %d threads", n);
        ok(backend_graph_ok(&bg), "backend compute on %d threads: right", n);
    }
    logged_nothing("set_n_threads 1..4: no messages");

    const int bad[] = { 0, -2, GGML_MAX_N_THREADS + 1 };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ggml_backend_cpu_set_n_threads(backend, bad[i]);
        logged_one_error("set_n_threads(%d): one message", bad[i]);
    }
    ggml_backend_tensor_memset(bg.out, 0, 0, ggml_nbytes(bg.out));
    is_int(ggml_backend_graph_compute(backend, bg.graph), GGML_STATUS_SUCCESS, "backend still computes after bad thread counts");
    ok(backend_graph_ok(&bg), "backend after bad thread counts: right");
    ggml_backend_cpu_set_n_threads(NULL, 2);
    logged_one_error("set_n_threads(NULL): one message");
    ggml_backend_cpu_set_n_threads(&fake_backend, 2);
    logged_one_error("set_n_threads on another backend: one message");
    ok(strstr(tap_last_log(), "FakeBackend") != NULL, "the message names the backend: %s", tap_last_log());

    /* a caller's pool */
    struct ggml_threadpool_params p = ggml_threadpool_params_default(3);
    struct ggml_threadpool *pool = ggml_threadpool_new(&p);
    ggml_backend_cpu_set_threadpool(backend, pool);
    ggml_backend_tensor_memset(bg.out, 0, 0, ggml_nbytes(bg.out));
    is_int(ggml_backend_graph_compute(backend, bg.graph), GGML_STATUS_SUCCESS, "backend compute on a caller's pool");
    ok(backend_graph_ok(&bg), "backend on a caller's pool: right");
    ggml_backend_cpu_set_threadpool(backend, NULL);
    ggml_threadpool_free(pool); /* the backend no longer uses it */
    ggml_backend_tensor_memset(bg.out, 0, 0, ggml_nbytes(bg.out));
    is_int(ggml_backend_graph_compute(backend, bg.graph), GGML_STATUS_SUCCESS, "backend back on its own pool");
    ok(backend_graph_ok(&bg), "backend back on its own pool: right");
    ggml_backend_cpu_set_threadpool(NULL, NULL);
    logged_one_error("set_threadpool(NULL backend): one message");
    ggml_backend_cpu_set_threadpool(&fake_backend, NULL);
    logged_one_error("set_threadpool on another backend: one message");

    /* reference kernels */
    ggml_backend_cpu_set_use_ref(backend, true);
    ggml_backend_tensor_memset(bg.out, 0, 0, ggml_nbytes(bg.out));
    is_int(ggml_backend_graph_compute(backend, bg.graph), GGML_STATUS_SUCCESS, "backend compute with use_ref");
    ok(backend_graph_ok(&bg), "backend with use_ref: right");
    ggml_backend_cpu_set_use_ref(backend, false);
    logged_nothing("set_use_ref: no messages");
    ggml_backend_cpu_set_use_ref(NULL, true);
    logged_one_error("set_use_ref(NULL): one message");
    ggml_backend_cpu_set_use_ref(&fake_backend, true);
    logged_one_error("set_use_ref on another backend: one message");
    ggml_backend_cpu_set_abort_callback(NULL, NULL, NULL);
    logged_one_error("set_abort_callback(NULL): one message");

    /* graph plans */
    ggml_backend_cpu_set_n_threads(backend, 3);
    ggml_backend_graph_plan_t plan = ggml_backend_graph_plan_create(backend, bg.graph);
    ok(plan != NULL, "graph_plan_create");
    ggml_backend_tensor_memset(bg.out, 0, 0, ggml_nbytes(bg.out));
    is_int(ggml_backend_graph_plan_compute(backend, plan), GGML_STATUS_SUCCESS, "graph_plan_compute");
    ok(backend_graph_ok(&bg), "graph_plan_compute: right");
    ggml_backend_tensor_memset(bg.out, 0, 0, ggml_nbytes(bg.out));
    is_int(ggml_backend_graph_plan_compute(backend, plan), GGML_STATUS_SUCCESS, "graph_plan_compute again");
    ok(backend_graph_ok(&bg), "graph_plan_compute again: right");
    ggml_backend_graph_plan_free(backend, plan);
    logged_nothing("graph plans: no messages");

    /* supports_op: host sources yes, a source in non-host memory no */
    ggml_backend_buffer_type_t cpu_buft = ggml_backend_get_default_buffer_type(backend);
    ok(ggml_backend_dev_supports_buft(dev, cpu_buft), "supports_buft: the CPU buffer type");
    ok(!ggml_backend_dev_supports_buft(dev, &fake_buft), "supports_buft: not a non-host buffer type");
    struct ggml_init_params mp = { 16 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context *fake_ctx = ggml_init(mp);
    struct ggml_tensor *remote = ggml_new_tensor_2d(fake_ctx, GGML_TYPE_F32, 67, 13);
    ggml_backend_buffer_t fake_buffer = ggml_backend_alloc_ctx_tensors_from_buft(fake_ctx, &fake_buft);
    ok(fake_buffer != NULL && !ggml_backend_buffer_is_host(fake_buffer), "a buffer of the non-host type");
    struct ggml_context *meta = meta_ctx();
    struct ggml_tensor *host_add = ggml_add(meta, bg.a, bg.a);
    struct ggml_tensor *remote_add = ggml_add(meta, remote, bg.a);
    struct ggml_tensor *remote_view_add = ggml_add(meta, bg.a, ggml_view_2d(meta, remote, 67, 13, remote->nb[1], 0));
    ok(ggml_backend_dev_supports_op(dev, host_add), "supports_op: ADD of host tensors");
    ok(ggml_backend_supports_op(backend, host_add), "backend_supports_op: ADD of host tensors");
    ok(!ggml_backend_dev_supports_op(dev, remote_add), "supports_op: a source in non-host memory");
    ok(!ggml_backend_supports_op(backend, remote_add), "backend_supports_op: a source in non-host memory");
    ok(!ggml_backend_dev_supports_op(dev, remote_view_add), "supports_op: a view of non-host memory");
    struct ggml_tensor *to_i64 = ggml_cpy(meta, bg.a, ggml_new_tensor_2d(meta, GGML_TYPE_I64, 67, 13));
    ok(!ggml_backend_dev_supports_op(dev, to_i64), "supports_op: CPY into I64 (no kernel)");
    logged_nothing("supports_op: no messages");
    ggml_free(meta);
    ggml_backend_buffer_free(fake_buffer);
    ggml_free(fake_ctx);

    backend_graph_free(&bg);
    ggml_backend_free(backend);
    logged_nothing("backend free: no messages");
}

/* ------------------------------------------------------------- features */

static const struct {
    const char *name;          /* feature list name */
    int (*has)(void);
    const char *cpuinfo;       /* x86 flag in /proc/cpuinfo, or NULL */
} cpu_features[] = {
    { "SSE3", ggml_cpu_has_sse3, "pni" },
    { "SSSE3", ggml_cpu_has_ssse3, "ssse3" },
    { "AVX", ggml_cpu_has_avx, "avx" },
    { "AVX_VNNI", ggml_cpu_has_avx_vnni, "avx_vnni" },
    { "AVX2", ggml_cpu_has_avx2, "avx2" },
    { "BMI2", ggml_cpu_has_bmi2, "bmi2" },
    { "F16C", ggml_cpu_has_f16c, "f16c" },
    { "FMA", ggml_cpu_has_fma, "fma" },
    { "AVX512", ggml_cpu_has_avx512, "avx512f" },
    { "AVX512_VBMI", ggml_cpu_has_avx512_vbmi, "avx512vbmi" },
    { "AVX512_VNNI", ggml_cpu_has_avx512_vnni, "avx512_vnni" },
    { "AVX512_BF16", ggml_cpu_has_avx512_bf16, "avx512_bf16" },
    { "AMX_INT8", ggml_cpu_has_amx_int8, "amx_int8" },
    { "NEON", ggml_cpu_has_neon, NULL },
    { "ARM_FMA", ggml_cpu_has_arm_fma, NULL },
    { "FP16_VA", ggml_cpu_has_fp16_va, NULL },
    { "DOTPROD", ggml_cpu_has_dotprod, NULL },
    { "MATMUL_INT8", ggml_cpu_has_matmul_int8, NULL },
    { "SVE", ggml_cpu_has_sve, NULL },
    { "SME", ggml_cpu_has_sme, NULL },
    { "SME2", ggml_cpu_has_sme2, NULL },
    { "RISCV_V", ggml_cpu_has_riscv_v, NULL },
    { "VSX", ggml_cpu_has_vsx, NULL },
    { "VXE", ggml_cpu_has_vxe, NULL },
    { "WASM_SIMD", ggml_cpu_has_wasm_simd, NULL },
    { "LLAMAFILE", ggml_cpu_has_llamafile, NULL },
};
#define N_CPU_FEATURES (sizeof cpu_features / sizeof cpu_features[0])

/* The flags line of /proc/cpuinfo (malloc'ed, " flag1 flag2 ... "), or NULL. */
static char *cpuinfo_flags(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return NULL;
    char *line = NULL, *flags = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        if (strncmp(line, "flags", 5) == 0 && strchr(line, ':') != NULL) {
            const char *list = strchr(line, ':') + 1;
            flags = malloc(strlen(list) + 3);
            sprintf(flags, " %s ", list);
            for (char *p = flags; *p; p++)
                if (*p == '\n' || *p == '\t')
                    *p = ' ';
            break;
        }
    }
    free(line);
    fclose(f);
    return flags;
}

static bool has_flag(const char *flags, const char *flag)
{
    char word[64];
    snprintf(word, sizeof word, " %s ", flag);
    return strstr(flags, word) != NULL;
}

static void test_features(void)
{
    ggml_cpu_init();
    ggml_cpu_init();
    logged_nothing("cpu_init twice: no messages");

    for (size_t i = 0; i < N_CPU_FEATURES; i++) {
        int v = cpu_features[i].has();
        ok(v == 0 || v == 1, "ggml_cpu_has_%s is 0 or 1 (%d)", cpu_features[i].name, v);
    }
#if defined(__x86_64__) || defined(__i386__)
    /* valgrind's CPU answers cpuid for itself, not for the machine */
    char *flags = under_valgrind() ? NULL : cpuinfo_flags();
    if (flags == NULL) {
        tap_skip((int) N_CPU_FEATURES, under_valgrind() ? "cpuid is emulated under valgrind" : "/proc/cpuinfo has no flags line");
    } else {
        for (size_t i = 0; i < N_CPU_FEATURES; i++) {
            if (cpu_features[i].cpuinfo == NULL) {
                is_int(cpu_features[i].has(), 0, "x86: %s is 0", cpu_features[i].name);
                continue;
            }
            is_int(cpu_features[i].has(), has_flag(flags, cpu_features[i].cpuinfo),
                   "x86: %s agrees with the '%s' flag of /proc/cpuinfo", cpu_features[i].name,
                   cpu_features[i].cpuinfo);
        }
        free(flags);
    }
    is_int(ggml_cpu_get_sve_cnt(), 0, "x86: no SVE vector length");
    is_int(ggml_cpu_get_rvv_vlen(), 0, "x86: no RVV vector length");
#else
    tap_skip((int) N_CPU_FEATURES + 2, "not x86: /proc/cpuinfo flags not compared");
#endif
    ok(ggml_cpu_has_sve() || ggml_cpu_get_sve_cnt() == 0, "sve_cnt is 0 without SVE");
    ok(ggml_cpu_has_riscv_v() || ggml_cpu_get_rvv_vlen() == 0, "rvv_vlen is 0 without RVV");
}

/* ------------------------------------------------------------- registry */

static void test_registry(void)
{
    ggml_backend_reg_t reg = ggml_backend_cpu_reg();
    ok(reg != NULL, "backend_cpu_reg");
    is_str(ggml_backend_reg_name(reg), "CPU", "registry name");
    is_uint(ggml_backend_reg_dev_count(reg), 1, "one CPU device");
    ggml_backend_dev_t dev = ggml_backend_reg_dev_get(reg, 0);
    ok(dev != NULL && ggml_backend_dev_backend_reg(dev) == reg, "the device belongs to the registry");
    is_ptr(ggml_backend_reg_by_name("CPU"), reg, "reg_by_name(\"CPU\")");
    is_ptr(ggml_backend_reg_by_name("cpu"), reg, "reg_by_name ignores case");
    is_ptr(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU), dev, "dev_by_type(CPU) finds the CPU device");
    is_ptr(ggml_backend_dev_by_name("CPU"), dev, "dev_by_name(\"CPU\")");
    logged_nothing("registry queries: no messages");

    ggml_backend_t best = ggml_backend_init_best();
    ok(best != NULL && ggml_backend_is_cpu(best), "init_best without plugins: a CPU backend");
    is_ptr(best ? ggml_backend_get_device(best) : NULL, dev, "init_best: on the CPU device");
    ggml_backend_free(best);
    ggml_backend_t by_type = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, NULL);
    ok(by_type != NULL && ggml_backend_is_cpu(by_type), "init_by_type(CPU)");
    ggml_backend_free(by_type);
    ggml_backend_t by_dev = ggml_backend_dev_init(dev, NULL);
    ok(by_dev != NULL && ggml_backend_is_cpu(by_dev), "dev_init of the CPU device");

    ggml_backend_set_n_threads_t set_n_threads =
        (ggml_backend_set_n_threads_t) ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads");
    ok(set_n_threads != NULL, "proc address ggml_backend_set_n_threads");
    if (set_n_threads) {
        set_n_threads(by_dev, 2);
        logged_nothing("set_n_threads through the proc address: no message");
        set_n_threads(by_dev, 0);
        logged_one_error("set_n_threads(0) through the proc address: one message");
    }
    ok(ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_abort_callback") != NULL,
       "proc address ggml_backend_set_abort_callback");
    ok(ggml_backend_reg_get_proc_address(reg, "ggml_backend_no_such_function") == NULL,
       "proc address of an unknown name is NULL");
    tap_log_errors();
    ggml_backend_free(by_dev);

    ggml_backend_get_features_t get_features =
        (ggml_backend_get_features_t) ggml_backend_reg_get_proc_address(reg, "ggml_backend_get_features");
    ok(get_features != NULL, "proc address ggml_backend_get_features");
    if (get_features == NULL) {
        tap_skip(3, "no feature list");
        return;
    }
    struct ggml_backend_feature *list = get_features(reg);
    int n = 0;
    bool values = true, listed_present = true;
    while (list != NULL && n < 256 && list[n].name != NULL) {
        values = values && list[n].value != NULL && list[n].value[0] != '\0';
        for (size_t i = 0; i < N_CPU_FEATURES; i++)
            if (strcmp(list[n].name, cpu_features[i].name) == 0 && strcmp(list[n].value ? list[n].value : "", "0") != 0 &&
                !cpu_features[i].has()) {
                listed_present = false;
                tap_diag("feature list names %s = %s but ggml_cpu_has_* says 0", list[n].name, list[n].value);
            }
        n++;
    }
    ok(list != NULL && n < 256, "feature list ends with a NULL name (%d entries)", n);
    ok(values, "every feature has a value");
    bool present_listed = true;
    for (size_t i = 0; i < N_CPU_FEATURES; i++) {
        if (!cpu_features[i].has())
            continue;
        bool found = false;
        for (int k = 0; k < n; k++)
            found = found || (strcmp(list[k].name, cpu_features[i].name) == 0 && strcmp(list[k].value, "1") == 0);
        if (!found) {
            present_listed = false;
            tap_diag("%s is present but not listed as \"1\"", cpu_features[i].name);
        }
    }
    ok(listed_present && present_listed, "the feature list agrees with ggml_cpu_has_*");
    logged_nothing("features: no messages");
}

/* ------------------------------------------------------------ abort */

static int abort_calls;
static int abort_after;

/* Counts its calls; true from the abort_after-th call on. */
static bool count_and_abort(void *data)
{
    (void) data;
    return ++abort_calls >= abort_after;
}

/* One aborted compute of the chain; true when exactly n nodes ran. */
static bool abort_run(struct chain *c, int n_threads, struct ggml_threadpool *pool, int n, enum ggml_status *status)
{
    poison_chain(c);
    abort_calls = 0;
    abort_after = n;
    struct ggml_cplan plan = ggml_graph_plan(c->graph, n_threads, pool);
    plan.abort_callback = count_and_abort;
    plan.work_data = malloc(plan.work_size);
    *status = ggml_graph_compute(c->graph, &plan);
    free(plan.work_data);
    bool right = *status == GGML_STATUS_ABORTED;
    for (int k = 0; k < c->n; k++)
        right = right && (k < n ? chain_node_ok(c, k) : chain_node_untouched(c, k));
    return right;
}

static void test_abort(void)
{
    struct ggml_context *ctx = data_ctx(16);
    struct chain c;
    build_chain(ctx, &c, 60, 64, 8);

    watchdog("abort callback, one compute per thread count", 10);
    for (int n_threads = 1; n_threads <= 4; n_threads++) {
        enum ggml_status status;
        bool right = abort_run(&c, n_threads, NULL, 5, &status);
        is_int(status, GGML_STATUS_ABORTED, "abort after 5 nodes, %d threads: ABORTED", n_threads);
        ok(right, "abort after 5 nodes, %d threads: nodes 0..4 computed, the others untouched", n_threads);
        is_int(abort_calls, 5, "abort after 5 nodes, %d threads: the callback ran 5 times", n_threads);
    }
    /* a callback that never aborts: polled once per computed node */
    abort_calls = 0;
    abort_after = 1000000;
    struct ggml_cplan plan = ggml_graph_plan(c.graph, 2, NULL);
    plan.abort_callback = count_and_abort;
    plan.work_data = malloc(plan.work_size);
    is_int(ggml_graph_compute(c.graph, &plan), GGML_STATUS_SUCCESS, "a callback that returns false: SUCCESS");
    free(plan.work_data);
    is_int(abort_calls, c.n, "the callback is polled once per node");
    logged_nothing("abort: no error messages");

    /*
     * Stress: many aborted computes on 4 threads (a caller's pool and the
     * engine's own), aborting at varying nodes.  The abort decision must
     * reach every thread at the same node; a thread that leaves early
     * would leave the others waiting at a barrier forever.
     */
    watchdog("abort callback stress (threads disagree on where to stop)", 120);
    struct ggml_threadpool_params p = ggml_threadpool_params_default(4);
    struct ggml_threadpool *pool = ggml_threadpool_new(&p);
    const int runs = slow_build() ? 100 : 2000;
    int wrong = 0;
    for (int r = 0; r < runs; r++) {
        enum ggml_status status;
        if (!abort_run(&c, 4, r % 2 ? pool : NULL, 1 + r % 50, &status))
            wrong++;
    }
    is_int(wrong, 0, "abort stress: %d aborted computes on 4 threads, all stopped at the right node", runs);
    ggml_threadpool_free(pool);

    /* through the backend */
    watchdog("abort through the backend", 20);
    ggml_backend_t backend = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(backend, 4);
    ggml_backend_cpu_set_abort_callback(backend, count_and_abort, NULL);
    poison_chain(&c);
    abort_calls = 0;
    abort_after = 3;
    is_int(ggml_backend_graph_compute(backend, c.graph), GGML_STATUS_ABORTED, "backend: the abort callback gives ABORTED");
    ok(chain_node_ok(&c, 2) && chain_node_untouched(&c, 3), "backend: stopped after node 2");
    ggml_backend_graph_plan_t bplan = ggml_backend_graph_plan_create(backend, c.graph);
    poison_chain(&c);
    abort_calls = 0;
    abort_after = 7;
    is_int(ggml_backend_graph_plan_compute(backend, bplan), GGML_STATUS_ABORTED, "backend plan: ABORTED");
    ok(chain_node_ok(&c, 6) && chain_node_untouched(&c, 7), "backend plan: stopped after node 6");
    ggml_backend_graph_plan_free(backend, bplan);
    ggml_backend_cpu_set_abort_callback(backend, NULL, NULL);
    poison_chain(&c);
    is_int(ggml_backend_graph_compute(backend, c.graph), GGML_STATUS_SUCCESS, "backend: callback removed, SUCCESS");
    ok(chain_node_ok(&c, c.n - 1), "backend: every node computed");
    ggml_backend_free(backend);
    logged_nothing("abort through the backend: no messages");
    alarm(0);
    ggml_free(ctx);
}

int main(void)
{
    tap_capture_log();
    signal(SIGALRM, watchdog_fired);
    ggml_cpu_init();

    watchdog("parameters and pools", 30);
    test_params();
    test_pool_lifecycle();
    test_binding_and_priority();
    watchdog("pause and resume", 30);
    test_pause_resume();
    watchdog("persistence and concurrency", 30);
    test_persistence_and_defaults();
    test_concurrency();
    watchdog("plans and errors", 30);
    test_plan();
    test_compute_errors();
    test_compute_with_ctx();
    test_threads_identical();
    watchdog("backend and registry", 30);
    test_backend();
    test_oom_one_message();
    test_features();
    test_registry();
    watchdog("idle and oversubscription", 30);
    test_idle_cpu();
    test_oversubscription();
    /* last: a hang here must not hide the results above */
    test_abort();
    return tap_done();
}
